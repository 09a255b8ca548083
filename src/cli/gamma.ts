/**
 * What the `gwctl gamma` commands share: their content and waiting flags, reading content from
 * flags, files and stdin, and the human rendering of tasks and of a wait's progress. The flow
 * (wait, download) is `pollGammaTask` in `services/gamma-tasks.ts`; commands stay thin around these.
 */
import {readFile} from 'node:fs/promises'
import {Flags} from '@oclif/core'

import type {GammaApi, GammaCreated, GammaTask, GammaTaskResponse} from '../api/gamma.js'
import {NotFoundError, UsageError} from '../core/errors.js'
import {readStdin} from './stdin.js'
import {
  StatusLine,
  colorErr,
  err,
  formatBytes,
  formatDuration,
  out,
  printFields,
  savedLine,
} from '../core/output.js'
import type {ContentInput} from '../services/gamma-content.js'
import {contentFromInput, parseContentJson} from '../services/gamma-content.js'
import type {GammaPollResult, GammaResult} from '../services/gamma-tasks.js'
import {gammaFailureReason, pollGammaTask} from '../services/gamma-tasks.js'

const CONTENT_FLAGS = ['text', 'first-frame', 'last-frame', 'image', 'ref-image', 'ref-video', 'ref-audio']

export const contentFlags = {
  text: Flags.string({
    char: 't',
    description: 'The prompt (the one text item); "-" reads it from stdin.',
    helpGroup: 'CONTENT',
  }),
  'first-frame': Flags.string({description: 'Image URL of the first frame.', helpGroup: 'CONTENT'}),
  'last-frame': Flags.string({description: 'Image URL of the last frame.', helpGroup: 'CONTENT'}),
  image: Flags.string({
    description: 'Image URL without role (a first frame); repeatable.',
    multiple: true,
    helpGroup: 'CONTENT',
  }),
  'ref-image': Flags.string({
    description: 'Reference image URL (repeatable).',
    multiple: true,
    helpGroup: 'CONTENT',
  }),
  'ref-video': Flags.string({
    description: 'Reference video URL (repeatable).',
    multiple: true,
    helpGroup: 'CONTENT',
  }),
  'ref-audio': Flags.string({
    description: 'Reference audio URL (repeatable).',
    multiple: true,
    helpGroup: 'CONTENT',
  }),
  content: Flags.string({
    description:
      'A JSON file holding the raw content array (or a request body with "content"); "-" reads stdin.',
    exclusive: CONTENT_FLAGS,
    helpGroup: 'CONTENT',
  }),
}

const seconds = Flags.custom<number>({
  parse: async (input) => {
    const n = Number(input)
    if (!Number.isFinite(n) || n < 0) throw new Error(`Expected a number of seconds, got "${input}".`)
    return n
  },
})

export const waitFlags = {
  wait: Flags.boolean({char: 'w', description: 'Wait until the task is final.'}),
  interval: seconds({description: 'Seconds between polls while waiting.', default: 15}),
  timeout: seconds({
    description: 'Stop waiting after this many seconds (0 = never; the task keeps running).',
    default: 1800,
  }),
}

export const outputFlags = {
  output: Flags.string({char: 'o', description: 'Download the finished video to FILE (implies --wait).'}),
  force: Flags.boolean({description: 'Overwrite the --output file when it exists.'}),
}

/** Reads stdin for the first input that is "-" and refuses a second (stdin is read once). */
function stdinOnce(): (what: string) => Promise<string> {
  let used = false
  return async (what) => {
    if (used) throw new UsageError(`Only one of the inputs can be "-" (stdin); ${what} cannot be the second.`)
    used = true
    return readStdin()
  }
}

export interface ContentFlagValues {
  text?: string
  'first-frame'?: string
  'last-frame'?: string
  image?: string[]
  'ref-image'?: string[]
  'ref-video'?: string[]
  'ref-audio'?: string[]
  content?: string
}

/** The content array from `--content FILE|-` or from the content flags (`--text -` reads stdin). */
export async function readContent(
  flags: ContentFlagValues,
  extra: Partial<ContentInput> = {},
): Promise<unknown> {
  const readStdinOnce = stdinOnce()
  if (flags.content !== undefined) {
    const source = flags.content === '-' ? 'stdin' : flags.content
    let text: string
    try {
      text = flags.content === '-' ? await readStdinOnce('--content') : await readFile(flags.content, 'utf8')
    } catch (error) {
      if (error instanceof UsageError) throw error
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        throw new NotFoundError(`No file ${flags.content} (--content).`, {
          code: 'file_not_found',
          hint: 'Give the path of a JSON content array, or `--content -` to read it from stdin.',
        })
      }
      throw new UsageError(`Cannot read --content ${flags.content}: ${(error as Error).message}`, {
        code: 'invalid_content_file',
      })
    }
    const content = parseContentJson(text, source)
    if (extra.baseVideo === undefined || !Array.isArray(content)) return content
    return [...content, ...contentFromInput({baseVideo: extra.baseVideo})]
  }
  const text = flags.text === '-' ? (await readStdinOnce('--text')).trim() : flags.text
  if (flags.text === '-' && text === '') {
    throw new UsageError(
      'Rule "one-text": --text - read nothing from stdin (did the command before the pipe fail?).',
      {
        code: 'content_rule',
        details: {rule: 'one-text'},
      },
    )
  }
  return contentFromInput({
    text,
    firstFrame: flags['first-frame'],
    lastFrame: flags['last-frame'],
    images: flags.image,
    refImages: flags['ref-image'],
    refVideos: flags['ref-video'],
    refAudios: flags['ref-audio'],
    ...extra,
  })
}

