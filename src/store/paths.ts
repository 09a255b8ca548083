/**
 * Where gwctl keeps its files. One folder holds everything: `GWCTL_HOME` when set, else
 * `$XDG_CONFIG_HOME/gwctl` (or `~/.config/gwctl`).
 */
import {chmodSync, mkdirSync} from 'node:fs'
import {homedir} from 'node:os'
import {join} from 'node:path'

/** The gwctl home folder (not created). */
export function homeDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.GWCTL_HOME) return env.GWCTL_HOME
  const base = env.XDG_CONFIG_HOME || join(homedir(), '.config')
  return join(base, 'gwctl')
}

/** Creates the home folder (mode 0700) when missing and returns it. */
export function ensureHome(env: NodeJS.ProcessEnv = process.env): string {
  const dir = homeDir(env)
  mkdirSync(dir, {recursive: true, mode: 0o700})
  try {
    chmodSync(dir, 0o700)
  } catch {
    // not ours to change (e.g. a shared folder): the files inside are still 0600
  }
  return dir
}

/** Paths of every file gwctl writes, relative to the home folder. */
export const files = {
  settings: 'settings.json',
  state: 'state.json',
  logDb: 'logs.db',
  pid: 'gateway.pid',
  daemonLog: 'gateway.log',
  videoJournal: 'video-tasks.jsonl',
} as const

/** Absolute path of one of {@link files}. */
export function homeFile(name: keyof typeof files, env: NodeJS.ProcessEnv = process.env): string {
  return join(homeDir(env), files[name])
}
