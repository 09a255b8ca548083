import {Flags} from '@oclif/core'

import {BaseCommand} from '../../core/base-command.js'
import {printTable} from '../../core/output.js'
import type {AgentView} from '../../daemon/views.js'
import {routeLabel} from '../../daemon/views.js'
import {listAgents} from '../../services/gateway-keys.js'

export default class AgentsList extends BaseCommand {
  static summary = 'Lists the agents known to the gateway.'
  static description =
    'Agents come from the running gateway, or from its state file when it is stopped. --enabled shows only agents whose policy has a route for their protocol; --all shows every agent (discovery of local agents that hold no key comes later).'

  static examples = [
    '<%= config.bin %> agents list',
    '<%= config.bin %> agents list --enabled',
    '<%= config.bin %> agents list --all --json',
  ]

  static flags = {
    enabled: Flags.boolean({description: 'Only agents with a bound route.', exclusive: ['all']}),
    all: Flags.boolean({description: 'Every agent, enabled or not.', exclusive: ['enabled']}),
  }

  async run(): Promise<{agents: AgentView[]}> {
    const {flags} = await this.parse(AgentsList)
    const all = await listAgents({signal: this.signal})
    const agents = flags.enabled ? all.filter((a) => a.enabled) : all
    if (!this.jsonEnabled()) {
      printTable(
        agents,
        [
          {header: 'AGENT ID', value: (a) => a.agentId},
          {header: 'NAME', value: (a) => a.name},
          {header: 'TYPE', value: (a) => a.type},
          {header: 'PARENT', value: (a) => a.parentAgentId ?? '-'},
          {header: 'EMPLOYEE', value: (a) => a.employee?.contact ?? '-'},
          {header: 'ROUTE', value: (a) => routeLabel(a.policyId, a.route)},
          {header: 'KEY', value: (a) => a.keyPrefix ?? '-'},
          {
            header: 'LAST SEEN',
            value: (a) => (a.lastSeenAt ? new Date(a.lastSeenAt * 1000).toISOString() : 'never'),
          },
        ],
        flags.enabled ? 'No agent has a bound route.' : 'No agents yet: issue a key with `gwctl key issue`.',
      )
    }
    return {agents}
  }
}
