/**
 * The OpenCode and Qwen Code history readers on fixtures recorded from the real CLIs
 * (test/fixtures/agents: `opencode run` 1.18.33 and `qwen -p` 0.24.4 through the gateway on the
 * simulator, paths rewritten to /work/proj), through the scan as `gwctl usage rescan` runs it.
 */
import {appendFileSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import Database from 'better-sqlite3'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {tempHome} from '../../../test/helpers/cli.js'
import {HistoryStore} from '../../store/history-store.js'
import {scanHistory} from './scan.js'

const FIXTURES = join(import.meta.dirname, '..', '..', '..', 'test', 'fixtures', 'agents')
const QWEN = readFileSync(join(FIXTURES, 'qwen-code-0.24.4.jsonl'), 'utf8')
const OPENCODE = JSON.parse(readFileSync(join(FIXTURES, 'opencode-1.18.33.json'), 'utf8')) as {
  schema: string[]
  message: Array<Record<string, unknown>>
  part: Array<Record<string, unknown>>
}
const QWEN_SESSION = 'aa50bbef-a853-4286-9fd4-1497cf250027'

type Row = Record<string, string | number | null>
const rows = (store: HistoryStore, tool: string): Row[] =>
  store.db
    .prepare(
      `SELECT key, ts, model, session, project, request_id, input_tokens, output_tokens, cache_read_tokens,
        cache_creation_tokens, reasoning_tokens, total_tokens FROM history WHERE tool = ? ORDER BY ts, key`,
    )
    .all(tool) as Row[]

describe('Qwen Code and OpenCode history', () => {
  let home: string
  let cleanup: () => void
  let store: HistoryStore
  let env: NodeJS.ProcessEnv
  beforeEach(async () => {
    ;({home, cleanup} = tempHome())
    env = {HOME: join(home, 'user-home')}
    store = await HistoryStore.open(join(home, 'logs.db'))
  })
  afterEach(() => {
    store.close()
    cleanup()
  })

  const qwenChat = () => {
    const dir = join(env.HOME!, '.qwen', 'projects', '-work-proj', 'chats')
    mkdirSync(dir, {recursive: true})
    return join(dir, `${QWEN_SESSION}.jsonl`)
  }

  const QWEN_ROWS = [
    {
      key: `q:${QWEN_SESSION}:chatcmpl-sim2tp34lr`,
      ts: Date.parse('2026-11-26T01:10:40.464Z'),
      model: 'gw-model',
      session: QWEN_SESSION,
      project: '/work/proj',
      request_id: null,
      input_tokens: 8070,
      output_tokens: 85,
      cache_read_tokens: 0,
      cache_creation_tokens: 0,
      reasoning_tokens: 0,
      total_tokens: 8155,
    },
    {
      key: `q:${QWEN_SESSION}:chatcmpl-sim3tp34ls`,
      ts: Date.parse('2026-11-26T01:10:41.354Z'),
      model: 'gw-model',
      session: QWEN_SESSION,
      project: '/work/proj',
      request_id: null,
      // 8099 prompt tokens, 8070 of them read from cache
      input_tokens: 29,
      output_tokens: 16,
      cache_read_tokens: 8070,
      cache_creation_tokens: 0,
      reasoning_tokens: 0,
      total_tokens: 8115,
    },
  ]

  it('Qwen Code: one row per api_response record (the assistant records are the same calls)', async () => {
    writeFileSync(qwenChat(), QWEN)
    const stats = await scanHistory(store, {env, tools: ['qwen-code']})
    expect(stats.errors).toEqual([])
    expect(stats.files).toBe(1)
    expect(rows(store, 'qwen-code')).toEqual(QWEN_ROWS)
    expect(stats.skipped.duplicate).toBe(2)
    // a full rescan gives the same rows
    await scanHistory(store, {env, full: true})
    expect(rows(store, 'qwen-code')).toEqual(QWEN_ROWS)
  })

  it('Qwen Code: a file read in two scans counts each call once (the telemetry flag is kept)', async () => {
    const lines = QWEN.split('\n')
    const path = qwenChat()
    // up to the first assistant record (after the first api_response)
    const cut = lines.findIndex((l) => l.includes('"type":"assistant"')) + 1
    writeFileSync(path, lines.slice(0, cut).join('\n') + '\n')
    await scanHistory(store, {env, tools: ['qwen-code']})
    expect(rows(store, 'qwen-code')).toEqual(QWEN_ROWS.slice(0, 1))
    appendFileSync(path, lines.slice(cut).join('\n'))
    const stats = await scanHistory(store, {env, tools: ['qwen-code']})
    expect(stats.filesRead).toBe(1)
    expect(rows(store, 'qwen-code')).toEqual(QWEN_ROWS)
  })

  it('Qwen Code: a file without telemetry is read from its assistant records; reasoning by the total', async () => {
    const assistant = QWEN.split('\n').filter((l) => l.includes('"type":"assistant"'))
    const withThoughts = (line: string, usage: Record<string, number>) => {
      const m = JSON.parse(line) as Record<string, unknown>
      return JSON.stringify({...m, uuid: `${String(m.uuid)}-t`, usageMetadata: usage})
    }
    writeFileSync(
      qwenChat(),
      [
        ...assistant,
        // OpenAI-style: candidates include the 40 reasoning tokens (total = prompt + candidates)
        withThoughts(assistant[1], {
          promptTokenCount: 100,
          candidatesTokenCount: 50,
          thoughtsTokenCount: 40,
          totalTokenCount: 150,
        }),
        // Gemini-style: thoughts come on top (total = prompt + candidates + thoughts)
        withThoughts(assistant[0], {
          promptTokenCount: 100,
          candidatesTokenCount: 50,
          thoughtsTokenCount: 40,
          totalTokenCount: 190,
        }),
        '{"type":"assistant","usageMetadata":{"broken',
      ].join('\n') + '\n',
    )
    const stats = await scanHistory(store, {env, tools: ['qwen-code']})
    const got = rows(store, 'qwen-code')
    expect(
      got.map((r) => [r.input_tokens, r.cache_read_tokens, r.output_tokens, r.reasoning_tokens]),
    ).toEqual([
      [8070, 0, 85, 0],
      [100, 0, 90, 40],
      [29, 8070, 16, 0],
      [100, 0, 50, 40],
    ])
    expect(got[0].key).toBe(`q:${QWEN_SESSION}:423edb93-2086-43ba-aad1-9db9ca1be72d`)
    expect(stats.skipped['invalid-json']).toBe(1)
  })

  const opencodeDb = (extra: (db: Database.Database) => void = () => undefined) => {
    const dir = join(env.HOME!, '.local', 'share', 'opencode')
    mkdirSync(dir, {recursive: true})
    const path = join(dir, 'opencode.db')
    const db = new Database(path)
    db.pragma('journal_mode = WAL')
    for (const sql of OPENCODE.schema) db.exec(sql)
    for (const table of ['message', 'part'] as const)
      for (const r of OPENCODE[table])
        db.prepare(
          `INSERT INTO ${table} VALUES (${Object.keys(r)
            .map((k) => `@${k}`)
            .join(', ')})`,
        ).run(r)
    extra(db)
    return {path, db}
  }

  const OPENCODE_ROW = {
    key: 'o:msg_21566e76b001v4Aob9BxK51Bue',
    ts: 1795655401275, // the step-finish part's time
    model: 'claude-sonnet-4-5',
    session: 'ses_dea993332ffeLSAcDbJKVtSi7W',
    project: '/work/proj',
    request_id: null,
    input_tokens: 4756,
    output_tokens: 6,
    cache_read_tokens: 1901,
    cache_creation_tokens: 950,
    reasoning_tokens: 0,
    total_tokens: 7613,
  }

  it('OpenCode: its database, read-only, one row per step-finish part; a WAL-only write is seen', async () => {
    const {db} = opencodeDb()
    // the writer keeps its connection open: the rows are in the -wal, not the main file
    const stats = await scanHistory(store, {env, tools: ['opencode']})
    expect(stats.errors).toEqual([])
    expect(stats.files).toBe(1)
    expect(rows(store, 'opencode')).toEqual([OPENCODE_ROW])

    // a second assistant message with two calls (reasoning counted as output) and one that was
    // interrupted before its step finished (its own tokens)
    const msg = (id: string, tokens: unknown) =>
      db.prepare(`INSERT INTO message VALUES (?, 'ses_2', 1795655500000, 1795655500000, ?)`).run(
        id,
        JSON.stringify({
          role: 'assistant',
          modelID: 'gpt-5',
          providerID: 'openai',
          path: {cwd: '/w'},
          tokens,
          time: {created: 1795655500000},
        }),
      )
    const step = (id: string, message: string, at: number, tokens: unknown) =>
      db
        .prepare(`INSERT INTO part VALUES (?, ?, 'ses_2', ?, ?, ?)`)
        .run(id, message, at, at, JSON.stringify({type: 'step-finish', reason: 'stop', tokens, cost: 0}))
    const t = (input: number, output: number, reasoning: number, read: number) => ({
      input,
      output,
      reasoning,
      cache: {read, write: 0},
    })
    msg('msg_b', t(1, 1, 0, 0))
    step('prt_b1', 'msg_b', 1795655501000, t(100, 20, 30, 50))
    step('prt_b2', 'msg_b', 1795655502000, t(10, 5, 0, 150))
    msg('msg_c', t(7, 3, 0, 0))
    const again = await scanHistory(store, {env, tools: ['opencode']})
    expect(again.filesRead).toBe(1)
    expect(
      rows(store, 'opencode').map((r) => [
        r.key,
        r.input_tokens,
        r.output_tokens,
        r.reasoning_tokens,
        r.cache_read_tokens,
      ]),
    ).toEqual([
      ['o:msg_21566e76b001v4Aob9BxK51Bue', 4756, 6, 0, 1901],
      ['o:msg_c', 7, 3, 0, 0],
      ['o:msg_b', 100, 50, 30, 50],
      ['o:msg_b:1', 10, 5, 0, 150],
    ])
    // nothing changed: the database is not opened again
    expect((await scanHistory(store, {env, tools: ['opencode']})).filesRead).toBe(0)
    db.close()
  })

  it('OpenCode: legacy message files count, and a message migrated into the database counts once', async () => {
    const {db} = opencodeDb()
    db.close()
    const legacy = join(env.HOME!, '.local', 'share', 'opencode', 'storage', 'message', 'ses_old')
    mkdirSync(legacy, {recursive: true})
    const assistant = OPENCODE.message.find((m) => String(m.data).includes('"assistant"'))!
    // the same message as a JSON file (what OpenCode wrote before its database)
    writeFileSync(
      join(legacy, 'msg_21566e76b001v4Aob9BxK51Bue.json'),
      JSON.stringify({
        id: assistant.id,
        sessionID: assistant.session_id,
        ...JSON.parse(String(assistant.data)),
      }),
    )
    writeFileSync(
      join(legacy, 'msg_old1.json'),
      JSON.stringify({
        id: 'msg_old1',
        sessionID: 'ses_old',
        role: 'assistant',
        modelID: 'claude-sonnet-4',
        path: {cwd: '/old'},
        time: {created: 1750000000000, completed: 1750000001000},
        tokens: {input: 12, output: 3, reasoning: 2, cache: {read: 4, write: 5}},
      }),
    )
    writeFileSync(join(legacy, 'msg_user.json'), JSON.stringify({id: 'msg_user', role: 'user'}))
    // a snapshot folder of OpenCode's beside them is not walked
    mkdirSync(join(env.HOME!, '.local', 'share', 'opencode', 'snapshot', 'x'), {recursive: true})
    writeFileSync(join(env.HOME!, '.local', 'share', 'opencode', 'snapshot', 'x', 'opencode.db'), 'not ours')
    const stats = await scanHistory(store, {env, full: true})
    expect(stats.errors).toEqual([])
    expect(stats.files).toBe(4)
    const got = rows(store, 'opencode')
    expect(
      got.map((r) => [r.key, r.project, r.input_tokens, r.output_tokens, r.cache_creation_tokens]),
    ).toEqual([
      ['o:msg_old1', '/old', 12, 5, 5],
      ['o:msg_21566e76b001v4Aob9BxK51Bue', '/work/proj', 4756, 6, 950],
    ])
  })

  it('a log database whose history view predates OpenCode and Qwen Code gets the new view on open', async () => {
    writeFileSync(qwenChat(), QWEN)
    await scanHistory(store, {env, tools: ['qwen-code']})
    // the view of before: every key but c: and x: was Gemini CLI's
    store.db.exec(`DROP VIEW history; CREATE VIEW history AS SELECT *, CASE substr(key, 1, 1) WHEN 'c'
      THEN 'claude-code' WHEN 'x' THEN 'codex' ELSE 'gemini-cli' END AS tool,
      input_tokens + output_tokens + cache_read_tokens + cache_creation_tokens AS total_tokens FROM history_rows`)
    store.close()
    store = await HistoryStore.open(join(home, 'logs.db'))
    expect(rows(store, 'qwen-code')).toEqual(QWEN_ROWS)
  })

  it('OpenCode: a database of another layout is reported, not a crash', async () => {
    const dir = join(env.HOME!, '.local', 'share', 'opencode')
    mkdirSync(dir, {recursive: true})
    new Database(join(dir, 'opencode-beta.db')).exec('CREATE TABLE other (x)')
    writeFileSync(join(dir, 'opencode.db'), 'garbage that is not SQLite')
    const stats = await scanHistory(store, {env, tools: ['opencode']})
    expect(stats.skipped['invalid-field']).toBe(1)
    expect(stats.errors.map((e) => e.path)).toEqual([join(dir, 'opencode.db')])
    expect(rows(store, 'opencode')).toEqual([])
  })
})
