/** The official SDKs against the simulated upstreams directly: the sim speaks each protocol. */
import Anthropic from '@anthropic-ai/sdk'
import type {FunctionDeclaration} from '@google/genai'
import {GoogleGenAI} from '@google/genai'
import OpenAI from 'openai'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {Simulator} from '../server.js'
import {startSim} from '../server.js'
import {simTokens} from '../sse.js'

let sim: Simulator

beforeAll(async () => {
  sim = await startSim()
})
afterAll(async () => {
  await sim.close()
})

const openai = (): OpenAI => new OpenAI({apiKey: 'sk-test', baseURL: sim.origin + '/v1', maxRetries: 0})
const anthropic = (): Anthropic => new Anthropic({apiKey: 'sk-ant-test', baseURL: sim.origin, maxRetries: 0})
const genai = (): GoogleGenAI =>
  new GoogleGenAI({apiKey: 'g-test', httpOptions: {baseUrl: sim.origin, retryOptions: {attempts: 1}}})

describe('responses upstream', () => {
  it('answers a non-streaming request with usage incl. cached and reasoning tokens', async () => {
    const input = 'say hi'
    const response = await openai().responses.create({
      model: 'gpt-sim',
      input,
      store: false,
      reasoning: {effort: 'low', summary: 'auto'},
      include: ['reasoning.encrypted_content'],
    })
    expect(response.output_text).toBe('PONG from sim: say hi')
    const prompt = simTokens(JSON.stringify([null, input, null]))
    expect(response.usage?.input_tokens).toBe(prompt)
    expect(response.usage?.input_tokens_details.cached_tokens).toBe(Math.floor(prompt / 4))
    expect(response.usage?.output_tokens_details.reasoning_tokens).toBeGreaterThan(0)
    const reasoning = response.output.find((item) => item.type === 'reasoning')
    expect(reasoning?.encrypted_content).toBeTruthy()
  })

  it("reports cache writes (cache_write_tokens) for OpenAI's GPT-5.6 on, as OpenAI does, and none for earlier models", async () => {
    const input = 'say hi, '.repeat(40)
    const prompt = simTokens(JSON.stringify([null, input, null]))
    const late = await openai().responses.create({model: 'gpt-5.6-luna', input, store: false})
    expect(late.usage?.input_tokens_details).toEqual({
      cached_tokens: Math.floor(prompt / 4),
      cache_write_tokens: Math.floor(prompt / 8),
    })
    const early = await openai().responses.create({model: 'gpt-5.4-mini', input, store: false})
    expect(early.usage?.input_tokens_details).toEqual({cached_tokens: Math.floor(prompt / 4)})
  })

  it('streams the exact event sequence the SDK accumulates', async () => {
    const stream = openai().responses.stream({
      model: 'gpt-sim',
      input: [{role: 'user', content: 'hello there'}],
    })
    const types: string[] = []
    const sequence: number[] = []
    for await (const event of stream) {
      types.push(event.type)
      sequence.push(event.sequence_number)
    }
    const final = await stream.finalResponse()
    expect(final.output_text).toBe('PONG from sim: hello there')
    expect(types[0]).toBe('response.created')
    expect(types.at(-1)).toBe('response.completed')
    expect(types).toContain('response.output_text.delta')
    expect(sequence).toEqual(sequence.map((_, i) => i))
    expect(final.usage?.total_tokens).toBe(
      (final.usage?.input_tokens ?? 0) + (final.usage?.output_tokens ?? 0),
    )
  })

  it('calls a function tool when asked to', async () => {
    const response = await openai().responses.create({
      model: 'gpt-sim',
      input: 'please use a tool',
      tools: [{type: 'function', name: 'lookup', parameters: {type: 'object'}, strict: false}],
      stream: true,
    })
    let item: unknown
    for await (const event of response) if (event.type === 'response.output_item.done') item = event.item
    expect(item).toMatchObject({
      type: 'function_call',
      name: 'lookup',
      arguments: '{"query":"please use a tool"}',
    })
  })

  it('answers errors in the OpenAI shape', async () => {
    const error = await openai()
      .responses.create({model: 'gpt-sim', input: 'x'}, {headers: {'x-sim-fault': 'status=429'}})
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(OpenAI.RateLimitError)
    expect((error as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({type: 'rate_limit_error'})
  })
})

describe('messages upstream', () => {
  const body = {
    model: 'claude-sim',
    max_tokens: 100,
    messages: [{role: 'user' as const, content: 'Hi there'}],
  }
  const prompt = simTokens(JSON.stringify([null, body.messages, null]))

  it('answers a non-streaming request with cache usage and a request-id', async () => {
    const {data, response} = await anthropic().messages.create(body).withResponse()
    expect(data.content).toEqual([{type: 'text', text: 'PONG from sim: Hi there'}])
    expect(response.headers.get('request-id')).toMatch(/^req_/)
    expect(data.usage.cache_read_input_tokens).toBe(Math.floor(prompt / 4))
    expect(data.usage.cache_creation_input_tokens).toBe(Math.floor(prompt / 8))
    expect(data.usage.input_tokens).toBe(prompt - Math.floor(prompt / 4) - Math.floor(prompt / 8))
  })

  it('calls a tool forced by name, with arguments of its schema (the first tool otherwise, with the user words)', async () => {
    const tools = [
      {name: 'lookup', input_schema: {type: 'object' as const}},
      {
        name: 'route',
        input_schema: {
          type: 'object' as const,
          properties: {
            reasoning: {type: 'string'},
            choice: {type: 'string', enum: ['flash', 'pro']},
            n: {type: 'integer'},
          },
        },
      },
    ]
    const forced = await anthropic().messages.create({
      ...body,
      tools,
      tool_choice: {type: 'tool', name: 'route'},
    })
    expect(forced.content).toMatchObject([
      {type: 'tool_use', name: 'route', input: {reasoning: 'sim', choice: 'flash', n: 1}},
    ])
    const any = await anthropic().messages.create({...body, tools, tool_choice: {type: 'any'}})
    expect(any.content).toMatchObject([{type: 'tool_use', name: 'lookup', input: {query: 'Hi there'}}])
  })

  it('streams in the exact order, with thinking and a tool call (beta path)', async () => {
    const stream = anthropic().beta.messages.stream({
      ...body,
      messages: [{role: 'user', content: 'call the tool'}],
      thinking: {type: 'enabled', budget_tokens: 1024},
      tools: [{name: 'lookup', input_schema: {type: 'object'}}],
    })
    const types: string[] = []
    stream.on('streamEvent', (event) => types.push(event.type))
    const message = await stream.finalMessage()
    expect(types[0]).toBe('message_start')
    expect(types.slice(-2)).toEqual(['message_delta', 'message_stop'])
    expect(message.content.map((b) => b.type)).toEqual(['thinking', 'tool_use'])
    expect(message.content[1]).toMatchObject({name: 'lookup', input: {query: 'call the tool'}})
    expect(message.stop_reason).toBe('tool_use')
    expect(message.usage.output_tokens).toBeGreaterThan(1)
    expect(sim.requests.at(-1)?.query).toEqual({beta: 'true'})
  })

  it('answers a Claude Code request: HEAD / warm-up, context block before the prompt, system role in messages, large body', async () => {
    const warmUp = await fetch(sim.origin + '/', {method: 'HEAD'})
    expect(warmUp.status).toBe(200)
    const stream = anthropic().beta.messages.stream({
      model: 'claude-sim',
      max_tokens: 64000,
      system: [
        {type: 'text', text: 'x-anthropic-billing-header: cc_version=0;'},
        {type: 'text', text: 'y'.repeat(80_000)},
      ],
      thinking: {type: 'adaptive'} as never,
      tools: [{name: 'Bash', input_schema: {type: 'object'}}],
      messages: [
        {
          role: 'user',
          content: [
            {type: 'text', text: '<system-reminder>Use the tools when needed.</system-reminder>'},
            {type: 'text', text: 'say hi', cache_control: {type: 'ephemeral'}},
          ],
        },
        {role: 'system', content: 'mid-conversation system text'} as never,
      ],
    })
    const message = await stream.finalMessage()
    expect(message.content.at(-1)).toEqual({type: 'text', text: 'PONG from sim: say hi'})
    expect(message.stop_reason).toBe('end_turn')
    expect(message.usage.output_tokens).toBeGreaterThan(simTokens('PONG from sim: say hi'))
  })

  it('reads the prompt past a system message the gateway placed after it as a <system-reminder> block', async () => {
    // (Claude Code's mid-conversation system message passed through: system-turns.ts; the sim read
    // the reminder as the prompt and answered it, and `test:agents --translate` claude to messages
    // never got its tool turn)
    const message = await anthropic().messages.create({
      model: 'claude-sim',
      max_tokens: 64,
      messages: [
        {
          role: 'user',
          content: [
            {type: 'text', text: 'say hi'},
            {
              type: 'text',
              text: '<system-reminder>\n# Environment\nYou have been invoked in the following environment\n</system-reminder>',
            },
          ],
        },
      ],
    })
    expect(message.content).toEqual([{type: 'text', text: 'PONG from sim: say hi'}])
  })

  it('counts tokens', async () => {
    const result = await anthropic().messages.countTokens({model: 'claude-sim', messages: body.messages})
    expect(result.input_tokens).toBe(prompt)
  })

  it('refuses a body nested 20 000 deep with a 400 in the Anthropic shape, for count_tokens too', async () => {
    const deep = '['.repeat(20_000) + ']'.repeat(20_000)
    for (const path of ['/v1/messages/count_tokens', '/v1/messages']) {
      const response = await fetch(sim.origin + path, {
        method: 'POST',
        headers: {'content-type': 'application/json', 'x-api-key': 'sk-ant-test'},
        body: `{"model":"claude-sim","max_tokens":5,"messages":[{"role":"user","content":${deep}}]}`,
      })
      expect(response.status).toBe(400)
      expect(await response.json()).toMatchObject({
        type: 'error',
        error: {type: 'invalid_request_error', message: 'request body nests JSON deeper than 512 levels'},
      })
    }
  })

  it('answers errors in the Anthropic shape', async () => {
    const error = await anthropic()
      .messages.create(body, {headers: {'x-sim-fault': 'status=529'}})
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(Anthropic.APIError)
    expect((error as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
      type: 'error',
      error: {type: 'overloaded_error'},
    })
  })
})

describe('gemini upstream', () => {
  it('generates content with usageMetadata incl. cached and thoughts tokens', async () => {
    const result = await genai().models.generateContent({
      model: 'gemini-sim',
      contents: 'Hello gemini',
      config: {thinkingConfig: {thinkingBudget: 512, includeThoughts: true}},
    })
    expect(result.text).toBe('PONG from sim: Hello gemini')
    const meta = result.usageMetadata!
    expect(meta.cachedContentTokenCount).toBe(Math.floor((meta.promptTokenCount ?? 0) / 4))
    expect(meta.thoughtsTokenCount).toBeGreaterThan(0)
    expect(meta.totalTokenCount).toBe(
      (meta.promptTokenCount ?? 0) + (meta.candidatesTokenCount ?? 0) + (meta.thoughtsTokenCount ?? 0),
    )
  })

  it('answers the prompt, not the context part before it (Gemini CLI)', async () => {
    const result = await genai().models.generateContent({
      model: 'gemini-sim',
      contents: [{role: 'user', parts: [{text: '<session_context>cwd</session_context>'}, {text: 'say hi'}]}],
    })
    expect(result.text).toBe('PONG from sim: say hi')
  })

  it('streams data-only chunks; the last carries finishReason and usage', async () => {
    const stream = await genai().models.generateContentStream({
      model: 'gemini-sim',
      contents: 'Stream please',
    })
    let text = ''
    let last: unknown
    for await (const chunk of stream) {
      text += chunk.text ?? ''
      last = chunk
    }
    expect(text).toBe('PONG from sim: Stream please')
    expect(last).toMatchObject({
      candidates: [{finishReason: 'STOP'}],
      usageMetadata: {candidatesTokenCount: simTokens(text)},
    })
  })

  it('calls a function when tools are given and asked for', async () => {
    const result = await genai().models.generateContent({
      model: 'gemini-sim',
      contents: 'use a tool now',
      config: {tools: [{functionDeclarations: [{name: 'lookup'}]}]},
    })
    expect(result.functionCalls).toEqual([{name: 'lookup', args: {query: 'use a tool now'}}])
  })

  it('fills the one string `input` of a function that takes only that (a custom tool, translated)', async () => {
    const input = {type: 'object', properties: {input: {type: 'string'}}, required: ['input']}
    for (const decl of [
      {name: 'exec', parametersJsonSchema: input},
      {name: 'exec', parameters: {...input, properties: {input: {type: 'STRING'}}}},
    ]) {
      const result = await genai().models.generateContent({
        model: 'gemini-sim',
        contents: 'use a tool now',
        config: {tools: [{functionDeclarations: [decl as FunctionDeclaration]}]},
      })
      expect(result.functionCalls).toEqual([{name: 'exec', args: {input: 'use a tool now'}}])
    }
  })

  it('answers JSON mode with an object fitting the schema', async () => {
    const result = await genai().models.generateContent({
      model: 'gemini-sim',
      contents: 'classify',
      config: {
        responseMimeType: 'application/json',
        responseJsonSchema: {
          type: 'object',
          properties: {reasoning: {type: 'string'}, score: {type: 'integer', minimum: 1, maximum: 100}},
        },
      },
    })
    expect(JSON.parse(result.text ?? '')).toEqual({reasoning: 'sim', score: 1})
  })

  it('counts tokens and answers errors in the Google shape', async () => {
    const count = await genai().models.countTokens({model: 'gemini-sim', contents: 'abc'})
    expect(count.totalTokens).toBeGreaterThan(0)
    const error = await new GoogleGenAI({
      apiKey: 'g-test',
      httpOptions: {baseUrl: sim.origin, headers: {'x-sim-fault': 'status=503'}},
    }).models
      .generateContent({model: 'gemini-sim', contents: 'x'})
      .catch((e: unknown) => e)
    expect((error as Error).message).toContain('UNAVAILABLE')
  })
})
