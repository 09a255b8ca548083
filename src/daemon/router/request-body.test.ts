/**
 * The request body as the proxy reads and sends it: the entrance's Latin-1 check against a UTF-8
 * parse, and the bodies spliced for an upstream model or a chat stream's usage against a parse
 * and re-encode, over generated bodies (a seeded generator: the same cases every run).
 */
import {describe, expect, it} from 'vitest'

import type {Family} from '../../store/schema.js'
import {bodyFacts, prepare, topLevelFields} from './request-body.js'

/** xorshift32: deterministic cases. */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1
  return () => {
    x ^= x << 13
    x >>>= 0
    x ^= x >>> 17
    x ^= x << 5
    x >>>= 0
    return x / 0x100000000
  }
}

const TEXTS = [
  'hi',
  'héllo',
  '🎉 party',
  'a "quoted" \\ path',
  'line\nbreak\ttab',
  '\u2028',
  'ünïcödé',
  'model',
  '',
]

function randomValue(r: () => number, depth: number): unknown {
  const k = Math.floor(r() * (depth > 3 ? 4 : 7))
  switch (k) {
    case 0:
      return TEXTS[Math.floor(r() * TEXTS.length)]
    case 1:
      return Math.floor(r() * 2000) - 1000 + (r() < 0.3 ? 0.5 : 0)
    case 2:
      return r() < 0.5
    case 3:
      return null
    case 4:
    case 5: {
      const o: Record<string, unknown> = {}
      const n = Math.floor(r() * 4)
      for (let i = 0; i < n; i++)
        o[r() < 0.15 ? 'model' : `k${Math.floor(r() * 9)}é`] = randomValue(r, depth + 1)
      return o
    }
    default:
      return Array.from({length: Math.floor(r() * 4)}, () => randomValue(r, depth + 1))
  }
}

/** A JSON text of `value` written as clients do: compact or spaced, `\/` and `\u` escapes at times. */
function write(r: () => number, value: unknown): string {
  let text = JSON.stringify(value, null, r() < 0.3 ? 2 : undefined)
  if (r() < 0.3) text = text.replaceAll('é', '\\u00e9')
  if (r() < 0.3) text = text.replaceAll('/', '\\/')
  return r() < 0.2 ? ` \n${text}\r\n ` : text
}

const ok = (text: string): boolean => {
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}

describe('the Latin-1 check', () => {
  it('accepts exactly the bodies whose UTF-8 text parses, over 20 000 mutated bodies', () => {
    const r = rng(7)
    const bytes = [0x22, 0x5c, 0x7b, 0x7d, 0x5b, 0x5d, 0x2c, 0x3a, 0x0a, 0x01, 0x1f, 0x20, 0x30, 0x2d, 0x65]
    const high = [0x80, 0xbf, 0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0xff, 0xfe, 0xc0]
    let accepted = 0
    for (let i = 0; i < 20_000; i++) {
      const doc = Buffer.from(write(r, {model: 'm', messages: [randomValue(r, 0)], x: randomValue(r, 1)}))
      const out = [...doc]
      const edits = 1 + Math.floor(r() * 3)
      for (let e = 0; e < edits; e++) {
        const at = Math.floor(r() * (out.length + 1))
        const pool = r() < 0.5 ? bytes : high
        const byte = pool[Math.floor(r() * pool.length)]
        const op = r()
        if (op < 0.4) out.splice(at, 0, byte)
        else if (op < 0.7) out.splice(at, 1)
        else out[at] = byte
      }
      const body = Buffer.from(out)
      const utf8 = ok(body.toString('utf8'))
      expect(ok(body.toString('latin1')), body.toString('latin1')).toBe(utf8)
      if (utf8) accepted++
    }
    // the cases are not all broken (nor all whole)
    expect(accepted).toBeGreaterThan(2_000)
    expect(accepted).toBeLessThan(18_000)
  })

  it('reads model, stream and stream_options as a UTF-8 parse does, or says it cannot (a non-ASCII model)', () => {
    const r = rng(11)
    for (let i = 0; i < 3_000; i++) {
      const models = ['claude-sonnet-4-5', 'modèle', 'a\\/b', 5, null]
      const o: Record<string, unknown> = {messages: [randomValue(r, 0)]}
      if (r() < 0.9) o.model = models[Math.floor(r() * models.length)]
      if (r() < 0.6) o.stream = r() < 0.7 ? true : r() < 0.5 ? false : 'true'
      if (r() < 0.4) o.stream_options = r() < 0.5 ? {include_usage: true} : r() < 0.5 ? {} : null
      if (r() < 0.5) o.store = r() < 0.5 ? false : r() < 0.5 ? true : 'false'
      const body = Buffer.from(write(r, o))
      const facts = bodyFacts(JSON.parse(body.toString('latin1')))!
      const exact = JSON.parse(body.toString('utf8')) as Record<string, unknown>
      if (facts.model !== undefined)
        expect(facts.model).toBe(typeof exact.model === 'string' ? exact.model : null)
      else expect(exact.model).toBe('modèle')
      expect(facts.stream).toBe(exact.stream === true)
      expect(facts.storeOff).toBe(exact.store === false)
      const so = exact.stream_options as {include_usage?: boolean} | null | undefined
      expect(facts.streamOptions).toBe(
        so === undefined ? 'none' : so?.include_usage === true ? 'usage' : 'other',
      )
    }
    expect(bodyFacts([1])).toBeUndefined()
    expect(bodyFacts('x')).toBeUndefined()
  })
})

