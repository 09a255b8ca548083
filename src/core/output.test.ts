import {afterEach, describe, expect, it, vi} from 'vitest'
import fc from 'fast-check'

import {printFields, printable, renderTable} from './output.js'

describe('terminal safety of printed data', () => {
  afterEach(() => vi.restoreAllMocks())

  it('shows control characters of table cells as \\xHH instead of sending them', () => {
    const rows = [{name: 'laptop\u001b[2J\u001b]0;owned\u0007', model: 'm\r\u009b31m'}]
    const text = renderTable(rows, [
      {header: 'NAME', value: (r) => r.name},
      {header: 'MODEL', value: (r) => r.model},
    ])
    // eslint-disable-next-line no-control-regex
    expect(text).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/)
    expect(text).toContain('laptop\\x1b[2J\\x1b]0;owned\\x07')
    expect(text).toContain('m\\x0d\\x9b31m')
  })

  it('does the same for key: value fields, and leaves ordinary text alone', () => {
    const written: string[] = []
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      written.push(String(chunk))
      return true
    })
    printFields({agent: 'a\u001b[31mred', note: 'Ada’s laptop ✓\tok'})
    expect(written.join('')).toBe('agent: a\\x1b[31mred\nnote:  Ada’s laptop ✓\tok\n')
    expect(printable('plain – text')).toBe('plain – text')
  })
})

describe('tables', () => {
  it('aligns columns by terminal width, right-aligns numbers, and leaves no trailing spaces', () => {
    const rows = [
      {name: 'claude-code', model: 'claude-sonnet-4-5', tokens: 1234},
      {name: '日本語エージェント', model: '', tokens: 7},
    ]
    const text = renderTable(rows, [
      {header: 'AGENT', value: (r) => r.name},
      {header: 'MODEL', value: (r) => r.model},
      {header: 'TOKENS', value: (r) => r.tokens, align: 'right'},
    ])
    expect(text.split('\n')).toEqual([
      'AGENT               MODEL              TOKENS',
      'claude-code         claude-sonnet-4-5    1234',
      '日本語エージェント                          7',
    ])
  })

  // The renderer replaced cli-table3 (for start-up time); it must print exactly what cli-table3 did.
  it('prints what cli-table3 with the same settings printed, for any cells', async () => {
    const {default: Table} = await import('cli-table3')
    const blank = {top: '', 'top-mid': '', 'top-left': '', 'top-right': '', bottom: '', 'bottom-mid': ''}
    const chars = {
      ...blank,
      'bottom-left': '',
      'bottom-right': '',
      left: '',
      'left-mid': '',
      mid: '',
      'mid-mid': '',
      right: '',
      'right-mid': '',
      middle: '  ',
    }
    const cell = fc.oneof(
      fc.string(),
      fc.constantFrom('', ' ', '日本語', 'e\u0301', '👍🏽', 'a\nbb\nccc', 'x y  ', '½ ✓'),
      fc.integer().map(String),
    )
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom<'left' | 'right'>('left', 'right'), {minLength: 1, maxLength: 4}),
        fc.array(fc.array(cell, {minLength: 4, maxLength: 4}), {maxLength: 6}),
        (aligns, rows) => {
          const columns = aligns.map((align, i) => ({
            header: `COL${i}`,
            value: (r: string[]) => r[i],
            align,
          }))
          const table = new Table({
            head: columns.map((c) => c.header),
            colAligns: aligns,
            chars,
            style: {head: [], border: [], 'padding-left': 0, 'padding-right': 0},
          })
          for (const r of rows) table.push(columns.map((c) => printable(c.value(r))))
          const expected = table
            .toString()
            .split('\n')
            .map((l) => l.trimEnd())
            .join('\n')
          expect(renderTable(rows, columns)).toBe(expected)
        },
      ),
      {numRuns: 500},
    )
  })
})
