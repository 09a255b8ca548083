import OpenAI from 'openai'
import {afterEach, describe, expect, it, vi} from 'vitest'

import {BoundedCarry} from './carry.js'
import {chatCodec} from './chat.js'
import {serveOnce} from './cm-test-helpers.js'
import type {Request, Response} from './ir.js'
import {TranslationError, emptyUsage} from './ir.js'

const base: Request = {model: 'm', system: [], messages: [], tools: [], stream: false}

describe('chat decodeRequest', () => {
  it('reads roles, parts, tool calls, reasoning and tool messages', () => {
    const r = chatCodec.decodeRequest(
      {
        model: 'gpt-x',
        messages: [
          {role: 'system', content: 'S1'},
          {role: 'developer', content: [{type: 'text', text: 'S2'}]},
          {
            role: 'user',
            content: [
              {type: 'text', text: 'look'},
              {type: 'image_url', image_url: {url: 'data:image/png;base64,AAAA'}},
              {type: 'image_url', image_url: {url: 'https://x.test/a.png'}},
            ],
          },
          {
            role: 'assistant',
            content: 'ok',
            reasoning_content: 'think',
            tool_calls: [
              {id: 'c1', type: 'function', function: {name: 'f', arguments: '{"a":1}'}},
              {id: 'c2', type: 'function', function: {name: 'g', arguments: ''}},
            ],
          },
          {role: 'tool', tool_call_id: 'c1', content: 'r1'},
          {role: 'tool', tool_call_id: 'c2', content: [{type: 'text', text: 'r2'}]},
          {role: 'user', content: 'next'},
          {role: 'assistant', content: null, reasoning: 'openrouter style'},
        ],
      },
      {},
    )
    expect(r.system).toEqual([
      {type: 'text', text: 'S1'},
      {type: 'text', text: 'S2'},
    ])
    expect(r.messages).toEqual([
      {
        role: 'user',
        parts: [
          {type: 'text', text: 'look'},
          {type: 'image', mediaType: 'image/png', data: 'AAAA'},
          {type: 'image', url: 'https://x.test/a.png'},
        ],
      },
      {
        role: 'assistant',
        parts: [
          {type: 'reasoning', text: 'think', signature: {family: 'chat', value: ''}},
          {type: 'text', text: 'ok'},
          {type: 'tool_call', id: 'c1', name: 'f', arguments: '{"a":1}'},
          {type: 'tool_call', id: 'c2', name: 'g', arguments: '{}'},
        ],
      },
      {
        role: 'user',
        parts: [
          {type: 'tool_result', callId: 'c1', name: 'f', content: [{type: 'text', text: 'r1'}]},
          {type: 'tool_result', callId: 'c2', name: 'g', content: [{type: 'text', text: 'r2'}]},
          {type: 'text', text: 'next'},
        ],
      },
      {
        role: 'assistant',
        // the field it came in, so that it goes back in the same one
        parts: [
          {type: 'reasoning', text: 'openrouter style', signature: {family: 'chat', value: 'reasoning'}},
        ],
      },
    ])
  })

  it.each([
    [{tool_choice: 'auto'}, {toolChoice: {type: 'auto'}}],
    [{tool_choice: 'none'}, {toolChoice: {type: 'none'}}],
    [{tool_choice: 'required'}, {toolChoice: {type: 'required'}}],
    [{tool_choice: {type: 'function', function: {name: 'f'}}}, {toolChoice: {type: 'tool', name: 'f'}}],
    [{parallel_tool_calls: false}, {parallelToolCalls: false}],
    [{max_tokens: 10, max_completion_tokens: 20}, {maxTokens: 20}],
    [{max_tokens: 10}, {maxTokens: 10}],
    [
      {temperature: 0.2, top_p: 0.9},
      {temperature: 0.2, topP: 0.9},
    ],
    [{stop: 'END'}, {stop: ['END']}],
    [{stop: ['A', 'B']}, {stop: ['A', 'B']}],
    [{response_format: {type: 'json_object'}}, {responseFormat: {type: 'json_object'}}],
    [
      {
        response_format: {
          type: 'json_schema',
          json_schema: {name: 'x', schema: {type: 'object'}, strict: true},
        },
      },
      {responseFormat: {type: 'json_schema', name: 'x', schema: {type: 'object'}, strict: true}},
    ],
    [{reasoning_effort: 'low'}, {reasoning: {effort: 'low'}}],
    [{reasoning_effort: 'none'}, {reasoning: {disabled: true}}],
    // the efforts above high (GPT-5.x's xhigh, GPT-6's max and ultra): high, not none, and what
    // they were for a Claude model that takes them
    [{reasoning_effort: 'xhigh'}, {reasoning: {effort: 'high', beyond: 'xhigh'}}],
    [{reasoning_effort: 'max'}, {reasoning: {effort: 'high', beyond: 'max'}}],
    [{reasoning_effort: 'ultra'}, {reasoning: {effort: 'high', beyond: 'max'}}],
    [
      {stream: true, user: 'u1'},
      {stream: true, user: 'u1'},
    ],
  ])('maps %j', (fields, expected) => {
    const r = chatCodec.decodeRequest({model: 'm', messages: [], ...fields}, {})
    expect(r).toMatchObject(expected)
  })

  // the other thinking fields chat clients write (OpenRouter's, DeepSeek's, Kimi's, GLM's,
  // DashScope's, vLLM's), read into the same setting so a translation keeps it
  it.each([
    // OpenRouter's unified `reasoning`
    [{reasoning: {effort: 'high'}}, {effort: 'high'}],
    [{reasoning: {effort: 'xhigh'}}, {effort: 'high', beyond: 'xhigh'}],
    [{reasoning: {effort: 'none'}}, {disabled: true}],
    [{reasoning: {max_tokens: 2000}}, {budgetTokens: 2000}],
    [{reasoning: {enabled: true}}, {effort: 'medium'}],
    [{reasoning: {enabled: false}}, {disabled: true}],
    // ccr's contradictory pair: the client said off
    [{reasoning: {effort: 'high', enabled: false}}, {disabled: true}],
    [{reasoning: {effort: 'low', exclude: true}}, {effort: 'low', include: false}],
    [{reasoning: {exclude: true}}, {include: false}],
    // DeepSeek's, Kimi's, GLM's switch
    [{thinking: {type: 'enabled'}}, {effort: 'medium'}],
    [{thinking: {type: 'enabled', budget_tokens: 4096}}, {budgetTokens: 4096}],
    [{thinking: {type: 'disabled'}}, {disabled: true}],
    // an effort beside it: the effort, and thinking off wins over it
    [{reasoning_effort: 'high', thinking: {type: 'enabled'}}, {effort: 'high'}],
    [{reasoning_effort: 'high', thinking: {type: 'disabled'}}, {disabled: true}],
    // DashScope's, and vLLM's template switch
    [{enable_thinking: true}, {effort: 'medium'}],
    [{enable_thinking: true, thinking_budget: 8192}, {budgetTokens: 8192}],
    [{enable_thinking: false}, {disabled: true}],
    [{chat_template_kwargs: {enable_thinking: false}}, {disabled: true}],
    [{chat_template_kwargs: {enable_thinking: true}}, {effort: 'medium'}],
    // nothing said: none; a budget of 0 or a field of another shape says nothing
    [{thinking: {type: 'enabled', budget_tokens: 0}}, {effort: 'medium'}],
    [{reasoning: 'high', thinking: true, chat_template_kwargs: {}}, undefined],
  ])('reads the thinking of %j', (fields, expected) => {
    const r = chatCodec.decodeRequest({model: 'm', messages: [], ...fields}, {})
    expect(r.reasoning).toEqual(expected)
  })

  it('keeps function tools and sets other tool types apart', () => {
    const r = chatCodec.decodeRequest(
      {
        model: 'm',
        messages: [],
        tools: [
          {type: 'function', function: {name: 'f', description: 'd', parameters: {type: 'object'}}},
          {type: 'web_search'},
        ],
      },
      {},
    )
    expect(r.tools).toEqual([{name: 'f', description: 'd', parameters: {type: 'object'}}])
    expect(r.builtinTools).toEqual([{family: 'chat', raw: {type: 'web_search'}}])
  })

  it('refuses what it cannot carry', () => {
    const audio = {model: 'm', messages: [{role: 'user', content: [{type: 'input_audio'}]}]}
    expect(() => chatCodec.decodeRequest(audio, {})).toThrow(/type "input_audio" without its data/)
    const unknown = {model: 'm', messages: [{role: 'user', content: [{type: 'audio_url'}]}]}
    expect(() => chatCodec.decodeRequest(unknown, {})).toThrow(TranslationError)
    expect(() => chatCodec.decodeRequest({model: 'm', messages: [], n: 2}, {})).toThrow(/n > 1/)
  })

  it('puts carried reasoning before a tool call that has none, replacing a bare reasoning_content echo', () => {
    const carry = new BoundedCarry()
    const signed = {
      type: 'reasoning' as const,
      text: 'T',
      signature: {family: 'messages' as const, value: 'SIG'},
    }
    carry.set('c1', [signed])
    const call = {id: 'c1', type: 'function', function: {name: 'f', arguments: '{}'}}
    for (const assistant of [
      {role: 'assistant', content: null, tool_calls: [call]},
      {role: 'assistant', content: null, reasoning_content: 'T', tool_calls: [call]},
    ]) {
      const r = chatCodec.decodeRequest({model: 'm', messages: [assistant]}, {carry})
      expect(r.messages[0].parts).toEqual([signed, {type: 'tool_call', id: 'c1', name: 'f', arguments: '{}'}])
    }
  })
})

