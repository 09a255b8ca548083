/**
 * Usage rows survive the daemon's end: every request answered before a SIGTERM has its row in
 * logs.db once the daemon is gone (the queued batch is written on the way out).
 */
import {join} from 'node:path'
import Database from 'better-sqlite3'
import {afterEach, describe, expect, it} from 'vitest'

import {alive, daemonPid, startSimGateway} from './helpers/gateway.js'

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

describe('log store durability', {timeout: 120_000}, () => {
  it('writes the row of every answered stream when the daemon is stopped with SIGTERM', async () => {
    const {home, base, keyValue} = await startSimGateway(cleanups, 'durable')

    const N = 40
    const answered = await Promise.all(
      Array.from({length: N}, async (_, i) => {
        const res = await fetch(`${base}/v1/chat/completions`, {
          method: 'POST',
          headers: {authorization: `Bearer ${keyValue}`, 'content-type': 'application/json'},
          body: JSON.stringify({
            model: 'sim-mini',
            stream: true,
            stream_options: {include_usage: true},
            messages: [{role: 'user', content: `hello ${i}`}],
          }),
        })
        const text = await res.text()
        return res.status === 200 && text.includes('[DONE]')
      }),
    )
    expect(answered.every(Boolean)).toBe(true)

    // SIGTERM right after the last answer: the rows still queued must be written on the way out.
    const pid = daemonPid(home)!
    process.kill(pid, 'SIGTERM')
    for (let i = 0; i < 500 && alive(pid); i++) await new Promise((r) => setTimeout(r, 20))
    expect(alive(pid)).toBe(false)

    const db = new Database(join(home, 'logs.db'), {readonly: true})
    cleanups.push(() => {
      db.close()
    })
    const rows = db
      .prepare("SELECT status, output_tokens FROM logs WHERE entrance = 'chat' AND status = 200")
      .all() as Array<{status: number; output_tokens: number}>
    expect(rows).toHaveLength(N)
    expect(rows.every((r) => r.output_tokens > 0)).toBe(true)
  })
})
