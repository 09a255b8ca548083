import {afterEach, describe, expect, it} from 'vitest'

import {collateIdsWithoutIcu, compareIds, rootCollation} from './id-collation.js'

const icu = String.prototype.localeCompare

function strings(alphabet: string, maxLength: number): string[] {
  const all = ['']
  let previous = ['']
  for (let length = 1; length <= maxLength; length++) {
    previous = previous.flatMap((p) => [...alphabet].map((c) => p + c))
    all.push(...previous)
  }
  return all
}

describe('command id collation without ICU', () => {
  let undo = () => {}
  afterEach(() => undo())

  it('orders every id-shaped pair up to four characters as ICU does', () => {
    // one of each class at both ends of it: the order inside a class is the code order
    const all = strings('-:09az', 4)
    const wrong: string[] = []
    for (const a of all) {
      for (const b of all) {
        if (compareIds(a, b) !== Math.sign(icu.call(a, b, 'en'))) wrong.push(`${a} vs ${b}`)
      }
    }
    expect(all).toHaveLength(1555)
    expect(wrong.slice(0, 10)).toEqual([])
  })

  it('orders the single characters as ICU does', () => {
    const chars = [...'-:0123456789abcdefghijklmnopqrstuvwxyz']
    expect([...chars].sort(compareIds)).toEqual([...chars].sort((a, b) => icu.call(a, b, 'en')))
  })

  it('sorts real command ids like ICU and leaves every other call to ICU', () => {
    undo = collateIdsWithoutIcu({LANG: 'en_US.UTF-8'})
    expect(String.prototype.localeCompare).not.toBe(icu)
    const ids = [
      'video:models',
      'video',
      'usage:rescan',
      'usage',
      'gateway:start',
      'key:issue',
      'a-b',
      'ab',
      'a:b',
      'a0',
    ]
    expect([...ids].sort((a, b) => a.localeCompare(b))).toEqual([...ids].sort((a, b) => icu.call(a, b, 'en')))
    // outside the fast path: capitals, accents, options
    expect('a'.localeCompare('B')).toBe(icu.call('a', 'B'))
    expect('é'.localeCompare('f')).toBe(icu.call('é', 'f'))
    expect('a'.localeCompare('A', undefined, {sensitivity: 'base'})).toBe(0)
    undo()
    expect(String.prototype.localeCompare).toBe(icu)
  })

  it('stays out of the way under a locale with its own order', () => {
    expect(rootCollation({LANG: 'da_DK.UTF-8'})).toBe(false)
    expect(rootCollation({LANG: 'en_US.UTF-8', LC_ALL: 'lt_LT'})).toBe(false)
    expect(rootCollation({LC_MESSAGES: 'sv_SE'})).toBe(false)
    // a modifier turns the C locale into ICU's en-US-posix, which orders digits before `:`
    expect(rootCollation({LANG: 'C@x'})).toBe(false)
    expect(rootCollation({LC_ALL: 'en_US.UTF-8@euro'})).toBe(false)
    expect(rootCollation({LANG: 'en_GB.UTF-8'})).toBe(true)
    expect(rootCollation({})).toBe(true)
    expect(rootCollation({LANG: 'C.UTF-8', LC_ALL: 'POSIX'})).toBe(true)
    undo = collateIdsWithoutIcu({LANG: 'da_DK.UTF-8'})
    expect(String.prototype.localeCompare).toBe(icu)
  })
})