describe('chat decodeRequest: calls sent back with empty ids', () => {
  // (found by fuzz.test.ts: the results went as text and each call as unanswered; to a Messages
  // upstream two such calls went as one id, `toolu_0`)
  it('gives each call an id of its own and pairs the results without one in order', () => {
    const call = (name: string, args: string) => ({
      id: '',
      type: 'function',
      function: {name, arguments: args},
    })
    const r = chatCodec.decodeRequest(
      {
        model: 'm',
        messages: [
          {role: 'user', content: 'read both'},
          {
            role: 'assistant',
            content: null,
            tool_calls: [call('read', '{"p":"a"}'), call('read', '{"p":"b"}')],
          },
          {role: 'tool', tool_call_id: '', content: 'A'},
          {role: 'tool', tool_call_id: '', content: 'B'},
          {role: 'tool', tool_call_id: '', content: 'C'},
        ],
      },
      {newId: (p) => `${p}${Math.random().toString(36).slice(2, 8)}`},
    )
    const ids = r.messages[1].parts.map((p) => p.type === 'tool_call' && p.id)
    expect(new Set(ids).size).toBe(2)
    expect(ids).not.toContain('')
    // (a third result has no call left: it keeps its empty id, and the pairing makes it text)
    expect(r.messages[2].parts.map((p) => p.type === 'tool_result' && p.callId)).toEqual([...ids, ''])
  })
})

