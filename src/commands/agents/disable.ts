import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../../core/base-command.js'
import {UsageError} from '../../core/errors.js'
import {colorErr, err, out} from '../../core/output.js'
import type {DisableResult} from '../../services/agent-binding.js'
import {disableAgents} from '../../services/agent-binding.js'

export default class AgentsDisable extends BaseCommand {
  static summary = "Undoes `gwctl agents enable`: puts the agent's config back and revokes its key."
  static description =
    'When a config file is still exactly what gwctl wrote, its original bytes come back byte for byte (a file gwctl created is deleted). ' +
    'When you changed it since, only the entries gwctl added are removed and the values they replaced are restored; your edits stay. ' +
    'The key is revoked unless --keep-key.'

  static examples = [
    '<%= config.bin %> agents disable claude-code',
    '<%= config.bin %> agents disable --all',
    '<%= config.bin %> agents disable codex --keep-key --json',
  ]

  static args = {
    agent: Args.string({
      description: 'claude-code, codex or gemini-cli (or the name/id of a bound agent).',
      ignoreStdin: true,
    }),
  }

  static flags = {
    all: Flags.boolean({description: 'Every bound agent.'}),
    'keep-key': Flags.boolean({description: "Keep the agent's key (do not revoke it)."}),
  }

  async run(): Promise<{agents: DisableResult[]}> {
    const {args, flags} = await this.parse(AgentsDisable)
    if (!args.agent && !flags.all)
      throw new UsageError('Name an agent, or pass --all.', {
        code: 'missing_agent',
        hint: 'e.g. `gwctl agents disable claude-code`; `gwctl agents list --all` shows the bindings.',
      })
    if (args.agent && flags.all)
      throw new UsageError('Pass either an agent or --all, not both.', {code: 'conflicting_flags'})
    const agents = await disableAgents({
      agent: args.agent,
      all: flags.all,
      keepKey: flags['keep-key'],
      signal: this.signal,
    })
    if (!this.jsonEnabled()) {
      if (agents.length === 0) out('No agent is bound: nothing to undo.')
      for (const a of agents) {
        const key = a.keyRevoked ? 'key revoked' : 'key kept'
        if (a.restore === 'exact') {
          out(`${a.tool} unbound: its config is byte-identical to before gwctl (${key}).`)
        } else {
          out(
            `${a.tool} unbound: you changed its config since, so only gwctl's entries were removed (${key}).`,
          )
          for (const n of a.notes) out(`  ${n}`)
        }
        for (const f of a.deleted) err(colorErr().dim(`  deleted ${f} (gwctl had created it)`))
      }
    }
    return {agents}
  }
}
