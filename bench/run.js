// gwctl benchmarks: `npm run bench` (builds first). Every number is taken in one run on this
// machine, against the simulator on loopback, and reported as a ratio against a baseline measured
// in the same run. Results are written between the markers of bench/README.md.
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {cpus, loadavg, tmpdir} from 'node:os'
import {join} from 'node:path'
import autocannon from 'autocannon'
import {Client} from 'undici'
import {
  CHAT_BODY,
  STREAM_BODY,
  children,
  freePort,
  rssMB,
  spawnDaemon,
  startChild,
  startGatewayTarget,
} from './targets.js'

const QUICK = process.argv.includes('--quick')
// the gateway part only (no CLI start-up rows): printed, never written into bench/README.md
const NO_CLI = process.argv.includes('--no-cli')
const SEQ_N = QUICK ? 300 : 2000
const TTFB_N = QUICK ? 100 : 500
const LOAD_SECONDS = QUICK ? 3 : 5
const LOAD_ROUNDS = QUICK ? 1 : 3
const CONNECTIONS = 64

function quantiles(samples) {
  const s = [...samples].sort((a, b) => a - b)
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))]
  return {median: q(0.5), p99: q(0.99)}
}

// A target may carry its own `path`, `body` and `streamBody` (the Anthropic Messages rows);
// without them it is asked for chat completions.
const pathOf = (t) => t.path ?? '/v1/chat/completions'

/** Sequential requests over one keep-alive connection: time to the end of the body. */
async function sequential(t, n) {
  const client = new Client(t.origin, {keepAliveTimeout: 30_000})
  const samples = []
  const [path, headers, body] = [pathOf(t), t.headers, t.body ?? CHAT_BODY]
  for (let i = 0; i < n + 50; i++) {
    const t0 = performance.now()
    const res = await client.request({method: 'POST', path, headers, body})
    const text = await res.body.text()
    if (res.statusCode !== 200)
      throw new Error(`${t.origin} answered ${res.statusCode}: ${text.slice(0, 200)}`)
    if (i >= 50) samples.push(performance.now() - t0)
  }
  await client.close()
  return samples
}

/** Sequential streams: time to the first body byte. */
async function firstByte(t, n) {
  const client = new Client(t.origin, {keepAliveTimeout: 30_000})
  const samples = []
  for (let i = 0; i < n + 20; i++) {
    const t0 = performance.now()
    const res = await client.request({
      method: 'POST',
      path: pathOf(t),
      headers: t.headers,
      body: t.streamBody ?? STREAM_BODY,
    })
    let first
    for await (const chunk of res.body) if (chunk.length > 0) first ??= performance.now() - t0
    if (res.statusCode !== 200) throw new Error(`${t.origin} answered ${res.statusCode} to a stream`)
    if (i >= 20) samples.push(first)
  }
  await client.close()
  return samples
}

/**
 * User + system CPU seconds of a process's first thread (its request thread: node:http and the
 * gateway run there), from /proc; undefined where there is none.
 */
function mainThreadCpu(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
    return (Number(fields[11]) + Number(fields[12])) / 100
  } catch {
    return undefined
  }
}

