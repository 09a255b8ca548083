/**
 * Target selection: which of a policy's targets may be tried now (breaker closed, or its
 * half-open trial free; credential present), and whether any is left after a failure.
 */
import {resolveCredential} from '../../gateway/policy.js'
import type {ProxyAttempt, ProxyTarget} from './proxy-types.js'

/** A target that may be sent the request: its breaker permit (if any) is held by the caller. */
export interface Acquired {
  credential: string | undefined
}

/**
 * The Responses server `target` is, as the encrypted reasoning of its answers is known by
 * (protocols/ir.ts `ReasoningPart.server`): its provider's name and base URL. Held reasoning goes
 * back only to the server of that name at that URL (another account's key under the same name is
 * the refusal encrypted-content.ts mends).
 */
export const serverOf = (target: ProxyTarget): string => `${target.provider.name} ${target.provider.baseUrl}`

/**
 * Takes a target for one try: its breaker permit and its credential. Null (and the attempt
 * recorded, the permit given back) when its breaker is open; `{skipped}` with the reason when
 * its credential is missing.
 */
export function acquireTarget(
  target: ProxyTarget,
  env: NodeJS.ProcessEnv,
  attempts: ProxyAttempt[],
): Acquired | {skipped: string} | null {
  const provider = target.provider
  if (target.breaker && !target.breaker.tryAcquire()) {
    // the reason a fallback row gives for not trying it
    attempts.push({provider: provider.name, skipped: 'circuit-open', error: `${provider.name}: breaker open`})
    return null
  }
  const credential = resolveCredential(provider.credential, env)
  if (provider.credential && !credential) {
    target.breaker?.release()
    const reason =
      'env' in provider.credential
        ? `provider ${provider.name}: environment variable ${provider.credential.env} is not set`
        : `provider ${provider.name}: no credential`
    attempts.push({provider: provider.name, skipped: 'no-credential', error: reason})
    return {skipped: reason}
  }
  return {credential}
}

/**
 * True when a target after index `i` could still be tried (no breaker, or one that allows a try);
 * with `passedThrough`, only one the request goes to as it came (not translated).
 */
export function canTryAfter(targets: readonly ProxyTarget[], i: number, passedThrough = false): boolean {
  for (let j = i + 1; j < targets.length; j++) {
    if (passedThrough && targets[j].translate) continue
    const breaker = targets[j].breaker
    if (!breaker || breaker.canTry()) return true
  }
  return false
}
