/**
 * A shallow JSON reader for history lines: reads the keys a parser uses and builds nothing else.
 * A Claude Code assistant line is mostly message text and content blocks nobody reads;
 * `JSON.parse` builds all of it (4-5 µs a 1 KB line on the bench machine, most of it the line's
 * structure), this walks past it: a string by searching for its closing quote, an object or array
 * by depth, and builds only the values asked for.
 *
 * What it gives: `undefined` exactly when `JSON.parse(text)` throws; otherwise, for a line whose
 * top level is an object, an array holding each asked key's value in the order of the keys, equal
 * to what `JSON.parse` gives for that key: the last of a repeated key, `null` kept, an absent key
 * `undefined`, an escaped key matched by its decoded name. A key asked with keys of its own
 * (`['message', [...]]`) holds such an array for an object value and `undefined` for any other
 * value (the parsers read a non-object there as absent). A top level that is not an object gives
 * every key absent.
 *
 * Why it is exact:
 * - a line holding any raw control character goes to `JSON.parse` (which rejects one inside a
 *   string and accepts tab, CR and LF between tokens; writers escape them all), so the walker sees
 *   only spaces between tokens and no control character inside a string;
 * - every escape is checked (`\` then one of `"\/bfnrt`, or `u` and four hex digits), every number
 *   against JSON's number syntax, every literal, bracket, colon and comma;
 * - whatever the walker rejects goes to `JSON.parse` too, which has the last word: a walker too
 *   strict would cost time, never give a different answer;
 * - a built string without a backslash is its slice, with one `JSON.parse` of its slice; a number
 *   of at most 15 plain digits is summed by hand (exact below 2^53), any other `Number(slice)` (the
 *   conversion `JSON.parse` makes of valid JSON number syntax); an object or array asked whole is
 *   `JSON.parse` of its slice.
 * The tests compare it with `JSON.parse` on thousands of generated and corrupted lines.
 */

/** A key to read: its name, or its name and the keys to read inside its value when that is an object. */
export type PickKey = string | readonly [string, readonly PickKey[]]

/** The values of the keys asked, in their order (see the module comment). */
export type Picked = unknown[]

/** A compiled list of keys: names grouped by length, so that most keys are passed over at once. */
interface Level {
  names: string[]
  subs: Array<Level | null>
  /** `byLength[n]`: indexes into `names` of the names of length `n`. */
  byLength: number[][]
  /** First character of each name. */
  first: number[]
}

export type Picker = (text: string) => Picked | undefined

const QUOTE = 34
const COMMA = 44
const COLON = 58
const OPEN_OBJ = 123
const CLOSE_OBJ = 125
const OPEN_ARR = 91
const CLOSE_ARR = 93
const MINUS = 45
const DOT = 46
const ZERO = 48
const NINE = 57
const SPACE = 32