async function throughput(t, pid, seconds = LOAD_SECONDS, rate = undefined) {
  const cpuBefore = pid ? mainThreadCpu(pid) : undefined
  let peak
  const sampler = pid
    ? setInterval(() => {
        const v = rssMB(pid)
        if (v !== undefined) peak = Math.max(peak ?? 0, v)
      }, 200)
    : undefined
  const result = await autocannon({
    url: `${t.origin}${pathOf(t)}`,
    method: 'POST',
    headers: t.headers,
    body: t.body ?? CHAT_BODY,
    connections: CONNECTIONS,
    duration: seconds,
    ...(rate ? {overallRate: rate} : {}),
  })
  if (sampler) clearInterval(sampler)
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${t.origin}: ${result.non2xx} non-2xx, ${result.errors} errors`)
  const cpuAfter = pid ? mainThreadCpu(pid) : undefined
  // the request thread's CPU a request: what a many-core machine's throughput follows (the one
  // thread every request needs), and, unlike req/s, barely moved by other work on a shared machine
  const threadUs =
    cpuBefore !== undefined && cpuAfter !== undefined && result.requests.total > 0
      ? ((cpuAfter - cpuBefore) / result.requests.total) * 1e6
      : undefined
  return {rps: result.requests.average, peakRssMB: peak, threadUs}
}

const fmt = (n, d = 3) => (n === undefined ? 'n/a' : n.toFixed(d))

async function main() {
  const sim = await startChild('node', ['bench/servers.js', 'sim'])
  const simOrigin = `http://127.0.0.1:${sim.port}`
  const bare = await startChild('node', ['bench/servers.js', 'bare', simOrigin])
  const targets = [
    {
      name: 'direct',
      origin: simOrigin,
      headers: {'content-type': 'application/json', authorization: 'Bearer sim'},
    },
    {
      name: 'bare pass-through',
      origin: `http://127.0.0.1:${bare.port}`,
      pid: bare.child.pid,
      headers: {'content-type': 'application/json', authorization: 'Bearer sim'},
    },
  ]
  // the untranslated row's daemon never loads the translation code (the translated row has its own)
  const gateway = await startGatewayTarget(simOrigin, {translated: false}).catch((error) => {
    console.error(`gateway not benchmarked: ${error.message}`)
    return undefined
  })
  if (gateway) targets.push(gateway)
  // OTLP export on (issue 27): the same gateway, a daemon of its own each, exporting to a collector
  // that accepts, and to one that accepts connections and never answers (bench/telemetry.js);
  // their throughput and first byte are ratios against the gateway row (no export) of this run
  const otlpRows = gateway && !process.argv.includes('--no-otlp') ? await startOtlpTargets(simOrigin) : []
  targets.push(...otlpRows)
  // asked in Anthropic Messages through a policy whose target translates: a second daemon of the
  // same build and state, so that each row's memory is that of a daemon under its own load only
  // (one daemon's RSS only grows: whichever row ran second would carry the first one's peak)
  let translatedSkipped = gateway?.translatedSkipped
  const translated = gateway
    ? await startGatewayTarget(simOrigin).then(
        (second) => {
          translatedSkipped = second.translatedSkipped
          return second.translated
        },
        (error) => {
          translatedSkipped = error.message
          return undefined
        },
      )
    : undefined
  if (translated) targets.push(translated)
  else if (gateway) console.error(`gateway (translated) not benchmarked: ${translatedSkipped}`)
  if (!process.argv.includes('--no-portkey')) {
    const {startPortkeyTarget} = await import('./portkey.js')
    const portkey = await startPortkeyTarget(simOrigin, children).catch((error) => {
      console.error(`Portkey (peer row) not benchmarked: ${error.message}`)
      return undefined
    })
    if (portkey) targets.push(portkey)
  }
  if (!process.argv.includes('--no-ccr')) {
    const {startCcrTarget} = await import('./ccr.js')
    const ccr = await startCcrTarget(simOrigin, children).catch((error) => {
      console.error(`claude-code-router (peer row) not benchmarked: ${error.message}`)
      return undefined
    })
    if (ccr) targets.push({...ccr, optional: true})
  }
  // An optional row (the translated gateway, claude-code-router) that fails while it is measured
  // is dropped, with the reason printed, and the bench goes on without it.
  const dropped = []
  const measure = async (t, work) => {
    if (t.failed) return []
    try {
      return await work()
    } catch (error) {
      if (!t.optional) throw error
      t.failed = error.message
      console.error(`${t.name} not benchmarked: ${error.message}`)
      dropped.push(t)
      return []
    }
  }
  const live = () => targets.filter((t) => !t.failed)

  const rows = {}
  // Every target warmed first, 2 s at 64 connections: V8 optimizes a server's request path over
  // its first few thousand requests (a daemon's main thread spent 1.4 ms a request in its first
  // 300, 0.3-0.45 ms after 3 000 sequential ones), the translated route's later than the
  // untranslated one's (more code): a latency measured from the start measured the warming
  // (bench/README.md, "Stop 40").
  console.error('· warm-up: 2 s at 64 connections a target')
  for (const t of targets) {
    await measure(t, () => throughput(t, undefined, 2))
    if (t === gateway) {
      // idle again after its first traffic (the upstream client is loaded by then)
      await new Promise((r) => setTimeout(r, 2000))
      gateway.afterTrafficRssMB = rssMB(gateway.pid)
    }
  }
  // Sequential latency in interleaved quarters (every target once per quarter), so a burst of
  // other work on the machine hits every target alike.
  console.error(`· sequential latency (${SEQ_N} requests a target, in 4 interleaved parts)`)
  const latency = Object.fromEntries(targets.map((t) => [t.name, []]))
  for (let part = 0; part < 4; part++)
    for (const t of targets) latency[t.name].push(...(await measure(t, () => sequential(t, SEQ_N / 4))))
  for (const t of live()) rows[t.name] = {latency: quantiles(latency[t.name])}
  // interleaved too: a burst of other work on the machine during one target's streams would
  // otherwise count against that target alone
  console.error(`· time to first byte of streams (${TTFB_N} a target, in 4 interleaved parts)`)
  const ttfb = Object.fromEntries(targets.map((t) => [t.name, []]))
  for (let part = 0; part < 4; part++)
    for (const t of targets) ttfb[t.name].push(...(await measure(t, () => firstByte(t, TTFB_N / 4))))
  for (const t of targets) if (t.failed) delete rows[t.name]
  for (const t of live()) rows[t.name].ttfb = quantiles(ttfb[t.name])
  // Throughput in interleaved rounds (every target once per round, after a warm-up round), the
  // median of the rounds: a burst of other work on the machine then hits every target alike.
  console.error(
    `· throughput at ${CONNECTIONS} connections: warm-up, then ${LOAD_ROUNDS} rounds of ${LOAD_SECONDS} s`,
  )
  for (const t of targets) await measure(t, () => throughput(t, undefined, 2))
  const rounds = Object.fromEntries(targets.map((t) => [t.name, {rps: [], peak: [], threadUs: []}]))
  for (let r = 0; r < LOAD_ROUNDS; r++)
    for (const t of targets) {
      // each gwctl row has a daemon of its own: its peak is that daemon's peak under its load
      const result = await measure(t, () => throughput(t, t.pid))
      if (t.failed) continue
      const {rps, peakRssMB, threadUs} = result
      rounds[t.name].rps.push(rps)
      if (peakRssMB !== undefined) rounds[t.name].peak.push(peakRssMB)
      if (threadUs !== undefined) rounds[t.name].threadUs.push(threadUs)
    }
  for (const t of targets) if (t.failed) delete rows[t.name]
  for (const t of live()) {
    const sorted = [...rounds[t.name].rps].sort((a, b) => a - b)
    rows[t.name].rps = sorted[Math.floor(sorted.length / 2)]
    rows[t.name].rpsRounds = rounds[t.name].rps
    rows[t.name].peakRssMB = rounds[t.name].peak.length > 0 ? Math.max(...rounds[t.name].peak) : undefined
    const us = [...rounds[t.name].threadUs].sort((a, b) => a - b)
    rows[t.name].threadUs = us.length > 0 ? us[Math.floor(us.length / 2)] : undefined
    rows[t.name].threadUsRounds = rounds[t.name].threadUs
  }
  // The translated daemon's memory against the untranslated one's under the same load (issue 33's
  // words): both at one fixed rate, 80 % of the slower one's throughput, in interleaved rounds.
  // The unpaced rounds above load each daemon at its own throughput, and a daemon's peak follows
  // its requests a second (bench/README.md, "Stop 40").
  const tr0 = translated && !translated.failed ? rows[translated.name] : undefined
  const gw0 = gateway && !gateway.failed ? rows[gateway.name] : undefined
  if (tr0 && gw0) {
    const rate = Math.round(0.8 * Math.min(tr0.rps, gw0.rps))
    console.error(
      `· memory of the two daemons at one rate: ${rate} req/s, ${LOAD_ROUNDS} rounds of ${LOAD_SECONDS} s`,
    )
    const peaks = {gateway: [], translated: []}
    for (let r = 0; r < LOAD_ROUNDS; r++)
      for (const [key, t] of r % 2
        ? [
            ['translated', translated],
            ['gateway', gateway],
          ]
        : [
            ['gateway', gateway],
            ['translated', translated],
          ]) {
        const result = await measure(t, () => throughput(t, t.pid, LOAD_SECONDS, rate))
        if (result.peakRssMB !== undefined) peaks[key].push(result.peakRssMB)
      }
    if (!translated.failed && peaks.gateway.length > 0 && peaks.translated.length > 0)
      tr0.paced = {
        rate,
        peakRssMB: Math.max(...peaks.translated),
        gatewayPeakRssMB: Math.max(...peaks.gateway),
      }
  }
  // what the export rows' daemons did: spans sent, dropped (the collector that never answers)
  for (const t of otlpRows)
    t.export = await fetch(`${t.origin}/api/status`)
      .then((r) => r.json())
      .then((s) => s.telemetry?.otlp)
      .catch(() => undefined)
  let cliRows = []
  if (!NO_CLI) {
    console.error('· CLI start-up against a bare oclif 4 hello command (interleaved runs)')
    const {cliStartup} = await import('./cli.js')
    cliRows = await cliStartup({runs: QUICK ? 5 : 15, simOrigin})
  }
  console.error('· key lookup at 10 and 100 000 keys')
  const {keyLookup, logStoreRate, pivot} = await import('./micro.js')
  const {small: key10, large: key100k, remembered: keyWarm} = keyLookup(10, 100_000)
  console.error('· log store at 2 000 rows/s')
  const logRate = await logStoreRate(QUICK ? 2 : 5)
  console.error(`· usage pivots over ${QUICK ? '200 000' : '1 000 000'} rows (filling takes a while)`)
  const pivots = await pivot(QUICK ? 200_000 : 1_000_000)
  const worstPivot = Math.max(...Object.values(pivots))
  const NO_HISTORY = process.argv.includes('--no-history')
  const scanMB = QUICK ? 50 : 150
  if (!NO_HISTORY) console.error(`· daemon memory after its history scan of ${scanMB} MB of agent history`)
  const scanRss = NO_HISTORY ? undefined : await historyScanRss(scanMB)
  const extra = [
    [
      'key lookup 100 000 / 10 keys',
      key100k / key10,
      1.5,
      `${fmt(key10 / 1000, 2)} µs vs ${fmt(key100k / 1000, 2)} µs per first verify of a key; ${fmt(keyWarm / 1000, 2)} µs for a key verified before`,
      (v, t) => v <= t,
    ],
    [
      'log store keeps up with 2 000 rows/s',
      logRate.rate / 2000,
      0.9,
      `${Math.round(logRate.rate)} rows/s written; loop delay p99 ${fmt(logRate.p99DelayMs, 1)} ms, max ${fmt(logRate.maxDelayMs, 1)} ms; queue peak ${logRate.maxPending}`,
      (v, t) => v >= t,
    ],
    [
      'slowest usage pivot (ms)',
      worstPivot,
      150,
      Object.entries(pivots)
        .map(([k, v]) => `${k} ${fmt(v, 0)}`)
        .join(', '),
      (v, t) => v <= t,
    ],
  ]

  const direct = rows.direct
  const bareRow = rows['bare pass-through']
  const gw = rows.gateway
  const tr = translated && !translated.failed ? rows[translated.name] : undefined
  const ccrRow = Object.entries(rows).find(([name]) => name.startsWith('claude-code-router'))?.[1]
  const addedBare = bareRow.latency.median - direct.latency.median
  const lines = []
  lines.push(
    `Run: ${new Date().toISOString()} · ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'} · Node ${process.version}${QUICK ? ' · --quick' : ''}`,
  )
  lines.push('')
  lines.push(
    '| path | median ms | p99 ms | added median ms | first byte median ms | req/s at 64 conns | request-thread CPU µs a request | peak RSS under load MB |',
  )
  lines.push('|---|---|---|---|---|---|---|---|')
  for (const [name, r] of Object.entries(rows)) {
    lines.push(
      `| ${name} | ${fmt(r.latency.median)} | ${fmt(r.latency.p99)} | ${name === 'direct' ? '-' : fmt(r.latency.median - direct.latency.median)} | ${fmt(r.ttfb.median)} | ${Math.round(r.rps)} | ${fmt(r.threadUs, 0)} | ${fmt(r.peakRssMB, 0)} |`,
    )
  }
  lines.push('')
  if (gw) {
    const addedGw = gw.latency.median - direct.latency.median
    const checks = [
      [
        'added median latency ≤ 1.25 × bare',
        addedGw / addedBare,
        1.25,
        `${fmt(addedGw)} ms vs ${fmt(addedBare)} ms`,
        (v, t) => v <= t,
      ],
      [
        'throughput ≥ 0.85 × bare',
        gw.rps / bareRow.rps,
        0.85,
        `${Math.round(gw.rps)} vs ${Math.round(bareRow.rps)} req/s (median of rounds: ${gw.rpsRounds.map(Math.round).join(', ')} vs ${bareRow.rpsRounds.map(Math.round).join(', ')})`,
        (v, t) => v >= t,
      ],
      // the same target as the request thread's CPU a request (the one thread every request needs):
      // throughput 0.85 x bare is at most bare / 0.85 of it; a ratio that other work on a shared
      // machine barely moves, where the req/s rounds swing
      ...(gw.threadUs !== undefined && bareRow.threadUs !== undefined
        ? [
            [
              'request-thread CPU a request ≤ bare / 0.85',
              gw.threadUs / bareRow.threadUs,
              1.176, // 1 / 0.85, to three places
              `${fmt(gw.threadUs, 0)} µs vs ${fmt(bareRow.threadUs, 0)} µs (rounds: ${gw.threadUsRounds.map(Math.round).join(', ')} vs ${bareRow.threadUsRounds.map(Math.round).join(', ')})`,
              (v, t) => v <= t,
            ],
          ]
        : []),
      [
        'added first byte ≤ bare + 0.2 ms',
        gw.ttfb.median - direct.ttfb.median - (bareRow.ttfb.median - direct.ttfb.median),
        0.2,
        `${fmt(gw.ttfb.median - direct.ttfb.median)} ms vs ${fmt(bareRow.ttfb.median - direct.ttfb.median)} ms`,
        (v, t) => v <= t,
      ],
      [
        'daemon idle RSS ≤ 60 MB',
        gateway.idleRssMB,
        60,
        `after start and one key issue; ${fmt(gateway.afterTrafficRssMB, 0)} MB idle 2 s after its warm-up (2 s at 64 connections)`,
        (v, t) => v <= t,
      ],
      [
        'daemon RSS under load ≤ bare',
        gw.peakRssMB / bareRow.peakRssMB,
        1,
        `${fmt(gw.peakRssMB, 0)} MB vs ${fmt(bareRow.peakRssMB, 0)} MB at ${CONNECTIONS} connections`,
        (v, t) => v <= t,
      ],
      ...(tr ? translatedChecks(tr, gw, direct, ccrRow) : []),
      ...otlpChecks(otlpRows, rows, gw),
      ...extra,
    ]
    lines.push('| target | measured | limit | detail | met |')
    lines.push('|---|---|---|---|---|')
    for (const [name, value, limit, detail, ok] of checks)
      lines.push(
        `| ${name} | ${fmt(value, 2)} | ${limit} | ${detail} | ${ok(value, limit) ? 'yes' : '**no**'} |`,
      )
  } else {
    lines.push('(gateway HTTP paths not benchmarked in this run)')
    lines.push('')
    lines.push('| target | measured | limit | detail | met |')
    lines.push('|---|---|---|---|---|')
    for (const [name, value, limit, detail, ok] of extra)
      lines.push(
        `| ${name} | ${fmt(value, 2)} | ${limit} | ${detail} | ${ok(value, limit) ? 'yes' : '**no**'} |`,
      )
  }
  const notes = []
  if (gateway && !translated) notes.push(`gateway (translated: messages -> chat): ${translatedSkipped}`)
  for (const t of dropped) notes.push(`${t.name}: ${t.failed}`)
  if (notes.length > 0)
    lines.push(
      `\nNot benchmarked in this run: ${notes.map((n) => n.replaceAll('|', '/').replace(/\.$/, '')).join('; ')}.`,
    )
  if (cliRows.length > 0) {
    lines.push('')
    lines.push(
      '| CLI start-up (whole process) | median ms | peak RSS MiB | × bare oclif hello | limit | met |',
    )
    lines.push('|---|---|---|---|---|---|')
  }
  for (const r of cliRows) {
    // `gwctl statusline` skips oclif: its limit is 1.2x a bare `node -e 0` of the same run
    if (r.vsNode !== undefined) {
      lines.push(
        `| ${r.name} | ${fmt(r.medianMs, 0)} | ${fmt(r.rssMiB, 0)} | ${fmt(r.vsNode, 2)} × node -e 0 | 1.2 | ${r.vsNode <= 1.2 ? 'yes' : '**no**'} |`,
      )
      continue
    }
    const limited = r.name !== 'bare oclif 4 hello' && r.name !== 'gwctl --version' && r.name !== 'node -e 0'
    lines.push(
      `| ${r.name} | ${fmt(r.medianMs, 0)} | ${fmt(r.rssMiB, 0)} | ${fmt(r.ratio, 2)} | ${limited ? '1.15' : '-'} | ${limited ? (r.ratio <= 1.15 ? 'yes' : '**no**') : '-'} |`,
    )
  }
  if (scanRss)
    lines.push(
      `\nDaemon RSS after its history scan of ${scanRss.mb} MB of agent history (${scanRss.files} files): ${fmt(scanRss.on.peakMB, 0)} MB peak, ${fmt(scanRss.on.soonMB, 0)} MB 2 s after the scan, ${fmt(scanRss.on.afterMB, 0)} MB 35 s after; the same daemon with the scanner off: ${fmt(scanRss.off.afterMB, 0)} MB (not a target).`,
    )
  lines.push(
    `\nLoad average at the end of the run: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(', ')} (1, 5, 15 min; other work on this machine shares its cores).`,
  )
  lines.push(
    `\nReference ratios of this run: bare throughput / direct = ${fmt(bareRow.rps / direct.rps, 2)}; bare added median = ${fmt(addedBare)} ms.`,
  )
  const table = lines.join('\n')
  console.log(table)
  const readmePath = new URL('./README.md', import.meta.url)
  const readme = readFileSync(readmePath, 'utf8')
  const updated = readme.replace(
    /<!-- results -->[\s\S]*<!-- \/results -->/,
    `<!-- results -->\n${table}\n<!-- /results -->`,
  )
  if (!QUICK && !NO_CLI) writeFileSync(readmePath, updated)
}

