/**
 * The history scan: finds every history file of Claude Code, Codex CLI and Gemini CLI (folders
 * from `agent-homes.ts`), and reads each one from its cursor. A file whose inode, size and mtime
 * match its cursor is not opened; one that shrank or was replaced is read again whole; a full
 * rescan reads every file whole. Unreadable files and folders are reported and skipped.
 */
import type {Dirent, Stats} from 'node:fs'
import {setMaxListeners} from 'node:events'
import {readdirSync, readFileSync, statSync} from 'node:fs'
import {sep} from 'node:path'

import type {AgentTool} from '../../store/history-rows.js'
import {AGENT_TOOLS, agentHomes} from '../agent-homes.js'
import {getCheckedSetting} from '../../store/settings.js'
import type {ApplyResult, Cursors, FileCursor} from '../../store/history-insert.js'
import type {HistoryStore} from '../../store/history-store.js'
import type {FileContext, SkipReason} from './types.js'
import type {HistoryRecord} from '../../store/history-rows.js'
import {bump} from './types.js'
import {isOpencodeHistory, opencodeStat} from './opencode.js'
import type {readHistoryFile as ReadHistoryFile} from './read.js'
import type {StageResult} from './stage.js'

export interface HistoryFile {
  tool: AgentTool
  path: string
  context: FileContext
  /** Gemini legacy `.json`: parsed whole. */
  whole: boolean
  /** A staged rescan's number for the file (`history_files.id`). */
  id?: number
}

export interface ScanStats {
  /** History files found. */
  files: number
  /** Files read (new or changed). */
  filesRead: number
  /** Complete lines read. */
  lines: number
  /** Rows written (inserted or replaced). */
  rows: number
  /** Lines not counted, by reason. */
  skipped: Partial<Record<SkipReason | 'replay', number>>
  /** Files and folders that could not be read. */
  errors: Array<{path: string; error: string}>
  /** Wall time, milliseconds. */
  durationMs: number
  /** Reader threads of a staged scan (the main thread and its workers); absent when not staged. */
  readers?: number
}

export interface ScanOptions {
  env?: NodeJS.ProcessEnv
  /** Read every file whole (`gwctl usage rescan`). */
  full?: boolean
  /** Only these tools. */
  tools?: readonly AgentTool[]
  signal?: AbortSignal
  /**
   * Reader threads a staged scan uses at most (default: the `history.threads` setting, else
   * `os.availableParallelism()` up to nine: see `DEFAULT_MAX_READERS` in stage.ts).
   */
  threads?: number
  /**
   * A full rescan or a first scan is staged (read into scratch databases, worker threads for
   * large ones, merged in one transaction); false upserts file by file instead (the daemon: its
   * event loop must not stop for a long merge).
   */
  staged?: boolean
  /** Awaited after each file read (the daemon yields to its event loop there). */
  betweenFiles?: () => Promise<unknown>
  /** Called before the first changed file is read (the daemon's quiet start ends there). */
  beforeRead?: () => void
  /**
   * Writes the cursor snapshot (default true) after a staged scan, or after a scan that found
   * none and changed nothing: the next no-change scan reads it in one row. Not after a scan that
   * read a changed file: while an agent writes, every scan reads the table anyway (as without
   * a snapshot), and rebuilding it (30-40 ms for 10 000 files) would come on top. The daemon
   * passes false: its minute's scans would rebuild it for commands that, while it runs, do not scan.
   */
  snapshot?: boolean
}

/**
 * Synchronous: a hundred folders cost less than the thread-pool round trips of async readdir.
 * Paths are joined by hand: `path.join` normalizes each of 10 000 names for nothing.
 */
function walk(
  dir: string,
  accept: (name: string) => boolean,
  errors: ScanStats['errors'],
  out: string[],
  depth = Infinity,
): void {
  let entries: Dirent[]
  try {
    entries = readdirSync(dir, {withFileTypes: true})
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code !== 'ENOENT' && code !== 'ENOTDIR') errors.push({path: dir, error: String(code ?? error)})
    return
  }
  const prefix = dir.endsWith(sep) ? dir : dir + sep
  for (const e of entries) {
    const name = e.name
    if (e.isDirectory()) {
      if (depth > 1) walk(prefix + name, accept, errors, out, depth - 1)
    } else if ((e.isFile() || e.isSymbolicLink()) && accept(name)) out.push(prefix + name)
  }
}

