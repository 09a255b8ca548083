import {writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {tempHome} from '../../../test/helpers/cli.js'
import {claudeParser} from './claude.js'
import {codexParser} from './codex.js'
import {geminiParser} from './gemini.js'
import {readLines} from './lines.js'

/** A small deterministic generator (mulberry32), so that a failure can be replayed. */
function random(seed: number): () => number {
  let a = seed
  return () => {
    a = (a + 0x6d2b79f5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const PIECES = [
  'x',
  'plain ascii text ',
  '"usage":{"input_tokens":1}',
  '"usage": {',
  '"usage":null',
  '"token_count"',
  '"tokens"',
  '"sessionId"',
  'caf\u00e9 ',
  '\u3042\u3044\u3046',
  '\u{1f600}',
  '\ufffd',
  '\u00a0',
  '\t',
  ' ',
  '\r',
]
/** Bytes that are not UTF-8: a lone continuation, a truncated sequence, an invalid byte. */
const BAD = [
  Buffer.from([0x80]),
  Buffer.from([0xe3, 0x81]),
  Buffer.from([0xff]),
  Buffer.from([0xf0, 0x9f, 0x98]),
]

/** One line's bytes (no newline): pieces of text, often a run past the decode window, or past a read. */
function line(next: () => number, bad: boolean, huge: boolean): Buffer {
  const parts: Buffer[] = []
  const roll = next()
  if (roll < 0.05) return Buffer.from(' \t '.slice(0, Math.floor(next() * 4)))
  if (roll > 0.85) parts.push(Buffer.from('y'.repeat(20_000 + Math.floor(next() * 60_000))))
  if (huge) parts.push(Buffer.from('z'.repeat((1 << 20) + Math.floor(next() * 5000))))
  for (let n = Math.floor(next() * 12); n > 0; n--) {
    parts.push(Buffer.from(PIECES[Math.floor(next() * PIECES.length)]))
    if (bad && next() < 0.05) parts.push(BAD[Math.floor(next() * BAD.length)])
  }
  return Buffer.concat(parts)
}

/** What `readLines` must give: the file split at every newline, each line decoded alone. */
function reference(bytes: Buffer, from: number, size: number, holds: (line: string) => boolean) {
  const lines: Array<{text: string; offset: number}> = []
  let others = 0
  let start = from
  let end = from
  for (let nl = bytes.indexOf(10, start); nl !== -1 && nl < size; nl = bytes.indexOf(10, start)) {
    const text = bytes.toString('utf8', start, nl)
    if (text.trim() !== '') {
      if (holds(text)) lines.push({text, offset: start})
      else others++
    }
    start = nl + 1
    end = start
  }
  return {lines, others, end}
}

describe('readLines', () => {
  let home: string
  let cleanup: () => void
  beforeEach(() => ({home, cleanup} = tempHome()))
  afterEach(() => cleanup())

  it('decodes only the lines holding a marker, counts the others, passes blank ones over', async () => {
    const path = join(home, 'h.jsonl')
    const lines = [
      '{"type":"user","text":"no usage here"}',
      '   ',
      '\u00a0\t\u3000',
      '{"message":{"usage":{"input_tokens":1}}}',
      '{"text":"caf\u00e9","x":"token_count"}',
      '{"usage": {"spaced":true}}',
      '',
      '{"last":"usage":{"but no newline"',
    ]
    writeFileSync(path, lines.join('\n'))
    const seen: Array<{text: string; offset: number}> = []
    let others = 0
    const {holds} = claudeParser({path, keyPath: path, project: null})
    const size = Buffer.byteLength(lines.join('\n'))
    const end = await readLines(
      path,
      0,
      size,
      (l) => seen.push(l),
      holds,
      () => others++,
    )
    expect(seen.map((l) => l.text)).toEqual([lines[3], lines[5]])
    // Byte offsets: the é before it is two bytes.
    expect(seen[0].offset).toBe(Buffer.byteLength(lines.slice(0, 3).join('\n') + '\n'))
    expect(others).toBe(2)
    // The last line has no newline yet: not read, and the offset stays before it.
    expect(end).toBe(size - Buffer.byteLength(lines[7]))
    // Without `holds` every non-blank line is decoded, at the same offsets.
    const all: string[] = []
    await readLines(path, 0, size, (l) => all.push(l.text))
    expect(all).toEqual([lines[0], lines[3], lines[4], lines[5]])
  })

  it('gives every line, its byte offset and the end exactly as splitting the bytes would, in any text', async () => {
    const ctx = {path: 'p', keyPath: 'p', project: null}
    const tests = [claudeParser(ctx).holds, codexParser(ctx).holds, geminiParser(ctx).holds]
    for (let seed = 1; seed <= 12; seed++) {
      const next = random(seed)
      // Some files all ASCII, some with valid UTF-8 only, some with invalid bytes too.
      const kind = seed % 3
      const parts: Buffer[] = []
      // Files of 1.5-4.5 MB (several reads), every fourth with a line longer than a read.
      const count = 200 + Math.floor(next() * 400)
      for (let n = count; n > 0; n--) {
        let l = line(next, kind === 2, seed % 4 === 0 && n === count >> 1)
        if (kind === 0) l = Buffer.from(l.toString('latin1').replace(/[^\x20-\x7e]/g, 'a'))
        parts.push(l, Buffer.from('\n'))
      }
      // A last line still being written: no newline yet.
      parts.push(Buffer.from('{"partial":"usage":{'))
      const bytes = Buffer.concat(parts)
      const path = join(home, `h${seed}.jsonl`)
      writeFileSync(path, bytes)
      const holds = tests[seed % 3]
      // From the start, and from a line start in the middle to a size short of the file's.
      const mid = bytes.indexOf(10, Math.floor(bytes.length / 2)) + 1
      for (const [from, size] of [
        [0, bytes.length],
        [mid, bytes.length - Math.floor(next() * 5000)],
      ]) {
        const seen: Array<{text: string; offset: number}> = []
        let others = 0
        const end = await readLines(
          path,
          from,
          size,
          (l) => seen.push(l),
          holds,
          () => others++,
        )
        const want = reference(bytes, from, size, holds)
        expect(seen.length, `seed ${seed} from ${from}`).toBe(want.lines.length)
        for (let i = 0; i < seen.length; i++) expect(seen[i], `seed ${seed} line ${i}`).toEqual(want.lines[i])
        expect(others, `seed ${seed}`).toBe(want.others)
        expect(end, `seed ${seed}`).toBe(want.end)
      }
    }
  })
})
