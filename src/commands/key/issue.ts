import {Flags} from '@oclif/core'

import {BaseCommand} from '../../core/base-command.js'
import {colorErr, err, out, warn} from '../../core/output.js'
import {AGENT_KINDS} from '../../gateway/agent-kinds.js'
import type {IssuedKey} from '../../services/gateway-keys.js'
import {issueGatewayKey, unroutedKey} from '../../services/gateway-keys.js'

export default class KeyIssue extends BaseCommand {
  static summary = 'Issues a gateway key for an agent (rotating its previous key).'
  static description =
    'Mirrors POST /api/keys/issue. Talks to the running gateway so the key works at once; when the gateway is stopped, writes the state file directly under a lock. ' +
    'Prints `keyValue: <key>` on stdout; the key is shown only this once. Issuing again for the same agent revokes its old key at once; the same agent again within 5 s is refused. ' +
    'Employee fields default to the settings employee.*, else to git user.name / user.email. An agent is its name ' +
    "plus its employee: issuing again for an existing --agent-name (without --employee-*) rotates that agent's key."

  static examples = [
    '<%= config.bin %> key issue --agent-name laptop --agent-type claude_code',
    '<%= config.bin %> key issue --agent-name reviewer --agent-type claude_code_subagent --parent-agent-id agt_0123456789abcdef',
    '<%= config.bin %> key issue --agent-name ci --agent-type generic_agent --employee-name "Ada" --employee-contact ada@example.com --json',
  ]

  static flags = {
    'agent-name': Flags.string({description: 'Display name of the agent.', required: true}),
    'agent-type': Flags.string({
      description: 'Kind of agent.',
      required: true,
      options: AGENT_KINDS.map((k) => k.type),
    }),
    'policy-id': Flags.string({
      description: 'Policy to bind (default `default`; `claude_code_default` for claude_code).',
    }),
    'parent-agent-id': Flags.string({description: 'Parent agent id (required for sub-agent kinds).'}),
    'parent-agent-name': Flags.string({description: 'Parent agent name (display only).'}),
    'source-tool': Flags.string({description: 'Tool that asked for the key.'}),
    'config-path': Flags.string({description: "Location of the agent's native configuration."}),
    'employee-name': Flags.string({
      description: 'Owner name (default: setting employee.name, else git user.name).',
    }),
    'employee-contact': Flags.string({
      description: 'Owner contact (default: setting employee.contact, else git user.email).',
    }),
    'employee-team': Flags.string({description: 'Owner team (default: setting employee.team).'}),
    'employee-role': Flags.string({description: 'Owner role (default: setting employee.role).'}),
  }

  async run(): Promise<IssuedKey & {warnings: string[]}> {
    const {flags} = await this.parse(KeyIssue)
    const issued = await issueGatewayKey(
      {
        agentName: flags['agent-name'],
        agentType: flags['agent-type'],
        policyId: flags['policy-id'],
        parentAgentId: flags['parent-agent-id'],
        parentAgentName: flags['parent-agent-name'],
        sourceTool: flags['source-tool'],
        configPath: flags['config-path'],
        employeeName: flags['employee-name'],
        employeeContact: flags['employee-contact'],
        employeeTeam: flags['employee-team'],
        employeeRole: flags['employee-role'],
      },
      {signal: this.signal},
    )
    // a key whose every request would be refused: said now, not found by the agent's first 503
    const unrouted = await unroutedKey(issued, flags['agent-type'], {signal: this.signal})
    const warnings = unrouted
      ? [
          `policy ${unrouted.policyId} has no provider for ${unrouted.family} requests, which a ${flags['agent-type']} agent sends: the gateway answers each of this key's requests 503. ` +
            `Route it (\`gwctl policies route ${unrouted.policyId} --family ${unrouted.family} --target PROVIDER[:MODEL]\`, then \`gwctl gateway restart\`), or issue the key with a --policy-id that does.`,
        ]
      : []
    if (!this.jsonEnabled()) {
      out(`keyValue: ${issued.keyValue}`)
      const c = colorErr()
      err(
        c.dim(
          `${issued.rotated ? 'Rotated: the previous key of this agent no longer works. ' : ''}agentId ${issued.agentId}, policy ${issued.policyId}, key ${issued.keyPrefix} (${issued.via === 'daemon' ? 'live in the running gateway' : 'written to the state file; the gateway loads it when it starts'}). The key is shown only once.`,
        ),
      )
      for (const w of warnings) warn(w)
    }
    return {...issued, warnings}
  }
}