/** One history folder's files as the walk found them (unsorted, not yet filtered). */
interface Found {
  tool: AgentTool
  /** The folder with a trailing separator: what follows it in a path is the path's relative part. */
  prefix: string
  paths: string[]
  /** Codex: relative paths taken already (sessions/ before archived_sessions/ of the same home). */
  seen: Set<string>
}

/** Every history folder's files, folders in scan order (homes, then each home's folders). */
function walkHistory(options: ScanOptions, errors: ScanStats['errors']): Found[] {
  const tools = options.tools ?? AGENT_TOOLS
  const found: Found[] = []
  for (const home of agentHomes(options.env)) {
    if (!tools.includes(home.tool)) continue
    const accept =
      home.tool === 'claude-code' || home.tool === 'qwen-code'
        ? (n: string) => n.endsWith('.jsonl')
        : home.tool === 'codex'
          ? (n: string) => n.startsWith('rollout-') && n.endsWith('.jsonl')
          : home.tool === 'opencode'
            ? isOpencodeHistory
            : (n: string) => n.endsWith('.jsonl') || (n.startsWith('session-') && n.endsWith('.json'))
    const seen = new Set<string>()
    for (const [i, dir] of home.historyDirs.entries()) {
      const paths: string[] = []
      // OpenCode's data folder: only its top (the databases; it also holds git snapshots, logs
      // and cloned repositories); its message files are the second folder, walked whole
      walk(dir, accept, errors, paths, home.tool === 'opencode' && i === 0 ? 1 : Infinity)
      found.push({tool: home.tool, prefix: dir.endsWith(sep) ? dir : dir + sep, paths, seen})
    }
  }
  return found
}

/**
 * Whether the scan reads `path` of `found`: Codex reads a relative path once (the sessions/ copy
 * wins over archived_sessions/: their folders come in that order), Gemini CLI only under `chats/`.
 * Called once per path, in any order within a folder.
 */
function reads(found: Found, path: string): boolean {
  if (found.tool === 'codex') {
    const rel = path.slice(found.prefix.length)
    if (found.seen.has(rel)) return false
    found.seen.add(rel)
    return true
  }
  if (found.tool === 'claude-code') return true
  const parts = path.slice(found.prefix.length).split(sep)
  // OpenCode: its databases (top of the data folder), its message files (storage/message/<session>/)
  if (found.tool === 'opencode') return path.endsWith('.db') ? parts.length === 1 : parts.length === 2
  return parts.includes('chats')
}

function historyFile(found: Found, path: string): HistoryFile {
  const rel = path.slice(found.prefix.length)
  switch (found.tool) {
    case 'claude-code':
      return {tool: 'claude-code', path, whole: false, context: {path, keyPath: path, project: null}}
    case 'codex':
      return {tool: 'codex', path, whole: false, context: {path, keyPath: rel, project: null}}
    case 'opencode':
      return {tool: 'opencode', path, whole: true, context: {path, keyPath: path, project: null}}
    case 'qwen-code':
      // projects/<sanitized cwd>/chats/<session>.jsonl: the records hold the real cwd
      return {tool: 'qwen-code', path, whole: false, context: {path, keyPath: path, project: null}}
    case 'gemini-cli': {
      const parts = rel.split(sep)
      return {
        tool: 'gemini-cli',
        path,
        whole: path.endsWith('.json'),
        context: {path, keyPath: path, project: parts.length > 2 ? parts[0] : null},
      }
    }
  }
}

/** The files of walked folders, in the scan's order: folder by folder, each sorted by path. */
function sortedFiles(walked: readonly Found[]): HistoryFile[] {
  const files: HistoryFile[] = []
  for (const found of walked)
    // a sorted copy: the walk's order is the cursor snapshot's (see `saveCursorSnapshot`)
    for (const path of found.paths.slice().sort())
      if (reads(found, path)) files.push(historyFile(found, path))
  return files
}

/** Every history file of the selected tools, in a stable order. */
export async function findHistoryFiles(
  options: ScanOptions,
  errors: ScanStats['errors'] = [],
): Promise<HistoryFile[]> {
  return sortedFiles(walkHistory(options, errors))
}

const NO_THROW = {throwIfNoEntry: false} as const

const BATCH_ROWS = 20_000
const BATCH_FILES = 200

