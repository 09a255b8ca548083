import {describe, expect, it} from 'vitest'

import {mintRequestId} from './headers.js'

describe('minted request ids', () => {
  it('are req_ and 12 random bytes in hex, never the same twice (past the bytes drawn at once)', () => {
    const ids = Array.from({length: 2000}, () => mintRequestId())
    for (const id of ids) expect(id).toMatch(/^req_[0-9a-f]{24}$/)
    expect(new Set(ids).size).toBe(ids.length)
  })
})
