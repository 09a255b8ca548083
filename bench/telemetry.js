// What telemetry costs a gateway request, in process (issue 27; docs/TELEMETRY.md "Cost"):
// the router's emit of a finished request's row with no subscriber (the baseline), with the
// Prometheus metrics subscribed, and with OTLP export on as well (to a receiver in this process
// that accepts everything). Two figures per row: the emit itself (all the request path pays:
// an array push) and the fold a moment later (metrics, and span + GenAI metrics with export),
// which runs on the same thread but after the answer went out. `node bench/telemetry.js [rows]`
// after `npm run build`.
//
// `node bench/telemetry.js rss [seconds] [accept|hang]`: the daemon's memory instead (issue 27, the memory
// regression): a gateway (`bench/targets.js`, the bench's state) in front of the simulator; its
// RSS idle (1 s after start and one key issue, and 5 s after), peak RSS during `seconds` (default
// 20) of 64-connection chat load (autocannon), its RSS and high-water mark (VmHWM) after, then the
// same after one `GET /metrics` (the first scrape loads prom-client and the pricer). One JSON line.
// With `accept` or `hang`, the daemon exports over OTLP to such a collector (see `collector`).
//
// `node bench/telemetry.js collector accept|hang`: the OTLP collectors of `npm run bench`'s export
// rows (bench/run.js), in a process of their own; prints `READY <port>`. `accept` reads each export
// and answers 200 `{}`; `hang` is a TCP server that accepts connections and never says a byte.
import {createServer} from 'node:http'
import {readFileSync} from 'node:fs'

if (process.argv[2] === 'collector') {
  await collector(process.argv[3])
  await new Promise(() => {}) // serves until the bench kills it
}

async function collector(mode) {
  process.on('SIGTERM', () => process.exit(0))
  const {createServer: createTcpServer} = await import('node:net')
  const server =
    mode === 'hang'
      ? createTcpServer((socket) => socket.on('error', () => {})) // accepts, reads nothing, answers nothing
      : createServer((req, res) => {
          req.resume()
          req.on('end', () => {
            res.writeHead(200, {'content-type': 'application/json'})
            res.end('{}')
          })
        })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  process.stdout.write(`READY ${server.address().port}\n`)
}

if (process.argv[2] === 'rss') {
  await daemonMemory(Number(process.argv[3] ?? 20), process.argv[4])
  process.exit(0)
}

/** `otlp`: none, or `accept` / `hang` for a daemon exporting to such a collector. */
async function daemonMemory(seconds, otlp) {
  const {startChild, startGatewayTarget, rssMB, CHAT_BODY} = await import('./targets.js')
  const {default: autocannon} = await import('autocannon')
  const hwmMB = (pid) =>
    Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024
  const sim = await startChild('node', ['bench/servers.js', 'sim'])
  const env = {}
  if (otlp) {
    const collector = await startChild('node', ['bench/telemetry.js', 'collector', otlp])
    env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${collector.port}`
  }
  const gateway = await startGatewayTarget(`http://127.0.0.1:${sim.port}`, {translated: false, env})
  const pid = gateway.pid
  await new Promise((r) => setTimeout(r, 4000))
  const idle5sMB = rssMB(pid)
  let peak = 0
  const sampler = setInterval(() => (peak = Math.max(peak, rssMB(pid) ?? 0)), 200)
  const result = await autocannon({
    url: `${gateway.origin}/v1/chat/completions`,
    method: 'POST',
    headers: gateway.headers,
    body: CHAT_BODY,
    connections: 64,
    duration: seconds,
  })
  clearInterval(sampler)
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${result.non2xx} non-2xx, ${result.errors} errors`)
  const afterLoad = {rssMB: rssMB(pid), hwmMB: hwmMB(pid)}
  const scraped = await fetch(`${gateway.origin}/metrics`).then((r) => r.text())
  await new Promise((r) => setTimeout(r, 1000))
  const out = {
    idleRssMB: gateway.idleRssMB,
    idle5sMB,
    loadPeakRssMB: peak,
    afterLoadRssMB: afterLoad.rssMB,
    afterLoadHwmMB: afterLoad.hwmMB,
    afterScrapeRssMB: rssMB(pid),
    afterScrapeHwmMB: hwmMB(pid),
    requests: result.requests.total,
    rps: result.requests.average,
    scrapedRequests: [...scraped.matchAll(/^gwctl_requests_total\{.*\} (\d+)$/gm)].reduce(
      (a, m) => a + Number(m[1]),
      0,
    ),
  }
  for (const k of Object.keys(out)) if (typeof out[k] === 'number') out[k] = Math.round(out[k] * 10) / 10
  console.log(JSON.stringify(out))
}

const {emitGatewayEvent} = await import('../dist/daemon/events.js')
const {Telemetry} = await import('../dist/daemon/telemetry/telemetry.js')

const ROWS = Number(process.argv[2] ?? 50_000)
const agents = 20
const models = ['sim-mini', 'sim-pro', 'claude-sim', 'gemini-sim']

function row(i) {
  return {
    time: Date.now(),
    agentId: `agt_${i % agents}`,
    keyPrefix: 'gw-abcdefgh',
    policyId: 'default-codex',
    entrance: 'chat',
    requestedModel: models[i % models.length],
    provider: 'sim-chat',
    model: models[i % models.length],
    status: i % 50 === 0 ? 502 : 200,
    fallback: i % 100 === 0,
    inputTokens: 1200 + (i % 300),
    outputTokens: 300 + (i % 50),
    cacheReadTokens: 800,
    cacheCreationTokens: 0,
    reasoningTokens: 20,
    latencyMs: 850.25,
    ttfbMs: 120.5,
    error: null,
    project: null,
    requestId: `req_${i}`,
  }
}

const rows = Array.from({length: ROWS}, (_, i) => row(i))

function measure(label, telemetry) {
  // warm-up, then the measured pass
  for (let i = 0; i < 2000; i++) emitGatewayEvent({type: 'request', entry: rows[i]})
  telemetry?.fold()
  const t0 = process.hrtime.bigint()
  for (let i = 0; i < ROWS; i++) emitGatewayEvent({type: 'request', entry: rows[i]})
  const t1 = process.hrtime.bigint()
  telemetry?.fold()
  const t2 = process.hrtime.bigint()
  const us = (ns) => (Number(ns) / 1000 / ROWS).toFixed(3)
  console.log(
    `${label.padEnd(34)} emit ${us(t1 - t0).padStart(7)} us/request   fold ${us(t2 - t1).padStart(7)} us/request`,
  )
}

measure('no subscriber (baseline)', undefined)

const metricsOnly = await Telemetry.start({})
measure('Prometheus metrics', metricsOnly)
await metricsOnly.close()

let received = 0
const receiver = createServer((req, res) => {
  req.resume()
  req.on('end', () => {
    received++
    res.writeHead(200, {'content-type': 'application/json'})
    res.end('{}')
  })
})
await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve))
const base = `http://127.0.0.1:${receiver.address().port}`
const withExport = await Telemetry.start({
  otlp: {
    endpoint: base,
    tracesUrl: `${base}/v1/traces`,
    metricsUrl: `${base}/v1/metrics`,
    headers: {},
    serviceName: 'bench',
    version: '0',
    maxQueue: ROWS + 2000,
    delayMs: 60_000,
    timeoutMs: 10_000,
    metricIntervalMs: 60_000,
  },
})
measure('metrics + OTLP spans and metrics', withExport)
await withExport.close()
receiver.close()
console.log(`(${ROWS} rows; the receiver got ${received} export requests at close)`)
