/**
 * A request refused for its key (missing, malformed, unknown or revoked) still gets its log row,
 * so `gwctl logs` shows who is knocking and `usage --status 4xx` counts it. No key material is
 * written: only the display prefix, and only of a key that parses.
 */
import type {Verification} from '../gateway/keys.js'
import {displayPrefix, parseKey} from '../gateway/keys.js'
import {logEntryFor} from './router/log-entry.js'
import {gatewayAnswered} from './router/proxy.js'
import type {GatewayContext} from './server.js'
import type {Family} from '../store/schema.js'

const REASONS: Record<string, string> = {
  missing: 'refused: no gateway key',
  forged: 'refused: malformed gateway key',
  unknown: 'refused: unknown key',
  revoked: 'refused: revoked key',
}

/** Appends the log row of a refused request (a no-op without the router's log store). */
export function logRefused(
  context: GatewayContext,
  family: Family,
  presented: string | undefined,
  verdict: Extract<Verification, {ok: false}>,
): void {
  const logs = context.routing?.logs
  if (!logs) return
  const time = Date.now()
  const parsed = presented ? parseKey(presented) : undefined
  const keyPrefix = parsed?.kind === 'valid' ? displayPrefix(parsed.key) : null
  const entry = logEntryFor(
    family,
    {agentId: null, keyPrefix, policyId: null, project: null},
    gatewayAnswered(verdict.status, REASONS[verdict.reason] ?? `refused: ${verdict.reason}`, time),
    time,
  )
  logs.append(entry)
  // counted in /metrics as in `gwctl usage` (agent `none`, 4xx)
  context.telemetry?.add(entry)
}
