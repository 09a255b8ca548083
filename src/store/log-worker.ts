/**
 * The gateway's log writer thread (started by `LogStore.open` with `writer: 'thread'`): owns the
 * connection that writes `logs.db`, so that SQLite's inserts, the roll-up and the side file cost
 * the request thread nothing. It gets one message per batch window (the JSON of the rows' values
 * in one flat array, see `rowValues`), writes it (or keeps it in the side file while the database
 * is locked), then counts it in the shared counters (`ACKED`), which a read or a close on the
 * request thread waits on. Problems are posted back as messages.
 */
import {parentPort, workerData} from 'node:worker_threads'

import {LOG_WORKER_SLOTS, LogWriter} from './log-store.js'
import type {LogWorkerData, LogWorkerMessage} from './log-store.js'

const data = workerData as LogWorkerData
const counters = new Int32Array(data.counters)
const port = parentPort!
const say = (message: LogWorkerMessage): void => port.postMessage(message)

let writer: LogWriter | undefined
const publish = (): void => {
  if (!writer) return
  Atomics.store(counters, LOG_WORKER_SLOTS.DROPPED, writer.dropped)
  Atomics.store(counters, LOG_WORKER_SLOTS.SPILLED, writer.spilledRows)
}

try {
  writer = await LogWriter.open(data.path, {
    retentionDays: data.retentionDays,
    onWriteProblem: (problem) => say({type: 'problem', problem: problem ?? null}),
    onCounts: publish,
    emptySideFileFrom: data.emptySideFileFrom,
  })
  publish()
  say({type: 'ready'})
} catch (error) {
  say({type: 'failed', message: (error as Error).message, code: (error as {code?: string}).code})
}

if (writer) {
  const open = writer
  port.on('message', (message: string | {close: true}) => {
    if (typeof message !== 'string') {
      open.close()
      publish()
      Atomics.store(counters, LOG_WORKER_SLOTS.CLOSED, 1)
      Atomics.notify(counters, LOG_WORKER_SLOTS.CLOSED)
      port.close()
      return
    }
    open.write(JSON.parse(message) as unknown[])
    publish()
    Atomics.add(counters, LOG_WORKER_SLOTS.ACKED, 1)
    Atomics.notify(counters, LOG_WORKER_SLOTS.ACKED)
  })
}
