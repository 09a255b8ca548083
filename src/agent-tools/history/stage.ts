/**
 * The staged full rescan (also a first scan): files are read whole into scratch databases (see
 * `Scratch` in history-scratch.ts) and merged into the log database in one transaction at the end.
 * With enough to read there are several readers: the main thread and worker threads, as many in
 * all as the machine has cores up to DEFAULT_MAX_READERS (`os.availableParallelism()`, or the
 * `history.threads` setting), one more per WORKER_MIN_BYTES to read. Parsing (JSON) and the
 * scratch inserts run on the readers' cores.
 * The readers take the files one at a time, in scan order, from a shared counter (not a part each:
 * a Claude Code byte costs more to parse than a Codex one); each file keeps its place in the scan
 * order (`order`), by which copies of a key are decided. The readers write into scratch databases,
 * READERS_PER_SCRATCH to one, each reader through its own connection, taking turns (see
 * `Scratch`); when the last file is read, `HistoryStore.mergeScratch` merges the scratches (one
 * statement, in key order) into the log database's new table, or, beside another connection, into
 * one scratch first (`Scratch.finish`), which it copies page by page. With several scratches the
 * files are read in generations (`generationBounds`): the main thread reads nothing and merges each
 * generation's scratches into one scratch (`ScratchMerger`) as soon as every worker is done with
 * it, while they read the next; after the last, that scratch is indexed and copied.
 */
import {availableParallelism} from 'node:os'
import {statSync} from 'node:fs'
import {Worker} from 'node:worker_threads'

import type {Scratch, ScratchLock} from '../../store/history-scratch.js'
import {readHistoryFile} from './read.js'
import type {HistoryFile, ScanStats} from './scan.js'

/**
 * One reader of a staged rescan: the files it takes from `files` (all of them, in scan order; the
 * next index to take is in `shared[0]`) go into the scratch database at `scratch`, which the
 * readers of the same scratch write one at a time (`lock`, when there are several: see `Scratch`).
 */
export interface StageJob {
  /** This reader's scratch database in each generation (see {@link generationBounds}). */
  scratches: string[]
  files: HistoryFile[]
  /** Where each generation's files begin in `files`, then `files.length`. */
  bounds: number[]
  /**
   * An Int32Array's buffer: the next file to take, then the scratches' write locks, then a count
   * a generation (at `done`) of the readers that have written it all (see `generationsDone`), then
   * how many generations' scratch databases the main thread has made (see `generationsMade`).
   */
  shared: SharedArrayBuffer
  /** This reader's scratch's write lock (`shared[lock]`), when other readers write it too. */
  lock?: number
  /** Where the generations' counts begin in `shared`. */
  done: number
  /** The page cache of this reader's scratch connection (KiB, negative). */
  cacheKb: number
}

/**
 * What the readers of one rescan share (see `StageJob.shared`): the counter, `scratches` locks and
 * `generations` counts.
 */
export const sharedState = (scratches: number, generations = 1): SharedArrayBuffer =>
  new SharedArrayBuffer(4 * (1 + scratches + generations + 1))

/**
 * Generations: with several scratches, the files are read in `generations` runs of consecutive
 * files (scan order), each into scratch databases of its own, so that a generation's scratches can
 * be merged (`ScratchMerger`) while the readers read the next: the merge, one thread's work, runs
 * beside the reading instead of after it. Where each generation begins in `files` (and, last,
 * `files`): equal numbers of files. One generation: the scratches of the whole rescan.
 */
export function generationBounds(files: number, generations: number): number[] {
  const g = Math.max(1, Math.min(generations, files))
  return Array.from({length: g + 1}, (_, i) => Math.round((i * files) / g))
}

/**
 * How many generations a rescan of `readers` readers writing `scratches` scratches reads in: one
 * for a single scratch (copied page by page into the log database: nothing to merge), else
 * GENERATIONS, or `GWCTL_HISTORY_GENERATIONS` (tests, and measuring).
 */
