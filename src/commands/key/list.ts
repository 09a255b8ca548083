import {Flags} from '@oclif/core'

import {BaseCommand} from '../../core/base-command.js'
import {printTable} from '../../core/output.js'
import type {KeyView} from '../../gateway/views.js'
import {listKeys} from '../../services/key-lifecycle.js'

function when(seconds: number | null): string {
  return seconds ? new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z') : 'never'
}

export default class KeyList extends BaseCommand {
  static summary = 'Lists the gateway keys: prefix, agent, created, last used, state.'
  static description =
    'Every key issued (active and revoked), newest first, from the running gateway (GET /api/keys), or from its state file when it is stopped. ' +
    'Only a display prefix is ever shown: gwctl keeps a hash of each key, never the key. ' +
    '--agent: only the keys of that agent (name or id); exit 7 when there is no such agent.'

  static examples = [
    '<%= config.bin %> key list',
    '<%= config.bin %> key list --agent laptop',
    '<%= config.bin %> key list --json',
  ]

  static flags = {
    agent: Flags.string({description: 'Only the keys of this agent (name or id).'}),
  }

  async run(): Promise<{keys: KeyView[]}> {
    const {flags} = await this.parse(KeyList)
    const keys = await listKeys({agent: flags.agent, signal: this.signal})
    if (!this.jsonEnabled()) {
      printTable(
        keys,
        [
          {header: 'PREFIX', value: (k) => k.keyPrefix},
          {header: 'AGENT', value: (k) => k.agentName ?? `${k.agentId} (removed)`},
          {header: 'TYPE', value: (k) => k.agentType ?? '-'},
          {header: 'CREATED', value: (k) => when(k.createdAt)},
          {header: 'LAST USED', value: (k) => when(k.lastUsedAt)},
          {
            header: 'STATE',
            value: (k) => (k.status === 'revoked' ? `revoked ${when(k.revokedAt)}` : 'active'),
          },
        ],
        flags.agent
          ? `Agent "${flags.agent}" holds no key.`
          : 'No keys yet: `gwctl agents enable claude-code` (or `gwctl key issue`) issues one.',
      )
    }
    return {keys}
  }
}
