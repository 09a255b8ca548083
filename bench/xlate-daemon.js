// Agent-sized requests on the daemon's translated route: `node bench/xlate-daemon.js [--sizes
// 60,250] [--requests N]`, run from a built checkout (its bench/targets.js and dist: the same
// simulator, state and translated policy as the bench). Sends Claude Code's request of each size
// (`bench/agent-requests.js`, non-stream, thinking off so the simulator's answer stays short)
// one after another to the translated `messages -> chat` route and prints the daemon's main-thread
// CPU per request (/proc; clock ticks of 10 ms). To compare two builds, run it from each checkout
// in turn (this file may be another checkout's): `(cd ../base && node $OLDPWD/bench/xlate-daemon.js)`.
import {readFileSync} from 'node:fs'
import {resolve} from 'node:path'
import {parseArgs} from 'node:util'

const {values: opts} = parseArgs({
  options: {
    sizes: {type: 'string', default: '60,250'},
    requests: {type: 'string', default: '120'},
  },
})
const root = process.cwd()
const {startChild, startGatewayTarget} = await import(resolve(root, 'bench/targets.js'))
const {claudeCodeRequest} = await import('./agent-requests.js')

const sim = await startChild('node', ['bench/servers.js', 'sim'])
const gateway = await startGatewayTarget(`http://127.0.0.1:${sim.port}`)
const target = gateway.translated
if (!target) throw new Error(`no translated route: ${gateway.translatedSkipped}`)

/** CPU seconds of one thread (the daemon's main thread: its id is the process id). */
function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

const rows = []
for (const kb of opts.sizes.split(',').map(Number)) {
  const body = claudeCodeRequest(kb * 1024)
  body.stream = false
  body.max_tokens = 64
  delete body.thinking
  const text = JSON.stringify(body)
  const send = async () => {
    const res = await fetch(`${target.origin}/v1/messages`, {
      method: 'POST',
      headers: target.headers,
      body: text,
    })
    const answer = await res.text()
    if (res.status !== 200) throw new Error(`${res.status} ${answer.slice(0, 300)}`)
  }
  for (let i = 0; i < 20; i++) await send()
  const n = Math.max(20, Math.round((Number(opts.requests) * 250) / kb))
  const before = cpuSeconds(target.pid)
  for (let i = 0; i < n; i++) await send()
  const us = ((cpuSeconds(target.pid) - before) / n) * 1e6
  rows.push(`${Math.round(Buffer.byteLength(text) / 1024)} KB: ${us.toFixed(0)} µs (${n} requests)`)
}
console.log(`daemon main thread a request, translated messages -> chat: ${rows.join('; ')}`)
process.exit(0)
