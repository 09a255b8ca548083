/**
 * Where gwctl keeps its files. One folder holds everything: `GWCTL_HOME` when set, else
 * `$XDG_CONFIG_HOME/gwctl` (or `~/.config/gwctl`).
 */
import {chmodSync, existsSync, mkdirSync, statSync} from 'node:fs'
import {homedir} from 'node:os'
import {join} from 'node:path'

import {ConfigError} from '../core/errors.js'

/** The gwctl home folder (not created). */
export function homeDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.GWCTL_HOME) return env.GWCTL_HOME
  const base = env.XDG_CONFIG_HOME || join(homedir(), '.config')
  return join(base, 'gwctl')
}

/**
 * Creates the home folder (mode 0700) when missing and returns it. A home that is a file, lies
 * below a file, or may not be created is a configuration error (exit 3) naming the path.
 */
export function ensureHome(env: NodeJS.ProcessEnv = process.env): string {
  const dir = checkHome(env)
  try {
    mkdirSync(dir, {recursive: true, mode: 0o700})
  } catch (error) {
    throw homeError(dir, error, env)
  }
  try {
    chmodSync(dir, 0o700)
  } catch {
    // not ours to change (e.g. a shared folder): the files inside are still 0600
  }
  return dir
}

/**
 * The home folder, refused (exit 3) when it exists but is no folder: for readers that need not
 * create it but must not take a file for an empty home.
 */
export function checkHome(env: NodeJS.ProcessEnv = process.env): string {
  const dir = homeDir(env)
  if (existsSync(dir) && !statSync(dir).isDirectory()) {
    throw homeError(dir, Object.assign(new Error('not a folder'), {code: 'EEXIST'}), env)
  }
  return dir
}

function homeError(dir: string, error: unknown, env: NodeJS.ProcessEnv): ConfigError {
  const code = (error as NodeJS.ErrnoException).code
  const from = env.GWCTL_HOME ? 'GWCTL_HOME' : 'The gwctl home folder'
  const what =
    code === 'EEXIST' || code === 'ENOTDIR'
      ? 'is a file, or lies below one; it must be a folder'
      : code === 'EACCES' || code === 'EPERM'
        ? 'cannot be created: permission denied'
        : `cannot be created (${(error as Error).message})`
  return new ConfigError(`${from} ${dir} ${what}.`, {
    code: 'invalid_home',
    hint: env.GWCTL_HOME
      ? 'Point GWCTL_HOME at a folder (it is created when missing), e.g. export GWCTL_HOME=~/.config/gwctl.'
      : `Move the file ${dir} away, or set GWCTL_HOME to a folder.`,
    cause: error,
  })
}

/** Paths of every file gwctl writes, relative to the home folder. */
export const files = {
  settings: 'settings.json',
  state: 'state.json',
  logDb: 'logs.db',
  pid: 'gateway.pid',
  daemonLog: 'gateway.log',
  /** How the gateway was last started (port, simulator), for a start "as it last ran". */
  lastStart: 'gateway-last-start.json',
  videoJournal: 'video-tasks.jsonl',
  priceMemo: 'price-memo.json',
  prices: 'prices.json',
  runKeys: 'run-keys.json',
  /** The statusline's figures, published by the running daemon (daemon/statusline-file.ts). */
  statusline: 'statusline.json',
  /** Each provider's own model list as its API last gave it (services/provider-models.ts). */
  providerModels: 'provider-models.json',
} as const

/** Absolute path of one of {@link files}. */
export function homeFile(name: keyof typeof files, env: NodeJS.ProcessEnv = process.env): string {
  return join(homeDir(env), files[name])
}

/**
 * The side file of the log database at `dbPath` (`logs.db` -> `logs.pending`): the rows that found
 * the database locked (store/log-spill.ts).
 */
export function pendingFileOf(dbPath: string): string {
  return `${dbPath.replace(/\.db$/, '')}.pending`
}

/** Whether the file at `path` holds any byte: one stat, no open (a missing file holds none). */
export function fileHasBytes(path: string): boolean {
  try {
    return statSync(path).size > 0
  } catch {
    return false
  }
}