export function isoTime(unixSeconds: number | undefined): string | undefined {
  if (typeof unixSeconds !== 'number') return undefined
  return new Date(unixSeconds * 1000).toISOString().replace('.000Z', 'Z')
}

/** One line of usage, in the units the task type is billed in. */
export function usageLine(task: GammaTask): string | undefined {
  const u = task.usage
  if (!u) return undefined
  if (u.total_tokens !== undefined || u.prompt_tokens !== undefined) {
    return `${u.total_tokens ?? 0} tokens (prompt ${u.prompt_tokens ?? 0}, completion ${u.completion_tokens ?? 0})`
  }
  const parts = [
    `${u.total_seconds ?? 0} s billed (input ${u.input_seconds ?? 0} s, output ${u.output_seconds ?? 0} s)`,
  ]
  if (u.input_image_count !== undefined) parts.push(`${u.input_image_count} image(s)`)
  return parts.join(', ')
}

/** Prints a task as aligned fields. */
export function printTask(response: GammaTaskResponse, verbose: boolean): void {
  const {task} = response
  printFields({
    id: task.id,
    status: task.status,
    type: task.task_type,
    model: task.model,
    modality: task.modality,
    resolution: task.resolution,
    duration: task.duration === undefined ? undefined : `${task.duration} s`,
    ratio: task.ratio,
    created: isoTime(task.created_at),
    updated: isoTime(task.updated_at),
    url: task.content?.url,
    prompt: task.content?.prompt,
    usage: usageLine(task),
    reason: task.status === 'failed' ? gammaFailureReason(task) : undefined,
    platform_id: verbose ? response.platform_id : undefined,
  })
}

/** With --verbose, the platform id of a successful answer goes to stderr. */
export function notePlatformId(verbose: boolean, what: string, platformId: string | undefined): void {
  if (verbose && platformId) err(colorErr().dim(`${what} platform_id: ${platformId}`))
}

/** A dim note on stderr that the command now waits for the task it created. */
export function noteWaiting(id: string): void {
  err(colorErr().dim(`Created task ${id}; waiting.`))
}

/** A created task not waited for: its id, and how to follow it. */
export function printCreated(created: GammaCreated): void {
  printFields({task_id: created.task_id})
  err(colorErr().dim(`Follow it with: gwctl gamma poll ${created.task_id}`))
}

/** The waiting flags as the service takes them. */
export function waitOptions(flags: {interval: number; timeout: number}): {
  intervalMs: number
  timeoutMs: number
} {
  return {intervalMs: Math.max(50, flags.interval * 1000), timeoutMs: flags.timeout * 1000}
}

/**
 * Live line while waiting: `Task ID: status (elapsed)` (a terminal only); with `verbose`, the
 * platform_id of each new status on a line of its own.
 */
export function waitProgress(
  line: StatusLine,
  id: string,
  verbose: boolean,
): (response: GammaTaskResponse, elapsedMs: number) => void {
  let last = ''
  return (response, elapsedMs) => {
    const changed = response.task.status !== last
    last = response.task.status
    if (verbose && changed) {
      line.done()
      notePlatformId(true, `query (${last})`, response.platform_id)
    }
    if (last) line.update(`Task ${id}: ${last} (${formatDuration(elapsedMs)})`)
  }
}

/** Live line while downloading to `dest` (the --output file; a terminal only). */
export function downloadProgress(line: StatusLine, dest = ''): (received: number, total?: number) => void {
  return (received, total) =>
    line.update(
      `Downloading ${dest}: ${formatBytes(received)}${total ? ` of ${formatBytes(total)} (${Math.floor((received / total) * 100)}%)` : ''}`,
    )
}

/** A waited-for task as fields, and the file its video was saved to. */
export function printPolled(result: GammaPollResult, verbose: boolean): void {
  printTask(result, verbose)
  if (result.file) out(savedLine(result.file.path, result.file.bytes))
}

/** What a gamma command passes on for its wait: its signal, --verbose and --json. */
export interface CommandContext {
  signal: AbortSignal
  verbose: boolean
  json: boolean
}

/**
 * Waits for task `id` with a live status line, downloading its video when --output is given, and
 * prints the result for people: the one wait of `generate`, `regenerate` and `poll`.
 */
export async function waitAndPrint(
  api: GammaApi,
  id: string,
  flags: {interval: number; timeout: number; output?: string},
  command: CommandContext,
): Promise<GammaPollResult> {
  const line = new StatusLine()
  const result = await pollGammaTask(api, id, {
    ...waitOptions(flags),
    output: flags.output,
    signal: command.signal,
    onProgress: waitProgress(line, id, command.verbose),
    onDownloadProgress: downloadProgress(line, flags.output),
  }).finally(() => line.done())
  if (!command.json) printPolled(result, command.verbose)
  return result
}

/**
 * After a create: prints the new task's id (and how to follow it), or, with --wait or --output,
 * waits for it as {@link waitAndPrint} does.
 */
export async function finishCreate(
  api: GammaApi,
  created: GammaCreated,
  flags: {wait: boolean; interval: number; timeout: number; output?: string},
  command: CommandContext,
): Promise<GammaResult> {
  if (!command.json) notePlatformId(command.verbose, 'create', created.platform_id)
  if (!flags.wait && flags.output === undefined) {
    if (!command.json) printCreated(created)
    return created
  }
  if (!command.json) noteWaiting(created.task_id)
  return waitAndPrint(api, created.task_id, flags, command)
}
