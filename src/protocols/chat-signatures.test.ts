/**
 * Gemini 3's thought signatures through a chat completions server: OpenRouter's
 * `reasoning_details` and Google's `extra_content` read from an answer (JSON and stream), carried
 * by a client of each other family, and sent back to the chat upstream on the next turn, verbatim.
 */
import {describe, expect, it} from 'vitest'

import {BoundedCarry} from './carry.js'
import {chatCodec} from './chat.js'
import {DETAILS, DetailsMerger, detailsSignature, EXTRA, MAX_DETAILS} from './chat-signatures.js'
import {chatSse, decodeAll} from './cm-test-helpers.js'
import {geminiCodec} from './gemini.js'
import type {CodecContext, Message, Request} from './ir.js'
import {messagesCodec} from './messages.js'
import {responsesCodec} from './responses.js'
import {stripWrapped} from './strip.js'

const FORMAT = 'google-gemini-v1'
const TEXT = {type: 'reasoning.text', text: 'I will list.', format: FORMAT, index: 0}
const ENCRYPTED = {type: 'reasoning.encrypted', data: 'CiQBSIG', id: 'tool_0_ls', format: FORMAT, index: 1}
const EXTRA_CONTENT = {google: {thought_signature: 'GSIG=='}}

/** An OpenRouter answer: reasoning, its details, a tool call. */
const openRouterAnswer = {
  id: 'gen-1',
  model: 'google/gemini-3-pro-preview',
  choices: [
    {
      index: 0,
      message: {
        role: 'assistant',
        content: null,
        reasoning: 'I will list.',
        reasoning_details: [TEXT, ENCRYPTED],
        tool_calls: [{id: 'tool_0_ls', type: 'function', function: {name: 'ls', arguments: '{"dir":"."}'}}],
      },
      finish_reason: 'tool_calls',
    },
  ],
}

/** A Google OpenAI-compatible answer: a tool call with its signature in `extra_content`. */
const googleAnswer = {
  id: 'g-1',
  model: 'gemini-3-flash-preview',
  choices: [
    {
      index: 0,
      message: {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'function-call-1',
            type: 'function',
            function: {name: 'ls', arguments: '{"dir":"."}'},
            extra_content: EXTRA_CONTENT,
          },
        ],
      },
      finish_reason: 'tool_calls',
    },
  ],
}

const turn2 = (assistant: Message, callId: string): Request => ({
  model: 'x',
  system: [],
  messages: [
    {role: 'user', parts: [{type: 'text', text: 'list'}]},
    assistant,
    {
      role: 'user',
      parts: [{type: 'tool_result', callId, name: 'ls', content: [{type: 'text', text: 'a.txt'}]}],
    },
  ],
  tools: [{name: 'ls', parameters: {type: 'object'}}],
  stream: false,
})

/** The assistant message of a chat request's body. */
const assistantOf = (body: Record<string, unknown>): Record<string, unknown> =>
  (body.messages as Array<Record<string, unknown>>).find((m) => m.role === 'assistant')!