/** Scans the history files into `store`; incremental unless `options.full`. */
export async function scanHistory(store: HistoryStore, options: ScanOptions = {}): Promise<ScanStats> {
  const started = performance.now()
  const stats: ScanStats = {files: 0, filesRead: 0, lines: 0, rows: 0, skipped: {}, errors: [], durationMs: 0}
  const walked = walkHistory(options, stats.errors)
  const cursors = store.cursors()
  // A full rescan, or a first scan, reads every file whole: staged (stage.ts), not upserted. With
  // no history at all there is nothing to stage: `gwctl usage` on a machine without agents must
  // not build and merge scratch databases on every call.
  const staged =
    (options.full || (cursors.size === 0 && walked.some((f) => f.paths.length > 0))) &&
    options.staged !== false
  if (staged) {
    const files = sortedFiles(walked)
    stats.files = files.length
    await stagedScan(store, files, cursors, options, stats)
  } else await incrementalScan(store, walked, cursors, options, stats)
  // A staged scan wrote every cursor; a scan without a snapshot that wrote none writes one.
  if (options.snapshot !== false && (staged || (!cursors.fromSnapshot && stats.filesRead === 0)))
    try {
      store.saveCursorSnapshot(walkOrder(walked))
    } catch (error) {
      // A database another writer holds (or a read-only one) only costs the next scan the table.
      const code = String((error as {code?: unknown}).code)
      if (!code.startsWith('SQLITE_BUSY') && !code.startsWith('SQLITE_READONLY')) throw error
    }
  stats.durationMs = Math.round(performance.now() - started)
  return stats
}

/** Every walked path, in the walk's order. */
function* walkOrder(walked: readonly Found[]): Generator<string> {
  for (const found of walked) yield* found.paths
}

const count = (stats: ScanStats, applied: ApplyResult) => {
  stats.rows += applied.rows
  bump(stats, 'duplicate', applied.duplicates)
  bump(stats, 'replay', applied.replays)
}

