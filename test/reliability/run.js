// The opt-in reliability suite (`npm run test:reliability`, not part of `npm test`): fuzz, crash
// loops and a soak against `gwctl gateway start --sim`, each in its own GWCTL_HOME on a free
// loopback port. Bounded: the fuzz by its request count, the crash part by its loops, the soak by
// its seconds. Prints the figures, writes them into docs/RELIABILITY.md (between the markers of
// each part) and exits 1 when a check fails.
//
//   npm run test:reliability                            everything (fuzz 10 000, crash 50, soak 600 s)
//   npm run test:reliability -- --only fuzz,crash       some parts
//   npm run test:reliability -- --fuzz-count 20000 --seed 42
//   npm run test:reliability -- --loops 10
//   npm run test:reliability -- --soak-seconds 60 --rate 200
//   npm run test:reliability -- --no-write              do not touch docs/RELIABILITY.md
import {existsSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {parseArgs} from 'node:util'

import {crash} from './crash.js'
import {disk} from './disk.js'
import {fuzz} from './fuzz.js'
import {ROOT, run} from './lib.js'
import {soak} from './soak.js'

const {values: flags} = parseArgs({
  options: {
    only: {type: 'string', default: 'fuzz,crash,soak'},
    'fuzz-count': {type: 'string', default: '10000'},
    seed: {type: 'string'},
    loops: {type: 'string', default: '50'},
    'soak-seconds': {type: 'string', default: '600'},
    rate: {type: 'string', default: '200'},
    'no-write': {type: 'boolean', default: false},
  },
})

const only = new Set(flags.only.split(',').map((s) => s.trim()))
const DOC = join(ROOT, 'docs', 'RELIABILITY.md')
const when = new Date().toISOString().replace(/\.\d+Z$/, 'Z')
let failed = false

if (!existsSync(join(ROOT, 'dist', 'store', 'state.js'))) {
  console.log('building gwctl (dist/ is missing)')
  const build = await run('npm', ['run', 'build'], {env: process.env})
  if (build.code !== 0) throw new Error(build.stderr)
}

function check(ok, text) {
  if (!ok) failed = true
  return `| ${ok ? 'pass' : '**FAIL**'} | ${text} |`
}

function record(part, lines) {
  const text = [
    `_Last run: ${when}, \`${process.argv.slice(2).join(' ') || '(defaults)'}\`_`,
    '',
    '| result | figure |',
    '|---|---|',
    ...lines,
  ].join('\n')
  console.log(`\n## ${part}\n${text}\n`)
  if (flags['no-write'] || !existsSync(DOC)) return
  const doc = readFileSync(DOC, 'utf8')
  const begin = `<!-- BEGIN ${part} -->`
  const end = `<!-- END ${part} -->`
  const i = doc.indexOf(begin)
  const j = doc.indexOf(end)
  if (i === -1 || j === -1) return
  writeFileSync(DOC, doc.slice(0, i + begin.length) + '\n' + text + '\n' + doc.slice(j))
}

if (only.has('fuzz')) {
  console.log('fuzz ...')
  const count = Number(flags['fuzz-count'])
  const f = await fuzz({count, seed: flags.seed === undefined ? undefined : Number(flags.seed)})
  const statuses = Object.entries(f.byStatus)
    .map(([s, n]) => `${s}: ${n}`)
    .join(', ')
  record('fuzz', [
    check(
      count >= 10_000,
      `${count} generated cases (fast-check seed ${f.seed}), ${f.requests} requests incl. 3 raw malformed ones`,
    ),
    check(
      f.failures.length === 0,
      `${f.failures.length} failures (500, error not in its entrance's shape, slower than 2 s, request failed)`,
    ),
    check(true, `statuses: ${statuses}`),
    check(f.slowest <= 2000, `slowest answer ${Math.round(f.slowest)} ms`),
    check(
      f.probes === count,
      `${f.probes} ordinary requests after each case (same or new connection), all 200 unless listed as failures`,
    ),
    check(!f.crashed, `daemon alive and /health ${f.healthAfter} afterwards`),
  ])
  for (const x of f.failures.slice(0, 10)) console.log('  ', x.what, JSON.stringify(x.case).slice(0, 300))
}

if (only.has('crash')) {
  console.log('crash loops ...')
  const loops = Number(flags.loops)
  const c = await crash({loops})
  record('crash', [
    check(loops >= 50, `${loops} loops of kill -9 during key issues, policy changes and streaming chats`),
    check(
      c.startFailures === 0,
      `${c.startFailures} failed starts; slowest start ${Math.round(c.slowestStartMs)} ms (whole \`gwctl gateway start\` process)`,
    ),
    check(c.stateInvalid === 0, `${c.stateInvalid} times the state did not parse and validate`),
    check(
      c.keysRejected === 0,
      `${c.keysChecked} agents' latest keys answered 200 checked after the last restart: ${c.keysRejected} lost, ${c.keysSuperseded} rotated out by a later issue that was stored but whose answer the kill cut off (${c.keysAnswered200} issues answered 200 in all)`,
    ),
  ])
  for (const x of c.failures.slice(0, 10)) console.log('  ', x)
}

if (only.has('disk')) {
  console.log('disk ...')
  const d = await disk()
  if (d.skipped) record('disk', [`| skipped | ${d.skipped} |`])
  else
    record('disk', [
      check(
        d.okWhileFull === d.sentWhileFull,
        `${d.okWhileFull}/${d.sentWhileFull} chats answered 200 with GWCTL_HOME (a 4 MiB tmpfs) full`,
      ),
      check(d.logLines === 1, `the log store's failure logged ${d.logLines} time(s) in the daemon log`),
      check(
        d.healthStatus === 200 && Boolean(d.degraded),
        `/health ${d.healthStatus} (${d.healthFields}); degraded: ${d.degraded}`,
      ),
      check(
        d.statusExit === 0 && d.statusSays,
        `\`gwctl status\` exit ${d.statusExit}, shows "Running (degraded)" and the reason: ${d.statusSays}`,
      ),
      check(
        d.after >= d.before,
        `rows stored before the disk filled: ${d.before}; in logs.db after the stop: ${d.after}`,
      ),
    ])
}

if (only.has('soak')) {
  const seconds = Number(flags['soak-seconds'])
  console.log(`soak ${seconds} s ...`)
  const s = await soak({seconds, rate: Number(flags.rate)})
  record('soak', [
    check(
      seconds >= 600,
      `${seconds} s at ${s.rate} req/s asked, ${s.achievedRate.toFixed(0)} req/s achieved (chat stream/plain, messages, gemini and responses streams)`,
    ),
    check(
      s.failed === 0,
      `${s.sent} requests, ${s.ok} answered 200, ${s.failed} failed ${JSON.stringify(s.errors)}`,
    ),
    check(
      s.rssGrowthPct <= 10,
      `RSS ${s.rssBaselineMiB.toFixed(1)} MiB after warm-up -> ${s.rssEndMiB.toFixed(1)} MiB at the end (${s.rssGrowthPct.toFixed(1)} %); every tenth of the run: ${s.rssTrajectoryMiB.join(', ')} MiB`,
    ),
    check(s.fdsEnd <= s.fdsBaseline + 16, `open fds ${s.fdsBaseline} -> ${s.fdsEnd}`),
    check(
      s.loggedRows === s.sent && s.loggedDistinctRequestIds === s.sent,
      `${s.loggedRows} rows logged (${s.loggedDistinctRequestIds} distinct request ids) for ${s.sent} requests`,
    ),
    check(
      s.usageUnreadable === 0 && s.loggedInput === s.sentInput && s.loggedOutput === s.sentOutput,
      `tokens logged ${s.loggedInput} in / ${s.loggedOutput} out; sent by the simulator ${s.sentInput} / ${s.sentOutput}`,
    ),
  ])
}

process.exit(failed ? 1 : 0)
