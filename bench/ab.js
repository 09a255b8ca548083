// Two gateway daemons side by side: `node bench/ab.js --base DIR [--env K=V,...] [--translated]
// [--stream] [--body agent[:KB]] [--rounds N] [--rate N] [--seconds N]`. DIR is another checkout of gwctl, built (a
// `git worktree add --detach` of main, say); this checkout is the branch. Both daemons answer the
// same simulator at the same fixed rate (autocannon, 64 connections), in interleaved rounds, and
// each round reads each daemon's request thread from /proc: its CPU a request is what a many-core
// machine's throughput follows, and other work on a shared machine barely moves it (it takes
// cores away, not instructions), where req/s swings from round to round. `--env` sets variables
// for the branch's daemon only (with `--base .`, one build against itself with a setting changed).
// Prints each daemon's medians and rounds, the branch/base ratio per round and the peak RSS.
// `--body agent[:KB]`: a chat request the size of a coding agent's (64 KB by default, see
// `agentChatBody` in agent-requests.js) instead of the bench's one-line request (untranslated route).
import {readFileSync} from 'node:fs'
import {resolve} from 'node:path'
import {parseArgs} from 'node:util'
import autocannon from 'autocannon'
import {agentChatBody} from './agent-requests.js'
import {CHAT_BODY, STREAM_BODY, startChild} from './targets.js'

const {values: opts} = parseArgs({
  options: {
    base: {type: 'string'},
    env: {type: 'string', default: ''},
    translated: {type: 'boolean', default: false},
    stream: {type: 'boolean', default: false},
    rounds: {type: 'string', default: '8'},
    rate: {type: 'string', default: '1200'},
    seconds: {type: 'string', default: '3'},
    body: {type: 'string', default: ''},
  },
})
const agentKb = /^agent(?::(\d+))?$/.exec(opts.body)
if (opts.body && (!agentKb || opts.translated))
  throw new Error('--body: agent or agent:KB, untranslated only')
const agentBody = agentKb ? agentChatBody(Number(agentKb[1] ?? 64), {stream: opts.stream}) : undefined
if (!opts.base) throw new Error('--base DIR: the other checkout (built) to compare with')
const roots = {base: resolve(opts.base), branch: resolve(import.meta.dirname, '..')}
const env = Object.fromEntries(
  opts.env
    .split(',')
    .filter(Boolean)
    .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
)

const sim = await startChild('node', ['bench/servers.js', 'sim'])
const simOrigin = `http://127.0.0.1:${sim.port}`
const rows = []
for (const [name, root] of Object.entries(roots)) {
  // each checkout's own bench/targets.js, so each daemon is its own build's (`?name`: two instances)
  const {startGatewayTarget} = await import(`${root}/bench/targets.js?${name}`)
  const saved = {...process.env}
  if (name === 'branch') Object.assign(process.env, env)
  const gateway = await startGatewayTarget(simOrigin, {translated: opts.translated})
  process.env = saved
  const target = opts.translated ? gateway.translated : gateway
  if (!target) throw new Error(`${name}: no translated row (${gateway.translatedSkipped})`)
  rows.push({name, pid: gateway.pid, target, thread: [], process: [], peak: 0})
}

/** User + system CPU seconds of a process, or of one of its threads, from /proc. */
function cpuSeconds(pid, tid) {
  const path = tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`
  const fields = readFileSync(path, 'utf8').split(') ')[1].split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}
const rssMB = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024
const load = (row, seconds) =>
  autocannon({
    url: `${row.target.origin}${row.target.path ?? '/v1/chat/completions'}`,
    method: 'POST',
    headers: row.target.headers,
    body:
      agentBody ?? (opts.stream ? (row.target.streamBody ?? STREAM_BODY) : (row.target.body ?? CHAT_BODY)),
    connections: 64,
    duration: seconds,
    overallRate: Number(opts.rate),
  })

// a warm-up each (the first requests load modules and compile code; `auto` starts its thread)
for (const row of rows) await load(row, 2)
for (let r = 0; r < Number(opts.rounds); r++)
  for (const row of r % 2 ? [...rows].reverse() : rows) {
    const before = [cpuSeconds(row.pid), cpuSeconds(row.pid, row.pid)]
    const sampler = setInterval(() => (row.peak = Math.max(row.peak, rssMB(row.pid))), 100)
    const result = await load(row, Number(opts.seconds))
    clearInterval(sampler)
    if (result.non2xx || result.errors)
      throw new Error(`${row.name}: ${result.non2xx} non-2xx, ${result.errors} errors`)
    row.process.push(((cpuSeconds(row.pid) - before[0]) / result.requests.total) * 1e6)
    row.thread.push(((cpuSeconds(row.pid, row.pid) - before[1]) / result.requests.total) * 1e6)
  }

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
const list = (values, digits = 0) => values.map((v) => v.toFixed(digits)).join(' ')
for (const row of rows)
  console.log(
    `${row.name.padEnd(6)}  request thread ${median(row.thread).toFixed(0)} µs a request [${list(row.thread)}]  ` +
      `process ${median(row.process).toFixed(0)} [${list(row.process)}]  peak RSS ${row.peak.toFixed(1)} MB`,
  )
const [base, branch] = rows
const ratios = branch.thread.map((v, i) => v / base.thread[i])
console.log(`branch / base, request thread: median ${median(ratios).toFixed(3)} [${list(ratios, 2)}]`)
console.log(
  `(${opts.rate} req/s, ${opts.rounds} rounds of ${opts.seconds} s, load average ${(await import('node:os'))
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')})`,
)
process.exit(0)
