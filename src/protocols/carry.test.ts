import {describe, expect, it} from 'vitest'

import {BoundedCarry} from './carry.js'
import {unwrapOpaque, wrapOpaque} from './ir.js'

describe('BoundedCarry', () => {
  it('keeps what was set and forgets the oldest past its bounds', () => {
    const carry = new BoundedCarry(2)
    carry.set('a', [{type: 'text', text: 'A'}])
    carry.set('b', [{type: 'text', text: 'B'}])
    carry.set('c', [{type: 'text', text: 'C'}])
    expect(carry.get('a')).toBeUndefined()
    expect(carry.get('b')).toEqual([{type: 'text', text: 'B'}])
    expect(carry.size).toBe(2)
  })

  it('forgets by size too', () => {
    const carry = new BoundedCarry(100, 200)
    carry.set('a', [{type: 'text', text: 'x'.repeat(100)}])
    carry.set('b', [{type: 'text', text: 'y'.repeat(100)}])
    expect(carry.get('a')).toBeUndefined()
    expect(carry.get('b')).toBeDefined()
  })
})

describe('opaque wrapping', () => {
  it('gives a client its own vendor value as is and wraps a foreign one', () => {
    expect(wrapOpaque('messages', {family: 'messages', value: 'sig'})).toBe('sig')
    const wrapped = wrapOpaque('messages', {family: 'gemini', value: 'abc.def'})
    expect(wrapped).toBe('gwx1.gemini.abc.def')
    expect(unwrapOpaque('messages', wrapped)).toEqual({family: 'gemini', value: 'abc.def'})
    expect(unwrapOpaque('messages', 'sig')).toEqual({family: 'messages', value: 'sig'})
    expect(unwrapOpaque('chat', 'gwx1.nope.x')).toEqual({family: 'chat', value: 'gwx1.nope.x'})
    expect(unwrapOpaque('messages', 'gwx1.chat.')).toEqual({family: 'chat', value: ''})
  })
})
