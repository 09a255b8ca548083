/**
 * `gwctl video batch`: many video tasks from one manifest (JSON Lines or CSV), validated line by
 * line before anything is sent, run with a bound on tasks in flight, journaled so that a rerun
 * resumes. See docs/BATCH.md.
 *
 * The batch journal is `<GWCTL_HOME>/video-batches/<key>.jsonl` (0600, append-only, each line
 * fsynced), `key` being a hash of the manifest's tasks. A task's id is journaled right after the
 * create answer, before anything else happens, so `kill -9` loses no submitted id; a `sending`
 * line written before the create marks a line whose create may or may not have reached the
 * platform, which a rerun never sends again on its own.
 */
import {createHash} from 'node:crypto'
import {setMaxListeners} from 'node:events'
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  statSync,
  writeSync,
} from 'node:fs'
import {join, resolve} from 'node:path'
import {setTimeout as sleep} from 'node:timers/promises'

import type {PlatformClient} from '../api/http.js'
import {platformClient} from '../api/http.js'
import type {VideoTask} from '../api/videos.js'
import {GwError, InterruptedError, UsageError, isAbortError} from '../core/errors.js'
import {closest} from '../core/suggest.js'
import {ensureHome, homeDir} from '../store/paths.js'
import type {VideoRequestOptions} from './video-request.js'
import {buildVideoRequest} from './video-request.js'
import {createVideoTask, downloadTaskVideo, waitForVideoTask} from './video-tasks.js'

/** Tasks in flight unless --concurrency says otherwise. */
export const DEFAULT_BATCH_CONCURRENCY = 4
/** The most --concurrency accepts. */
export const MAX_BATCH_CONCURRENCY = 32
/** How often a rate-limited create is tried again after the HTTP client's own retries. */
const RATE_LIMIT_RETRIES = 6

/** One manifest entry, validated. */
export interface BatchEntry<R = VideoRequestOptions> {
  /** 1-based line of the manifest where the entry starts. */
  line: number
  /** The entry's `id`, else `line-N`: names its output file. */
  name: string
  request: R
  /** Where its video goes, if anywhere. */
  output?: string
}

/** A manifest line that breaks a rule. */
export interface BatchLineError {
  line: number
  code: string
  message: string
}

type FieldKind = 'string' | 'list' | 'bool' | 'json'

/** Manifest fields: the flags of `video create` (kebab, snake or camel case), plus id and output. */
const FIELDS: Record<string, {option?: keyof VideoRequestOptions; kind: FieldKind}> = {
  model: {option: 'model', kind: 'string'},
  prompt: {option: 'prompt', kind: 'string'},
  'img-url': {option: 'imgUrl', kind: 'string'},
  'ref-video': {option: 'refVideos', kind: 'list'},
  seconds: {option: 'seconds', kind: 'string'},
  size: {option: 'size', kind: 'string'},
  'no-prompt-extend': {kind: 'bool'},
  'prompt-extend': {option: 'promptExtend', kind: 'bool'},
  'shot-type': {option: 'shotType', kind: 'string'},
  'audio-url': {option: 'audioUrl', kind: 'string'},
  'callback-url': {option: 'callbackUrl', kind: 'string'},
  'first-frame': {option: 'firstFrame', kind: 'string'},
  'last-frame': {option: 'lastFrame', kind: 'string'},
  'ref-image': {option: 'refImages', kind: 'list'},
  duration: {option: 'duration', kind: 'string'},
  resolution: {option: 'resolution', kind: 'string'},
  audio: {option: 'audio', kind: 'bool'},
  watermark: {option: 'watermark', kind: 'bool'},
  seed: {option: 'seed', kind: 'string'},
  'frames-as': {option: 'framesAs', kind: 'string'},
  param: {option: 'params', kind: 'list'},
  'native-input': {option: 'nativeInput', kind: 'json'},
  'native-parameters': {option: 'nativeParameters', kind: 'json'},
  id: {kind: 'string'},
  output: {kind: 'string'},
}

