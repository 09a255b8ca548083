import {appendFileSync, existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync} from 'node:fs'
import Database from 'better-sqlite3'
import {dirname, join} from 'node:path'

import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {scanHistory} from '../src/agent-tools/history/scan.js'
import {HistoryStore} from '../src/store/history-store.js'
import {HISTORY_VIEW, KEYED_COLUMNS} from '../src/store/history-schema.js'
import {LogStore} from '../src/store/log-store.js'
import {json, runCli, spawnCli, tempHome} from './helpers/cli.js'
import {EXPECTED, writeFixtureHistory} from './helpers/history.js'

describe('gwctl usage from agent history', () => {
  let home: {home: string; cleanup: () => void}
  beforeEach(() => {
    home = tempHome()
    writeFixtureHistory(join(home.home, 'user-home'))
  })
  afterEach(() => home.cleanup())
  const cli = (args: string[]) => runCli(args, {home: home.home})

  it('rescan --json reports what it read; usage --source history --pivot day matches the expected totals per tool', async () => {
    const rescan = await cli(['usage', 'rescan', '--json'])
    expect(rescan.exitCode).toBe(0)
    // rows: the rows held from these files; duplicates: copies of a response already counted
    // (two Claude content-block lines, a rewritten Gemini message, a repeated Codex total).
    expect(json(rescan)).toMatchObject({files: 5, filesRead: 5, rows: 8, errors: []})
    expect(json(rescan).skipped).toMatchObject({
      'invalid-json': 1,
      'invalid-field': 1,
      replay: 1,
      duplicate: 4,
    })

    for (const [tool, days] of Object.entries(EXPECTED)) {
      const r = await cli(['usage', '--source', 'history', '--tool', tool, '--pivot', 'day', '--json'])
      expect(r.exitCode).toBe(0)
      const rows = json(r).rows as Array<Record<string, unknown>>
      expect(rows.map((x) => x.key)).toEqual(Object.keys(days))
      for (const row of rows) {
        expect(row).toMatchObject({...days[row.key as string], errors: 0, fallbacks: 0})
        // Every fixture model is in the price table.
        expect(row.costUSD).toBeGreaterThan(0)
        expect(row.unpricedModels).toEqual([])
      }
    }
  })

  it('usage without a daemon scans once before answering and reports that scan', async () => {
    // the first call reads every file; its report says so (a second scan in the same call read
    // nothing and reported that instead)
    const first = await cli(['usage', '--json'])
    expect(first.exitCode, first.stderr).toBe(0)
    expect(json(first).scan).toMatchObject({files: 5, filesRead: 5, rows: 8})
    expect(json(first).totals.requests).toBeGreaterThan(0)
    const second = await cli(['usage', '--json'])
    expect(json(second).scan).toMatchObject({files: 5, filesRead: 0, rows: 0})
    expect(json(second).totals).toEqual(json(first).totals)
  })

  it('rescan --incremental reads nothing after a rescan, then exactly the file an agent appended to', async () => {
    expect((await cli(['usage', 'rescan', '--json'])).exitCode).toBe(0)
    // The no-change scan reads the cursors from their snapshot, which the rescan wrote.
    const again = await cli(['usage', 'rescan', '--incremental', '--json'])
    expect(again.exitCode).toBe(0)
    expect(json(again)).toMatchObject({files: 5, filesRead: 0, rows: 0})
    const claude = join(home.home, 'user-home', '.claude', 'projects', '-work-repo', 'sess-claude-1.jsonl')
    // (after the fixture's unfinished last line, which the newline ends: an invalid line)
    appendFileSync(
      claude,
      '\n' +
        JSON.stringify({
          type: 'assistant',
          isSidechain: false,
          sessionId: 'sess-claude-1',
          message: {
            id: 'msg_appended',
            model: 'claude-sonnet-4-20250514',
            usage: {input_tokens: 7, output_tokens: 5},
          },
          requestId: 'req_appended',
          timestamp: '2025-08-22T08:00:00.000Z',
        }) +
        '\n',
    )
    const third = await cli(['usage', 'rescan', '--incremental', '--json'])
    expect(json(third)).toMatchObject({files: 5, filesRead: 1, rows: 1})
    const day = await cli([
      'usage',
      '--source',
      'history',
      '--tool',
      'claude-code',
      '--pivot',
      'day',
      '--json',
    ])
    const rows = json(day).rows as Array<Record<string, unknown>>
    expect(rows.find((r) => r.key === '2025-08-22')).toMatchObject({requests: 1, totalTokens: 12})
    expect(json(await cli(['usage', 'rescan', '--incremental', '--json']))).toMatchObject({filesRead: 0})
  })

  it('--source all counts a Gemini CLI call the gateway logged once (matched by time, as reconcile does)', async () => {
    const logs = await LogStore.open(join(home.home, 'logs.db'))
    const call = (time: string, requestId: string) =>
      logs.append({
        time: Date.parse(`2025-08-21T${time}Z`),
        agentId: 'agt_1',
        keyPrefix: 'gwk_1',
        policyId: 'default',
        entrance: 'gemini',
        requestedModel: null,
        provider: 'sim',
        model: 'gemini-2.5-pro',
        status: 200,
        fallback: false,
        inputTokens: 7,
        outputTokens: 3,
        cacheReadTokens: 0,
        cacheCreationTokens: 0,
        reasoningTokens: 0,
        latencyMs: 1,
        ttfbMs: 1,
        error: null,
        project: null,
        requestId,
      })
    call('12:00:03', 'g-answer') // the fixture's m1 (history 12:00:02)
    call('12:05:01', 'g-m2') // m2 (history 12:05:00)
    call('18:00:00', 'g-internal') // nothing in the history near it
    logs.close()
    const requests = async (source: string) => {
      const r = json(await cli(['usage', '--source', source, '--tool', 'gemini-cli', '--json']))
      return r.totals.requests as number
    }
    expect(await requests('gateway')).toBe(3)
    expect(await requests('history')).toBe(3)
    // 3 gateway calls + 3 history rows, 2 of them the same calls
    expect(await requests('all')).toBe(4)
    const reconcile = json(
      await cli(['usage', 'reconcile', '--since', '1', '--tool', 'gemini-cli', '--json']),
    )
    const byTime = reconcile.days.reduce((n: number, d: {matchedByTime: number}) => n + d.matchedByTime, 0)
    expect(byTime).toBe(2)
  })

  it('folds days in --timezone, pivots by session and tool, and rejects an unknown zone', async () => {
    const ny = await cli([
      'usage',
      '--source',
      'history',
      '--tool',
      'claude-code',
      '--pivot',
      'day',
      '--timezone',
      'America/New_York',
      '--json',
    ])
    expect(json(ny).rows).toMatchObject([{key: '2025-08-20', requests: 2, totalTokens: 190}])

    const sessions = json(await cli(['usage', '--pivot', 'session', '--json']))
    expect(sessions.rows.map((r: {key: string}) => r.key).sort()).toEqual(
      ['sess-claude-1', 'sess-codex-1', 'sess-gemini-1', 'sess-gemini-old', null].sort(),
    )
    const tools = json(await cli(['usage', '--pivot', 'tool', '--json']))
    expect(
      Object.fromEntries(tools.rows.map((r: {key: string; requests: number}) => [r.key, r.requests])),
    ).toEqual({
      'claude-code': 2,
      codex: 3,
      'gemini-cli': 3,
    })
    expect(tools.totals.requests).toBe(8)

    const table = await cli(['usage', '--pivot', 'tool'])
    expect(table.stdout.split('\n')[0].split(/\s{2,}/)).toEqual([
      'TOOL',
      'REQUESTS',
      'ERRORS',
      'INPUT',
      'OUTPUT',
      'CACHE READ',
      'CACHE WRITE',
      'REASONING',
      'TOTAL',
      'COST',
    ])

    const bad = await cli(['usage', '--pivot', 'day', '--timezone', 'Mars/Olympus'])
    expect(bad.exitCode).toBe(2)
    expect(bad.stderr).toContain('not a time zone')
  })
})

