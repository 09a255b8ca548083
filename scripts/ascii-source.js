// The build's ASCII pass, for every JavaScript file it writes to dist/: the bundles (scripts/bundle.js,
// a rollup plugin) and the state validator (scripts/gen-validators.js, written after them).

/**
 * `code` with every character past ASCII written as a `\uXXXX` escape; `parse` gives its syntax
 * tree (rollup's), `fileName` names it in an error. V8 keeps each module's source text in the heap
 * for as long as the module lives, as one byte a character only when every character fits in
 * Latin-1: one `≤` in a message makes the whole file two bytes a character (the daemon's lifecycle
 * chunk, 256 KB, held 501 KB of source; 0.25 MB of the idle daemon's RSS). An escape means the
 * same character in a string, a template's cooked text, a regular expression (a surrogate pair's
 * two escapes are one code point under the `u` flag), an identifier and a comment. Two places where
 * it would not: a tagged template's raw text (`String.raw`) and a character that follows a
 * backslash (an identity escape): the build stops there instead of changing a meaning. Undefined
 * for code that is ASCII already.
 */
export function asciiEscape(code, fileName, parse) {
  if (!/[\u0080-\uffff]/.test(code)) return undefined
  const raw = []
  const visit = (node) => {
    if (node === null || typeof node !== 'object') return
    if (Array.isArray(node)) return node.forEach(visit)
    if (node.type === 'TaggedTemplateExpression') raw.push([node.quasi.start, node.quasi.end])
    for (const key in node) if (key !== 'type' && key !== 'start' && key !== 'end') visit(node[key])
  }
  visit(parse(code))
  let out = ''
  let last = 0
  for (let i = 0; i < code.length; i++) {
    const unit = code.charCodeAt(i)
    if (unit < 0x80) continue
    const where = `${fileName}: ${JSON.stringify(code.slice(Math.max(0, i - 40), i + 2))}`
    if (raw.some(([start, end]) => i >= start && i < end))
      throw new Error(`${where}: a non-ASCII character in a tagged template (its raw text would change)`)
    let slashes = 0
    while (code.charCodeAt(i - 1 - slashes) === 0x5c) slashes++
    if (slashes % 2 === 1) throw new Error(`${where}: a non-ASCII character after a backslash`)
    out += code.slice(last, i) + `\\u${unit.toString(16).padStart(4, '0')}`
    last = i + 1
  }
  return out + code.slice(last)
}

/** {@link asciiEscape} as a rollup plugin, for each chunk it renders. */
export const asciiSource = {
  name: 'ascii-source',
  renderChunk(code, chunk) {
    const out = asciiEscape(code, chunk.fileName, (text) => this.parse(text))
    return out === undefined ? null : {code: out, map: null}
  },
}