async function stagedScan(
  store: HistoryStore,
  files: HistoryFile[],
  cursors: Cursors,
  options: ScanOptions,
  stats: ScanStats,
): Promise<void> {
  const {
    maxThreads,
    readerCount,
    scratchCount,
    stageFiles,
    stageInWorker,
    stageJobs,
    jobLock,
    generationBounds,
    generationCount,
    generationsDone,
    madeGenerations,
    WORKER_MIN_BYTES,
  } = await import('./stage.js')
  const {Scratch, ScratchMerger, MAX_MERGED} = await import('../../store/history-scratch.js')
  store.removeScratchFiles()
  // Every file gets its number up front: the reader threads write it into the rows.
  let next = store.newFileIds()
  files = files.map((f) => ({...f, id: cursors.id(f.path) ?? next++}))
  // (enough to know how many readers there is enough for: at 1 GB, statting every file took 25 ms)
  // (the setting is read here, so that a scan of any caller follows it; a bad value is exit 3)
  const setting = options.threads ?? getCheckedSetting('history.threads')
  const threads = maxThreads(setting === undefined ? undefined : Number(setting))
  let bytes = 0
  for (const f of files) {
    bytes += statSync(f.path, {throwIfNoEntry: false})?.size ?? 0
    if (bytes >= threads * WORKER_MIN_BYTES) break
  }
  // Readers: this thread and worker threads. This thread reads while the workers start (a
  // worker's start-up, about 0.1-0.3 s under load, would be idle time) and yields now and then (a
  // Ctrl-C is seen at once). They write into `scratches` scratch databases a generation (see
  // `generationBounds`), which are merged into one and then into the log database.
  // (never more readers than files: one large file is read by one reader)
  const readers = Math.max(1, Math.min(readerCount(bytes, threads), files.length))
  stats.readers = readers
  const base = store.scratchPath()
  // Several scratches: read in generations, each merged by this thread (`ScratchMerger`) while
  // the workers read the next; this thread then reads nothing (on many cores the merge keeps pace
  // with the readers only just: reading, it would fall behind).
  const generations = generationCount(scratchCount(readers, MAX_MERGED), options.env ?? process.env)
  const bounds = generationBounds(files.length, generations)
  const pipelined = bounds.length > 2
  const reading = pipelined ? readers - 1 : readers
  const scratches = scratchCount(reading, MAX_MERGED)
  const paths = Array.from({length: bounds.length - 1}, (_, gen) =>
    Array.from({length: scratches}, (_, g) =>
      gen === 0 ? (g === 0 ? base : `${base}-${g}`) : `${base}-g${gen}-${g}`,
    ),
  )
  const jobs = stageJobs(files, paths, reading, bounds)
  // this thread creates every scratch (the workers open theirs: the first generation's before they
  // start, the others while they start) and writes the first, unless it merges (several scratches
  // are merged, keyed by `key`; one is copied, in the log database's layout)
  const merged = scratches > 1 || pipelined
  const first = Scratch.create(paths[0][0], jobLock(jobs[0]), jobs[0].cacheKb, merged)
  for (const p of paths[0].slice(1)) Scratch.create(p, undefined, undefined, merged).close()
  madeGenerations(jobs[0], 1)
  if (pipelined) first.close()
  const merger = pipelined ? new ScratchMerger(`${base}-all`) : undefined
  const done = generationsDone(jobs[0])
  let mergedGens = 0
  let pipelinedMs = 0
  let pipelinedCpuMs = 0
  const marking = (options.env ?? process.env).GWCTL_HISTORY_MARKS === '1'
  /** Merges the generations every reader is done with, in order, up to `upTo`. */
  const mergeReady = (upTo: number) => {
    while (merger && mergedGens < upTo && Atomics.load(done, mergedGens) === reading) {
      const at = performance.now()
      const cpu = marking ? threadCpuMs() : 0
      merger.add(paths[mergedGens++])
      pipelinedMs += performance.now() - at
      if (marking) pipelinedCpuMs += threadCpuMs() - cpu
    }
  }
  let workers: Array<Promise<StageResult>> = []
  // the workers stop with the scan's signal, and with a failure of any reader; this thread's
  // reading stops with the scan's signal, and with a failure of a worker
  const stopWorkers = new AbortController()
  // one listener a worker: no "possible memory leak" warning past ten
  setMaxListeners(readers + 1, stopWorkers.signal)
  const stopReading = new AbortController()
  const forward = () => {
    stopWorkers.abort(options.signal?.reason)
    stopReading.abort(options.signal?.reason)
  }
  options.signal?.addEventListener('abort', forward, {once: true})
  if (options.signal?.aborted) forward()
  try {
    workers = (pipelined ? jobs : jobs.slice(1)).map((job) => stageInWorker(job, stopWorkers.signal))
    for (let gen = 1; gen < paths.length; gen++) {
      for (const p of paths[gen]) Scratch.create(p, undefined, undefined, merged).close()
      madeGenerations(jobs[0], gen + 1)
    }
    // (handled at once: a worker failing while this thread reads is no unhandled rejection)
    for (const w of workers)
      w.catch((error: unknown) => {
        stopReading.abort(error)
        stopWorkers.abort(error)
      })
    const marks = phaseMarks(options.env ?? process.env)
    const results: StageResult[] = []
    if (!pipelined) results.push(await stageFiles(jobs[0], () => first, stopReading.signal, true))
    // the generations are merged as the workers finish them, the last after them
    else
      while (Atomics.load(done, paths.length - 1) < reading) {
        mergeReady(paths.length - 1)
        stopReading.signal.throwIfAborted()
        await new Promise((resolve) => setTimeout(resolve, 2))
      }
    results.push(...(await Promise.all(workers)))
    marks?.('read')
    options.signal?.throwIfAborted()
    let read = 0
    for (const r of results) {
      read += r.rowsRead
      stats.filesRead += r.filesRead
      stats.lines += r.lines
      stats.errors.push(...r.errors)
      for (const [k, n] of Object.entries(r.skipped)) bump(stats, k as keyof ScanStats['skipped'], n)
    }
    options.signal?.throwIfAborted()
    // merged while the readers read
    const early = mergedGens
    let finish = (p: readonly string[]) => Scratch.finish(p, `${base}-all`, marks)
    if (merger) {
      // the generations not merged yet (the last), then the file index: one scratch, copied
      merger.widen()
      mergeReady(paths.length)
      marks?.('merge')
      merger.index()
      marks?.('index')
      merger.close()
      finish = () => merger.path
    }
    count(stats, store.mergeScratch(merger ? [merger.path] : paths[0], read, finish, marks))
    marks?.('swap', {
      readers,
      scratches,
      generations: paths.length,
      pipelined: early,
      pipelinedMs: Math.round(pipelinedMs),
      pipelinedCpuMs,
      rows: read,
    })
  } finally {
    first.close()
    merger?.close()
    // an interrupted worker may still be writing: its scratch is removed once it has exited
    options.signal?.removeEventListener('abort', forward)
    stopWorkers.abort()
    await Promise.allSettled(workers)
    store.removeScratchFiles()
  }
}

