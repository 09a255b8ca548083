import {describe, expect, it} from 'vitest'

import {midnightIn, parseBound} from './usage-dates.js'

describe('usage --since/--until', () => {
  it('a day is midnight in the zone; --until counts the day whole', () => {
    expect(parseBound('2026-11-20', {flag: '--since'})).toBe(Date.parse('2026-11-20T00:00:00Z') / 1000)
    expect(parseBound('20261120', {flag: '--until'})).toBe(Date.parse('2026-11-21T00:00:00Z') / 1000)
    // Paris is UTC+1 in November, New York UTC-5; a day over a DST change (UTC+2 before it)
    expect(parseBound('2026-11-20', {flag: '--since', timezone: 'Europe/Paris'})).toBe(
      Date.parse('2026-11-19T23:00:00Z') / 1000,
    )
    expect(midnightIn(2026, 11, 20, 'America/New_York')).toBe(Date.parse('2026-11-20T05:00:00Z'))
    expect(midnightIn(2026, 10, 25, 'Europe/Paris')).toBe(Date.parse('2026-10-24T22:00:00Z'))
    expect(midnightIn(2026, 10, 26, 'Europe/Paris')).toBe(Date.parse('2026-10-25T23:00:00Z'))
  })

  it('durations and Unix seconds as elsewhere; anything else exits 2 naming the forms', () => {
    const now = Date.parse('2026-11-20T12:00:00Z')
    expect(parseBound('1h', {flag: '--since', nowMs: now})).toBe(now / 1000 - 3600)
    expect(parseBound('1795300000', {flag: '--until'})).toBe(1795300000)
    expect(() => parseBound('2026-02-30', {flag: '--since'})).toThrow(/not a calendar day/)
    expect(() => parseBound('yesterday', {flag: '--until'})).toThrow(
      /--until "yesterday" is not a time: use a day/,
    )
    expect(() => parseBound('x', {flag: '--since'})).toThrow(
      expect.objectContaining({exitCode: 2, code: 'invalid_since'}),
    )
  })
})