describe('chat encodeRequest', () => {
  it('writes one system message, reasoning_content only for chat reasoning, tool messages and their images', () => {
    const body = chatCodec.encodeRequest(
      {
        ...base,
        system: [
          {type: 'text', text: 'A', cache: 'ephemeral'},
          {type: 'text', text: 'B'},
        ],
        messages: [
          {role: 'user', parts: [{type: 'text', text: 'hi', cache: 'ephemeral'}]},
          {
            role: 'assistant',
            parts: [
              {type: 'reasoning', text: 'signed', signature: {family: 'messages', value: 'S'}},
              {type: 'reasoning', text: 'ds', signature: {family: 'chat', value: ''}},
              {type: 'tool_call', id: 'c1', name: 'shot', arguments: '{}'},
            ],
          },
          {
            role: 'user',
            parts: [
              {
                type: 'tool_result',
                callId: 'c1',
                content: [
                  {type: 'text', text: 'took it'},
                  {type: 'image', mediaType: 'image/jpeg', data: 'QQ=='},
                ],
                isError: false,
              },
              {type: 'text', text: 'and?'},
            ],
          },
          {
            role: 'assistant',
            parts: [{type: 'reasoning', text: '', redacted: {family: 'messages', value: 'R'}}],
          },
        ],
        builtinTools: [{family: 'messages', raw: {type: 'web_search_20250305'}}],
        maxTokens: 100,
        reasoning: {budgetTokens: 2000},
        user: 'x'.repeat(100),
      },
      'deepseek-chat',
    )
    expect(body).toEqual({
      model: 'deepseek-chat',
      messages: [
        {role: 'system', content: 'A\n\nB'},
        {role: 'user', content: 'hi'},
        {
          role: 'assistant',
          content: null,
          reasoning_content: 'ds',
          tool_calls: [{id: 'c1', type: 'function', function: {name: 'shot', arguments: '{}'}}],
        },
        {role: 'tool', tool_call_id: 'c1', content: 'took it'},
        {
          role: 'user',
          content: [
            {type: 'image_url', image_url: {url: 'data:image/jpeg;base64,QQ=='}},
            {type: 'text', text: 'and?'},
          ],
        },
      ],
      max_tokens: 100,
      reasoning_effort: 'low',
    })
  })

  it('maps tool choice and leaves it out without tools', () => {
    const tools = [{name: 'f', parameters: {type: 'object'}}]
    const body = chatCodec.encodeRequest(
      {...base, tools, toolChoice: {type: 'tool', name: 'f'}, parallelToolCalls: false, stream: true},
      'm',
    )
    expect(body).toMatchObject({
      tool_choice: {type: 'function', function: {name: 'f'}},
      parallel_tool_calls: false,
      stream: true,
      stream_options: {include_usage: true},
    })
    const none = chatCodec.encodeRequest(
      {...base, toolChoice: {type: 'required'}, parallelToolCalls: true},
      'm',
    )
    expect(none).toEqual({model: 'm', messages: [], max_tokens: 32000})
  })

  it('sends max_tokens 32 000 when the client set none (Codex, Gemini CLI), none to a local server', () => {
    expect(chatCodec.encodeRequest(base, 'glm-5.2').max_tokens).toBe(32000)
    expect(chatCodec.encodeRequest({...base, maxTokens: 900}, 'glm-5.2').max_tokens).toBe(900)
    expect(chatCodec.encodeRequest(base, 'qwen3', {localServer: true})).not.toHaveProperty('max_tokens')
    expect(chatCodec.encodeRequest({...base, maxTokens: 900}, 'qwen3', {localServer: true}).max_tokens).toBe(
      900,
    )
  })

  it("caps the default at a model's documented output cap (gpt-4o 16 384), never a client's own limit", () => {
    expect(chatCodec.encodeRequest(base, 'gpt-4o').max_tokens).toBe(16384)
    expect(chatCodec.encodeRequest(base, 'gpt-4o-mini-2024-07-18').max_tokens).toBe(16384)
    expect(chatCodec.encodeRequest(base, 'openai/gpt-4o').max_tokens).toBe(16384)
    expect(chatCodec.encodeRequest(base, 'gpt-4-turbo').max_tokens).toBe(4096)
    expect(chatCodec.encodeRequest(base, 'gpt-3.5-turbo-0125').max_tokens).toBe(4096)
    expect(chatCodec.encodeRequest(base, 'gpt-4').max_tokens).toBe(8192)
    expect(chatCodec.encodeRequest(base, 'gpt-4-0613').max_tokens).toBe(8192)
    expect(chatCodec.encodeRequest(base, 'gpt-4o-2024-05-13').max_tokens).toBe(4096)
    expect(chatCodec.encodeRequest(base, 'gpt-4-0125-preview').max_tokens).toBe(4096)
    expect(chatCodec.encodeRequest(base, 'gpt-4-turbo-2024-04-09').max_tokens).toBe(4096)
    // not a prefix match: gpt-4.1 and gpt-4o-realtime-like names keep the default
    expect(chatCodec.encodeRequest(base, 'gpt-4.1').max_tokens).toBe(32000)
    expect(chatCodec.encodeRequest(base, 'gpt-4o-audio-preview-x').max_tokens).toBe(32000)
    expect(chatCodec.encodeRequest(base, 'deepseek-chat').max_tokens).toBe(32000)
    // the client's own, larger: the client's (a refusal of it is learned)
    expect(chatCodec.encodeRequest({...base, maxTokens: 20000}, 'gpt-4o').max_tokens).toBe(20000)
  })

  it("writes the client's limit as max_completion_tokens to OpenAI's own API (ctx.openAiApi), and no default", () => {
    // its own default is the model's cap (reasoning counted in it): 32 000 would cut a long turn
    const sent = chatCodec.encodeRequest(base, 'o4-mini', {openAiApi: true})
    expect(sent).not.toHaveProperty('max_completion_tokens')
    expect(sent).not.toHaveProperty('max_tokens')
    expect(chatCodec.encodeRequest({...base, maxTokens: 900}, 'gpt-5.4', {openAiApi: true})).toEqual({
      model: 'gpt-5.4',
      messages: [],
      max_completion_tokens: 900,
    })
  })

  it("writes the request's cache key as prompt_cache_key only for OpenAI's own API (ctx.cacheKeys)", () => {
    const keyed: Request = {...base, cacheKey: 'conv-1'}
    expect(chatCodec.encodeRequest(keyed, 'gpt-5.4', {cacheKeys: true})).toEqual({
      model: 'gpt-5.4',
      messages: [],
      max_tokens: 32000,
      prompt_cache_key: 'conv-1',
    })
    // another chat server (most refuse the field), and a request without a key
    expect(chatCodec.encodeRequest(keyed, 'm', {})).toEqual({model: 'm', messages: [], max_tokens: 32000})
    expect(chatCodec.encodeRequest(keyed, 'm')).toEqual({model: 'm', messages: [], max_tokens: 32000})
    expect(chatCodec.encodeRequest(base, 'gpt-5.4', {cacheKeys: true})).toEqual({
      model: 'gpt-5.4',
      messages: [],
      max_tokens: 32000,
    })
  })

  it('round-trips what chat carries', () => {
    const body = {
      model: 'm',
      messages: [
        {role: 'system', content: 'S'},
        {role: 'user', content: 'Q'},
        {
          role: 'assistant',
          content: 'A',
          reasoning_content: 'R',
          tool_calls: [{id: 'c', type: 'function', function: {name: 'f', arguments: '{"x":1}'}}],
        },
        {role: 'tool', tool_call_id: 'c', content: 'out'},
      ],
      tools: [{type: 'function', function: {name: 'f', parameters: {type: 'object'}}}],
      tool_choice: 'required',
      max_tokens: 5,
      temperature: 0.5,
      stop: ['X'],
      response_format: {type: 'json_object'},
      reasoning_effort: 'high',
      stream: true,
      stream_options: {include_usage: true},
    }
    expect(chatCodec.encodeRequest(chatCodec.decodeRequest(body, {}), 'm')).toEqual(body)
  })
})

