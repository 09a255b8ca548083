import {describe, expect, it} from 'vitest'

import {geminiResultMediaProblem} from '../sim/upstream/media-checks.js'
import {geminiCodec, SKIP_SIGNATURE} from './gemini.js'
import {EMPTY_ANSWER, EMPTY_ANSWER_STATUS} from './gemini-parts.js'
import type {Request, StreamEvent} from './ir.js'
import type {UpstreamAdaptation} from './translate.js'
import {decodeClientRequest, encodeUpstreamRequest} from './translate.js'

const base: Request = {model: 'g', system: [], messages: [], tools: [], stream: false}

describe('gemini decodeRequest', () => {
  it('pairs functionResponses by id or by name, makes ids, unwraps signatures, maps config', () => {
    const r = geminiCodec.decodeRequest(
      {
        contents: [
          {role: 'user', parts: [{text: 'hi'}, {inlineData: {mimeType: 'image/png', data: 'AA'}}]},
          {
            role: 'model',
            parts: [
              {text: 'plan', thought: true, thoughtSignature: 'gwx1.messages.SIG'},
              {functionCall: {name: 'a', args: {x: 1}}, thoughtSignature: 'OWN'},
              {functionCall: {name: 'b', args: {}}},
            ],
          },
          {
            role: 'user',
            parts: [
              {functionResponse: {name: 'b', response: {output: 'B'}}},
              {functionResponse: {name: 'a', response: {error: 'bad'}}},
            ],
          },
        ],
        tools: [
          {
            functionDeclarations: [
              {name: 'a', parameters: {type: 'OBJECT', properties: {x: {type: 'INTEGER'}}}},
            ],
          },
          {googleSearch: {}},
        ],
        toolConfig: {functionCallingConfig: {mode: 'ANY', allowedFunctionNames: ['a']}},
        generationConfig: {
          maxOutputTokens: 10,
          stopSequences: ['X'],
          responseMimeType: 'application/json',
          responseSchema: {type: 'OBJECT'},
          thinkingConfig: {thinkingBudget: 0},
        },
      },
      {model: 'gemini-x', stream: true},
    )
    expect(r.messages[1].parts).toEqual([
      {type: 'reasoning', text: 'plan', signature: {family: 'messages', value: 'SIG', wrapped: true}},
      {
        type: 'tool_call',
        id: 'call_1_0',
        name: 'a',
        arguments: '{"x":1}',
        signature: {family: 'gemini', value: 'OWN'},
      },
      {type: 'tool_call', id: 'call_1_1', name: 'b', arguments: '{}'},
    ])
    expect(r.messages[2].parts).toEqual([
      {type: 'tool_result', callId: 'call_1_1', name: 'b', content: [{type: 'text', text: 'B'}]},
      {
        type: 'tool_result',
        callId: 'call_1_0',
        name: 'a',
        content: [{type: 'text', text: 'bad'}],
        isError: true,
      },
    ])
    expect(r.tools[0].parameters).toEqual({type: 'object', properties: {x: {type: 'integer'}}})
    // Google Search is the IR's web search (web-search.test.ts)
    expect(r.builtinTools).toBeUndefined()
    expect(r.webSearch).toEqual({})
    expect(r).toMatchObject({
      model: 'gemini-x',
      stream: true,
      toolChoice: {type: 'tool', name: 'a'},
      maxTokens: 10,
      stop: ['X'],
      responseFormat: {type: 'json_schema', schema: {type: 'object'}},
      reasoning: {disabled: true},
    })
  })
})

describe("gemini decodeRequest: a response's own id, and a call of an older turn", () => {
  it("Gemini CLI's id for a call that came without one matches by name; an older turn's call of that name does not", () => {
    const r = geminiCodec.decodeRequest(
      {
        contents: [
          {role: 'user', parts: [{text: 'read both'}]},
          {
            role: 'model',
            parts: [
              {functionCall: {name: 'read_file', args: {p: 'a'}}},
              {functionCall: {name: 'read_file', args: {p: 'b'}}},
            ],
          },
          {
            role: 'user',
            parts: [
              {functionResponse: {id: 'read_file-1700000000-ab', name: 'read_file', response: {output: 'A'}}},
              {functionResponse: {id: 'read_file-1700000001-cd', name: 'read_file', response: {output: 'B'}}},
            ],
          },
          {role: 'model', parts: [{functionCall: {name: 'glob', args: {}}}]},
          {role: 'user', parts: [{text: 'never mind'}]},
          {role: 'model', parts: [{text: 'ok'}]},
          {role: 'user', parts: [{functionResponse: {name: 'glob', response: {output: 'late'}}}]},
        ],
      },
      {model: 'gemini-2.5-pro', stream: false},
    )
    const calls = r.messages[1].parts.map((p) => (p.type === 'tool_call' ? p.id : undefined))
    const results = r.messages[2].parts.map((p) => (p.type === 'tool_result' ? p.callId : undefined))
    expect(results).toEqual(calls)
    // the glob call's turn ended unanswered: the late response is not its result
    const glob = r.messages[3].parts[0]
    const late = r.messages.at(-1)!.parts[0]
    expect(late.type === 'tool_result' && glob.type === 'tool_call' && late.callId === glob.id).toBe(false)
  })

  // (found by fuzz.test.ts: both calls went upstream as one id, "" to chat, `toolu_0` to Anthropic)
  it('an empty id, as a serializer that writes default fields sends it, is no id: each call gets its own', () => {
    const r = geminiCodec.decodeRequest(
      {
        contents: [
          {role: 'user', parts: [{text: 'read both'}]},
          {
            role: 'model',
            parts: [
              {functionCall: {name: 'read_file', args: {p: 'a'}, id: ''}},
              {functionCall: {name: 'read_file', args: {p: 'b'}, id: ''}},
            ],
          },
          {
            role: 'user',
            parts: [
              {functionResponse: {name: 'read_file', response: {output: 'A'}, id: ''}},
              {functionResponse: {name: 'read_file', response: {output: 'B'}, id: ''}},
            ],
          },
        ],
      },
      {model: 'gemini-2.5-pro', stream: false},
    )
    expect(r.messages[1].parts.map((p) => p.type === 'tool_call' && p.id)).toEqual(['call_1_0', 'call_1_1'])
    expect(r.messages[2].parts.map((p) => p.type === 'tool_result' && p.callId)).toEqual([
      'call_1_0',
      'call_1_1',
    ])
  })
})

