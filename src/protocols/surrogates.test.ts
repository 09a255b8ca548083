/**
 * Surrogate pairs split across a chat upstream's stream deltas, and lone surrogates: every client
 * of a translated stream gets well-formed text (StreamTranslator `mended`). A lone surrogate
 * would go out escaped (`\ud83d`) in the client's JSON, which Codex's serde_json refuses.
 */
import {describe, expect, it} from 'vitest'

import {chatChunk, chatSse, chatToolChunk, parseSse} from './cm-test-helpers.js'
import type {Family} from './ir.js'
import {decodeClientRequest, StreamTranslator, translateResponseText} from './translate.js'

const EMOJI = '\u{1F600}'
const [HIGH, LOW] = [EMOJI[0], EMOJI[1]]
/** A lone surrogate as the client's JSON would carry it (a pair is written as the character itself). */
const ESCAPED_SURROGATE = /\\ud[89a-f][0-9a-f]{2}/i

const bodies: Record<Family, Record<string, unknown>> = {
  chat: {model: 'x', messages: [{role: 'user', content: 'hi'}], stream: true},
  messages: {model: 'x', max_tokens: 100, messages: [{role: 'user', content: 'hi'}], stream: true},
  responses: {model: 'x', input: 'hi', stream: true},
  gemini: {contents: [{role: 'user', parts: [{text: 'hi'}]}]},
}

/** The client's stream for a chat upstream's chunks, in `pieces` reads. */
function translated(client: Family, chunks: unknown[], reads = 1): string {
  const request = decodeClientRequest(
    client,
    bodies[client],
    client === 'gemini' ? ({model: 'x', stream: true} as never) : {},
  )
  const t = new StreamTranslator('chat', request, {newId: (p) => `${p}1`})
  const bytes = Buffer.from(chatSse([...chunks, '[DONE]']))
  let out = ''
  const step = Math.ceil(bytes.length / reads)
  for (let at = 0; at < bytes.length; at += step) out += t.push(bytes.subarray(at, at + step))
  return out + t.end()
}

/** Every delta's text of the client's stream (text, reasoning, tool arguments), in order. */
function deltas(client: Family, out: string): string[] {
  const texts: string[] = []
  for (const e of parseSse(out)) {
    if (e.data === '[DONE]') continue
    const d = JSON.parse(e.data) as Record<string, any>
    if (client === 'messages' && d.type === 'content_block_delta')
      texts.push(d.delta.text ?? d.delta.thinking ?? d.delta.partial_json ?? '')
    else if (client === 'responses' && /\.delta$/.test(String(d.type))) texts.push(d.delta)
    else if (client === 'chat') {
      const delta = d.choices?.[0]?.delta ?? {}
      for (const v of [delta.content, delta.reasoning_content, delta.tool_calls?.[0]?.function?.arguments])
        if (v) texts.push(v)
    } else if (client === 'gemini')
      for (const p of d.candidates?.[0]?.content?.parts ?? [])
        texts.push(p.text ?? (p.functionCall ? JSON.stringify(p.functionCall.args) : ''))
  }
  return texts.filter(Boolean)
}

const FAMILIES: Family[] = ['chat', 'messages', 'responses', 'gemini']

describe('a surrogate pair split across chat stream deltas', () => {
  for (const client of FAMILIES)
    it(`reaches a ${client} client whole, in the block's next delta`, () => {
      const out = translated(client, [
        chatChunk({role: 'assistant', content: ''}),
        chatChunk({content: `ok ${HIGH}`}),
        chatChunk({content: `${LOW}.`}),
        chatChunk({}, 'stop'),
      ])
      expect(out).not.toMatch(ESCAPED_SURROGATE)
      expect(out).not.toContain('\ufffd')
      expect(deltas(client, out)).toEqual(['ok ', `${EMOJI}.`])
    })

  it('holds the high surrogate when it is all a delta has (no empty delta goes out)', () => {
    const out = translated('messages', [
      chatChunk({role: 'assistant', content: ''}),
      chatChunk({content: 'a'}),
      chatChunk({content: HIGH}),
      chatChunk({content: LOW}),
      chatChunk({}, 'stop'),
    ])
    expect(deltas('messages', out)).toEqual(['a', EMOJI])
  })

  it('joins the pair across upstream reads as across chunks', () => {
    const chunks = [
      chatChunk({role: 'assistant', content: ''}),
      chatChunk({content: `x ${HIGH}`}),
      chatChunk({content: `${LOW} y`}),
      chatChunk({}, 'stop'),
    ]
    const out = translated('responses', chunks, 7)
    expect(out).not.toMatch(ESCAPED_SURROGATE)
    expect(deltas('responses', out).join('')).toBe(`x ${EMOJI} y`)
    const done = parseSse(out)
      .map((e) => JSON.parse(e.data) as {type: string; text?: string})
      .find((d) => d.type === 'response.output_text.done')
    expect(done?.text).toBe(`x ${EMOJI} y`)
  })

  it('joins a reasoning delta pair, and keeps it apart from the text block after it', () => {
    const out = translated('messages', [
      chatChunk({role: 'assistant', content: ''}),
      chatChunk({reasoning_content: `think ${HIGH}`}),
      chatChunk({reasoning_content: LOW}),
      chatChunk({content: 'answer'}),
      chatChunk({}, 'stop'),
    ])
    expect(out).not.toMatch(ESCAPED_SURROGATE)
    expect(deltas('messages', out)).toEqual(['think ', EMOJI, 'answer'])
  })

  for (const client of FAMILIES)
    it(`joins a pair split across a tool call's argument deltas for a ${client} client`, () => {
      const out = translated(client, [
        chatChunk({role: 'assistant', content: null}),
        chatToolChunk(0, {name: 'say', arguments: ''}, 'call_1'),
        chatToolChunk(0, {arguments: `{"text": "hi ${HIGH}`}),
        chatToolChunk(0, {arguments: `${LOW}"}`}),
        chatChunk({}, 'tool_calls'),
      ])
      expect(out).not.toMatch(ESCAPED_SURROGATE)
      expect(out).not.toContain('\ufffd')
      const args = client === 'gemini' ? deltas(client, out).at(-1) : deltas(client, out).join('')
      expect(JSON.parse(String(args))).toEqual({text: `hi ${EMOJI}`})
    })

  it('keeps the pairs of parallel calls apart, each to its own call', () => {
    const out = translated('messages', [
      chatChunk({role: 'assistant', content: null}),
      chatToolChunk(0, {name: 'a', arguments: ''}, 'call_1'),
      chatToolChunk(1, {name: 'b', arguments: ''}, 'call_2'),
      chatToolChunk(0, {arguments: `{"t": "${HIGH}`}),
      chatToolChunk(1, {arguments: `{"t": "${LOW}`}),
      chatToolChunk(0, {arguments: `${LOW}"}`}),
      chatToolChunk(1, {arguments: `"}`}),
      chatChunk({}, 'tool_calls'),
    ])
    expect(out).not.toMatch(ESCAPED_SURROGATE)
    const inputs = new Map<number, string>()
    for (const e of parseSse(out)) {
      const d = JSON.parse(e.data) as {type: string; index: number; delta?: {partial_json?: string}}
      if (d.delta?.partial_json !== undefined)
        inputs.set(d.index, (inputs.get(d.index) ?? '') + d.delta.partial_json)
    }
    // call 0 had the whole pair; call 1's low surrogate came with no high one before it
    expect([...inputs.values()].map((json) => JSON.parse(json))).toEqual([{t: EMOJI}, {t: '\ufffd'}])
  })
})