/** Any raw control character: the line goes to `JSON.parse` (rare: writers escape them). */
const CONTROL = /[\u0000-\u001F]/
/** The rest of a string holding a backslash, each escape checked, through its closing quote. */
const ESCAPED = /[^"\\]*(?:\\(?:["\\/bfnrt]|u[0-9A-Fa-f]{4})[^"\\]*)*"/y

function compile(keys: readonly PickKey[]): Level {
  const names = keys.map((k) => (typeof k === 'string' ? k : k[0]))
  const subs = keys.map((k) => (typeof k === 'string' ? null : compile(k[1])))
  const byLength: number[][] = []
  names.forEach((n, i) => (byLength[n.length] ??= []).push(i))
  for (let n = 0; n < byLength.length; n++) byLength[n] ??= []
  return {names, subs, byLength, first: names.map((n) => n.charCodeAt(0))}
}

/*
 * The walker's state for the line being read. Every function below takes the index of a token's
 * first character (never whitespace: a control character sends the line to `JSON.parse`, so only
 * spaces can separate tokens) and returns the index after it, or -1 when the text is not JSON.
 */
/** The first backslash at or after some index at or before the current one; the line's length: none left. */
let backslash = 0
/** Whether the last string passed over held a backslash. */
let escaped = false
/** The last number read with `build`. */
let numberValue = 0
/** The last value built by `value` or `object`. */
let built: unknown
/** Open containers of `skip`, innermost last. */
const stack: number[] = []

/** `i` just after a string's opening quote. */
function string(s: string, i: number): number {
  const q = s.indexOf('"', i)
  if (backslash < i) {
    const b = s.indexOf('\\', i)
    backslash = b === -1 ? s.length : b
  }
  if (backslash > q && q !== -1) {
    escaped = false
    return q + 1
  }
  return escapedString(s, i)
}

function escapedString(s: string, i: number): number {
  escaped = true
  ESCAPED.lastIndex = i
  return ESCAPED.test(s) ? ESCAPED.lastIndex : -1
}

/** Past spaces (most lines have none: callers test the first character themselves). */
function spaces(s: string, i: number): number {
  while (s.charCodeAt(i) === SPACE) i++
  return i
}

/** A number; `numberValue` set when `build`. */
function number(s: string, i: number, build: boolean): number {
  const start = i
  let c = s.charCodeAt(i)
  if (c === MINUS) c = s.charCodeAt(++i)
  let v = 0
  if (c === ZERO) c = s.charCodeAt(++i)
  else if (c > ZERO && c <= NINE) {
    do {
      v = v * 10 + (c - ZERO)
      c = s.charCodeAt(++i)
    } while (c >= ZERO && c <= NINE)
  } else return -1
  let plain = i - start <= 15
  if (c === DOT) {
    plain = false
    c = s.charCodeAt(++i)
    if (!(c >= ZERO && c <= NINE)) return -1
    do c = s.charCodeAt(++i)
    while (c >= ZERO && c <= NINE)
  }
  if (c === 101 || c === 69) {
    plain = false
    c = s.charCodeAt(++i)
    if (c === 43 || c === MINUS) c = s.charCodeAt(++i)
    if (!(c >= ZERO && c <= NINE)) return -1
    do c = s.charCodeAt(++i)
    while (c >= ZERO && c <= NINE)
  }
  if (build) numberValue = plain ? (s.charCodeAt(start) === MINUS ? -v : v) : Number(s.slice(start, i))
  return i
}

/** `"key"`, spaces, colon, spaces: the index of the member's value. */
function member(s: string, i: number): number {
  if (s.charCodeAt(i) !== QUOTE) return -1
  i = string(s, i + 1)
  if (i === -1) return -1
  if (s.charCodeAt(i) === SPACE) i = spaces(s, i)
  if (s.charCodeAt(i) !== COLON) return -1
  return s.charCodeAt(++i) === SPACE ? spaces(s, i) : i
}

/** Any value, built nowhere: objects and arrays by depth. */
function skip(s: string, i: number): number {
  let depth = 0
  for (;;) {
    const c = s.charCodeAt(i)
    if (c === QUOTE) i = string(s, i + 1)
    else if (c === OPEN_OBJ || c === OPEN_ARR) {
      i++
      if (s.charCodeAt(i) === SPACE) i = spaces(s, i)
      if (s.charCodeAt(i) === c + 2) i++
      else {
        stack[depth++] = c
        if (c === OPEN_OBJ) i = member(s, i)
        if (i === -1) return -1
        continue
      }
    } else if ((c >= ZERO && c <= NINE) || c === MINUS) i = number(s, i, false)
    else if (c === 116 && s.startsWith('true', i)) i += 4
    else if (c === 102 && s.startsWith('false', i)) i += 5
    else if (c === 110 && s.startsWith('null', i)) i += 4
    else return -1
    if (i === -1) return -1
    // After a value: close containers, or go on to the next element.
    for (;;) {
      if (depth === 0) return i
      if (s.charCodeAt(i) === SPACE) i = spaces(s, i)
      const d = s.charCodeAt(i)
      const open = stack[depth - 1]
      if (d === COMMA) {
        i++
        if (s.charCodeAt(i) === SPACE) i = spaces(s, i)
        if (open === OPEN_OBJ) i = member(s, i)
        if (i === -1) return -1
        break
      }
      if (d !== open + 2) return -1
      depth--
      i++
    }
  }
}

/** A value built whole (into `built`). */
function value(s: string, i: number): number {
  const c = s.charCodeAt(i)
  let end: number
  if (c === QUOTE) {
    end = string(s, i + 1)
    if (end !== -1) built = JSON.parse(s.slice(i, end))
  } else if ((c >= ZERO && c <= NINE) || c === MINUS) {
    end = number(s, i, true)
    built = numberValue
  } else {
    end = skip(s, i)
    if (end !== -1)
      built = c === 116 ? true : c === 102 ? false : c === 110 ? null : JSON.parse(s.slice(i, end))
  }
  return end
}

/** `i` at `{`: the values of the level's keys (into `built`). */
function object(s: string, i: number, level: Level): number {
  const out: Picked = new Array(level.names.length)
  i++
  if (s.charCodeAt(i) === SPACE) i = spaces(s, i)
  if (s.charCodeAt(i) === CLOSE_OBJ) {
    built = out
    return i + 1
  }
  for (;;) {
    if (s.charCodeAt(i) !== QUOTE) return -1
    const k = i + 1
    const e = string(s, k)
    if (e === -1) return -1
    let at = -1
    if (escaped) at = level.names.indexOf(JSON.parse(s.slice(i, e)) as string)
    else if (e - 1 - k < level.byLength.length) {
      const c = s.charCodeAt(k)
      for (const n of level.byLength[e - 1 - k])
        if (level.first[n] === c && s.startsWith(level.names[n], k)) {
          at = n
          break
        }
    }
    i = e
    if (s.charCodeAt(i) === SPACE) i = spaces(s, i)
    if (s.charCodeAt(i) !== COLON) return -1
    i++
    if (s.charCodeAt(i) === SPACE) i = spaces(s, i)
    if (at === -1) i = skip(s, i)
    else {
      const sub = level.subs[at]
      if (sub === null) i = value(s, i)
      else if (s.charCodeAt(i) === OPEN_OBJ) i = object(s, i, sub)
      else {
        i = skip(s, i)
        built = undefined
      }
      if (i !== -1) out[at] = built
    }
    if (i === -1) return -1
    if (s.charCodeAt(i) === SPACE) i = spaces(s, i)
    const d = s.charCodeAt(i)
    if (d === CLOSE_OBJ) {
      built = out
      return i + 1
    }
    if (d !== COMMA) return -1
    i++
    if (s.charCodeAt(i) === SPACE) i = spaces(s, i)
  }
}

/** `JSON.parse(text)`, or `undefined` when it throws. */
function parseOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text) as unknown
  } catch {
    return undefined
  }
}

