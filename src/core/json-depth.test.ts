import {describe, expect, it} from 'vitest'

import {nestsDeeperThan} from './json-depth.js'

const bytes = (text: string) => Buffer.from(text, 'utf8')

describe('nestsDeeperThan', () => {
  it('counts objects and arrays, not brackets inside strings or escaped quotes', () => {
    expect(nestsDeeperThan(bytes('{"a":[{"b":1}]}'), 3)).toBe(false)
    expect(nestsDeeperThan(bytes('{"a":[{"b":[1]}]}'), 3)).toBe(true)
    expect(nestsDeeperThan(bytes('{"a":"[[[[[[\\"[[[[","b":{}}'), 2)).toBe(false)
    expect(nestsDeeperThan(bytes('{"a":"\\\\"}'), 1)).toBe(false)
  })

  it('finds 100 000 levels without recursing', () => {
    const deep = '['.repeat(100_000) + ']'.repeat(100_000)
    expect(nestsDeeperThan(bytes(deep), 512)).toBe(true)
    expect(() => JSON.stringify(JSON.parse(deep))).toThrow(RangeError)
  })
})
