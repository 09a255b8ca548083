/**
 * The daemon's history scan: incremental, once on start and then every 60 s
 * (`GWCTL_HISTORY_SCAN_MS` changes the period, 0 turns it off), on a timer off the request path.
 * The scan reads files in 1 MB chunks and yields to the event loop between files, so requests
 * keep flowing; one scan runs at a time, and stopping waits for the current file to finish.
 */
import {setImmediate as yieldLoop} from 'node:timers/promises'

import type {HistoryStore} from '../store/history-store.js'
import {emitGatewayEvent} from './events.js'
import {endQuietStart} from './quiet-start.js'

export const HISTORY_SCAN_MS = 60_000
/** The page cache of the daemon's history connection (SQLite's default is 2 MB). */
const DAEMON_CACHE_KB = -8192

export interface HistoryScanner {
  /** Resolves after the scan in progress (if any) and closes the store. */
  stop(): Promise<void>
  /** The scan in progress or the last one (for tests). */
  readonly idle: Promise<void>
}

export function scanPeriodMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.GWCTL_HISTORY_SCAN_MS
  if (raw === undefined || raw.trim() === '') return HISTORY_SCAN_MS
  const n = Number(raw)
  return Number.isFinite(n) && n >= 0 ? n : HISTORY_SCAN_MS
}

export async function startHistoryScanner(options: {
  dbPath: string
  log: (line: string) => void
  periodMs?: number
  env?: NodeJS.ProcessEnv
}): Promise<HistoryScanner | undefined> {
  const period = options.periodMs ?? scanPeriodMs(options.env)
  if (period === 0) return undefined
  const [{HistoryStore: Store}, {scanHistory}] = await Promise.all([
    import('../store/history-store.js'),
    import('../agent-tools/history/scan.js'),
  ])
  const store: HistoryStore = await Store.open(options.dbPath)
  // This connection lives as long as the daemon. The store's 64 MB page cache is for a rescan's
  // index writes; kept here, it stayed in the daemon's memory after its first scan (56 -> 132-146
  // MB with 150 MB of history, bench/README.md "perf6"). An incremental scan appends a few files.
  store.db.pragma(`cache_size = ${DAEMON_CACHE_KB}`)
  const abort = new AbortController()
  let running: Promise<void> = Promise.resolve()
  let timer: NodeJS.Timeout | undefined
  const once = async () => {
    try {
      const stats = await scanHistory(store, {
        env: options.env,
        signal: abort.signal,
        betweenFiles: () => yieldLoop(),
        // a file to parse: work that repeats, for which the daemon wants TurboFan back
        beforeRead: endQuietStart,
        // file by file, yielding between files: a staged merge would hold the event loop
        staged: false,
        // nor a snapshot rebuild after each scan that read something (see ScanOptions.snapshot)
        snapshot: false,
      })
      // the terminal app adds the new history rows to its usage view without polling
      if (stats.rows > 0) emitGatewayEvent({type: 'usage', rows: stats.rows})
      if (stats.filesRead > 0 || stats.errors.length > 0)
        options.log(
          `${new Date().toISOString()} history scan: ${stats.filesRead}/${stats.files} files read, ${stats.rows} rows, ${stats.errors.length} unreadable, ${stats.durationMs} ms`,
        )
    } catch (error) {
      if (!abort.signal.aborted)
        options.log(`${new Date().toISOString()} warning: history scan failed: ${(error as Error).message}`)
    }
  }
  const run = () => {
    running = once().finally(() => {
      if (abort.signal.aborted) return
      timer = setTimeout(run, period)
      timer.unref()
    })
  }
  run()
  return {
    get idle() {
      return running
    },
    async stop() {
      abort.abort()
      if (timer) clearTimeout(timer)
      await running.catch(() => undefined)
      if (timer) clearTimeout(timer)
      store.close()
    },
  }
}
