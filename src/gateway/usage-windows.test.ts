import {describe, expect, it} from 'vitest'

import type {UsageEntry} from '../store/usage-entries.js'
import {burnRate, projection, usageWindows} from './usage-windows.js'

const at = (hhmm: string, day = '2026-11-20') => Date.parse(`${day}T${hhmm}:00Z`)
const entry = (hhmm: string, tokens = 100, model = 'claude-sonnet-4-5', day?: string): UsageEntry => ({
  ts: at(hhmm, day),
  model,
  provider: null,
  inputTokens: tokens,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheCreationTokens: 0,
  cache1hTokens: 0,
})
const iso = (ms: number) => new Date(ms).toISOString().slice(11, 16)
const shape = (entries: UsageEntry[], now = at('23:59', '2026-11-21')) =>
  usageWindows(entries, now).map((w) => `${w.gap ? 'gap ' : ''}${iso(w.start)}-${iso(w.end)}:${w.requests}`)

describe('5-hour windows (ccusage rules)', () => {
  it('a window starts at the first request floored to the hour and lasts 5 hours', () => {
    expect(shape([entry('10:37')])).toEqual(['10:00-15:00:1'])
    // 14:59 is inside 10:00-15:00; exactly 5 hours after the start still is (ccusage: "more than")
    expect(shape([entry('10:37'), entry('14:59'), entry('15:00')])).toEqual(['10:00-15:00:3'])
    // 15:01 is past the window's 5 hours: a new window, floored to 15:00, with no gap between
    expect(shape([entry('10:37'), entry('14:59'), entry('15:01')])).toEqual([
      '10:00-15:00:2',
      '15:00-20:00:1',
    ])
  })

  it('a gap of more than 5 hours since the last request starts a new window after a gap window', () => {
    // last request 10:20, next 16:45: gap window from 15:20 (5 h after 10:20) to 16:45
    expect(shape([entry('10:05'), entry('10:20'), entry('16:45')])).toEqual([
      '10:00-15:00:2',
      'gap 15:20-16:45:0',
      '16:00-21:00:1',
    ])
    // exactly 5 hours since the last request is no gap, but 5.5 h since the start is a new window
    expect(shape([entry('10:30'), entry('15:30')])).toEqual(['10:00-15:00:1', '15:00-20:00:1'])
  })

  it('continuous work chains windows on the hour of the request that overflows', () => {
    const entries = ['09:10', '11:00', '13:00', '14:10', '15:20', '17:00', '19:40', '20:30'].map((t) =>
      entry(t),
    )
    // 14:10 is 5 h 10 min after 09:00: it opens 14:00-19:00; 19:40 is past 19:00: 19:00-00:00
    expect(shape(entries)).toEqual(['09:00-14:00:3', '14:00-19:00:3', '19:00-00:00:2'])
  })

  it('sorts its input and sums tokens and models per window', () => {
    const ws = usageWindows(
      [entry('11:00', 50, 'b'), entry('10:00', 100, 'a'), entry('10:30', 25, 'a')],
      at('12:00'),
    )
    expect(ws).toHaveLength(1)
    expect(ws[0]).toMatchObject({requests: 3, inputTokens: 175, firstAt: at('10:00'), lastAt: at('11:00')})
    expect(ws[0].models.map((m) => [m.model, m.requests, m.inputTokens])).toEqual([
      ['a', 2, 125],
      ['b', 1, 50],
    ])
  })

  it('is active while now is before its end and within 5 hours of its last request', () => {
    const one = [entry('10:00'), entry('11:00')]
    expect(usageWindows(one, at('12:00'))[0].active).toBe(true)
    expect(usageWindows(one, at('14:59'))[0].active).toBe(true)
    expect(usageWindows(one, at('15:00'))[0].active).toBe(false)
    expect(usageWindows(one, at('12:00', '2026-11-21'))[0].active).toBe(false)
  })

  it('burn rate from first to last request, and the projection to the window end', () => {
    // 10:00 and 10:30: 6 000 tokens in 30 minutes = 200 tokens/min; $0.90 in 30 min = $1.80/h
    const w = usageWindows([entry('10:00', 1000), entry('10:30', 5000)], at('11:00'))[0]
    const rate = burnRate(w, 0.9)!
    expect(rate.tokensPerMinute).toBeCloseTo(200, 9)
    expect(rate.costPerHour).toBeCloseTo(1.8, 9)
    // at 11:00, 240 minutes are left: 6 000 + 200 x 240 = 54 000 tokens, $0.90 + $1.80 x 4 = $8.10
    expect(projection(w, 0.9, at('11:00'))).toEqual({
      totalTokens: 54_000,
      costUSD: expect.closeTo(8.1, 9),
      remainingMinutes: 240,
    })
    // unpriced stays unpriced; one request has no rate; an ended window no projection
    expect(burnRate(w, null)!.costPerHour).toBeNull()
    expect(burnRate(usageWindows([entry('10:00')], at('11:00'))[0], 1)).toBeNull()
    const ended = usageWindows([entry('10:00', 1000), entry('10:30', 5000)], at('16:00'))[0]
    expect(projection(ended, 0.9, at('16:00'))).toBeNull()
  })
})
