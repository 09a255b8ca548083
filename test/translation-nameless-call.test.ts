/**
 * A chat upstream that answers a tool call with no name (a relay that lost it, a server's tool
 * parser that found arguments but no function): no client can run such a call, and sent back in
 * the next turn's history its empty `function.name` is refused by OpenAI-compatible servers. Claude
 * Code on a translated route gets the answer without it (the turn ends), stream and not, and the
 * log row says it was left out. The real daemon, the official Anthropic SDK.
 */
import type {IncomingMessage, ServerResponse} from 'node:http'
import {createServer} from 'node:http'
import type {AddressInfo} from 'node:net'

import Anthropic from '@anthropic-ai/sdk'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {issueKeyOverApi, projectLogRows, simPolicy, startSimGatewayWithPolicies} from './helpers/gateway.js'

const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'up', choices: [{index: 0, delta, finish_reason: finish}]})}\n\n`

/** A chat server whose answer has text and one call that has arguments but no name. */
const upstream = createServer((req: IncomingMessage, res: ServerResponse) => {
  let data = ''
  req.on('data', (c: Buffer) => (data += c))
  req.on('end', () => {
    const body = JSON.parse(data) as {stream?: boolean}
    const usage = {prompt_tokens: 12, completion_tokens: 5, total_tokens: 17}
    if (body.stream) {
      res.writeHead(200, {'content-type': 'text/event-stream'})
      res.write(chunk({role: 'assistant', content: 'Let me look.'}))
      res.write(
        chunk({tool_calls: [{index: 0, id: 'call_x', type: 'function', function: {arguments: '{"p":'}}]}),
      )
      res.write(chunk({tool_calls: [{index: 0, function: {arguments: '"x"}'}}]}))
      res.write(chunk({}, 'tool_calls'))
      res.write(
        `data: ${JSON.stringify({id: 'c1', object: 'chat.completion.chunk', choices: [], usage})}\n\n`,
      )
      res.end('data: [DONE]\n\n')
      return
    }
    res.writeHead(200, {'content-type': 'application/json'})
    res.end(
      JSON.stringify({
        id: 'c1',
        object: 'chat.completion',
        created: 1,
        model: 'up',
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: 'Let me look.',
              tool_calls: [{id: 'call_x', type: 'function', function: {arguments: '{"p":"x"}'}}],
            },
            finish_reason: 'tool_calls',
          },
        ],
        usage,
      }),
    )
  })
})

let base = ''
let stop: () => Promise<void> = async () => {}
let key = ''

beforeAll(async () => {
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve))
  const port = (upstream.address() as AddressInfo).port
  ;({base, stop} = await startSimGatewayWithPolicies(
    [simPolicy('nameless', {messages: [{provider: 'relay', model: 'glm-4.6', translate: true}]})],
    [{name: 'relay', family: 'chat', baseUrl: `http://127.0.0.1:${port}/v1`}],
  ))
  key = await issueKeyOverApi(base, 'nameless', 'claude_code', 'nameless')
}, 120_000)

afterAll(async () => {
  await stop()
  upstream.close()
})

const params = {
  model: 'claude-sonnet-4-5',
  max_tokens: 1024,
  tools: [
    {
      name: 'Read',
      description: 'Read a file',
      input_schema: {type: 'object' as const, properties: {p: {type: 'string'}}},
    },
  ],
  messages: [{role: 'user' as const, content: 'Read x.'}],
}

describe('a chat tool call with no name, to Claude Code', {timeout: 60_000}, () => {
  it('is left out of the answer, stream and not; the turn ends; each row says so', async () => {
    const client = new Anthropic({baseURL: base, apiKey: key, maxRetries: 0})
    for (const answer of [
      await client.messages.create(params),
      await client.messages.stream(params).finalMessage(),
    ]) {
      expect(answer.content.map((b) => (b.type === 'text' ? b.text : b.type))).toEqual(['Let me look.'])
      expect(answer.stop_reason).toBe('end_turn')
    }
    const rows = await projectLogRows(base, 'nameless', 2)
    expect(rows.map((r) => [r.status, r.error])).toEqual([
      [
        200,
        'relay: left out a tool call with no name (no client can run one, and the next turn would be refused with it)',
      ],
      [
        200,
        'relay: left out a tool call with no name (no client can run one, and the next turn would be refused with it)',
      ],
    ])
  })
})
