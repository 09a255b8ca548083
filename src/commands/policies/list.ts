import {BaseCommand} from '../../core/base-command.js'
import {printTable} from '../../core/output.js'
import type {PolicyConfig} from '../../store/schema.js'
import {policiesWithProviders, routeLines} from '../../services/policies.js'

export default class PoliciesList extends BaseCommand {
  static summary = 'Lists the routing policies.'
  static description =
    'Policies from the state file, with their routes (entrance family -> ordered targets), fallbacks and breaker settings. ' +
    'The running gateway uses them as they were when it started.'

  static examples = ['<%= config.bin %> policies list', '<%= config.bin %> policies list --json']

  async run(): Promise<{policies: PolicyConfig[]}> {
    await this.parse(PoliciesList)
    const {policies, providers} = await policiesWithProviders()
    if (!this.jsonEnabled()) {
      printTable(
        policies,
        [
          {header: 'ID', value: (p) => p.id},
          {header: 'ROUTES', value: (p) => routeLines(p, providers).join('; ') || '(none: default routes)'},
          {header: 'FALLBACKS', value: (p) => (p.fallbacks === false ? 'off' : 'on')},
          {
            header: 'BREAKER',
            value: (p) =>
              p.breaker
                ? `${p.breaker.failureThreshold} fails / ${Math.round(p.breaker.cooldownMs / 1000)}s`
                : '-',
          },
          {header: 'DESCRIPTION', value: (p) => p.description ?? ''},
        ],
        'No policies.',
      )
    }
    return {policies}
  }
}