/**
 * About 12 MB of history (enough for the staged rescan's two reader threads), with copies of the
 * same responses in the first and the last files, so the dedup rules must hold across threads.
 */
function writeLargeHistory(userHome: string): void {
  const pad = 'y'.repeat(400)
  const write = (path: string, lines: unknown[]) => {
    mkdirSync(dirname(path), {recursive: true})
    writeFileSync(path, lines.map((l) => JSON.stringify(l)).join('\n') + '\n')
  }
  const ts = (f: number, i: number) => new Date(Date.UTC(2025, 8, 1) + f * 3_600_000 + i * 1000).toISOString()
  const claude = (f: number, i: number, msg: string, output: number, sidechain = false) => ({
    isSidechain: sidechain,
    // one session moves to another folder, then goes on under another session id
    cwd: f === 4 && i >= 300 ? '/w/moved' : `/w/p${f % 3}`,
    sessionId: f === 4 && i >= 450 ? 's4-resumed' : `s${f}`,
    version: '1.0.85',
    type: 'assistant',
    message: {
      id: msg,
      // now and then another model in the same session
      model: f === 4 && i % 50 === 7 ? 'claude-haiku-4-5' : 'claude-sonnet-4-20250514',
      content: [{type: 'text', text: pad}],
      usage: {
        input_tokens: 5,
        output_tokens: output,
        cache_read_input_tokens: 100,
        cache_creation_input_tokens: 10,
      },
    },
    requestId: `req_${msg}`,
    timestamp: ts(f, i),
  })
  for (let f = 0; f < 30; f++) {
    const lines: unknown[] = []
    for (let i = 0; i < 600; i++) lines.push(claude(f, i, `m_${f}_${i}`, 10 + (i % 7)))
    // The same responses in the first and the last file: the larger copy wins, whichever is read last.
    if (f === 0 || f === 29) lines.push(claude(f, 900, 'shared_1', f === 0 ? 500 : 50))
    if (f === 0 || f === 29) lines.push(claude(f, 901, 'shared_2', f === 0 ? 50 : 500))
    // Equal copies: the earlier file's stays (whichever reader thread read it).
    if (f === 0 || f === 29) lines.push(claude(f, 903, 'shared_3', 70))
    // A `/btw` sidechain replay of the first file's message, in the last file: dropped.
    if (f === 29) lines.push({...claude(f, 902, 'm_0_1', 99, true), requestId: 'req_other'})
    // Copies in one file: the later larger one wins; an equal later one does not replace.
    if (f === 3) lines.push(claude(f, 950, 'm_3_7', 999), claude(f, 951, 'm_3_8', 10 + (8 % 7)))
    write(join(userHome, '.claude', 'projects', `-w-p${f % 3}`, `s${f}.jsonl`), lines)
  }
  for (let f = 0; f < 20; f++) {
    const lines: unknown[] = [
      {timestamp: ts(f, 0), type: 'session_meta', payload: {id: `cx${f}`, cwd: '/w/c'}},
      {timestamp: ts(f, 0), type: 'turn_context', payload: {model: 'gpt-5.2-codex'}},
    ]
    for (let i = 0; i < 300; i++) {
      lines.push({timestamp: ts(f, i), type: 'response_item', payload: {type: 'message', text: pad}})
      const u = (n: number) => ({
        input_tokens: n,
        cached_input_tokens: n / 2,
        output_tokens: 10,
        total_tokens: n + 10,
      })
      lines.push({
        timestamp: ts(f, i),
        type: 'event_msg',
        payload: {type: 'token_count', info: {last_token_usage: u(100), total_token_usage: u(100 * (i + 1))}},
      })
    }
    write(
      join(userHome, '.codex', 'sessions', '2025', '09', '01', `rollout-2025-09-01T00-00-${f}.jsonl`),
      lines,
    )
  }
  for (let f = 0; f < 20; f++) {
    // Two files of one session: the later file's copy of a message id wins.
    const lines: unknown[] = [{sessionId: f < 2 ? 'g-shared' : `g${f}`, kind: 'main'}]
    for (let i = 0; i < 300; i++) {
      lines.push({id: `u${i}`, timestamp: ts(f, i), type: 'user', content: pad})
      lines.push({
        id: `m${i}`,
        timestamp: ts(f, i),
        type: 'gemini',
        content: pad,
        model: 'gemini-2.5-pro',
        tokens: {input: 100 + f, output: 8, cached: 50, thoughts: 4, tool: 0, total: 112 + f},
      })
    }
    // A message rewritten later in the same file: the last copy wins.
    if (f === 5)
      lines.push({
        id: 'm7',
        timestamp: ts(f, 7),
        type: 'gemini',
        model: 'gemini-2.5-pro',
        tokens: {input: 1, output: 99, cached: 0, thoughts: 0, tool: 0, total: 100},
      })
    write(
      join(userHome, '.gemini', 'tmp', `proj${f % 2}`, 'chats', `session-2025-09-01T00-00-${f}.jsonl`),
      lines,
    )
  }
}

