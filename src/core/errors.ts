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

/** Node's file-system error codes that mean "this disk or folder cannot be written" (exit 3). */
const FS_CODES: Record<string, {code: string; what: string; hint: string}> = {
  EROFS: {
    code: 'home_read_only',
    what: 'the file system is read-only',
    hint: 'Make the folder writable again (or point GWCTL_HOME at a writable folder), then run the command again.',
  },
  EACCES: {
    code: 'home_not_writable',
    what: 'permission denied',
    hint: 'Check the owner and mode of the file and its folder (ls -ld), then run the command again.',
  },
  EPERM: {
    code: 'home_not_writable',
    what: 'operation not permitted',
    hint: 'Check the owner and mode of the file and its folder (ls -ld), then run the command again.',
  },
  ENOSPC: {
    code: 'disk_full',
    what: 'no space left on the device',
    hint: 'Free some space on that disk (df -h shows which), then run the command again.',
  },
  EDQUOT: {
    code: 'disk_full',
    what: 'the disk quota is used up',
    hint: 'Free some space within your quota (quota -s), then run the command again.',
  },
}

/**
 * A file-system or SQLite error as a typed configuration error (exit 3), or undefined when
 * `error` is neither: a read-only or full `GWCTL_HOME` (EROFS, EACCES, EPERM, ENOSPC, EDQUOT, and
 * SQLite's READONLY, FULL, CANTOPEN) and a damaged database (NOTADB, CORRUPT). The one mapping
 * the command base and the daemon's entry point share, so no command has to catch these itself.
 */
export function fileSystemError(error: unknown): GwError | undefined {
  if (error instanceof GwError) return error
  const e = error as (Error & {code?: unknown; path?: unknown; syscall?: unknown}) | undefined
  const code = typeof e?.code === 'string' ? e.code : undefined
  if (!code) return undefined
  const path = typeof e?.path === 'string' ? e.path : undefined
  const fs = FS_CODES[code]
  if (fs) {
    const where = path ? ` ${path}` : ''
    const action = typeof e?.syscall === 'string' ? `${e.syscall}${where}` : `write${where}`
    return new ConfigError(`Cannot ${action}: ${fs.what} (${code}).`, {
      code: fs.code,
      hint: fs.hint,
      cause: error,
    })
  }
  if (!code.startsWith('SQLITE_')) return undefined
  if (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT'))
    return new ConfigError(`The database${path ? ` ${path}` : ''} is damaged: ${e!.message} (${code}).`, {
      code: 'database_damaged',
      hint:
        'Run `gwctl doctor` to see which; `gwctl gateway start` (or `restart`) moves a damaged ' +
        'logs.db aside (logs.db.damaged-<time>) and starts a new one.',
      cause: error,
    })
  if (code.startsWith('SQLITE_READONLY') || code === 'SQLITE_CANTOPEN' || code.startsWith('SQLITE_CANTOPEN'))
    return new ConfigError(
      `The database${path ? ` ${path}` : ''} cannot be opened or written: ${e!.message} (${code}).`,
      {
        code: 'home_not_writable',
        hint: FS_CODES.EROFS.hint,
        cause: error,
      },
    )
  if (code === 'SQLITE_FULL' || code.startsWith('SQLITE_IOERR'))
    return new ConfigError(
      `The database${path ? ` ${path}` : ''} cannot be written: ${e!.message} (${code}).`,
      {
        code: code === 'SQLITE_FULL' ? 'disk_full' : 'disk_error',
        hint: code === 'SQLITE_FULL' ? FS_CODES.ENOSPC.hint : 'Check the disk of GWCTL_HOME (dmesg, df -h).',
        cause: error,
      },
    )
  return undefined
}
