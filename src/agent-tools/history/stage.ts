/**
 * The staged full rescan (also a first scan): files are read whole into scratch databases (see
 * `Scratch` in history-scratch.ts) and merged into the log database in one transaction at the end.
 * With enough to read there are two readers, a worker thread and the main thread: parsing (JSON)
 * and the scratch inserts run on two cores. The readers take the files one at a time, in scan
 * order, from a shared counter (not a half each: a Claude Code byte costs more to parse than a
 * Codex one); each file keeps its place in the scan order (`order`), by which copies of a key are
 * decided. Both write into one scratch database, each through its own connection, taking turns
 * (see `Scratch`): when the last file is read, it holds every row, and the final merge copies it
 * page by page.
 */
import {statSync} from 'node:fs'
import {Worker} from 'node:worker_threads'

import type {Scratch} from '../../store/history-scratch.js'
import {readHistoryFile} from './read.js'
import type {HistoryFile, ScanStats} from './scan.js'

/**
 * One reader of a staged rescan: the files it takes from `files` (all of them, in scan order; the
 * next index to take is in `shared[0]`) go into the scratch database at `scratch`, which both
 * readers write, one at a time (`shared[1]`, the write lock: see `Scratch`).
 */
export interface StageJob {
  scratch: string
  files: HistoryFile[]
  /** An Int32Array's buffer: the next file to take, and the scratch's write lock. */
  shared: SharedArrayBuffer
}

/** What the readers of one rescan share (see `StageJob.shared`). */
export const sharedState = (): SharedArrayBuffer => new SharedArrayBuffer(8)

export type StageResult = Pick<ScanStats, 'filesRead' | 'lines' | 'skipped' | 'errors'> & {
  /** Rows read (before duplicates were dropped). */
  rowsRead: number
}

/** Below this many bytes to read, one part is read in-process (a worker costs its start-up). */
export const WORKER_MIN_BYTES = 8 * 1024 * 1024

/** How often a reader on the main thread lets its event loop run (signals, the worker's messages). */
const YIELD_MS = 25

/**
 * Reads the files the reader takes whole into `scratch`, each file's rows written as soon as it
 * is read (or, while the other reader writes, with the next). On the main thread (`yields`), the
 * event loop runs every YIELD_MS (a reader never awaits a real I/O).
 */
export async function stageFiles(
  job: StageJob,
  scratch: Scratch,
  signal?: AbortSignal,
  yields = false,
): Promise<StageResult> {
  const stats: StageResult = {filesRead: 0, lines: 0, skipped: {}, errors: [], rowsRead: 0}
  const next = new Int32Array(job.shared, 0, 1)
  let yielded = performance.now()
  for (let i = Atomics.add(next, 0, 1); i < job.files.length; i = Atomics.add(next, 0, 1)) {
    const file = job.files[i]
    if (yields && performance.now() - yielded > YIELD_MS) {
      await new Promise((resolve) => setImmediate(resolve))
      yielded = performance.now()
    }
    signal?.throwIfAborted()
    let st
    try {
      st = statSync(file.path)
    } catch (error) {
      stats.errors.push({path: file.path, error: String((error as NodeJS.ErrnoException).code ?? error)})
      continue
    }
    const read = await readHistoryFile(file, st, undefined, true, stats)
    if (!read) continue
    read.cursor.id = file.id
    stats.filesRead++
    scratch.add(read.cursor, read.records, i)
  }
  scratch.commit()
  stats.rowsRead = scratch.added
  return stats
}

/** Runs a job in a worker thread; an abort terminates the worker. */
export function stageInWorker(job: StageJob, signal?: AbortSignal): Promise<StageResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('stage-worker.js', import.meta.url), {workerData: job})
    const onAbort = () => void worker.terminate()
    signal?.addEventListener('abort', onAbort, {once: true})
    let result: StageResult | undefined
    let failure: unknown
    worker.on('message', (m: StageResult) => (result = m))
    worker.once('error', (error) => (failure = error))
    worker.once('exit', (code) => {
      signal?.removeEventListener('abort', onAbort)
      if (result) resolve(result)
      else if (signal?.aborted) reject(signal.reason as Error)
      else reject(failure ?? new Error(`the history reader thread exited with code ${code}`))
    })
  })
}
