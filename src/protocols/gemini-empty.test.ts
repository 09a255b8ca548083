/**
 * Gemini's empty STOP (research56 F4): an answer that ends `finishReason: STOP` with no part at
 * all, or with thoughts only, right after a tool result (AstrBot #6735, google/adk-js #344). A
 * translated client never gets it as a whole turn (Claude Code: `end_turn` with no block, "API
 * returned an empty or malformed response (HTTP 200)"): the stream's start waits for the first
 * thought or answer part, so an answer with no part has sent nothing (the relay sends the request
 * again); one whose thoughts streamed ends with an error event in the client's shape.
 */
import {describe, expect, it} from 'vitest'

import {EMPTY_ANSWER, EMPTY_ANSWER_STATUS, emptyAnswer} from './gemini-parts.js'
import {geminiCodec} from './gemini.js'
import type {Family} from './ir.js'
import {decodeClientRequest, StreamTranslator} from './translate.js'

/** Claude Code's tool loop, the tool result last. */
const messagesBody = {
  model: 'claude-sonnet-4-5',
  max_tokens: 1000,
  stream: true,
  thinking: {type: 'adaptive'},
  tools: [
    {
      name: 'Read',
      description: 'r',
      input_schema: {type: 'object', properties: {file_path: {type: 'string'}}},
    },
  ],
  messages: [
    {role: 'user', content: 'read a'},
    {role: 'assistant', content: [{type: 'tool_use', id: 'toolu_1', name: 'Read', input: {file_path: 'a'}}]},
    {role: 'user', content: [{type: 'tool_result', tool_use_id: 'toolu_1', content: 'file body'}]},
  ],
}

const responsesBody = {
  model: 'gpt-5',
  stream: true,
  input: [
    {type: 'message', role: 'user', content: 'read a'},
    {type: 'function_call', call_id: 'call_1', name: 'read', arguments: '{"path":"a"}'},
    {type: 'function_call_output', call_id: 'call_1', output: 'file body'},
  ],
  tools: [
    {type: 'function', name: 'read', parameters: {type: 'object', properties: {path: {type: 'string'}}}},
  ],
}

const chatBody = {
  model: 'gpt-4o',
  stream: true,
  messages: [
    {role: 'user', content: 'read a'},
    {
      role: 'assistant',
      content: null,
      tool_calls: [{id: 'call_1', type: 'function', function: {name: 'read', arguments: '{"path":"a"}'}}],
    },
    {role: 'tool', tool_call_id: 'call_1', content: 'file body'},
  ],
  tools: [
    {
      type: 'function',
      function: {name: 'read', parameters: {type: 'object', properties: {path: {type: 'string'}}}},
    },
  ],
}

const BODIES: Record<Exclude<Family, 'gemini'>, unknown> = {
  messages: messagesBody,
  responses: responsesBody,
  chat: chatBody,
}

/** The notes' two streams (research56 F4, /tmp/r56/empty.ts). */
const NOTHING = [
  `{"candidates":[{"content":{"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":900,"totalTokenCount":900},"modelVersion":"gemini-3.5-flash"}`,
]
const THOUGHTS_ONLY = [
  `{"candidates":[{"content":{"role":"model","parts":[{"text":"Let me think","thought":true}]},"index":0}],"usageMetadata":{"promptTokenCount":900,"thoughtsTokenCount":40}}`,
  `{"candidates":[{"content":{"role":"model","parts":[{"text":"","thoughtSignature":"c2ln"}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":900,"thoughtsTokenCount":40,"totalTokenCount":940}}`,
]

function translate(
  client: Exclude<Family, 'gemini'>,
  chunks: string[],
): {text: string; first: string[]; translator: StreamTranslator} {
  const translator = new StreamTranslator('gemini', decodeClientRequest(client, BODIES[client], {}), {})
  const first: string[] = []
  translator.onFirstOutput = (text) => first.push(text)
  let text = ''
  for (const c of chunks) text += translator.push(Buffer.from(`data: ${c}\r\n\r\n`))
  text += translator.end()
  return {text: first.join('') + text, first, translator}
}