export function generationCount(scratches: number, env: NodeJS.ProcessEnv = process.env): number {
  const set = Number(env.GWCTL_HISTORY_GENERATIONS)
  if (scratches <= 1) return 1
  return Number.isInteger(set) && set >= 1 ? Math.min(set, MAX_GENERATIONS) : GENERATIONS
}

/** Generations of a rescan of several scratches (see {@link generationBounds}). */
export const GENERATIONS = 8

/** Generations at most (each has a scratch database per scratch). */
export const MAX_GENERATIONS = 16

/** The counts of readers done with each generation (`shared` of a job). */
export const generationsDone = (job: StageJob): Int32Array =>
  new Int32Array(job.shared, 4 * job.done, job.bounds.length - 1)

/**
 * How many generations' scratch databases exist (`[0]`): the main thread makes the first
 * generation's before it starts the workers, the others while they start and read (64 of them,
 * 8 scratches in 8 generations, took 84-154 ms on two loaded cores: time the workers would wait
 * for); a reader opening a later generation's waits until they are made (see `madeGenerations`).
 */
export const generationsMade = (job: StageJob): Int32Array =>
  new Int32Array(job.shared, 4 * (job.done + job.bounds.length - 1), 1)

/** Records that the scratch databases of generations below `n` exist, and wakes the readers. */
export function madeGenerations(job: StageJob, n: number): void {
  const made = generationsMade(job)
  Atomics.store(made, 0, n)
  Atomics.notify(made, 0)
}

/** How long a reader waits for a generation's scratch databases before it gives up. */
const MADE_TIMEOUT_MS = 60_000

export type StageResult = Pick<ScanStats, 'filesRead' | 'lines' | 'skipped' | 'errors'> & {
  /** Rows read (before duplicates were dropped). */
  rowsRead: number
}

/** Below this many bytes to read, one part is read in-process (a worker costs its start-up). */
export const WORKER_MIN_BYTES = 8 * 1024 * 1024

/** How many readers write into one scratch database, taking turns (two: about a third of a reader's time is its writes). */
export const READERS_PER_SCRATCH = 2

/** The page caches of every reader's scratch connection together (KiB, negative): 256 MB. */
const SCRATCH_CACHES_KB = -262144

/** How many readers a rescan of `bytes` bytes (counted up to `threads` * WORKER_MIN_BYTES) takes. */
export function readerCount(bytes: number, threads: number): number {
  return Math.max(1, Math.min(threads, 1 + Math.floor(bytes / WORKER_MIN_BYTES)))
}

/**
 * The readers a rescan takes by default, at most: with several scratches the command's thread
 * merges each generation while the workers read the next, and that merge, not the reading, sets
 * the pace from about eight workers on. More readers mostly wait (on the scratches they share and
 * on the merge) and cost CPU and memory: on 16 cores (1 GB, 3 057 files, `bench/README.md` "Stop
 * 35"), side by side, 16 readers took 15.0-16.6 CPU-s and 553-591 MB, 9 took 11.0-12.9 CPU-s and
 * 366-431 MB; the wall time went both ways (3.9-4.1 against 2.8-3.4 s on one machine, 3.0-3.1
 * against 3.3-3.4 on another). `history.threads` sets more.
 */
export const DEFAULT_MAX_READERS = 9

/**
 * The reader threads a rescan may use: the `history.threads` setting (`threads`), else the
 * processors this process may run on (`cores`), at most {@link DEFAULT_MAX_READERS}.
 */
export const maxThreads = (threads?: number, cores = availableParallelism()): number =>
  threads !== undefined && threads >= 1 ? Math.floor(threads) : Math.min(cores, DEFAULT_MAX_READERS)

/**
 * How many scratch databases `readers` readers write: one for up to two (their merge into the log
 * database is then a plain page copy), else one per READERS_PER_SCRATCH, at most `max` (attached
 * at once by the merge). `GWCTL_HISTORY_SCRATCHES` sets it (tests, and measuring).
 */