/** Every row, its file named by path (the two databases number files differently). */
const allRows = (store: HistoryStore) =>
  store.db
    .prepare('SELECT h.*, f.path AS file FROM history h JOIN history_files f ON f.id = h.file ORDER BY h.key')
    .all() as Array<Record<string, unknown>>

describe('gwctl usage rescan of a large history (staged, a pool of reader threads)', () => {
  let home: {home: string; cleanup: () => void}
  beforeEach(() => {
    home = tempHome()
    writeLargeHistory(join(home.home, 'user-home'))
  })
  afterEach(() => home.cleanup())
  const cli = (args: string[], env?: Record<string, string>) => runCli(args, {home: home.home, env})

  it.each([
    [
      'two readers, one scratch; a reader finding it taken reads on (the default)',
      2,
      {GWCTL_HISTORY_THREADS: '2'},
    ],
    // every file waits its turn to write
    [
      'two readers, one scratch; a reader waiting its turn with each file',
      2,
      {GWCTL_HISTORY_THREADS: '2', GWCTL_HISTORY_WAIT_ROWS: '1'},
    ],
    // the pool: worker threads beyond the cores of this machine, their scratches merged in one
    [
      'three readers, two scratches merged, turns taken with each file',
      3,
      {GWCTL_HISTORY_THREADS: '3', GWCTL_HISTORY_WAIT_ROWS: '1', GWCTL_HISTORY_GENERATIONS: '1'},
    ],
    [
      'three readers, each its own scratch, three merged',
      3,
      {GWCTL_HISTORY_THREADS: '3', GWCTL_HISTORY_SCRATCHES: '3', GWCTL_HISTORY_GENERATIONS: '1'},
    ],
    // generations: this thread merges each while the workers read the next (the default with
    // several scratches)
    [
      'two workers taking turns at one scratch a generation, eight generations merged as they end',
      3,
      {GWCTL_HISTORY_THREADS: '3', GWCTL_HISTORY_WAIT_ROWS: '1'},
    ],
    [
      'two workers, a scratch each a generation, three generations',
      3,
      {GWCTL_HISTORY_THREADS: '3', GWCTL_HISTORY_SCRATCHES: '2', GWCTL_HISTORY_GENERATIONS: '3'},
    ],
    [
      'two workers, a scratch each a generation, sixteen generations of four or five files',
      3,
      {GWCTL_HISTORY_THREADS: '3', GWCTL_HISTORY_SCRATCHES: '2', GWCTL_HISTORY_GENERATIONS: '16'},
    ],
    ['one reader (history.threads 1)', 1, {GWCTL_HISTORY_THREADS: '1'}],
  ] as Array<[string, number, Record<string, string>]>)(
    'holds exactly the rows the file-by-file scan writes, and leaves no scratch file: %s',
    async (_, readers, env) => {
      const rescan = await cli(['usage', 'rescan', '--json'], {GWCTL_HISTORY_SCRATCHES: '', ...env})
      expect(rescan.exitCode).toBe(0)
      const stats = json(rescan)
      expect(stats).toMatchObject({files: 70, filesRead: 70, errors: [], readers})
      // Claude: 3 copies across files, 2 within one; Gemini: 300 messages of the session split
      // over two files, 1 rewritten within one
      expect(stats.skipped).toMatchObject({duplicate: 306, replay: 1})
      expect(readdirSync(home.home).filter((n) => n.includes('.rescan-'))).toEqual([])

      const staged = await HistoryStore.open(join(home.home, 'logs.db'))
      const reference = await HistoryStore.open(join(home.home, 'reference.db'))
      try {
        await scanHistory(reference, {env: {HOME: join(home.home, 'user-home')}, staged: false})
        const rows = allRows(staged)
        expect(rows.length).toBe(30 * 600 + 3 + 20 * 300 + 18 * 300 + 300)
        expect(stats.rows).toBe(rows.length)
        expect(rows).toEqual(allRows(reference))
        const shared = staged.db
          .prepare("SELECT key, output_tokens FROM history WHERE key LIKE 'c:shared_%' ORDER BY key")
          .all()
        expect(shared).toEqual([
          {key: 'c:shared_1:req_shared_1', output_tokens: 500},
          {key: 'c:shared_2:req_shared_2', output_tokens: 500},
          {key: 'c:shared_3:req_shared_3', output_tokens: 70},
        ])
        const tie = rows.find((r) => r.key === 'c:shared_3:req_shared_3')!
        expect(tie.file).toMatch(/s0\.jsonl$/)
        // copies in one file: the later larger one, the earlier of equal ones, Gemini's last one
        const row = (key: string) => rows.find((r) => r.key === key)!
        expect(row('c:m_3_7:req_m_3_7').output_tokens).toBe(999)
        expect(row('c:m_3_8:req_m_3_8').ts).toBe(Date.UTC(2025, 8, 1) + 3 * 3_600_000 + 8 * 1000)
        expect(rows.filter((r) => String(r.key).endsWith(':m7') && r.output_tokens === 99)).toHaveLength(1)
        const cursors = staged.db.prepare('SELECT COUNT(*) AS n FROM history_files').get()
        expect(cursors).toEqual({n: 70})
        // the indexes, under their names (built in the log database after a merge of several
        // scratches, else in the scratch and copied page by page)
        expect(
          staged.db
            .prepare(
              `SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'history_rows' ORDER BY name`,
            )
            .all(),
        ).toEqual([{name: 'history_file'}, {name: 'history_key'}, {name: 'history_side_message'}])
        expect(staged.db.pragma('integrity_check')).toEqual([{integrity_check: 'ok'}])
      } finally {
        staged.close()
        reference.close()
      }
      // Nothing changed since: an incremental scan reads nothing.
      expect(json(await cli(['usage', 'rescan', '--incremental', '--json']))).toMatchObject({
        filesRead: 0,
        rows: 0,
      })
    },
  )

  /** The phases a rescan run with GWCTL_HISTORY_MARKS=1 wrote to stderr, in order. */
  const phases = (stderr: string) =>
    Object.keys(
      (
        JSON.parse(stderr.split('\n').find((l) => l.startsWith('{"historyPhases"')) ?? '{}') as {
          historyPhases?: object
        }
      ).historyPhases ?? {},
    )
  const reference = async (scan: () => Promise<unknown>) => {
    const store = await HistoryStore.open(join(home.home, 'reference.db'))
    try {
      await scan()
      await scanHistory(store, {env: {HOME: join(home.home, 'user-home')}, staged: false})
      return allRows(store)
    } finally {
      store.close()
    }
  }
  const rowsOf = async () => {
    const store = await HistoryStore.open(join(home.home, 'logs.db'))
    try {
      expect(store.db.pragma('integrity_check')).toEqual([{integrity_check: 'ok'}])
      return allRows(store)
    } finally {
      store.close()
    }
  }
  const threeScratches = {
    GWCTL_HISTORY_THREADS: '3',
    GWCTL_HISTORY_SCRATCHES: '3',
    GWCTL_HISTORY_GENERATIONS: '1',
    GWCTL_HISTORY_MARKS: '1',
  }

  it('merges several scratches straight into the log database alone, through one merged scratch beside a reader, exactly both ways', async () => {
    const expected = await reference(async () => undefined)
    // Another connection holds the log database open (a daemon would): the scratches are merged
    // into one outside the write lock, which is then copied.
    expect((await cli(['usage', 'rescan', '--incremental', '--json', '--tool', 'codex'])).exitCode).toBe(0)
    const other = new Database(join(home.home, 'logs.db'), {readonly: true})
    try {
      other.prepare('SELECT count(*) FROM history_files').get()
      const beside = await cli(['usage', 'rescan', '--json'], threeScratches)
      expect(beside.exitCode).toBe(0)
      expect(json(beside)).toMatchObject({readers: 3, filesRead: 70, skipped: {duplicate: 306, replay: 1}})
      expect(phases(beside.stderr)).toEqual(['read', 'merge', 'index', 'copy', 'swap'])
    } finally {
      other.close()
    }
    expect(await rowsOf()).toEqual(expected)
    // Alone: merged in the log database's transaction, each row written once, no copy.
    const alone = await cli(['usage', 'rescan', '--json'], threeScratches)
    expect(json(alone)).toMatchObject({readers: 3, filesRead: 70, skipped: {duplicate: 306, replay: 1}})
    expect(phases(alone.stderr)).toEqual(['read', 'merge', 'index', 'swap'])
    expect(await rowsOf()).toEqual(expected)
    expect(readdirSync(home.home).filter((n) => n.includes('.rescan-') || n.endsWith('-journal'))).toEqual([])
  })

  it('merges generations while the workers read, into one scratch copied page by page, alone or not, exactly', async () => {
    const expected = await reference(async () => undefined)
    const generations = {...threeScratches, GWCTL_HISTORY_GENERATIONS: '4'}
    const marks = (stderr: string) =>
      JSON.parse(stderr.split('\n').find((l) => l.startsWith('{"historyPhases"')) ?? '{}') as Record<
        string,
        number
      >
    for (const beside of [false, true]) {
      const other = beside ? new Database(join(home.home, 'logs.db'), {readonly: true}) : undefined
      try {
        other?.prepare('SELECT count(*) FROM history_files').get()
        const run = await cli(['usage', 'rescan', '--json'], generations)
        expect(run.exitCode).toBe(0)
        expect(json(run)).toMatchObject({readers: 3, filesRead: 70, skipped: {duplicate: 306, replay: 1}})
        expect(phases(run.stderr)).toEqual(['read', 'merge', 'index', 'copy', 'swap'])
        // this thread merges: two workers, a scratch each a generation; the last merged after them
        expect(marks(run.stderr)).toMatchObject({readers: 3, scratches: 2, generations: 4})
        expect(marks(run.stderr).pipelined).toBeLessThan(4)
      } finally {
        other?.close()
      }
      expect(await rowsOf()).toEqual(expected)
    }
    expect(readdirSync(home.home).filter((n) => n.includes('.rescan-') || n.endsWith('-journal'))).toEqual([])
  })

  it('keeps the rows of deleted files through a merge of several scratches, by the same rules as the file-by-file scan', async () => {
    expect((await cli(['usage', 'rescan', '--json'], threeScratches)).exitCode).toBe(0)
    // the last Claude file (copies of the first file's responses, a `/btw` replay), a Codex and a
    // Gemini file go; their rows stay, the first file's copies meet the kept ones
    const userHome = join(home.home, 'user-home')
    const gone = [
      join(userHome, '.claude', 'projects', '-w-p2', 's29.jsonl'),
      join(userHome, '.codex', 'sessions', '2025', '09', '01', 'rollout-2025-09-01T00-00-4.jsonl'),
      join(userHome, '.gemini', 'tmp', 'proj1', 'chats', 'session-2025-09-01T00-00-7.jsonl'),
    ]
    const expected = await reference(async () => {
      const store = await HistoryStore.open(join(home.home, 'reference.db'))
      await scanHistory(store, {env: {HOME: userHome}, staged: false})
      store.close()
      for (const path of gone) rmSync(path)
    })
    const again = await cli(['usage', 'rescan', '--json'], threeScratches)
    expect(json(again)).toMatchObject({readers: 3, filesRead: 67, errors: []})
    expect(phases(again.stderr)).toEqual(['read', 'merge', 'index', 'swap'])
    const rows = await rowsOf()
    expect(rows).toEqual(expected)
    expect(rows.filter((r) => String(r.file).endsWith('s29.jsonl')).length).toBeGreaterThan(500)
  })

  it('killed while it merges several scratches straight into the log database, leaves it as it was', async () => {
    expect((await cli(['usage', 'rescan', '--json', '--tool', 'codex'])).exitCode).toBe(0)
    const before = await rowsOf()
    expect(before.length).toBe(20 * 300)
    const journal = join(home.home, 'logs.db-journal')
    // The journal appears with the swap transaction's first write (the merge is its first
    // part) and goes with its commit: a kill while it is there must leave the rows as they were.
    let hit = false
    for (let attempt = 0; attempt < 8 && !hit; attempt++) {
      const child = spawnCli(['usage', 'rescan', '--json'], {home: home.home, env: threeScratches})
      let exited = false
      void child.finally(() => (exited = true))
      while (!exited && !existsSync(journal)) await new Promise((r) => setTimeout(r, 1))
      child.kill('SIGKILL')
      await child
      hit = existsSync(journal)
      const rows = await rowsOf()
      if (hit) expect(rows).toEqual(before)
      else if (rows.length !== before.length) {
        // the kill came after the commit: the whole rescan is in; start again from codex only
        expect(rows.length).toBe(30 * 600 + 3 + 20 * 300 + 18 * 300 + 300)
        for (const name of ['logs.db', 'logs.db-wal', 'logs.db-shm'])
          rmSync(join(home.home, name), {force: true})
        expect((await cli(['usage', 'rescan', '--json', '--tool', 'codex'])).exitCode).toBe(0)
      }
    }
    expect(hit).toBe(true)
    // (a kill just as the journal was created leaves one that is not hot: ignored, and gone with
    // the next rescan's transaction)
    const again = await cli(['usage', 'rescan', '--json'], threeScratches)
    expect(json(again)).toMatchObject({filesRead: 70, errors: [], readers: 3})
    expect(readdirSync(home.home).filter((n) => n.includes('.rescan-') || n.endsWith('-journal'))).toEqual([])
  })

  it('converts a keyed rows table to the rowid layout once at open; killed while it copies, leaves the old table whole', async () => {
    expect((await cli(['usage', 'rescan', '--json'])).exitCode).toBe(0)
    const path = join(home.home, 'logs.db')
    // The layout before: rows keyed by `key` (WITHOUT ROWID), padded to 100 MB so that the copy
    // outgrows the page cache and spills into the WAL before its commit (a kill can land in it).
    const db = new Database(path)
    db.exec(`DROP VIEW history; DROP INDEX history_key; DROP INDEX history_file; DROP INDEX history_side_message;
      ALTER TABLE history_rows RENAME TO old_rows;
      CREATE TABLE history_rows (${KEYED_COLUMNS}) WITHOUT ROWID;
      INSERT INTO history_rows SELECT * FROM old_rows; DROP TABLE old_rows;
      WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 150000)
        INSERT INTO history_rows (key, file, ts, project) SELECT 'g:pad:' || i, 999999, i, printf('%.600c', 'p') FROM n;
      CREATE INDEX history_file ON history_rows (file);
      CREATE INDEX history_side_message ON history_rows (message_id) WHERE sidechain = 1;
      ${HISTORY_VIEW}`)
    const summary = (d: Database.Database) => ({
      layout: d
        .prepare(`SELECT sql LIKE '%WITHOUT ROWID%' FROM sqlite_master WHERE name = 'history_rows'`)
        .pluck()
        .get(),
      rows: d
        .prepare(
          `SELECT count(*) AS n, total(ts) AS ts, total(input_tokens + output_tokens) AS tokens,
            sum(length(project)) AS p, min(key) AS lo, max(key) AS hi FROM history_rows`,
        )
        .get(),
      integrity: d.pragma('integrity_check', {simple: true}),
    })
    const before = summary(db)
    db.close()
    expect(before).toMatchObject({layout: 1, integrity: 'ok'})
    expect((before.rows as {n: number}).n).toBeGreaterThan(150_000)
    const wal = join(home.home, 'logs.db-wal')
    let hit = false
    for (let attempt = 0; attempt < 4 && !hit; attempt++) {
      const child = spawnCli(['usage', 'rescan', '--incremental', '--json'], {home: home.home})
      let exited = false
      void child.finally(() => (exited = true))
      while (!exited && !(existsSync(wal) && statSync(wal).size > 8 << 20))
        await new Promise((r) => setTimeout(r, 2))
      hit = !exited
      child.kill('SIGKILL')
      await child
      const after = new Database(path)
      try {
        const now = summary(after)
        // all or nothing: the old table whole, or the new one with every row
        expect(now.rows).toEqual(before.rows)
        expect(now.integrity).toBe('ok')
        if (hit) expect(now.layout).toBe(1)
        else break
      } finally {
        after.close()
      }
    }
    expect(hit).toBe(true)
    // The next open converts it, keeping every row and cursor: the scan reads nothing.
    const done = await cli(['usage', 'rescan', '--incremental', '--json'])
    expect(json(done)).toMatchObject({filesRead: 0, errors: []})
    const converted = new Database(path)
    try {
      expect(summary(converted)).toEqual({...before, layout: 0})
    } finally {
      converted.close()
    }
  })

  it('refuses a history.threads that is not a positive integer: exit 3 naming the setting, nothing read', async () => {
    const bad = await cli(['usage', 'rescan', '--json'], {GWCTL_HISTORY_THREADS: '0'})
    expect(bad.exitCode).toBe(3)
    expect(json(bad).error).toMatchObject({
      code: 'invalid_history_threads',
      message: 'GWCTL_HISTORY_THREADS (setting "history.threads") must be a positive integer.',
    })
    expect(readdirSync(home.home).filter((n) => n.includes('.rescan-'))).toEqual([])
  })

  it('killed mid-rescan, leaves the database as it was; the next rescan removes the scratch files', async () => {
    expect((await cli(['usage', 'rescan', '--json', '--tool', 'codex'])).exitCode).toBe(0)
    const before = await HistoryStore.open(join(home.home, 'logs.db'))
    const codexRows = allRows(before)
    before.close()
    expect(codexRows.length).toBe(20 * 300)

    // three readers writing two scratch databases: the pool's threads die with the process
    const child = spawnCli(['usage', 'rescan', '--json'], {
      home: home.home,
      env: {GWCTL_HISTORY_THREADS: '3'},
    })
    // Kill as soon as the reader threads have started writing their scratch databases.
    const started = Date.now()
    while (!readdirSync(home.home).some((n) => n.includes('.rescan-')) && Date.now() - started < 20_000)
      await new Promise((r) => setTimeout(r, 5))
    child.kill('SIGKILL')
    await child
    const scratch = readdirSync(home.home).filter((n) => n.includes('.rescan-'))
    expect(scratch.length).toBeGreaterThan(0)

    const after = await HistoryStore.open(join(home.home, 'logs.db'))
    try {
      expect(after.db.pragma('integrity_check')).toEqual([{integrity_check: 'ok'}])
      expect(allRows(after)).toEqual(codexRows)
    } finally {
      after.close()
    }
    const again = await cli(['usage', 'rescan', '--json'])
    expect(json(again)).toMatchObject({filesRead: 70, errors: []})
    for (const name of scratch) expect(existsSync(join(home.home, name))).toBe(false)
  })
  it.each([
    ['reads beside two workers', {GWCTL_HISTORY_THREADS: '3', GWCTL_HISTORY_GENERATIONS: '1'}],
    ['merges the generations of two workers', {GWCTL_HISTORY_THREADS: '3', GWCTL_HISTORY_GENERATIONS: '8'}],
  ])(
    'stops at Ctrl-C while this thread %s: exit 130, the database as it was, no scratch file',
    async (_, env) => {
      expect((await cli(['usage', 'rescan', '--json', '--tool', 'codex'])).exitCode).toBe(0)
      const before = await HistoryStore.open(join(home.home, 'logs.db'))
      const codexRows = allRows(before)
      before.close()

      const child = spawnCli(['usage', 'rescan', '--json'], {home: home.home, env})
      const started = Date.now()
      while (!readdirSync(home.home).some((n) => n.includes('.rescan-')) && Date.now() - started < 20_000)
        await new Promise((r) => setTimeout(r, 5))
      child.kill('SIGINT')
      const result = await child
      expect(result.exitCode).toBe(130)
      expect(readdirSync(home.home).filter((n) => n.includes('.rescan-'))).toEqual([])
      const after = await HistoryStore.open(join(home.home, 'logs.db'))
      try {
        expect(allRows(after)).toEqual(codexRows)
      } finally {
        after.close()
      }
    },
  )
})
