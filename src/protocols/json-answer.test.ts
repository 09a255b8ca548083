/**
 * JSON answers from a Messages upstream: a request for JSON (chat `response_format`, Gemini
 * `responseMimeType`/`responseSchema`, Responses `text.format`) with no tools of its own is sent
 * as a forced call of the `json_answer` tool, whose input is always one JSON object of the
 * schema, and that call comes back to the client as the answer's text, whole or streamed.
 */
import {describe, expect, it} from 'vitest'

import {
  decodeClientRequest,
  encodeUpstreamRequest,
  StreamTranslator,
  translateResponseText,
} from './translate.js'

const schema = {
  type: 'object',
  properties: {reasoning: {type: 'string'}, model_choice: {type: 'string', enum: ['flash', 'pro']}},
  required: ['reasoning', 'model_choice'],
}

const chatJson = {
  model: 'gpt-x',
  messages: [
    {role: 'system', content: 'Route the request.'},
    {role: 'user', content: 'Which model?'},
  ],
  response_format: {type: 'json_schema', json_schema: {name: 'route', schema}},
  reasoning_effort: 'high',
}

const geminiJson = {
  contents: [{role: 'user', parts: [{text: 'Which model?'}]}],
  generationConfig: {responseMimeType: 'application/json', responseJsonSchema: schema},
}

const upstreamBody = (client: ReturnType<typeof decodeClientRequest>): Record<string, any> =>
  JSON.parse(encodeUpstreamRequest(client, 'messages', 'claude-sonnet-4-5').body.toString())

const answer = {
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5',
  content: [
    {
      type: 'tool_use',
      id: 'toolu_1',
      name: 'json_answer',
      input: {reasoning: 'short', model_choice: 'flash'},
    },
  ],
  stop_reason: 'tool_use',
  usage: {input_tokens: 20, output_tokens: 9},
}

function sse(events: Array<Record<string, unknown>>): string {
  return events.map((e) => `event: ${String(e.type)}\ndata: ${JSON.stringify(e)}\n\n`).join('')
}

const stream = sse([
  {
    type: 'message_start',
    message: {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content: [],
      usage: {input_tokens: 20, output_tokens: 1},
    },
  },
  {
    type: 'content_block_start',
    index: 0,
    content_block: {type: 'tool_use', id: 'toolu_1', name: 'json_answer', input: {}},
  },
  {
    type: 'content_block_delta',
    index: 0,
    delta: {type: 'input_json_delta', partial_json: '{"reasoning": "sh'},
  },
  {
    type: 'content_block_delta',
    index: 0,
    delta: {type: 'input_json_delta', partial_json: 'ort", "model_choice"'},
  },
  {type: 'content_block_delta', index: 0, delta: {type: 'input_json_delta', partial_json: ': "flash"}'}},
  {type: 'content_block_stop', index: 0},
  {type: 'message_delta', delta: {stop_reason: 'tool_use', stop_sequence: null}, usage: {output_tokens: 9}},
  {type: 'message_stop'},
])

