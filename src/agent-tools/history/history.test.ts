import {spawn} from 'node:child_process'
import {appendFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import {createRequire} from 'node:module'
import {join} from 'node:path'

import Database from 'better-sqlite3'
import {afterEach, beforeEach, describe, expect, it, vi} from 'vitest'

import {tempHome} from '../../../test/helpers/cli.js'
import {EXPECTED, writeFixtureHistory} from '../../../test/helpers/history.js'
import {HistoryStore} from '../../store/history-store.js'
import {LogStore} from '../../store/log-store.js'
import {openSqlite} from '../../store/sqlite.js'
import {HISTORY_COLUMNS, HISTORY_VIEW, SYNTHETIC_MARK} from '../../store/history-schema.js'
import {usageEntries} from '../../store/usage-entries.js'
import {historySince, usageGroups} from '../../store/usage-query.js'
import {claudeParser} from './claude.js'
import {codexParser} from './codex.js'
import {geminiParser} from './gemini.js'
import {scanHistory} from './scan.js'
import {holdsOneOf, parseTime} from './types.js'

const require = createRequire(import.meta.url)

function totalsByToolDay(store: HistoryStore) {
  const rows = store.db
    .prepare(
      `SELECT tool, strftime('%Y-%m-%d', ts / 1000, 'unixepoch') AS day, COUNT(*) AS requests,
        SUM(input_tokens) AS inputTokens, SUM(output_tokens) AS outputTokens, SUM(cache_read_tokens) AS cacheReadTokens,
        SUM(cache_creation_tokens) AS cacheCreationTokens, SUM(reasoning_tokens) AS reasoningTokens,
        SUM(total_tokens) AS totalTokens
       FROM history GROUP BY tool, day ORDER BY tool, day`,
    )
    .all() as Array<Record<string, string | number>>
  const out: Record<string, Record<string, Record<string, number>>> = {}
  for (const {tool, day, ...rest} of rows)
    (out[tool as string] ??= {})[day as string] = rest as Record<string, number>
  return out
}

describe('history scanners', () => {
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

  it('counts each tool per UTC day by the A6 rules and our two Claude fixes', async () => {
    writeFixtureHistory(env.HOME!)
    const stats = await scanHistory(store, {env})
    expect(stats.errors).toEqual([])
    expect(stats.files).toBe(5)
    expect(totalsByToolDay(store)).toEqual(EXPECTED)
    expect(stats.skipped).toMatchObject({'invalid-json': 1, 'invalid-field': 1, replay: 1})
    // The Claude TTL breakdown is kept apart (zeros here), the request ids are kept.
    const a = store.db.prepare(`SELECT * FROM history WHERE request_id = 'req_A'`).get() as Record<
      string,
      unknown
    >
    expect(a).toMatchObject({
      cache_creation_tokens: 100,
      cache_5m_tokens: 0,
      cache_1h_tokens: 0,
      project: '/work/repo',
    })
    const codex = store.db
      .prepare(`SELECT request_id, model, session FROM history WHERE tool = 'codex' ORDER BY ts`)
      .all()
    expect(codex).toEqual([
      {request_id: 'resp_1', model: 'gpt-5.2-codex', session: 'sess-codex-1'},
      {request_id: null, model: 'gpt-5.2-codex', session: 'sess-codex-1'},
      {request_id: null, model: 'gpt-5', session: null},
    ])
    expect(store.db.prepare('SELECT DISTINCT tool FROM history_files ORDER BY tool').all()).toEqual([
      {tool: 'claude-code'},
      {tool: 'codex'},
      {tool: 'gemini-cli'},
    ])
  })

  it('reads the changed files of a folder in path order, not in the order the walk finds them', async () => {
    writeFixtureHistory(env.HOME!)
    await scanHistory(store, {env})
    // A session and its sub-agent hold the same response (equal sizes, both main chain): the copy
    // earlier in path order wins, as in a full rescan. The walk finds the sub-agent's file first
    // (`s1/...` is listed before `s1.jsonl`), path order puts `s1.jsonl` first ('.' < '/').
    const project = join(env.HOME!, '.claude', 'projects', '-work-order')
    const line = (cwd: string) =>
      JSON.stringify({
        type: 'assistant',
        isSidechain: false,
        cwd,
        sessionId: 's1',
        version: '1.0.85',
        requestId: 'req_Z',
        timestamp: '2025-08-22T00:00:01.000Z',
        message: {id: 'msg_Z', model: 'claude-sonnet-4-20250514', usage: {input_tokens: 5, output_tokens: 5}},
      }) + '\n'
    mkdirSync(join(project, 's1', 'subagents'), {recursive: true})
    writeFileSync(join(project, 's1', 'subagents', 'agent-1.jsonl'), line('/work/sub'))
    writeFileSync(join(project, 's1.jsonl'), line('/work/main'))
    const scan = await scanHistory(store, {env})
    expect(scan.filesRead).toBe(2)
    const row = () => store.db.prepare(`SELECT project FROM history WHERE key = 'c:msg_Z:req_Z'`).get()
    expect(row()).toEqual({project: '/work/main'})
    await scanHistory(store, {env, full: true})
    expect(row()).toEqual({project: '/work/main'})
  })

  it('counts no `<synthetic>` line (Claude Code’s own placeholder, no API call): not a request, not a model, not in a block; an earlier scan’s rows go', async () => {
    const project = join(env.HOME!, '.claude', 'projects', '-work-syn')
    const line = (msg: string, model: string, ts: string, usage: Record<string, number>) =>
      JSON.stringify({
        type: 'assistant',
        isSidechain: false,
        cwd: '/work/syn',
        sessionId: 'syn',
        version: '2.0.14',
        requestId: `req_${msg}`,
        timestamp: ts,
        message: {id: msg, model, role: 'assistant', content: [{type: 'text', text: 'x'}], usage},
      }) + '\n'
    const zero = {
      input_tokens: 0,
      output_tokens: 0,
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 0,
    }
    mkdirSync(project, {recursive: true})
    writeFileSync(
      join(project, 'syn.jsonl'),
      line('msg_real', 'claude-sonnet-4-5-20250929', '2025-08-23T10:00:00.000Z', {
        ...zero,
        input_tokens: 7,
        output_tokens: 3,
      }) +
        // an interrupted turn, and an API error Claude Code reports as a message of its own
        line('msg_syn1', '<synthetic>', '2025-08-23T10:00:05.000Z', zero) +
        line('msg_syn2', '<synthetic>', '2025-08-23T16:00:00.000Z', zero),
    )
    const stats = await scanHistory(store, {env})
    expect(stats.skipped.synthetic).toBe(2)
    const groups = () =>
      usageGroups(store.db, {source: 'history', pivot: 'model', tool: 'claude-code'}).map((g) => [
        g.key,
        g.requests,
      ])
    expect(groups()).toEqual([['claude-sonnet-4-5-20250929', 1]])
    expect(usageEntries(store.db, {source: 'history'}).map((e) => e.model)).toEqual([
      'claude-sonnet-4-5-20250929',
    ])

    // A database scanned before: its `<synthetic>` rows (model null, no tokens) are deleted when it
    // is opened to write, once (the view's text says it is done)
    store.db.exec(`INSERT INTO history_rows (key, file, ts, model, session, project, request_id)
      VALUES ('c:msg_syn1:req_msg_syn1', 1, ${Date.parse('2025-08-23T10:00:05Z')}, NULL, 'syn', '/work/syn', 'req_msg_syn1')`)
    store.db.exec(`DROP VIEW history; ${HISTORY_VIEW.replace(`/* ${SYNTHETIC_MARK} */`, '')}`)
    expect(groups()).toContainEqual([null, 1])
    expect(groups()).toHaveLength(2)
    store.close()
    store = await HistoryStore.open(join(home, 'logs.db'))
    expect(groups()).toEqual([['claude-sonnet-4-5-20250929', 1]])
    expect(
      (store.db.prepare(`SELECT sql FROM sqlite_master WHERE name = 'history'`).get() as {sql: string}).sql,
    ).toContain(SYNTHETIC_MARK)
  })

  it('is incremental: nothing changes on a second scan, a completed last line counts once, a full rescan agrees', async () => {
    const paths = writeFixtureHistory(env.HOME!)
    await scanHistory(store, {env})
    const again = await scanHistory(store, {env})
    expect(again.filesRead).toBe(0)
    expect(again.rows).toBe(0)
    expect(totalsByToolDay(store)).toEqual(EXPECTED)

    // The agent finishes its truncated last line, then writes one more response.
    const text = readFileSync(paths.claude, 'utf8')
    const cut = text.slice(text.lastIndexOf('\n') + 1)
    const full = JSON.stringify({
      isSidechain: false,
      cwd: '/work/repo',
      sessionId: 'sess-claude-1',
      version: '1.0.85',
      message: {
        id: 'msg_C',
        model: 'claude-sonnet-4-20250514',
        usage: {input_tokens: 1000, output_tokens: 1000},
      },
      requestId: 'req_C',
      timestamp: '2025-08-21T00:02:00.000Z',
    })
    writeFileSync(paths.claude, text.slice(0, text.length - cut.length) + full + '\n')
    const third = await scanHistory(store, {env})
    expect(third.filesRead).toBe(1)
    expect(third.rows).toBe(1)
    expect(totalsByToolDay(store)['claude-code']['2025-08-21']).toMatchObject({
      requests: 2,
      totalTokens: 2010,
    })

    // Codex keeps its cumulative state across scans: a new total counts only its growth.
    appendFileSync(
      paths.codex,
      JSON.stringify({
        timestamp: '2025-08-21T10:02:00Z',
        type: 'event_msg',
        payload: {
          type: 'token_count',
          info: {
            total_token_usage: {
              input_tokens: 1600,
              cached_input_tokens: 250,
              output_tokens: 210,
              total_tokens: 1810,
            },
          },
        },
      }) + '\n',
    )
    await scanHistory(store, {env})
    expect(totalsByToolDay(store).codex['2025-08-21']).toMatchObject({
      requests: 3,
      inputTokens: 1350,
      outputTokens: 210,
    })

    const before = totalsByToolDay(store)
    const rescan = await scanHistory(store, {env, full: true})
    expect(rescan.filesRead).toBe(5)
    expect(totalsByToolDay(store)).toEqual(before)
  })

  it('reads the cursors from their snapshot, which any change to a cursor drops in its own transaction', async () => {
    const paths = writeFixtureHistory(env.HOME!)
    const snapshot = () =>
      store.db.prepare('SELECT paths, stats FROM history_cursor_snapshot').raw().get() as
        [string, string] | undefined
    await scanHistory(store, {env})
    // The scan that wrote the cursors wrote their snapshot: every path, its inode, size and mtime.
    const cursors = store.db
      .prepare('SELECT path, inode, size, mtime_ms FROM history_files ORDER BY id')
      .raw()
      .all() as Array<[string, number, number, number]>
    expect(cursors).toHaveLength(5)
    const [p, s] = snapshot()!
    const listed = (JSON.parse(p) as string[]).map((path, i) => [
      path,
      ...(JSON.parse(s) as number[]).slice(3 * i, 3 * i + 3),
    ])
    const byPath = (a: unknown[], b: unknown[]) => String(a[0]).localeCompare(String(b[0]))
    expect(listed.sort(byPath)).toEqual(cursors.sort(byPath))
    expect(store.cursors().fromSnapshot).toBe(true)
    expect((await scanHistory(store, {env})).filesRead).toBe(0)

    // Listed in another order than the walk's (another file system's order), nothing is missed.
    const reversed = listed.reverse()
    store.db
      .prepare('UPDATE history_cursor_snapshot SET paths = ?, stats = ?')
      .run(JSON.stringify(reversed.map((r) => r[0])), JSON.stringify(reversed.flatMap((r) => r.slice(1))))
    expect((await scanHistory(store, {env})).filesRead).toBe(0)
    appendFileSync(paths.claude, '\n')
    expect((await scanHistory(store, {env})).filesRead).toBe(1)
    expect((await scanHistory(store, {env})).filesRead).toBe(0)

    // A writer that does not rewrite it (the daemon, an older gwctl, plain SQL): the trigger drops it.
    store.db.prepare('UPDATE history_files SET offset = offset WHERE path = ?').run(paths.gemini)
    expect(snapshot()).toBeUndefined()
    expect(store.cursors().fromSnapshot).toBe(false)
    // The next scan reads the table, finds nothing changed and writes the snapshot again.
    expect((await scanHistory(store, {env})).filesRead).toBe(0)
    expect(snapshot()).toBeDefined()

    // A daemon scan (snapshot: false) reads an appended file: its cursor moves, the snapshot goes.
    const codexBefore = totalsByToolDay(store).codex['2025-08-21'].requests
    const line = (total: number) =>
      JSON.stringify({
        timestamp: '2025-08-21T10:02:00Z',
        type: 'event_msg',
        payload: {
          type: 'token_count',
          info: {total_token_usage: {input_tokens: total, output_tokens: 210, total_tokens: total + 210}},
        },
      }) + '\n'
    appendFileSync(paths.codex, line(1600))
    expect((await scanHistory(store, {env, snapshot: false})).filesRead).toBe(1)
    expect(snapshot()).toBeUndefined()
    // Changed again: found from the table's cursor (a snapshot kept from before would hold the old one).
    appendFileSync(paths.codex, line(1700))
    expect((await scanHistory(store, {env})).filesRead).toBe(1)
    expect(totalsByToolDay(store).codex['2025-08-21'].requests).toBe(codexBefore + 2)
    // A scan that read a file leaves it missing (while an agent writes, scans read the table
    // anyway); the next one that reads nothing writes it.
    expect(snapshot()).toBeUndefined()
    expect((await scanHistory(store, {env})).filesRead).toBe(0)
    expect(store.cursors().fromSnapshot).toBe(true)

    // A snapshot of another format, or not matching its own lengths, is not read.
    store.db.exec(`UPDATE history_cursor_snapshot SET format = 99`)
    expect(store.cursors().fromSnapshot).toBe(false)
    store.db.exec(`UPDATE history_cursor_snapshot SET format = 1, stats = '[1, 2]'`)
    expect(store.cursors().fromSnapshot).toBe(false)
    expect((await scanHistory(store, {env})).filesRead).toBe(0)
  })

  it('scans as before when another writer holds the database while it would write the snapshot', async () => {
    writeFixtureHistory(env.HOME!)
    await scanHistory(store, {env})
    store.db.exec('UPDATE history_files SET offset = offset')
    const other = new Database(join(home, 'logs.db'))
    try {
      other.exec('BEGIN IMMEDIATE')
      store.db.pragma('busy_timeout = 20')
      const stats = await scanHistory(store, {env})
      expect(stats.filesRead).toBe(0)
      expect(stats.errors).toEqual([])
      expect(store.cursors().fromSnapshot).toBe(false)
      other.exec('ROLLBACK')
      await scanHistory(store, {env})
      expect(store.cursors().fromSnapshot).toBe(true)
    } finally {
      other.close()
    }
  })

  it('merges a rescan in rollback-journal mode only when alone on the database, and leaves it in WAL', async () => {
    writeFixtureHistory(env.HOME!)
    const pragma = vi.spyOn(store.db, 'pragma')
    const modes = () =>
      pragma.mock.calls.flatMap(([p], i) => {
        const r = pragma.mock.results[i]
        return p === 'main.journal_mode = DELETE'
          ? [r.type === 'throw' ? (r.value as {code: string}).code : r.value]
          : []
      })
    // A reader holds the database open (a daemon would): the merge stays in WAL mode.
    const other = new Database(join(home, 'logs.db'), {readonly: true})
    try {
      other.prepare('SELECT count(*) FROM history_files').get()
      await scanHistory(store, {env, full: true})
      expect(modes()).toEqual(['SQLITE_BUSY'])
      expect(other.pragma('journal_mode', {simple: true})).toBe('wal')
    } finally {
      other.close()
    }
    expect(totalsByToolDay(store)).toEqual(EXPECTED)
    // Alone: the mode changes for the merge, and back.
    await scanHistory(store, {env, full: true})
    expect(modes()).toEqual(['SQLITE_BUSY', 'delete'])
    expect(store.db.pragma('journal_mode', {simple: true})).toBe('wal')
    expect(store.db.pragma('synchronous', {simple: true})).toBe(1)
    expect(totalsByToolDay(store)).toEqual(EXPECTED)
    expect(readdirSync(home).filter((n) => n.endsWith('-journal'))).toEqual([])
  })

  it('rolls back a merge killed in rollback-journal mode, and opens in WAL again', async () => {
    writeFixtureHistory(env.HOME!)
    await scanHistory(store, {env})
    const before = totalsByToolDay(store)
    store.close()
    // A process killed mid-transaction in rollback-journal mode, pages already written: a hot journal.
    const script = `
      const Database = require(${JSON.stringify(require.resolve('better-sqlite3'))})
      const db = new Database(${JSON.stringify(join(home, 'logs.db'))})
      db.pragma('journal_mode = DELETE')
      db.pragma('cache_size = 10')
      db.exec("BEGIN IMMEDIATE; DELETE FROM history_rows; CREATE TABLE filler (x)")
      const insert = db.prepare('INSERT INTO filler VALUES (?)')
      for (let i = 0; i < 2000; i++) insert.run('x'.repeat(500))
      process.stdout.write('ready')
      setInterval(() => {}, 1000)`
    const child = spawn(process.execPath, ['-e', script], {stdio: ['ignore', 'pipe', 'inherit']})
    const exited = new Promise((resolve) => child.once('exit', resolve))
    await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()))
    expect(readdirSync(home)).toContain('logs.db-journal')
    child.kill('SIGKILL')
    await exited
    // a read-only open (gwctl logs, usage) first has the journal rolled back
    const reader = openSqlite(join(home, 'logs.db'), {readonly: true, fileMustExist: true})
    try {
      expect(reader.prepare('SELECT count(*) FROM history_rows').pluck().get()).toBeGreaterThan(0)
    } finally {
      reader.close()
    }
    expect(readdirSync(home)).not.toContain('logs.db-journal')
    store = await HistoryStore.open(join(home, 'logs.db'))
    expect(store.db.pragma('journal_mode', {simple: true})).toBe('wal')
    expect(store.db.pragma('integrity_check')).toEqual([{integrity_check: 'ok'}])
    expect(totalsByToolDay(store)).toEqual(before)
    expect(store.db.prepare(`SELECT count(*) AS n FROM sqlite_master WHERE name = 'filler'`).get()).toEqual({
      n: 0,
    })
  })

  it("filters by time through each file's latest row: scanned, appended to, shrunk, and after an upgrade", async () => {
    const paths = writeFixtureHistory(env.HOME!)
    // 40 sessions of a year before: a --since within the fixture's days takes its few files' rows
    const old = JSON.parse(
      readFileSync(paths.claude, 'utf8')
        .split('\n')
        .find((l) => l.includes('"usage"'))!,
    )
    for (let i = 0; i < 40; i++) {
      const dir = join(env.HOME!, '.claude', 'projects', '-old')
      mkdirSync(dir, {recursive: true})
      const line = {
        ...old,
        requestId: `req_old${i}`,
        timestamp: `2024-08-01T00:00:${String(i).padStart(2, '0')}.000Z`,
      }
      writeFileSync(
        join(dir, `old${i}.jsonl`),
        JSON.stringify({...line, message: {...old.message, id: `msg_old${i}`}}) + '\n',
      )
    }
    await scanHistory(store, {env})
    // every distinct row time, and one past the last: --since at each gives what a scan of all rows gives
    const times = (
      store.db.prepare('SELECT DISTINCT ts FROM history ORDER BY ts').pluck().all() as number[]
    ).concat(Number.MAX_SAFE_INTEGER)
    const check = () => {
      expect(
        store.db.prepare(`SELECT count(*) FROM sqlite_master WHERE name = 'history_ts'`).pluck().get(),
      ).toBe(0)
      const paths = new Set<string>()
      for (const ts of times) {
        paths.add(historySince(store.db, ts) ? 'files' : 'scan')
        const groups = usageGroups(store.db, {source: 'history', since: ts / 1000})
        const requests = groups.reduce((n, g) => n + g.requests, 0)
        const expected = store.db.prepare('SELECT count(*) FROM history WHERE ts >= ?').pluck().get(ts)
        expect(requests, `since ${ts}`).toBe(expected)
      }
      // both ways were taken: the recent files' rows, and a scan of every row
      expect([...paths].sort()).toEqual(['files', 'scan'])
      // no row is later than its file's max_ts (an upper bound: a copy that lost to another file's counts too)
      expect(
        store.db
          .prepare(
            `SELECT count(*) FROM history_rows h JOIN history_files f ON f.id = h.file
              WHERE f.max_ts IS NULL OR h.ts > f.max_ts`,
          )
          .pluck()
          .get(),
      ).toBe(0)
    }
    check()
    // an appended response later than anything before: its file's max_ts moves
    const line = JSON.parse(
      readFileSync(paths.claude, 'utf8')
        .split('\n')
        .find((l) => l.includes('"usage"'))!,
    )
    line.message.id = 'msg_later'
    line.requestId = 'req_later'
    line.timestamp = '2025-12-31T23:00:00.000Z'
    appendFileSync(paths.claude, JSON.stringify(line) + '\n')
    expect((await scanHistory(store, {env})).filesRead).toBe(1)
    times.splice(-1, 0, Date.parse(line.timestamp))
    check()
    // then an earlier one: the file's max_ts stays where its later rows are
    line.message.id = 'msg_earlier'
    line.requestId = 'req_earlier'
    line.timestamp = '2025-01-01T00:00:00.000Z'
    appendFileSync(paths.claude, JSON.stringify(line) + '\n')
    expect((await scanHistory(store, {env})).filesRead).toBe(1)
    times.unshift(Date.parse(line.timestamp))
    check()
    // a shrunk file is read whole: its max_ts is its rows' again
    writeFileSync(paths.gemini, readFileSync(paths.gemini, 'utf8').split('\n').slice(0, 3).join('\n') + '\n')
    await scanHistory(store, {env})
    check()
    // the layout before max_ts, with an index on ts: the open adds and fills the column, drops the index
    store.db.exec(
      'ALTER TABLE history_files DROP COLUMN max_ts; CREATE INDEX history_ts ON history_rows (ts)',
    )
    store.close()
    store = await HistoryStore.open(join(home, 'logs.db'))
    check()
  })

  it("waits to open while a rescan's merge holds the database in rollback-journal mode", async () => {
    writeFixtureHistory(env.HOME!)
    await scanHistory(store, {env})
    store.close()
    // What a merge does alone on the database: rollback-journal mode, a write transaction, then WAL.
    const script = `
      const Database = require(${JSON.stringify(require.resolve('better-sqlite3'))})
      const db = new Database(${JSON.stringify(join(home, 'logs.db'))})
      db.pragma('journal_mode = DELETE')
      db.exec('BEGIN IMMEDIATE; CREATE TABLE merge_marker (x)')
      process.stdout.write('holding')
      setTimeout(() => {
        db.exec('COMMIT')
        db.pragma('journal_mode = WAL')
        db.close()
      }, 400)`
    const child = spawn(process.execPath, ['-e', script], {stdio: ['ignore', 'pipe', 'inherit']})
    const exited = new Promise((resolve) => child.once('exit', resolve))
    await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()))
    // Changing the journal mode fails at once while the transaction lasts: the opens try again.
    const [history, logs] = await Promise.all([
      HistoryStore.open(join(home, 'logs.db')),
      LogStore.open(join(home, 'logs.db')),
    ])
    store = history
    try {
      expect(store.db.pragma('journal_mode', {simple: true})).toBe('wal')
      expect(
        store.db.prepare(`SELECT count(*) FROM sqlite_master WHERE name = 'merge_marker'`).pluck().get(),
      ).toBe(1)
    } finally {
      logs.close()
    }
    await exited
  })

  it('keeps no snapshot from before its triggers: an open that adds them drops it', async () => {
    writeFixtureHistory(env.HOME!)
    await scanHistory(store, {env})
    // A layout whose triggers are missing: a cursor changed while they were gone.
    store.db.exec(`DROP TRIGGER history_files_update; UPDATE history_files SET size = 0`)
    store.close()
    store = await HistoryStore.open(join(home, 'logs.db'))
    expect(store.db.prepare('SELECT COUNT(*) AS n FROM history_cursor_snapshot').get()).toEqual({n: 0})
    expect(store.db.prepare(`SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'trigger'`).get()).toEqual({
      n: 3,
    })
    // Every file's size differs from its cursor: each is read again (from its offset: no new rows).
    expect((await scanHistory(store, {env})).filesRead).toBe(5)
    expect(totalsByToolDay(store)).toEqual(EXPECTED)
  })

  it('rescans a replaced or shrunk file whole', async () => {
    const paths = writeFixtureHistory(env.HOME!)
    await scanHistory(store, {env})
    writeFileSync(paths.gemini, readFileSync(paths.gemini, 'utf8').split('\n').slice(0, 3).join('\n') + '\n')
    await scanHistory(store, {env})
    expect(totalsByToolDay(store)['gemini-cli']['2025-08-21']).toMatchObject({requests: 1, outputTokens: 120})
  })

  it('reports an unreadable folder and goes on', async () => {
    if (process.getuid?.() === 0) return // root reads everything
    writeFixtureHistory(env.HOME!)
    const locked = join(env.HOME!, '.claude', 'projects', '-locked')
    mkdirSync(locked, {mode: 0o000})
    const stats = await scanHistory(store, {env})
    expect(stats.errors).toEqual([{path: locked, error: 'EACCES'}])
    expect(totalsByToolDay(store)).toEqual(EXPECTED)
  })

  it('drops a history of an earlier layout and reads every file again, in one rescan', async () => {
    writeFixtureHistory(join(home, 'user-home'))
    await scanHistory(store, {env})
    const before = totalsByToolDay(store)
    // The layout before: a `history` table (a path on every row) and cursors keyed by path only.
    store.db.exec(`DROP VIEW history; DROP TABLE history_rows; DROP TABLE history_files;
      CREATE TABLE history_files (path TEXT PRIMARY KEY, tool TEXT NOT NULL, inode INTEGER NOT NULL DEFAULT 0,
        size INTEGER NOT NULL DEFAULT 0, mtime_ms REAL NOT NULL DEFAULT 0, offset INTEGER NOT NULL DEFAULT 0,
        state TEXT, scanned_at INTEGER NOT NULL DEFAULT 0);
      INSERT INTO history_files (path, tool) VALUES ('/gone.jsonl', 'codex');
      CREATE TABLE history (key TEXT PRIMARY KEY, tool TEXT NOT NULL, path TEXT NOT NULL, ts INTEGER NOT NULL,
        total_tokens INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID;
      INSERT INTO history VALUES ('x:old', 'codex', '/gone.jsonl', 1, 5);
      CREATE INDEX history_path ON history (path);`)
    store.close()
    store = await HistoryStore.open(join(home, 'logs.db'))
    const objects = store.db
      .prepare(`SELECT type, name FROM sqlite_master WHERE name LIKE 'history%' ORDER BY name`)
      .all()
    expect(objects).toEqual([
      {type: 'view', name: 'history'},
      {type: 'table', name: 'history_cursor_snapshot'},
      {type: 'index', name: 'history_file'},
      {type: 'table', name: 'history_files'},
      {type: 'trigger', name: 'history_files_delete'},
      {type: 'trigger', name: 'history_files_insert'},
      {type: 'trigger', name: 'history_files_update'},
      {type: 'index', name: 'history_key'},
      {type: 'table', name: 'history_rows'},
      {type: 'index', name: 'history_side_message'},
    ])
    expect(store.db.prepare('SELECT COUNT(*) AS n FROM history_files').get()).toEqual({n: 0})
    // The snapshot of the dropped cursors went with them (it would say every file is unchanged).
    expect(store.db.prepare('SELECT COUNT(*) AS n FROM history_cursor_snapshot').get()).toEqual({n: 0})
    expect(totalsByToolDay(store)).toEqual({})
    // No cursor left: the next scan reads every file whole and counts the same.
    expect((await scanHistory(store, {env})).filesRead).toBe(5)
    expect(totalsByToolDay(store)).toEqual(before)
  })

  it('converts the rows of the keyed layout (WITHOUT ROWID) into a rowid table once, cursors kept: nothing read again', async () => {
    writeFixtureHistory(env.HOME!)
    await scanHistory(store, {env})
    const before = totalsByToolDay(store)
    const rows = () => store.db.prepare(`SELECT * FROM history_rows ORDER BY key`).all()
    const held = rows()
    const cursors = store.db.prepare('SELECT * FROM history_files ORDER BY id').all()
    // The layout before 26 November 2026: the rows keyed by `key`, no `history_key` index.
    store.db
      .exec(`DROP VIEW history; DROP INDEX history_key; DROP INDEX history_file; DROP INDEX history_side_message;
      ALTER TABLE history_rows RENAME TO old_rows;
      CREATE TABLE history_rows (${HISTORY_COLUMNS.replace('key TEXT NOT NULL,', 'key TEXT PRIMARY KEY,')}) WITHOUT ROWID;
      INSERT INTO history_rows SELECT * FROM old_rows; DROP TABLE old_rows;
      CREATE INDEX history_file ON history_rows (file);
      CREATE INDEX history_side_message ON history_rows (message_id) WHERE sidechain = 1;
      ${HISTORY_VIEW}`)
    const layout = () =>
      store.db.prepare(`SELECT sql FROM sqlite_master WHERE name = 'history_rows'`).pluck().get() as string
    expect(layout()).toMatch(/WITHOUT ROWID/)
    store.close()
    store = await HistoryStore.open(join(home, 'logs.db'))
    expect(layout()).not.toMatch(/WITHOUT ROWID/)
    expect(
      store.db
        .prepare(
          `SELECT name FROM sqlite_master WHERE tbl_name = 'history_rows' AND type = 'index' ORDER BY name`,
        )
        .pluck()
        .all(),
    ).toEqual(['history_file', 'history_key', 'history_side_message'])
    expect(rows()).toEqual(held)
    expect(store.db.prepare('SELECT * FROM history_files ORDER BY id').all()).toEqual(cursors)
    expect(totalsByToolDay(store)).toEqual(before)
    // A key stays unique, and the next scan reads nothing (every cursor was kept).
    expect(() =>
      store.db
        .prepare('INSERT INTO history_rows (key, file, ts) SELECT key, file, ts FROM history_rows LIMIT 1')
        .run(),
    ).toThrow(/UNIQUE/)
    expect((await scanHistory(store, {env})).filesRead).toBe(0)
    // Once: the next open finds the layout current and copies nothing.
    const pages = store.db.pragma('page_count', {simple: true})
    store.close()
    store = await HistoryStore.open(join(home, 'logs.db'))
    expect(store.db.pragma('page_count', {simple: true})).toBe(pages)
    expect(rows()).toEqual(held)
  })

  it('numbers files once: a full rescan keeps the numbers, gives new files free ones, and swaps nothing on a clash', async () => {
    writeFixtureHistory(env.HOME!)
    await scanHistory(store, {env})
    const numbers = () =>
      store.db.prepare('SELECT id, path FROM history_files ORDER BY path').all() as Array<{
        id: number
        path: string
      }>
    const before = numbers()
    expect(new Set(before.map((f) => f.id)).size).toBe(5)
    await scanHistory(store, {env, full: true})
    expect(numbers()).toEqual(before)
    // Every row names a file that has a cursor.
    const orphans = store.db
      .prepare('SELECT COUNT(*) AS n FROM history_rows WHERE file NOT IN (SELECT id FROM history_files)')
      .get()
    expect(orphans).toEqual({n: 0})

    // A new file, and (as if another process had numbered a file meanwhile) its number taken.
    const extra = join(env.HOME!, '.codex', 'sessions', '2025', '09', '01', 'rollout-extra.jsonl')
    mkdirSync(join(extra, '..'), {recursive: true})
    writeFileSync(
      extra,
      [
        {timestamp: '2025-09-01T00:00:00.000Z', type: 'session_meta', payload: {id: 'sx', cwd: '/w'}},
        {
          timestamp: '2025-09-01T00:00:01.000Z',
          type: 'event_msg',
          payload: {type: 'token_count', info: {last_token_usage: {input_tokens: 10, output_tokens: 5}}},
        },
      ]
        .map((l) => JSON.stringify(l))
        .join('\n') + '\n',
    )
    const totals = totalsByToolDay(store)
    store.db
      .prepare(`INSERT INTO history_files (id, path, tool) VALUES (999999, '/gone.jsonl', 'codex')`)
      .run()
    const held = numbers()
    const newFileIds = store.newFileIds.bind(store)
    store.newFileIds = () => 999999
    await expect(scanHistory(store, {env, full: true})).rejects.toThrow(
      /changed during the rescan.*run it again/,
    )
    expect(numbers()).toEqual(held)
    expect(totalsByToolDay(store)).toEqual(totals)
    expect(readdirSync(home).filter((n) => n.includes('.rescan-'))).toEqual([])
    store.newFileIds = newFileIds
    await scanHistory(store, {env, full: true})
    const after = numbers()
    expect(after.filter((f) => f.path !== extra)).toEqual(held)
    expect(after.find((f) => f.path === extra)!.id).toBeGreaterThan(999999)
    expect(totalsByToolDay(store).codex['2025-09-01']).toMatchObject({requests: 1, totalTokens: 15})
  })

  it('skips the parent token_counts a thread_spawn sub-agent rollout replays in its first second', async () => {
    const dir = join(home, 'user-home', '.codex', 'sessions', '2025', '09', '01')
    mkdirSync(dir, {recursive: true})
    const tc = (timestamp: string, input: number, output: number, cumulative: number) =>
      JSON.stringify({
        timestamp,
        type: 'event_msg',
        payload: {
          type: 'token_count',
          info: {
            last_token_usage: {
              input_tokens: input,
              cached_input_tokens: 0,
              output_tokens: output,
              total_tokens: input + output,
            },
            total_token_usage: {
              input_tokens: cumulative,
              cached_input_tokens: 0,
              output_tokens: 0,
              total_tokens: cumulative,
            },
          },
        },
      })
    const meta = (id: string, timestamp: string, source: unknown) =>
      JSON.stringify({timestamp, type: 'session_meta', payload: {id, timestamp, cwd: '/w', source}})
    const parent = [
      meta('parent-1', '2025-09-01T10:00:00.000Z', 'cli'),
      tc('2025-09-01T10:00:05.000Z', 100, 10, 110),
    ]
    const child = [
      meta('child-1', '2025-09-01T10:00:06.000Z', {
        subagent: {thread_spawn: {parent_thread_id: 'parent-1', depth: 1}},
      }),
      // The parent's count, replayed 0.2 s after the spawn: already counted in the parent's file.
      tc('2025-09-01T10:00:06.200Z', 100, 10, 110),
      // The sub-agent's own response, later: counted.
      tc('2025-09-01T10:00:09.000Z', 7, 3, 10),
    ]
    writeFileSync(join(dir, 'rollout-2025-09-01T10-00-00-parent.jsonl'), parent.join('\n') + '\n')
    writeFileSync(join(dir, 'rollout-2025-09-01T10-00-06-child.jsonl'), child.join('\n') + '\n')
    const stats = await scanHistory(store, {env, tools: ['codex']})
    expect(stats.skipped.replay).toBe(1)
    const rows = store.db
      .prepare('SELECT session, input_tokens AS i, output_tokens AS o FROM history ORDER BY ts')
      .all()
    expect(rows).toEqual([
      {session: 'parent-1', i: 100, o: 10},
      {session: 'child-1', i: 7, o: 3},
    ])
    // The rule survives an incremental scan: the sub-agent's state is kept with its cursor.
    appendFileSync(
      join(dir, 'rollout-2025-09-01T10-00-06-child.jsonl'),
      tc('2025-09-01T10:00:09.500Z', 1, 1, 12) + '\n',
    )
    await scanHistory(store, {env, tools: ['codex']})
    expect(store.db.prepare('SELECT COUNT(*) AS n FROM history').get()).toEqual({n: 3})
  })
})