describe('gemini encodeRequest', () => {
  it('gives the skip value to every model, Gemini 2.5 and Gemma as Gemini 3 (2.5 thinking refuses the turn without it)', () => {
    const request = {
      ...base,
      messages: [
        {role: 'user' as const, parts: [{type: 'text' as const, text: 'hi'}]},
        {
          role: 'assistant' as const,
          parts: [
            {type: 'tool_call' as const, id: 'c1', name: 'a', arguments: '{}'},
            {type: 'tool_call' as const, id: 'c2', name: 'a', arguments: '{}'},
          ],
        },
      ],
    }
    const firstCall = (model: string) =>
      ((geminiCodec.encodeRequest(request, model).contents as any[])[1].parts as any[]).map(
        (p) => p.thoughtSignature ?? null,
      )
    for (const model of [
      'gemini-3-pro-preview',
      'gemini-3.5-flash',
      'gemini-flash-latest',
      'relay-model',
      'gemini-2.5-flash',
      'models/gemini-2.0-flash',
      'vertex_ai/gemini-2.5-pro',
      'gemini-1.5-pro',
      'gemma-3-27b-it',
    ])
      expect(firstCall(model), model).toEqual([SKIP_SIGNATURE, null])
  })

  it('signs the first call with the skip value when no Gemini signature exists, drops foreign reasoning', () => {
    const body = geminiCodec.encodeRequest(
      {
        ...base,
        messages: [
          {role: 'user', parts: [{type: 'text', text: 'hi'}]},
          {
            role: 'assistant',
            parts: [
              {type: 'reasoning', text: 'x', signature: {family: 'messages', value: 'SIG'}},
              {type: 'tool_call', id: 'c1', name: 'a', arguments: ''},
              {type: 'tool_call', id: 'c2', name: 'b', arguments: 'not json'},
            ],
          },
          {role: 'user', parts: [{type: 'tool_result', callId: 'c1', content: [{type: 'text', text: 'A'}]}]},
          {role: 'user', parts: [{type: 'text', text: 'more'}]},
        ],
        reasoning: {effort: 'high', include: false},
        toolChoice: {type: 'required'},
      },
      'g',
    )
    expect(body.contents).toEqual([
      {role: 'user', parts: [{text: 'hi'}]},
      {
        role: 'model',
        parts: [
          {functionCall: {name: 'a', args: {}, id: 'c1'}, thoughtSignature: SKIP_SIGNATURE},
          {functionCall: {name: 'b', args: {}, id: 'c2'}},
        ],
      },
      {
        role: 'user',
        parts: [{functionResponse: {name: 'a', id: 'c1', response: {output: 'A'}}}, {text: 'more'}],
      },
    ])
    expect(body.generationConfig).toEqual({thinkingConfig: {thinkingBudget: 24576, includeThoughts: false}})
    // the thoughts count in maxOutputTokens: a budget the client's limit cuts leaves the answer
    // 4 096 (half of a smaller limit), 512 at least (Gemini refuses less), never more than asked; Gemini's dynamic -1 and a budget that fits go as they are
    const within = (reasoning: object, maxTokens: number) =>
      (geminiCodec.encodeRequest({...base, reasoning, maxTokens} as typeof base, 'g').generationConfig as any)
        .thinkingConfig.thinkingBudget
    expect(within({effort: 'high'}, 8192)).toBe(4096)
    expect(within({effort: 'high'}, 2000)).toBe(1000)
    expect(within({budgetTokens: 5000}, 200)).toBe(512)
    expect(within({effort: 'minimal'}, 800)).toBe(512)
    expect(within({budgetTokens: 100}, 150)).toBe(100)
    expect(within({budgetTokens: -1}, 2000)).toBe(-1)
    expect(within({effort: 'medium'}, 32000)).toBe(8192)
    // Gemini refuses a function calling config of any mode without declarations: none is sent
    expect(body.toolConfig).toBeUndefined()
    expect(geminiCodec.encodeRequest({...base, toolChoice: {type: 'auto'}}, 'g').toolConfig).toBeUndefined()
    expect(
      geminiCodec.encodeRequest(
        {...base, tools: [{name: 'a', parameters: {}}], toolChoice: {type: 'required'}},
        'g',
      ).toolConfig,
    ).toEqual({
      functionCallingConfig: {mode: 'ANY'},
    })
    expect(geminiCodec.path('g', false)).toBe('/v1beta/models/g:generateContent')
  })

  it('round trips Gemini thought signatures on thoughts, text and calls', () => {
    const contents = [
      {role: 'user', parts: [{text: 'hi'}]},
      {
        role: 'model',
        parts: [
          {text: 'think', thought: true, thoughtSignature: 'T'},
          {text: 'Hello', thoughtSignature: 'X'},
          {functionCall: {name: 'a', args: {q: 1}, id: 'i1'}, thoughtSignature: 'F'},
        ],
      },
    ]
    const body = geminiCodec.encodeRequest(geminiCodec.decodeRequest({contents}, {model: 'g'}), 'g')
    expect(body.contents).toEqual(contents)
  })
})