/** Plural spellings people write in a manifest. */
const ALIASES: Record<string, string> = {
  'ref-videos': 'ref-video',
  'ref-images': 'ref-image',
  params: 'param',
  'reference-images': 'ref-image',
  'reference-video-urls': 'ref-video',
}

export function fieldName(key: string): string {
  const kebab = key
    .trim()
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/_/g, '-')
    .toLowerCase()
  return ALIASES[kebab] ?? kebab
}

export const ID_RULE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/

export class LineError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message)
  }
}

export function toText(value: unknown, key: string): string {
  if (typeof value === 'string') return value
  if (typeof value === 'number' || typeof value === 'boolean') return String(value)
  throw new LineError('bad_field_type', `"${key}" must be a string or a number.`)
}

export function toBool(value: unknown, key: string): boolean | undefined {
  if (typeof value === 'boolean') return value
  const text = String(value).trim().toLowerCase()
  if (text === '') return undefined
  if (['true', 'yes', '1'].includes(text)) return true
  if (['false', 'no', '0'].includes(text)) return false
  throw new LineError('bad_field_type', `"${key}" must be true or false, got "${String(value)}".`)
}

export function toList(value: unknown, key: string): string[] {
  if (Array.isArray(value)) return value.map((v) => toText(v, key))
  if (key === 'param' && value && typeof value === 'object') {
    return Object.entries(value as Record<string, unknown>).map(([k, v]) => `${k}=${JSON.stringify(v)}`)
  }
  // CSV cells hold several values separated by "|"
  return toText(value, key)
    .split('|')
    .map((v) => v.trim())
    .filter(Boolean)
}

/** Turns one manifest record (JSON object or CSV row) into an entry; throws a LineError. */
function entryOf(record: Record<string, unknown>, line: number): BatchEntry {
  const request: Record<string, unknown> = {}
  let id: string | undefined
  let output: string | undefined
  for (const [rawKey, value] of Object.entries(record)) {
    if (value === undefined || value === null || value === '') continue
    const key = fieldName(rawKey)
    const spec = FIELDS[key]
    if (!spec) {
      const near = closest(key, Object.keys(FIELDS))
      throw new LineError(
        'unknown_field',
        `unknown field "${rawKey}"${near ? ` (did you mean "${near}"?)` : ''}; fields are the flags of \`video create\` plus id and output.`,
      )
    }
    if (key === 'id') id = toText(value, key)
    else if (key === 'output') output = toText(value, key)
    else if (key === 'no-prompt-extend') {
      if (toBool(value, key)) request.promptExtend = false
    } else if (spec.kind === 'bool') {
      const b = toBool(value, key)
      if (b !== undefined) request[spec.option as string] = b
    } else if (spec.kind === 'list') request[spec.option as string] = toList(value, key)
    else if (spec.kind === 'json')
      request[spec.option as string] = typeof value === 'string' ? value : JSON.stringify(value)
    else request[spec.option as string] = toText(value, key)
  }
  if (id !== undefined && !ID_RULE.test(id)) {
    throw new LineError(
      'bad_id',
      `id "${id}" must be 1-64 letters, digits, ".", "_" or "-" (it names the output file).`,
    )
  }
  if (typeof request.model !== 'string' || !request.model.trim()) {
    throw new LineError('missing_field', 'model is required (see `gwctl video models`).')
  }
  if (request.framesAs !== undefined && !['fields', 'reference-images'].includes(String(request.framesAs))) {
    throw new LineError(
      'bad_field_value',
      `frames-as must be fields or reference-images, got "${request.framesAs}".`,
    )
  }
  if (request.shotType !== undefined && !['single', 'multi'].includes(String(request.shotType))) {
    throw new LineError('bad_field_value', `shot-type must be single or multi, got "${request.shotType}".`)
  }
  return {line, name: id ?? `line-${line}`, request: request as unknown as VideoRequestOptions, output}
}

