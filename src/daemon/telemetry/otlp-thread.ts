/**
 * The gateway's side of the OTLP export thread (otlp-worker.ts), loaded by telemetry.ts only when
 * an endpoint is set. It starts the thread by path: scripts/bundle.js keeps this module and the
 * worker at their own paths in dist/, side by side.
 */
import type {Worker} from 'node:worker_threads'

import type {LogEntry} from '../../store/log-store.js'
import type {OtlpStats} from '../../gateway/telemetry.js'
import type {OtlpThreadMessage, OtlpThreadRequest} from './otlp-worker.js'
import type {OtlpConfig} from './telemetry.js'

/** Rows posted to the thread and not yet taken, at most. */
const IN_FLIGHT = 2048
/** The thread's young generation (MB). */
const YOUNG_GENERATION_MB = 4

/**
 * The OTLP export in a worker thread of its own (otlp-worker.ts): the rows of each fold are posted
 * to it in one message, and it makes the spans and GenAI metrics, serialises and sends them, off
 * the thread that answers requests. Its counts come back every 200 ms (when they changed).
 *
 * Bounded on this side too: at most IN_FLIGHT rows are posted and not yet taken by the thread (a
 * thread that falls behind, on a busy machine, never makes its message queue grow without end);
 * past that the rows wait here, at most `maxQueue` of them, the oldest dropped and counted first.
 */
export class OtlpThread {
  /** The thread's counts as it last sent them. */
  private threadStats: OtlpStats = {
    queued: 0,
    exported: 0,
    dropped: 0,
    failures: 0,
    lastError: null,
    lastSuccessAt: null,
  }
  private closing: Promise<void> | undefined
  private asked = 0
  private exited = false
  /** Rows not posted yet (the thread is IN_FLIGHT behind), and rows posted but not taken. */
  private waiting: LogEntry[] = []
  private inFlight = 0
  private droppedHere = 0

  private constructor(
    private readonly worker: Worker,
    private readonly maxQueue: number,
  ) {
    worker.on('message', (message: OtlpThreadMessage) => {
      if (message.type === 'stats' || message.type === 'closed') this.threadStats = message.stats
      else if (message.type === 'taken') {
        this.inFlight = Math.max(0, this.inFlight - message.count)
        this.drain()
      }
    })
    worker.on('exit', () => (this.exited = true))
    // never what keeps a stopping gateway alive: close() bounds the last export
    worker.unref()
  }

  /** Starts the thread; resolves once its exporter is built (rejects with why it could not be). */
  static async start(config: OtlpConfig): Promise<OtlpThread> {
    const {Worker} = await import('node:worker_threads')
    // the built file sits beside this one (scripts/bundle.js keeps both at their own paths)
    const worker = new Worker(new URL('./otlp-worker.js', import.meta.url), {
      workerData: config,
      // a small young generation: the thread's garbage is short-lived spans and batches, and the
      // default (tens of MB) would be resident memory the gateway did not have before export
      resourceLimits: {maxYoungGenerationSizeMb: YOUNG_GENERATION_MB},
    })
    await new Promise<void>((resolve, reject) => {
      const onError = (error: Error) => reject(error)
      worker.once('error', onError)
      worker.once('message', (message: OtlpThreadMessage) => {
        worker.off('error', onError)
        if (message.type === 'ready') resolve()
        else
          reject(
            new Error(message.type === 'failed' ? message.message : 'the OTLP export thread did not start'),
          )
      })
    })
    worker.on('error', () => undefined) // a later failure ends export, never the gateway
    return new OtlpThread(worker, config.maxQueue)
  }

  /** The export's counts: the thread's, with the rows waiting or dropped on this side. */
  get stats(): OtlpStats {
    const t = this.threadStats
    return {
      ...t,
      queued: t.queued + this.inFlight + this.waiting.length,
      dropped: t.dropped + this.droppedHere,
    }
  }

  private send(message: OtlpThreadRequest): void {
    this.worker.postMessage(message)
  }

  /** A fold's rows, in one message (structured clone of counts, names and times only). */
  post(rows: readonly LogEntry[]): void {
    if (this.closing || this.exited || rows.length === 0) return
    for (const row of rows) this.waiting.push(row)
    if (this.waiting.length > this.maxQueue) {
      const lost = this.waiting.length - this.maxQueue
      this.waiting.splice(0, lost)
      this.droppedHere += lost
    }
    this.drain()
  }

  /** Posts what waits, as far as the in-flight bound lets (`all`: everything, at close). */
  private drain(all = false): void {
    if (this.exited || this.waiting.length === 0) return
    const room = all ? this.waiting.length : IN_FLIGHT - this.inFlight
    if (room <= 0) return
    const rows = this.waiting.length <= room ? this.waiting : this.waiting.slice(0, room)
    this.waiting = this.waiting.length <= room ? [] : this.waiting.slice(room)
    this.inFlight += rows.length
    this.send({type: 'rows', rows})
  }

  /**
   * The counts once the thread has taken every row posted before (a scrape asks: its figures then
   * include the requests it counts); the last known counts if it does not answer within 1 s.
   */
  fresh(): Promise<OtlpStats> {
    if (this.closing || this.exited) return Promise.resolve(this.stats)
    const id = ++this.asked
    return new Promise<OtlpStats>((resolve) => {
      const onMessage = (message: OtlpThreadMessage) => {
        if (message.type !== 'stats' || message.id !== id) return
        done()
      }
      const done = () => {
        clearTimeout(timer)
        this.worker.off('message', onMessage)
        resolve(this.stats)
      }
      const timer = setTimeout(done, 1000)
      timer.unref()
      this.worker.on('message', onMessage)
      this.send({type: 'stats', id})
    })
  }

  /** Exports what is queued within `boundMs` (a little more for the thread to answer), then stops it. */
  close(boundMs: number): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      if (this.exited) return resolve()
      const done = () => {
        clearTimeout(timer)
        void this.worker.terminate().finally(resolve)
      }
      const timer = setTimeout(done, boundMs + 500)
      timer.unref()
      this.worker.on('message', (message: OtlpThreadMessage) => {
        if (message.type === 'closed') done()
      })
      this.worker.once('exit', done)
      this.drain(true)
      this.send({type: 'close', boundMs})
    })
    return this.closing
  }
}
