/**
 * Router `close` (the daemon's stop and restart) with a passed-through JSON answer still being read
 * after its client left (relay.ts reads it on for its usage): the answer is ended at once and its
 * row written, not waited for up to the idle timeout while the stop's kill deadline runs out, which
 * lost every queued row (review72 #2). Through the Router into logs.db, with an upstream that sends
 * its headers and its body 3 s later.
 */
import {afterAll, describe, expect, it} from 'vitest'

import type {PolicyConfig, ProviderConfig} from '../../store/schema.js'
import {CHAT_ANSWER_BILLED, leaveChat, routerWithLogs, startUpstream} from './proxy-fixture.js'

const ANSWER = CHAT_ANSWER_BILLED

const closers: Array<() => unknown> = []
afterAll(async () => {
  for (const close of closers.reverse()) await close()
})

describe('Router close with a JSON answer read on after its client left', () => {
  // (a client gone before the upstream's headers: its request held, not aborted, since stop 60)
  it.each(['after', 'before'])(
    'the client gone %s the headers: ends it at once and writes its row (a 499) before it returns',
    async (when) => {
      let headersSent: () => void = () => undefined
      const upstream = await startUpstream((_req, res) => {
        if (when === 'after') {
          res.writeHead(200, {'content-type': 'application/json'})
          res.flushHeaders()
        }
        headersSent()
        const timer = setTimeout(() => res.end(ANSWER), 3_000)
        res.on('close', () => clearTimeout(timer))
      })
      closers.push(() => upstream.close())
      // (as a vendor's API, the simulator's origin: a request held; one on loopback is not)
      const providers: ProviderConfig[] = [
        {name: 'up', family: 'chat', baseUrl: upstream.origin, credential: {secret: 'k'}, origin: 'sim'},
      ]
      const policy: PolicyConfig = {
        id: 'p',
        routes: {chat: [{provider: 'up', model: 'm'}]},
        fallbacks: true,
        breaker: {failureThreshold: 5, cooldownMs: 30_000},
        timeouts: {connectMs: 2_000, firstByteMs: 2_000, idleMs: 5_000},
      }
      const gateway = await routerWithLogs({family: 'chat', providers, policy})
      closers.push(gateway.close)
      const {url, router, store} = gateway

      // the client leaves once the upstream has sent its headers (or got the request)
      const sent = new Promise<void>((resolve) => (headersSent = resolve))
      await leaveChat(url, sent)
      await new Promise((resolve) => setTimeout(resolve, 50))

      // the daemon's stop: the server has let its clients go, then router.close(), then the rows
      const started = performance.now()
      await router.close()
      expect(performance.now() - started).toBeLessThan(1_000)
      store.flush()
      const rows = store.queryLogs()
      expect(rows).toHaveLength(1)
      expect(rows[0]).toMatchObject({
        provider: 'up',
        model: 'm',
        status: 499,
        error: 'client closed the connection',
      })
    },
    10_000,
  )
})