describe('gemini answers', () => {
  it('decodes a response: thoughts, call, finish, usage', () => {
    const r = geminiCodec.decodeResponse(
      {
        candidates: [
          {
            content: {
              parts: [
                {text: 't', thought: true},
                {functionCall: {name: 'f', args: {}}, thoughtSignature: 'S'},
              ],
            },
            finishReason: 'STOP',
          },
        ],
        usageMetadata: {
          promptTokenCount: 10,
          cachedContentTokenCount: 4,
          candidatesTokenCount: 3,
          thoughtsTokenCount: 2,
          toolUsePromptTokenCount: 1,
        },
        responseId: 'r',
      },
      {newId: (p) => `${p}_1`},
    )
    expect(r.stop).toBe('tool_use')
    expect(r.parts[1]).toEqual({
      type: 'tool_call',
      id: 'call_1',
      name: 'f',
      arguments: '{}',
      signature: {family: 'gemini', value: 'S'},
    })
    expect(r.usage).toEqual({
      inputTokens: 11,
      outputTokens: 5,
      cacheReadTokens: 4,
      cacheCreationTokens: 0,
      reasoningTokens: 2,
    })
    expect(geminiCodec.decodeResponse({candidates: [], promptFeedback: {blockReason: 'SAFETY'}}).stop).toBe(
      'content_filter',
    )
    expect(() =>
      geminiCodec.decodeResponse({candidates: [{finishReason: 'MALFORMED_FUNCTION_CALL'}]}),
    ).toThrow()
    // a finish that is neither STOP, MAX_TOKENS nor a filter's is an answer cut off
    for (const reason of ['OTHER', 'UNEXPECTED_TOOL_CALL', 'LANGUAGE'])
      expect(() =>
        geminiCodec.decodeResponse({
          candidates: [{content: {parts: [{text: 'x'}]}, finishReason: reason}],
        }),
      ).toThrow(`upstream stopped the answer: finishReason ${reason}`)
    expect(geminiCodec.decodeResponse({candidates: [{finishReason: 'IMAGE_PROHIBITED_CONTENT'}]}).stop).toBe(
      'content_filter',
    )
    // a prompt blocked is the filter's stop, whatever its candidate says
    expect(
      geminiCodec.decodeResponse({
        candidates: [{finishReason: 'OTHER'}],
        promptFeedback: {blockReason: 'OTHER'},
      }).stop,
    ).toBe('content_filter')
  })
})

describe('gemini stream decoder', () => {
  const run = (chunks: unknown[]): StreamEvent[] => {
    const dec = geminiCodec.streamDecoder({newId: (p) => `${p}_n`})
    return [...chunks.flatMap((c) => dec.event(undefined, JSON.stringify(c))), ...dec.end()]
  }

  it('opens and closes blocks, emits a whole call, holds usage until the finish chunk', () => {
    const events = run([
      {
        candidates: [{content: {parts: [{text: 'a', thought: true}]}}],
        usageMetadata: {promptTokenCount: 5},
        responseId: 'r',
        modelVersion: 'v',
      },
      {candidates: [{content: {parts: [{text: 'Hi', thoughtSignature: 'S'}]}}]},
      {
        candidates: [
          {content: {parts: [{functionCall: {name: 'f', args: {}, id: 'c'}}]}, finishReason: 'STOP'},
        ],
        usageMetadata: {promptTokenCount: 5, candidatesTokenCount: 2},
      },
    ])
    expect(events).toEqual([
      {type: 'start', id: 'r', model: 'v'},
      {type: 'block_start', index: 0, block: {type: 'reasoning'}},
      {type: 'reasoning_delta', index: 0, text: 'a'},
      {type: 'reasoning_opaque', index: 0, signature: {family: 'gemini', value: 'S'}},
      {type: 'block_stop', index: 0},
      {type: 'block_start', index: 1, block: {type: 'text'}},
      {type: 'text_delta', index: 1, text: 'Hi'},
      {type: 'block_stop', index: 1},
      {type: 'block_start', index: 2, block: {type: 'tool_call', id: 'c', name: 'f'}},
      {type: 'tool_args_delta', index: 2, json: '{}'},
      {type: 'block_stop', index: 2},
      {type: 'stop', reason: 'tool_use'},
      {type: 'usage', usage: {inputTokens: 5, outputTokens: 2, cacheReadTokens: 0, reasoningTokens: 0}},
      {type: 'end'},
    ])
  })

  it('a call with an empty id gets one of its own, in a stream and in an answer', () => {
    const chunk = {
      candidates: [{content: {parts: [{functionCall: {name: 'f', args: {}, id: ''}}]}, finishReason: 'STOP'}],
    }
    expect(run([chunk])).toContainEqual({
      type: 'block_start',
      index: 0,
      block: {type: 'tool_call', id: 'call_n', name: 'f'},
    })
    const answer = geminiCodec.decodeResponse(chunk, {newId: (p) => `${p}_1`})
    expect(answer.parts[0]).toMatchObject({type: 'tool_call', id: 'call_1'})
  })

  it('no finishReason, MALFORMED_FUNCTION_CALL, OTHER and an error chunk are errors', () => {
    expect(run([{candidates: [{content: {parts: [{text: 'x'}]}}]}]).at(-1)).toMatchObject({
      type: 'error',
      status: 502,
    })
    expect(run([{candidates: [{finishReason: 'MALFORMED_FUNCTION_CALL'}]}]).at(-1)).toMatchObject({
      type: 'error',
      status: 502,
    })
    expect(run([{error: {code: 429, message: 'quota', status: 'RESOURCE_EXHAUSTED'}}])).toEqual([
      {type: 'error', status: 429, message: 'quota', code: 'RESOURCE_EXHAUSTED'},
    ])
    expect(run([{candidates: [{content: {parts: [{text: 'x'}]}, finishReason: 'OTHER'}]}]).at(-1)).toEqual({
      type: 'error',
      status: 502,
      message: 'upstream stopped the answer: finishReason OTHER',
      answered: true,
    })
    expect(run([{candidates: [{finishReason: 'SAFETY'}]}]).at(-2)).toEqual({
      type: 'stop',
      reason: 'content_filter',
    })
  })
})

