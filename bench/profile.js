// Where the daemon's CPU goes under load: `node bench/profile.js [--translated] [--stream]
// [--seconds N] [--warmup N] [--connections N] [--top N] [--rate N] [--no-prof] [--body agent[:KB]]
// [--interval µs]`
// (build first; `--body agent`: a coding agent's 64 KB chat request, `agentChatBody` in agent-requests.js). Starts the simulator and the daemon as
// bench/run.js does (the same state, policies and keys), the daemon under `node --cpu-prof`,
// loads it with autocannon, stops it with SIGTERM (so V8 writes the profile) and prints the
// functions with the most self time, with the file of each, and the daemon's CPU time per request
// (/proc; clock ticks of 10 ms). The .cpuprofile stays in the printed folder for Chrome DevTools
// or speedscope.
import {mkdtempSync, readdirSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join, relative} from 'node:path'
import {parseArgs} from 'node:util'
import autocannon from 'autocannon'
import {agentChatBody} from './agent-requests.js'
import {CHAT_BODY, STREAM_BODY, startChild, startGatewayTarget} from './targets.js'

const {values: opts} = parseArgs({
  options: {
    translated: {type: 'boolean', default: false},
    // the bare pass-through (bench/servers.js) instead of the daemon: the floor's CPU per request
    bare: {type: 'boolean', default: false},
    stream: {type: 'boolean', default: false},
    seconds: {type: 'string', default: '10'},
    connections: {type: 'string', default: '64'},
    top: {type: 'string', default: '30'},
    // a fixed request rate (autocannon overallRate): the daemon's CPU time per request then does
    // not carry the per-second costs (timers, batches, the profiler's own sampling) over fewer
    // requests when the machine is busy; --no-prof leaves the profiler off for it
    rate: {type: 'string'},
    'no-prof': {type: 'boolean', default: false},
    warmup: {type: 'string', default: '3'},
    body: {type: 'string', default: ''},
    // the profiler's sampling interval in µs (V8's default 1000): finer for small differences
    interval: {type: 'string'},
  },
})
const agentKb = /^agent(?::(\d+))?$/.exec(opts.body)
if (opts.body && (!agentKb || opts.translated))
  throw new Error('--body: agent or agent:KB, untranslated only')

const dir = mkdtempSync(join(tmpdir(), 'gwctl-prof-'))
if (!opts['no-prof'])
  process.env.GWCTL_BENCH_DAEMON_ARGS = `--cpu-prof --cpu-prof-dir=${dir}${opts.interval ? ` --cpu-prof-interval=${opts.interval}` : ''}`
const sim = await startChild('node', ['bench/servers.js', 'sim'])
const gateway = opts.bare
  ? await bareTarget(`http://127.0.0.1:${sim.port}`)
  : await startGatewayTarget(`http://127.0.0.1:${sim.port}`)
const target = opts.translated ? gateway.translated : gateway
if (!target) throw new Error(`no translated row: ${gateway.translatedSkipped}`)
const body = agentKb
  ? agentChatBody(Number(agentKb[1] ?? 64), {stream: opts.stream})
  : opts.stream
    ? (target.streamBody ?? STREAM_BODY)
    : (target.body ?? CHAT_BODY)
const load = (duration) =>
  autocannon({
    url: `${target.origin}${target.path ?? '/v1/chat/completions'}`,
    method: 'POST',
    headers: target.headers,
    body,
    connections: Number(opts.connections),
    duration,
    ...(opts.rate ? {overallRate: Number(opts.rate)} : {}),
  })
// a warm-up first: the daemon's first requests load modules and compile its code
const warmupRequests = (await load(Number(opts.warmup))).requests.total
const cpuBefore = cpuSeconds(gateway.pid)
const mainBefore = cpuSeconds(gateway.pid, gateway.pid)
const result = await load(Number(opts.seconds))
const cpuUsed = cpuSeconds(gateway.pid) - cpuBefore
const mainUsed = cpuSeconds(gateway.pid, gateway.pid) - mainBefore
console.log(
  `${target.name}${opts.stream ? ' (stream)' : ''}: ${Math.round(result.requests.average)} req/s, ` +
    `${result.non2xx} non-2xx, ${result.errors} errors`,
)
// CPU time per request: what the daemon spends, less sensitive than req/s to other work on a
// shared machine (which takes cores away, not instructions)
if (Number.isFinite(cpuUsed) && result.requests.total > 0)
  console.log(
    `daemon CPU: ${cpuUsed.toFixed(2)} s for ${result.requests.total} requests, ` +
      `${((cpuUsed / result.requests.total) * 1e6).toFixed(0)} µs a request (user + system, /proc); ` +
      `main thread ${((mainUsed / result.requests.total) * 1e6).toFixed(0)} µs (the one a many-core machine waits on)`,
  )
