// No import circles in src/: a module graph with a loop has no order in which its modules can be
// read one after the other, and a loop across folders means an arrow points the wrong way
// (docs/ARCHITECTURE.md). Counted: static `import ... from` and `export ... from` of values;
// `import type` and dynamic `import()` are not (they load nothing at start-up).
import {readFileSync, readdirSync} from 'node:fs'
import {dirname, join, relative, resolve} from 'node:path'

import {describe, expect, it} from 'vitest'

const SRC = join(import.meta.dirname, '..', 'src')

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, {withFileTypes: true}).flatMap((e) => {
    const path = join(dir, e.name)
    if (e.isDirectory()) return sourceFiles(path)
    return /\.tsx?$/.test(e.name) && !/\.test\.tsx?$/.test(e.name) ? [path] : []
  })
}

/** The relative modules a file loads statically, as paths relative to src/ without extension. */
function staticImports(file: string): string[] {
  const text = readFileSync(file, 'utf8')
  const found: string[] = []
  const statement = /^\s*(import|export)\s+(type\s+)?([\s\S]*?)\s*from\s*['"](\.[^'"]+)['"]/gm
  for (const m of text.matchAll(statement)) {
    if (m[2]) continue // import type / export type
    const names = m[3]
    // `import {type A, type B} from` loads nothing either
    const braces = /^\{([\s\S]*)\}$/.exec(names.trim())
    if (braces) {
      const items = braces[1]
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
      if (items.length > 0 && items.every((s) => s.startsWith('type '))) continue
    }
    found.push(m[4])
  }
  for (const m of text.matchAll(/^\s*import\s+['"](\.[^'"]+)['"]/gm)) found.push(m[1])
  return found.map((spec) => relative(SRC, resolve(dirname(file), spec)).replace(/\.js$/, ''))
}

/** Every elementary loop found by a depth-first walk (one per back edge), as module paths. */
function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = []
  const state = new Map<string, 'open' | 'done'>()
  const stack: string[] = []
  const visit = (node: string) => {
    state.set(node, 'open')
    stack.push(node)
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue
      if (state.get(next) === 'open') found.push([...stack.slice(stack.indexOf(next)), next])
      else if (!state.has(next)) visit(next)
    }
    stack.pop()
    state.set(node, 'done')
  }
  for (const node of [...graph.keys()].sort()) if (!state.has(node)) visit(node)
  return found
}

describe('the import graph of src/', () => {
  const graph = new Map(
    sourceFiles(SRC).map((file) => [relative(SRC, file).replace(/\.tsx?$/, ''), staticImports(file)]),
  )

  it('is read from the sources (the walk finds the modules and their imports)', () => {
    expect(graph.size).toBeGreaterThan(100)
    expect(graph.get('commands/status')?.length).toBeGreaterThan(0)
  })

  it('has no import circles', () => {
    expect(cycles(graph).map((c) => c.join(' -> '))).toEqual([])
  })
})
