import {describe, expect, it} from 'vitest'

import {ChatUsageChunkFilter} from './relay.js'

/** What the filter sends for `stream` cut into `pieces` (byte lengths, the rest in one). */
function filtered(stream: Buffer, pieces: number[]): Buffer {
  const filter = new ChatUsageChunkFilter()
  const out: Buffer[] = []
  let at = 0
  const take = (data: Uint8Array | string) =>
    out.push(typeof data === 'string' ? Buffer.from(data) : Buffer.from(data))
  for (const n of [...pieces, stream.length]) {
    if (at >= stream.length) break
    take(filter.push(stream.subarray(at, Math.min(stream.length, at + n))))
    at += n
  }
  take(filter.flush())
  return Buffer.concat(out)
}

const event = (payload: unknown, eol = '\n') => `data: ${JSON.stringify(payload)}${eol}${eol}`
const delta = (content: string, eol?: string) =>
  event({id: 'c1', choices: [{index: 0, delta: {content}, finish_reason: null}], usage: null}, eol)
const usageOnly = (eol?: string) =>
  event({id: 'c1', choices: [], usage: {prompt_tokens: 9, completion_tokens: 2, total_tokens: 11}}, eol)

const STREAMS: Record<string, string[]> = {
  'LF, the usage chunk before [DONE]': [
    delta(''),
    delta('Héllo ✓ wörld'),
    delta('!'),
    usageOnly(),
    'data: [DONE]\n\n',
  ],
  CRLF: [delta('a', '\r\n'), delta('ü', '\r\n'), usageOnly('\r\n'), 'data: [DONE]\r\n\r\n'],
  CR: [delta('a', '\r'), usageOnly('\r'), 'data: [DONE]\r\r'],
  'spaced JSON': [
    'data: {"choices" : [ {"delta":{"content":"x"}} ], "usage": null}\n\n',
    'data: {"choices" :  [ \t ], "usage": {"prompt_tokens": 1}}\n\n',
    'data: [DONE]\n\n',
  ],
  'no usage chunk': [delta('a'), delta('b'), 'data: [DONE]\n\n'],
  'an empty choices without usage (kept)': ['data: {"choices":[],"usage":null}\n\n', delta('z')],
  'extra blank lines': [delta('a') + '\n', usageOnly(), '\n\n' + delta('b')],
}

describe('the usage chunk a chat client did not ask for', () => {
  it.each(Object.entries(STREAMS))('%s: the same bytes out, however the stream is cut', (_name, events) => {
    const stream = Buffer.from(events.join(''))
    // one byte at a time: every chunk is decoded (no chunk ends with an event)
    const reference = filtered(stream, Array(stream.length).fill(1))
    // the usage-only event is dropped (a blank line before it with it), everything else kept
    const kept = events.filter((e) => !e.includes('"prompt_tokens"'))
    expect(reference.toString().includes('"prompt_tokens"')).toBe(false)
    expect(reference.toString().replace(/\n{2,}/g, '\n\n')).toBe(kept.join('').replace(/\n{2,}/g, '\n\n'))
    const byEvent = events.map((e) => Buffer.byteLength(e))
    const cuts = [
      byEvent,
      [byEvent[0] + (byEvent[1] ?? 0), ...byEvent.slice(2)],
      [3, 5, 7, 64, 2, 100],
      [stream.length],
    ]
    for (let size = 2; size < 40; size += 3) cuts.push(Array(Math.ceil(stream.length / size)).fill(size))
    for (const pieces of cuts)
      expect(filtered(stream, pieces).toString(), `cut ${pieces.join(',')}`).toBe(reference.toString())
  })

  it('passes a chunk that ends with its last event and holds no empty choices as it came (no copy)', () => {
    const filter = new ChatUsageChunkFilter()
    const chunk = Buffer.from(delta('a') + delta('b'))
    expect(filter.push(chunk)).toBe(chunk)
    // a character cut between two chunks is decoded whole
    const text = Buffer.from(delta('ü'))
    const cut = text.indexOf(Buffer.from('ü')) + 1
    expect(filter.push(text.subarray(0, cut))).toHaveLength(0)
    const rest = filter.push(text.subarray(cut))
    expect(String(rest)).toContain('ü"}')
  })

  it('drops the usage chunk from a chunk of many events and sends the others as slices of it', () => {
    const filter = new ChatUsageChunkFilter()
    const events = [delta('a'), delta('b'), usageOnly(), 'data: [DONE]\n\n']
    const out = filter.push(Buffer.from(events.join('')))
    expect(Buffer.isBuffer(out)).toBe(true)
    expect(String(out)).toBe(delta('a') + delta('b') + 'data: [DONE]\n\n')
    expect(filter.flush()).toBe('')
  })
})