/** The keys of `level` read from a value `JSON.parse` built (for lines the walker leaves to it). */
function project(v: unknown, level: Level): Picked {
  const out: Picked = new Array(level.names.length)
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return out
  const o = v as Record<string, unknown>
  level.names.forEach((n, at) => {
    if (!Object.hasOwn(o, n)) return
    const sub = level.subs[at]
    const x = o[n]
    out[at] =
      sub === null
        ? x
        : x !== null && typeof x === 'object' && !Array.isArray(x)
          ? project(x, sub)
          : undefined
  })
  return out
}

/** The keys of `level` read by `JSON.parse`: `undefined` when it throws. */
function parsed(text: string, level: Level): Picked | undefined {
  const v = parseOrUndefined(text)
  return v === undefined ? undefined : project(v, level)
}

/** A picker for `keys` (compile once, call per line). */
export function picker(keys: readonly PickKey[]): Picker {
  const level = compile(keys)
  return (text: string): Picked | undefined => {
    if (CONTROL.test(text)) return parsed(text, level)
    backslash = -1
    const i = text.charCodeAt(0) === SPACE ? spaces(text, 0) : 0
    if (text.charCodeAt(i) !== OPEN_OBJ) return parsed(text, level)
    let end = object(text, i, level)
    if (end !== -1 && text.charCodeAt(end) === SPACE) end = spaces(text, end)
    if (end !== text.length) return parsed(text, level)
    const out = built as Picked
    built = undefined
    return out
  }
}
