/**
 * The OTLP export's own thread (docs/TELEMETRY.md): the gateway's thread posts the finished
 * requests' log rows here in batches (telemetry.ts, `OtlpThread`), and this thread makes their
 * spans and GenAI metrics (otlp.ts), serialises and sends them. What the SDK costs per request
 * (tens of µs) and per export then never runs on the thread that answers requests.
 *
 * Messages in: `{type: 'rows', rows}`, `{type: 'stats', id}` (the counts now: a scrape asks, after
 * its rows), `{type: 'close', boundMs}`. Out: `{type: 'ready'}` once the exporter is built (or
 * `{type: 'failed', message}`), `{type: 'taken', count}` after each batch of rows, `{type: 'stats',
 * stats, id?}` when the counts change (at most every 200 ms) or when asked, `{type: 'closed',
 * stats}` after the last export.
 */
import {parentPort, workerData} from 'node:worker_threads'

import type {LogEntry} from '../../store/log-store.js'
import type {OtlpStats} from '../../gateway/telemetry.js'
import {OtlpExport} from './otlp.js'
import type {OtlpConfig} from './telemetry.js'

/** How often the counts go back to the gateway's thread (when they changed). */
const STATS_MS = 200

export type OtlpThreadMessage =
  | {type: 'ready'}
  | {type: 'failed'; message: string}
  | {type: 'stats'; stats: OtlpStats; id?: number}
  | {type: 'taken'; count: number}
  | {type: 'closed'; stats: OtlpStats}

const port = parentPort!
let otlp: OtlpExport
try {
  otlp = new OtlpExport(workerData as OtlpConfig)
  port.postMessage({type: 'ready'} satisfies OtlpThreadMessage)
} catch (error) {
  port.postMessage({type: 'failed', message: (error as Error).message} satisfies OtlpThreadMessage)
  process.exit(1)
}

let sent = ''
const timer = setInterval(() => {
  const text = JSON.stringify(otlp.stats)
  if (text === sent) return
  sent = text
  port.postMessage({type: 'stats', stats: otlp.stats} satisfies OtlpThreadMessage)
}, STATS_MS)

/** What the gateway's thread sends. */
export type OtlpThreadRequest =
  {type: 'rows'; rows: readonly LogEntry[]} | {type: 'stats'; id: number} | {type: 'close'; boundMs: number}

port.on('message', (message: OtlpThreadRequest) => {
  if (message.type === 'stats') {
    port.postMessage({type: 'stats', stats: otlp.stats, id: message.id} satisfies OtlpThreadMessage)
    return
  }
  if (message.type === 'rows') {
    for (const entry of message.rows) {
      try {
        otlp.record(entry)
      } catch {
        // one odd row must not stop the others
      }
    }
    port.postMessage({type: 'taken', count: message.rows.length} satisfies OtlpThreadMessage)
    return
  }
  clearInterval(timer)
  void otlp.close(message.boundMs).finally(() => {
    port.postMessage({type: 'closed', stats: otlp.stats} satisfies OtlpThreadMessage)
    port.close()
  })
})