describe('chat answers', () => {
  it('leaves out a tool call with no name, and counts it', () => {
    const r = chatCodec.decodeResponse({
      choices: [
        {
          message: {
            role: 'assistant',
            content: 'Let me look.',
            tool_calls: [
              {id: 'a', type: 'function', function: {arguments: '{"p":"x"}'}},
              {id: 'b', type: 'function', function: {name: '', arguments: '{}'}},
            ],
          },
          finish_reason: 'tool_calls',
        },
      ],
    })
    expect(r.parts).toEqual([{type: 'text', text: 'Let me look.'}])
    expect(r.stop).toBe('end')
    expect(r.namelessCalls).toBe(2)
    // nothing but a nameless call: a 502 the client retries, not an empty turn
    expect(() =>
      chatCodec.decodeResponse({
        choices: [
          {
            message: {role: 'assistant', content: null, tool_calls: [{id: 'a', function: {arguments: '{}'}}]},
            finish_reason: 'tool_calls',
          },
        ],
      }),
    ).toThrow(/only tool calls with no name/)
  })

  it('decodes content, reasoning, tool calls, finish reasons and usage', () => {
    const r = chatCodec.decodeResponse({
      id: 'chatcmpl-1',
      model: 'deepseek-reasoner',
      choices: [
        {
          message: {
            role: 'assistant',
            content: 'Hi',
            reasoning_content: 'R',
            tool_calls: [{id: 'c', type: 'function', function: {name: 'f', arguments: ''}}],
          },
        },
      ],
      usage: {
        prompt_tokens: 100,
        completion_tokens: 20,
        prompt_cache_hit_tokens: 60,
        completion_tokens_details: {reasoning_tokens: 7},
      },
    })
    expect(r).toEqual({
      id: 'chatcmpl-1',
      model: 'deepseek-reasoner',
      parts: [
        {type: 'reasoning', text: 'R', signature: {family: 'chat', value: ''}},
        {type: 'text', text: 'Hi'},
        {type: 'tool_call', id: 'c', name: 'f', arguments: '{}'},
      ],
      stop: 'tool_use',
      usage: {
        inputTokens: 100,
        outputTokens: 20,
        cacheReadTokens: 60,
        cacheCreationTokens: 0,
        reasoningTokens: 7,
      },
    })
    const usage = {prompt_tokens: 10, completion_tokens: 2, prompt_tokens_details: {cached_tokens: 4}}
    const plain = chatCodec.decodeResponse({
      choices: [{message: {content: 'x'}, finish_reason: 'length'}],
      usage,
    })
    expect(plain.stop).toBe('max_tokens')
    expect(plain.usage.cacheReadTokens).toBe(4)
    // Moonshot's (Kimi's) cache hits beside the counts; usage in the choice when the answer has none
    const kimi = chatCodec.decodeResponse({
      choices: [{message: {content: 'x'}, finish_reason: 'stop'}],
      usage: {prompt_tokens: 1000, completion_tokens: 5, total_tokens: 1005, cached_tokens: 800},
    })
    expect(kimi.usage).toMatchObject({inputTokens: 1000, outputTokens: 5, cacheReadTokens: 800})
    const inChoice = chatCodec.decodeResponse({
      choices: [
        {message: {content: 'x'}, finish_reason: 'stop', usage: {prompt_tokens: 9, completion_tokens: 2}},
      ],
    })
    expect(inChoice.usage).toMatchObject({inputTokens: 9, outputTokens: 2})
    // arguments as a JSON object (llama.cpp's server, TGI): their JSON text
    const objectArgs = chatCodec.decodeResponse({
      choices: [
        {
          message: {
            content: null,
            tool_calls: [{id: 'c1', type: 'function', function: {name: 'Read', arguments: {p: 'a'}}}],
          },
          finish_reason: 'tool_calls',
        },
      ],
    })
    expect(objectArgs.parts).toEqual([{type: 'tool_call', id: 'c1', name: 'Read', arguments: '{"p":"a"}'}])
    expect(chatCodec.decodeResponse({choices: [{message: {content: 'x'}}]}).stop).toBe('end')
    expect(() => chatCodec.decodeResponse({choices: []})).toThrow(TranslationError)
    // an answer cut off (DeepSeek's, vLLM's, OpenRouter's words for it) is no answer
    for (const reason of ['insufficient_system_resource', 'abort', 'error'])
      expect(() =>
        chatCodec.decodeResponse({choices: [{message: {content: 'x'}, finish_reason: reason}]}),
      ).toThrow(`upstream stopped the answer: finish_reason ${reason}`)
    expect(chatCodec.decodeResponse({choices: [{message: {content: 'x'}, finish_reason: 'eos'}]}).stop).toBe(
      'end',
    )
  })

  it('encodes an answer the openai SDK reads', async () => {
    const carry = new BoundedCarry()
    const response: Response = {
      id: 'msg_1',
      model: 'claude-x',
      parts: [
        {type: 'reasoning', text: 'hmm', signature: {family: 'messages', value: 'SIG'}},
        {type: 'text', text: 'Calling.'},
        {type: 'tool_call', id: 'toolu_1', name: 'f', arguments: '{"a":1}'},
      ],
      stop: 'tool_use',
      usage: {...emptyUsage(), inputTokens: 30, outputTokens: 9, cacheReadTokens: 10, reasoningTokens: 3},
    }
    const server = await serveOnce(JSON.stringify(chatCodec.encodeResponse(response, {carry})), false)
    try {
      const client = new OpenAI({baseURL: server.url + '/v1', apiKey: 'k', maxRetries: 0})
      const c = await client.chat.completions.create({
        model: 'claude-x',
        messages: [{role: 'user', content: 'x'}],
      })
      expect(c.choices[0].message.content).toBe('Calling.')
      expect(c.choices[0].finish_reason).toBe('tool_calls')
      expect(c.choices[0].message.tool_calls?.[0]).toMatchObject({
        id: 'toolu_1',
        function: {name: 'f', arguments: '{"a":1}'},
      })
      expect(c.usage).toMatchObject({
        prompt_tokens: 30,
        completion_tokens: 9,
        total_tokens: 39,
        prompt_tokens_details: {cached_tokens: 10},
        completion_tokens_details: {reasoning_tokens: 3},
      })
      expect(carry.get('toolu_1')).toEqual([response.parts[0]])
    } finally {
      await server.close()
    }
  })
})

