import {Args} from '@oclif/core'

import {BaseCommand} from '../../core/base-command.js'
import {colorErr, err, printTable} from '../../core/output.js'
import type {ProviderList} from '../../services/providers.js'
import {circuitLabel, credentialLabel, listProviders} from '../../services/providers.js'

export default class ProvidersList extends BaseCommand {
  static summary = "Lists the gateway's providers, or those compatible with an agent's policy."
  static description =
    "From the running gateway, with each provider's circuit state (closed, open, half-open), or from the state file when it is stopped " +
    '(circuit "unknown (gateway stopped)"). With AGENT (id or name): only the providers its policy routes to for the protocol family the agent speaks, in policy order. ' +
    'Providers added, changed or removed while the gateway runs are listed and marked "pending restart". ' +
    "Credentials are shown as `env VAR` or `secret (stored)`, never their value; a responses provider's --plain-tools other than auto after its family."

  static examples = [
    '<%= config.bin %> providers list',
    '<%= config.bin %> providers list laptop',
    '<%= config.bin %> providers list agt_0123456789abcdef --json',
  ]

  static args = {
    agent: Args.string({description: 'Agent id or name.', ignoreStdin: true}),
  }

  async run(): Promise<ProviderList> {
    const {args} = await this.parse(ProvidersList)
    const list = await listProviders({agent: args.agent, signal: this.signal})
    if (!this.jsonEnabled()) {
      printTable(
        list.providers,
        [
          {
            header: 'NAME',
            value: (p) => (p.pending === 'changed' ? `${p.name} (pending restart: changed)` : p.name),
          },
          // (a setting other than the default: `responses (plain tools: never)`)
          {
            header: 'FAMILY',
            value: (p) =>
              p.plainTools && p.plainTools !== 'auto'
                ? `${p.family} (plain tools: ${p.plainTools})`
                : p.family,
          },
          {header: 'BASE URL', value: (p) => p.baseUrl},
          {header: 'CREDENTIAL', value: (p) => credentialLabel(p)},
          {
            header: 'MODELS',
            value: (p) =>
              Object.entries(p.models ?? {})
                .map(([from, to]) => `${from}=${to}`)
                .join(', ') || '-',
          },
          {header: 'ORIGIN', value: (p) => p.origin ?? 'user'},
          {header: 'POLICIES', value: (p) => p.policies.join(', ') || '-'},
          {header: 'CIRCUIT', value: (p) => circuitLabel(p, list.source)},
        ],
        args.agent
          ? `No provider is routed for agent ${args.agent}: see \`gwctl policies show\`.`
          : 'No providers yet: add one with `gwctl providers add`.',
      )
      if (list.providers.some((p) => p.pending))
        err(
          colorErr().dim(
            'Providers marked "pending restart" changed in the state file since the gateway started: `gwctl gateway restart` loads them.',
          ),
        )
      if (list.source === 'state-file')
        err(
          colorErr().dim(
            'The gateway is stopped: providers from the state file; defaults from env vars, the platform and --sim appear when it runs.',
          ),
        )
    }
    return list
  }
}