describe('a request for JSON to a Messages upstream', () => {
  it('is sent as a forced single call of json_answer with the schema, the instruction kept, no thinking', () => {
    const body = upstreamBody(decodeClientRequest('chat', chatJson, {}))
    expect(body.tools).toEqual([
      {
        name: 'json_answer',
        description: 'Give the answer: one JSON value of this schema.',
        input_schema: schema,
      },
    ])
    expect(body.tool_choice).toEqual({type: 'tool', name: 'json_answer', disable_parallel_tool_use: true})
    expect(body.thinking).toBeUndefined()
    // for an Anthropic-compatible server that ignores tool_choice
    expect(JSON.stringify(body.system)).toMatch(/Respond with one JSON object only/)
    const gemini = upstreamBody(decodeClientRequest('gemini', geminiJson, {model: 'gemini-x', stream: false}))
    expect(gemini.tool_choice).toMatchObject({type: 'tool', name: 'json_answer'})
    expect(gemini.tools[0].input_schema).toMatchObject({
      type: 'object',
      required: ['reasoning', 'model_choice'],
    })
    // JSON mode without a schema: any object
    const object = upstreamBody(
      decodeClientRequest('chat', {...chatJson, response_format: {type: 'json_object'}}, {}),
    )
    expect(object.tools[0].input_schema).toEqual({type: 'object'})
  })

  it('keeps the instruction where a forced call does not fit: client tools, a schema not of an object, a prefill', () => {
    const tools = [{type: 'function', function: {name: 'f', parameters: {type: 'object', properties: {}}}}]
    const withTools = upstreamBody(decodeClientRequest('chat', {...chatJson, tools}, {}))
    expect(withTools.tools.map((t: {name: string}) => t.name)).toEqual(['f'])
    expect(JSON.stringify(withTools.system)).toMatch(/Respond with one JSON object only/)
    const array = upstreamBody(
      decodeClientRequest(
        'chat',
        {
          ...chatJson,
          response_format: {type: 'json_schema', json_schema: {name: 'l', schema: {type: 'array'}}},
        },
        {},
      ),
    )
    expect(array.tools).toBeUndefined()
    expect(JSON.stringify(array.system)).toMatch(/Respond with one JSON object only/)
    // an assistant prefill: Anthropic prefills a forced call's answer itself
    const prefill = upstreamBody(
      decodeClientRequest(
        'chat',
        {...chatJson, messages: [...chatJson.messages, {role: 'assistant', content: '{"reasoning":'}]},
        {},
      ),
    )
    expect(prefill.tool_choice).toBeUndefined()
    expect(JSON.stringify(prefill.system)).toMatch(/Respond with one JSON object only/)
  })

  it("forces the call with tool turns in the history: Gemini CLI's router after its first prompt", () => {
    const turns = upstreamBody(
      decodeClientRequest(
        'chat',
        {
          ...chatJson,
          messages: [
            {role: 'user', content: 'x'},
            {
              role: 'assistant',
              content: null,
              tool_calls: [{id: 'c1', type: 'function', function: {name: 'f', arguments: '{}'}}],
            },
            {role: 'tool', tool_call_id: 'c1', content: 'done'},
          ],
        },
        {},
      ),
    )
    expect(turns.tool_choice).toEqual({type: 'tool', name: 'json_answer', disable_parallel_tool_use: true})
    expect(turns.tools.map((t: {name: string}) => t.name)).toEqual(['json_answer'])
    // the history's call and its result go as they were
    expect(turns.messages.map((m: any) => m.content.map((b: any) => b.type))).toEqual([
      ['text'],
      ['tool_use'],
      ['tool_result'],
    ])
    // Gemini CLI's router call: the session so far (a call with Gemini 3's skip signature, its
    // result with an image), the new prompt, JSON of a schema, no tools; thinking asked for
    const router = upstreamBody(
      decodeClientRequest(
        'gemini',
        {
          contents: [
            {role: 'user', parts: [{text: 'Read the screenshot.'}]},
            {
              role: 'model',
              parts: [
                {
                  functionCall: {id: 'read_file__call_2', name: 'read_file', args: {path: 'a.png'}},
                  thoughtSignature: 'skip_thought_signature_validator',
                },
              ],
            },
            {
              role: 'user',
              parts: [
                {functionResponse: {id: 'read_file__call_2', name: 'read_file', response: {output: ''}}},
                {inlineData: {mimeType: 'image/png', data: 'iVBORw0KGgo='}},
              ],
            },
            {role: 'model', parts: [{text: 'It shows a login page.'}]},
            {role: 'user', parts: [{text: 'Now fix the button.'}]},
          ],
          generationConfig: {
            responseMimeType: 'application/json',
            responseJsonSchema: schema,
            thinkingConfig: {thinkingBudget: 8192},
          },
        },
        {},
      ),
    )
    expect(router.tool_choice).toEqual({type: 'tool', name: 'json_answer', disable_parallel_tool_use: true})
    expect(router.tools).toEqual([
      {
        name: 'json_answer',
        description: 'Give the answer: one JSON value of this schema.',
        input_schema: schema,
      },
    ])
    expect(router.thinking).toBeUndefined()
  })

  it("gives the call back as the answer's text: chat, Gemini and Responses clients, whole", () => {
    const chat = translateResponseText('messages', decodeClientRequest('chat', chatJson, {}), answer)
    const c = JSON.parse(chat.text)
    expect(c.choices[0].message.content).toBe('{"reasoning":"short","model_choice":"flash"}')
    expect(c.choices[0].message.tool_calls).toBeUndefined()
    expect(c.choices[0].finish_reason).toBe('stop')
    const gemini = translateResponseText(
      'messages',
      decodeClientRequest('gemini', geminiJson, {model: 'gemini-x', stream: false}),
      answer,
    )
    const g = JSON.parse(gemini.text)
    expect(JSON.parse(g.candidates[0].content.parts[0].text)).toEqual({
      reasoning: 'short',
      model_choice: 'flash',
    })
    expect(g.candidates[0].finishReason).toBe('STOP')
    const responses = translateResponseText(
      'messages',
      decodeClientRequest(
        'responses',
        {model: 'gpt-x', input: 'Which model?', text: {format: {type: 'json_schema', name: 'route', schema}}},
        {},
      ),
      answer,
    )
    const r = JSON.parse(responses.text)
    expect(r.output.map((o: {type: string}) => o.type)).toEqual(['message'])
    expect(JSON.parse(r.output[0].content[0].text)).toEqual({reasoning: 'short', model_choice: 'flash'})
  })

  it('streams the call as text deltas, piece by piece, and ends the turn', () => {
    const client = decodeClientRequest('chat', {...chatJson, stream: true}, {})
    const t = new StreamTranslator('messages', client, {newId: (p) => `${p}1`})
    const out = t.push(Buffer.from(stream)) + t.end()
    const chunks = out
      .split('\n\n')
      .filter((e) => e.startsWith('data: {'))
      .map(
        (e) =>
          JSON.parse(e.slice(6)) as {
            choices: Array<{delta: {content?: string; tool_calls?: unknown}; finish_reason: string | null}>
          },
      )
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')
    expect(JSON.parse(text)).toEqual({reasoning: 'short', model_choice: 'flash'})
    expect(chunks.some((c) => c.choices[0]?.delta.tool_calls !== undefined)).toBe(false)
    expect(chunks.map((c) => c.choices[0]?.finish_reason).filter(Boolean)).toEqual(['stop'])
    expect(t.error).toBeUndefined()
  })

  it('gives back the first call alone: no text beside it, no second call (whole and streamed)', () => {
    const client = decodeClientRequest('chat', chatJson, {})
    const messy = {
      ...answer,
      content: [
        {type: 'text', text: 'Here it is:'},
        answer.content[0],
        {
          type: 'tool_use',
          id: 'toolu_2',
          name: 'json_answer',
          input: {reasoning: 'again', model_choice: 'pro'},
        },
        {type: 'text', text: 'Done.'},
      ],
    }
    const c = JSON.parse(translateResponseText('messages', client, messy).text)
    expect(JSON.parse(c.choices[0].message.content)).toEqual({reasoning: 'short', model_choice: 'flash'})
    const twice = stream.replace(
      'event: content_block_delta',
      `event: content_block_start\ndata: ${JSON.stringify({type: 'content_block_start', index: 1, content_block: {type: 'tool_use', id: 'toolu_2', name: 'json_answer', input: {}}})}\n\nevent: content_block_delta\ndata: ${JSON.stringify({type: 'content_block_delta', index: 1, delta: {type: 'input_json_delta', partial_json: '{"x":1}'}})}\n\nevent: content_block_delta`,
    )
    const t = new StreamTranslator('messages', decodeClientRequest('chat', {...chatJson, stream: true}, {}))
    const out = t.push(Buffer.from(twice)) + t.end()
    const text = out
      .split('\n\n')
      .filter((e) => e.startsWith('data: {'))
      .map(
        (e) =>
          (JSON.parse(e.slice(6)) as {choices: Array<{delta: {content?: string}}>}).choices[0]?.delta
            .content ?? '',
      )
      .join('')
    expect(JSON.parse(text)).toEqual({reasoning: 'short', model_choice: 'flash'})
  })

  it('leaves a real tool call of a request without JSON a tool call', () => {
    const plain = decodeClientRequest('chat', {model: 'gpt-x', messages: [{role: 'user', content: 'x'}]}, {})
    const c = JSON.parse(translateResponseText('messages', plain, answer).text)
    expect(c.choices[0].message.tool_calls[0].function.name).toBe('json_answer')
    expect(c.choices[0].finish_reason).toBe('tool_calls')
  })
})

