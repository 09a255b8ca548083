import {afterEach, describe, expect, it, vi} from 'vitest'

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
