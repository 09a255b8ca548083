import {Flags} from '@oclif/core'

import {BaseCommand} from '../../core/base-command.js'
import {printTable} from '../../core/output.js'
import {routeLabel} from '../../gateway/views.js'
import type {AgentRow} from '../../services/agent-binding.js'
import {listAgentRows} from '../../services/agent-binding.js'

function bindingLabel(r: AgentRow): string {
  if (r.binding.state !== 'stale') return r.binding.state
  return `stale: ${r.binding.problems?.[0]?.problem ?? 'see gwctl doctor'}`
}

export default class AgentsList extends BaseCommand {
  static summary = 'Lists the agents known to the gateway and the coding agents found on this machine.'
  static description =
    'Agents holding keys come from the running gateway, or from its state file when it is stopped; Claude Code, Codex and Gemini CLI are found in their config folders (honouring CLAUDE_CONFIG_DIR, CODEX_HOME, GEMINI_CLI_HOME). ' +
    'A found agent that holds a key is one row. Default: agents holding keys, and found agents whose history was scanned. --enabled: only routed agents (their policy routes their family to a provider; whether an agent’s own config is bound to the gateway is its BINDING). --all: every agent, including found ones that are not enabled or not scanned, and Claude Code sub-agents.'

  static examples = [
    '<%= config.bin %> agents list',
    '<%= config.bin %> agents list --enabled',
    '<%= config.bin %> agents list --all --json',
  ]

  static flags = {
    enabled: Flags.boolean({
      description: 'Only routed agents: their policy routes their family to a provider.',
      exclusive: ['all'],
    }),
    all: Flags.boolean({description: 'Every agent, enabled or not, scanned or not.', exclusive: ['enabled']}),
  }

  async run(): Promise<{agents: AgentRow[]}> {
    const {flags} = await this.parse(AgentsList)
    const agents = await listAgentRows({enabled: flags.enabled, all: flags.all, signal: this.signal})
    if (!this.jsonEnabled()) {
      printTable(
        agents,
        [
          {header: 'NAME', value: (a) => a.name},
          {header: 'TYPE', value: (a) => a.type},
          {header: 'PARENT', value: (a) => a.parentAgentName ?? '-'},
          {header: 'EMPLOYEE', value: (a) => a.employee?.contact ?? '-'},
          {header: 'ROUTE', value: (a) => (a.agentId ? routeLabel(a.policyId, a.route) : '-')},
          {header: 'BINDING', value: (a) => (a.tool && !a.parentAgentName ? bindingLabel(a) : '-')},
          {
            header: 'HISTORY',
            value: (a) =>
              !a.discovered ? '-' : a.scanned ? 'scanned' : a.historyExists ? 'not scanned' : 'none',
          },
          {header: 'KEY', value: (a) => a.keyPrefix ?? '-'},
          {
            header: 'LAST SEEN',
            value: (a) => (a.lastSeenAt ? new Date(a.lastSeenAt * 1000).toISOString() : 'never'),
          },
        ],
        flags.enabled
          ? 'No agent is routed: no policy routes its family to a provider.'
          : flags.all
            ? 'No agents yet: none holds a key and no coding agent was found in this HOME.'
            : 'No agents yet: `gwctl agents enable claude-code` (or codex, gemini-cli) binds one; `--all` shows every agent found.',
      )
    }
    return {agents}
  }
}
