/**
 * Turn-2 checks: the sim accepts the opaque state it made and refuses a foreign or missing one
 * with the vendor's status and error shape; a tool result ends the loop with a text answer.
 */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {Simulator} from '../server.js'
import {startSim} from '../server.js'
import {SKIP_THOUGHT_SIGNATURE, encryptReasoning, thinkingSignature} from './turn-checks.js'

let sim: Simulator

beforeAll(async () => {
  sim = await startSim({timeScale: 1000})
})
afterAll(async () => {
  await sim.close()
})

type Json = Record<string, any>

async function post(path: string, body: unknown): Promise<{status: number; json: Json}> {
  const response = await fetch(sim.origin + path, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: 'Bearer sk-test',
      'x-api-key': 'sk-ant-test',
      'x-goog-api-key': 'g-test',
    },
    body: JSON.stringify(body),
  })
  return {status: response.status, json: (await response.json()) as Json}
}

describe('messages: thinking signatures', () => {
  const first = {
    model: 'claude-x',
    max_tokens: 100,
    thinking: {type: 'enabled', budget_tokens: 1024},
    tools: [{name: 'lookup', input_schema: {type: 'object'}}],
    messages: [{role: 'user', content: 'call the tool'}],
  }
  const turn2 = (assistant: Json[], thinking: Json = first.thinking) => ({
    ...first,
    thinking,
    messages: [
      ...first.messages,
      {role: 'assistant', content: assistant},
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            // the id of the call it answers (Anthropic refuses a result of no call)
            tool_use_id: assistant.find((b) => b.type === 'tool_use')?.id ?? 'toolu_1',
            content: 'sunny',
          },
        ],
      },
    ],
  })
  const refusal = (message: string) => ({
    type: 'error',
    error: {type: 'invalid_request_error', message},
    request_id: null,
  })

  it('accepts its own thinking block back and answers the tool result with text', async () => {
    const one = await post('/v1/messages', first)
    expect(one.json.content.map((b: Json) => b.type)).toEqual(['thinking', 'tool_use'])
    expect(one.json.content[0].signature).toBe(thinkingSignature(one.json.content[0].thinking))
    expect(Buffer.from(one.json.content[0].signature, 'base64').toString()).toMatch(/^simsig:[0-9a-f]{32}$/)
    const two = await post('/v1/messages', turn2(one.json.content))
    expect(two.status).toBe(200)
    expect(two.json.content.at(-1)).toEqual({type: 'text', text: 'The tool answered: sunny'})
    expect(two.json.stop_reason).toBe('end_turn')
  })

  it('refuses a signature it did not make for that text, as Anthropic does', async () => {
    const one = await post('/v1/messages', first)
    const [thinking, tool] = one.json.content as Json[]
    for (const forged of [
      {...thinking, signature: 'RXF1aXZhbGVudFNpZ25hdHVyZQ=='},
      {...thinking, thinking: thinking.thinking + ' (edited)'},
    ]) {
      const two = await post('/v1/messages', turn2([forged, tool]))
      expect(two.status).toBe(400)
      expect(two.json).toEqual(refusal('messages.1.content.0: Invalid `signature` in `thinking` block'))
    }
  })

  it('refuses a last assistant tool_use without a thinking block before it while thinking is on', async () => {
    const tool = {type: 'tool_use', id: 'toolu_1', name: 'lookup', input: {query: 'x'}}
    const two = await post('/v1/messages', turn2([tool]))
    expect(two.status).toBe(400)
    expect(two.json.error.type).toBe('invalid_request_error')
    expect(two.json.error.message).toMatch(
      /^messages\.1\.content\.0\.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`\. When `thinking` is enabled/,
    )
    expect((await post('/v1/messages', turn2([tool], {type: 'disabled'}))).status).toBe(200)
    const redacted = {type: 'redacted_thinking', data: 'opaque'}
    expect((await post('/v1/messages', turn2([redacted, tool]))).status).toBe(200)
  })
})

describe('gemini: thought signatures', () => {
  const tools = [{functionDeclarations: [{name: 'lookup'}]}]
  const ask = {role: 'user', parts: [{text: 'use a tool'}]}
  const result = {role: 'user', parts: [{functionResponse: {name: 'lookup', response: {temp: 21}}}]}
  const call = (model: string, body: Json) => post(`/v1beta/models/${model}:generateContent`, body)
  const turn2 = (model: string, modelParts: Json[], extra: Json = {}) =>
    call(model, {tools, contents: [ask, {role: 'model', parts: modelParts}, result], ...extra})
  const invalid = (message: string) => ({error: {code: 400, message, status: 'INVALID_ARGUMENT'}})

  it('signs the first functionCall part of gemini-3 models and accepts it back', async () => {
    const one = await call('gemini-3-pro-x', {tools, contents: [ask]})
    const part = one.json.candidates[0].content.parts[0]
    expect(part.functionCall).toEqual({name: 'lookup', args: {query: 'use a tool'}})
    expect(Buffer.from(part.thoughtSignature, 'base64').toString()).toMatch(/^simsig:[0-9a-f]{32}$/)
    const two = await turn2('gemini-3-pro-x', [part])
    expect(two.status).toBe(200)
    expect(two.json.candidates[0].content.parts).toEqual([{text: 'The tool answered: {"temp":21}'}])
  })

  it('signs with thinking on for other models, not with thinking off', async () => {
    const thinking = {generationConfig: {thinkingConfig: {thinkingBudget: 512}}}
    const on = await call('gemini-2.5-x', {tools, contents: [ask], ...thinking})
    expect(on.json.candidates[0].content.parts[0].thoughtSignature).toBeTruthy()
    const off = await call('gemini-2.5-x', {tools, contents: [ask]})
    expect(off.json.candidates[0].content.parts[0]).not.toHaveProperty('thoughtSignature')
  })

  it('refuses a missing signature on gemini-3 and gemini-2.5 thinking (only there) and a foreign one on any model', async () => {
    const fc = {functionCall: {name: 'lookup', args: {query: 'use a tool'}}}
    const missing = await turn2('gemini-3-pro-x', [fc])
    expect(missing.status).toBe(400)
    expect(missing.json.error.status).toBe('INVALID_ARGUMENT')
    expect(missing.json.error.message).toMatch(
      /^Function call is missing a thought_signature in functionCall parts\..*`default_api:lookup`/,
    )
    // Gemini 2.5 thinking (openclaude #583, LLM-API-Key-Proxy #160, rowboat #694): refused as
    // Gemini 3 refuses it; with thinking off (budget 0, or no thinking config) taken
    const thinking = (thinkingConfig: Json) => ({generationConfig: {thinkingConfig}})
    for (const config of [{thinkingBudget: 1024}, {thinkingBudget: -1}, {includeThoughts: true}]) {
      const refused = await turn2('gemini-2.5-flash', [fc], thinking(config))
      expect(refused.status, JSON.stringify(config)).toBe(400)
      expect(refused.json).toEqual(invalid(missing.json.error.message))
    }
    expect((await turn2('gemini-2.5-flash', [fc], thinking({thinkingBudget: 0}))).status).toBe(200)
    expect((await turn2('gemini-2.5-x', [fc])).status).toBe(200)
    // only the current turn's: an earlier turn's unsigned call is taken
    const later = await call('gemini-2.5-flash', {
      tools,
      contents: [ask, {role: 'model', parts: [fc]}, result, {role: 'model', parts: [{text: 'ok'}]}, ask],
      ...thinking({thinkingBudget: 1024}),
    })
    expect(later.status).toBe(200)
    // Gemini 2.0, thinking config or none, is not asked for one
    expect((await turn2('gemini-2.0-flash', [fc], thinking({thinkingBudget: 1024}))).status).toBe(200)
    for (const model of ['gemini-3-pro-x', 'gemini-2.5-x']) {
      const foreign = await turn2(model, [{...fc, thoughtSignature: 'Zm9yZWlnbg=='}])
      expect(foreign.status).toBe(400)
      expect(foreign.json).toEqual(invalid('Corrupted thought signature.'))
      const bypass = await turn2(model, [{...fc, thoughtSignature: SKIP_THOUGHT_SIGNATURE}])
      expect(bypass.status).toBe(200)
    }
  })

  it('signed-calls (a Gemini 3 behind an older name) signs its own calls and takes them back, two turns', async () => {
    for (const [model, extra] of [
      ['gemini-2.5-pro+signed-calls', {}],
      ['gemini-2.5-flash', {generationConfig: {thinkingConfig: {thinkingBudget: 1024}}}],
    ] as const) {
      const one = await call(model, {tools, contents: [ask], ...extra})
      expect(one.status).toBe(200)
      const own = one.json.candidates[0].content
      expect(own.parts[0].functionCall).toEqual({name: 'lookup', args: {query: 'use a tool'}})
      expect(Buffer.from(own.parts[0].thoughtSignature, 'base64').toString(), model).toMatch(/^simsig:/)
      // its turn sent back verbatim: taken
      const two = await call(model, {tools, contents: [ask, own, result], ...extra})
      expect(two.status, model).toBe(200)
      expect(two.json.candidates[0].content.parts).toEqual([{text: 'The tool answered: {"temp":21}'}])
      // the same turn unsigned: refused
      const {thoughtSignature: _, ...unsigned} = own.parts[0]
      const refused = await call(model, {
        tools,
        contents: [ask, {role: 'model', parts: [unsigned]}, result],
        ...extra,
      })
      expect(refused.status, model).toBe(400)
      expect(refused.json.error.message).toMatch(/^Function call is missing a thought_signature/)
    }
  })

  it('refuses the sim signature moved to another call', async () => {
    const one = await call('gemini-3-pro-x', {tools, contents: [ask]})
    const part = one.json.candidates[0].content.parts[0]
    const moved = {...part, functionCall: {name: 'lookup', args: {query: 'something else'}}}
    expect((await turn2('gemini-3-pro-x', [moved])).json).toEqual(invalid('Corrupted thought signature.'))
  })
})

describe('gemini: empty text parts', () => {
  const call = (contents: Json[]) => post('/v1beta/models/gemini-2.5-x:generateContent', {contents})

  it("refuses an empty text part in any turn, as Gemini does; Gemini's own signed empty text is taken", async () => {
    for (const contents of [
      [{role: 'user', parts: [{text: 'hi'}, {text: ''}]}],
      [
        {role: 'user', parts: [{text: 'hi'}]},
        {role: 'model', parts: [{text: ''}]},
        {role: 'user', parts: [{text: 'go'}]},
      ],
    ]) {
      const refused = await call(contents)
      expect(refused.status).toBe(400)
      expect(refused.json.error.status).toBe('INVALID_ARGUMENT')
      expect(refused.json.error.message).toMatch(
        /^Unable to submit request because it has an empty text parameter\./,
      )
    }
    const signed = [
      {role: 'user', parts: [{text: 'hi'}]},
      {role: 'model', parts: [{text: 'hello'}, {text: '', thoughtSignature: 'c2ln'}]},
      {role: 'user', parts: [{text: 'go'}]},
    ]
    expect((await call(signed)).status).toBe(200)
  })
})

describe('responses: encrypted reasoning', () => {
  const first = {
    model: 'gpt-r',
    input: [{role: 'user', content: 'call the tool'}],
    tools: [{type: 'function', name: 'lookup', parameters: {type: 'object'}}],
    reasoning: {effort: 'low'},
    include: ['reasoning.encrypted_content'],
    store: false,
  }

  it('accepts its own encrypted_content back and answers the tool output with text', async () => {
    const one = await post('/v1/responses', first)
    const [reasoning, fc] = one.json.output as Json[]
    expect(reasoning.encrypted_content).toBe(
      encryptReasoning('The user wrote "call the tool". A short answer will do.'),
    )
    const two = await post('/v1/responses', {
      ...first,
      input: [
        ...first.input,
        reasoning,
        fc,
        {type: 'function_call_output', call_id: fc.call_id, output: 'sunny'},
      ],
    })
    expect(two.status).toBe(200)
    expect(two.json.output.at(-1).content[0].text).toBe('The tool answered: sunny')
  })

  it('refuses encrypted_content it did not make, in the OpenAI shape', async () => {
    const forged = {type: 'reasoning', id: 'rs_forged', summary: [], encrypted_content: 'Zm9yZ2Vk'}
    const two = await post('/v1/responses', {...first, input: [...first.input, forged]})
    expect(two.status).toBe(400)
    expect(two.json).toEqual({
      error: {
        message: 'The encrypted content for item rs_forged could not be verified.',
        type: 'invalid_request_error',
        param: null,
        code: 'invalid_encrypted_content',
      },
    })
    const tampered = {...forged, encrypted_content: encryptReasoning('x').slice(0, -4) + 'AAAA'}
    expect((await post('/v1/responses', {...first, input: [...first.input, tampered]})).status).toBe(400)
  })
})

describe('chat: DeepSeek reasoning_content rule', () => {
  const tools = [{type: 'function', function: {name: 'f', parameters: {properties: {a: {type: 'string'}}}}}]
  const history = (assistant: Json) => [
    {role: 'user', content: 'weather'},
    {
      role: 'assistant',
      content: null,
      tool_calls: [{id: 'c1', type: 'function', function: {name: 'f', arguments: '{}'}}],
      ...assistant,
    },
    {role: 'tool', tool_call_id: 'c1', content: 'sunny'},
  ]

  it('refuses an assistant tool call without reasoning_content when reasoning is on', async () => {
    for (const body of [
      {model: 'deepseek-reasoner', messages: history({})},
      {model: 'gpt-x+reasoning-content', messages: history({})},
    ]) {
      const answer = await post('/v1/chat/completions', {...body, tools})
      expect(answer.status).toBe(400)
      expect(answer.json.error).toMatchObject({
        message: 'Missing `reasoning_content` field in the assistant message at message index 1',
        type: 'invalid_request_error',
      })
    }
  })

  it('accepts any reasoning_content (DeepSeek does not sign it), and no check without reasoning', async () => {
    const ok = await post('/v1/chat/completions', {
      model: 'deepseek-reasoner',
      tools,
      messages: history({reasoning_content: 'not made by the sim'}),
    })
    expect(ok.status).toBe(200)
    expect(ok.json.choices[0].message.content).toBe('The tool answered: sunny')
    const plain = await post('/v1/chat/completions', {model: 'gpt-x', tools, messages: history({})})
    expect(plain.status).toBe(200)
  })
})

describe('messages: tool calls and results paired, as Anthropic checks them', () => {
  const tools = [{name: 'lookup', input_schema: {type: 'object'}}]
  const call = {type: 'tool_use', id: 'toolu_a', name: 'lookup', input: {}}
  const body = (messages: Json[]) => ({model: 'claude-sonnet-4-5', max_tokens: 64, tools, messages})

  it("refuses a call whose id an earlier call of the history has (Kimi K3's `Bash:0` of every turn)", async () => {
    const result = (id: string) => ({type: 'tool_result', tool_use_id: id, content: 'x'})
    const twice = await post(
      '/v1/messages',
      body([
        {role: 'user', content: 'go'},
        {role: 'assistant', content: [call]},
        {role: 'user', content: [result('toolu_a')]},
        {role: 'assistant', content: [{type: 'text', text: 'again'}, call]},
        {role: 'user', content: [result('toolu_a')]},
      ]),
    )
    expect(twice.status).toBe(400)
    expect(twice.json.error.message).toBe('messages.3.content.1: `tool_use` ids must be unique')
    const apart = await post(
      '/v1/messages',
      body([
        {role: 'user', content: 'go'},
        {role: 'assistant', content: [call]},
        {role: 'user', content: [result('toolu_a')]},
        {role: 'assistant', content: [{...call, id: 'toolu_b'}]},
        {role: 'user', content: [result('toolu_b')]},
      ]),
    )
    expect(apart.status).toBe(200)
  })

  it('refuses a call without a result in the next message, and a result of no call', async () => {
    const missing = await post(
      '/v1/messages',
      body([
        {role: 'user', content: 'go'},
        {role: 'assistant', content: [call]},
        {role: 'user', content: 'stop'},
      ]),
    )
    expect(missing.status).toBe(400)
    expect(missing.json.error.message).toBe(
      'messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_a. Each `tool_use` block must have a corresponding `tool_result` block in the next message.',
    )
    const orphan = await post(
      '/v1/messages',
      body([{role: 'user', content: [{type: 'tool_result', tool_use_id: 'toolu_gone', content: 'x'}]}]),
    )
    expect(orphan.status).toBe(400)
    expect(orphan.json.error.message).toMatch(
      /^messages\.0\.content\.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_gone\./,
    )
    const paired = await post(
      '/v1/messages',
      body([
        {role: 'user', content: 'go'},
        {role: 'assistant', content: [call]},
        {role: 'user', content: [{type: 'tool_result', tool_use_id: 'toolu_a', content: 'x'}]},
      ]),
    )
    expect(paired.status).toBe(200)
    // results split over two user messages: one turn, as Anthropic reads consecutive messages
    const split = await post(
      '/v1/messages',
      body([
        {role: 'user', content: 'go'},
        {role: 'assistant', content: [call, {...call, id: 'toolu_b'}]},
        {role: 'user', content: [{type: 'tool_result', tool_use_id: 'toolu_a', content: 'x'}]},
        {role: 'user', content: [{type: 'tool_result', tool_use_id: 'toolu_b', content: 'y'}]},
      ]),
    )
    expect(split.status).toBe(200)
  })
})

describe('media the vendors refuse', () => {
  const PDF = Buffer.from('%PDF-1.7\n%%EOF\n').toString('base64')

  it("messages: a PDF sent as an image, or another file as a document, in Anthropic's words", async () => {
    const asImage = await post('/v1/messages', {
      model: 'claude-x',
      max_tokens: 100,
      messages: [
        {
          role: 'user',
          content: [{type: 'image', source: {type: 'base64', media_type: 'application/pdf', data: PDF}}],
        },
      ],
    })
    expect(asImage.status).toBe(400)
    expect(asImage.json.error.message).toBe(
      "messages.0.content.0.image.source.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'",
    )
    const notPdf = await post('/v1/messages', {
      model: 'claude-x',
      max_tokens: 100,
      messages: [
        {role: 'user', content: 'hi'},
        {role: 'assistant', content: [{type: 'tool_use', id: 'toolu_1', name: 'Read', input: {}}]},
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'toolu_1',
              content: [{type: 'document', source: {type: 'base64', media_type: 'audio/mp3', data: 'AAAA'}}],
            },
          ],
        },
      ],
    })
    expect(notPdf.json.error.message).toBe(
      "messages.2.content.0.tool_result.content.0.document.source.base64.media_type: Input should be 'application/pdf'",
    )
    const ok = await post('/v1/messages', {
      model: 'claude-x',
      max_tokens: 100,
      messages: [
        {
          role: 'user',
          content: [{type: 'document', source: {type: 'base64', media_type: 'application/pdf', data: PDF}}],
        },
      ],
    })
    expect(ok.status).toBe(200)
  })

  it("chat and messages: a tool's name past the vendor's rule, in the tools or the history's calls", async () => {
    const long = 'x'.repeat(65)
    const tools = await post('/v1/chat/completions', {
      model: 'sim-mini',
      messages: [{role: 'user', content: 'hi'}],
      tools: [{type: 'function', function: {name: long, parameters: {}}}],
    })
    expect(tools.json.error).toMatchObject({
      message:
        "Invalid 'tools[0].function.name': string too long. Expected a string with maximum length 64, but got a string with length 65 instead.",
      param: 'tools[0].function.name',
    })
    const history = await post('/v1/chat/completions', {
      model: 'sim-mini',
      messages: [
        {role: 'user', content: 'hi'},
        {
          role: 'assistant',
          content: null,
          tool_calls: [{id: 'c', type: 'function', function: {name: 'a.b', arguments: '{}'}}],
        },
        {role: 'tool', tool_call_id: 'c', content: 'x'},
      ],
    })
    expect(history.json.error.param).toBe('messages[1].tool_calls[0].function.name')
    const claude = await post('/v1/messages', {
      model: 'claude-x',
      max_tokens: 10,
      messages: [{role: 'user', content: 'hi'}],
      tools: [{name: 'a.b', input_schema: {type: 'object'}}],
    })
    expect(claude.json.error.message).toBe(
      "tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'",
    )
    // a function named as the web search tool beside it
    const twice = await post('/v1/messages', {
      model: 'claude-x',
      max_tokens: 10,
      messages: [{role: 'user', content: 'hi'}],
      tools: [
        {name: 'web_search', input_schema: {type: 'object'}},
        {type: 'web_search_20250305', name: 'web_search'},
      ],
    })
    expect(twice.status).toBe(400)
    expect(twice.json.error.message).toBe('tools: Tool names must be unique.')
  })

  it('chat: a PDF as an image_url is refused as OpenAI refuses it; a file part is read as a document', async () => {
    const asImage = await post('/v1/chat/completions', {
      model: 'sim-mini',
      messages: [
        {
          role: 'user',
          content: [{type: 'image_url', image_url: {url: `data:application/pdf;base64,${PDF}`}}],
        },
      ],
    })
    expect(asImage.status).toBe(400)
    expect(asImage.json.error).toMatchObject({
      message: 'Invalid MIME type. Only image types are supported.',
      code: 'invalid_image_format',
    })
    const badFile = await post('/v1/chat/completions', {
      model: 'sim-mini',
      messages: [
        {
          role: 'user',
          content: [{type: 'file', file: {filename: 'a.txt', file_data: 'data:text/plain;base64,aGk='}}],
        },
      ],
    })
    expect(badFile.status).toBe(400)
    expect(badFile.json.error.param).toBe('messages[0].content[0].file.file_data')
    expect(badFile.json.error.message).toContain("unsupported MIME type 'text/plain'")
    const file = await post('/v1/chat/completions', {
      model: 'sim-mini',
      messages: [
        {
          role: 'user',
          content: [
            {type: 'text', text: 'Summarise it.'},
            {type: 'file', file: {filename: 'a.pdf', file_data: `data:application/pdf;base64,${PDF}`}},
          ],
        },
      ],
    })
    expect(file.status).toBe(200)
    expect(file.json.choices[0].message.content).toContain('I received 1 document.')
  })
})