describe("Gemini's empty STOP, translated (research56 F4)", () => {
  it('no part at all, to a Messages client: the error alone, no message_start (nothing was sent)', () => {
    const {text, first, translator} = translate('messages', NOTHING)
    expect(text).not.toContain('message_start')
    expect(text).not.toContain('end_turn')
    expect(text).toBe(
      `event: error\ndata: ${JSON.stringify({type: 'error', error: {type: 'overloaded_error', message: EMPTY_ANSWER}})}\n\n`,
    )
    // the first output is the error: the relay keeps it from the client (and sends the request again)
    expect(first).toHaveLength(1)
    expect(translator.error).toMatchObject({
      status: EMPTY_ANSWER_STATUS,
      said: EMPTY_ANSWER,
      truncated: false,
    })
  })

  it('thoughts, then STOP with a bare signature, to a Messages client: the thinking, then overloaded_error, no end_turn', () => {
    const {text, translator} = translate('messages', THOUGHTS_ONLY)
    expect(text).toContain('event: message_start')
    expect(text).toContain('"thinking":"Let me think"')
    expect(text).not.toContain('message_delta')
    expect(text).not.toContain('end_turn')
    expect(text.endsWith(`"error":{"type":"overloaded_error","message":"${EMPTY_ANSWER}"}}\n\n`)).toBe(true)
    expect(translator.error?.said).toBe(EMPTY_ANSWER)
    // the thoughts' tokens are on the row
    expect(translator.billedUsage()).toMatchObject({inputTokens: 900, outputTokens: 40, reasoningTokens: 40})
  })

  it('the same to a Responses client: response.failed with server_error', () => {
    expect(translate('responses', NOTHING).text).not.toContain('response.created')
    const {text} = translate('responses', THOUGHTS_ONLY)
    expect(text).toContain('response.created')
    expect(text).not.toContain('response.completed')
    expect(text).toMatch(
      /event: response\.failed\ndata: .*"error":\{"code":"server_error","message":"the upstream answered nothing/,
    )
  })

  it('the same to a chat client: an error event with server_error, no finish_reason stop', () => {
    expect(translate('chat', NOTHING).text).toMatch(
      /^data: \{"error":\{"message":"the upstream answered nothing.*"type":"server_error"/,
    )
    const {text} = translate('chat', THOUGHTS_ONLY)
    expect(text).not.toContain('"finish_reason":"stop"')
    expect(text).toContain('"type":"server_error"')
  })

  it('a thought and STOP in one chunk, nothing sent before: the error alone (may go again)', () => {
    const one = `{"candidates":[{"content":{"role":"model","parts":[{"text":"hmm","thought":true}]},"finishReason":"STOP","index":0}]}`
    const {text} = translate('messages', [one])
    expect(text).not.toContain('message_start')
    expect(text).toContain('overloaded_error')
  })
})

describe("a Gemini stream's start waits for its first part", () => {
  const dec = () => geminiCodec.streamDecoder({newId: (p) => `${p}_n`})

  it("a chunk without a part gives nothing; the start comes with the first text, its id and model the first chunk's", () => {
    const d = dec()
    expect(
      d.event(
        undefined,
        JSON.stringify({responseId: 'r1', modelVersion: 'g', usageMetadata: {promptTokenCount: 3}}),
      ),
    ).toEqual([])
    expect(d.event(undefined, JSON.stringify({candidates: [{content: {parts: [{text: 'Hi'}]}}]}))).toEqual([
      {type: 'start', id: 'r1', model: 'g'},
      {type: 'block_start', index: 0, block: {type: 'text'}},
      {type: 'text_delta', index: 0, text: 'Hi'},
    ])
  })

  it("a bare signature's events are held and follow the start", () => {
    const d = dec()
    expect(
      d.event(
        undefined,
        JSON.stringify({candidates: [{content: {parts: [{text: '', thoughtSignature: 'S'}]}}]}),
      ),
    ).toEqual([])
    const out = d.event(
      undefined,
      JSON.stringify({candidates: [{content: {parts: [{text: 'Hi'}]}, finishReason: 'STOP'}]}),
    )
    expect(out.slice(0, 3)).toEqual([
      {type: 'start', id: 'resp_n', model: ''},
      {type: 'block_start', index: 0, block: {type: 'reasoning'}},
      {type: 'reasoning_opaque', index: 0, signature: {family: 'gemini', value: 'S'}},
    ])
    expect(out.at(-1)).toEqual({type: 'stop', reason: 'end'})
  })

  it('an empty thought (a signature on `thought: true` with no text) is held as a bare signature: a STOP after it is the error alone', () => {
    const d = dec()
    expect(
      d.event(
        undefined,
        JSON.stringify({
          candidates: [{content: {parts: [{text: '', thought: true, thoughtSignature: 'S'}]}}],
        }),
      ),
    ).toEqual([])
    expect(
      d.event(undefined, JSON.stringify({candidates: [{content: {role: 'model'}, finishReason: 'STOP'}]})),
    ).toEqual([{type: 'error', status: 529, message: EMPTY_ANSWER}])
    // (followed by an answer, its events follow the start as a bare signature's)
    const whole = dec()
    expect(
      whole.event(undefined, JSON.stringify({candidates: [{content: {parts: [{text: '', thought: true}]}}]})),
    ).toEqual([])
    const out = whole.event(
      undefined,
      JSON.stringify({candidates: [{content: {parts: [{text: 'Hi'}]}, finishReason: 'STOP'}]}),
    )
    expect(out[0]).toMatchObject({type: 'start'})
    expect(out).toContainEqual({type: 'text_delta', index: 1, text: 'Hi'})
    expect(out.at(-1)).toEqual({type: 'stop', reason: 'end'})
  })

  it('a call and STOP is whole (tool_use); MAX_TOKENS and a filter with no part are their stops, not empty', () => {
    const call = dec().event(
      undefined,
      JSON.stringify({
        candidates: [{content: {parts: [{functionCall: {name: 'f', args: {}}}]}, finishReason: 'STOP'}],
      }),
    )
    expect(call[0]).toMatchObject({type: 'start'})
    expect(call.at(-1)).toEqual({type: 'stop', reason: 'tool_use'})
    const max = dec().event(
      undefined,
      JSON.stringify({candidates: [{content: {role: 'model'}, finishReason: 'MAX_TOKENS'}]}),
    )
    expect(max.map((e) => e.type)).toEqual(['start', 'stop'])
    expect(max.at(-1)).toEqual({type: 'stop', reason: 'max_tokens'})
    const safety = dec().event(undefined, JSON.stringify({candidates: [{finishReason: 'SAFETY'}]}))
    expect(safety.at(-1)).toEqual({type: 'stop', reason: 'content_filter'})
  })

  it('a failed finish with nothing before it is the error alone (nothing sent: it may fall back)', () => {
    expect(
      dec().event(undefined, JSON.stringify({candidates: [{finishReason: 'MALFORMED_FUNCTION_CALL'}]})),
    ).toEqual([
      {type: 'error', status: 502, message: 'upstream produced a malformed function call', answered: true},
    ])
  })
})

describe('emptyAnswer: a generateContent answer with no answer part', () => {
  const answer = (candidate: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    candidates: [{index: 0, ...candidate}],
    usageMetadata: {promptTokenCount: 9},
    ...extra,
  })
  it('STOP with no part, no content, thoughts only, a bare signature; no candidate at all', () => {
    expect(emptyAnswer(answer({content: {role: 'model'}, finishReason: 'STOP'}))).toBe(true)
    expect(emptyAnswer(answer({finishReason: 'STOP'}))).toBe(true)
    expect(
      emptyAnswer(answer({content: {parts: [{text: 'hmm', thought: true}]}, finishReason: 'STOP'})),
    ).toBe(true)
    expect(emptyAnswer(answer({content: {parts: [{text: '', thoughtSignature: 'S'}]}}))).toBe(true)
    expect(emptyAnswer({usageMetadata: {promptTokenCount: 9}})).toBe(true)
  })
  it('not a text, a call, MAX_TOKENS, a filter, a blocked prompt or an error', () => {
    expect(emptyAnswer(answer({content: {parts: [{text: 'ok'}]}, finishReason: 'STOP'}))).toBe(false)
    expect(
      emptyAnswer(answer({content: {parts: [{functionCall: {name: 'f', args: {}}}]}, finishReason: 'STOP'})),
    ).toBe(false)
    expect(emptyAnswer(answer({content: {role: 'model'}, finishReason: 'MAX_TOKENS'}))).toBe(false)
    expect(emptyAnswer(answer({finishReason: 'SAFETY'}))).toBe(false)
    expect(emptyAnswer({promptFeedback: {blockReason: 'SAFETY'}})).toBe(false)
    expect(emptyAnswer({error: {code: 500, message: 'x'}})).toBe(false)
  })
})