describe("the parsers' line tests and time stamps", () => {
  const claude = claudeParser({path: 'p', keyPath: 'p', project: null}).holds
  const ask = (holds: (line: string) => boolean, text: string) => holds(text)

  it('says yes exactly to the lines whose text holds a marker, wherever and however often it occurs', () => {
    // Claude: `"usage":{` or `"usage": {`, searched from the end, past other `"usage":` runs.
    for (const [text, yes] of [
      ['"usage":{"a":1}', true],
      ['"usage": {"a":1}', true],
      ['{"usage":  {"a":1}}', false],
      ['{"usage":null,"x":"\\"usage\\":"}', false],
      ['{"m":{"usage":{"a":1}},"t":"\\"usage\\": null","u":"\\"usage\\":"}', true],
      ['{"usage":{"a":1},"x":"\\"usage\\": 1","y":"\\"usage\\":"}', true],
      ['"usage":', false],
      ['"usage": ', false],
      ['{"text":"caf\u00e9 \u3000","usage":{}}', true],
      ['', false],
    ] as const) {
      expect(ask(claude, text), text).toBe(yes)
      expect(text.includes('"usage":{') || text.includes('"usage": {'), text).toBe(yes)
    }
    const codex = codexParser({path: 'p', keyPath: 'p', project: null}).holds
    const gemini = geminiParser({path: 'p', keyPath: 'p', project: null}).holds
    expect(ask(codex, '{"type":"event_msg","payload":{"type":"token_count"}}')).toBe(true)
    expect(ask(codex, '{"type":"response_item","payload":{"text":"token count"}}')).toBe(false)
    expect(ask(codex, '{"x":1,"type":"token_usage_record"}')).toBe(true)
    expect(ask(gemini, '{"sessionId":"s","kind":"main"}')).toBe(true)
    expect(ask(gemini, '{"type":"gemini","content":"x","tokens":{"input":1}}')).toBe(true)
    expect(ask(gemini, '{"type":"user","content":"some tokens"}')).toBe(false)
    // Markers are literal text, not patterns.
    const odd = holdsOneOf(['a.b', '(x|y)'])
    expect([odd('a.b'), odd('axb'), odd('(x|y)'), odd('x')]).toEqual([true, false, true, false])
  })

  it("reads Claude Code 2.1.3xx's thinking tokens as the reasoning, never more than the output", () => {
    const parse = claudeParser({path: 'p', keyPath: 'p', project: null})
    const line = (details: unknown) =>
      JSON.stringify({
        timestamp: '2026-11-27T10:00:00.000Z',
        sessionId: 's',
        requestId: 'req_1',
        message: {
          id: 'msg_1',
          model: 'claude-opus-5-5',
          usage: {input_tokens: 10, output_tokens: 40, output_tokens_details: details},
        },
      })
    const reasoning = (details: unknown) =>
      (parse.line(line(details), 0) as {reasoningTokens: number}).reasoningTokens
    expect(reasoning({thinking_tokens: 25})).toBe(25)
    expect(reasoning({thinking_tokens: 90})).toBe(40)
    expect(reasoning(undefined)).toBe(0)
    expect(reasoning({thinking_tokens: 'x'})).toBe(0)
  })

  it('reads time stamps exactly as Date.parse does', () => {
    const samples = [
      '2025-08-01T00:00:00.000Z',
      '2024-02-29T23:59:59.999Z',
      '2025-02-29T12:00:00.000Z',
      '2025-04-31T12:00:00.000Z',
      '2025-12-31T23:59:59.999Z',
      '2025-01-01T24:00:00.000Z',
      '2025-01-01T23:60:00.000Z',
      '2025-01-01T23:59:60.000Z',
      '2025-13-01T00:00:00.000Z',
      '2025-00-10T00:00:00.000Z',
      '2025-01-00T00:00:00.000Z',
      '2025-01-32T00:00:00.000Z',
      '2025-02-31T00:00:00.000Z',
      '0999-01-01T00:00:00.000Z',
      '0025-01-01T00:00:00.000Z',
      '2025-01-01T00:00:00.000+',
      '2025-01-01T00:00:00Z',
      '2025-01-01T00:00:00.000+02:00',
      '2025-01-01 00:00:00.000Z',
      '2025-0a-01T00:00:00.000Z',
      '2025-01-01T00:00:00.00aZ',
      '2025-08-01',
      'not a date',
      '',
    ]
    // and one stamp every 7 hours 13 minutes 17.123 seconds over two years, every day of the month
    for (let t = Date.UTC(2024, 0, 1); t < Date.UTC(2026, 0, 1); t += 25_997_123)
      samples.push(new Date(t).toISOString())
    // every day from 1000 to 2999 (leap years and centuries), and the 29th-31st of each month
    for (let t = Date.UTC(1000, 0, 1); t < Date.UTC(3000, 0, 1); t += 86_400_000 + 3_599_001)
      samples.push(new Date(t).toISOString())
    for (const y of [1900, 2000, 2023, 2024, 2100])
      for (let m = 1; m <= 12; m++)
        for (const d of [29, 30, 31]) samples.push(`${y}-${String(m).padStart(2, '0')}-${d}T00:00:00.000Z`)
    const differ = samples.filter((s) => !Object.is(parseTime(s), Date.parse(s)))
    expect(differ).toEqual([])
    expect(samples.length).toBeGreaterThan(700_000)
  })
})
