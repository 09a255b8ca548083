/**
 * A provider whose OpenAI-compatible base URL ends in a version of its own (Z.AI's GLM at
 * `https://api.z.ai/api/paas/v4`, Google's `/v1beta/openai`): the request goes to that base with
 * `/chat/completions`, as OpenAI's SDK sends it, not to `.../v4/v1/chat/completions` (a 404 that
 * made the vendor's documented base URL unusable). Translated (Claude Code's Messages request) and
 * passed through alike; a scripted upstream records the path it was asked for.
 */
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import {afterAll, beforeAll, expect, it} from 'vitest'

import type {Family} from '../../store/schema.js'
import type {Upstream} from './proxy-fixture.js'
import {ProxyGateway, startUpstream} from './proxy-fixture.js'

const paths: string[] = []
let upstream: Upstream
let base = ''
const gateway = new ProxyGateway({
  route: (family: Family) => ({
    targets: [
      {
        provider: {name: 'zai', family: 'chat', baseUrl: base, credential: {secret: 'k'}},
        model: 'glm-5.1',
        ...(family === 'chat' ? {} : {translate: true as const}),
      },
    ],
  }),
})

beforeAll(async () => {
  upstream = await startUpstream((req, res) => {
    paths.push(req.url ?? '')
    if (req.url !== '/api/paas/v4/chat/completions') {
      res.writeHead(404, {'content-type': 'application/json'}).end('{"error":{"message":"not found"}}')
      return
    }
    res.writeHead(200, {'content-type': 'application/json'}).end(
      JSON.stringify({
        id: 'c1',
        object: 'chat.completion',
        model: 'glm-5.1',
        choices: [{index: 0, message: {role: 'assistant', content: 'Hello.'}, finish_reason: 'stop'}],
        usage: {prompt_tokens: 9, completion_tokens: 2, total_tokens: 11},
      }),
    )
  })
  base = `${upstream.origin}/api/paas/v4`
  await gateway.listen()
})

afterAll(async () => {
  await gateway.close()
  upstream.close()
})

it("Claude Code's request, translated, goes to the base's own /chat/completions", async () => {
  const client = new Anthropic({baseURL: gateway.url, apiKey: 'client', maxRetries: 0})
  const answer = await client.messages.create({
    model: 'claude-sonnet-4-5',
    max_tokens: 100,
    messages: [{role: 'user', content: 'Hi'}],
  })
  expect(answer.content).toEqual([{type: 'text', text: 'Hello.'}])
  expect(paths.splice(0)).toEqual(['/api/paas/v4/chat/completions'])
})

it('a chat client passed through: the same path', async () => {
  const client = new OpenAI({baseURL: `${gateway.url}/v1`, apiKey: 'client', maxRetries: 0})
  const answer = await client.chat.completions.create({
    model: 'glm-5.1',
    messages: [{role: 'user', content: 'Hi'}],
  })
  expect(answer.choices[0].message.content).toBe('Hello.')
  expect(paths.splice(0)).toEqual(['/api/paas/v4/chat/completions'])
})