describe('chat answers written as text', () => {
  afterEach(() => {
    vi.useRealTimers()
  })
  const odd = 'say "hi"\n\u00e9\u2028 😀 \\'
  const answers: Array<[string, Response]> = [
    ['text', {id: 'c1', model: 'm', parts: [{type: 'text', text: odd}], stop: 'end', usage: emptyUsage()}],
    [
      'reasoning, text in two parts, tool calls, and every count',
      {
        id: '',
        model: '',
        parts: [
          {type: 'reasoning', text: 'T', signature: {family: 'messages', value: 'SIG'}},
          {type: 'text', text: 'a'},
          {type: 'reasoning', text: odd},
          {type: 'text', text: 'b'},
          {type: 'tool_call', id: 'call_1', name: 'f', arguments: '{"x": [1, "é"]}'},
          {type: 'tool_call', id: 'call_2', name: 'g', arguments: ''},
        ],
        stop: 'tool_use',
        usage: {
          inputTokens: 100,
          outputTokens: 7,
          cacheReadTokens: 20,
          cacheCreationTokens: 30,
          reasoningTokens: 3,
        },
      },
    ],
    [
      'tool calls only (content null), a length stop',
      {
        id: 'c3',
        model: 'x',
        parts: [{type: 'tool_call', id: 'call_3', name: 'h', arguments: '{}'}],
        stop: 'max_tokens',
        usage: emptyUsage(),
      },
    ],
    ['nothing (content "")', {id: 'c4', model: 'x', parts: [], stop: 'refusal', usage: emptyUsage()}],
  ]
  it.each(answers)('%s: the bytes JSON.stringify writes for encodeResponse', (_name, response) => {
    vi.useFakeTimers({now: new Date('2026-11-26T10:00:00.600Z')})
    const ctx = {newId: (prefix: string) => `${prefix}made`, request: {...base, model: 'asked'}}
    const text = chatCodec.encodeResponseText!(response, ctx)
    expect(text).toBe(JSON.stringify(chatCodec.encodeResponse(response, ctx)))
  })

  it('keeps reasoning for the next turn as the object encoder does', () => {
    const response = answers[1][1]
    const [a, b] = [new BoundedCarry(), new BoundedCarry()]
    chatCodec.encodeResponse(response, {carry: a})
    chatCodec.encodeResponseText!(response, {carry: b})
    expect(b.get('call_1')).toEqual(a.get('call_1'))
    expect(b.get('call_1')).toBeDefined()
  })
})

