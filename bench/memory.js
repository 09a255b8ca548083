// Where the gateway daemon's memory under load goes, against the bare pass-through's (issue 32):
// `node bench/memory.js [--rounds N] [--seconds N] [--translated]` (build first; `--translated`:
// a third server, the translated route's own daemon asked in Anthropic Messages). The simulator, the bare
// pass-through and the daemon of bench/run.js (the same state and key), each server with
// bench/memory-probe.cjs preloaded; interleaved rounds of 64-connection chat load (autocannon);
// prints each server's peak RSS per round (/proc, every 200 ms, as bench/run.js) and, at its
// highest RSS, process.memoryUsage(), V8's heap spaces and its resident memory by mapping.
import {existsSync, mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {parseArgs} from 'node:util'
import autocannon from 'autocannon'
import {CHAT_BODY, rssMB, startChild, startGatewayTarget} from './targets.js'

const {values: opts} = parseArgs({
  options: {
    rounds: {type: 'string', default: '3'},
    seconds: {type: 'string', default: '5'},
    // a third server: a daemon of its own asked in Anthropic Messages through the translated
    // policy (messages -> chat, as bench/run.js's translated row), its memory against the
    // untranslated daemon's under the same load (issue 33)
    translated: {type: 'boolean', default: false},
    // a fixed request rate for every server (autocannon overallRate): the same load, where the
    // unpaced rounds load each server at its own throughput (more requests a second hold more
    // memory in flight)
    rate: {type: 'string'},
  },
})
const dir = mkdtempSync(join(tmpdir(), 'gwctl-memory-'))
const probe = join(import.meta.dirname, 'memory-probe.cjs')
const sim = await startChild('node', ['bench/servers.js', 'sim'])
const simOrigin = `http://127.0.0.1:${sim.port}`
const bareOut = join(dir, 'bare.json')
const bare = await startChild('node', ['--require', probe, 'bench/servers.js', 'bare', simOrigin], {
  GWCTL_MEMORY_PROBE: bareOut,
})
const gatewayOut = join(dir, 'gateway.json')
process.env.GWCTL_BENCH_DAEMON_ARGS = `${process.env.GWCTL_BENCH_DAEMON_ARGS ?? ''} --require ${probe}`
const gateway = await startGatewayTarget(simOrigin, {
  translated: false,
  env: {GWCTL_MEMORY_PROBE: gatewayOut},
})
const targets = [
  {
    name: 'bare pass-through',
    origin: `http://127.0.0.1:${bare.port}`,
    pid: bare.child.pid,
    out: bareOut,
    headers: {'content-type': 'application/json', authorization: 'Bearer sim'},
  },
  {name: 'gateway', origin: gateway.origin, pid: gateway.pid, out: gatewayOut, headers: gateway.headers},
]
if (opts.translated) {
  const translatedOut = join(dir, 'translated.json')
  const second = await startGatewayTarget(simOrigin, {env: {GWCTL_MEMORY_PROBE: translatedOut}})
  if (!second.translated) throw new Error(`no translated row: ${second.translatedSkipped}`)
  const t = second.translated
  targets.push({
    name: 'gateway (translated)',
    origin: t.origin,
    pid: t.pid,
    out: translatedOut,
    headers: t.headers,
    path: t.path,
    body: t.body,
  })
}
const load = (t, duration) =>
  autocannon({
    url: `${t.origin}${t.path ?? '/v1/chat/completions'}`,
    method: 'POST',
    headers: t.headers,
    body: t.body ?? CHAT_BODY,
    connections: 64,
    duration,
    ...(opts.rate ? {overallRate: Number(opts.rate)} : {}),
  })
for (const t of targets) {
  t.idleMB = rssMB(t.pid)
  t.peaks = []
  t.rps = []
  await load(t, 2) // warm-up: the first requests load undici and compile the code
}
for (let r = 0; r < Number(opts.rounds); r++)
  for (const t of r % 2 ? [...targets].reverse() : targets) {
    let peak = 0
    const sampler = setInterval(() => (peak = Math.max(peak, rssMB(t.pid) ?? 0)), 200)
    const result = await load(t, Number(opts.seconds))
    clearInterval(sampler)
    if (result.non2xx > 0 || result.errors > 0)
      throw new Error(`${t.name}: ${result.non2xx} non-2xx, ${result.errors} errors`)
    t.peaks.push(Math.round(peak))
    t.rps.push(Math.round(result.requests.average))
  }
for (const t of targets) process.kill(t.pid, 'SIGTERM')
for (let i = 0; i < 100 && !targets.every((t) => existsSync(t.out)); i++)
  await new Promise((r) => setTimeout(r, 100))
const probes = targets.map((t) => (existsSync(t.out) ? JSON.parse(readFileSync(t.out, 'utf8')) : undefined))
const cell = (p, pick) => (p?.peak ? String(pick(p.peak) ?? '-') : 'n/a')
const rows = [
  ['idle RSS MB (before load)', ...targets.map((t) => t.idleMB?.toFixed(1))],
  ['peak RSS MB per round (/proc)', ...targets.map((t) => t.peaks.join(', '))],
  ['req/s per round', ...targets.map((t) => t.rps.join(', '))],
  ['highest RSS the probe saw MB', ...probes.map((p) => String(p?.peakRssMB ?? 'n/a'))],
  ...['heapTotal', 'heapUsed', 'external', 'arrayBuffers'].map((k) => [
    `at that peak: ${k} MB`,
    ...probes.map((p) => cell(p, (s) => s.usage[k])),
  ]),
]
const spaces = [...new Set(probes.flatMap((p) => Object.keys(p?.peak?.spaces ?? {})))]
for (const s of spaces)
  rows.push([`V8 ${s} space, resident MB`, ...probes.map((p) => cell(p, (x) => x.spaces[s]))])
const maps = [...new Set(probes.flatMap((p) => Object.keys(p?.peak?.mappings ?? {})))]
// the mappings of under 0.1 MB in both ([vdso], [vvar], ...) are left out
for (const m of maps.filter((m) => probes.some((p) => (p?.peak?.mappings[m] ?? 0) >= 0.1)))
  rows.push([`${m} MB`, ...probes.map((p) => cell(p, (x) => x.mappings[m]))])
console.log(`| | ${targets.map((t) => t.name).join(' | ')} |\n|---|${targets.map(() => '---|').join('')}`)
for (const row of rows) console.log(`| ${row.join(' | ')} |`)
process.exit(0)
