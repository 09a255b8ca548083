/**
 * An assistant message's `phase` (`commentary`, `final_answer`) on a translated route to a
 * Responses upstream: only to OpenAI's own hosts (and the simulator, which stands for them), where
 * the member exists; a Responses server that is not OpenAI's (vLLM, Ollama, a relay: here a
 * scripted upstream on 127.0.0.1) may refuse an unknown member and gets the history as before.
 */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {ProxyTarget} from './proxy.js'
import type {GatewayRoute, Upstream} from './proxy-fixture.js'
import {ProxyGateway, startUpstream} from './proxy-fixture.js'

const ANSWER = JSON.stringify({
  id: 'resp_1',
  object: 'response',
  model: 'gpt-5.5',
  status: 'completed',
  output: [
    {
      type: 'message',
      id: 'msg_1',
      role: 'assistant',
      status: 'completed',
      phase: 'final_answer',
      content: [{type: 'output_text', text: 'Hello.', annotations: []}],
    },
  ],
  usage: {input_tokens: 9, output_tokens: 2},
})

const seen: Array<Record<string, any>> = []
let upstream: Upstream
let route: GatewayRoute
let gateway: ProxyGateway

beforeAll(async () => {
  upstream = await startUpstream((_req, res, body) => {
    seen.push(JSON.parse(body.toString()) as Record<string, any>)
    res.writeHead(200, {'content-type': 'application/json'}).end(ANSWER)
  })
  gateway = new ProxyGateway({route: () => route})
  await gateway.listen()
})

afterAll(async () => {
  await gateway.close()
  upstream.close()
})

const target = (origin?: 'sim'): ProxyTarget => ({
  provider: {
    name: 'up',
    family: 'responses',
    baseUrl: `${upstream.origin}/v1`,
    credential: {secret: 'k'},
    ...(origin ? {origin} : {}),
  },
  model: 'gpt-5.5',
  translate: true,
})

/** Claude Code's history: a preamble and a call, its result, the answer, a new prompt. */
const CLAUDE_CODE = JSON.stringify({
  model: 'claude-sonnet-4-5',
  max_tokens: 256,
  tools: [{name: 'Read', input_schema: {type: 'object'}}],
  messages: [
    {role: 'user', content: 'What is in a.txt?'},
    {
      role: 'assistant',
      content: [
        {type: 'text', text: 'I will read it.'},
        {type: 'tool_use', id: 'toolu_1', name: 'Read', input: {file_path: 'a.txt'}},
      ],
    },
    {role: 'user', content: [{type: 'tool_result', tool_use_id: 'toolu_1', content: 'hello'}]},
    {role: 'assistant', content: [{type: 'text', text: 'It says hello.'}]},
    {role: 'user', content: 'Say hello.'},
  ],
})

async function send(): Promise<{answer: Record<string, any>; input: Array<Record<string, any>>}> {
  seen.length = 0
  const res = await fetch(`${gateway.url}/v1/messages`, {
    method: 'POST',
    headers: {'content-type': 'application/json', 'x-api-key': 'client', 'anthropic-version': '2023-06-01'},
    body: CLAUDE_CODE,
  })
  expect(res.status).toBe(200)
  return {answer: (await res.json()) as Record<string, any>, input: seen[0].input}
}

const phases = (input: Array<Record<string, any>>) =>
  input.filter((i) => i.type === 'message' && i.role === 'assistant').map((i) => i.phase)

describe('phase to a translated Responses upstream', () => {
  it("not to a Responses server that is not OpenAI's: the items as before", async () => {
    route = {targets: [target()]}
    const {answer, input} = await send()
    expect(phases(input)).toEqual([undefined, undefined])
    expect(JSON.stringify(input)).not.toContain('"phase"')
    // the answer's own phase changes nothing in what the client gets
    expect(answer.content).toEqual([{type: 'text', text: 'Hello.'}])
  })

  it('to the simulator (standing for OpenAI): commentary before the call, final_answer after the results', async () => {
    route = {targets: [target('sim')]}
    const {answer, input} = await send()
    expect(phases(input)).toEqual(['commentary', 'final_answer'])
    expect(answer.content).toEqual([{type: 'text', text: 'Hello.'}])
  })
})
