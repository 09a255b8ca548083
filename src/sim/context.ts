/**
 * What the simulator's modules share with the server that runs them: the API prefix, the options,
 * the simulated clock and the context and module interfaces. Below server.ts and every module, so
 * that the server can import the modules and the modules this without a loop.
 */
import type {Fault} from './faults.js'
import type {SimRequest, SimRouter} from './router.js'

/** Where the simulated platform API lives below the server root. */
export const SIM_API_PREFIX = '/api/v1'

export interface SimOptions {
  port?: number
  host?: string
  /** Seconds a video task takes from creation to its end state (default 20). */
  taskSeconds?: number
  /** Simulated seconds per real second (default 1). */
  timeScale?: number
  /** When set, only this API key is accepted; otherwise any non-empty Bearer key is. */
  apiKey?: string
  /** Faults queued at start (syntax of `parseFault` in faults.ts). */
  faults?: string[]
  /** Largest request body accepted, in bytes (default 10 MiB). */
  maxBodyBytes?: number
}

/** The simulated clock: real time, sped up by `timeScale`, plus manual advances. */
export class SimClock {
  private readonly start = Date.now()
  private offsetMs = 0
  constructor(private readonly scale = 1) {}

  /** Simulated now, in Unix milliseconds. */
  now(): number {
    return this.start + (Date.now() - this.start) * this.scale + this.offsetMs
  }

  advance(seconds: number): void {
    this.offsetMs += seconds * 1000
  }
}

/** Formats an error body in the shape of one API (chosen by path prefix). */
export type ErrorFormatter = (status: number, message: string, type: string) => unknown

/** What a module gets to register its routes and share the server's facilities. */
export interface SimContext {
  readonly options: Required<Pick<SimOptions, 'taskSeconds' | 'timeScale'>> & SimOptions
  readonly clock: SimClock
  /** Origin of the server, e.g. `http://127.0.0.1:4010` (known once listening). */
  origin(): string
  /**
   * Registers the error shape of the API below `prefix`; `headers` (optional) adds headers derived
   * from the error body (e.g. a request id header that repeats a body field).
   */
  errorFormat(
    prefix: string,
    format: ErrorFormatter,
    headers?: (body: unknown) => Record<string, string>,
  ): void
  /** Sends an error in the shape registered for the request's path. */
  sendError(
    request: SimRequest,
    status: number,
    message: string,
    type?: string,
    headers?: Record<string, string>,
    /** Google's `error.details` (a quota fault's: faults.ts `quotaDetails`). */
    details?: unknown[],
    /** OpenAI's `error.type` and `error.code` both (`insufficient_quota`), in place of the shape's. */
    code?: string,
  ): void
  /** The fault that applies to this request (from its header or the queue), if any. */
  fault(request: SimRequest): Fault | undefined
}

/** A simulator module: one API's routes. */
export interface SimModule {
  name: string
  register(router: SimRouter, context: SimContext): void
}
