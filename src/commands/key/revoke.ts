import {Args} from '@oclif/core'

import {BaseCommand} from '../../core/base-command.js'
import {colorErr, err, out} from '../../core/output.js'
import type {RevokeKeyResult} from '../../services/key-lifecycle.js'
import {revokeKey} from '../../services/key-lifecycle.js'

export default class KeyRevoke extends BaseCommand {
  static summary = "Revokes a gateway key: an agent's active key, or one key by prefix or id."
  static description =
    "Mirrors POST /api/keys/revoke. AGENT|PREFIX is an agent's name or id (its active key is revoked), a key prefix as `gwctl key list` shows it (gw-AbC123…, the ellipsis optional), or a key id (key_…). " +
    'Through the running gateway the next request with the key gets 401; when it is stopped, the state file is changed under its lock. ' +
    'Revoking a revoked key changes nothing and succeeds, as in the API. Exit 7 when nothing matches; exit 2 when a name or prefix matches several.'

  static examples = [
    '<%= config.bin %> key revoke laptop',
    '<%= config.bin %> key revoke gw-AbC123…',
    '<%= config.bin %> key revoke key_0123456789abcdef --json',
  ]

  static args = {
    target: Args.string({
      description: 'Agent name or id, key prefix (gw-AbC123…) or key id (key_…).',
      required: true,
      ignoreStdin: true,
    }),
  }

  async run(): Promise<RevokeKeyResult> {
    const {args} = await this.parse(KeyRevoke)
    const result = await revokeKey(args.target, {signal: this.signal})
    if (!this.jsonEnabled()) {
      for (const k of result.revoked) out(`Revoked key ${k.keyPrefix} of ${k.agentName ?? k.agentId}.`)
      for (const k of result.alreadyRevoked)
        out(`Key ${k.keyPrefix} of ${k.agentName ?? k.agentId} was already revoked: nothing changed.`)
      if (result.revoked.length === 0 && result.alreadyRevoked.length === 0)
        out(`${args.target} holds no key: nothing to revoke.`)
      if (result.boundTool) {
        err(
          colorErr().dim(
            `${result.boundTool}'s config holds this key: it now gets 401. \`gwctl agents enable ${result.boundTool} --rotate\` gives it a new one; \`gwctl agents disable ${result.boundTool}\` unbinds it.`,
          ),
        )
      }
    }
    return result
  }
}