describe('bodies for an upstream', () => {
  /** What a parse and re-encode sends: the reference the spliced bytes must mean. */
  function reference(body: Buffer, family: Family, model: string | null): unknown {
    const parsed = JSON.parse(body.toString('utf8')) as Record<string, unknown>
    const copy = {...parsed}
    if (model !== null) copy.model = model
    const options = parsed.stream_options as Record<string, unknown> | undefined
    if (family === 'chat' && parsed.stream === true && options?.include_usage !== true)
      copy.stream_options = {...options, include_usage: true}
    return copy
  }

  it('mean what a parse and re-encode means, for 5 000 generated bodies, and keep the bytes when they can', () => {
    const r = rng(23)
    let splicedBytes = 0
    for (let i = 0; i < 5_000; i++) {
      const family: Family = r() < 0.5 ? 'chat' : 'messages'
      const entries: Array<[string, unknown]> = [
        ['messages', [randomValue(r, 0)]],
        ['metadata', randomValue(r, 1)],
      ]
      if (r() < 0.9) entries.push(['model', r() < 0.8 ? 'asked' : 'modèle'])
      if (r() < 0.7) entries.push(['stream', r() < 0.8])
      if (r() < 0.2) entries.push(['stream_options', r() < 0.5 ? {include_usage: true} : {}])
      if (r() < 0.05) entries.push(['model', 'later'])
      // any order of the members, duplicates written out as they are
      entries.sort(() => r() - 0.5)
      const sep = r() < 0.3 ? ', ' : ','
      const text = `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${write(r, v)}`).join(sep)}${r() < 0.05 ? ',"mod\\u0065l":"escaped"' : ''}}`
      const body = Buffer.from(text)
      const prepared = prepare({family, method: 'POST', url: '/x', headers: {}, body})
      for (const model of [null, 'glm-4.6', 'up/stream "quoted" é']) {
        const target = model ?? prepared.requestedModel
        const out = prepared.bodyFor(target)
        expect(JSON.parse(out.toString('utf8')), text).toEqual(
          reference(body, family, model === null ? null : model),
        )
        // the client's own bytes are all there, in their order, only the model's value replaced
        // (and a usage member added before the closing brace): counted only where a re-encode
        // would have changed them (blanks between the members)
        const at = topLevelFields(body, false)?.modelAt
        if (out !== body && at && sep === ', ') {
          const end = body.lastIndexOf('}')
          if (
            out.subarray(0, at[0]).equals(body.subarray(0, at[0])) &&
            out.includes(body.subarray(at[1], end))
          )
            splicedBytes++
        }
      }
    }
    expect(splicedBytes).toBeGreaterThan(1_000)
  })

  it('splices a model into the bytes and adds usage to a chat stream before the closing brace', () => {
    const body = Buffer.from('{ "model" : "a" , "stream":true, "messages":[{"content":"é \\/"}] }\n')
    const chat = prepare({family: 'chat', method: 'POST', url: '/x', headers: {}, body})
    expect(chat.requestedModel).toBe('a')
    expect(chat.stream).toBe(true)
    expect(chat.addedUsage).toBe(true)
    expect(chat.bodyFor('a').toString()).toBe(
      '{ "model" : "a" , "stream":true, "messages":[{"content":"é \\/"}] ,"stream_options":{"include_usage":true}}\n',
    )
    expect(chat.bodyFor('b"c').toString()).toBe(
      '{ "model" : "b\\"c" , "stream":true, "messages":[{"content":"é \\/"}] ,"stream_options":{"include_usage":true}}\n',
    )
    const messages = prepare({family: 'messages', method: 'POST', url: '/x', headers: {}, body})
    expect(messages.addedUsage).toBe(false)
    expect(messages.bodyFor('a')).toBe(body)
    expect(messages.bodyFor('glm').toString()).toBe(
      '{ "model" : "glm" , "stream":true, "messages":[{"content":"é \\/"}] }\n',
    )
  })

  it('takes what the entrance read (facts) instead of reading the bytes again', () => {
    const body = Buffer.from('{"model":"on-the-wire","stream":false}')
    const prepared = prepare({
      family: 'messages',
      method: 'POST',
      url: '/x',
      headers: {},
      body,
      facts: {
        model: 'from-facts',
        stream: true,
        streamOptions: 'none',
        maxTokens: undefined,
        maxOutputTokens: undefined,
        storeOff: false,
      },
    })
    expect(prepared.requestedModel).toBe('from-facts')
    expect(prepared.stream).toBe(true)
  })
})