/**
 * The gateway with OTLP export on, one daemon per collector: `accept` answers every export, `hang`
 * accepts the connection and never answers (the SDK's defaults otherwise: 2048 spans queued,
 * 5 s pause, 10 s export timeout). Optional rows: one that cannot start is left out, saying why.
 */
async function startOtlpTargets(simOrigin) {
  const out = []
  for (const [mode, label] of [
    ['accept', 'collector accepts'],
    ['hang', 'collector never answers'],
  ]) {
    try {
      const collector = await startChild('node', ['bench/telemetry.js', 'collector', mode])
      const t = await startGatewayTarget(simOrigin, {
        translated: false,
        env: {OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${collector.port}`},
      })
      out.push({...t, name: `gateway (OTLP export, ${label})`, otlp: mode, optional: true})
    } catch (error) {
      console.error(`gateway (OTLP export, ${label}) not benchmarked: ${error.message}`)
    }
  }
  return out
}

/**
 * The OTLP rows' checks: throughput and first byte as ratios against the gateway without export of
 * the same run (the issue's promise: export does not move them).
 */
function otlpChecks(otlpRows, rows, gw) {
  const checks = []
  for (const t of otlpRows) {
    const r = rows[t.name]
    if (!r) continue
    const who = t.otlp === 'hang' ? 'OTLP, collector never answers' : 'OTLP, collector accepts'
    checks.push(
      [
        `${who}: throughput ≥ 0.95 × gateway`,
        r.rps / gw.rps,
        0.95,
        `${Math.round(r.rps)} vs ${Math.round(gw.rps)} req/s (rounds: ${r.rpsRounds.map(Math.round).join(', ')} vs ${gw.rpsRounds.map(Math.round).join(', ')})`,
        (v, l) => v >= l,
      ],
      [
        `${who}: first byte ≤ 1.05 × gateway`,
        r.ttfb.median / gw.ttfb.median,
        1.05,
        `${fmt(r.ttfb.median)} ms vs ${fmt(gw.ttfb.median)} ms median; peak RSS under load ${fmt(r.peakRssMB, 0)} vs ${fmt(gw.peakRssMB, 0)} MB; export ${t.export ? `${t.export.state}: ${t.export.exported} spans sent, ${t.export.dropped} dropped, ${t.export.failures} failed exports` : 'state unknown'}`,
        (v, l) => v <= l,
      ],
    )
  }
  return checks
}

/**
 * The checks of the translated row (Anthropic Messages in, chat completions upstream), against
 * the direct chat request, the untranslated gateway row (a daemon of the same build), and
 * claude-code-router, the peer that does the same translation.
 */
function translatedChecks(tr, gw, direct, ccrRow) {
  const added = tr.latency.median - direct.latency.median
  const addedTtfb = tr.ttfb.median - direct.ttfb.median
  const gwTtfb = gw.ttfb.median - direct.ttfb.median
  return [
    [
      'translated: added median latency ≤ 0.5 ms',
      added,
      0.5,
      `messages -> chat ${fmt(added)} ms over direct chat (gateway untranslated: ${fmt(gw.latency.median - direct.latency.median)} ms)`,
      (v, t) => v <= t,
    ],
    [
      'translated: added first byte ≤ gateway + 0.3 ms',
      addedTtfb - gwTtfb,
      0.3,
      `${fmt(addedTtfb)} ms vs ${fmt(gwTtfb)} ms`,
      (v, t) => v <= t,
    ],
    ...(ccrRow
      ? [
          [
            'translated: throughput ≥ 10 × claude-code-router',
            tr.rps / ccrRow.rps,
            10,
            `${Math.round(tr.rps)} vs ${Math.round(ccrRow.rps)} req/s (rounds: ${tr.rpsRounds.map(Math.round).join(', ')} vs ${ccrRow.rpsRounds.map(Math.round).join(', ')})`,
            (v, t) => v >= t,
          ],
        ]
      : []),
    tr.paced
      ? [
          'daemon RSS under translated load ≤ untranslated (the same load)',
          tr.paced.peakRssMB / tr.paced.gatewayPeakRssMB,
          1,
          `${fmt(tr.paced.peakRssMB, 0)} MB vs ${fmt(tr.paced.gatewayPeakRssMB, 0)} MB, a daemon each, peak of each one's rounds at ${tr.paced.rate} req/s; unpaced, each at its own throughput: ${fmt(tr.peakRssMB, 0)} vs ${fmt(gw.peakRssMB, 0)} MB`,
          (v, t) => v <= t,
        ]
      : [
          'daemon RSS under translated load ≤ untranslated',
          tr.peakRssMB / gw.peakRssMB,
          1,
          `${fmt(tr.peakRssMB, 0)} MB vs ${fmt(gw.peakRssMB, 0)} MB, a daemon each, peak of each row's rounds at ${CONNECTIONS} connections`,
          (v, t) => v <= t,
        ],
  ]
}

/**
 * The daemon's resident memory after the history scan it runs at start (and every minute), over
 * `mb` MB of generated Claude Code, Codex CLI and Gemini CLI history (bench/history.js's
 * generator): the same daemon with the scanner off (`GWCTL_HISTORY_SCAN_MS=0`) is the baseline.
 * Not a target of issue 12; it shows what a user with a long history sees in `ps`.
 */
async function historyScanRss(mb) {
  const {generate} = await import('./history.js')
  const base = mkdtempSync(join(tmpdir(), 'gwctl-bench-scan-'))
  process.on('exit', () => rmSync(base, {recursive: true, force: true}))
  const userHome = join(base, 'user-home')
  const {files} = generate(userHome, mb)
  const out = {mb, files}
  for (const scan of ['0', '']) {
    const home = mkdtempSync(join(base, 'gw-'))
    const {child} = await spawnDaemon(home, await freePort(), userHome, {GWCTL_HISTORY_SCAN_MS: scan})
    const t0 = Date.now()
    let peak = 0
    for (;;) {
      await new Promise((r) => setTimeout(r, 200))
      peak = Math.max(peak, rssMB(child.pid) ?? 0)
      const log = readFileSync(join(home, 'gateway.log'), 'utf8')
      if (scan === '0' || /history scan: /.test(log)) break
      if (Date.now() - t0 > 120_000) throw new Error('the daemon did not log its history scan in 2 minutes')
    }
    // two seconds after the scan, and 35 s after: V8's memory reducer may by then have given the
    // scan's young and old generation back (50 MB of history: 109 MB, then 66 in some runs)
    await new Promise((r) => setTimeout(r, 2000))
    const soonMB = rssMB(child.pid)
    await new Promise((r) => setTimeout(r, 33_000))
    out[scan === '0' ? 'off' : 'on'] = {peakMB: Math.max(peak, soonMB), soonMB, afterMB: rssMB(child.pid)}
    const gone = new Promise((r) => child.once('exit', r))
    child.kill('SIGTERM')
    await gone
  }
  return out
}

main()
  // History rescan vs ccusage (bench/history.js; CCUSAGE_BIN for the comparison, --no-history skips it).
  .then(async () => {
    if (process.argv.includes('--no-history')) return
    const {runHistoryBench} = await import('./history.js')
    console.log('history:', JSON.stringify(await runHistoryBench({mb: QUICK ? 50 : 1000}), null, 2))
  })
  .then(() => process.exit(0))
  .catch((error) => {
    console.error(error)
    process.exit(1)
  })
