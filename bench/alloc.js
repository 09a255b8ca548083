// Where the daemon's request path allocates: `node bench/alloc.js [--translated] [--stream] [--seconds N]
// [--rate N] [--top N]` (build first). Starts the simulator and the daemon as bench/run.js does,
// the daemon with `--inspect` on a free loopback port; after a warm-up, V8's sampling heap
// profiler (every 512 bytes, with the objects minor and major GCs collected: garbage is what a
// request path makes) runs while autocannon loads the daemon at a fixed rate, and the bytes
// allocated a request are printed by file and by function. What a request allocates sets how
// often the young generation is scavenged and how much of it is promoted, and so a daemon's
// memory under load (bench/README.md, "Stop 40").
import {parseArgs} from 'node:util'
import autocannon from 'autocannon'
import {WebSocket} from 'undici'
import {CHAT_BODY, STREAM_BODY, freePort, startChild, startGatewayTarget} from './targets.js'

const {values: opts} = parseArgs({
  options: {
    translated: {type: 'boolean', default: false},
    stream: {type: 'boolean', default: false},
    seconds: {type: 'string', default: '5'},
    rate: {type: 'string', default: '2000'},
    top: {type: 'string', default: '30'},
  },
})
const sim = await startChild('node', ['bench/servers.js', 'sim'])
const inspectPort = await freePort()
process.env.GWCTL_BENCH_DAEMON_ARGS = `${process.env.GWCTL_BENCH_DAEMON_ARGS ?? ''} --inspect=127.0.0.1:${inspectPort}`
const gateway = await startGatewayTarget(`http://127.0.0.1:${sim.port}`, {translated: opts.translated})
const t = opts.translated ? gateway.translated : gateway
if (!t) throw new Error(`no translated route: ${gateway.translatedSkipped}`)
const load = (seconds) =>
  autocannon({
    url: `${t.origin}${t.path ?? '/v1/chat/completions'}`,
    method: 'POST',
    headers: t.headers,
    body: opts.stream ? (t.streamBody ?? STREAM_BODY) : (t.body ?? CHAT_BODY),
    connections: 64,
    duration: seconds,
    overallRate: Number(opts.rate),
  })
await load(3) // warm-up: modules loaded, the request path compiled

const [target] = await (await fetch(`http://127.0.0.1:${inspectPort}/json/list`)).json()
const ws = new WebSocket(target.webSocketDebuggerUrl)
await new Promise((resolve, reject) => {
  ws.onopen = resolve
  ws.onerror = reject
})
const waiting = new Map()
let lastId = 0
ws.onmessage = (event) => {
  const message = JSON.parse(event.data)
  waiting.get(message.id)?.(message)
  waiting.delete(message.id)
}
const send = (method, params = {}) =>
  new Promise((resolve) => {
    const id = ++lastId
    waiting.set(id, resolve)
    ws.send(JSON.stringify({id, method, params}))
  })
await send('HeapProfiler.startSampling', {
  samplingInterval: 512,
  includeObjectsCollectedByMajorGC: true,
  includeObjectsCollectedByMinorGC: true,
})
const result = await load(Number(opts.seconds))
const {result: sampled} = await send('HeapProfiler.stopSampling')
ws.close()
process.kill(gateway.pid, 'SIGTERM')
if (result.non2xx > 0 || result.errors > 0)
  throw new Error(`${result.non2xx} non-2xx, ${result.errors} errors`)

const requests = result.requests.total
const byFile = new Map()
const byFunction = new Map()
let total = 0
const add = (map, key, bytes) => map.set(key, (map.get(key) ?? 0) + bytes)
const walk = (node) => {
  const frame = node.callFrame
  // dist/chunks/name-HASH.js as dist/chunks/name.js: the same name from one build to the next
  const file = (frame.url || '(V8)')
    .replace(/^(?:file:\/\/)?\/.*?\/(dist|node_modules)\//, '$1/')
    .replace(/-[\w-]{8}\.js$/, '.js')
  total += node.selfSize
  add(byFile, file, node.selfSize)
  add(byFunction, `${frame.functionName || '(anonymous)'} ${file}:${frame.lineNumber + 1}`, node.selfSize)
  for (const child of node.children) walk(child)
}
walk(sampled.profile.head)
const perRequest = (bytes) => `${(bytes / requests).toFixed(0).padStart(7)} B`
console.log(
  `${opts.translated ? 'translated (messages -> chat)' : 'gateway'}: ${requests} requests at ${opts.rate}/s, ${(total / requests / 1024).toFixed(1)} KB allocated a request`,
)
console.log('\nby file, a request:')
for (const [k, v] of [...byFile].sort((a, b) => b[1] - a[1]).slice(0, 15))
  console.log(`${perRequest(v)}  ${k}`)
console.log('\nby function, a request:')
for (const [k, v] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, Number(opts.top)))
  console.log(`${perRequest(v)}  ${k}`)
process.exit(0)
