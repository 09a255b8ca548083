/**
 * Dollar amounts as gwctl prints them: without float noise, the same rule in every `--json`
 * (core/base-command.ts, output.ts `printJson`) and in the tables. No imports: the daemon's
 * budgets format amounts with it too.
 */

/**
 * Significant digits of a dollar amount in `--json` and in tables: 15, the most a double always
 * carries, so the float noise of a sum (0.30000000000000004, 1.2240000000000002) goes and nothing
 * else changes (under 5e-15 of the amount: a sum of $50 moves less than 3e-13, below the 12
 * decimals to which the tests compare `usage --json` with ccusage and with `/metrics`).
 */
export const USD_DIGITS = 15

/** A dollar amount without its float noise ({@link USD_DIGITS}); what tables format too. */
export function roundUsd(usd: number): number {
  return Number.isFinite(usd) && usd !== 0 ? Number(usd.toPrecision(USD_DIGITS)) : usd
}

/** Keys whose numbers are dollars wherever they occur: `costUSD`, `usd`, `costPerHour`, `perHour`, `cost`. */
const DOLLAR_KEY = /usd|cost|perhour/i
/** Keys that are dollars in an object whose `unit` is `usd` (a budget: spent, limit, reserved). */
const BUDGET_AMOUNTS = new Set(['spent', 'limit', 'reserved'])

/**
 * A copy of a `--json` value with every dollar amount rounded ({@link roundUsd}): the numbers
 * under a {@link DOLLAR_KEY} key, and a budget's amounts when its unit is USD. Every command's
 * `--json` goes through it (core/base-command.ts), so the rule is one for all.
 */
export function roundDollars<T>(value: T): T {
  return walk(value, undefined, false) as T
}

function walk(value: unknown, key: string | undefined, usdUnit: boolean): unknown {
  if (typeof value === 'number')
    return key !== undefined && (DOLLAR_KEY.test(key) || (usdUnit && BUDGET_AMOUNTS.has(key)))
      ? roundUsd(value)
      : value
  if (value === null || typeof value !== 'object') return value
  if (Array.isArray(value)) return value.map((v) => walk(v, key, false))
  // a class instance (a Date, an error) is left to its own toJSON
  const proto = Object.getPrototypeOf(value)
  if (proto !== Object.prototype && proto !== null) return value
  const o = value as Record<string, unknown>
  const usd = o.unit === 'usd'
  const out: Record<string, unknown> = {}
  for (const k of Object.keys(o)) out[k] = walk(o[k], k, usd)
  return out
}
