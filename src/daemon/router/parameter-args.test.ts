/**
 * Qwen3-Coder's `<parameter=…>` arguments from a chat upstream (LM Studio 0.3.29 passed them on as
 * a call's arguments) reach Claude Code typed by its tool's schema, through the daemon's
 * translated relay: a Write of package.json keeps the file's JSON as its `content` text, stream
 * and not. A scripted upstream answers the call.
 */
import Anthropic from '@anthropic-ai/sdk'
import {afterAll, beforeAll, expect, it} from 'vitest'

import type {Upstream} from './proxy-fixture.js'
import {ProxyGateway, startUpstream} from './proxy-fixture.js'

const ARGS =
  '<parameter=file_path>\npackage.json\n</parameter>\n<parameter=content>\n{"name": "x"}\n</parameter>\n'
const MEANT = {file_path: 'package.json', content: '{"name": "x"}'}

let upstream: Upstream
let origin = ''
const gateway = new ProxyGateway({
  route: () => ({
    targets: [
      {
        provider: {name: 'lmstudio', family: 'chat', baseUrl: origin, credential: {secret: 'k'}},
        model: 'qwen3-coder',
        translate: true,
      },
    ],
  }),
})

beforeAll(async () => {
  upstream = await startUpstream((_req, res, body) => {
    const call = {id: 'call_1', type: 'function', function: {name: 'Write', arguments: ARGS}}
    if ((JSON.parse(body.toString()) as {stream?: boolean}).stream) {
      const chunk = (delta: unknown, finish: string | null = null) =>
        `data: ${JSON.stringify({id: 'c1', object: 'chat.completion.chunk', model: 'qwen3-coder', choices: [{index: 0, delta, finish_reason: finish}]})}\n\n`
      res.writeHead(200, {'content-type': 'text/event-stream'})
      res.end(
        chunk({
          role: 'assistant',
          tool_calls: [{index: 0, ...call, function: {name: 'Write', arguments: ARGS.slice(0, 40)}}],
        }) +
          chunk({tool_calls: [{index: 0, function: {arguments: ARGS.slice(40)}}]}) +
          chunk({}, 'tool_calls') +
          'data: [DONE]\n\n',
      )
      return
    }
    res.writeHead(200, {'content-type': 'application/json'}).end(
      JSON.stringify({
        id: 'c1',
        object: 'chat.completion',
        model: 'qwen3-coder',
        choices: [
          {
            index: 0,
            message: {role: 'assistant', content: null, tool_calls: [call]},
            finish_reason: 'tool_calls',
          },
        ],
        usage: {prompt_tokens: 9, completion_tokens: 9, total_tokens: 18},
      }),
    )
  })
  origin = upstream.origin
  await gateway.listen()
})

afterAll(async () => {
  await gateway.close()
  upstream.close()
})

const request = {
  model: 'claude-sonnet-4-5',
  max_tokens: 1000,
  tools: [
    {
      name: 'Write',
      input_schema: {
        type: 'object' as const,
        properties: {file_path: {type: 'string'}, content: {type: 'string'}},
        required: ['file_path', 'content'],
      },
    },
  ],
  messages: [{role: 'user' as const, content: 'Write package.json'}],
}

it("Claude Code's Write gets package.json's JSON as its content text, stream and not", async () => {
  const client = new Anthropic({baseURL: gateway.url, apiKey: 'client', maxRetries: 0})
  const answers = [
    await client.messages.create(request),
    await client.messages.stream(request).finalMessage(),
  ]
  for (const answer of answers)
    expect(answer.content.find((b) => b.type === 'tool_use')?.input).toEqual(MEANT)
})
