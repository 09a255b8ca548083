/**
 * A fixture history of Claude Code, Codex CLI and Gemini CLI written under a temp user home,
 * covering the dedup and skip rules of ../shared/PROTOCOLS.md A6, with the totals each tool and
 * UTC day must show. Shared by the scanner unit tests and the `gwctl usage` e2e tests.
 */
import {mkdirSync, writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'

export interface DayTotals {
  requests: number
  inputTokens: number
  outputTokens: number
  cacheReadTokens: number
  cacheCreationTokens: number
  reasoningTokens: number
  totalTokens: number
}

const j = (v: unknown) => JSON.stringify(v)
const write = (path: string, text: string) => {
  mkdirSync(dirname(path), {recursive: true})
  writeFileSync(path, text)
}

function claudeLine(o: {
  msg?: string
  req?: string | null
  ts: string
  usage: Record<string, unknown>
  sidechain?: boolean
  model?: string
}): string {
  return j({
    parentUuid: null,
    isSidechain: o.sidechain ?? false,
    cwd: '/work/repo',
    sessionId: 'sess-claude-1',
    version: '1.0.85',
    type: 'assistant',
    message: {
      id: o.msg,
      role: 'assistant',
      model: o.model ?? 'claude-sonnet-4-20250514',
      content: [],
      usage: o.usage,
    },
    ...(o.req === undefined ? {} : {requestId: o.req}),
    uuid: 'u',
    timestamp: o.ts,
  })
}

/** Paths of the fixture files, for tests that change them. */
export interface FixturePaths {
  claude: string
  codex: string
  codexArchivedCopy: string
  gemini: string
}

/** Writes the fixture history under `userHome` (the HOME the scanners see). */
export function writeFixtureHistory(userHome: string): FixturePaths {
  const claude = join(userHome, '.claude', 'projects', '-work-repo', 'sess-claude-1.jsonl')
  const zeroBreakdown = {ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0}
  write(
    claude,
    [
      j({
        type: 'user',
        sessionId: 'sess-claude-1',
        message: {role: 'user', content: 'hi'},
        timestamp: '2025-08-20T23:59:00Z',
      }),
      // Two content blocks of one response (same message.id + requestId): the larger counts once.
      // Cache writes from cache_creation_input_tokens, although the TTL breakdown says 0.
      claudeLine({
        msg: 'msg_A',
        req: 'req_A',
        ts: '2025-08-20T23:59:30.000Z',
        usage: {
          input_tokens: 10,
          cache_creation_input_tokens: 100,
          cache_read_input_tokens: 50,
          cache_creation: zeroBreakdown,
          output_tokens: 5,
        },
      }),
      claudeLine({
        msg: 'msg_A',
        req: 'req_A',
        ts: '2025-08-20T23:59:31.000Z',
        usage: {
          input_tokens: 10,
          cache_creation_input_tokens: 100,
          cache_read_input_tokens: 50,
          cache_creation: zeroBreakdown,
          output_tokens: 20,
        },
      }),
      // A `/btw` sidechain replay of msg_A under another requestId: dropped.
      claudeLine({
        msg: 'msg_A',
        req: 'req_BTW',
        sidechain: true,
        ts: '2025-08-20T23:59:40.000Z',
        usage: {
          input_tokens: 10,
          cache_creation_input_tokens: 100,
          cache_read_input_tokens: 50,
          output_tokens: 20,
        },
      }),
      // Same message.id, no requestId: content blocks of one response, counted once (after midnight).
      claudeLine({msg: 'msg_B', ts: '2025-08-21T00:00:10.000Z', usage: {input_tokens: 3, output_tokens: 7}}),
      claudeLine({msg: 'msg_B', ts: '2025-08-21T00:00:11.000Z', usage: {input_tokens: 3, output_tokens: 7}}),
      '{"message":{"usage":{ not json',
      claudeLine({
        msg: 'msg_N',
        req: null,
        ts: '2025-08-21T00:01:00.000Z',
        usage: {input_tokens: 1, output_tokens: 1},
      }),
      '',
    ].join('\n') +
      // An agent still writing: the last line has no newline yet.
      claudeLine({
        msg: 'msg_C',
        req: 'req_C',
        ts: '2025-08-21T00:02:00.000Z',
        usage: {input_tokens: 1000, output_tokens: 1000},
      }).slice(0, 80),
  )

  const rel = join('2025', '08', '21', 'rollout-2025-08-21T10-00-00-0199a1b2-c3d4.jsonl')
  const codex = join(userHome, '.codex', 'sessions', rel)
  const tc = (ts: string, info: unknown) =>
    j({timestamp: ts, type: 'event_msg', payload: {type: 'token_count', info, rate_limits: {}}})
  const u = (input: number, cached: number, output: number, reasoning: number) => ({
    input_tokens: input,
    cached_input_tokens: cached,
    output_tokens: output,
    reasoning_output_tokens: reasoning,
    total_tokens: input + output,
  })
  write(
    codex,
    [
      j({
        timestamp: '2025-08-21T10:00:00Z',
        type: 'session_meta',
        payload: {id: 'sess-codex-1', cwd: '/work/cx'},
      }),
      j({
        timestamp: '2025-08-21T10:00:01Z',
        type: 'turn_context',
        payload: {model: 'gpt-5.2-codex', cwd: '/work/cx'},
      }),
      j({timestamp: '2025-08-21T10:00:02Z', type: 'response_item', payload: {type: 'message', role: 'user'}}),
      j({
        timestamp: '2025-08-21T10:00:05Z',
        type: 'token_usage_record',
        payload: {response_id: 'resp_1', usage: u(1000, 250, 125, 75)},
      }),
      tc('2025-08-21T10:00:05Z', {
        last_token_usage: u(1000, 250, 125, 75),
        total_token_usage: u(1000, 250, 125, 75),
      }),
      // The same cumulative total again: the same response reported twice.
      tc('2025-08-21T10:00:06Z', {
        last_token_usage: u(1000, 250, 125, 75),
        total_token_usage: u(1000, 250, 125, 75),
      }),
      // No last_token_usage: the growth of total_token_usage counts.
      tc('2025-08-21T10:01:00Z', {total_token_usage: u(1500, 250, 200, 75)}),
      tc('2025-08-21T10:01:01Z', null),
      '',
    ].join('\n'),
  )
  // The same rollout in archived_sessions/ (different numbers): the sessions/ copy wins.
  const codexArchivedCopy = join(userHome, '.codex', 'archived_sessions', rel)
  write(
    codexArchivedCopy,
    tc('2025-08-21T10:00:05Z', {last_token_usage: u(99999, 0, 1, 0), total_token_usage: u(99999, 0, 1, 0)}) +
      '\n',
  )
  // An archived-only rollout without turn_context: model falls back to gpt-5.
  write(
    join(
      userHome,
      '.codex',
      'archived_sessions',
      '2025',
      '08',
      '22',
      'rollout-2025-08-22T01-00-00-0199ffff.jsonl',
    ),
    tc('2025-08-22T01:00:00Z', {last_token_usage: u(10, 0, 5, 0), total_token_usage: u(10, 0, 5, 0)}) + '\n',
  )

  const gemini = join(userHome, '.gemini', 'tmp', 'projA', 'chats', 'session-2025-08-21T12-00-abcd1234.jsonl')
  const gm = (id: string, ts: string, tokens: Record<string, number>, model = 'gemini-2.5-pro') =>
    j({id, timestamp: ts, type: 'gemini', content: 'x', model, tokens})
  write(
    gemini,
    [
      j({sessionId: 'sess-gemini-1', projectHash: 'h', startTime: '2025-08-21T12:00:00Z', kind: 'main'}),
      j({id: 'u1', timestamp: '2025-08-21T12:00:00Z', type: 'user', content: 'hi'}),
      gm('m1', '2025-08-21T12:00:01Z', {
        input: 1200,
        output: 80,
        cached: 1000,
        thoughts: 40,
        tool: 0,
        total: 1320,
      }),
      // The same id rewritten: the last one wins.
      gm('m1', '2025-08-21T12:00:02Z', {
        input: 1200,
        output: 90,
        cached: 1000,
        thoughts: 40,
        tool: 0,
        total: 1330,
      }),
      // Tool-use prompt tokens count as input.
      gm('m2', '2025-08-21T12:05:00Z', {input: 100, output: 10, cached: 0, thoughts: 0, tool: 5, total: 115}),
      j({$set: {summary: 's'}}),
      '',
    ].join('\n'),
  )
  // A legacy whole-file recording.
  write(
    join(userHome, '.gemini', 'tmp', 'projB', 'chats', 'session-2025-08-20T08-00-ffff0000.json'),
    j({
      sessionId: 'sess-gemini-old',
      messages: [
        {id: 'q', type: 'user', timestamp: '2025-08-20T08:00:00Z', content: 'q'},
        {
          id: 'a',
          type: 'gemini',
          timestamp: '2025-08-20T08:00:01Z',
          model: 'gemini-2.5-flash',
          tokens: {input: 50, output: 5, cached: 0, thoughts: 0, tool: 0, total: 55},
        },
      ],
    }),
  )
  return {claude, codex, codexArchivedCopy, gemini}
}

const t = (
  requests: number,
  inputTokens: number,
  outputTokens: number,
  cacheReadTokens: number,
  cacheCreationTokens: number,
  reasoningTokens: number,
): DayTotals => ({
  requests,
  inputTokens,
  outputTokens,
  cacheReadTokens,
  cacheCreationTokens,
  reasoningTokens,
  totalTokens: inputTokens + outputTokens + cacheReadTokens + cacheCreationTokens,
})

/** Expected totals per tool and UTC day. */
export const EXPECTED: Record<string, Record<string, DayTotals>> = {
  'claude-code': {'2025-08-20': t(1, 10, 20, 50, 100, 0), '2025-08-21': t(1, 3, 7, 0, 0, 0)},
  codex: {'2025-08-21': t(2, 1250, 200, 250, 0, 75), '2025-08-22': t(1, 10, 5, 0, 0, 0)},
  'gemini-cli': {'2025-08-20': t(1, 50, 5, 0, 0, 0), '2025-08-21': t(2, 305, 140, 1000, 0, 40)},
}