describe("a chat upstream's reasoning goes back in the field it came in", () => {
  const call = {id: 'c1', type: 'function', function: {name: 'f', arguments: '{}'}}
  const answer = (field: string) => ({
    id: 'x',
    choices: [{index: 0, message: {role: 'assistant', content: null, [field]: 'think', tool_calls: [call]}}],
  })

  it('an answer with `reasoning` (Cerebras, OpenRouter) or `reasoning_content` (DeepSeek), then the next request', () => {
    for (const field of ['reasoning', 'reasoning_content']) {
      const response = chatCodec.decodeResponse(answer(field), {})
      const reasoning = response.parts[0]
      expect(reasoning).toMatchObject({type: 'reasoning', text: 'think'})
      const request: Request = {
        system: [],
        messages: [
          {role: 'user', parts: [{type: 'text', text: 'go'}]},
          {role: 'assistant', parts: response.parts},
          {role: 'user', parts: [{type: 'tool_result', callId: 'c1', content: [{type: 'text', text: 'ok'}]}]},
        ],
        tools: [],
        stream: false,
      } as unknown as Request
      const body = chatCodec.encodeRequest(request, 'm', {}) as {messages: Array<Record<string, unknown>>}
      const other = field === 'reasoning' ? 'reasoning_content' : 'reasoning'
      expect(body.messages[1][field]).toBe('think')
      expect(body.messages[1]).not.toHaveProperty(other)
    }
  })

  it('a stream: the field of its first reasoning delta', () => {
    for (const field of ['reasoning', 'reasoning_content']) {
      const decoder = chatCodec.streamDecoder({})
      const events = [
        ...decoder.event(
          undefined,
          JSON.stringify({id: 'x', choices: [{index: 0, delta: {role: 'assistant', [field]: 'thi'}}]}),
        ),
        ...decoder.event(undefined, JSON.stringify({id: 'x', choices: [{index: 0, delta: {[field]: 'nk'}}]})),
        ...decoder.end(),
      ]
      const opaque = events.find((e) => e.type === 'reasoning_opaque') as {signature: {value: string}}
      expect(opaque.signature).toEqual({family: 'chat', value: field === 'reasoning' ? 'reasoning' : ''})
    }
  })
})
