/** Members and elements found in a JSON body's bytes, and an object written again around edits. */
import {describe, expect, it} from 'vitest'

import {arrayElements, topMembers, withMembers} from './json-spans.js'

const b = (s: string) => Buffer.from(s)
const text = (body: Buffer, span: {start: number; end: number}) => body.toString('utf8', span.start, span.end)

describe('topMembers', () => {
  it('finds each member, its value, past escaped quotes, brackets in strings and nesting', () => {
    const body = b(' { "a" : "x\\"}]" ,"b":[1,{"c":"]"}], "n":-1.5e3,"t":true ,"z":null}\n')
    const members = topMembers(body)!
    expect(members.map((m) => m.name)).toEqual(['a', 'b', 'n', 't', 'z'])
    expect(members.map((m) => body.toString('utf8', m.value, m.end))).toEqual([
      '"x\\"}]"',
      '[1,{"c":"]"}]',
      '-1.5e3',
      'true',
      'null',
    ])
    expect(text(body, members[0])).toBe('"a" : "x\\"}]"')
  })

  it('reads a name with an escape as a parse does (`"\\u0074ype"` is `type`), its bytes as they came', () => {
    const body = b('{"\\u0074ype":null,"t\\u00e9":1,"a\\\\b":2,"bad\\u00":3}')
    const members = topMembers(body)!
    expect(members.map((m) => m.name)).toEqual(['type', 'té', 'a\\b', 'bad\\u00'])
    expect(Object.keys(JSON.parse('{"\\u0074ype":null,"t\\u00e9":1,"a\\\\b":2}'))).toEqual([
      'type',
      'té',
      'a\\b',
    ])
    expect(text(body, members[0])).toBe('"\\u0074ype":null')
  })

  it('gives no members for {} and undefined for what is not an object or is cut short', () => {
    expect(topMembers(b('{}'))).toEqual([])
    for (const bad of ['[]', '"x"', '{"a":1', '{"a" 1}', '{"a":"x}', '{"a":1,}', '{"a":1 "b":2}', ''])
      expect(topMembers(b(bad))).toBeUndefined()
  })
})

describe('arrayElements', () => {
  it('finds each element of the array at an index, and none of []', () => {
    const body = b('{"m":[ {"x":[1,2]} , "s,]" ,3 ],"k":[]}')
    const [m, k] = topMembers(body)!
    expect(arrayElements(body, m.value)!.map((e) => text(body, e))).toEqual(['{"x":[1,2]}', '"s,]"', '3'])
    expect(arrayElements(body, k.value)).toEqual([])
    expect(arrayElements(body, 0)).toBeUndefined()
    expect(arrayElements(b('[1,2'), 0)).toBeUndefined()
  })
})

describe('withMembers', () => {
  const body = b('{ "a":1, "b" : 2 ,"c":3 }')
  const members = topMembers(body)!
  it('replaces a value, the name and spaces before it as they came', () => {
    expect(String(withMembers(body, members, new Map([[1, b('[9]')]])))).toBe('{ "a":1, "b" : [9] ,"c":3 }')
  })
  it('takes a member out with the separator after it, or the last with the one before it', () => {
    const without = (...ks: number[]) => String(withMembers(body, members, new Map(ks.map((k) => [k, null]))))
    expect(without(0)).toBe('{ "b" : 2 ,"c":3 }')
    expect(without(1)).toBe('{ "a":1, "c":3 }')
    expect(without(2)).toBe('{ "a":1, "b" : 2 }')
    expect(without(0, 1)).toBe('{ "c":3 }')
    expect(without(1, 2)).toBe('{ "a":1 }')
    expect(without(0, 1, 2)).toBe('{  }')
    // a value replaced beside one taken out
    expect(
      String(
        withMembers(
          body,
          members,
          new Map([
            [0, null],
            [2, b('"z"')],
          ]),
        ),
      ),
    ).toBe('{ "b" : 2 ,"c":"z" }')
  })
})