describe("Google's thought-only answer without finishReason (CLIProxyAPI #5226)", () => {
  const run = (chunks: unknown[]): StreamEvent[] => {
    const dec = geminiCodec.streamDecoder({newId: (p) => `${p}_n`})
    return [...chunks.flatMap((c) => dec.event(undefined, JSON.stringify(c))), ...dec.end()]
  }
  // thoughts, no candidate token, total = prompt + thoughts, no finishReason anywhere
  const thoughtUsage = {
    promptTokenCount: 40,
    totalTokenCount: 52,
    thoughtsTokenCount: 12,
    cachedContentTokenCount: 8,
  }
  const thoughts = {
    candidates: [{content: {role: 'model', parts: [{text: 'pondering', thought: true}]}, index: 0}],
    usageMetadata: {promptTokenCount: 40, totalTokenCount: 40},
    responseId: 'r',
    modelVersion: 'gemini-3-pro',
  }
  const last = {candidates: [{content: {role: 'model', parts: []}, index: 0}], usageMetadata: thoughtUsage}
  const usage = {inputTokens: 40, outputTokens: 12, cacheReadTokens: 8, reasoningTokens: 12}

  // whole, as STOP, and so an answer with no answer part (research56 F4): a translated client's
  // retryable error, after the thoughts and the usage
  const empty = {type: 'error', status: EMPTY_ANSWER_STATUS, message: EMPTY_ANSWER}

  it('is whole: the thoughts, the held usage, then the empty answer error', () => {
    expect(run([thoughts, last])).toEqual([
      {type: 'start', id: 'r', model: 'gemini-3-pro'},
      {type: 'block_start', index: 0, block: {type: 'reasoning'}},
      {type: 'reasoning_delta', index: 0, text: 'pondering'},
      {type: 'usage', usage},
      empty,
    ])
  })

  it('the same with the thoughts not shown (no part at all), and candidatesTokenCount 0: the error alone, with the usage Google bills (for the row)', () => {
    const zero = {...last, usageMetadata: {...thoughtUsage, candidatesTokenCount: 0}}
    expect(run([zero])).toEqual([{...empty, usage}])
  })

  it('a bare thoughtSignature on an empty text is no answer either', () => {
    const signed = {candidates: [{content: {parts: [{text: '', thoughtSignature: 'S'}]}}]}
    expect(run([thoughts, signed, last]).slice(-2)).toEqual([{type: 'usage', usage}, empty])
  })

  const cut = {type: 'error', status: 502, message: 'upstream stream ended before a chunk with finishReason'}
  it('any other stream without finishReason stays an error', () => {
    // cut mid-text (text seen, even with a thought-only usage)
    const text = {candidates: [{content: {parts: [{text: 'Hel'}]}}]}
    expect(run([thoughts, text, last]).at(-1)).toEqual(cut)
    // a call seen
    const call = {candidates: [{content: {parts: [{functionCall: {name: 'f', args: {}}}]}}]}
    expect(run([thoughts, call, last]).at(-1)).toEqual(cut)
    // no usage
    expect(run([thoughts]).at(-1)).toEqual(cut)
    // candidate tokens
    const counted = {...last, usageMetadata: {...thoughtUsage, candidatesTokenCount: 3}}
    expect(run([thoughts, counted]).at(-1)).toEqual(cut)
    // no thoughts counted
    const none = {...last, usageMetadata: {promptTokenCount: 40, totalTokenCount: 40}}
    expect(run([thoughts, none]).at(-1)).toEqual(cut)
    // a thought-only usage, then a later one that is not (the last wins)
    expect(run([last, thoughts]).at(-1)).toEqual(cut)
  })

  it('cut after a thought chunk with usage stays an error (Gemini 2.5 counts thoughts on each)', () => {
    // raw gemini-2.5-flash shape: every thought chunk carries a usage of thoughts, no candidate token
    const thought25 = (text: string, n: number) => ({
      candidates: [{content: {parts: [{text, thought: true}], role: 'model'}, index: 0}],
      usageMetadata: {promptTokenCount: 29, totalTokenCount: 29 + n, thoughtsTokenCount: n},
      modelVersion: 'gemini-2.5-flash',
    })
    const chunks = [thought25('**Initiating**', 59), thought25('**Weighing**', 120)]
    expect(run(chunks).at(-1)).toEqual(cut)
    expect(run(chunks.slice(0, 1)).at(-1)).toEqual(cut)
    // then the ending chunk, no part of its own: whole (and empty)
    expect(run([...chunks, last]).slice(-2)).toEqual([{type: 'usage', usage}, empty])
    expect(run([...chunks, {usageMetadata: thoughtUsage}]).at(-1)).toEqual(empty)
  })

  it('an answer (not a stream) of that shape is a whole one: stop end, usage exact', () => {
    const answer = geminiCodec.decodeResponse({...thoughts, usageMetadata: thoughtUsage})
    expect(answer).toMatchObject({stop: 'end', parts: [{type: 'reasoning', text: 'pondering'}]})
    expect(answer.usage).toEqual({...usage, cacheCreationTokens: 0})
  })
})

