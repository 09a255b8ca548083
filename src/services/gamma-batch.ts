/**
 * `gwctl gamma batch`: the video batch engine (services/video-batch.ts) with Gamma-H3 generation
 * tasks. The manifest's fields are the flags of `gamma generate`; journals live in
 * `<GWCTL_HOME>/gamma-batches/`. See docs/BATCH.md.
 */
import type {GammaGenerationRequest, GammaTaskResponse} from '../api/gamma.js'
import {closest} from '../core/suggest.js'
import type {ContentInput} from './gamma-content.js'
import {buildGenerationRequest, contentFromInput} from './gamma-content.js'
import {createGammaTask, downloadGammaVideo, gammaApi, waitForGammaTask} from './gamma-tasks.js'
import {DEFAULT_INTERVAL_SECONDS} from './video-tasks.js'
import type {
  BatchEngine,
  BatchEntry,
  ParsedManifest,
  RunVideoBatchOptions,
  BatchSummary,
} from './video-batch.js'
import {
  ID_RULE,
  LineError,
  fieldName,
  parseManifest,
  runBatch,
  toBool,
  toList,
  toText,
} from './video-batch.js'

const LISTS: Record<string, keyof ContentInput> = {
  image: 'images',
  images: 'images',
  'ref-image': 'refImages',
  'ref-images': 'refImages',
  'ref-video': 'refVideos',
  'ref-videos': 'refVideos',
  'ref-audio': 'refAudios',
  'ref-audios': 'refAudios',
}
const KNOWN = [
  'text',
  'prompt',
  'first-frame',
  'last-frame',
  ...Object.keys(LISTS),
  'content',
  'resolution',
  'duration',
  'ratio',
  'watermark',
  'callback-url',
  'id',
  'output',
]

function gammaEntry(record: Record<string, unknown>, line: number): BatchEntry<GammaGenerationRequest> {
  const input: ContentInput & Record<string, unknown> = {}
  let content: unknown
  const rest: {
    resolution?: string
    duration?: string
    ratio?: string
    watermark?: boolean
    callbackUrl?: string
  } = {}
  let id: string | undefined
  let output: string | undefined
  for (const [rawKey, value] of Object.entries(record)) {
    if (value === undefined || value === null || value === '') continue
    const key = fieldName(rawKey)
    if (key === 'text' || key === 'prompt') input.text = toText(value, key)
    else if (key === 'first-frame') input.firstFrame = toText(value, key)
    else if (key === 'last-frame') input.lastFrame = toText(value, key)
    else if (LISTS[key]) (input as Record<string, unknown>)[LISTS[key]] = toList(value, key)
    else if (key === 'content') {
      try {
        content = typeof value === 'string' ? JSON.parse(value) : value
      } catch (error) {
        throw new LineError('bad_json', `content is not JSON: ${(error as Error).message}.`)
      }
    } else if (key === 'resolution') rest.resolution = toText(value, key)
    else if (key === 'duration') rest.duration = toText(value, key)
    else if (key === 'ratio') rest.ratio = toText(value, key)
    else if (key === 'watermark') rest.watermark = toBool(value, key)
    else if (key === 'callback-url') rest.callbackUrl = toText(value, key)
    else if (key === 'id') id = toText(value, key)
    else if (key === 'output') output = toText(value, key)
    else {
      const near = closest(key, KNOWN)
      throw new LineError(
        'unknown_field',
        `unknown field "${rawKey}"${near ? ` (did you mean "${near}"?)` : ''}; fields are the flags of \`gamma generate\` plus id and output.`,
      )
    }
  }
  if (id !== undefined && !ID_RULE.test(id)) {
    throw new LineError(
      'bad_id',
      `id "${id}" must be 1-64 letters, digits, ".", "_" or "-" (it names the output file).`,
    )
  }
  if (content !== undefined && Object.keys(input).length > 0) {
    throw new LineError(
      'content_and_fields',
      'give either content (the JSON array) or text/frames/references, not both.',
    )
  }
  const request = buildGenerationRequest({content: content ?? contentFromInput(input), ...rest})
  return {line, name: id ?? `line-${line}`, request, output}
}

/** Parses a gamma manifest, checking each line with the rules of `gamma generate`. Nothing is sent. */
export function parseGammaManifest(
  text: string,
  options: {name?: string; format?: 'jsonl' | 'csv'} = {},
): ParsedManifest<GammaGenerationRequest> {
  return parseManifest(text, options, gammaEntry)
}

/** The gamma family: `gamma generate`, `gamma poll`, the download of its video. */
export const GAMMA_BATCH_ENGINE: BatchEngine<GammaGenerationRequest, GammaTaskResponse> = {
  dir: 'gamma-batches',
  create: async (request, client) => {
    const created = await createGammaTask(gammaApi(client), 'video_generation', request)
    return {id: created.task_id}
  },
  wait: (id, o) =>
    waitForGammaTask(gammaApi(o.client), id, {
      intervalMs: (o.intervalSeconds ?? DEFAULT_INTERVAL_SECONDS) * 1000,
      timeoutMs: 0,
      signal: o.signal,
      onProgress: (r) => o.onStatus(r.task.status),
    }),
  download: (response, path, o) =>
    downloadGammaVideo(gammaApi(o.client), response.task, path, {signal: o.signal}),
}

export function runGammaBatch(
  entries: readonly BatchEntry<GammaGenerationRequest>[],
  options: RunVideoBatchOptions = {},
): Promise<BatchSummary> {
  return runBatch(entries, GAMMA_BATCH_ENGINE, options)
}
