/**
 * What the generations of a rescan cost the merge (issue 32, section "gens" of bench/README.md):
 * the rows of a rescan's `logs.db` (any build's), split by file into 4 scratch databases a
 * generation (file % 4, generations by file number), each keyed and written in key order as the
 * readers leave them, then merged one generation after the other into one scratch by the built
 * `ScratchMerger` (dist/), and its file index built; CPU time of this thread, three rounds for each
 * generation count. `node bench/history-gens.js <logs.db> [generations ...]` (default 1 4 8),
 * after `npm run build` and a rescan (e.g. `GWCTL_HOME=/tmp/x HOME=<a generated history>
 * gwctl usage rescan`).
 */
import Database from 'better-sqlite3'
import {mkdtempSync, readdirSync, rmSync} from 'node:fs'
import {loadavg, tmpdir} from 'node:os'
import {join} from 'node:path'

const ROOT = new URL('..', import.meta.url).pathname
const chunk = readdirSync(join(ROOT, 'dist', 'chunks')).find((n) => n.startsWith('history-scratch-'))
const mod = await import(join(ROOT, 'dist', 'chunks', chunk))
const {Scratch, ScratchMerger} = mod
const [src, ...gens] = process.argv.slice(2)
if (!src) throw new Error('usage: node bench/history-gens.js <logs.db> [generations ...]')
const SCRATCHES = 4
const cpu = () => {
  const c = process.cpuUsage()
  return (c.user + c.system) / 1000
}
const db = new Database(src, {readonly: true})
const files = db.prepare('SELECT * FROM history_files ORDER BY id').all()
const place = new Map(files.map((f, i) => [f.id, i]))
const rows = db.prepare('SELECT * FROM history_rows ORDER BY key').raw().all()
const columns = db
  .prepare('SELECT * FROM history_rows LIMIT 1')
  .columns()
  .map((c) => c.name)
const file = columns.indexOf('file')
db.close()
for (const g of (gens.length > 0 ? gens : ['1', '4', '8']).map(Number))
  for (let round = 0; round < 3; round++) {
    const dir = mkdtempSync(join(tmpdir(), 'gwctl-gens-'))
    try {
      const gen = (id) => Math.min(g - 1, Math.floor((place.get(id) * g) / files.length))
      const paths = Array.from({length: g}, (_, i) =>
        Array.from({length: SCRATCHES}, (_, s) => join(dir, `s${i}-${s}`)),
      )
      const dbs = paths.map((p) =>
        p.map((path) => {
          Scratch.create(path, undefined, -65536, true).close()
          const d = new Database(path)
          d.exec('BEGIN')
          return d
        }),
      )
      const put = dbs.map((p) =>
        p.map((d) => d.prepare(`INSERT INTO staged (${columns}) VALUES (${columns.map(() => '?')})`)),
      )
      const putFile = dbs.map((p) =>
        p.map((d) =>
          d.prepare(`INSERT INTO scan_files (id, path, tool, inode, size, mtime_ms, offset, state,
            scanned_at, max_ts, ord) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
        ),
      )
      for (const r of rows) put[gen(r[file])][r[file] % SCRATCHES].run(...r)
      for (const f of files)
        putFile[gen(f.id)][f.id % SCRATCHES].run(
          f.id,
          f.path,
          f.tool,
          f.inode,
          f.size,
          f.mtime_ms,
          f.offset,
          f.state,
          f.scanned_at,
          f.max_ts,
          place.get(f.id),
        )
      for (const d of dbs.flat()) {
        d.exec('COMMIT')
        d.close()
      }
      const merger = new ScratchMerger(join(dir, 'all'))
      const each = []
      let at = cpu()
      for (const p of paths) {
        const t = cpu()
        merger.add(p)
        each.push(Math.round(cpu() - t))
      }
      const merge = cpu() - at
      at = cpu()
      merger.index()
      const index = cpu() - at
      merger.close()
      console.log(
        JSON.stringify({
          generations: g,
          round,
          rows: rows.length,
          mergeMs: Math.round(merge),
          eachMs: each,
          indexMs: Math.round(index),
          usRow: Number((((merge + index) * 1000) / rows.length).toFixed(2)),
          load: Number(loadavg()[0].toFixed(1)),
        }),
      )
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  }