/** A minimal RFC 4180 reader: quoted fields may hold commas, quotes ("") and newlines. */
function parseCsv(text: string): Array<{line: number; cells: string[]}> {
  const rows: Array<{line: number; cells: string[]}> = []
  let cells: string[] = []
  let cell = ''
  let quoted = false
  let line = 1
  let rowLine = 1
  let any = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"'
        i++
      } else if (c === '"') quoted = false
      else {
        if (c === '\n') line++
        cell += c
      }
      continue
    }
    if (c === '"' && cell === '') {
      quoted = true
      any = true
    } else if (c === ',') {
      cells.push(cell)
      cell = ''
      any = true
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++
      cells.push(cell)
      if (any || cell !== '') rows.push({line: rowLine, cells})
      cells = []
      cell = ''
      any = false
      line++
      rowLine = line
    } else {
      cell += c
      any = true
    }
  }
  if (quoted)
    throw new UsageError(`Manifest line ${rowLine}: a quoted CSV field is never closed.`, {
      code: 'bad_manifest',
    })
  if (any || cell !== '') {
    cells.push(cell)
    rows.push({line: rowLine, cells})
  }
  return rows
}

export interface ParsedManifest<R = VideoRequestOptions> {
  entries: BatchEntry<R>[]
  errors: BatchLineError[]
  format: 'jsonl' | 'csv'
}

/**
 * Parses a manifest and checks every entry with the same local rules as `video create`. Nothing
 * is sent. `format` defaults to CSV for a `.csv` name, else to what the first line looks like.
 */
export function parseVideoManifest(
  text: string,
  options: {name?: string; format?: 'jsonl' | 'csv'} = {},
): ParsedManifest {
  return parseManifest(text, options, (record, line) => {
    const entry = entryOf(record, line)
    buildVideoRequest(entry.request)
    return entry
  })
}

/**
 * Reads a manifest of any family: `toEntry` turns one record into a checked entry or throws
 * (a LineError or GwError whose code is the rule).
 */
export function parseManifest<R>(
  text: string,
  options: {name?: string; format?: 'jsonl' | 'csv'},
  toEntry: (record: Record<string, unknown>, line: number) => BatchEntry<R>,
): ParsedManifest<R> {
  const body = text.replace(/^\uFEFF/, '')
  const first =
    body.split('\n').find((l) => l.trim() && !l.trim().startsWith('#') && !l.trim().startsWith('//')) ?? ''
  const format =
    options.format ??
    (options.name?.toLowerCase().endsWith('.csv') || !first.trim().startsWith('{') ? 'csv' : 'jsonl')
  const records: Array<{line: number; record?: Record<string, unknown>; error?: LineError}> = []
  if (format === 'jsonl') {
    body.split('\n').forEach((raw, i) => {
      const l = raw.trim()
      if (!l || l.startsWith('#') || l.startsWith('//')) return
      try {
        const value = JSON.parse(l) as unknown
        if (!value || typeof value !== 'object' || Array.isArray(value)) {
          records.push({
            line: i + 1,
            error: new LineError('not_an_object', 'each line must be one JSON object.'),
          })
        } else records.push({line: i + 1, record: value as Record<string, unknown>})
      } catch (error) {
        records.push({
          line: i + 1,
          error: new LineError('bad_json', `not JSON: ${(error as Error).message}.`),
        })
      }
    })
  } else {
    const rows = parseCsv(body)
    if (rows.length === 0) return {entries: [], errors: [], format}
    const header = rows[0].cells.map((h) => h.trim())
    for (const row of rows.slice(1)) {
      if (row.cells.length !== header.length) {
        records.push({
          line: row.line,
          error: new LineError(
            'bad_csv_row',
            `has ${row.cells.length} cells, the header has ${header.length}.`,
          ),
        })
        continue
      }
      records.push({line: row.line, record: Object.fromEntries(header.map((h, i) => [h, row.cells[i]]))})
    }
  }
  const entries: BatchEntry<R>[] = []
  const errors: BatchLineError[] = []
  const names = new Map<string, number>()
  for (const {line, record, error} of records) {
    try {
      if (error) throw error
      const entry = toEntry(record!, line)
      const seen = names.get(entry.name)
      if (seen !== undefined)
        throw new LineError('duplicate_id', `id "${entry.name}" is also used on line ${seen}.`)
      names.set(entry.name, line)
      entries.push(entry)
    } catch (e) {
      const code = e instanceof LineError || e instanceof GwError ? e.code : 'invalid'
      errors.push({line, code, message: (e as Error).message})
    }
  }
  return {entries, errors, format}
}

