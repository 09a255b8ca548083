/**
 * What a history row costs in the serial part of a full rescan, by row layout (issue 32): the
 * merge of several key-ordered scratches into one table and its file index (what
 * `HistoryStore.mergeScratch` does on one core after the readers), and what a full-history
 * aggregate costs a query on each layout. It generates `--mb` MB of history (bench/history.js),
 * runs the built `gwctl usage rescan` on it, and takes the rows and the table's definition from
 * that `logs.db` (either layout's build); the rows are split into `--scratches` scratches by file
 * (as the readers split them), each in key order, and merged `--rounds` times per layout,
 * interleaved, in one process:
 *
 * - `keyed`: a WITHOUT ROWID table keyed by `key` (the layout until 26 November 2026; the file
 *   index then holds `(file, key)`),
 * - `ids`: the same with model, session and project as numbers into a table of names (a query
 *   joins it),
 * - `rowid`: a rowid table with a UNIQUE index on the key (the layout since; the file index holds
 *   `(file, rowid)`),
 *
 * each with the strings as generated (short: `s12`, `/work/p3`, `msg_3_45:req_3_45`) and
 * `realistic` (the same rows with the lengths of a real Claude Code log: a UUID session, a 40-byte
 * cwd, random 28- and 29-byte message and request ids; keys then come in random order). Queries:
 * a sum by model and by day over a `keyed` table, a `rowid` table, the `ids` table through the
 * join, and the `keyed` rows as `--scratches` tables under a UNION ALL view (`parts`). CPU time of
 * this thread; no conflicts in generated rows, so the upsert's SET list does not matter here.
 * `node bench/history-rows.js [--mb 200] [--scratches 4] [--rounds 5] [--json]` (after `npm run build`).
 */
import Database from 'better-sqlite3'
import {spawnSync} from 'node:child_process'
import {createHash} from 'node:crypto'
import {mkdirSync, mkdtempSync, rmSync} from 'node:fs'
import {availableParallelism, loadavg, tmpdir} from 'node:os'
import {join} from 'node:path'

import {generate} from './history.js'

