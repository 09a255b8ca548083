/**
 * The staged full rescan (also a first scan): files are read whole into scratch databases (see
 * `Scratch` in history-store.ts), by two readers when there is enough to read (a worker thread and
 * the main thread, which then merges), and merged into the log database in one transaction at the
 * end: parsing (JSON) and the scratch inserts run on two cores. The readers take the files one at a time, in scan order, from a shared counter (not a half each: a Claude Code byte costs
 * more to parse than a Codex one, and one thread finished a second before the other); each
 * file keeps its place in the scan order (`order`), by which the merge decides between copies.
 */
import {statSync} from 'node:fs'
import {Worker} from 'node:worker_threads'

import {Scratch, spillRows} from '../../store/history-store.js'
import type {FileRead} from './read.js'
import {readHistoryFile} from './read.js'
import type {HistoryFile, ScanStats} from './scan.js'

/**
 * One reader of a staged rescan: the files it takes from `files` (all of them, in scan order; the
 * next index to take is in `next`, shared by the readers) go into the scratch database `scratch`.
 */
export interface StageJob {
  scratch: string
  files: HistoryFile[]
  /** An Int32Array's buffer: the index of the next file to take. */
  next: SharedArrayBuffer
}

/** A counter the readers of one rescan share. */
export const sharedCounter = (): SharedArrayBuffer => new SharedArrayBuffer(4)

export type StageResult = Pick<ScanStats, 'filesRead' | 'lines' | 'skipped' | 'errors'> & {
  /** Rows read (before the part's own duplicates were dropped). */
  rowsRead: number
}

/** Below this many bytes to read, one part is read in-process (a worker costs its start-up). */
export const WORKER_MIN_BYTES = 8 * 1024 * 1024

const BATCH_ROWS = 20_000
const BATCH_FILES = 200

/** How often a reader on the main thread lets its event loop run (signals, the worker's messages). */
const YIELD_MS = 25

/**
 * Reads every file of the job whole into its scratch database. `yields`: on the main thread
 * beside a worker, the event loop runs every YIELD_MS (a reader never awaits a real I/O).
 */
export async function stageFiles(job: StageJob, signal?: AbortSignal, yields = false): Promise<StageResult> {
  const stats: StageResult = {filesRead: 0, lines: 0, skipped: {}, errors: [], rowsRead: 0}
  const scratch = await Scratch.create(job.scratch)
  try {
    let batch: Array<FileRead & {order: number}> = []
    let rows = 0
    // never more rows held than the scratch table writes out at a time
    const batchRows = Math.min(BATCH_ROWS, spillRows())
    const next = new Int32Array(job.next)
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
      batch.push({...read, order: i})
      rows += read.records.length
      if (rows >= batchRows || batch.length >= BATCH_FILES) {
        scratch.add(batch)
        batch = []
        rows = 0
      }
    }
    scratch.add(batch)
    scratch.finish()
    stats.rowsRead = scratch.added
  } finally {
    scratch.close()
  }
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
    worker.once('message', (m: StageResult) => (result = m))
    worker.once('error', (error) => (failure = error))
    worker.once('exit', (code) => {
      signal?.removeEventListener('abort', onAbort)
      if (result) resolve(result)
      else if (signal?.aborted) reject(signal.reason as Error)
      else reject(failure ?? new Error(`the history reader thread exited with code ${code}`))
    })
  })
}