describe('schemas with OpenAPI type names (Gemini CLI router call)', () => {
  it('normalises responseJsonSchema and parametersJsonSchema type names before another vendor sees them', () => {
    const request = geminiCodec.decodeRequest(
      {
        contents: [{role: 'user', parts: [{text: 'route this'}]}],
        tools: [
          {
            functionDeclarations: [
              {name: 'f', parametersJsonSchema: {type: 'OBJECT', properties: {a: {type: 'STRING'}}}},
            ],
          },
        ],
        generationConfig: {
          responseMimeType: 'application/json',
          responseJsonSchema: {type: 'OBJECT', properties: {model: {type: 'STRING'}, n: {type: 'INTEGER'}}},
        },
      },
      {model: 'gemini-3.5-flash-lite', stream: false},
    )
    expect(request.responseFormat).toMatchObject({
      type: 'json_schema',
      schema: {type: 'object', properties: {model: {type: 'string'}, n: {type: 'integer'}}},
    })
    expect(request.tools[0].parameters).toEqual({type: 'object', properties: {a: {type: 'string'}}})
  })

  it("walks a property whatever its name (one called type, enum or example), never an example's data", () => {
    const parameters = {
      type: 'OBJECT',
      properties: {
        type: {type: 'STRING', enum: ['FILE', 'DIR']},
        enum: {type: 'ARRAY', items: {type: 'STRING'}},
        example: {type: 'OBJECT', properties: {required: {type: 'BOOLEAN'}}},
        spec: {type: 'OBJECT', default: {type: 'OBJECT'}, example: {type: 'STRING'}},
      },
      required: ['type'],
    }
    const request = geminiCodec.decodeRequest(
      {
        contents: [{role: 'user', parts: [{text: 'list it'}]}],
        tools: [{functionDeclarations: [{name: 'ls', parameters}]}],
      },
      {model: 'gemini-3.5-flash', stream: false},
    )
    expect(request.tools[0].parameters).toEqual({
      type: 'object',
      properties: {
        type: {type: 'string', enum: ['FILE', 'DIR']},
        enum: {type: 'array', items: {type: 'string'}},
        example: {type: 'object', properties: {required: {type: 'boolean'}}},
        spec: {type: 'object', default: {type: 'OBJECT'}, example: {type: 'STRING'}},
      },
      required: ['type'],
    })
    // (the client's schema as it came)
    expect(parameters.properties.type.type).toBe('STRING')
  })
})

describe('gemini decodeRequest: a thought sent back in pieces, as a stream gave it', () => {
  const call = {functionCall: {id: 'call_1', name: 'f', args: {}}}
  const decode = (parts: unknown[]) =>
    geminiCodec.decodeRequest(
      {
        contents: [
          {role: 'user', parts: [{text: 'go'}]},
          {role: 'model', parts: [...parts, call]},
          {role: 'user', parts: [{functionResponse: {id: 'call_1', name: 'f', response: {output: 'ok'}}}]},
        ],
      },
      {model: 'g', stream: false},
    ).messages[1].parts

  it('the signature first on an empty piece (a chat upstream), or last (an Anthropic one): one reasoning part', () => {
    expect(
      decode([
        {text: '', thought: true, thoughtSignature: 'gwx1.chat.'},
        {text: 'Let me', thought: true},
        {text: ' think.', thought: true},
      ])[0],
    ).toEqual({
      type: 'reasoning',
      text: 'Let me think.',
      signature: {family: 'chat', value: '', wrapped: true},
    })
    expect(
      decode([
        {text: 'Let me', thought: true},
        {text: ' think.', thought: true},
        {text: '', thought: true, thoughtSignature: 'gwx1.messages.c2ln'},
      ])[0],
    ).toEqual({
      type: 'reasoning',
      text: 'Let me think.',
      signature: {family: 'messages', value: 'c2ln', wrapped: true},
    })
  })

  it('two signed thoughts stay two', () => {
    const parts = decode([
      {text: 'one', thought: true, thoughtSignature: 'gwx1.messages.YQ=='},
      {text: 'two', thought: true, thoughtSignature: 'gwx1.messages.Yg=='},
    ])
    expect(parts.filter((p) => p.type === 'reasoning')).toHaveLength(2)
  })

  it("two thoughts, each signed on an empty piece after its text (Anthropic's two thinking blocks): two", () => {
    const sig = (value: string) => ({text: '', thought: true, thoughtSignature: `gwx1.messages.${value}`})
    expect(
      decode([
        {text: 'first', thought: true},
        sig('QQ=='),
        {text: 'then', thought: true},
        sig('Qg=='),
      ]).filter((p) => p.type === 'reasoning'),
    ).toEqual([
      {type: 'reasoning', text: 'first', signature: {family: 'messages', value: 'QQ==', wrapped: true}},
      {type: 'reasoning', text: 'then', signature: {family: 'messages', value: 'Qg==', wrapped: true}},
    ])
  })
})

