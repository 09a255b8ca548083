/**
 * Gateway keys: format, checksum, hashing and verification (issue and rotation: `key-issue.ts`).
 *
 * Format: `gw-` + 40 random base62 characters (238 bits) + 6 base62 characters of the CRC-32 of
 * those 40 (the GitHub token scheme). The checksum tells a typo or a made-up key apart from a
 * real one without any lookup: a key with the gateway prefix whose checksum fails is forged
 * (400); a well-formed key that is not on record, or revoked, is refused with 401.
 *
 * Storage: only HMAC-SHA256(install secret, key) in hex, which is also the O(1) lookup index,
 * and a display prefix. The hash found by the lookup is compared again in constant time.
 */
import {createHmac, randomBytes, timingSafeEqual} from 'node:crypto'
import {crc32} from 'node:zlib'

import type {AgentRecord, GatewayState, KeyRecord} from '../store/state-schema.js'

/** The prefix of every issued key. */
export const KEY_PREFIX = 'gw-'
/** The spec also writes the prefix `gw_`: accepted as a spelling of `gw-` when verifying. */
export const KEY_PREFIX_ALT = 'gw_'
const BODY_LENGTH = 40
const CHECKSUM_LENGTH = 6
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
/** Characters of the key shown in listings (prefix included), then an ellipsis. */
const DISPLAY_CHARS = KEY_PREFIX.length + 6
/** One issue per agent per this many milliseconds. */
export const ISSUE_INTERVAL_MS = 5_000

function randomBase62(length: number): string {
  let result = ''
  while (result.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // 248 = 4 * 62: rejecting larger bytes keeps every character equally likely
      if (byte < 248 && result.length < length) result += BASE62[byte % 62]
    }
  }
  return result
}

function checksum(body: string): string {
  let n = crc32(body)
  let text = ''
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    text = BASE62[n % 62] + text
    n = Math.floor(n / 62)
  }
  return text
}

/** A new random key. */
export function generateKey(): string {
  const body = randomBase62(BODY_LENGTH)
  return KEY_PREFIX + body + checksum(body)
}

/**
 * Classifies a presented credential: `foreign` (no gateway prefix: not ours), `forged` (has the
 * prefix but a wrong shape or checksum), or `valid` with the canonical (`gw-`) spelling.
 */
export function parseKey(value: string): {kind: 'foreign'} | {kind: 'forged'} | {kind: 'valid'; key: string} {
  if (!value.startsWith(KEY_PREFIX) && !value.startsWith(KEY_PREFIX_ALT)) return {kind: 'foreign'}
  const rest = value.slice(KEY_PREFIX.length)
  if (rest.length !== BODY_LENGTH + CHECKSUM_LENGTH || !/^[0-9A-Za-z]+$/.test(rest)) return {kind: 'forged'}
  const body = rest.slice(0, BODY_LENGTH)
  if (checksum(body) !== rest.slice(BODY_LENGTH)) return {kind: 'forged'}
  return {kind: 'valid', key: KEY_PREFIX + rest}
}

/** HMAC-SHA256 of a key under the install secret, hex. */
export function hashKey(secret: string, key: string): string {
  return createHmac('sha256', secretBytes(secret)).update(key, 'utf8').digest('hex')
}

// Every authenticated request hashes its key: decode the (install-wide, rarely changing) hex
// secret once instead of per request.
let cachedSecret: {hex: string; bytes: Buffer} | undefined
function secretBytes(hex: string): Buffer {
  if (cachedSecret?.hex !== hex) cachedSecret = {hex, bytes: Buffer.from(hex, 'hex')}
  return cachedSecret.bytes
}

/** The display prefix of a key: its first characters and an ellipsis. */
export function displayPrefix(key: string): string {
  return key.slice(0, DISPLAY_CHARS) + '…'
}

/** Verified credentials remembered (a gateway serves a handful of agents; a bound on the worst case). */
const VERIFIED_CACHE_SIZE = 4096

export type Verification =
  | {ok: true; key: KeyRecord; agent: AgentRecord}
  | {
      ok: false
      status: 400 | 401
      reason: 'missing' | 'forged' | 'unknown' | 'revoked'
      message: string
      /** A revoked key whose agent has a newer one (a rotation): that one is the key to use. */
      rotated?: true
    }

