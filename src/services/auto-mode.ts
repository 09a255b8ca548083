/**
 * Claude Code's auto mode through the gateway. From 2.1.278 Claude Code asks Anthropic's API to
 * classify its auto-mode actions (a `safeguards` field on each request), which no other server
 * answers: through a route that does not start at Anthropic's API it stops once on a notice that
 * the gateway "isn't compatible", then classifies locally. `CLAUDE_CODE_AUTO_MODE_SERVER=0`, its
 * own opt-out, has it classify locally from the start: `gwctl run claude-code` sets it in the
 * agent's environment, `gwctl agents enable claude-code` in its settings' `env`, each only where the
 * agent's policy's Messages route does not start at Anthropic's API
 * (../daemon/router/safeguards.ts: the gateway sends such a server neither the field nor its betas).
 */
import {isAnthropicApi} from '../gateway/vendor-hosts.js'
import type {PolicyTarget} from '../store/schema.js'
import type {GatewayState} from '../store/state-schema.js'

/**
 * The first target of policy `policyId`'s Messages route as the gateway routes it: its own, or on
 * a policy without Messages targets the user's first Messages provider
 * (../gateway/effective-providers.ts; the built-in ones after it are the gateway's to choose when
 * it starts). Undefined where there is none to read.
 */
export function firstMessagesTarget(
  state: Pick<GatewayState, 'policies' | 'providers'>,
  policyId: string,
): PolicyTarget | undefined {
  const policy = state.policies.find((p) => p.id === policyId)
  if (!policy) return undefined
  const user = state.providers.find((p) => p.family === 'messages')
  return policy.routes.messages?.[0] ?? (user ? {provider: user.name} : undefined)
}

/**
 * Whether policy `policyId`'s Messages route starts somewhere other than Anthropic's own API
 * passed through (translated, another vendor's Messages endpoint, the simulator): Claude Code
 * should then classify locally. False where the policy or its first target cannot be read, or is
 * a built-in one the gateway chooses when it starts (nothing is changed then).
 */
export function autoModeLocal(
  state: Pick<GatewayState, 'policies' | 'providers'>,
  policyId: string,
): boolean {
  const target = firstMessagesTarget(state, policyId)
  if (!target) return false
  if (target.translate) return true
  const provider = state.providers.find((p) => p.name === target.provider)
  // a built-in one: the simulator's (no Anthropic), or `anthropic` from ANTHROPIC_API_KEY (a
  // cross-family built-in is translated, above)
  if (!provider) return /^sim-/.test(target.provider)
  return !(provider.family === 'messages' && isAnthropicApi(provider.baseUrl))
}

/**
 * The warning for a change of policy `policyId` that turns Claude Code's auto mode the other way
 * while claude-code is bound with that policy (its settings say it as `agents enable` decided).
 */
export function autoModeChanged(
  before: Pick<GatewayState, 'policies' | 'providers'>,
  after: Pick<GatewayState, 'policies' | 'providers' | 'agents' | 'bindings'>,
  policyId: string,
): string | undefined {
  const binding = after.bindings?.find((b) => b.tool === 'claude-code')
  if (!binding || after.agents.find((a) => a.id === binding.agentId)?.policyId !== policyId) return undefined
  const local = autoModeLocal(after, policyId)
  if (local === autoModeLocal(before, policyId)) return undefined
  return local
    ? `claude-code is bound with policy ${policyId}, whose Messages route no longer starts at Anthropic's API: run \`gwctl agents enable claude-code\` so that its auto mode classifies locally (CLAUDE_CODE_AUTO_MODE_SERVER=0).`
    : `claude-code is bound with policy ${policyId}, whose Messages route now starts at Anthropic's API: run \`gwctl agents enable claude-code\` so that its auto mode asks Anthropic's classifier again.`
}
