/**
 * `--since` / `--until` of the usage reports: a duration back from now (30m, 1h, 7d), Unix
 * seconds, or a calendar day (YYYY-MM-DD or YYYYMMDD, as ccusage takes it) in the report's time
 * zone. A day given to `--until` counts whole (the bound is the next midnight).
 */
import {UsageError} from '../core/errors.js'
import {parseSince} from './logs.js'

/** Milliseconds `zone` is ahead of UTC at `ms`. */
function offsetAt(ms: number, zone: string): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  }).formatToParts(new Date(ms))
  const n = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0)
  return (
    Date.UTC(n('year'), n('month') - 1, n('day'), n('hour'), n('minute'), n('second')) - (ms - (ms % 1000))
  )
}

/** Unix ms of midnight starting `y-m-d` in `zone`. */
export function midnightIn(y: number, m: number, d: number, zone = 'UTC'): number {
  const guess = Date.UTC(y, m - 1, d)
  let t = guess - offsetAt(guess, zone)
  t = guess - offsetAt(t, zone)
  return t
}

/** A `--since`/`--until` value as Unix seconds. */
export function parseBound(
  text: string,
  options: {flag: '--since' | '--until'; timezone?: string; nowMs?: number},
): number {
  const value = text.trim()
  const day = /^(\d{4})-?(\d{2})-?(\d{2})$/.exec(value)
  if (day) {
    const [y, m, d] = [Number(day[1]), Number(day[2]), Number(day[3])]
    const check = new Date(Date.UTC(y, m - 1, d))
    if (check.getUTCFullYear() !== y || check.getUTCMonth() !== m - 1 || check.getUTCDate() !== d)
      throw new UsageError(`${options.flag} "${text}" is not a calendar day.`, {code: 'invalid_date'})
    const next = options.flag === '--until' ? 1 : 0
    const at = new Date(Date.UTC(y, m - 1, d + next))
    return (
      midnightIn(at.getUTCFullYear(), at.getUTCMonth() + 1, at.getUTCDate(), options.timezone ?? 'UTC') / 1000
    )
  }
  try {
    return parseSince(value, options.nowMs)
  } catch {
    throw new UsageError(
      `${options.flag} "${text}" is not a time: use a day (2026-11-20 or 20261120), a duration back from now (30m, 1h, 7d) or Unix seconds.`,
      {code: 'invalid_since'},
    )
  }
}
