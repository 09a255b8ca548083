/**
 * The staged full rescan (also a first scan): files are read whole into scratch databases (see
 * `Scratch` in history-store.ts) and merged into the log database in one transaction at the end.
 * With enough to read there are two readers, a worker thread and the main thread: parsing (JSON)
 * and the scratch inserts run on two cores. The readers take the files one at a time, in scan
 * order, from a shared counter (not a half each: a Claude Code byte costs more to parse than a
 * Codex one); each file keeps its place in the scan order (`order`), by which copies of a key are
 * decided. The worker hands its rows over in chunks (a scratch database every `chunkRows()` rows),
 * which the main thread merges into its own scratch between its files: when the last file is
 * read, one scratch holds every row, and the final merge copies it page by page.
 */
import {statSync} from 'node:fs'
import {Worker} from 'node:worker_threads'

import {chunkRows, MAIN_SCRATCH_CACHE_KB, Scratch} from '../../store/history-store.js'
import {readHistoryFile} from './read.js'
import type {HistoryFile, ScanStats} from './scan.js'

/**
 * One reader of a staged rescan: the files it takes from `files` (all of them, in scan order; the
 * next index to take is in `next`, shared by the readers) go into the scratch database `scratch`
 * (with `chunks`: into `<scratch>.c<n>`, a new one every `chunkRows()` rows, each handed over when
 * complete).
 */
export interface StageJob {
  scratch: string
  files: HistoryFile[]
  /** An Int32Array's buffer: the index of the next file to take. */
  next: SharedArrayBuffer
  chunks?: boolean
}

/** A counter the readers of one rescan share. */
export const sharedCounter = (): SharedArrayBuffer => new SharedArrayBuffer(4)

export type StageResult = Pick<ScanStats, 'filesRead' | 'lines' | 'skipped' | 'errors'> & {
  /** Rows read (before the part's own duplicates were dropped). */
  rowsRead: number
}

/** Below this many bytes to read, one part is read in-process (a worker costs its start-up). */
export const WORKER_MIN_BYTES = 8 * 1024 * 1024

/** How often a reader on the main thread lets its event loop run (signals, the worker's messages). */
const YIELD_MS = 25

/**
 * The main thread's side of the chunks: the finished chunks' paths as the worker's messages bring
 * them (`inbox`), and the worker's end (its result, after its last chunk).
 */
export interface ChunkInbox {
  inbox: string[]
  done: Promise<StageResult>
}

/** Where a worker's `n`th chunk goes. */
const chunkPath = (scratch: string, n: number) => `${scratch}.c${n}`

/**
 * Reads every file of the job whole into its scratch database, each file's rows written as soon
 * as it is read. With `chunks` (the main thread beside a worker), the event loop runs every
 * YIELD_MS (a reader never awaits a real I/O), and the worker's finished chunks are merged then;
 * after the last file, the rest of them. `onChunk` (the worker): called with each finished
 * chunk's path.
 */
export async function stageFiles(
  job: StageJob,
  signal?: AbortSignal,
  chunks?: ChunkInbox,
  onChunk?: (path: string) => void,
): Promise<StageResult> {
  const yields = chunks !== undefined
  const stats: StageResult = {filesRead: 0, lines: 0, skipped: {}, errors: [], rowsRead: 0}
  let chunk = 0
  const path = () => (job.chunks ? chunkPath(job.scratch, chunk) : job.scratch)
  let scratch = await Scratch.create(path(), chunks ? MAIN_SCRATCH_CACHE_KB : undefined)
  const merge = () => {
    for (let p = chunks?.inbox.shift(); p !== undefined; p = chunks?.inbox.shift()) scratch.mergeChunk(p)
  }
  try {
    const next = new Int32Array(job.next)
    const perChunk = chunkRows()
    let yielded = performance.now()
    for (let i = Atomics.add(next, 0, 1); i < job.files.length; i = Atomics.add(next, 0, 1)) {
      const file = job.files[i]
      if (yields && performance.now() - yielded > YIELD_MS) {
        await new Promise((resolve) => setImmediate(resolve))
        merge()
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
      if (job.chunks && scratch.added >= perChunk) {
        // hand the chunk over, and go on in a new one
        scratch.commit()
        stats.rowsRead += scratch.added
        scratch.close()
        onChunk?.(scratch.path)
        chunk++
        scratch = await Scratch.create(path())
      }
    }
    scratch.commit()
    if (chunks) {
      // the worker's last chunks: merged as they come, then its result
      const done = chunks.done
      let finished = false
      void done.then(
        () => (finished = true),
        () => (finished = true),
      )
      while (!finished) {
        merge()
        await new Promise((resolve) => setTimeout(resolve, 5))
        signal?.throwIfAborted()
      }
      await done
      merge()
    }
    stats.rowsRead += scratch.added
    if (job.chunks) {
      scratch.close()
      onChunk?.(scratch.path)
    }
  } finally {
    scratch.close()
  }
  return stats
}

/** Runs a job in a worker thread (`onChunk`: each chunk it finishes); an abort terminates the worker. */
export function stageInWorker(
  job: StageJob,
  signal?: AbortSignal,
  onChunk?: (path: string) => void,
): Promise<StageResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('stage-worker.js', import.meta.url), {workerData: job})
    const onAbort = () => void worker.terminate()
    signal?.addEventListener('abort', onAbort, {once: true})
    let result: StageResult | undefined
    let failure: unknown
    worker.on('message', (m: StageResult | {chunk: string}) => {
      if ('chunk' in m) onChunk?.(m.chunk)
      else result = m
    })
    worker.once('error', (error) => (failure = error))
    worker.once('exit', (code) => {
      signal?.removeEventListener('abort', onAbort)
      if (result) resolve(result)
      else if (signal?.aborted) reject(signal.reason as Error)
      else reject(failure ?? new Error(`the history reader thread exited with code ${code}`))
    })
  })
}