/** The O(1) index hash -> key record, kept in step with the state by the daemon. */
export class KeyIndex {
  private readonly byHash = new Map<string, KeyRecord>()
  private readonly agents = new Map<string, AgentRecord>()
  /**
   * Credentials that verified, as presented, to their record: an agent sends the same key with
   * every request, and the HMAC (a hash object per call) was the largest single cost of a proxied
   * request. Only keys that verified get in, so made-up keys cannot fill it; revocation is still
   * checked on every request (it is a field of the record), and a reload clears it.
   */
  private readonly verified = new Map<string, KeyRecord>()
  /**
   * Each agent's keys, so that a refused request tells a rotation from a `key revoke` by a look at
   * that agent's keys only, not a scan of every key.
   */
  private readonly byAgent = new Map<string, KeyRecord[]>()

  constructor(private readonly state: GatewayState) {
    this.rebuild()
  }

  /** Rebuilds both maps from the state (after a reload). */
  rebuild(): void {
    this.byHash.clear()
    this.agents.clear()
    this.verified.clear()
    this.byAgent.clear()
    for (const key of this.state.keys) this.remember(key)
    for (const agent of this.state.agents) this.agents.set(agent.id, agent)
  }

  private remember(key: KeyRecord): void {
    this.byHash.set(key.hash, key)
    const keys = this.byAgent.get(key.agentId)
    if (keys) keys.push(key)
    else this.byAgent.set(key.agentId, [key])
  }

  /** Records a new key and agent (the state already holds them). */
  add(key: KeyRecord, agent: AgentRecord): void {
    this.remember(key)
    this.agents.set(agent.id, agent)
  }

  agent(id: string): AgentRecord | undefined {
    return this.agents.get(id)
  }

  /** Checks a presented credential (undefined when the request carried none). */
  verify(presented: string | undefined): Verification {
    if (presented === undefined || presented === '') {
      return {ok: false, status: 401, reason: 'missing', message: 'A gateway key is required.'}
    }
    const known = this.verified.get(presented)
    if (known) return this.standing(known)
    const parsed = parseKey(presented)
    if (parsed.kind === 'forged') {
      return {
        ok: false,
        status: 400,
        reason: 'forged',
        message:
          'The gateway key is malformed (its checksum does not match); copy it again from `gwctl key issue`.',
      }
    }
    if (parsed.kind === 'foreign') {
      return {ok: false, status: 401, reason: 'unknown', message: 'The key is not a gateway key.'}
    }
    const hash = hashKey(this.state.secret, parsed.key)
    const record = this.byHash.get(hash)
    if (!record || !timingSafeEqual(Buffer.from(record.hash, 'hex'), Buffer.from(hash, 'hex'))) {
      return {ok: false, status: 401, reason: 'unknown', message: 'The gateway key is not known.'}
    }
    const verdict = this.standing(record)
    if (verdict.ok) {
      if (this.verified.size >= VERIFIED_CACHE_SIZE) this.verified.clear()
      this.verified.set(presented, record)
    }
    return verdict
  }

  /** A genuine key's verdict: accepted unless revoked or its agent is gone. */
  private standing(record: KeyRecord): Verification {
    const agent = this.agents.get(record.agentId)
    if (record.revokedAt !== undefined || !agent) {
      const rotated = agent !== undefined && this.hasNewer(record)
      return {
        ok: false,
        status: 401,
        reason: 'revoked',
        message: !agent
          ? 'The gateway key was revoked: its agent was removed (`gwctl agents remove`).'
          : rotated
            ? 'The gateway key was revoked (a newer key was issued for this agent).'
            : 'The gateway key was revoked (`gwctl key revoke`); the agent has no newer key.',
        ...(rotated ? {rotated: true as const} : {}),
      }
    }
    return {ok: true, key: record, agent}
  }

  /**
   * Whether the agent has another key as new or newer that still works: a rotation, told apart
   * from a `key revoke` (or an `agents remove`), and from a rotation whose new key was revoked
   * since (then no key of the agent works, and the user needs a new one). Only a refused request
   * gets here.
   */
  private hasNewer(record: KeyRecord): boolean {
    for (const key of this.byAgent.get(record.agentId) ?? [])
      if (key.id !== record.id && key.createdAt >= record.createdAt && key.revokedAt === undefined)
        return true
    return false
  }
}