export function scratchCount(readers: number, max: number, env: NodeJS.ProcessEnv = process.env): number {
  const set = Number(env.GWCTL_HISTORY_SCRATCHES)
  const n =
    Number.isInteger(set) && set >= 1
      ? set
      : readers <= READERS_PER_SCRATCH
        ? 1
        : Math.ceil(readers / READERS_PER_SCRATCH)
  return Math.max(1, Math.min(n, readers, max))
}

/**
 * The jobs of `readers` readers writing scratch databases: `paths[gen][s]` is scratch `s` of
 * generation `gen` (every generation has as many), `bounds` where the generations begin (see
 * {@link generationBounds}). Reader `i` writes scratch `i % scratches` of each generation, under
 * its lock when another reader writes it too. Reader 0 is the main thread.
 */
export function stageJobs(
  files: HistoryFile[],
  paths: ReadonlyArray<readonly string[]>,
  readers: number,
  bounds: number[] = [0, files.length],
): StageJob[] {
  const scratches = paths[0].length
  const shared = sharedState(scratches, bounds.length - 1)
  const cacheKb = Math.min(-8192, Math.round(SCRATCH_CACHES_KB / readers))
  return Array.from({length: readers}, (_, i) => {
    const g = i % scratches
    // the readers of scratch g: i = g, g + n, g + 2n, ... below `readers`
    const writers = Math.floor(readers / scratches) + (g < readers % scratches ? 1 : 0)
    return {
      scratches: paths.map((p) => p[g]),
      files,
      bounds,
      shared,
      lock: writers > 1 ? 1 + g : undefined,
      done: 1 + scratches,
      cacheKb,
    }
  })
}

/** The lock of a job's scratch, for `Scratch.create`/`open`. */
export const jobLock = (job: StageJob): ScratchLock | undefined =>
  job.lock === undefined ? undefined : {shared: job.shared, slot: job.lock}

/** How often a reader on the main thread lets its event loop run (signals, the workers' messages). */
const YIELD_MS = 25

/**
 * Reads the files the reader takes whole into the scratch of their generation (`open(gen)`: its
 * connection), each file's rows written as soon as it is read (or, while the other reader writes,
 * with the next). A reader taking its first file of a later generation first writes what it holds
 * of the earlier one, closes it and counts itself done with it (and with any it skipped); with
 * its last file, with every generation left. On the main thread (`yields`), the event loop runs
 * every YIELD_MS (a reader never awaits a real I/O).
 */
export async function stageFiles(
  job: StageJob,
  open: (gen: number) => Scratch,
  signal?: AbortSignal,
  yields = false,
): Promise<StageResult> {
  const stats: StageResult = {filesRead: 0, lines: 0, skipped: {}, errors: [], rowsRead: 0}
  const next = new Int32Array(job.shared, 0, 1)
  const done = generationsDone(job)
  const made = generationsMade(job)
  const last = job.bounds.length - 1
  /** Opens generation `g`'s scratch, once the main thread has made it. */
  const openMade = (g: number) => {
    const deadline = Date.now() + MADE_TIMEOUT_MS
    for (let n = Atomics.load(made, 0); n <= g; n = Atomics.load(made, 0)) {
      if (Date.now() > deadline) throw new Error('the scratch databases of the rescan were not made')
      Atomics.wait(made, 0, n, 50)
    }
    return open(g)
  }
  let gen = 0
  let scratch: Scratch | undefined = openMade(0)
  /** Writes and closes this generation's scratch; done with every generation before `upTo`. */
  const end = (upTo: number) => {
    scratch!.commit()
    stats.rowsRead += scratch!.added
    scratch!.close()
    scratch = undefined
    for (; gen < upTo; gen++) {
      Atomics.add(done, gen, 1)
      Atomics.notify(done, gen)
    }
  }
  let yielded = performance.now()
  try {
    for (let i = Atomics.add(next, 0, 1); i < job.files.length; i = Atomics.add(next, 0, 1)) {
      if (i >= job.bounds[gen + 1]) {
        let g = gen + 1
        while (i >= job.bounds[g + 1]) g++
        end(g)
        scratch = openMade(g)
      }
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
      scratch!.add(read.cursor, read.records, i)
    }
    end(last)
  } finally {
    scratch?.close()
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