describe('OpenRouter reasoning_details', () => {
  it('a JSON answer keeps them as the reasoning signature, and the next turn sends them back verbatim', () => {
    const response = chatCodec.decodeResponse(openRouterAnswer)
    expect(response.parts[0]).toEqual({
      type: 'reasoning',
      text: 'I will list.',
      signature: {family: 'chat', value: DETAILS + JSON.stringify([TEXT, ENCRYPTED])},
    })
    const body = chatCodec.encodeRequest(turn2({role: 'assistant', parts: response.parts}, 'tool_0_ls'), 'g')
    const sent = assistantOf(body)
    expect(sent.reasoning_details).toEqual([TEXT, ENCRYPTED])
    // (the details hold the text: not sent twice)
    expect(sent).not.toHaveProperty('reasoning')
    expect(sent).not.toHaveProperty('reasoning_content')
    // the same bytes on every turn (the prompt cache)
    const again = chatCodec.encodeRequest(turn2({role: 'assistant', parts: response.parts}, 'tool_0_ls'), 'g')
    expect(JSON.stringify(again)).toBe(JSON.stringify(body))
  })

  it('a stream merges the pieces by index and gives the reasoning block the whole array', () => {
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
      id: 'gen-1',
      choices: [{index: 0, delta, finish_reason: finish}],
    })
    const sse = chatSse([
      chunk({role: 'assistant', content: ''}),
      chunk({reasoning: 'I will', reasoning_details: [{...TEXT, text: 'I will'}]}),
      chunk({reasoning: ' list.', reasoning_details: [{type: 'reasoning.text', text: ' list.', index: 0}]}),
      chunk({
        tool_calls: [{index: 0, id: 'tool_0_ls', type: 'function', function: {name: 'ls', arguments: ''}}],
        reasoning_details: [ENCRYPTED],
      }),
      chunk({tool_calls: [{index: 0, function: {arguments: '{"dir":"."}'}}]}),
      chunk({}, 'tool_calls'),
      '[DONE]',
    ])
    const events = decodeAll(chatCodec.streamDecoder(), sse)
    const opaque = events.filter((e) => e.type === 'reasoning_opaque')
    expect(opaque).toEqual([
      {type: 'reasoning_opaque', index: 0, signature: {family: 'chat', value: 'reasoning'}},
      {
        type: 'reasoning_opaque',
        index: 0,
        signature: {family: 'chat', value: DETAILS + JSON.stringify([TEXT, ENCRYPTED])},
      },
    ])
    // the signature before the block's stop, the call after it
    const types = events.map((e) => e.type)
    expect(types.indexOf('block_stop')).toBeGreaterThan(types.lastIndexOf('reasoning_opaque'))
    expect(events.filter((e) => e.type === 'reasoning_delta').map((e) => (e as {text: string}).text)).toEqual(
      ['I will', ' list.'],
    )
  })

  it('details with no reasoning text open a reasoning block of their own (after the text)', () => {
    const sse = chatSse([
      {choices: [{index: 0, delta: {role: 'assistant', content: 'Listing.'}}]},
      {choices: [{index: 0, delta: {reasoning_details: [ENCRYPTED]}}]},
      {choices: [{index: 0, delta: {}, finish_reason: 'stop'}]},
      '[DONE]',
    ])
    const events = decodeAll(chatCodec.streamDecoder(), sse)
    expect(events.filter((e) => e.type !== 'start' && e.type !== 'end' && e.type !== 'stop')).toEqual([
      {type: 'block_start', index: 0, block: {type: 'text'}},
      {type: 'text_delta', index: 0, text: 'Listing.'},
      {type: 'block_stop', index: 0},
      {type: 'block_start', index: 1, block: {type: 'reasoning'}},
      {
        type: 'reasoning_opaque',
        index: 1,
        signature: {family: 'chat', value: DETAILS + JSON.stringify([ENCRYPTED])},
      },
      {type: 'block_stop', index: 1},
    ])
  })

  it('details without `reasoning` beside them give their text as the reasoning', () => {
    const answer = structuredClone(openRouterAnswer)
    delete (answer.choices[0].message as Record<string, unknown>).reasoning
    expect(chatCodec.decodeResponse(answer).parts[0]).toMatchObject({type: 'reasoning', text: 'I will list.'})
    const sse = chatSse([
      {choices: [{index: 0, delta: {role: 'assistant', reasoning_details: [TEXT]}}]},
      {choices: [{index: 0, delta: {}, finish_reason: 'stop'}]},
      '[DONE]',
    ])
    const events = decodeAll(chatCodec.streamDecoder(), sse)
    expect(events).toContainEqual({type: 'reasoning_delta', index: 0, text: 'I will list.'})
  })

  it('are bounded: past the bound only the items that are not text are kept', () => {
    const long = {...TEXT, text: 'x'.repeat(MAX_DETAILS)}
    expect(detailsSignature([long, ENCRYPTED])).toEqual({
      family: 'chat',
      value: DETAILS + JSON.stringify([ENCRYPTED]),
    })
    expect(detailsSignature([long])).toBeUndefined()
    // (a JSON answer whose details are too large keeps its reasoning as before)
    const answer = structuredClone(openRouterAnswer)
    answer.choices[0].message.reasoning_details = [long]
    expect(chatCodec.decodeResponse(answer).parts[0]).toEqual({
      type: 'reasoning',
      text: 'I will list.',
      signature: {family: 'chat', value: 'reasoning'},
    })
  })

  it('merges stream pieces by index and type, in the order they came', () => {
    const merger = new DetailsMerger()
    merger.add([{type: 'reasoning.text', text: 'a', index: 0}])
    merger.add([
      {type: 'reasoning.text', text: 'b', format: FORMAT, index: 0},
      {type: 'reasoning.encrypted', data: 'S', index: 0},
    ])
    merger.add([{type: 'reasoning.text', text: null, index: 0}, 'junk'])
    expect(merger.take()).toEqual([
      {type: 'reasoning.text', text: 'ab', index: 0, format: FORMAT},
      {type: 'reasoning.encrypted', data: 'S', index: 0},
    ])
    expect(merger.size).toBe(0)
  })
})

