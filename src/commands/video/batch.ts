import {readFileSync} from 'node:fs'

import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../../core/base-command.js'
import type {GwError} from '../../core/errors.js'
import {ExitCode, InterruptedError, UsageError} from '../../core/errors.js'
import {progressEnabled, warn} from '../../core/output.js'
import type {BatchSummary, BatchTaskResult} from '../../services/video-batch.js'
import {
  DEFAULT_BATCH_CONCURRENCY,
  MAX_BATCH_CONCURRENCY,
  batchJournalPath,
  batchKey,
  manifestError,
  parseVideoManifest,
  runVideoBatch,
} from '../../services/video-batch.js'
import {existsSync} from 'node:fs'
import {printBatchResult, printBatchSummary} from '../../cli/video-batch-print.js'
import {readAllStdin} from '../../cli/stdin.js'

export default class VideoBatch extends BaseCommand {
  static summary =
    'Runs many video tasks from a manifest (JSON Lines or CSV), with a concurrency limit and resume.'
  static description =
    'Every line is checked with the rules of `video create` before anything is sent; a bad line is reported with its ' +
    'line number and nothing is sent (unless --skip-invalid). At most --concurrency tasks are in flight; a rate limit ' +
    '(429) pauses the creates and a create is never sent twice. The run is journaled in GWCTL_HOME: running the same ' +
    'manifest again skips what finished, polls what was submitted and creates only what never was. Ctrl-C stops ' +
    'creating (tasks keep running) and exits 130. Exit 0 when every task completed, 8 when any failed, 2 for manifest ' +
    'errors. Format and fields: docs/BATCH.md.'

  static examples = [
    '<%= config.bin %> video batch clips.jsonl --output-dir out/ --concurrency 8',
    '<%= config.bin %> video batch products.csv --no-download --json',
    'cat clips.jsonl | <%= config.bin %> video batch - --output-dir out/',
  ]

  static args = {
    file: Args.string({
      description: 'Manifest: JSON Lines (.jsonl) or CSV with a header row (.csv); - reads stdin.',
      required: true,
    }),
  }

  static flags = {
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
    interval: Flags.integer({
      description: 'Seconds between polls of each task (default: setting video.interval, else 15).',
      min: 1,
      env: 'GWCTL_VIDEO_INTERVAL',
    }),
  }

  async run(): Promise<BatchSummary> {
    const {args, flags} = await this.parse(VideoBatch)
    const text =
      args.file === '-' ? await readAllStdin('video batch -', this.signal) : readManifest(args.file)
    const parsed = parseVideoManifest(text, {
      name: args.file,
      format: flags.format as 'jsonl' | 'csv' | undefined,
    })
    if (parsed.errors.length > 0 && !flags['skip-invalid']) throw manifestError(parsed.errors)
    for (const e of parsed.errors) warn(`skipping line ${e.line}: ${e.message} [${e.code}]`)
    if (parsed.entries.length === 0) {
      throw new UsageError(`The manifest ${args.file} has no tasks to run.`, {
        code: 'empty_manifest',
        hint: 'One JSON object per line, e.g. {"model":"Alpha2.6-T2V","prompt":"a fox","seconds":3} (docs/BATCH.md).',
      })
    }
    if (flags.resume && !existsSync(batchJournalPath(batchKey(parsed.entries)))) {
      throw new UsageError(`There is no earlier run of ${args.file} to resume.`, {
        code: 'nothing_to_resume',
        hint: 'Run it without --resume to start it (the manifest must be the same, line for line).',
      })
    }
    const json = this.jsonEnabled()
    const started = Date.now()
    // a terminal gets the live view on stderr; the per-task lines then wait for it to close
    const view =
      !json && progressEnabled()
        ? (await import('../../ui/batch/view.js')).startBatchView(started)
        : undefined
    const held: BatchTaskResult[] = []
    const hold = view !== undefined && Boolean(process.stdout.isTTY)
    const closeView = () => {
      view?.stop()
      for (const result of held.splice(0)) printBatchResult(result)
    }
    const resumeCommand = `gwctl video batch ${args.file === '-' ? '- < MANIFEST' : quote(args.file)}${flags['output-dir'] ? ` --output-dir ${quote(flags['output-dir'])}` : ''}${flags.download ? '' : ' --no-download'}`
    let summary: BatchSummary
    try {
      summary = await runVideoBatch(parsed.entries, {
        concurrency: flags.concurrency,
        outputDir: flags['output-dir'],
        download: flags.download,
        force: flags.force,
        intervalSeconds: flags.interval,
        signal: this.signal,
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
      if (error instanceof InterruptedError || this.signal.aborted) {
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
      this.exit(summary.failed > 0 ? ExitCode.taskFailed : ExitCode.upstream)
    }
    return summary
  }

  /** The summary is already printed, one line, as the last line of the stream. */
  protected logJson(): void {}
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
