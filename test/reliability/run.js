// The opt-in reliability suite (`npm run test:reliability`, not part of `npm test`): fuzz, crash
// loops and a soak against `gwctl gateway start --sim`, each in its own GWCTL_HOME on a free
// loopback port. Bounded: the fuzz by its request count, the crash part by its loops, the soak by
// its seconds. Prints the figures, writes them into docs/RELIABILITY.md (between the markers of
// each part) and exits 1 when a check fails.
//
//   npm run test:reliability                            everything (fuzz 10 000, crash 50, upstream, disk, storage 10, soak 600 s)
//   npm run test:reliability -- --only fuzz,crash       some parts
//   npm run test:reliability -- --fuzz-count 20000 --seed 42
//   npm run test:reliability -- --loops 10
//   npm run test:reliability -- --only storage --storage-loops 20
//   npm run test:reliability -- --soak-seconds 60 --rate 200
//   npm run test:reliability -- --no-write              do not touch docs/RELIABILITY.md
import {existsSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {parseArgs} from 'node:util'

import {crash} from './crash.js'
import {fuzz} from './fuzz.js'
import {ROOT, run} from './lib.js'
import {diskTrouble} from './disk.js'
import {upstreamFaults} from './upstream.js'
import {soak} from './soak.js'
import {READER, storage} from './storage.js'

const {values: flags} = parseArgs({
  options: {
    only: {type: 'string', default: 'fuzz,crash,upstream,disk,storage,soak'},
    'fuzz-count': {type: 'string', default: '10000'},
    seed: {type: 'string'},
    loops: {type: 'string', default: '50'},
    'storage-loops': {type: 'string', default: '10'},
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

if (only.has('upstream')) {
  console.log('upstream faults ...')
  const u = await upstreamFaults()
  const rows = []
  const cases = [...new Set(u.outcomes.map((o) => o.case))]
  for (const name of cases) {
    const of = u.outcomes.filter((o) => o.case === name)
    const bad = of.filter((o) => o.problems.length > 0)
    const where = [...new Set(of.map((o) => `${o.family}${o.stream ? ' stream' : ''}`))].join(', ')
    rows.push(
      check(
        bad.length === 0,
        `${name}: ${of.length - bad.length}/${of.length} as promised (${where}); slowest ${Math.max(...of.map((o) => o.ms))} ms${bad.length ? `; ${bad.map((o) => `${o.family}${o.stream ? ' stream' : ''}: ${o.problems.join(', ')}`).join(' | ')}` : ''}`,
      ),
    )
  }
  const b = u.breaker
  rows.push(
    check(
      b.opened === 'open' &&
        b.skippedProvider === 'alt-chat' &&
        b.halfOpen === 'half-open' &&
        b.trialProvider === 'up-chat' &&
        b.closed === 'closed',
      `breaker of up-chat (threshold 3, cooldown 2 s): ${b.opened} after 3 failures, next request served by ${b.skippedProvider}; ${b.halfOpen} after the cooldown; its trial served by ${b.trialProvider} (${b.trialStatus}); then ${b.closed}`,
    ),
  )
  record('upstream', rows)
}

if (only.has('disk')) {
  console.log('disk trouble ...')
  const d = await diskTrouble()
  if (d.skipped) record('disk', [check(true, `skipped: ${d.skipped}`)])
  else
    record(
      'disk',
      d.results.flatMap((r) => [
        check(
          r.failed === 0,
          `${r.fault}: ${r.before + r.during + r.after} model requests answered 200 (${r.during} while the disk was ${r.fault}), ${r.failed} failed ${JSON.stringify(r.statuses)}`,
        ),
        check(
          r.healthStatus === 200 && /^(log store|state): /.test(r.degraded ?? '') && r.statusSaysDegraded,
          `${r.fault}: /health ${r.healthStatus} with degraded "${r.degraded}"; \`gwctl status\` ${r.statusSaysDegraded ? 'says' : 'does NOT say'} degraded`,
        ),
        check(
          r.degradedAfter === null && r.recoveryLogged,
          `${r.fault}: after the disk came back, degraded ${r.degradedAfter === null ? 'cleared' : `still "${r.degradedAfter}"`}${r.recoveryLogged ? ', "writing again" logged' : ''}`,
        ),
        check(
          r.rotationStatus === 503 && /was not issued/.test(r.rotationMessage),
          `${r.fault}: a key rotation during the fault answered ${r.rotationStatus} ("${r.rotationMessage.slice(0, 90)}…") and the key in use kept working`,
        ),
        check(
          r.failureLines === r.failureSources && (r.failureLines > 0 || r.lostLogLinesNoted),
          `${r.fault}: each failing part (log store, state) logged once: ${r.failureLines} line(s)${r.lostLogLinesNoted ? '; daemon log lines written during the fault were lost and counted' : ''}`,
        ),
        check(
          r.lostStored === 0 && r.stopped,
          `${r.fault}: ${r.storedBefore} rows stored before the fault, ${r.lostStored} of them lost; ${r.storedAfter} rows after a graceful stop`,
        ),
      ]),
    )
}

if (only.has('storage')) {
  console.log('storage ...')
  const loops = Number(flags['storage-loops'])
  const {reader: r, damage, readOnly} = await storage({loops})
  const rows = [
    check(
      r.loops >= 10 && r.rescans === r.loops,
      `outside reader (${READER}, ${r.reads} reads): ${r.loops} loops of gateway start, ${r.requests} chats (4 at a time), one \`usage rescan\` (${r.rescans} ran), kill -9 50 ms after the last answer`,
    ),
    check(
      r.failures.length === 0 && r.answered === r.loops * r.requests && r.written === r.answered,
      `outside reader: ${r.answered} requests answered 200, ${r.written} rows written; integrity_check ok and no deleted -wal/-shm held after every loop unless listed: ${r.failures.length} failures${r.failures.length ? ` (${r.failures.slice(0, 3).join(' | ')})` : ''}`,
    ),
  ]
  for (const d of damage) {
    const before = d.damage === 'header' ? [3] : [0, 3]
    rows.push(
      check(
        before.includes(d.logsBefore) && before.includes(d.usageBefore),
        `damaged ${d.damage} (${d.rows} rows, ${d.pages} pages): before the gateway starts \`logs\` exits ${d.logsBefore}, \`usage\` ${d.usageBefore} (${before.join(' or ')} expected, never 1)`,
      ),
    )
    if (d.damage.endsWith('large'))
      rows.push(
        check(
          d.movedAtStart === 0 && d.foundAfterStartMs !== undefined,
          `damaged ${d.damage} (over the start-up check's limit, \`GWCTL_LOGDB_START_CHECK_MB=0\`): \`gateway start\` moved ${d.movedAtStart} file (a quick look only); its full check after the start ${d.foundAfterStartMs === undefined ? 'did not find the damage in 15 s' : `found it ${d.foundAfterStartMs} ms after the start returned`} (/health degraded); then \`gateway restart\`:`,
        ),
      )
    rows.push(
      check(
        d.start === 0 &&
          d.movedAside === 1 &&
          d.healthStatus === 200 &&
          /log database: it was damaged/.test(d.degraded ?? '') &&
          d.served === 20 &&
          d.written === 20,
        `damaged ${d.damage}: \`gateway ${d.damage.endsWith('large') ? 'restart' : 'start'}\` exits ${d.start}, ${d.movedAside} file moved aside, /health ${d.healthStatus} degraded ${d.degraded ? '"log database: it was damaged …"' : 'missing'}; ${d.served}/20 chats answered 200 ${JSON.stringify(d.statuses)}, ${d.written} rows in the new logs.db`,
      ),
      check(
        d.logsAfter === 0 && d.usageAfter === 0 && d.stop === 0,
        `damaged ${d.damage}: afterwards \`logs\` exits ${d.logsAfter}, \`usage\` ${d.usageAfter}, \`gateway stop\` ${d.stop}`,
      ),
    )
  }
  if (readOnly.skipped) rows.push(check(true, `read-only home: skipped: ${readOnly.skipped}`))
  else {
    const bad = readOnly.commands.filter((c) => c.code !== 3 || c.bug || !c.says)
    rows.push(
      check(
        bad.length === 0,
        `read-only home (read-only bind mount): ${readOnly.commands.length} writing commands, exit codes ${readOnly.commands.map((c) => `\`${c.command}\` ${c.code}`).join(', ')}${bad.length ? `; wrong: ${bad.map((c) => c.command).join(', ')}` : ' (all 3, each naming the read-only home)'}`,
      ),
    )
  }
  record('storage', rows)
}

if (only.has('soak')) {
  const seconds = Number(flags['soak-seconds'])
  console.log(`soak ${seconds} s ...`)
  const s = await soak({seconds, rate: Number(flags.rate)})
  record('soak', [
    check(
      seconds >= 600,
      `${seconds} s at ${s.rate} req/s asked, ${s.achievedRate.toFixed(0)} req/s achieved (chat stream/plain, messages, gemini and responses streams)${s.notSent ? `; ${s.notSent} not sent: the client had 512 in flight` : ''}`,
    ),
    check(
      s.failed === 0,
      `${s.sent} requests, ${s.ok} answered 200, ${s.failed} failed ${JSON.stringify(s.errors)}`,
    ),
    check(
      s.rssGrowthPct <= 10,
      `RSS (median of the readings every 5 s) ${s.rssBaselineMiB.toFixed(1)} MiB in the 10 % after a 20 % warm-up -> ${s.rssEndMiB.toFixed(1)} MiB in the last 10 % (${s.rssGrowthPct.toFixed(1)} %; highest reading ${s.rssMaxMiB.toFixed(1)} MiB, ${s.rssSamples} readings)`,
    ),
    check(
      s.heapMarks > 0 && s.heapGrowthPct <= 10,
      `live heap after full collections (daemon's --trace-gc, ${s.heapMarks} mark-compacts) ${s.heapEarlyMiB?.toFixed(1)} MiB (median, 10 % after the warm-up) -> ${s.heapLateMiB?.toFixed(1)} MiB (median, last 10 %) (${s.heapGrowthPct?.toFixed(1)} %; lowest after the warm-up ${s.heapMinMiB?.toFixed(1)}, highest ${s.heapMaxMiB?.toFixed(1)} MiB)`,
    ),
    check(
      s.fdsIdleAfter <= s.fdsIdleBefore,
      `open fds idle ${s.fdsIdleBefore} before the run -> ${s.fdsIdleAfter} idle after it (under load ${s.fdsBaseline} after warm-up, ${s.fdsEnd} at the end: they follow the concurrency)`,
    ),
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