describe("Google's extra_content", () => {
  it('a JSON answer keeps it as the call signature, and the next turn echoes it on the call', () => {
    const response = chatCodec.decodeResponse(googleAnswer)
    expect(response.parts).toEqual([
      {
        type: 'tool_call',
        id: 'function-call-1',
        name: 'ls',
        arguments: '{"dir":"."}',
        signature: {family: 'chat', value: EXTRA + JSON.stringify(EXTRA_CONTENT)},
      },
    ])
    const body = chatCodec.encodeRequest(
      turn2({role: 'assistant', parts: response.parts}, 'function-call-1'),
      'g',
    )
    expect(assistantOf(body).tool_calls).toEqual([
      {
        id: 'function-call-1',
        type: 'function',
        function: {name: 'ls', arguments: '{"dir":"."}'},
        extra_content: EXTRA_CONTENT,
      },
    ])
  })

  it('a stream gives it on the first delta of the call, in the call block start', () => {
    const sse = chatSse([
      {
        choices: [
          {
            index: 0,
            delta: {
              role: 'assistant',
              tool_calls: [
                {
                  index: 0,
                  id: 'function-call-1',
                  type: 'function',
                  function: {name: 'ls', arguments: '{"dir":"."}'},
                  extra_content: EXTRA_CONTENT,
                },
              ],
            },
          },
        ],
      },
      {choices: [{index: 0, delta: {}, finish_reason: 'tool_calls'}]},
      '[DONE]',
    ])
    const events = decodeAll(chatCodec.streamDecoder(), sse)
    expect(events).toContainEqual({
      type: 'block_start',
      index: 0,
      block: {
        type: 'tool_call',
        id: 'function-call-1',
        name: 'ls',
        signature: {family: 'chat', value: EXTRA + JSON.stringify(EXTRA_CONTENT)},
      },
    })
  })
})

