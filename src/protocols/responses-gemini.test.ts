import {describe, expect, it} from 'vitest'

import {BoundedCarry} from './carry.js'
import {geminiCodec} from './gemini.js'
import type {CodecContext, StreamEvent} from './ir.js'
import {responsesCodec} from './responses.js'

/** The `data` of each SSE event in `text`, parsed. */
const sseData = (text: string): Array<Record<string, unknown>> =>
  text
    .trim()
    .split('\n\n')
    .map((block) =>
      JSON.parse(
        block
          .split('\n')
          .find((l) => l.startsWith('data: '))!
          .slice(6),
      ),
    )

const sse = (chunks: unknown[]): string[] => chunks.map((c) => JSON.stringify(c))

describe('Codex on a Gemini upstream', () => {
  it('turn 1 goes to Gemini, the answer back to Codex, and turn 2 carries the thoughtSignature', () => {
    const carry = new BoundedCarry()
    let n = 0
    const ctx: CodecContext = {carry, newId: (p) => `${p}_${++n}`}
    const turn1 = {
      model: 'gpt-5',
      instructions: 'You are Codex.',
      input: [{type: 'message', role: 'user', content: [{type: 'input_text', text: 'list files'}]}],
      tools: [
        {type: 'function', name: 'shell', parameters: {type: 'object', properties: {cmd: {type: 'string'}}}},
        {type: 'custom', name: 'apply_patch', description: 'patch', format: {type: 'grammar'}},
        {type: 'web_search'},
      ],
      tool_choice: 'auto',
      parallel_tool_calls: false,
      reasoning: {effort: 'medium', summary: 'auto'},
      store: false,
      stream: true,
      include: ['reasoning.encrypted_content'],
      prompt_cache_key: 'sess',
    }
    const request = responsesCodec.decodeRequest(turn1, ctx)
    // (Gemini 2.5: Codex's live search is not sent beside its functions; Gemini 3 in web-search.test.ts)
    const up = geminiCodec.encodeRequest(request, 'gemini-2.5-pro')
    expect(geminiCodec.path('gemini-2.5-pro', true)).toBe(
      '/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse',
    )
    expect(up).toMatchObject({
      systemInstruction: {parts: [{text: 'You are Codex.'}]},
      contents: [{role: 'user', parts: [{text: 'list files'}]}],
      toolConfig: {functionCallingConfig: {mode: 'AUTO'}},
      generationConfig: {thinkingConfig: {thinkingBudget: 8192, includeThoughts: true}},
    })
    const decls = (up.tools as Array<{functionDeclarations: unknown[]}>)[0].functionDeclarations
    expect(decls).toEqual([
      {name: 'shell', parametersJsonSchema: {type: 'object', properties: {cmd: {type: 'string'}}}},
      {
        name: 'apply_patch',
        description: 'patch',
        parametersJsonSchema: {type: 'object', properties: {input: {type: 'string'}}, required: ['input']},
      },
    ])
    expect(up.tools).toHaveLength(1) // web_search is not sent to Gemini

    // Gemini answers: a thought, then a call signed with its thoughtSignature.
    const dec = geminiCodec.streamDecoder(ctx)
    const events: StreamEvent[] = []
    for (const data of sse([
      {
        candidates: [{content: {role: 'model', parts: [{text: 'I should list', thought: true}]}}],
        responseId: 'g1',
      },
      {
        candidates: [
          {
            content: {
              role: 'model',
              parts: [{functionCall: {name: 'shell', args: {cmd: 'ls'}}, thoughtSignature: 'GSIG'}],
            },
          },
        ],
      },
      {
        candidates: [{content: {role: 'model', parts: [{text: ''}]}, finishReason: 'STOP'}],
        usageMetadata: {promptTokenCount: 30, candidatesTokenCount: 5, thoughtsTokenCount: 7},
      },
    ]))
      events.push(...dec.event(undefined, data))
    events.push(...dec.end())
    expect(events.at(-1)).toEqual({type: 'end'})
    expect(events).toContainEqual({type: 'stop', reason: 'tool_use'})

    const enc = responsesCodec.streamEncoder({...ctx, request})
    const out = sseData(events.map((e) => enc.event(e)).join(''))
    const completed = out.at(-1)!
    expect(completed.type).toBe('response.completed')
    const response = completed.response as {
      output: Array<Record<string, unknown>>
      usage: Record<string, unknown>
    }
    expect(response.usage).toMatchObject({
      input_tokens: 30,
      output_tokens: 12,
      output_tokens_details: {reasoning_tokens: 7},
    })
    const items = out
      .filter((e) => e.type === 'response.output_item.done')
      .map((e) => e.item as Record<string, unknown>)
    expect(items.map((i) => i.type)).toEqual(['reasoning', 'reasoning', 'function_call'])
    expect(items[1].encrypted_content).toBe('gwx1.gemini.GSIG')
    const call = items[2]
    expect(call).toMatchObject({name: 'shell', arguments: '{"cmd":"ls"}'})

    // Codex turn 2 sends its items back (store:false) with the tool's output.
    const turn2 = {
      ...turn1,
      input: [
        ...turn1.input,
        ...items,
        {type: 'function_call_output', call_id: call.call_id, output: 'a.ts\nb.ts'},
      ],
    }
    const up2 = geminiCodec.encodeRequest(
      responsesCodec.decodeRequest(turn2, {...ctx, carry: undefined}),
      'gemini-3-pro',
    )
    expect(up2.contents).toEqual([
      {role: 'user', parts: [{text: 'list files'}]},
      {
        role: 'model',
        parts: [
          {functionCall: {name: 'shell', args: {cmd: 'ls'}, id: call.call_id}, thoughtSignature: 'GSIG'},
        ],
      },
      {
        role: 'user',
        parts: [{functionResponse: {name: 'shell', id: call.call_id, response: {output: 'a.ts\nb.ts'}}}],
      },
    ])
  })

  it('turn 2 without the reasoning items gets the signature from the carry', () => {
    const carry = new BoundedCarry()
    const ctx: CodecContext = {carry}
    const request = responsesCodec.decodeRequest({model: 'm', input: 'hi', stream: false}, ctx)
    const answer = geminiCodec.decodeResponse(
      {
        candidates: [
          {
            content: {
              role: 'model',
              parts: [{functionCall: {name: 'f', args: {}, id: 'c1'}, thoughtSignature: 'S'}],
            },
            finishReason: 'STOP',
          },
        ],
      },
      ctx,
    )
    responsesCodec.encodeResponse(answer, {...ctx, request})
    const turn2 = responsesCodec.decodeRequest(
      {
        model: 'm',
        input: [
          {type: 'message', role: 'user', content: 'hi'},
          {type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}'},
          {type: 'function_call_output', call_id: 'c1', output: 'ok'},
        ],
      },
      ctx,
    )
    const up = geminiCodec.encodeRequest(turn2, 'g')
    expect((up.contents as Array<{parts: unknown[]}>)[1].parts[0]).toMatchObject({thoughtSignature: 'S'})
  })
})