describe("gemini decodeRequest: @google/genai's chat session, one model content per streamed chunk", () => {
  // what `ai.chats.create(...).sendMessageStream` keeps in its history: each chunk's content
  const chunks = (...parts: unknown[]) => parts.map((p) => ({role: 'model', parts: [p]}))
  const decode = (model: unknown[], answer: unknown[]) =>
    geminiCodec.decodeRequest(
      {
        contents: [
          {role: 'user', parts: [{text: 'go'}]},
          ...model,
          {role: 'user', parts: answer},
          {role: 'model', parts: [{text: 'done'}]},
        ],
      },
      {model: 'g', stream: false},
    ).messages

  it('the pieces of a thought in contents of their own are one reasoning part with its text and signature', () => {
    const messages = decode(
      chunks(
        {text: 'Let', thought: true},
        {text: ' me think.', thought: true},
        {text: '', thought: true, thoughtSignature: 'gwx1.messages.QQ=='},
        {text: '', thought: true, thoughtSignature: 'gwx1.messages+redacted.RD'},
        {text: 'And', thought: true},
        {text: ' more.', thought: true},
        {text: '', thought: true, thoughtSignature: 'gwx1.messages.Qg=='},
        {functionCall: {id: 'call_1', name: 'f', args: {}}},
      ),
      [{functionResponse: {id: 'call_1', name: 'f', response: {output: 'ok'}}}],
    )
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant'])
    expect(messages[1].parts).toEqual([
      {
        type: 'reasoning',
        text: 'Let me think.',
        signature: {family: 'messages', value: 'QQ==', wrapped: true},
      },
      {type: 'reasoning', text: '', redacted: {family: 'messages', value: 'RD', wrapped: true}},
      {type: 'reasoning', text: 'And more.', signature: {family: 'messages', value: 'Qg==', wrapped: true}},
      {type: 'tool_call', id: 'call_1', name: 'f', arguments: '{}'},
    ])
  })

  it('calls in contents of their own stay calls of one turn, each answered; a thought never spans turns', () => {
    const messages = decode(
      chunks(
        {text: 'plan', thought: true},
        {functionCall: {name: 'a', args: {x: 1}}},
        {text: 'again', thought: true},
        {functionCall: {name: 'b', args: {}}},
      ),
      [
        {functionResponse: {name: 'a', response: {output: 'A'}}},
        {functionResponse: {name: 'b', response: {output: 'B'}}},
      ],
    )
    expect(messages[1].parts.map((p) => (p.type === 'reasoning' ? p.text : p.type))).toEqual([
      'plan',
      'tool_call',
      'again',
      'tool_call',
    ])
    const ids = messages[1].parts.flatMap((p) => (p.type === 'tool_call' ? [p.id] : []))
    expect(new Set(ids).size).toBe(2)
    expect(messages[2].parts.map((p) => p.type === 'tool_result' && p.callId)).toEqual(ids)
    // a thought of the turn before is not continued by the next turn's
    const turns = geminiCodec.decodeRequest(
      {
        contents: [
          {role: 'user', parts: [{text: 'go'}]},
          ...chunks({text: 'one', thought: true}),
          {role: 'user', parts: [{text: 'next'}]},
          ...chunks({text: 'two', thought: true}, {text: 'ok'}),
        ],
      },
      {model: 'g', stream: false},
    ).messages
    expect(turns[1].parts).toEqual([{type: 'reasoning', text: 'one'}])
    expect(turns[3].parts).toEqual([
      {type: 'reasoning', text: 'two'},
      {type: 'text', text: 'ok'},
    ])
  })
})

