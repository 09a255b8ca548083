// What telemetry costs a gateway request, in process (issue 27; docs/TELEMETRY.md "Cost"):
// the router's emit of a finished request's row with no subscriber (the baseline), with the
// Prometheus metrics subscribed, and with OTLP export on as well (to a receiver in this process
// that accepts everything). Two figures per row: the emit itself (all the request path pays:
// an array push) and the fold a moment later (metrics, and span + GenAI metrics with export),
// which runs on the same thread but after the answer went out. `node bench/telemetry.js [rows]`
// after `npm run build`.
import {createServer} from 'node:http'

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
