/**
 * The flow of `gwctl video batch` and `gwctl gamma batch` after flag parsing: read and check the
 * manifest, run it with the live view or plain lines, print the summary, and say which exit code
 * ends it. The families differ only in their parser and engine (services/video-batch.ts).
 */
import {existsSync, readFileSync} from 'node:fs'

import {Args, Flags} from '@oclif/core'

import {ExitCode, InterruptedError, UsageError} from '../core/errors.js'
import type {GwError} from '../core/errors.js'
import {warn} from '../core/output.js'
import type {
  BatchEntry,
  BatchSummary,
  BatchTaskResult,
  BatchTaskView,
  ParsedManifest,
  RunVideoBatchOptions,
} from '../services/video-batch.js'
import {
  DEFAULT_BATCH_CONCURRENCY,
  MAX_BATCH_CONCURRENCY,
  batchJournalPath,
  batchKey,
  manifestError,
} from '../services/video-batch.js'
import {printBatchResult, printBatchSummary} from './video-batch-print.js'
import {readAllStdin} from './stdin.js'

/** The manifest argument of `video batch` and `gamma batch`. */
export const batchArgs = {
  file: Args.string({
    description: 'Manifest: JSON Lines (.jsonl) or CSV with a header row (.csv); - reads stdin.',
    required: true,
  }),
}

/** The flags `video batch` and `gamma batch` share (each adds its own --interval). */
export const batchFlags = {
  concurrency: Flags.integer({
    char: 'c',
    description: `Tasks in flight at once (1-${MAX_BATCH_CONCURRENCY}).`,
    default: DEFAULT_BATCH_CONCURRENCY,
    min: 1,
    max: MAX_BATCH_CONCURRENCY,
  }),
  'output-dir': Flags.string({
    char: 'o',
    description: 'Download each finished video to DIR/<id or line-N>.mp4.',
  }),
  download: Flags.boolean({
    description: 'Download videos (--no-download: wait and report task ids only).',
    allowNo: true,
    default: true,
  }),
  force: Flags.boolean({description: 'Overwrite output files that exist.'}),
  'skip-invalid': Flags.boolean({
    description: 'Run the valid lines and skip the invalid ones (reported on stderr).',
  }),
  resume: Flags.boolean({
    description: 'Require an earlier run of this manifest to resume (running it again resumes anyway).',
  }),
  format: Flags.string({
    description: 'Manifest format (default: from the file name, else from the first line).',
    options: ['jsonl', 'csv'],
  }),
}

export interface BatchFlags {
  concurrency: number
  'output-dir'?: string
  download: boolean
  force: boolean
  'skip-invalid': boolean
  resume: boolean
  format?: string
  interval?: number
}

export interface BatchCommandContext<R> {
  family: 'video' | 'gamma'
  /** Folder of the family's journals under GWCTL_HOME. */
  dir: string
  example: string
  parse: (text: string, options: {name?: string; format?: 'jsonl' | 'csv'}) => ParsedManifest<R>
  run: (entries: readonly BatchEntry<R>[], options: RunVideoBatchOptions) => Promise<BatchSummary>
  signal: AbortSignal
  json: boolean
  /** The live view on a terminal (ui/batch/view.tsx), when drawn. */
  view?: {update: (tasks: readonly BatchTaskView[]) => void; stop: () => void}
  startedAt: number
}

/** Runs a batch command; resolves with the summary and the exit code to end with. */
export async function runBatchCommand<R extends object>(
  file: string,
  flags: BatchFlags,
  ctx: BatchCommandContext<R>,
): Promise<{summary: BatchSummary; exitCode: number}> {
  const {json, view, signal} = ctx
  const args = {file}
  const text =
    args.file === '-' ? await readAllStdin(`${ctx.family} batch -`, signal) : readManifest(args.file)
  const parsed = ctx.parse(text, {
    name: args.file,
    format: flags.format as 'jsonl' | 'csv' | undefined,
  })
  if (parsed.errors.length > 0 && !flags['skip-invalid']) throw manifestError(parsed.errors, ctx.family)
  for (const e of parsed.errors) warn(`skipping line ${e.line}: ${e.message} [${e.code}]`)
  if (parsed.entries.length === 0) {
    throw new UsageError(`The manifest ${args.file} has no tasks to run.`, {
      code: 'empty_manifest',
      hint: `One JSON object per line, e.g. ${ctx.example} (docs/BATCH.md).`,
    })
  }
  if (flags.resume && !existsSync(batchJournalPath(batchKey(parsed.entries), ctx.dir))) {
    throw new UsageError(`There is no earlier run of ${args.file} to resume.`, {
      code: 'nothing_to_resume',
      hint: 'Run it without --resume to start it (the manifest must be the same, line for line).',
    })
  }
  const held: BatchTaskResult[] = []
  const hold = view !== undefined && Boolean(process.stdout.isTTY)
  const closeView = () => {
    view?.stop()
    for (const result of held.splice(0)) printBatchResult(result)
  }
  const resumeCommand = `gwctl ${ctx.family} batch ${args.file === '-' ? '- < MANIFEST' : quote(args.file)}${flags['output-dir'] ? ` --output-dir ${quote(flags['output-dir'])}` : ''}${flags.download ? '' : ' --no-download'}`
  let summary: BatchSummary
  try {
    summary = await ctx.run(parsed.entries, {
      concurrency: flags.concurrency,
      outputDir: flags['output-dir'],
      download: flags.download,
      force: flags.force,
      intervalSeconds: flags.interval,
      signal,
      source: args.file,
      skippedInvalid: parsed.errors.length,
      onChange: view ? (_task, all) => view.update(all) : undefined,
      onResult: (result) => {
        if (json) process.stdout.write(JSON.stringify(result) + '\n')
        else if (hold) held.push(result)
        else printBatchResult(result)
      },
    })
  } catch (error) {
    closeView()
    if (error instanceof InterruptedError || signal.aborted) {
      const summary = (error as GwError).details?.summary as BatchSummary | undefined
      if (json && summary) process.stdout.write(JSON.stringify({...summary, interrupted: true}) + '\n')
      throw new InterruptedError((error as Error).message, {
        hint: `Resume with \`${resumeCommand}\` (finished tasks are skipped, submitted ones polled, none created twice).`,
        details: {resume: resumeCommand},
      })
    }
    throw error
  } finally {
    closeView()
  }
  if (json) process.stdout.write(JSON.stringify(summary) + '\n')
  else printBatchSummary(summary)
  if (summary.failed > 0 || summary.unfinished > 0) {
    if (!json && summary.unfinished > 0)
      warn(`${summary.unfinished} task(s) not finished: \`${resumeCommand}\` picks them up.`)
    return {summary, exitCode: summary.failed > 0 ? ExitCode.taskFailed : ExitCode.upstream}
  }
  return {summary, exitCode: 0}
}

function readManifest(path: string): string {
  try {
    return readFileSync(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new UsageError(`No manifest at ${path}.`, {
        code: 'manifest_missing',
        hint: 'Give the path of a .jsonl or .csv file, or - for stdin.',
      })
    }
    throw error
  }
}

function quote(text: string): string {
  return /^[\w./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`
}
