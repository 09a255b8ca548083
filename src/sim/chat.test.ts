/**
 * The official `openai` SDK as a client of the simulator's chat API: proves that the simulator
 * speaks the real protocol (../shared/PROTOCOLS.md A1), on both mounts.
 */
import OpenAI from 'openai'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import type {Simulator} from './server.js'
import {startSim} from './server.js'

let sim: Simulator
beforeEach(async () => {
  sim = await startSim({timeScale: 1000})
})
afterEach(async () => {
  await sim.close()
})

const platform = (): OpenAI => new OpenAI({baseURL: sim.baseUrl, apiKey: 'sk-sim', maxRetries: 0})
const vendor = (): OpenAI => new OpenAI({baseURL: sim.origin + '/v1', apiKey: 'sk-sim', maxRetries: 0})

describe('simulated chat completions through the openai SDK', () => {
  it('answers a non-stream request with a chat.completion and the provider field', async () => {
    const completion = await platform().chat.completions.create({
      model: 'sim-mini',
      messages: [{role: 'user', content: 'hi there'}],
    })
    expect(completion.object).toBe('chat.completion')
    expect(completion.choices[0].message.content).toContain('hi there')
    expect(completion.choices[0].finish_reason).toBe('stop')
    expect((completion as unknown as {provider: string}).provider).toBe('alpha-cloud')
    expect(completion.usage?.total_tokens).toBe(
      (completion.usage?.prompt_tokens ?? 0) + (completion.usage?.completion_tokens ?? 0),
    )
  })

  it('answers a json_schema response format with a value that fits the schema', async () => {
    const completion = await platform().chat.completions.create({
      model: 'sim-mini',
      messages: [{role: 'user', content: 'pick a model'}],
      response_format: {
        type: 'json_schema',
        json_schema: {
          name: 'r',
          schema: {type: 'object', properties: {model: {type: 'string'}, n: {type: 'integer', minimum: 3}}},
        },
      },
    })
    expect(JSON.parse(completion.choices[0].message.content ?? '')).toEqual({model: 'sim', n: 3})
  })

  it('streams chunks the SDK assembles, with usage only when include_usage asks', async () => {
    const stream = platform().chat.completions.stream({
      model: 'sim-pro',
      messages: [{role: 'user', content: 'stream please'}],
      stream_options: {include_usage: true},
    })
    const providers = new Set<string>()
    stream.on('chunk', (chunk) => providers.add((chunk as unknown as {provider: string}).provider))
    const final = await stream.finalChatCompletion()
    expect(final.choices[0].message.content).toContain('stream please')
    expect(final.choices[0].finish_reason).toBe('stop')
    expect(final.usage?.completion_tokens).toBeGreaterThan(0)
    expect([...providers]).toEqual(['alpha-cloud'])

    const chunks = []
    for await (const chunk of await platform().chat.completions.create({
      model: 'sim-pro',
      messages: [{role: 'user', content: 'no usage'}],
      stream: true,
    })) {
      chunks.push(chunk)
    }
    expect(chunks.every((c) => c.usage === undefined && c.choices.length === 1)).toBe(true)
  })

  it('streams tool calls in the shape finalChatCompletion needs', async () => {
    const final = await vendor()
      .chat.completions.stream({
        model: 'sim-mini',
        messages: [{role: 'user', content: 'weather in Paris'}],
        tools: [
          {
            type: 'function',
            function: {
              name: 'get_weather',
              parameters: {type: 'object', properties: {city: {type: 'string'}}},
            },
          },
        ],
      })
      .finalChatCompletion()
    expect(final.choices[0].finish_reason).toBe('tool_calls')
    const call = final.choices[0].message.tool_calls?.[0]
    expect(call?.type === 'function' && call.function.name).toBe('get_weather')
    expect(call?.type === 'function' && JSON.parse(call.function.arguments)).toHaveProperty('city')
    expect(final).not.toHaveProperty('provider')
  })

  it('accepts any model name on the vendor-style mount, but not on the platform', async () => {
    const completion = await vendor().chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{role: 'user', content: 'hi'}],
    })
    expect(completion.model).toBe('gpt-4o-mini')
    await expect(
      platform().chat.completions.create({model: 'gpt-4o-mini', messages: [{role: 'user', content: 'hi'}]}),
    ).rejects.toMatchObject({status: 404, code: 'model_not_found'})
  })

  it('reports reasoning tokens of the reasoning model and cached tokens of a repeated prefix', async () => {
    const client = platform()
    const messages = [
      {role: 'system' as const, content: 'You are terse.'},
      {role: 'user' as const, content: 'one'},
    ]
    const first = await client.chat.completions.create({model: 'sim-reasoner', messages})
    expect(first.usage?.completion_tokens_details?.reasoning_tokens).toBeGreaterThan(0)
    expect(
      (first.choices[0].message as unknown as {reasoning_content: string}).reasoning_content,
    ).toBeTruthy()
    expect(first.usage?.prompt_tokens_details?.cached_tokens).toBe(0)
    const second = await client.chat.completions.create({
      model: 'sim-reasoner',
      messages: [...messages, first.choices[0].message as never, {role: 'user', content: 'two'}],
    })
    expect(second.usage?.prompt_tokens_details?.cached_tokens).toBeGreaterThan(0)
  })

  it('raises APIError for bad requests, bad keys and a mid-stream error payload', async () => {
    await expect(
      platform().chat.completions.create({
        model: 'sim-mini',
        messages: [{role: 'user', content: 'x'}],
        temperature: 3,
      }),
    ).rejects.toMatchObject({status: 400, error: {param: 'temperature'}})
    const locked = await startSim({apiKey: 'right-key'})
    try {
      const wrongKey = new OpenAI({baseURL: locked.origin + '/v1', apiKey: 'wrong-key', maxRetries: 0})
      await expect(
        wrongKey.chat.completions.create({model: 'sim-mini', messages: [{role: 'user', content: 'x'}]}),
      ).rejects.toMatchObject({status: 401, code: 'invalid_api_key'})
    } finally {
      await locked.close()
    }
    const stream = platform().chat.completions.stream({
      model: 'sim-mini',
      messages: [{role: 'user', content: 'please [error-mid-stream] now'}],
    })
    await expect(stream.finalChatCompletion()).rejects.toThrow(/failed mid-stream/)
  })

  it('lists models in the OpenAI list shape', async () => {
    const page = await vendor().models.list()
    expect(page.data.map((m) => m.id)).toEqual(['sim-mini', 'sim-pro', 'sim-reasoner'])
    expect(page.data[0]).toMatchObject({object: 'model', owned_by: 'sim'})
  })
})