const daemon = gateway.pid
process.kill(daemon, 'SIGTERM')
if (opts['no-prof']) process.exit(0)
// One profile per thread: CPU.<date>.<pid>.<thread id>.<seq>.cpuprofile, the main (request)
// thread's id is 0; the log writer thread's is another.
const threadOf = (f) => Number(f.split('.').at(-3))
let file
for (let i = 0; i < 100 && !file; i++) {
  await new Promise((r) => setTimeout(r, 100))
  file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile') && threadOf(f) === 0)
}
if (!file) throw new Error(`the daemon wrote no profile into ${dir}`)
await new Promise((r) => setTimeout(r, 300)) // the file is written in one go; let it finish

const sampledUs = (p) => p.timeDeltas.reduce((a, b) => a + b, 0)
for (const other of readdirSync(dir).filter((f) => f.endsWith('.cpuprofile') && threadOf(f) !== 0)) {
  const p = JSON.parse(readFileSync(join(dir, other), 'utf8'))
  const idle = p.nodes.filter((n) => n.callFrame.functionName === '(idle)').map((n) => n.id)
  const idleUs = p.samples.reduce((sum, id, i) => sum + (idle.includes(id) ? (p.timeDeltas[i] ?? 0) : 0), 0)
  console.log(
    `thread ${threadOf(other)}: ${(sampledUs(p) / 1e6).toFixed(2)} s sampled, ${((sampledUs(p) - idleUs) / 1e6).toFixed(2)} s not idle (${other})`,
  )
}

const profile = JSON.parse(readFileSync(join(dir, file), 'utf8'))

/** The bare pass-through as a target, under the profiler as the daemon is. */
async function bareTarget(simOrigin) {
  const args = opts['no-prof'] ? [] : ['--cpu-prof', `--cpu-prof-dir=${dir}`]
  const bare = await startChild('node', [...args, 'bench/servers.js', 'bare', simOrigin])
  return {
    name: 'bare pass-through',
    origin: `http://127.0.0.1:${bare.port}`,
    pid: bare.child.pid,
    headers: {'content-type': 'application/json', authorization: 'Bearer sim'},
  }
}

/** User + system CPU seconds of a process, or of one of its threads, so far (NaN where there is no /proc). */
function cpuSeconds(pid, tid) {
  try {
    // fields after the command name (which may hold spaces): utime is the 12th, stime the 13th
    const path = tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`
    const fields = readFileSync(path, 'utf8').split(') ')[1].split(' ')
    return (Number(fields[11]) + Number(fields[12])) / 100
  } catch {
    return Number.NaN
  }
}
const self = new Map()
const dt = new Map()
profile.samples.forEach((id, i) => dt.set(id, (dt.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)))
let total = 0
for (const node of profile.nodes) {
  const us = dt.get(node.id) ?? 0
  total += us
  const {functionName, url, lineNumber} = node.callFrame
  const where = url ? `${relative(process.cwd(), url.replace(/^file:\/\//, ''))}:${lineNumber + 1}` : ''
  const key = `${functionName || '(anonymous)'} ${where}`
  self.set(key, (self.get(key) ?? 0) + us)
}
const byFile = new Map()
for (const [key, us] of self) {
  const f = key.split(' ').at(-1).replace(/:\d+$/, '') || key
  byFile.set(f, (byFile.get(f) ?? 0) + us)
}
// the share of the sampled time, and self time per request of the measured load (the warm-up's
// samples are in the profile too, so this is an upper bound)
const pct = (us) =>
  `${((100 * us) / total).toFixed(1).padStart(5)} % ${(us / (result.requests.total + warmupRequests)).toFixed(1).padStart(6)} µs/req`
console.log(`\nself time, top ${opts.top} functions (of ${(total / 1e6).toFixed(2)} s sampled):`)
for (const [key, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(opts.top)))
  console.log(`${pct(us)}  ${key}`)
console.log('\nself time by file:')
for (const [f, us] of [...byFile].sort((a, b) => b[1] - a[1]).slice(0, 20)) console.log(`${pct(us)}  ${f}`)
console.log(`\nprofile: ${join(dir, file)}`)
process.exit(0)