describe("a tool's images to Gemini: nested in its functionResponse (Gemini 3+), else after every response", () => {
  const png =
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='
  const image = {type: 'image', source: {type: 'base64', media_type: 'image/png', data: png}}
  // Claude Code's turn: two parallel Reads of screenshots, then its trailing reminder
  const claudeCode = (results: unknown[][] = [[image], [image]]) => ({
    model: 'claude-opus-5',
    max_tokens: 8000,
    stream: true,
    tools: [
      {
        name: 'Read',
        description: 'read',
        input_schema: {type: 'object', properties: {file_path: {type: 'string'}}},
      },
    ],
    messages: [
      {role: 'user', content: 'look at both screenshots'},
      {
        role: 'assistant',
        content: [
          {type: 'tool_use', id: 'toolu_1', name: 'Read', input: {file_path: 'a.png'}},
          {type: 'tool_use', id: 'toolu_2', name: 'Read', input: {file_path: 'b.png'}},
        ],
      },
      {
        role: 'user',
        content: [
          {type: 'tool_result', tool_use_id: 'toolu_1', content: results[0]},
          {type: 'tool_result', tool_use_id: 'toolu_2', content: results[1]},
          {type: 'text', text: '<system-reminder>x</system-reminder>'},
        ],
      },
    ],
  })
  const sent = (model: string, body = claudeCode(), adapt?: UpstreamAdaptation) => {
    const out = encodeUpstreamRequest(decodeClientRequest('messages', body, {}), 'gemini', model, {}, adapt)
    return {bytes: out.body.toString(), contents: JSON.parse(out.body.toString()).contents as any[]}
  }
  const inline = {inlineData: {mimeType: 'image/png', data: png}}
  const response = (id: string, output: string, parts?: unknown[]) => ({
    functionResponse: {name: 'Read', id, response: {output}, ...(parts && {parts})},
  })
  const reminder = {text: '<system-reminder>x</system-reminder>'}

  it('gemini-3.8-flash: one functionResponse per call, each with its image in parts, then the text', () => {
    const {contents} = sent('gemini-3.8-flash')
    expect(contents).toHaveLength(3)
    expect(contents[2]).toEqual({
      role: 'user',
      parts: [
        response('toolu_1', '[image attached]', [inline]),
        response('toolu_2', '[image attached]', [inline]),
        reminder,
      ],
    })
    // (Gemini 3 names, dotted or not, with models/ or a vendor's prefix before them, any case, and
    // Google's -latest aliases: the name test of the thinking levels)
    for (const model of [
      'gemini-3-pro-preview',
      'models/gemini-3.1-flash-lite',
      'gemini-4-pro',
      'google/gemini-3-pro-preview',
      'Gemini-3-Flash-Preview',
      'gemini-pro-latest',
      'gemini-flash-latest',
    ])
      expect(sent(model).contents[2].parts.map((p: any) => Object.keys(p))).toEqual([
        ['functionResponse'],
        ['functionResponse'],
        ['text'],
      ])
  })

  it('gemini-2.5-flash (and Gemma, an alias): every response first, then the images, then the text', () => {
    for (const model of ['gemini-2.5-flash', 'gemma-4-27b-it', 'my-gemini'])
      expect(sent(model).contents[2]).toEqual({
        role: 'user',
        parts: [response('toolu_1', ''), response('toolu_2', ''), inline, inline, reminder],
      })
  })

  it("a result's text stays in the response; a PDF nests too; an error keeps its field", () => {
    const pdf = {type: 'document', source: {type: 'base64', media_type: 'application/pdf', data: 'JVBERi0x'}}
    const body = claudeCode([
      [{type: 'text', text: 'Read a.png'}, image],
      [pdf, image],
    ])
    ;(body.messages[2].content as any[])[1].is_error = true
    const parts = sent('gemini-3.8-flash', body).contents[2].parts
    expect(parts[0]).toEqual(response('toolu_1', 'Read a.png', [inline]))
    expect(parts[1]).toEqual({
      functionResponse: {
        name: 'Read',
        id: 'toolu_2',
        response: {error: '[image and document attached]'},
        parts: [{inlineData: {mimeType: 'application/pdf', data: 'JVBERi0x'}}, inline],
      },
    })
    expect(sent('gemini-2.5-flash', body).contents[2].parts.map((p: any) => Object.keys(p)[0])).toEqual([
      'functionResponse',
      'functionResponse',
      'inlineData',
      'inlineData',
      'inlineData',
      'text',
    ])
  })

  it('a layout learned (geminiResultMedia) goes over the name', () => {
    expect(sent('gemini-2.5-flash', undefined, {geminiResultMedia: 'nested'}).contents[2].parts[0]).toEqual(
      response('toolu_1', '[image attached]', [inline]),
    )
    expect(sent('gemini-3.8-flash', undefined, {geminiResultMedia: 'flat'}).contents[2].parts[2]).toEqual(
      inline,
    )
  })

  it("turn N+1's contents start with turn N's, in both layouts (the prompt cache's prefix)", () => {
    const turn = claudeCode()
    const next = claudeCode()
    next.messages.push(
      {
        role: 'assistant',
        content: [{type: 'tool_use', id: 'toolu_3', name: 'Read', input: {file_path: 'c.png'}}],
      },
      {role: 'user', content: [{type: 'tool_result', tool_use_id: 'toolu_3', content: [image]}]} as any,
    )
    for (const model of ['gemini-3.8-flash', 'gemini-2.5-flash']) {
      const before = sent(model, turn)
      const after = sent(model, next)
      expect(after.contents).toHaveLength(5)
      expect(after.contents.slice(0, before.contents.length)).toEqual(before.contents)
      // (as bytes too: the first contents serialized the same)
      const prefix = JSON.stringify(before.contents).slice(0, -1)
      expect(JSON.stringify(after.contents).startsWith(prefix)).toBe(true)
    }
  })

  it('results without media go as before (text after them, as it came)', () => {
    const body = claudeCode([[{type: 'text', text: 'A'}], [{type: 'text', text: 'B'}]])
    for (const model of ['gemini-3.8-flash', 'gemini-2.5-flash'])
      expect(sent(model, body).contents[2].parts).toEqual([
        response('toolu_1', 'A'),
        response('toolu_2', 'B'),
        reminder,
      ])
  })
})

