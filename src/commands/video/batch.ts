import {Flags} from '@oclif/core'

import {BaseCommand} from '../../core/base-command.js'
import {progressEnabled} from '../../core/output.js'
import type {BatchSummary} from '../../services/video-batch.js'
import {VIDEO_BATCH_ENGINE, parseVideoManifest, runVideoBatch} from '../../services/video-batch.js'
import {batchArgs, batchFlags, runBatchCommand} from '../../cli/batch-run.js'

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

  static args = batchArgs

  static flags = {
    ...batchFlags,
    interval: Flags.integer({
      description: 'Seconds between polls of each task (default: setting video.interval, else 15).',
      min: 1,
      env: 'GWCTL_VIDEO_INTERVAL',
    }),
  }

  async run(): Promise<BatchSummary> {
    const {args, flags} = await this.parse(VideoBatch)
    const json = this.jsonEnabled()
    const startedAt = Date.now()
    // a terminal gets the live view on stderr; the per-task lines then wait for it to close
    const view =
      !json && progressEnabled()
        ? (await import('../../ui/batch/view.js')).startBatchView(startedAt)
        : undefined
    const {summary, exitCode} = await runBatchCommand(args.file, flags, {
      family: 'video',
      dir: VIDEO_BATCH_ENGINE.dir,
      example: '{"model":"Alpha2.6-T2V","prompt":"a fox","seconds":3}',
      parse: parseVideoManifest,
      run: runVideoBatch,
      signal: this.signal,
      json,
      view,
      startedAt,
    })
    if (exitCode !== 0) this.exit(exitCode)
    return summary
  }

  /** The summary is already printed, one line, as the last line of the stream. */
  protected logJson(): void {}
}
