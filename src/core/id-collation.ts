/**
 * On every start oclif sorts the command ids with `localeCompare`, and ICU's collator costs 8-10
 * ms to set up on its first use: a twentieth of a command's start-up (a one-command CLI never
 * compares two ids, so never pays it). Ids are `[a-z0-9:-]`, where the root collation (English's
 * too, and what the C locale gets) orders character by character `-` < `:` < digits < letters.
 * Compared here with that rank, the sign is ICU's (the test checks every pair of single
 * characters, and every pair of strings up to four characters over `-:09az`). Anything else
 * still goes to ICU: another string, a locales or options argument, or a default locale with its
 * own order (`LC_ALL`, `LC_MESSAGES`, `LANG`; Danish sorts `aa` after `z`). Installed by
 * bin/run.js for the CLI process only.
 */

const ID = /^[a-z0-9:-]*$/

/** `-` 0, `:` 1, digits 2-11, letters 12-37: the root collation's order of the id characters. */
function rank(code: number): number {
  return code === 45 ? 0 : code === 58 ? 1 : code <= 57 ? code - 46 : code - 85
}

/** The root collation's order of two id-shaped strings: -1, 0 or 1. */
export function compareIds(a: string, b: string): number {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    const d = rank(a.charCodeAt(i)) - rank(b.charCodeAt(i))
    if (d !== 0) return d < 0 ? -1 : 1
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1
}

/** Whether the default locale the environment names collates ids the root way. */
export function rootCollation(env: NodeJS.ProcessEnv = process.env): boolean {
  return ['LC_ALL', 'LC_MESSAGES', 'LANG'].every((name) => {
    const value = env[name]
    // no `@modifier`: `C@x` makes ICU's default `en-US-posix`, which orders digits before `:`
    return !value || /^(?:C|POSIX|en)(?:[._-][^@]*)?$/.test(value)
  })
}

/** Puts the id fast path in front of `String.prototype.localeCompare`; returns the undo. */
export function collateIdsWithoutIcu(env: NodeJS.ProcessEnv = process.env): () => void {
  const icu = String.prototype.localeCompare
  if (!rootCollation(env)) return () => {}
  String.prototype.localeCompare = function localeCompare(this: unknown, that: string, ...rest: unknown[]) {
    if (
      rest.length === 0 &&
      typeof this === 'string' &&
      typeof that === 'string' &&
      ID.test(this) &&
      ID.test(that)
    ) {
      return compareIds(this, that)
    }
    return (icu as (this: unknown, ...args: unknown[]) => number).call(this, that, ...rest)
  } as typeof icu
  return () => {
    String.prototype.localeCompare = icu
  }
}