describe('simulated provider routing', () => {
  const ask = async (provider: Record<string, unknown>, model = 'sim-mini', content = 'route me') => {
    const res = await fetch(sim.baseUrl + '/chat/completions', {
      method: 'POST',
      headers: {authorization: 'Bearer k', 'content-type': 'application/json'},
      body: JSON.stringify({model, messages: [{role: 'user', content}], provider}),
    })
    const body = (await res.json()) as any
    return res.ok ? body.provider : `${res.status} ${body.error.code}`
  }

  it.each([
    [{}, 'alpha-cloud'],
    [{only: ['beta-ai', 'gamma-fast']}, 'beta-ai'],
    [{ignore: ['alpha-cloud']}, 'beta-ai'],
    [{order: ['gamma-fast', 'alpha-cloud']}, 'gamma-fast'],
    [{sort: ['input_price']}, 'delta-cheap'],
    [{sort: ['throughput']}, 'gamma-fast'],
    [{sort: ['latency']}, 'gamma-fast'],
    [{input_price_range: [0.15, 0.3]}, 'beta-ai'],
    [{output_price_range: [2, 5]}, 'gamma-fast'],
    [{throughput_range: [30, 50]}, 'beta-ai'],
    [{latency_range: [1, 2]}, 'delta-cheap'],
    [{input_length_range: [1000, 40000]}, 'beta-ai'],
    [{only: ['beta-ai'], latency_range: [0, 0.2]}, '404 no_provider_available'],
    [{only: ['beta-ai'], latency_range: [0, 0.2], allow_fallbacks: true}, 'alpha-cloud'],
    [{latency_range: [0, 0.01]}, 'alpha-cloud'],
    [{latency_range: [0, 0.01], allow_fallbacks: false}, '404 no_provider_available'],
    [{sort: ['bogus']}, '400 null'],
  ])('provider %j is served by %s', async (provider, expected) => {
    expect(await ask(provider)).toBe(expected)
  })

  it('filters providers by prompt length unless asked not to', async () => {
    const long = 'word '.repeat(2000)
    expect(await ask({only: ['delta-cheap', 'beta-ai'], sort: ['input_price']}, 'sim-mini', long)).toBe(
      'beta-ai',
    )
    expect(await ask({only: ['delta-cheap'], allow_filter_prompt_length: false}, 'sim-mini', long)).toBe(
      '400 context_length_exceeded',
    )
  })

  it('lets the top-level provider override extra_body.provider', async () => {
    const res = await fetch(sim.baseUrl + '/chat/completions', {
      method: 'POST',
      headers: {authorization: 'Bearer k', 'content-type': 'application/json'},
      body: JSON.stringify({
        model: 'sim-mini',
        messages: [{role: 'user', content: 'x'}],
        provider: {only: ['gamma-fast']},
        extra_body: {provider: {only: ['beta-ai']}},
      }),
    })
    expect(((await res.json()) as any).provider).toBe('gamma-fast')
  })
})
