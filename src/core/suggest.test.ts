import {describe, expect, it} from 'vitest'

import {closest, editDistance} from './suggest.js'

describe('suggestions', () => {
  it('measures edits', () => {
    expect(editDistance('base-urll', 'base-url')).toBe(1)
    expect(editDistance('', 'abc')).toBe(3)
  })

  it('suggests only what is close enough to be a typo', () => {
    expect(closest('base-urll', ['base-url', 'api-key'])).toBe('base-url')
    expect(closest('API-KEY', ['base-url', 'api-key'])).toBe('api-key')
    expect(closest('zzz', ['base-url', 'api-key'])).toBeUndefined()
  })
})