describe('a lone surrogate from a chat upstream', () => {
  for (const client of FAMILIES)
    it(`reaches a ${client} client as U+FFFD, held to the block's end or followed by no low one`, () => {
      const out = translated(client, [
        chatChunk({role: 'assistant', content: ''}),
        chatChunk({content: `a ${HIGH}`}),
        chatChunk({content: ` b ${LOW} c ${HIGH}`}),
        chatChunk({}, 'stop'),
      ])
      expect(out).not.toMatch(ESCAPED_SURROGATE)
      expect(deltas(client, out).join('')).toBe('a \ufffd b \ufffd c \ufffd')
    })

  it('in the middle of a delta, becomes U+FFFD in place', () => {
    const out = translated('chat', [
      chatChunk({role: 'assistant', content: ''}),
      chatChunk({content: `x${LOW}y${HIGH}z`}),
      chatChunk({}, 'stop'),
    ])
    expect(deltas('chat', out)).toEqual(['x\ufffdy\ufffdz'])
  })

  it('leaves well-formed text as it came, emoji and all', () => {
    const out = translated('messages', [
      chatChunk({role: 'assistant', content: ''}),
      chatChunk({content: `ok ${EMOJI}`}),
      chatChunk({content: ' done \u00e9'}),
      chatChunk({}, 'stop'),
    ])
    expect(deltas('messages', out)).toEqual([`ok ${EMOJI}`, ' done \u00e9'])
  })
})

describe('a lone surrogate in a non-stream chat answer', () => {
  /** A chat upstream's JSON answer: a text and a tool call's arguments, each with a lone surrogate escaped. */
  const answer = JSON.parse(
    '{"id":"c1","object":"chat.completion","model":"x","choices":[{"index":0,"message":{"role":"assistant",' +
      '"content":"cut \\ud83d here","tool_calls":[{"id":"t1","type":"function","function":{"name":"write",' +
      '"arguments":"{\\"text\\":\\"half \\ud83d\\"}"}}]},"finish_reason":"tool_calls"}],' +
      '"usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}}',
  ) as unknown
  const requests: Record<Family, Record<string, unknown>> = {
    chat: {
      ...bodies.chat,
      stream: false,
      tools: [{type: 'function', function: {name: 'write', parameters: {}}}],
    },
    messages: {...bodies.messages, stream: false, tools: [{name: 'write', input_schema: {type: 'object'}}]},
    responses: {
      ...bodies.responses,
      stream: false,
      tools: [{type: 'function', name: 'write', parameters: {}}],
    },
    gemini: {...bodies.gemini, tools: [{functionDeclarations: [{name: 'write', parameters: {}}]}]},
  }
  for (const client of FAMILIES)
    it(`reaches a ${client} client as U+FFFD, in the text and in the call's arguments`, () => {
      const request = decodeClientRequest(
        client,
        requests[client],
        client === 'gemini' ? ({model: 'x', stream: false} as never) : {},
      )
      const {text} = translateResponseText('chat', request, answer, {newId: (p) => `${p}1`})
      expect(text).not.toMatch(ESCAPED_SURROGATE)
      const out = JSON.stringify(JSON.parse(text))
      expect(out).toContain('cut \ufffd here')
      expect(out).toContain('half \ufffd')
    })

  it('leaves a pair and an escaped backslash before "ud83d" as they were', () => {
    const request = decodeClientRequest('chat', {...bodies.chat, stream: false}, {})
    const body = {
      id: 'c1',
      object: 'chat.completion',
      model: 'x',
      choices: [
        {index: 0, message: {role: 'assistant', content: `ok ${EMOJI} \\ud83d`}, finish_reason: 'stop'},
      ],
    }
    const {text} = translateResponseText('chat', request, body, {newId: (p) => `${p}1`})
    expect(JSON.parse(text).choices[0].message.content).toBe(`ok ${EMOJI} \\ud83d`)
  })
})