describe('Gemini CLI on a Responses upstream', () => {
  it('round trips a turn: request, streamed answer with reasoning and a call, and turn 2', () => {
    const carry = new BoundedCarry()
    const ctx: CodecContext = {carry}
    const cli = {
      systemInstruction: {parts: [{text: 'You are Gemini CLI.'}]},
      contents: [{role: 'user', parts: [{text: 'read a.ts'}]}],
      tools: [
        {
          functionDeclarations: [
            {
              name: 'read_file',
              parameters: {type: 'OBJECT', properties: {path: {type: 'STRING'}}, required: ['path']},
            },
          ],
        },
      ],
      generationConfig: {temperature: 0, thinkingConfig: {includeThoughts: true, thinkingBudget: 8192}},
    }
    const request = geminiCodec.decodeRequest(cli, {...ctx, model: 'gpt-5', stream: true})
    const up = responsesCodec.encodeRequest(request, 'gpt-5')
    expect(up).toMatchObject({
      model: 'gpt-5',
      instructions: 'You are Gemini CLI.',
      input: [{type: 'message', role: 'user', content: [{type: 'input_text', text: 'read a.ts'}]}],
      tools: [
        {
          type: 'function',
          name: 'read_file',
          parameters: {type: 'object', properties: {path: {type: 'string'}}, required: ['path']},
        },
      ],
      reasoning: {effort: 'medium', summary: 'auto'},
      store: false,
      include: ['reasoning.encrypted_content'],
      stream: true,
      temperature: 0,
    })

    const upstream = [
      [
        'response.created',
        {type: 'response.created', response: {id: 'resp_u', model: 'gpt-5', status: 'in_progress'}},
      ],
      [
        'response.output_item.added',
        {type: 'response.output_item.added', output_index: 0, item: {type: 'reasoning', id: 'rs_u'}},
      ],
      [
        'response.reasoning_summary_text.delta',
        {type: 'response.reasoning_summary_text.delta', output_index: 0, delta: 'Need the file'},
      ],
      [
        'response.output_item.done',
        {
          type: 'response.output_item.done',
          output_index: 0,
          item: {type: 'reasoning', id: 'rs_u', summary: [], encrypted_content: 'ENC'},
        },
      ],
      [
        'response.output_item.added',
        {
          type: 'response.output_item.added',
          output_index: 1,
          item: {type: 'function_call', call_id: 'call_u', name: 'read_file', arguments: ''},
        },
      ],
      [
        'response.function_call_arguments.delta',
        {type: 'response.function_call_arguments.delta', output_index: 1, delta: '{"path":'},
      ],
      [
        'response.function_call_arguments.delta',
        {type: 'response.function_call_arguments.delta', output_index: 1, delta: '"a.ts"}'},
      ],
      [
        'response.output_item.done',
        {
          type: 'response.output_item.done',
          output_index: 1,
          item: {type: 'function_call', call_id: 'call_u', name: 'read_file', arguments: '{"path":"a.ts"}'},
        },
      ],
      [
        'response.completed',
        {
          type: 'response.completed',
          response: {id: 'resp_u', status: 'completed', usage: {input_tokens: 9, output_tokens: 4}},
        },
      ],
    ] as const
    const dec = responsesCodec.streamDecoder(ctx)
    const enc = geminiCodec.streamEncoder({...ctx, request})
    let text = ''
    for (const [name, data] of upstream)
      for (const e of dec.event(name, JSON.stringify(data))) text += enc.event(e)
    for (const e of dec.end()) text += enc.event(e)
    const chunks = sseData(text)
    const parts = chunks.flatMap(
      (c) => (c.candidates as Array<{content: {parts: unknown[]}}>)[0].content.parts,
    )
    expect(parts).toContainEqual({text: 'Need the file', thought: true})
    // (the answer's first call, unsigned: Google's skip value, which Gemini 3 takes if the turn goes there)
    expect(parts).toContainEqual({
      functionCall: {name: 'read_file', args: {path: 'a.ts'}, id: 'call_u'},
      thoughtSignature: 'skip_thought_signature_validator',
    })
    expect(chunks.at(-1)).toMatchObject({
      candidates: [{finishReason: 'STOP'}],
      usageMetadata: {promptTokenCount: 9, candidatesTokenCount: 4},
    })

    // Gemini CLI sends turn 2 without the thought parts.
    const turn2 = {
      ...cli,
      contents: [
        ...cli.contents,
        {role: 'model', parts: [{functionCall: {name: 'read_file', args: {path: 'a.ts'}, id: 'call_u'}}]},
        {
          role: 'user',
          parts: [{functionResponse: {name: 'read_file', id: 'call_u', response: {output: 'x = 1'}}}],
        },
      ],
    }
    const up2 = responsesCodec.encodeRequest(
      geminiCodec.decodeRequest(turn2, {...ctx, model: 'gpt-5', stream: true}),
      'gpt-5',
    )
    expect(up2.input).toEqual([
      {type: 'message', role: 'user', content: [{type: 'input_text', text: 'read a.ts'}]},
      {
        type: 'reasoning',
        id: 'rs_u',
        summary: [{type: 'summary_text', text: 'Need the file'}],
        encrypted_content: 'ENC',
      },
      {type: 'function_call', call_id: 'call_u', name: 'read_file', arguments: '{"path":"a.ts"}'},
      {type: 'function_call_output', call_id: 'call_u', output: 'x = 1'},
    ])
  })
})