const ROOT = new URL('..', import.meta.url).pathname
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`)
  return i > 0 ? Number(process.argv[i + 1]) : fallback
}
const MB = arg('mb', 200)
const SCRATCHES = arg('scratches', 4)
const ROUNDS = arg('rounds', 5)

const cpuMs = () => {
  const c = process.cpuUsage()
  return (c.user + c.system) / 1000
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const hash = (s, n) => createHash('sha1').update(String(s)).digest('base64url').slice(0, n)

/** The rows of a real rescan of a generated history, and the rows table's column definitions. */
function rescanRows(dir) {
  const home = join(dir, 'home')
  generate(home, MB)
  const env = {...process.env, HOME: home, GWCTL_HOME: join(dir, 'gw')}
  for (const k of [
    'NODE_EXTRA_CA_CERTS',
    'XDG_CONFIG_HOME',
    'CLAUDE_CONFIG_DIR',
    'CODEX_HOME',
    'GEMINI_DATA_DIR',
  ])
    delete env[k]
  const r = spawnSync(process.execPath, [join(ROOT, 'bin', 'run.js'), 'usage', 'rescan', '--json'], {env})
  if (r.status !== 0)
    throw new Error(`gwctl usage rescan exited ${r.status}: ${String(r.stderr).slice(0, 500)}`)
  const db = new Database(join(dir, 'gw', 'logs.db'), {readonly: true})
  const sql = db.prepare(`SELECT sql FROM sqlite_master WHERE name = 'history_rows'`).pluck().get()
  // keyed by `key` (a build before the rowid table declares it the primary key already)
  const columns = sql
    .slice(sql.indexOf('(') + 1, sql.lastIndexOf(')'))
    .replace(/\bkey TEXT NOT NULL\b/, 'key TEXT PRIMARY KEY')
  const names = db.prepare('SELECT name FROM pragma_table_info(?)').pluck().all('history_rows')
  const rows = db.prepare('SELECT * FROM history_rows').raw().all()
  db.close()
  rmSync(home, {recursive: true, force: true})
  return {columns, names, rows}
}

/** The same rows with the string lengths of a real Claude Code log (keys stay unique). */
function realistic(rows, at) {
  return rows.map((r) => {
    const x = [...r]
    const key = r[at.key]
    if (key.startsWith('c:')) {
      const request = `req_011C${hash(`r${key}`, 20)}`
      x[at.key] = `c:msg_01${hash(key, 22)}:${request}`
      x[at.request_id] = request
    } else x[at.key] = `${key[0]}:${hash(key, 40)}:${key.slice(-6)}`
    const s = r[at.session]
    if (s !== null) x[at.session] = [8, 4, 4, 4, 12].map((n, i) => hash(`${s}${i}`, n)).join('-')
    if (r[at.project] !== null) x[at.project] = `/Users/someone/code/${hash(r[at.project], 14)}-project`
    if (r[at.model] === 'claude-sonnet-4-20250514') x[at.model] = 'claude-sonnet-4-5-20250929'
    return x
  })
}

const LAYOUTS = {
  keyed: (columns) => ({scratch: columns, next: columns, rowid: false}),
  ids: (columns) => {
    const ints = columns.replace(/\b(model|session|project) TEXT\b/g, '$1 INTEGER')
    return {scratch: ints, next: ints, rowid: false}
  },
  rowid: (columns) => ({
    scratch: columns,
    next: columns.replace(/\bkey TEXT PRIMARY KEY\b/, 'key TEXT NOT NULL'),
    rowid: true,
  }),
}

/** Writes `rows` as `SCRATCHES` key-ordered scratch databases of `layout` under `dir`. */
function writeScratches(dir, name, layout, rows, at, ids) {
  const paths = []
  for (let g = 0; g < SCRATCHES; g++) {
    const path = join(dir, `${name}-${g}.db`)
    const db = new Database(path)
    db.pragma('journal_mode = OFF')
    db.exec(`CREATE TABLE staged (${layout.scratch}) WITHOUT ROWID`)
    const insert = db.prepare(`INSERT INTO staged VALUES (${rows[0].map(() => '?').join(', ')})`)
    db.transaction(() => {
      for (const r of rows) {
        if (r[at.file] % SCRATCHES !== g) continue
        if (!ids) insert.run(r)
        else {
          const x = [...r]
          for (const c of ['model', 'session', 'project']) x[at[c]] = ids(r[at[c]])
          insert.run(x)
        }
      }
    })()
    db.close()
    paths.push(path)
  }
  return paths
}

/** One merge of the scratches into a new table, then its file index: CPU ms of each, and pages. */
function merge(dir, layout, paths) {
  const out = join(dir, 'out.db')
  rmSync(out, {force: true})
  const db = new Database(out)
  db.pragma('journal_mode = DELETE')
  db.pragma('cache_size = -262144')
  paths.forEach((p, i) => db.prepare(`ATTACH DATABASE ? AS s${i}`).run(p))
  const arms = paths.map((_, i) => `SELECT * FROM s${i}.staged`).join(' UNION ALL ')
  const t0 = cpuMs()
  db.transaction(() => {
    db.exec(`CREATE TABLE next (${layout.next})${layout.rowid ? '' : ' WITHOUT ROWID'};
      ${layout.rowid ? 'CREATE UNIQUE INDEX next_key ON next (key);' : ''}
      CREATE INDEX next_side ON next (message_id) WHERE sidechain = 1;
      INSERT INTO next ${arms} ORDER BY 1 ON CONFLICT(key) DO UPDATE SET file = excluded.file
        WHERE excluded.file < next.file;`)
  })()
  const t1 = cpuMs()
  db.exec('CREATE INDEX next_file ON next (file)')
  const t2 = cpuMs()
  const pages = db.pragma('page_count', {simple: true})
  db.close()
  return {merge: t1 - t0, index: t2 - t1, pages}
}

/** CPU ms of the sums by model and by day over each way of holding the rows. */
function queries(dir, columns, rows, names, at) {
  const db = new Database(join(dir, 'query.db'))
  const marks = rows[0].map(() => '?').join(', ')
  const ids = new Map()
  const id = (s) => (s === null ? null : (ids.get(s) ?? ids.set(s, ids.size + 1).get(s)))
  db.transaction(() => {
    db.exec(`CREATE TABLE t (${columns}) WITHOUT ROWID;
      CREATE TABLE i (${LAYOUTS.ids(columns).next}) WITHOUT ROWID;
      CREATE TABLE r (${LAYOUTS.rowid(columns).next}); CREATE UNIQUE INDEX r_key ON r (key);
      CREATE TABLE names (id INTEGER PRIMARY KEY, name TEXT NOT NULL);`)
    const t = db.prepare(`INSERT INTO t VALUES (${marks})`)
    const i = db.prepare(`INSERT INTO i VALUES (${marks})`)
    const rowid = db.prepare(`INSERT INTO r VALUES (${marks})`)
    const parts = Array.from({length: SCRATCHES}, (_, g) => {
      db.exec(`CREATE TABLE p${g} (${columns}) WITHOUT ROWID`)
      return db.prepare(`INSERT INTO p${g} VALUES (${marks})`)
    })
    for (const r of [...rows].sort((a, b) => (a[at.key] < b[at.key] ? -1 : 1))) {
      t.run(r)
      rowid.run(r)
      parts[r[at.file] % SCRATCHES].run(r)
      const x = [...r]
      for (const c of ['model', 'session', 'project']) x[at[c]] = id(r[at[c]])
      i.run(x)
    }
    const name = db.prepare('INSERT INTO names VALUES (?, ?)')
    for (const [s, n] of ids) name.run(n, s)
  })()
  const plain = names.filter((c) => !['model', 'session', 'project'].includes(c)).map((c) => `i.${c}`)
  db.exec(`CREATE VIEW joined AS SELECT ${plain.join(', ')}, m.name AS model, s.name AS session, p.name AS project
      FROM i LEFT JOIN names m ON m.id = i.model LEFT JOIN names s ON s.id = i.session
      LEFT JOIN names p ON p.id = i.project;
    CREATE VIEW parts AS ${Array.from({length: SCRATCHES}, (_, g) => `SELECT * FROM p${g}`).join(' UNION ALL ')};`)
  const sums = 'sum(input_tokens), sum(output_tokens), sum(cache_read_tokens), count(*)'
  const shapes = {
    byModel: (from) => `SELECT model, ${sums} FROM ${from} GROUP BY model`,
    byDay: (from) => `SELECT ts / 86400000 AS day, model, ${sums} FROM ${from} GROUP BY day, model`,
  }
  const result = {}
  for (const [shape, sql] of Object.entries(shapes)) {
    const samples = {keyed: [], rowid: [], ids: [], parts: []}
    const expected = JSON.stringify(db.prepare(sql('t')).raw().all())
    for (let round = 0; round < ROUNDS; round++)
      for (const [layout, from] of [
        ['keyed', 't'],
        ['rowid', 'r'],
        ['ids', 'joined'],
        ['parts', 'parts'],
      ]) {
        const t0 = cpuMs()
        const got = db.prepare(sql(from)).raw().all()
        samples[layout].push(cpuMs() - t0)
        if (JSON.stringify(got) !== expected) throw new Error(`${layout} ${shape}: not the same sums`)
      }
    result[shape] = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, summary(v, rows.length)]))
  }
  db.close()
  return result
}

/** Median and range of CPU ms samples, and the median in microseconds a row. */
const summary = (ms, rows) => ({
  ms: Math.round(median(ms)),
  range: [Math.round(Math.min(...ms)), Math.round(Math.max(...ms))],
  usRow: Math.round((median(ms) / rows) * 1000 * 100) / 100,
})

/** The results as lines: us a row (median), the range of CPU ms, pages. */
function print(r) {
  const f = (x) => `${x.usRow.toFixed(2)} us a row (${x.range[0]}-${x.range[1]} ms)`
  console.log(`${r.rows} rows, ${r.scratches} scratches, ${r.cores} cores, load ${r.loadAverage.join(' ')}`)
  for (const [strings, layouts] of Object.entries(r.merge))
    for (const [name, x] of Object.entries(layouts))
      console.log(
        `merge ${strings.padEnd(9)} ${name.padEnd(5)} merge ${f(x.merge)}, file index ${f(x.index)}, ` +
          `both ${x.total.usRow.toFixed(2)}, ${x.pages} pages`,
      )
  for (const [shape, layouts] of Object.entries(r.queries))
    console.log(
      `query ${shape.padEnd(7)} ${Object.entries(layouts)
        .map(([k, x]) => `${k} ${f(x)}`)
        .join(', ')}`,
    )
}

const dir = mkdtempSync(join(tmpdir(), 'gwctl-bench-rows-'))
try {
  const {columns, names, rows} = rescanRows(dir)
  const at = Object.fromEntries(names.map((n, i) => [n, i]))
  const results = {cores: availableParallelism(), rows: rows.length, scratches: SCRATCHES, merge: {}}
  for (const [strings, set] of [
    ['generated', rows],
    ['realistic', realistic(rows, at)],
  ]) {
    const scratchDir = join(dir, strings)
    mkdirSync(scratchDir)
    const ids = new Map()
    const id = (s) => (s === null ? null : (ids.get(s) ?? ids.set(s, ids.size + 1).get(s)))
    const layouts = Object.entries(LAYOUTS).map(([name, make]) => {
      const layout = make(columns)
      const paths = writeScratches(scratchDir, name, layout, set, at, name === 'ids' ? id : undefined)
      return {name, layout, paths, samples: {merge: [], index: [], total: []}, pages: 0}
    })
    for (let round = 0; round < ROUNDS; round++)
      for (const l of layouts) {
        const m = merge(scratchDir, l.layout, l.paths)
        l.samples.merge.push(m.merge)
        l.samples.index.push(m.index)
        l.samples.total.push(m.merge + m.index)
        l.pages = m.pages
      }
    results.merge[strings] = Object.fromEntries(
      layouts.map((l) => [
        l.name,
        {
          ...Object.fromEntries(Object.entries(l.samples).map(([k, v]) => [k, summary(v, set.length)])),
          pages: l.pages,
        },
      ]),
    )
  }
  results.queries = queries(dir, columns, rows, names, at)
  results.loadAverage = loadavg().map((n) => Math.round(n * 100) / 100)
  if (process.argv.includes('--json')) console.log(JSON.stringify(results, null, 2))
  else print(results)
} finally {
  rmSync(dir, {recursive: true, force: true})
}
