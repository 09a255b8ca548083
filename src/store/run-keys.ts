/**
 * The gateway keys of `gwctl run` (`<GWCTL_HOME>/run-keys.json`, 0600): one key per agent name,
 * kept so that every run of that agent reuses it (an issue would revoke the key a run still in
 * progress holds). Like an agent's bound config, this file holds the key itself: the gateway
 * keeps only its hash, and a run must hand the key to the agent. A file that does not parse is a
 * cache lost, not an error: the next run issues a new key (the old one is revoked by that issue).
 */
import {readFileSync} from 'node:fs'

import {writeFileAtomic} from '../core/atomic-file.js'
import {homeFile} from './paths.js'
import {lockState} from './state-lock.js'

export interface RunKey {
  /** The key, as the gateway issued it. */
  value: string
  /** The id of the agent it was issued to. */
  agentId: string
  /** Unix seconds. */
  issuedAt: number
}

export type RunKeys = Record<string, RunKey>

function read(path: string): RunKeys {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch {
    return {}
  }
  try {
    const parsed: unknown = JSON.parse(text)
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return {}
    const keys: RunKeys = {}
    for (const [name, entry] of Object.entries(parsed as Record<string, unknown>)) {
      const e = entry as Partial<RunKey> | null
      if (e && typeof e.value === 'string' && typeof e.agentId === 'string')
        keys[name] = {value: e.value, agentId: e.agentId, issuedAt: Number(e.issuedAt) || 0}
    }
    return keys
  } catch {
    return {}
  }
}

/**
 * Runs `fn` over the run keys under a cross-process lock (two runs of one agent started at once
 * issue one key, not two); what `fn` leaves in the object is written back when it changed.
 */
export async function withRunKeys<T>(
  fn: (keys: RunKeys) => Promise<T> | T,
  path: string = homeFile('runKeys'),
): Promise<T> {
  const release = await lockState(path, {waitMs: 10_000})
  try {
    const keys = read(path)
    const before = JSON.stringify(keys)
    const result = await fn(keys)
    const after = JSON.stringify(keys, null, 2)
    if (JSON.stringify(keys) !== before) await writeFileAtomic(path, after + '\n', 0o600)
    return result
  } finally {
    await release()
  }
}
