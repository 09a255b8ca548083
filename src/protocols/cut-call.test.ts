/**
 * A call the token limit cut, to a Responses client (Codex): Codex runs a call as soon as its
 * `response.output_item.done` comes, whatever the item's status or the response's, so a cut call
 * (an `apply_patch` whose patch stops mid-line) gets none: the response ends `incomplete` and
 * lists the call `incomplete`. A whole call before it, and a call the answer ended with, are done
 * as before.
 */
import {describe, expect, it} from 'vitest'

import {chatChunk, chatSse, chatToolChunk, messagesSse, parseSse} from './cm-test-helpers.js'
import {decodeClientRequest, StreamTranslator, translateResponse} from './translate.js'

const codex = (stream: boolean) =>
  decodeClientRequest(
    'responses',
    {
      model: 'gpt-5.5',
      input: 'edit',
      stream,
      tools: [
        {type: 'function', name: 'shell', parameters: {type: 'object'}},
        {type: 'custom', name: 'apply_patch', format: {type: 'grammar'}},
      ],
    },
    {},
  )

const CUT = '{"input":"*** Begin Patch\\n*** Add File: a.txt\\n+hel'

/** The Responses events a chat stream gives Codex. */
function fromChat(finish: string, args = CUT): Array<{type: string} & Record<string, any>> {
  const client = codex(true)
  const t = new StreamTranslator('chat', client, {newId: (p) => `${p}1`, tools: client.request.tools})
  const sse = chatSse([
    chatChunk({role: 'assistant', content: ''}),
    chatToolChunk(0, {name: 'shell', arguments: '{"command":["ls"]}'}, 'call_1'),
    chatToolChunk(1, {name: 'apply_patch', arguments: args.slice(0, 20)}, 'call_2'),
    chatToolChunk(1, {arguments: args.slice(20)}),
    chatChunk({}, finish),
    '[DONE]',
  ])
  return parseSse(t.push(Buffer.from(sse)) + t.end()).map((e) => JSON.parse(e.data))
}

const doneCalls = (events: Array<Record<string, any>>) =>
  events.filter((e) => e.type === 'response.output_item.done').map((e) => e.item.call_id)

describe('a call cut by the token limit, to Codex', () => {
  it('from a chat stream: the whole call done, the cut one never; the response incomplete and lists it so', () => {
    const events = fromChat('length')
    expect(doneCalls(events)).toEqual(['call_1'])
    expect(events.some((e) => e.type === 'response.custom_tool_call_input.done')).toBe(false)
    const last = events.at(-1)!
    expect(last.type).toBe('response.incomplete')
    expect(last.response.incomplete_details).toEqual({reason: 'max_output_tokens'})
    expect(last.response.output.map((i: any) => [i.type, i.call_id, i.status])).toEqual([
      ['function_call', 'call_1', 'completed'],
      ['custom_tool_call', 'call_2', 'incomplete'],
    ])
  })

  it('a call the answer ended with (tool_calls): done, as before', () => {
    const events = fromChat('tool_calls', '{"input":"*** Begin Patch\\n*** End Patch"}')
    expect(doneCalls(events)).toEqual(['call_1', 'call_2'])
    expect(events.at(-1)!.type).toBe('response.completed')
  })

  it('from a Messages stream (a tool_use cut at max_tokens): the same', () => {
    const client = codex(true)
    const t = new StreamTranslator('messages', client, {newId: (p) => `${p}1`})
    const sse = messagesSse([
      {
        type: 'message_start',
        message: {
          id: 'msg_1',
          type: 'message',
          role: 'assistant',
          model: 'm',
          content: [],
          usage: {input_tokens: 5},
        },
      },
      {
        type: 'content_block_start',
        index: 0,
        content_block: {type: 'tool_use', id: 'toolu_1', name: 'apply_patch', input: {}},
      },
      {type: 'content_block_delta', index: 0, delta: {type: 'input_json_delta', partial_json: CUT}},
      {type: 'content_block_stop', index: 0},
      {type: 'message_delta', delta: {stop_reason: 'max_tokens'}, usage: {output_tokens: 32000}},
      {type: 'message_stop'},
    ])
    const events = parseSse(t.push(Buffer.from(sse)) + t.end()).map((e) => JSON.parse(e.data))
    expect(doneCalls(events)).toEqual([])
    const last = events.at(-1)!
    expect(last.type).toBe('response.incomplete')
    expect(last.response.output.map((i: any) => [i.call_id, i.status])).toEqual([['toolu_1', 'incomplete']])
  })

  it('not streamed: the cut call is listed incomplete, the whole one before it completed', () => {
    const body = {
      id: 'c1',
      object: 'chat.completion',
      model: 'm',
      choices: [
        {
          index: 0,
          finish_reason: 'length',
          message: {
            role: 'assistant',
            content: null,
            tool_calls: [
              {id: 'call_1', type: 'function', function: {name: 'shell', arguments: '{"command":["ls"]}'}},
              {id: 'call_2', type: 'function', function: {name: 'apply_patch', arguments: CUT}},
            ],
          },
        },
      ],
      usage: {prompt_tokens: 10, completion_tokens: 4096},
    }
    const out = translateResponse('chat', codex(false), body, {}).body as any
    expect(out.status).toBe('incomplete')
    expect(out.output.map((i: any) => [i.call_id, i.status])).toEqual([
      ['call_1', 'completed'],
      ['call_2', 'incomplete'],
    ])
  })

  it('a whole call the limit stopped right after (its arguments JSON): done, for Codex to run (review50 F1)', () => {
    const whole = '{"input":"*** Begin Patch\\n*** Add File: a.txt\\n+hello\\n*** End Patch"}'
    const events = fromChat('length', whole)
    expect(doneCalls(events)).toEqual(['call_1', 'call_2'])
    expect(events.at(-1)!.response.output.map((i: any) => i.status)).toEqual(['completed', 'completed'])
    // Gemini sends every call whole: one that ends at MAX_TOKENS is done too
    const client = codex(true)
    const t = new StreamTranslator('gemini', client, {newId: (p) => `${p}1`, tools: client.request.tools})
    const gemini = `data: ${JSON.stringify({
      candidates: [
        {
          content: {role: 'model', parts: [{functionCall: {name: 'shell', args: {command: ['ls']}}}]},
          finishReason: 'MAX_TOKENS',
        },
      ],
      usageMetadata: {promptTokenCount: 3, candidatesTokenCount: 4},
    })}\n\n`
    const fromGemini = parseSse(t.push(Buffer.from(gemini)) + t.end()).map((e) => JSON.parse(e.data))
    expect(fromGemini.filter((e) => e.type === 'response.output_item.done')).toHaveLength(1)
    // not streamed: completed
    const body = {
      id: 'c1',
      object: 'chat.completion',
      model: 'm',
      choices: [
        {
          index: 0,
          finish_reason: 'length',
          message: {
            role: 'assistant',
            content: null,
            tool_calls: [
              {id: 'call_1', type: 'function', function: {name: 'shell', arguments: '{"command":["ls"]}'}},
            ],
          },
        },
      ],
      usage: {prompt_tokens: 10, completion_tokens: 4096},
    }
    const out = translateResponse('chat', codex(false), body, {}).body as any
    expect(out.output.map((i: any) => [i.call_id, i.status])).toEqual([['call_1', 'completed']])
  })
})
