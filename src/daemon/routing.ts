/**
 * What the daemon routes with, built once at start (policy and provider changes take effect on
 * `gwctl gateway restart`): the effective providers and policies (`src/gateway/effective-providers.ts`),
 * the long-lived {@link Router} and the {@link LogStore}.
 */
import type {GatewayState} from '../store/state-schema.js'
import type {LogStore} from '../store/log-store.js'
import type {PolicyConfig, ProviderConfig} from '../store/schema.js'
import type {Router} from './router/index.js'

export interface Routing {
  router: Router
  logs: LogStore
  /** Effective providers (user + defaults). */
  providers: ProviderConfig[]
  /** Effective policies by id (default routes filled in). */
  policies: Map<string, PolicyConfig>
  /** Origin of the in-process simulator (`--sim`), if any. */
  simOrigin?: string
}

/** A state whose policies are the effective ones (for the views). */
export function routedState(state: GatewayState, routing: Routing | undefined): GatewayState {
  if (!routing) return state
  return {...state, policies: state.policies.map((p) => routing.policies.get(p.id) ?? p)}
}
