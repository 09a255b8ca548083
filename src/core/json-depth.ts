/**
 * Whether a JSON text nests objects and arrays deeper than `limit`, found by one pass over the
 * bytes (strings skipped), without recursion. `JSON.parse` handles any depth, but code that walks
 * the parsed value recursively (`JSON.stringify` included) overflows the stack some thousands of
 * levels down: checking first turns such a body into a clear 400 instead of a crash.
 */
export function nestsDeeperThan(bytes: Uint8Array, limit: number): boolean {
  let depth = 0
  let inString = false
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]
    if (inString) {
      if (c === 0x5c)
        i++ // a backslash escapes the next byte
      else if (c === 0x22) inString = false
    } else if (c === 0x22) inString = true
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return true
    } else if (c === 0x7d || c === 0x5d) depth--
  }
  return false
}
