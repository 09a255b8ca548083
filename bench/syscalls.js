// Syscalls a request on the request thread: `node bench/syscalls.js [--bare] [--translated]
// [--stream] [--requests N]` (Linux, strace on PATH; build first). Starts the simulator and the daemon (or
// the bare pass-through) as bench/profile.js does, warms it up, then attaches `strace -c` to the
// request thread only (its tid is the pid) for a fixed number of requests at a fixed rate and
// prints each syscall's count a request: counted, not timed, so it reads the same on a busy machine.
import {spawn} from 'node:child_process'
import {parseArgs} from 'node:util'
import autocannon from 'autocannon'
import {CHAT_BODY, STREAM_BODY, startChild, startGatewayTarget} from './targets.js'

const {values: opts} = parseArgs({
  options: {
    bare: {type: 'boolean', default: false},
    translated: {type: 'boolean', default: false},
    stream: {type: 'boolean', default: false},
    requests: {type: 'string', default: '4000'},
    connections: {type: 'string', default: '64'},
  },
})
const sim = await startChild('node', ['bench/servers.js', 'sim'])
const simOrigin = `http://127.0.0.1:${sim.port}`
let target
if (opts.bare) {
  const bare = await startChild('node', ['bench/servers.js', 'bare', simOrigin])
  target = {
    name: 'bare pass-through',
    origin: `http://127.0.0.1:${bare.port}`,
    pid: bare.child.pid,
    headers: {'content-type': 'application/json', authorization: 'Bearer sim'},
  }
} else {
  const gateway = await startGatewayTarget(simOrigin)
  target = opts.translated ? gateway.translated : gateway
}
const load = (amount) =>
  autocannon({
    url: `${target.origin}${target.path ?? '/v1/chat/completions'}`,
    method: 'POST',
    headers: target.headers,
    body: opts.stream ? (target.streamBody ?? STREAM_BODY) : (target.body ?? CHAT_BODY),
    connections: Number(opts.connections),
    amount,
    overallRate: 1500,
  })
await load(3000)
const strace = spawn('strace', ['-c', '-p', String(target.pid)], {stdio: ['ignore', 'ignore', 'pipe']})
let report = ''
strace.stderr.on('data', (d) => (report += d))
await new Promise((r) => setTimeout(r, 500))
const n = Number(opts.requests)
const result = await load(n)
await new Promise((r) => setTimeout(r, 300))
strace.kill('SIGINT')
await new Promise((r) => strace.on('close', r))
console.log(`${target.name}: ${result.requests.total} requests, ${result.non2xx} non-2xx`)
for (const line of report.split('\n')) {
  const m = /^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)$/.exec(line)
  if (m) console.log(`${(Number(m[1]) / result.requests.total).toFixed(2).padStart(8)}  ${m[2]}`)
}
process.kill(target.pid, 'SIGTERM')
process.exit(0)