describe("images beside a tool's results to Gemini: in the response they follow (Gemini 3+), else after every response", () => {
  const png =
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='
  const inline = {inlineData: {mimeType: 'image/png', data: png}}
  const encode = (family: 'chat' | 'responses' | 'messages', body: unknown, model: string) => {
    const out = encodeUpstreamRequest(decodeClientRequest(family, body, {}), 'gemini', model, {})
    return {sent: out.sent, contents: JSON.parse(out.body.toString()).contents as any[]}
  }
  const response = (name: string, id: string, output: string, parts?: unknown[]) => ({
    functionResponse: {name, id, response: {output}, ...(parts && {parts})},
  })
  // opencode (any chat client): a tool message takes text only, the image in a user message after it
  const chat = {
    model: 'x',
    messages: [
      {role: 'user', content: 'look at a.png'},
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {id: 'call_1', type: 'function', function: {name: 'read', arguments: '{"path":"a.png"}'}},
        ],
      },
      {role: 'tool', tool_call_id: 'call_1', content: 'Image read successfully'},
      {role: 'user', content: [{type: 'image_url', image_url: {url: `data:image/png;base64,${png}`}}]},
    ],
    tools: [{type: 'function', function: {name: 'read', parameters: {type: 'object', properties: {}}}}],
  }
  // Codex's older view_image: the output a string, then a user message with the image
  const codex = {
    model: 'x',
    input: [
      {type: 'message', role: 'user', content: [{type: 'input_text', text: 'look at a.png'}]},
      {type: 'function_call', call_id: 'call_1', name: 'view_image', arguments: '{"path":"a.png"}'},
      {type: 'function_call_output', call_id: 'call_1', output: 'attached local image path: a.png'},
      {
        type: 'message',
        role: 'user',
        content: [{type: 'input_image', image_url: `data:image/png;base64,${png}`}],
      },
    ],
    tools: [{type: 'function', name: 'view_image', parameters: {type: 'object', properties: {}}}],
  }
  // Claude Code: a result with an image, one without, and an image pasted in the same turn
  const image = {type: 'image', source: {type: 'base64', media_type: 'image/png', data: png}}
  const claude = {
    model: 'x',
    max_tokens: 1000,
    messages: [
      {role: 'user', content: 'look'},
      {
        role: 'assistant',
        content: [
          {type: 'tool_use', id: 'toolu_1', name: 'Read', input: {}},
          {type: 'tool_use', id: 'toolu_2', name: 'Bash', input: {}},
        ],
      },
      {
        role: 'user',
        content: [
          {type: 'tool_result', tool_use_id: 'toolu_1', content: [image]},
          {type: 'tool_result', tool_use_id: 'toolu_2', content: 'ok'},
          {type: 'text', text: 'and this one'},
          image,
        ],
      },
    ],
  }

  it('gemini-3.8-flash: the image goes in the last response before it; nothing after the responses but text', () => {
    const three = 'gemini-3.8-flash'
    const a = encode('chat', chat, three)
    expect(a.contents[2]).toEqual({
      role: 'user',
      parts: [response('read', 'call_1', 'Image read successfully', [inline])],
    })
    expect(a.sent.geminiResultMedia).toBe('nested')
    const b = encode('responses', codex, three)
    expect(b.contents.at(-1)).toEqual({
      role: 'user',
      parts: [response('view_image', 'call_1', 'attached local image path: a.png', [inline])],
    })
    expect(b.sent.geminiResultMedia).toBe('nested')
    const c = encode('messages', claude, three)
    expect(c.contents[2].parts).toEqual([
      response('Read', 'toolu_1', '[image attached]', [inline]),
      response('Bash', 'toolu_2', 'ok', [inline]),
      {text: 'and this one'},
    ])
    // the simulator's Gemini 3 takes them all
    for (const {contents} of [a, b, c]) expect(geminiResultMediaProblem(three, contents)).toBeUndefined()
  })

  it('gemini-2.5-flash: every response first, the image after them (as before), the layout said', () => {
    const a = encode('chat', chat, 'gemini-2.5-flash')
    expect(a.contents[2]).toEqual({
      role: 'user',
      parts: [response('read', 'call_1', 'Image read successfully'), inline],
    })
    expect(a.sent.geminiResultMedia).toBe('flat')
    expect(encode('messages', claude, 'gemini-2.5-flash').contents[2].parts).toEqual([
      response('Read', 'toolu_1', ''),
      response('Bash', 'toolu_2', 'ok'),
      inline,
      {text: 'and this one'},
      inline,
    ])
  })

  it('a URL inside a response (the Gemini API takes no fileData there) goes as a line of its text; flat keeps fileData', () => {
    const url = {
      ...codex,
      input: [
        codex.input[0],
        codex.input[1],
        {
          type: 'function_call_output',
          call_id: 'call_1',
          output: [{type: 'input_image', image_url: 'https://example.com/a.png'}],
        },
      ],
    }
    const nested = encode('responses', url, 'gemini-3.8-flash')
    expect(nested.contents.at(-1).parts).toEqual([
      response(
        'view_image',
        'call_1',
        '[image at https://example.com/a.png not attached: the Gemini API takes no URL inside a function response]',
      ),
    ])
    // (no medium went: no layout said, nothing to learn from a refusal)
    expect(nested.sent).not.toHaveProperty('geminiResultMedia')
    const flat = encode('responses', url, 'gemini-2.5-flash')
    expect(flat.contents.at(-1).parts[1]).toEqual({
      fileData: {mimeType: 'image/png', fileUri: 'https://example.com/a.png'},
    })
    expect(flat.sent.geminiResultMedia).toBe('flat')
  })

  it('no layout said when every medium became a line (a spreadsheet); a turn without media as before', () => {
    const xls = {
      type: 'document',
      source: {type: 'base64', media_type: 'application/vnd.ms-excel', data: 'AAAA'},
    }
    const body = {
      ...claude,
      messages: [
        ...claude.messages.slice(0, 2),
        {
          role: 'user',
          content: [
            {type: 'tool_result', tool_use_id: 'toolu_1', content: [xls]},
            {type: 'tool_result', tool_use_id: 'toolu_2', content: 'ok'},
          ],
        },
      ],
    }
    for (const model of ['gemini-3.8-flash', 'gemini-2.5-flash']) {
      const out = encode('messages', body, model)
      expect(out.sent).not.toHaveProperty('geminiResultMedia')
      expect(JSON.stringify(out.contents)).not.toMatch(/inlineData|fileData/)
    }
    const plain = {...chat, messages: chat.messages.slice(0, 3)}
    expect(encode('chat', plain, 'gemini-3.8-flash').contents[2]).toEqual({
      role: 'user',
      parts: [response('read', 'call_1', 'Image read successfully')],
    })
  })
})
