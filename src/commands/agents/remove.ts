import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../../core/base-command.js'
import {colorErr, err, out} from '../../core/output.js'
import type {RemoveAgentResult} from '../../services/key-lifecycle.js'
import {removeAgent} from '../../services/key-lifecycle.js'

export default class AgentsRemove extends BaseCommand {
  static summary = 'Removes an agent from the gateway and revokes its keys.'
  static description =
    'Mirrors POST /api/agents/remove: the agent (by name or id) is removed and its keys are revoked at once (they stay in `gwctl key list` as revoked); its employee stays. ' +
    "Refused (exit 2) while a coding agent's config is bound to it, unless --disable, which first undoes the binding as `gwctl agents disable` does; " +
    'refused while it has sub-agents. Exit 7 when there is no such agent; exit 2 when several share the name (give the id).'

  static examples = [
    '<%= config.bin %> agents remove laptop',
    '<%= config.bin %> agents remove claude-code --disable',
    '<%= config.bin %> agents remove agt_0123456789abcdef --json',
  ]

  static args = {
    agent: Args.string({
      description: 'Name or id of an agent holding a key.',
      required: true,
      ignoreStdin: true,
    }),
  }

  static flags = {
    disable: Flags.boolean({
      description: "Undo the agent's binding first (put its config back) instead of refusing.",
    }),
  }

  async run(): Promise<RemoveAgentResult> {
    const {args, flags} = await this.parse(AgentsRemove)
    const result = await removeAgent(args.agent, {disable: flags.disable, signal: this.signal})
    if (!this.jsonEnabled()) {
      if (result.unbound) out(`${result.unbound} unbound: its config is put back.`)
      const keys = result.revokedKeyIds.length
      out(
        `Removed agent ${result.name} (${result.agentId})${keys > 0 ? `; ${keys === 1 ? 'its key was' : `its ${keys} keys were`} revoked` : ''}.`,
      )
      err(colorErr().dim('Its past requests stay in `gwctl logs` and `gwctl usage`.'))
    }
    return result
  }
}