// ---------------------------------------------------------------------------------------------
// The batch journal

export type BatchJournalEvent =
  | {type: 'batch'; key: string; source: string; count: number; at: string}
  | {type: 'sending'; line: number; at: string}
  | {type: 'submitted'; line: number; task_id: string; provider?: string; at: string}
  | {type: 'refused'; line: number; code: string; error: string; at: string}
  | {
      type: 'ended'
      line: number
      task_id: string
      status: string
      error?: string
      output?: string
      bytes?: number
      at: string
    }

/** What the journal knows of one line. */
export interface JournaledLine {
  state: 'sending' | 'submitted' | 'refused' | 'ended'
  task_id?: string
  provider?: string
  status?: string
  error?: string
  output?: string
  bytes?: number
}

/** The object with its keys in order (so field order in the manifest does not change the key). */
function sorted(value: object): Array<[string, unknown]> {
  return Object.entries(value)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => a.localeCompare(b))
}

/** The key of a manifest: a hash of its entries by line (spacing and field order do not matter). */
export function batchKey(entries: readonly BatchEntry<object>[]): string {
  const hash = createHash('sha256')
  for (const e of entries)
    hash.update(JSON.stringify([e.line, e.name, sorted(e.request), e.output ?? null]) + '\n')
  return hash.digest('hex').slice(0, 16)
}

export function batchDir(dir = 'video-batches'): string {
  return join(homeDir(), dir)
}

export function batchJournalPath(key: string, dir = 'video-batches'): string {
  return join(batchDir(dir), `${key}.jsonl`)
}

