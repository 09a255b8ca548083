/**
 * Claude Code session logs (`projects/<encoded-cwd>/<session>.jsonl`, sub-agents under
 * `<session>/subagents/`), read by ccusage's rules (../shared/PROTOCOLS.md A6) with two fixes:
 * lines sharing a `message.id` without a `requestId` are content blocks of one response and count
 * once, and cache writes come from `cache_creation_input_tokens` (the billed total), not from the
 * TTL breakdown, which Claude Code writes as zeros when the server sends none.
 */
import type {Picked, Picker} from './pick.js'
import {picker} from './pick.js'
import type {FileContext, HistoryRecord, LineParser, SkipReason} from './types.js'
import {num, parseTime, str} from './types.js'

const SEMVER = /^\d+\.\d+\.\d+/

/** Every key `line` reads, in the order it destructures them (see pick.ts): the message text is never built. */
const KEYS = [
  'requestId',
  'sessionId',
  'version',
  'costUSD',
  'cwd',
  'isApiErrorMessage',
  'isSidechain',
  'timestamp',
  [
    'message',
    [
      'id',
      'model',
      [
        'usage',
        [
          'speed',
          'input_tokens',
          'output_tokens',
          'cache_creation_input_tokens',
          'cache_read_input_tokens',
          ['cache_creation', ['ephemeral_5m_input_tokens', 'ephemeral_1h_input_tokens']],
        ],
      ],
    ],
  ],
] as const
let pick: Picker | undefined
const USAGE = Buffer.from('"usage":')
const OPEN = 0x7b
const SPACE = 0x20

/**
 * Whether the line holds a usage object (`"usage":{` or `"usage": {`): the line reader decodes
 * only such lines. Searched from the end, where Claude Code writes `usage` (after the message
 * text): three times faster than from the start on its assistant lines.
 */
function holdsUsage(line: Buffer): boolean {
  for (let at = line.lastIndexOf(USAGE); at !== -1; at = at === 0 ? -1 : line.lastIndexOf(USAGE, at - 1)) {
    const next = line[at + USAGE.length]
    if (next === OPEN || (next === SPACE && line[at + USAGE.length + 1] === OPEN)) return true
  }
  return false
}

export function claudeParser(file: FileContext): LineParser {
  pick ??= picker(KEYS)
  const pickLine = pick
  return {
    holds: holdsUsage,
    state: () => null,
    line(text: string, offset: number): HistoryRecord | SkipReason {
      const line = pickLine(text)
      if (line === undefined) return 'invalid-json'
      const [
        requestId,
        sessionId,
        version,
        costUSD,
        cwd,
        isApiErrorMessage,
        isSidechain,
        timestamp,
        message,
      ] = line
      const [id, model, usage] = (message as Picked | undefined) ?? []
      if (!message || !usage) return 'no-usage'
      const [speed, input, output, cacheCreation, cacheRead, breakdown] = usage as Picked
      // Fields that, present as `null` (or an empty id), make ccusage drop the line.
      if (
        requestId === null ||
        sessionId === null ||
        version === null ||
        costUSD === null ||
        cwd === null ||
        isApiErrorMessage === null ||
        sessionId === '' ||
        requestId === ''
      )
        return 'invalid-field'
      if (id === null || id === '' || model === null || model === '') return 'invalid-field'
      if (speed === null || cacheCreation === null || cacheRead === null) return 'invalid-field'
      if (version !== undefined && !(typeof version === 'string' && SEMVER.test(version)))
        return 'invalid-field'
      if (typeof input !== 'number' || typeof output !== 'number') return 'invalid-field'
      const time = typeof timestamp === 'string' ? parseTime(timestamp) : Number.NaN
      if (!Number.isFinite(time)) return 'invalid-field'

      const [cache5mRaw, cache1hRaw] = (breakdown as Picked | undefined) ?? []
      const cache5m = num(cache5mRaw)
      const cache1h = num(cache1hRaw)
      const inputTokens = num(input)
      const outputTokens = num(output)
      const cacheReadTokens = num(cacheRead)
      const cacheCreationTokens = typeof cacheCreation === 'number' ? num(cacheCreation) : cache5m + cache1h
      let modelName = str(model)
      if (modelName === '<synthetic>') modelName = null
      else if (modelName && speed === 'fast') modelName += '-fast'
      const messageId = str(id)
      const request = str(requestId)
      return {
        key: messageId ? `c:${messageId}:${request ?? ''}` : `c:${file.keyPath}:${offset}`,
        tool: 'claude-code',
        time,
        model: modelName,
        session: str(sessionId),
        project: str(cwd),
        requestId: request,
        inputTokens,
        outputTokens,
        cacheReadTokens,
        cacheCreationTokens,
        cache5mTokens: cache5m,
        cache1hTokens: cache1h,
        reasoningTokens: 0,
        totalTokens: inputTokens + outputTokens + cacheReadTokens + cacheCreationTokens,
        sidechain: isSidechain === true,
        messageId,
      }
    },
  }
}
