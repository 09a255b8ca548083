import {describe, expect, it} from 'vitest'

import {
  reasoningRewritten,
  type ReasoningRules,
  withLeastThinking,
  withoutTopFields,
  withReasoningAdapted,
} from './top-fields.js'

const cut = (text: string, fields: string[]): string | undefined =>
  withoutTopFields(Buffer.from(text), fields)?.toString('utf8')

describe('withoutTopFields', () => {
  it('cuts a top-level member out of the bytes, first, in the middle or last, the rest as it came', () => {
    const body = '{"model":"m","access_programs":{"cyber":"standard"},"input":[{"a":1.0}],"stream":true}'
    expect(cut(body, ['access_programs'])).toBe('{"model":"m","input":[{"a":1.0}],"stream":true}')
    expect(cut(body, ['model'])).toBe(
      '{"access_programs":{"cyber":"standard"},"input":[{"a":1.0}],"stream":true}',
    )
    expect(cut(body, ['stream'])).toBe(
      '{"model":"m","access_programs":{"cyber":"standard"},"input":[{"a":1.0}]}',
    )
    expect(cut(body, ['model', 'stream', 'access_programs'])).toBe('{"input":[{"a":1.0}]}')
    expect(cut(body, ['model', 'stream', 'access_programs', 'input'])).toBe('{}')
    // (every value kind; whitespace between members kept as it was)
    expect(cut('{ "a" : 1 ,\n "b": null, "c": "x\\"}", "d": [1, {"b": 2}] }', ['b'])).toBe(
      '{ "a" : 1 ,\n "c": "x\\"}", "d": [1, {"b": 2}] }',
    )
  })

  it('leaves a nested member of that name, a name in a string, and a part of a member (a dot) alone', () => {
    const body =
      '{"input":[{"type":"message","content":"\\"access_programs\\": 1","access_programs":2}],"text":{"access_programs":3}}'
    expect(cut(body, ['access_programs'])).toBeUndefined()
    expect(cut('{"reasoning":{"summary":"auto"}}', ['reasoning.summary'])).toBeUndefined()
    // a string that ends in an escaped backslash
    expect(cut('{"a":"x\\\\","access_programs":{},"b":"\\\\\\""}', ['access_programs'])).toBe(
      '{"a":"x\\\\","b":"\\\\\\""}',
    )
  })

  it('gives undefined for a body that is not a JSON object, or cut short', () => {
    expect(cut('[{"access_programs":1}]', ['access_programs'])).toBeUndefined()
    expect(cut('{"access_programs":{"cyber":"standard"', ['access_programs'])).toBeUndefined()
    expect(cut('{"access_programs":"open', ['access_programs'])).toBeUndefined()
    expect(cut('not json "access_programs"', ['access_programs'])).toBeUndefined()
  })

  it('gives a Codex body byte for byte as JSON would write it without the field', () => {
    const codex = {
      model: 'muse-spark-1.3',
      instructions: 'You are Codex. “Quotes” — and an emoji 😀.',
      input: [{type: 'message', role: 'user', content: [{type: 'input_text', text: 'a\nb\t"c"'}]}],
      tools: [{type: 'function', name: 'f', parameters: {type: 'object', properties: {}}}],
      tool_choice: 'auto',
      parallel_tool_calls: true,
      reasoning: {effort: 'medium', summary: 'auto'},
      store: false,
      stream: true,
      include: ['reasoning.encrypted_content'],
      prompt_cache_key: 'k',
      access_programs: {cyber: 'standard'},
    }
    const {access_programs: _, ...rest} = codex
    expect(withoutTopFields(Buffer.from(JSON.stringify(codex)), ['access_programs'])).toEqual(
      Buffer.from(JSON.stringify(rest)),
    )
  })
})

const adapt = (text: string, rules: ReasoningRules): string | undefined => {
  const out = withReasoningAdapted(Buffer.from(text), rules)
  return typeof out === 'string' ? out : out?.toString('utf8')
}