/** Appends one event and fsyncs it before returning. */
export function appendBatchEvent(path: string, event: BatchJournalEvent): void {
  const fd = openSync(path, 'a', 0o600)
  try {
    // after a torn last line (crash mid-write), start on a fresh one
    const size = statSync(path).size
    let prefix = ''
    if (size > 0) {
      const last = readFileSync(path).subarray(size - 1)
      if (last[0] !== 0x0a) prefix = '\n'
    }
    writeSync(fd, prefix + JSON.stringify(event) + '\n')
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

/** Folds a batch journal into what is known of each line; torn lines are skipped. */
export function readBatchJournal(path: string): Map<number, JournaledLine> {
  const lines = new Map<number, JournaledLine>()
  if (!existsSync(path)) return lines
  for (const raw of readFileSync(path, 'utf8').split('\n')) {
    if (!raw.trim()) continue
    let event: BatchJournalEvent
    try {
      event = JSON.parse(raw) as BatchJournalEvent
    } catch {
      continue
    }
    if (!event || typeof event !== 'object' || event.type === 'batch' || typeof event.line !== 'number')
      continue
    const known = lines.get(event.line)
    if (event.type === 'sending') {
      if (!known || known.state === 'refused') lines.set(event.line, {state: 'sending'})
    } else if (event.type === 'submitted') {
      lines.set(event.line, {state: 'submitted', task_id: event.task_id, provider: event.provider})
    } else if (event.type === 'refused') {
      if (!known || known.state === 'sending') lines.set(event.line, {state: 'refused', error: event.error})
    } else if (event.type === 'ended') {
      lines.set(event.line, {
        state: 'ended',
        task_id: event.task_id,
        provider: known?.provider,
        status: event.status,
        error: event.error,
        output: event.output,
        bytes: event.bytes,
      })
    }
  }
  return lines
}

// ---------------------------------------------------------------------------------------------
// Running a batch

/** The state of one task as the run sees it (what a view shows). */
export type BatchTaskState =
  | 'pending'
  | 'sending'
  | 'queued'
  | 'in_progress'
  | 'downloading'
  | 'completed'
  | 'failed'
  | 'refused'
  | 'uncertain'
  | 'interrupted'

export interface BatchTaskView {
  line: number
  name: string
  state: BatchTaskState
  task_id?: string
  /** When this run started working on it. */
  started_at?: number
  ended_at?: number
  output?: string
  bytes?: number
  error?: string
  /** True when a previous run had already finished it. */
  resumed?: boolean
}

/** One finished task, as `--json` prints it. */
export interface BatchTaskResult {
  line: number
  id: string
  task_id?: string
  status: 'completed' | 'failed' | 'refused' | 'uncertain'
  output?: string
  bytes?: number
  error?: string
  /** Finished by an earlier run of the same manifest. */
  earlier?: boolean
}

export interface BatchSummary {
  batch: string
  journal: string
  total: number
  completed: number
  failed: number
  /** Not finished because the run was interrupted or lost the platform. */
  unfinished: number
  /** Creates sent by this run. */
  submitted: number
  skipped_invalid: number
  elapsed_seconds: number
  failures: Array<{line: number; id: string; task_id?: string; status: string; error?: string}>
}

export interface RunVideoBatchOptions {
  concurrency?: number
  outputDir?: string
  download?: boolean
  force?: boolean
  intervalSeconds?: number
  signal?: AbortSignal
  client?: PlatformClient
  /** Where the manifest came from, for the journal ("-" for stdin). */
  source?: string
  /** Lines refused by validation and skipped (--skip-invalid), for the summary. */
  skippedInvalid?: number
  /** Any task changed state (drive a view). */
  onChange?: (task: BatchTaskView, all: readonly BatchTaskView[]) => void
  /** A task ended (completed, failed, refused). */
  onResult?: (result: BatchTaskResult) => void
}

/** Resolves each entry's output file and refuses clashes and existing files before anything is sent. */
export function planOutputs(
  entries: readonly BatchEntry<unknown>[],
  options: {outputDir?: string; download?: boolean; force?: boolean; done?: ReadonlySet<number>},
): {outputs: Map<number, string>; errors: BatchLineError[]} {
  const outputs = new Map<number, string>()
  const errors: BatchLineError[] = []
  if (options.download === false) return {outputs, errors}
  if (options.outputDir !== undefined) {
    const dir = resolve(options.outputDir)
    if (existsSync(dir) && !statSync(dir).isDirectory()) {
      throw new UsageError(`--output-dir ${options.outputDir} is a file, not a folder.`, {
        code: 'output_dir_is_file',
      })
    }
  }
  const seen = new Map<string, number>()
  for (const e of entries) {
    let path: string | undefined
    if (e.output !== undefined)
      path = options.outputDir ? resolve(options.outputDir, e.output) : resolve(e.output)
    else if (options.outputDir !== undefined) path = resolve(options.outputDir, `${e.name}.mp4`)
    if (!path) continue
    const other = seen.get(path)
    if (other !== undefined) {
      errors.push({
        line: e.line,
        code: 'duplicate_output',
        message: `output ${path} is also the output of line ${other}.`,
      })
      continue
    }
    seen.set(path, e.line)
    if (!options.done?.has(e.line) && !options.force && existsSync(path)) {
      errors.push({
        line: e.line,
        code: 'file_exists',
        message: `${path} exists; gwctl does not overwrite files unless told to (--force).`,
      })
      continue
    }
    outputs.set(e.line, path)
  }
  return {outputs, errors}
}

/** Finds the journal of the newest unfinished batch (for `--resume` without a file). */
export function latestBatchJournal(): string | undefined {
  const dir = batchDir()
  if (!existsSync(dir)) return undefined
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.jsonl'))
    .map((f) => ({path: join(dir, f), mtime: statSync(join(dir, f)).mtimeMs}))
    .sort((a, b) => b.mtime - a.mtime)
  return files[0]?.path
}

/**
 * True when the platform answered in a way that says it did not create the task: a 4xx (429
 * included) or a 503, as the HTTP client's POST retry rules read them, or a local refusal (exit 2).
 */
function notCreated(error: GwError | undefined): boolean {
  if (!error) return false
  if (error.exitCode === 2) return true
  const status = Number(error.details?.status)
  return (status >= 400 && status < 500) || status === 503
}

function retryAfterMs(error: GwError): number {
  const s = Number(error.details?.retry_after_seconds)
  return Number.isFinite(s) && s > 0 ? s * 1000 : 2000
}

/** How one family creates, waits for and downloads a task: what the batch run needs of it. */
export interface BatchEngine<R, T> {
  /** Folder of its journals under GWCTL_HOME. */
  dir: string
  create: (request: R, client: PlatformClient) => Promise<{id: string; provider?: string}>
  wait: (
    id: string,
    options: {
      client: PlatformClient
      provider?: string
      signal?: AbortSignal
      intervalSeconds?: number
      onStatus: (status: string) => void
    },
  ) => Promise<T>
  download: (
    task: T,
    path: string,
    options: {client: PlatformClient; signal?: AbortSignal},
  ) => Promise<{path: string; bytes: number}>
}

/** The video family: `video create` (journaled in video-tasks.jsonl too), `video poll`, `video download`. */
export const VIDEO_BATCH_ENGINE: BatchEngine<VideoRequestOptions, VideoTask> = {
  dir: 'video-batches',
  create: async (request, client) => {
    const created = await createVideoTask(request, {client})
    return {id: created.submission.id, provider: created.submission.provider}
  },
  wait: (id, o) =>
    waitForVideoTask(id, {
      client: o.client,
      provider: o.provider,
      signal: o.signal,
      intervalSeconds: o.intervalSeconds,
      onProgress: (t) => o.onStatus(t.status),
    }),
  download: (task, path, o) =>
    downloadTaskVideo(task, path, {client: o.client, force: true, signal: o.signal}),
}

/** {@link runBatch} with the video family. */
export function runVideoBatch(
  entries: readonly BatchEntry[],
  options: RunVideoBatchOptions = {},
): Promise<BatchSummary> {
  return runBatch(entries, VIDEO_BATCH_ENGINE, options)
}

/**
 * Runs the entries: at most `concurrency` tasks in flight, each created once (journaled right
 * after the answer), waited for and downloaded. Ctrl-C (the signal) stops new creates and the
 * waits; creates already on the wire finish and are journaled. Resolves with the summary; throws
 * an InterruptedError (with the resume hint in its details) when interrupted.
 */
export async function runBatch<R extends object, T>(
  entries: readonly BatchEntry<R>[],
  engine: BatchEngine<R, T>,
  options: RunVideoBatchOptions = {},
): Promise<BatchSummary> {
  const started = Date.now()
  const concurrency = Math.max(
    1,
    Math.min(MAX_BATCH_CONCURRENCY, options.concurrency ?? DEFAULT_BATCH_CONCURRENCY),
  )
  ensureHome()
  mkdirSync(batchDir(engine.dir), {recursive: true, mode: 0o700})
  const key = batchKey(entries)
  const path = batchJournalPath(key, engine.dir)
  const known = readBatchJournal(path)
  if (!existsSync(path)) {
    appendBatchEvent(path, {
      type: 'batch',
      key,
      source: options.source ?? '-',
      count: entries.length,
      at: new Date().toISOString(),
    })
  }
  const done = new Set([...known].filter(([, k]) => k.state === 'ended').map(([line]) => line))
  const {outputs, errors} = planOutputs(entries, {...options, done})
  if (errors.length > 0) throw manifestError(errors)
  if (options.outputDir !== undefined && outputs.size > 0)
    mkdirSync(resolve(options.outputDir), {recursive: true})
  const client = options.client ?? platformClient()
  const signal = options.signal
  // every task in flight waits on the one signal
  if (signal) setMaxListeners(concurrency * 4 + 10, signal)

  const views: BatchTaskView[] = entries.map((e) => ({line: e.line, name: e.name, state: 'pending'}))
  const results: BatchTaskResult[] = []
  let submitted = 0
  let pausedUntil = 0
  const change = (view: BatchTaskView, patch: Partial<BatchTaskView>): void => {
    Object.assign(view, patch)
    options.onChange?.(view, views)
  }
  const finish = (view: BatchTaskView, result: BatchTaskResult): void => {
    results.push(result)
    options.onResult?.(result)
  }

  const runOne = async (entry: BatchEntry<R>, view: BatchTaskView): Promise<void> => {
    const before = known.get(entry.line)
    const output = outputs.get(entry.line)
    if (before?.state === 'ended') {
      const ok = before.status === 'completed'
      change(view, {
        state: ok ? 'completed' : 'failed',
        task_id: before.task_id,
        output: before.output,
        bytes: before.bytes,
        error: before.error,
        resumed: true,
      })
      finish(view, {
        line: entry.line,
        id: entry.name,
        task_id: before.task_id,
        status: ok ? 'completed' : 'failed',
        ...(before.output ? {output: before.output, bytes: before.bytes} : {}),
        ...(before.error ? {error: before.error} : {}),
        earlier: true,
      })
      return
    }
    if (before?.state === 'sending') {
      const error =
        'an earlier run was stopped while its create was on the wire: it may exist on the platform, so gwctl does not send it again (see `gwctl video list`; remove the line or give it a new id to send it anyway).'
      change(view, {state: 'uncertain', error})
      finish(view, {line: entry.line, id: entry.name, status: 'uncertain', error})
      return
    }
    view.started_at = Date.now()
    let taskId = before?.state === 'submitted' ? before.task_id : undefined
    let provider = before?.provider
    if (!taskId) {
      change(view, {state: 'sending'})
      for (let attempt = 0; ; attempt++) {
        const wait = pausedUntil - Date.now()
        if (wait > 0) await sleep(wait, undefined, {signal}).catch(() => undefined)
        // Ctrl-C during a pause: this line was never sent, a rerun sends it
        if (signal?.aborted) {
          change(view, {state: 'interrupted'})
          return
        }
        appendBatchEvent(path, {type: 'sending', line: entry.line, at: new Date().toISOString()})
        try {
          // No signal: a create on the wire finishes and is journaled even after Ctrl-C.
          const created = await engine.create(entry.request, client)
          taskId = created.id
          provider = created.provider
          appendBatchEvent(path, {
            type: 'submitted',
            line: entry.line,
            task_id: taskId,
            provider,
            at: new Date().toISOString(),
          })
          submitted++
          break
        } catch (error) {
          const gw = error instanceof GwError ? error : undefined
          const message = (error as Error).message
          if (!notCreated(gw)) {
            // No answer, or a 5xx that a proxy may have sent after forwarding: the task may exist.
            // The `sending` line stays, so no later run sends it again on its own.
            const reason = `the create got no clear answer (${message}); it may exist on the platform, so it is not sent again: check \`gwctl video list\`.`
            change(view, {state: 'uncertain', error: reason, ended_at: Date.now()})
            finish(view, {line: entry.line, id: entry.name, status: 'uncertain', error: reason})
            return
          }
          appendBatchEvent(path, {
            type: 'refused',
            line: entry.line,
            code: gw?.code ?? 'unexpected',
            error: message,
            at: new Date().toISOString(),
          })
          // A 429 means the create was not acted on: wait (all workers) and send it again.
          if (gw?.code === 'rate_limited' && attempt < RATE_LIMIT_RETRIES && !signal?.aborted) {
            pausedUntil = Math.max(pausedUntil, Date.now() + retryAfterMs(gw))
            continue
          }
          // Refused by the platform: nothing was created, a rerun sends it again.
          change(view, {state: 'refused', error: message, ended_at: Date.now()})
          finish(view, {line: entry.line, id: entry.name, status: 'refused', error: message})
          return
        }
      }
    }
    change(view, {state: 'queued', task_id: taskId})
    let task: T
    try {
      task = await engine.wait(taskId, {
        client,
        provider,
        signal,
        intervalSeconds: options.intervalSeconds,
        onStatus: (status) => {
          const state =
            status === 'in_progress' || status === 'running'
              ? 'in_progress'
              : status === 'queued'
                ? 'queued'
                : view.state
          if (state !== view.state) change(view, {state})
        },
      })
    } catch (error) {
      if (error instanceof InterruptedError || isAbortError(error) || signal?.aborted) {
        change(view, {state: 'interrupted'})
        return
      }
      const gw = error instanceof GwError ? error : undefined
      if (gw && (gw.exitCode === 8 || gw.exitCode === 7)) {
        const message = gw.message
        const status = gw.code === 'task_expired' ? 'expired' : 'failed'
        appendBatchEvent(path, {
          type: 'ended',
          line: entry.line,
          task_id: taskId,
          status,
          error: message,
          at: new Date().toISOString(),
        })
        change(view, {state: 'failed', error: message, ended_at: Date.now()})
        finish(view, {line: entry.line, id: entry.name, task_id: taskId, status: 'failed', error: message})
        return
      }
      // lost the platform while waiting: the task keeps running, a rerun polls it again
      change(view, {state: 'interrupted', error: (error as Error).message})
      return
    }
    let download: {path: string; bytes: number} | undefined
    if (output) {
      change(view, {state: 'downloading'})
      try {
        download = await engine.download(task, output, {client, signal})
      } catch (error) {
        change(view, {state: 'interrupted', error: (error as Error).message})
        return
      }
    }
    appendBatchEvent(path, {
      type: 'ended',
      line: entry.line,
      task_id: taskId,
      status: 'completed',
      ...(download ? {output: download.path, bytes: download.bytes} : {}),
      at: new Date().toISOString(),
    })
    change(view, {state: 'completed', ended_at: Date.now(), output: download?.path, bytes: download?.bytes})
    finish(view, {
      line: entry.line,
      id: entry.name,
      task_id: taskId,
      status: 'completed',
      ...(download ? {output: download.path, bytes: download.bytes} : {}),
    })
  }

  let next = 0
  const worker = async (): Promise<void> => {
    while (!signal?.aborted && next < entries.length) {
      const i = next++
      await runOne(entries[i], views[i])
    }
  }
  await Promise.all(Array.from({length: Math.min(concurrency, entries.length)}, worker))

  const failed = results.filter((r) => r.status !== 'completed')
  const summary: BatchSummary = {
    batch: key,
    journal: path,
    total: entries.length,
    completed: results.length - failed.length,
    failed: failed.length,
    unfinished: entries.length - results.length,
    submitted,
    skipped_invalid: options.skippedInvalid ?? 0,
    elapsed_seconds: Math.round((Date.now() - started) / 100) / 10,
    failures: failed.map((r) => ({
      line: r.line,
      id: r.id,
      task_id: r.task_id,
      status: r.status,
      error: r.error,
    })),
  }
  if (signal?.aborted) {
    throw new InterruptedError(
      `Batch stopped: ${summary.completed} of ${summary.total} done, ${summary.unfinished} not finished; submitted tasks keep running.`,
      {details: {summary}},
    )
  }
  return summary
}

/** The usage error for manifest lines that break a rule (exit 2). */
export function manifestError(
  errors: readonly BatchLineError[],
  family: 'video' | 'gamma' = 'video',
): UsageError {
  const shown = errors.slice(0, 20).map((e) => `  line ${e.line}: ${e.message} [${e.code}]`)
  if (errors.length > 20) shown.push(`  ... and ${errors.length - 20} more`)
  return new UsageError(
    `The manifest has ${errors.length} invalid line${errors.length === 1 ? '' : 's'}; nothing was sent.\n${shown.join('\n')}`,
    {
      code: 'invalid_manifest',
      hint: `Fix the lines (their fields are the flags of \`gwctl ${family === 'video' ? 'video create' : 'gamma generate'}\`), or add --skip-invalid to run the valid ones.`,
      details: {errors},
    },
  )
}