describe('each client family carries them back to the chat upstream', () => {
  const ctx = (): CodecContext => {
    let n = 0
    return {carry: new BoundedCarry(), newId: (p) => `${p}${++n}`}
  }
  const tools = [{name: 'ls', input_schema: {type: 'object'}}]

  it('Claude Code: the details in the thinking signature, the call signature through the carry', () => {
    for (const answer of [openRouterAnswer, googleAnswer]) {
      const c = ctx()
      const client = messagesCodec.encodeResponse(chatCodec.decodeResponse(answer), c) as {
        content: Array<Record<string, unknown>>
      }
      if (answer === openRouterAnswer)
        expect(client.content[0]).toMatchObject({
          type: 'thinking',
          signature: `gwx1.chat.${DETAILS}${JSON.stringify([TEXT, ENCRYPTED])}`,
        })
      const call = client.content.find((b) => b.type === 'tool_use')!
      const next = messagesCodec.decodeRequest(
        {
          model: 'claude',
          max_tokens: 100,
          tools,
          messages: [
            {role: 'user', content: 'list'},
            {role: 'assistant', content: client.content},
            {role: 'user', content: [{type: 'tool_result', tool_use_id: call.id, content: 'a.txt'}]},
          ],
        },
        c,
      )
      const sent = assistantOf(chatCodec.encodeRequest(next, 'g'))
      if (answer === openRouterAnswer) expect(sent.reasoning_details).toEqual([TEXT, ENCRYPTED])
      else expect((sent.tool_calls as Array<Record<string, unknown>>)[0].extra_content).toEqual(EXTRA_CONTENT)
    }
  })

  it('Codex: a reasoning item for each, sent back as it came', () => {
    for (const answer of [openRouterAnswer, googleAnswer]) {
      const c = ctx()
      const client = responsesCodec.encodeResponse(chatCodec.decodeResponse(answer), c) as {
        output: Array<Record<string, unknown>>
      }
      expect(client.output.map((o) => o.type)).toEqual(['reasoning', 'function_call'])
      const next = responsesCodec.decodeRequest(
        {
          model: 'gpt-5',
          input: [
            {type: 'message', role: 'user', content: [{type: 'input_text', text: 'list'}]},
            ...client.output,
            {type: 'function_call_output', call_id: client.output[1].call_id, output: 'a.txt'},
          ],
          tools: [{type: 'function', name: 'ls', parameters: {type: 'object'}}],
        },
        c,
      )
      const sent = assistantOf(chatCodec.encodeRequest(next, 'g'))
      if (answer === openRouterAnswer) expect(sent.reasoning_details).toEqual([TEXT, ENCRYPTED])
      else {
        expect((sent.tool_calls as Array<Record<string, unknown>>)[0].extra_content).toEqual(EXTRA_CONTENT)
        // (the signature's reasoning item is no reasoning of its own)
        expect(sent).not.toHaveProperty('reasoning_content')
      }
    }
  })

  it('Gemini CLI: the call signature as its thoughtSignature, the details through the carry', () => {
    for (const answer of [openRouterAnswer, googleAnswer]) {
      const c = ctx()
      const client = geminiCodec.encodeResponse(chatCodec.decodeResponse(answer), c) as {
        candidates: Array<{content: {parts: Array<Record<string, unknown>>}}>
      }
      // Gemini CLI drops thought parts from the history it sends back
      const parts = client.candidates[0].content.parts.filter((p) => p.thought !== true)
      const next = geminiCodec.decodeRequest(
        {
          contents: [
            {role: 'user', parts: [{text: 'list'}]},
            {role: 'model', parts},
            {
              role: 'user',
              parts: [
                {
                  functionResponse: {
                    name: 'ls',
                    id: (parts[0].functionCall as {id: string}).id,
                    response: {output: 'a.txt'},
                  },
                },
              ],
            },
          ],
          tools: [{functionDeclarations: [{name: 'ls', parameters: {type: 'object'}}]}],
        },
        {...c, model: 'gemini-3-pro-preview'},
      )
      const sent = assistantOf(chatCodec.encodeRequest(next, 'g'))
      if (answer === openRouterAnswer) expect(sent.reasoning_details).toEqual([TEXT, ENCRYPTED])
      else expect((sent.tool_calls as Array<Record<string, unknown>>)[0].extra_content).toEqual(EXTRA_CONTENT)
    }
  })

  it('no other vendor gets them: another family encodes none, and an untranslated history is stripped', () => {
    const parts = [
      ...chatCodec.decodeResponse(openRouterAnswer).parts,
      ...chatCodec.decodeResponse(googleAnswer).parts,
    ]
    const request = turn2({role: 'assistant', parts}, 'tool_0_ls')
    for (const codec of [messagesCodec, responsesCodec, geminiCodec]) {
      const body = JSON.stringify(codec.encodeRequest(request, 'm'))
      expect(body).not.toContain('CiQBSIG')
      expect(body).not.toContain('GSIG==')
    }
    const history = {
      messages: [
        {role: 'user', content: 'list'},
        {
          role: 'assistant',
          content: [
            {type: 'thinking', thinking: 'I will list.', signature: `gwx1.chat.${DETAILS}[]`},
            {type: 'tool_use', id: 't', name: 'ls', input: {}},
          ],
        },
      ],
    }
    expect(stripWrapped('messages', history)).toBe(true)
    expect(JSON.stringify(history)).not.toContain('gwx1.')
  })
})