/**
 * `GWCTL_HISTORY_MARKS=1`: a staged scan writes one JSON line to stderr when it ends, each phase's
 * wall and this process's CPU milliseconds (every thread's) since the previous mark: `read` (the
 * readers, until the last one ends), `merge` (of several scratches) and `index` (the file index),
 * `copy` (only when the rows were merged into one scratch first, outside the write lock, and
 * copied: see `HistoryStore.mergeScratch`), `swap` (the rest of the transaction: the rows of files
 * not read, the `/btw` rule, the cursors, the commit). With generations (`generationCount`),
 * `merge` is what was left to merge when the readers ended (the last generation), and the line
 * also gives `pipelined` (generations merged while the readers read), `pipelinedMs` and
 * `pipelinedCpuMs` (their wall and this thread's CPU; Linux, 10 ms ticks). For measuring the
 * serial part of a rescan; undefined when unset.
 */
export function phaseMarks(env: NodeJS.ProcessEnv): PhaseMark | undefined {
  if (env.GWCTL_HISTORY_MARKS !== '1') return undefined
  const phases: Record<string, {ms: number; cpuMs: number}> = {}
  let at = performance.now()
  let cpu = process.cpuUsage()
  return (phase, done) => {
    const now = performance.now()
    const used = process.cpuUsage(cpu)
    phases[phase] = {ms: Math.round(now - at), cpuMs: Math.round((used.user + used.system) / 1000)}
    at = now
    cpu = process.cpuUsage()
    if (done) process.stderr.write(JSON.stringify({historyPhases: phases, ...done}) + '\n')
  }
}

/**
 * This thread's CPU milliseconds (user and system, 10 ms ticks: Linux's /proc; 0 elsewhere), for
 * the marks' figure of the merges run while the readers read.
 */
function threadCpuMs(): number {
  try {
    const stat = readFileSync('/proc/thread-self/stat', 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) * 10
  } catch {
    return 0
  }
}

/** Records a phase's end (`done`: the last one, with figures to print). */
export type PhaseMark = (phase: string, done?: Record<string, number>) => void

/**
 * Reads the files that changed since their cursor (all with `full`). An unchanged file costs one
 * `stat` and nothing else: no sort, no object (a no-change scan of 10 000 files is mostly stats).
 * The changed files of a folder are then read in path order, as a full scan reads them.
 */
async function incrementalScan(
  store: HistoryStore,
  walked: readonly Found[],
  cursors: Cursors,
  options: ScanOptions,
  stats: ScanStats,
): Promise<void> {
  // Small files are written several to a transaction (each with its cursor, so a kill still leaves
  // every file fully applied or untouched); a batch is flushed at BATCH_ROWS rows or BATCH_FILES files.
  let batch: Array<{cursor: FileCursor; records: HistoryRecord[]; reset: boolean}> = []
  let batchRows = 0
  const flush = () => {
    if (batch.length === 0) return
    for (const applied of store.applyFiles(batch)) count(stats, applied)
    batch = []
    batchRows = 0
  }
  for (const found of walked) {
    const changed: Array<{path: string; st: Stats}> = []
    for (const path of found.paths) {
      if (!reads(found, path)) continue
      stats.files++
      let st
      try {
        // Synchronous: an unchanged file costs one stat (and no object of ours).
        st = statSync(path, NO_THROW)
        if (st && found.tool === 'opencode') st = opencodeStat(path, st)
      } catch (error) {
        stats.errors.push({path, error: String((error as NodeJS.ErrnoException).code ?? error)})
        continue
      }
      if (!st) {
        stats.errors.push({path, error: 'ENOENT'})
        continue
      }
      if (options.full || !cursors.unchanged(path, st)) changed.push({path, st})
    }
    changed.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    let readChanged: typeof ReadHistoryFile | undefined
    for (const {path, st} of changed) {
      if (options.signal?.aborted) {
        flush()
        options.signal.throwIfAborted()
      }
      const old = cursors.get(path)
      // the parsers load with the first changed file: a scan with nothing new never needs them
      if (!readChanged) {
        options.beforeRead?.()
        readChanged = (await import('./read.js')).readHistoryFile
      }
      const read = await readChanged(historyFile(found, path), st, old, options.full === true, stats)
      if (!read) continue
      batch.push(read)
      batchRows += read.records.length
      stats.filesRead++
      if (batchRows >= BATCH_ROWS || batch.length >= BATCH_FILES) flush()
      if (options.betweenFiles) await options.betweenFiles()
    }
  }
  flush()
}