describe('a JSON answer from a model that takes no forced call (Claude 5.5): json_answer offered', () => {
  const textBlock = (index: number, text: string) => [
    {type: 'content_block_start', index, content_block: {type: 'text', text: ''}},
    {type: 'content_block_delta', index, delta: {type: 'text_delta', text}},
    {type: 'content_block_stop', index},
  ]
  const start = {
    type: 'message_start',
    message: {id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-opus-5-5', content: []},
  }
  const chatText = (events: Array<Record<string, unknown>>): {text: string; finish: unknown[]} => {
    const t = new StreamTranslator('messages', decodeClientRequest('chat', {...chatJson, stream: true}, {}), {
      newId: (p) => `${p}1`,
    })
    const out = t.push(Buffer.from(sse(events))) + t.end()
    const chunks = out
      .split('\n\n')
      .filter((e) => e.startsWith('data: {'))
      .map(
        (e) =>
          JSON.parse(e.slice(6)) as {choices: Array<{delta: {content?: string}; finish_reason: unknown}>},
      )
    return {
      text: chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''),
      finish: chunks.map((c) => c.choices[0]?.finish_reason).filter(Boolean),
    }
  }

  it('the request offers the tool, not forced, and asks for the call in the prompt', () => {
    const body = JSON.parse(
      encodeUpstreamRequest(
        decodeClientRequest('chat', chatJson, {}),
        'messages',
        'claude-opus-5-5',
      ).body.toString(),
    )
    expect(body.tool_choice).toEqual({type: 'auto', disable_parallel_tool_use: true})
    expect(body.messages.at(-1).content.at(-1).text).toMatch(/calling the json_answer tool/)
    // thinking goes with an unforced call
    expect(body.thinking).toMatchObject({type: 'adaptive'})
  })

  it('text written before the call is not the answer: the JSON alone streams', () => {
    const {text, finish} = chatText([
      start,
      ...textBlock(0, 'I will answer with the tool.'),
      {
        type: 'content_block_start',
        index: 1,
        content_block: {type: 'tool_use', id: 't', name: 'json_answer', input: {}},
      },
      {
        type: 'content_block_delta',
        index: 1,
        delta: {type: 'input_json_delta', partial_json: '{"model_choice":"pro"}'},
      },
      {type: 'content_block_stop', index: 1},
      ...textBlock(2, 'Done.'),
      {type: 'message_delta', delta: {stop_reason: 'tool_use'}, usage: {output_tokens: 9}},
      {type: 'message_stop'},
    ])
    expect(JSON.parse(text)).toEqual({model_choice: 'pro'})
    expect(finish).toEqual(['stop'])
  })

  it('an answer in text alone is the answer, given at its end', () => {
    const {text, finish} = chatText([
      start,
      ...textBlock(0, '{"model_choice":'),
      ...textBlock(1, '"flash"}'),
      {type: 'message_delta', delta: {stop_reason: 'end_turn'}, usage: {output_tokens: 9}},
      {type: 'message_stop'},
    ])
    expect(JSON.parse(text)).toEqual({model_choice: 'flash'})
    expect(finish).toEqual(['stop'])
  })
})
