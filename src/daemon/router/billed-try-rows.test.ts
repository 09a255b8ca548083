/**
 * A try whose upstream billed an answer the client never got, of another provider than the one
 * that answered (Gemini's empty answer, twice, then a fallback's answer): its tokens go in a log row
 * of their own, of that provider and model, which `gwctl usage --by provider` counts (review67 #2:
 * they were in the answer's row's note only), with the status Gemini answered (review72 #3). Through the Router into logs.db, with a scripted
 * Gemini upstream that answers nothing and a chat upstream that answers.
 */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {json, runCli} from '../../../test/helpers/cli.js'
import type {LogStore} from '../../store/log-store.js'
import type {PolicyConfig, ProviderConfig} from '../../store/schema.js'
import {providerHealth} from '../../ui/app/model-routes.js'
import type {RouterWithLogs, Upstream} from './proxy-fixture.js'
import {routerWithLogs, startUpstream} from './proxy-fixture.js'

/** Gemini's empty answer (STOP, no part), whose prompt Google bills. */
const EMPTY = {
  candidates: [{content: {role: 'model'}, finishReason: 'STOP', index: 0}],
  usageMetadata: {promptTokenCount: 900, totalTokenCount: 900},
}
const CHAT = {
  id: 'c1',
  object: 'chat.completion',
  created: 1,
  model: 'deepseek-chat',
  choices: [{index: 0, message: {role: 'assistant', content: 'done'}, finish_reason: 'stop'}],
  usage: {prompt_tokens: 700, completion_tokens: 9, total_tokens: 709},
}

let gateway: RouterWithLogs
let store: LogStore
let gemini: Upstream
let chat: Upstream
let url: string
let providers: ProviderConfig[]
let policy: PolicyConfig

beforeAll(async () => {
  gemini = await startUpstream((_req, res) => {
    res.writeHead(200, {'content-type': 'application/json'})
    res.end(JSON.stringify(EMPTY))
  })
  chat = await startUpstream((_req, res) => {
    res.writeHead(200, {'content-type': 'application/json'})
    res.end(JSON.stringify(CHAT))
  })
  providers = [
    {name: 'up-gemini', family: 'gemini', baseUrl: gemini.origin, credential: {secret: 'g-key'}},
    {name: 'deepseek', family: 'chat', baseUrl: chat.origin, credential: {secret: 'd-key'}},
  ]
  policy = {
    id: 'p',
    routes: {
      messages: [
        {provider: 'up-gemini', model: 'gemini-2.5-pro', translate: true},
        {provider: 'deepseek', model: 'deepseek-chat', translate: true},
      ],
    },
    fallbacks: true,
    breaker: {failureThreshold: 5, cooldownMs: 30_000},
    timeouts: {connectMs: 2_000, firstByteMs: 2_000, idleMs: 2_000},
  }
  gateway = await routerWithLogs({family: 'messages', providers, policy})
  ;({url, store} = gateway)
})

afterAll(async () => {
  await gateway.close()
  gemini.close()
  chat.close()
})

describe("a billed try of another provider than the answer's", () => {
  it('is a row of its own in logs.db, of its provider and model, which `gwctl usage` counts there', async () => {
    const res = await fetch(`${url}/v1/messages`, {
      method: 'POST',
      headers: {'content-type': 'application/json'},
      body: JSON.stringify({model: 'claude-x', max_tokens: 64, messages: [{role: 'user', content: 'hi'}]}),
    })
    expect(res.status).toBe(200)
    expect(((await res.json()) as {content: Array<{text: string}>}).content[0]!.text).toBe('done')
    store.flush()
    const rows = store.queryLogs()
    expect(rows).toHaveLength(2)
    const answer = rows.find((r) => r.provider === 'deepseek')
    const tried = rows.find((r) => r.provider === 'up-gemini')
    // the client's answer: its own tokens, the billed try named in its note
    expect(answer).toMatchObject({status: 200, fallback: true, inputTokens: 700, outputTokens: 9})
    expect(answer!.error).toContain(
      "up-gemini/gemini-2.5-pro billed 1800 input tokens for what the client never got (counted in a row of its own, not in this one, which is deepseek/deepseek-chat's)",
    )
    // the try: both empty answers' prompts (sent again once), under Google's name, with the 200
    // Gemini answered (no outage: review72 #3), its note saying why it is a row of its own
    expect(tried).toMatchObject({
      model: 'gemini-2.5-pro',
      status: 200,
      fallback: false,
      inputTokens: 1800,
      outputTokens: 0,
      agentId: 'agent-1',
      entrance: 'messages',
      upstreamFamily: 'gemini',
    })
    expect(tried!.error).toMatch(
      /twice \(sent again once\); billed 1800 input tokens for what the client never got/,
    )
    expect(tried!.error).toContain('in the row of deepseek/deepseek-chat')
    // the try's row is marked as one by a flag (data, not its note's words: `usage reconcile`
    // leaves such rows out by it)
    expect(tried!.billedTry).toBe(true)
    expect(answer!.billedTry).toBeUndefined()
    // `gwctl usage --by provider`: each provider's tokens on its own line; the try is one request
    // there, as every surface counts it (an upstream request that billed: mu60)
    const byProvider = store.usage({pivot: 'provider'})
    // (and Gemini's empty 200 is no error there, nor a 5xx in the app's provider health)
    expect(byProvider.find((u) => u.key === 'up-gemini')).toMatchObject({
      inputTokens: 1800,
      errors: 0,
      requests: 1,
    })
    expect(providerHealth(rows, Date.now()).get('up-gemini')?.errors ?? 0).toBe(0)
    expect(byProvider.find((u) => u.key === 'deepseek')).toMatchObject({
      inputTokens: 700,
      outputTokens: 9,
      requests: 1,
    })
  })

  it('`gwctl usage --json` counts the try as a request of its provider, and the tokens of both', async () => {
    store.flush()
    const run = (args: string[]) => runCli(['usage', ...args, '--json'], {home: gateway.home})
    const byProvider = json<{rows: Array<{key: string; requests: number; inputTokens: number}>}>(
      await run(['--pivot', 'provider']),
    )
    expect(byProvider.rows.find((r) => r.key === 'up-gemini')).toMatchObject({requests: 1, inputTokens: 1800})
    expect(byProvider.rows.find((r) => r.key === 'deepseek')).toMatchObject({requests: 1, inputTokens: 700})
    // (the rows themselves, which `--pivot tool` reads, not the hourly roll-up: the same counts; the
    // try's 200 no error)
    const byTool = json<{totals: {requests: number; errors: number; inputTokens: number}}>(
      await run(['--pivot', 'tool']),
    )
    expect(byTool.totals).toMatchObject({requests: 2, errors: 0, inputTokens: 2500})
  })
})
