import {Args} from '@oclif/core'

import {BaseCommand} from '../../core/base-command.js'
import {out, printFields} from '../../core/output.js'
import type {PolicyConfig, TimeoutSettings} from '../../store/schema.js'
import {FAMILIES} from '../../store/schema.js'
import {getPolicy, policiesWithProviders, routeLines} from '../../services/policies.js'

/** An empty policy is not a dead end: the gateway gives it default routes when it starts. */
const NO_ROUTES = '(none: the gateway routes each family to its available providers; see `gwctl status`)'

export default class PoliciesShow extends BaseCommand {
  static summary = 'Shows one routing policy.'
  static description =
    'Its routes, fallbacks, breaker and timeouts. With --json, the policy document itself, as `policies set --file` accepts it. Exit 7 when there is no such policy.'

  static examples = [
    '<%= config.bin %> policies show default',
    '<%= config.bin %> policies show claude_code_default --json > policy.json',
  ]

  static args = {
    id: Args.string({description: 'Policy id.', required: true, ignoreStdin: true}),
  }

  async run(): Promise<PolicyConfig> {
    const {args} = await this.parse(PoliciesShow)
    const policy = await getPolicy(args.id)
    if (!this.jsonEnabled()) {
      printFields({
        id: policy.id,
        description: policy.description,
        fallbacks: policy.fallbacks === false ? 'off' : 'on',
        breaker: policy.breaker
          ? `opens after ${policy.breaker.failureThreshold} consecutive failures, retries after ${policy.breaker.cooldownMs} ms`
          : undefined,
        timeouts: policy.timeouts ? timeoutsLine(policy.timeouts) : undefined,
      })
      out('routes:')
      const lines = routeLines(policy, (await policiesWithProviders()).providers)
      for (const line of lines.length > 0 ? lines : [NO_ROUTES]) out(`  ${line}`)
      // a family without targets of its own keeps the default routes, whatever the others have
      const onDefaults = FAMILIES.filter((f) => (policy.routes[f] ?? []).length === 0)
      if (lines.length > 0 && onDefaults.length > 0)
        out(`  ${onDefaults.join(', ')}: on defaults (the available providers of each family)`)
    }
    return policy
  }
}

/**
 * The policy's timeouts in words. The first-byte timeout bounds a stream's wait for its headers;
 * a request not streamed waits for its whole answer up to the idle timeout when that is longer
 * (daemon/router/pools.ts `answerWaitMs`).
 */
function timeoutsLine(timeouts: TimeoutSettings): string {
  const firstByte =
    timeouts.idleMs > timeouts.firstByteMs
      ? `first byte ${timeouts.firstByteMs} ms (a stream's; a request not streamed waits for its answer at its last target up to the idle timeout)`
      : `first byte ${timeouts.firstByteMs} ms`
  return `connect ${timeouts.connectMs} ms, ${firstByte}, idle ${timeouts.idleMs} ms`
}
