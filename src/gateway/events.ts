/**
 * What the running gateway tells its viewers: the events of `GET /api/events` and the breaker
 * snapshots of the status views. Types only; the bus and the SSE handler are the daemon's
 * (`src/daemon/events.ts`), the breaker itself is `src/daemon/router/breaker.ts`.
 */
import type {LogEntry} from '../store/log-store.js'
import type {BudgetView} from './budgets.js'

export type GatewayEvent =
  /** A model request finished and its log row was written (also counts as usage rows added). */
  | {type: 'request'; entry: LogEntry}
  /** A provider's circuit breaker changed state. */
  | {type: 'breaker'; provider: string; state: 'closed' | 'open' | 'half-open'; retryAt: number | null}
  /** An agent or its key was created, rotated, enabled, disabled or changed policy. */
  | {type: 'agent'; agentId: string | null; change: string}
  /** Usage rows were added from outside the request path (imports, history scans). */
  | {type: 'usage'; rows: number}
  /** A budget's spend reached 80 or 100 % of its limit (once per period each). */
  | {type: 'budget'; threshold: number; budget: BudgetView}

export type BreakerState = 'closed' | 'open' | 'half-open'

export interface BreakerSnapshot {
  provider: string
  state: BreakerState
  consecutiveFailures: number
  /** Unix ms when the breaker last opened, or null. */
  openedAt: number | null
  /** Unix ms when an open breaker lets a trial through, or null. */
  retryAt: number | null
  /** Milliseconds until an open breaker lets a trial through, or null. */
  retryInMs: number | null
  lastError: string | null
}
