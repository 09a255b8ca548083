/**
 * `text-tool-results`: an image inside a tool result refused (LM Studio's words on the Messages
 * endpoint, Zen's 422 on the Responses endpoint), the same image in a user turn taken.
 */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {Simulator} from '../server.js'
import {startSim} from '../server.js'

let sim: Simulator

beforeAll(async () => {
  sim = await startSim({timeScale: 1000})
})
afterAll(async () => {
  await sim.close()
})

const post = async (path: string, body: unknown) => {
  const response = await fetch(sim.origin + path, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: 'Bearer sk-test',
      'x-api-key': 'sk-ant-test',
      'anthropic-version': '2023-06-01',
    },
    body: JSON.stringify(body),
  })
  return {status: response.status, json: (await response.json()) as Record<string, any>}
}

const png = {type: 'image', source: {type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo='}}
const use = {type: 'tool_use', id: 'toolu_1', name: 'Read', input: {file_path: '/s.png'}}

describe('text-tool-results', () => {
  it("Messages: an image inside a tool_result refused in LM Studio's words; after the result, taken", async () => {
    const turn = (content: unknown[]) => ({
      model: 'qwen3-vl-8b+text-tool-results',
      max_tokens: 100,
      messages: [
        {role: 'user', content: 'Look.'},
        {role: 'assistant', content: [use]},
        {role: 'user', content},
      ],
    })
    const refused = await post(
      '/v1/messages',
      turn([{type: 'tool_result', tool_use_id: 'toolu_1', content: [png]}]),
    )
    expect(refused).toEqual({
      status: 400,
      json: {
        type: 'error',
        error: {
          type: 'invalid_request_error',
          message: 'Only text tool_result blocks are supported when tool_result.content is an array.',
        },
      },
    })
    const text = [{type: 'tool_result', tool_use_id: 'toolu_1', content: [{type: 'text', text: 'ok'}]}]
    expect((await post('/v1/messages', turn(text))).status).toBe(200)
    const after = [{type: 'tool_result', tool_use_id: 'toolu_1', content: '[image attached below]'}, png]
    expect((await post('/v1/messages', turn(after))).status).toBe(200)
  })

  it("Responses: an input_image inside a function_call_output refused with Zen's 422; in a user message, taken", async () => {
    const image = {type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo='}
    const call = {type: 'function_call', call_id: 'call_1', name: 'view_image', arguments: '{}'}
    const body = (input: unknown[]) => ({
      model: 'glm-5.3-flash+text-tool-results',
      instructions: 'Codex',
      input,
    })
    const refused = await post(
      '/v1/responses',
      body([
        {role: 'user', content: 'look'},
        call,
        {type: 'function_call_output', call_id: 'call_1', output: [image]},
      ]),
    )
    expect(refused).toEqual({
      status: 422,
      json: {
        error: {
          param: 'messages.3.user.content.str',
          type: 'invalid_request_error',
          message: '1 validation error: messages.3.user.content.str Input should be a valid string',
        },
      },
    })
    const moved = await post(
      '/v1/responses',
      body([
        {role: 'user', content: 'look'},
        call,
        {type: 'function_call_output', call_id: 'call_1', output: '[image attached below]'},
        {type: 'message', role: 'user', content: [image]},
      ]),
    )
    expect(moved.status).toBe(200)
  })
})
