/**
 * One error model for every command and service.
 *
 * Each error has a stable string `code` (for scripts reading `--json`), a message that says what
 * went wrong, an optional `hint` that says what to do next, and an exit code from {@link ExitCode}.
 */

/** The only exit-code table of gwctl. README.md documents it; keep the two in step. */
export const ExitCode = {
  ok: 0,
  unexpected: 1,
  usage: 2,
  config: 3,
  auth: 4,
  upstream: 5,
  gatewayDown: 6,
  notFound: 7,
  taskFailed: 8,
  interrupted: 130,
} as const

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode]

export interface GwErrorOptions {
  hint?: string
  cause?: unknown
  /** Extra facts worth showing (upstream status, platform id, ...). Never secrets. */
  details?: Record<string, unknown>
}

/** Base class of every error gwctl raises on purpose. */
export class GwError extends Error {
  readonly code: string
  readonly exitCode: ExitCodeValue
  readonly hint?: string
  readonly details?: Record<string, unknown>

  constructor(code: string, message: string, exitCode: ExitCodeValue, options: GwErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : {cause: options.cause})
    this.name = new.target.name
    this.code = code
    this.exitCode = exitCode
    this.hint = options.hint
    this.details = options.details
  }

  /** The `{"error": ...}` document printed with `--json`. */
  toJSON(): {error: {code: string; message: string; hint?: string} & Record<string, unknown>} {
    return {error: {code: this.code, message: this.message, hint: this.hint, ...this.details}}
  }
}

/** Bad flags or input that breaks a rule of the spec. Nothing was sent. Exit 2. */
export class UsageError extends GwError {
  constructor(message: string, options: GwErrorOptions & {code?: string} = {}) {
    super(options.code ?? 'invalid_input', message, ExitCode.usage, options)
  }
}

/** A missing or unreadable setting (base URL, API key, settings file). Exit 3. */
export class ConfigError extends GwError {
  constructor(message: string, options: GwErrorOptions & {code?: string} = {}) {
    super(options.code ?? 'config', message, ExitCode.config, options)
  }
}

/** The platform refused the credentials (401/403). Exit 4. */
export class AuthError extends GwError {
  constructor(message: string, options: GwErrorOptions & {code?: string} = {}) {
    super(options.code ?? 'auth', message, ExitCode.auth, options)
  }
}

/** Network failure or an error answer from an upstream service. Exit 5. */
export class UpstreamError extends GwError {
  /** HTTP status of the upstream answer, when there was one. */
  readonly status?: number
  constructor(message: string, options: GwErrorOptions & {code?: string; status?: number} = {}) {
    super(options.code ?? 'upstream', message, ExitCode.upstream, options)
    this.status = options.status
  }
}

/** The local gateway daemon is not running or not healthy. Exit 6. */
export class GatewayDownError extends GwError {
  constructor(message: string, options: GwErrorOptions & {code?: string} = {}) {
    super(options.code ?? 'gateway_not_running', message, ExitCode.gatewayDown, options)
  }
}

/** A task, file or record that does not exist (or no longer does). Exit 7. */
export class NotFoundError extends GwError {
  constructor(message: string, options: GwErrorOptions & {code?: string} = {}) {
    super(options.code ?? 'not_found', message, ExitCode.notFound, options)
  }
}

/** A remote task ended in `failed`. Exit 8. */
export class TaskFailedError extends GwError {
  constructor(message: string, options: GwErrorOptions & {code?: string} = {}) {
    super(options.code ?? 'task_failed', message, ExitCode.taskFailed, options)
  }
}

/** The user pressed Ctrl-C or the process got SIGINT/SIGTERM. Exit 130. */
export class InterruptedError extends GwError {
  constructor(message = 'Interrupted.', options: GwErrorOptions = {}) {
    super('interrupted', message, ExitCode.interrupted, options)
  }
}

/** True for errors raised by an aborted signal (undici, fetch, timers). */
export function isAbortError(error: unknown): boolean {
  return (
    error instanceof Error && (error.name === 'AbortError' || (error as {code?: string}).code === 'ABORT_ERR')
  )
}
