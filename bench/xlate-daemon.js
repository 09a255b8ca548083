// Agent-sized requests on the daemon's translated route: `node bench/xlate-daemon.js [--sizes
// 60,250] [--requests N]`, run from a built checkout (its bench/targets.js and dist: the same
// simulator, state and translated policy as the bench). Sends Claude Code's request of each size
// (`bench/agent-requests.js`, non-stream, thinking off so the simulator's answer stays short)
// one after another to the translated `messages -> chat` route, then the same conversation as a
// chat request (what the translation sends upstream) to the untranslated chat route, and prints
// the daemon's main-thread CPU per request for each (/proc; clock ticks of 10 ms). `--stream`: the
// requests stream, and the median time to the answer's first byte is printed too. To compare two builds, run it from each checkout
// in turn (this file may be another checkout's): `(cd ../base && node $OLDPWD/bench/xlate-daemon.js)`.
import {readdirSync, readFileSync} from 'node:fs'
import {resolve} from 'node:path'
import {parseArgs} from 'node:util'

const {values: opts} = parseArgs({
  options: {
    sizes: {type: 'string', default: '60,250'},
    requests: {type: 'string', default: '120'},
    stream: {type: 'boolean', default: false},
  },
})
const root = process.cwd()
const {startChild, startGatewayTarget} = await import(resolve(root, 'bench/targets.js'))
const {claudeCodeRequest} = await import('./agent-requests.js')

/** This checkout's translation module (its chunk exports it, or its namespace). */
async function translation() {
  const chunk = readdirSync(resolve(root, 'dist/chunks')).find((f) => /^translate-[\w-]+\.js$/.test(f))
  const module = await import(resolve(root, 'dist/chunks', chunk))
  if (module.decodeClientRequest) return module
  return Object.values(module).find((v) => typeof v?.decodeClientRequest === 'function')
}
const t = await translation()

const sim = await startChild('node', ['bench/servers.js', 'sim'])
const gateway = await startGatewayTarget(`http://127.0.0.1:${sim.port}`)
const target = gateway.translated
if (!target) throw new Error(`no translated route: ${gateway.translatedSkipped}`)

/** CPU seconds of one thread (the daemon's main thread: its id is the process id). */
function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

/**
 * Main-thread µs a request for `n` sequential requests of `text` to `path` with `headers`, and the
 * median ms from sending the request to the answer's first byte.
 */
async function measure(path, headers, text, n) {
  const firstBytes = []
  const send = async () => {
    const started = performance.now()
    const res = await fetch(`${target.origin}${path}`, {method: 'POST', headers, body: text})
    const reader = res.body.getReader()
    const chunks = []
    for (let first = true; ; first = false) {
      const {done, value} = await reader.read()
      if (first) firstBytes.push(performance.now() - started)
      if (done) break
      chunks.push(value)
    }
    if (res.status !== 200)
      throw new Error(`${path}: ${res.status} ${Buffer.concat(chunks).toString().slice(0, 300)}`)
  }
  for (let i = 0; i < 20; i++) await send()
  firstBytes.length = 0
  const before = cpuSeconds(target.pid)
  for (let i = 0; i < n; i++) await send()
  const cpu = ((cpuSeconds(target.pid) - before) / n) * 1e6
  const median = [...firstBytes].sort((a, b) => a - b)[Math.floor(firstBytes.length / 2)]
  return {cpu, firstByte: median}
}

const rows = []
for (const kb of opts.sizes.split(',').map(Number)) {
  const body = claudeCodeRequest(kb * 1024)
  body.stream = opts.stream
  body.max_tokens = 64
  delete body.thinking
  const text = JSON.stringify(body)
  // the same conversation as a chat request: what the translated route sends the simulator
  const chat = JSON.parse(
    t.encodeUpstreamRequest(t.decodeClientRequest('messages', body, {}), 'chat', 'sim-mini').body.toString(),
  )
  const chatText = JSON.stringify(chat)
  const n = Math.max(20, Math.round((Number(opts.requests) * 250) / kb))
  const translated = await measure('/v1/messages', target.headers, text, n)
  const direct = await measure('/v1/chat/completions', gateway.headers, chatText, n)
  const first = (m) => (opts.stream ? `, first byte ${m.firstByte.toFixed(2)} ms` : '')
  rows.push(
    `${Math.round(Buffer.byteLength(text) / 1024)} KB translated ${translated.cpu.toFixed(0)} µs${first(translated)}, ` +
      `its ${Math.round(Buffer.byteLength(chatText) / 1024)} KB chat body untranslated ${direct.cpu.toFixed(0)} µs${first(direct)} (${n} requests each)`,
  )
}
console.log(
  `daemon main thread a request, messages -> chat${opts.stream ? ' (stream)' : ''}: ${rows.join('; ')}`,
)
process.exit(0)