describe('withReasoningAdapted', () => {
  const XHIGH = {effort: {xhigh: 'high', minimal: 'low'}}

  it("replaces the effort's value alone, every other byte as it came", () => {
    const body =
      '{"model":"m","reasoning" : { "effort" : "xhigh" ,"summary":"auto"},"input":[{"text":"\\"reasoning\\":{\\"effort\\":\\"xhigh\\"}"}],"temperature":1.0}'
    expect(adapt(body, XHIGH)).toBe(body.replace('"effort" : "xhigh"', '"effort" : "high"'))
    expect(adapt('{"reasoning":{"effort":"minimal"}}', XHIGH)).toBe('{"reasoning":{"effort":"low"}}')
  })

  it('cuts the effort or the summary out of reasoning, and reasoning whole when nothing is left', () => {
    const body = '{"model":"m","reasoning":{"effort":"none", "summary":"auto"},"stream":true}'
    expect(adapt(body, {drop: ['reasoning.effort']})).toBe(
      '{"model":"m","reasoning":{"summary":"auto"},"stream":true}',
    )
    expect(adapt(body, {drop: ['reasoning.summary']})).toBe(
      '{"model":"m","reasoning":{"effort":"none"},"stream":true}',
    )
    expect(adapt(body, {drop: ['reasoning.effort', 'reasoning.summary']})).toBe('{"model":"m","stream":true}')
    expect(adapt('{"reasoning":{"effort":"none"}}', {drop: ['reasoning.effort']})).toBe('{}')
    // a cut and a value changed in one body
    expect(
      adapt('{"reasoning":{"summary":"auto","effort":"xhigh","generate_summary":null}}', {
        ...XHIGH,
        drop: ['reasoning.summary'],
      }),
    ).toBe('{"reasoning":{"effort":"high","generate_summary":null}}')
  })

  it('gives undefined where nothing changes: no reasoning, an effort not refused, null', () => {
    expect(adapt('{"model":"m","input":"reasoning"}', XHIGH)).toBeUndefined()
    expect(adapt('{"reasoning":{"effort":"high"}}', XHIGH)).toBeUndefined()
    expect(adapt('{"reasoning":null}', XHIGH)).toBeUndefined()
    expect(adapt('{"reasoning":{"summary":"auto"}}', {drop: ['reasoning.effort']})).toBeUndefined()
    // (an inherited name is no effort learned)
    expect(adapt('{"reasoning":{"effort":"constructor"}}', XHIGH)).toBeUndefined()
    // a nested reasoning is not the request's
    expect(adapt('{"input":[{"type":"reasoning","reasoning":{"effort":"xhigh"}}]}', XHIGH)).toBeUndefined()
  })

  it("says 'unsafe' where the bytes cannot be changed with certainty, and the parse does it then", () => {
    const twice = '{"reasoning":{"effort":"low"},"reasoning":{"effort":"xhigh"}}'
    const escaped = '{"reasoning":{"effort":"x\\u0068igh"}}'
    for (const body of [
      twice,
      escaped,
      '{"reasoning":{"effort":"xhigh","effort":"low"}}',
      '{"reasoning":{"effort":"xhigh"}} x',
    ])
      expect(adapt(body, XHIGH), body).toBe('unsafe')
    expect(reasoningRewritten(Buffer.from(twice), XHIGH)?.toString()).toBe('{"reasoning":{"effort":"high"}}')
    expect(
      reasoningRewritten(Buffer.from('{"reasoning":{"effort":"none"}}'), {
        drop: ['reasoning.effort'],
      })?.toString(),
    ).toBe('{}')
    expect(reasoningRewritten(Buffer.from('{"reasoning":{"effort":"high"}}'), XHIGH)).toBeUndefined()
    expect(reasoningRewritten(Buffer.from('{"reasoning":'), XHIGH)).toBeUndefined()
  })
})

describe('withLeastThinking', () => {
  const least = (text: string) => {
    const out = withLeastThinking(Buffer.from(text))
    return typeof out === 'string' ? out : out?.toString('utf8')
  }
  it('replaces thinking off with the least budget in place, or adds it last; a max_tokens at or under it raised by it', () => {
    expect(least('{"model":"m","max_tokens":512,"thinking":{"type":"disabled"},"stream":true}')).toBe(
      '{"model":"m","max_tokens":1536,"thinking":{"type":"enabled","budget_tokens":1024},"stream":true}',
    )
    expect(least('{ "model": "m", "max_tokens": 4096 }')).toBe(
      '{ "model": "m", "max_tokens": 4096,"thinking":{"type":"enabled","budget_tokens":1024} }',
    )
    expect(least('{"thinking":{"type":"between_tools"},"max_tokens":1024}')).toBe(
      '{"thinking":{"type":"enabled","budget_tokens":1024},"max_tokens":2048}',
    )
  })
  it('raises a max_tokens under twice the budget by it, and cuts the sampling settings', () => {
    expect(
      least('{"model":"m","max_tokens":1100,"temperature":0,"thinking":{"type":"disabled"},"top_k":40}'),
    ).toBe('{"model":"m","max_tokens":2124,"thinking":{"type":"enabled","budget_tokens":1024}}')
    expect(least('{"top_p":0.9,"model":"m","max_tokens":2048,"temperature":0.5}')).toBe(
      '{"model":"m","max_tokens":2048,"thinking":{"type":"enabled","budget_tokens":1024}}',
    )
    expect(least('{"temperature":0}')).toBe('unsafe')
  })
  it('leaves a body that thinks; the parse for a forced call, a name twice, a value that does not parse', () => {
    expect(least('{"thinking":{"type":"adaptive"},"max_tokens":100}')).toBeUndefined()
    expect(least('{"thinking":{"type":"enabled","budget_tokens":2000},"max_tokens":4000}')).toBeUndefined()
    expect(least('{"thinking":{"type":"disabled"},"tool_choice":{"type":"any"}}')).toBe('unsafe')
    expect(least('{"thinking":{"type":"disabled"},"thinking":{"type":"disabled"}}')).toBe('unsafe')
    expect(least('{"thinking":{"type":"disabled"},"max_tokens":1e}')).toBe('unsafe')
    expect(least('[]')).toBe('unsafe')
    expect(least('{}')).toBe('unsafe')
  })
})
