/**
 * Codex Desktop's `automation_update` tool, whose schema says `"type": null` at its top and on its
 * nullable fields (openai/codex #36441), which DeepSeek and OpenAI refuse on every request
 * (farion1231/cc-switch #4705, #5300; Wei-Shaw/sub2api #5364): what each upstream family is sent
 * for it translated, and what a body passed through is rewritten to (tool-schemas.ts `typedSchema`,
 * `withTypedToolSchemas`).
 */
import {describe, expect, it} from 'vitest'

import {decodeClientRequest, encodeUpstreamRequest} from './translate.js'
import {holdsNullType, typedSchema, withTypedToolSchemas} from './tool-schemas.js'

/** The tool as Codex Desktop sends it once Automations load, in its `codex_app` namespace. */
const AUTOMATION_UPDATE = {
  type: 'function',
  name: 'automation_update',
  description: 'Update an automation.',
  strict: false,
  parameters: {
    type: null,
    properties: {
      id: {type: 'string'},
      model: {type: null, description: 'The model, or null for the default.'},
      schedule: {anyOf: [{type: 'string'}, {type: null}]},
    },
    required: ['id'],
  },
}

const codexBody = () => ({
  model: 'gpt-5.6-sol',
  stream: true,
  store: false,
  input: [{type: 'message', role: 'user', content: [{type: 'input_text', text: 'hi'}]}],
  tools: [
    {
      type: 'function',
      name: 'exec_command',
      parameters: {type: 'object', properties: {cmd: {type: 'string'}}},
    },
    {
      type: 'namespace',
      name: 'codex_app',
      description: 'Codex app tools.',
      tools: [structuredClone(AUTOMATION_UPDATE)],
    },
  ],
})

/** The schema each upstream family was sent for the tool whose name ends `automation_update`. */
function sentSchema(tools: unknown): Record<string, unknown> {
  let found: Record<string, unknown> | undefined
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(visit)
    else if (node && typeof node === 'object') {
      const o = node as Record<string, unknown>
      if (typeof o.name === 'string' && o.name.endsWith('automation_update'))
        found = (o.parameters ?? o.input_schema ?? o.parametersJsonSchema) as Record<string, unknown>
      else Object.values(o).forEach(visit)
    }
  }
  visit(tools)
  if (!found) throw new Error('automation_update not sent')
  return found
}

describe('a tool schema with "type": null, translated', () => {
  for (const up of ['chat', 'messages', 'gemini', 'responses'] as const) {
    it(`goes to ${up} as an object, each null type left out and the rest kept`, () => {
      const request = decodeClientRequest('responses', codexBody(), {})
      const sent = encodeUpstreamRequest(request, up, 'deepseek-v4-pro').body.toString()
      expect(sent).not.toMatch(/"type":\s*null/)
      const schema = sentSchema(JSON.parse(sent).tools)
      expect(schema.type).toBe('object')
      expect(schema.properties).toEqual({
        id: {type: 'string'},
        model: {description: 'The model, or null for the default.'},
        schedule: {anyOf: [{type: 'string'}, {}]},
      })
      expect(schema.required).toEqual(['id'])
    })
  }

  it("keeps a client's schema without a null type as it came, and writes object where its top has none", () => {
    const body = codexBody()
    body.tools[1] = {
      type: 'function',
      name: 'automation_update',
      parameters: {properties: {id: {type: 'string'}}},
    } as never
    const sent = encodeUpstreamRequest(
      decodeClientRequest('responses', body, {}),
      'chat',
      'm',
    ).body.toString()
    expect(sent).toContain(
      '"tools":[{"type":"function","function":{"name":"exec_command","parameters":{"type":"object","properties":{"cmd":{"type":"string"}}}}},{"type":"function","function":{"name":"automation_update","parameters":{"type":"object","properties":{"id":{"type":"string"}}}}}]',
    )
  })
})

describe('withTypedToolSchemas (a body passed through)', () => {
  it('rewrites the tools of a Responses, chat and Messages body, in tools and in input items', () => {
    const responses = {
      ...codexBody(),
      input: [{type: 'additional_tools', tools: [structuredClone(AUTOMATION_UPDATE)]}],
    }
    const chat = {
      model: 'm',
      messages: [],
      tools: [
        {type: 'function', function: {name: 'automation_update', parameters: AUTOMATION_UPDATE.parameters}},
      ],
    }
    const messages = {
      model: 'm',
      messages: [],
      tools: [{name: 'automation_update', input_schema: AUTOMATION_UPDATE.parameters}],
    }
    for (const body of [responses, chat, messages]) {
      const out = withTypedToolSchemas(Buffer.from(JSON.stringify(body, null, 1)))
      expect(out).toBeDefined()
      const text = out!.toString()
      expect(text).not.toMatch(/"type":\s*null/)
      // (the rest as it came: the writer's spacing kept)
      expect(text).toContain('"properties": {\n')
      const sent = JSON.stringify(JSON.parse(text))
      expect(sent).toContain(
        '{"type":"object","properties":{"id":{"type":"string"},"model":{"description":"The model, or null for the default."}',
      )
    }
  })

  it('leaves a body without a null type unparsed, and one whose null type is no tool schema as it came', () => {
    const clean = Buffer.from(
      JSON.stringify({...codexBody(), tools: [codexBody().tools[0]], text: 'null: "type"'}),
    )
    expect(holdsNullType(clean)).toBe(false)
    expect(withTypedToolSchemas(clean)).toBeUndefined()
    // (the words inside a string: their quotes escaped)
    expect(holdsNullType(Buffer.from(JSON.stringify({text: '{"type": null}'})))).toBe(false)
    // (a tools member's null, compact or Python's spacing)
    expect(holdsNullType(Buffer.from('{"model":"m","tools":[{"parameters":{"type":null}}]}'))).toBe(true)
    expect(holdsNullType(Buffer.from('{"model": "m", "tools": [{"parameters": {"type" : null}}]}'))).toBe(
      true,
    )
    // (a null elsewhere: not a tool's)
    const elsewhere = Buffer.from('{"model": "m", "metadata": {"type": null}, "tools": []}')
    expect(holdsNullType(elsewhere)).toBe(false)
    expect(withTypedToolSchemas(elsewhere)).toBeUndefined()
  })
})

describe('review76: the byte test, the bytes kept, the walk', () => {
  const tool = (parameters: unknown) => ({type: 'function', name: 'automation_update', parameters})

  it('finds a "type": null spaced otherwise than the first member (a body built by two writers)', () => {
    const compact = JSON.stringify([tool({type: null, properties: {}})])
    const body = Buffer.from(`{"model": "gpt-5", "input": [], "tools": ${compact}}`)
    expect(holdsNullType(body)).toBe(true)
    expect(withTypedToolSchemas(body)?.toString()).toBe(
      `{"model": "gpt-5", "input": [], "tools": ${compact.replace('"type":null', '"type":"object"')}}`,
    )
    const spaced = JSON.stringify([tool({type: null, properties: {}})], null, 2)
    expect(holdsNullType(Buffer.from(`{"model":"gpt-5","input":[],"tools":${spaced}}`))).toBe(true)
  })

  it('changes only the bytes of the tool schema: a tool_use input above 2^53, integer-like names, 1.0', () => {
    const schema = (note: string) =>
      `{"type":"object","properties":{"z":{"type":"string"},"10":{"type":"integer"},"2":{"type":"number","default":1.0}${note}}}`
    const body = (note: string) =>
      `{"model":"m","max_tokens":1024,"tools":[{"name":"get","input_schema":${schema(note)}}],` +
      '"messages":[{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"get","input":{"id":1234567890123456789,"scale":1.0}}]}],"temperature":1.0}'
    expect(
      withTypedToolSchemas(Buffer.from(body(',"note":{"type":null,"description":"n"}')))?.toString(),
    ).toBe(body(',"note":{"description":"n"}'))
  })

  it("a model's own null `type` argument in the history is no tool schema's (Claude Code's Grep)", () => {
    const body = Buffer.from(
      JSON.stringify({
        model: 'deepseek-v4-pro',
        tools: [
          {
            name: 'Grep',
            input_schema: {type: 'object', properties: {pattern: {type: 'string'}, type: {type: 'string'}}},
          },
        ],
        messages: [
          {
            role: 'assistant',
            content: [{type: 'tool_use', id: 't1', name: 'Grep', input: {pattern: 'foo', type: null}}],
          },
        ],
      }),
    )
    expect(holdsNullType(body)).toBe(false)
  })

  it('walks draft-07 `dependencies` whose values are schemas (a dependent named `type`), leaves its lists alone', () => {
    const schema = {
      type: 'object',
      properties: {type: {type: 'string'}, x: {type: 'string'}},
      dependencies: {type: {properties: {x: {type: null, minLength: 1}}}, x: ['type']},
    }
    const typed = {...schema, dependencies: {type: {properties: {x: {minLength: 1}}}, x: ['type']}}
    expect(typedSchema(schema as never)).toEqual(typed)
    const body = Buffer.from(JSON.stringify({model: 'm', tools: [tool(schema)]}))
    expect(withTypedToolSchemas(body)?.toString()).toBe(JSON.stringify({model: 'm', tools: [tool(typed)]}))
  })
})

describe('every JSON spelling of a null type is found and typed, and none in a string is', () => {
  /** Codex Desktop's body, compact, with its tool schema's null types spelled `spelling` (`T` the name, `:` the colon, `N` the null). */
  const spelled = (spelling: string) =>
    JSON.stringify({...codexBody(), tools: [AUTOMATION_UPDATE]}).replaceAll(
      '"type":null',
      spelling.replace('T', '"type"').replace('N', 'null'),
    )
  const spellings: Record<string, string> = {
    'a tab': 'T:\tN',
    'two spaces': 'T:  N',
    'a line break': 'T:\nN',
    'a line break and an indent': 'T:\r\n    N',
    'a space and a tab': 'T: \tN',
    'white space before the colon': 'T \t:N',
    'an escaped name': '"\\u0074ype":N',
    'every letter escaped, spaced': '"\\u0074\\u0079\\u0070\\u0065" : N',
  }
  const typed = JSON.stringify({
    ...codexBody(),
    tools: [{...AUTOMATION_UPDATE, parameters: typedSchema(AUTOMATION_UPDATE.parameters as never)}],
  })

  for (const [label, spelling] of Object.entries(spellings))
    it(`${label}: ${JSON.stringify(spelling)}`, () => {
      const body = Buffer.from(spelled(spelling))
      // (the body as a server parses it holds the null types)
      expect(JSON.stringify(JSON.parse(String(body)))).toBe(spelled('T:N'))
      expect(holdsNullType(body)).toBe(true)
      const out = withTypedToolSchemas(body)
      expect(out && JSON.stringify(JSON.parse(String(out)))).toBe(typed)
    })

  it('the same words inside a string (their quotes escaped, white space escaped), or a name ending `type`, are none', () => {
    for (const spelling of [...Object.values(spellings), 'T:N', 'T: N']) {
      const words = spelling.replace('T', '"type"').replace('N', 'null')
      const body = Buffer.from(
        JSON.stringify({
          ...codexBody(),
          tools: [codexBody().tools[0]],
          input: [{type: 'message', role: 'user', content: words}],
        }),
      )
      expect(holdsNullType(body)).toBe(false)
    }
    const near = ['{"subtype":null}', '{"x\\"type":null}', '{"typ\\\\u0065":null}', '["type", null]']
    for (const schema of near)
      expect(holdsNullType(Buffer.from(`{"tools":[{"name":"t","parameters":${schema}}]}`))).toBe(false)
    // (a body that ends at a colon, or at the start of a null)
    expect(holdsNullType(Buffer.from('{"tools":[{"parameters":{"type":'))).toBe(false)
    expect(holdsNullType(Buffer.from('{"tools":[{"parameters":{"type":\tnu'))).toBe(false)
  })
})

describe('the byte test is linear in white space', () => {
  /** Codex's body with a run of `n` tabs between its input's `[` and its first item (a tab-indented writer's, or a hand's), its tools `tools`. */
  const tabbed = (n: number, tools: unknown[]) =>
    Buffer.from(JSON.stringify({...codexBody(), tools}).replace('"input":[', `"input":[${'\t'.repeat(n)}`))

  // (the six searches of stop 60 walked back from each tab to its colon: 128 000 tabs took 38 s,
  // well past this test's time limit, which is the guard: no time is asserted)
  it('answers for a body with a run of 128 000 tabs', {timeout: 5_000}, () => {
    const clean = tabbed(128_000, [codexBody().tools[0]])
    expect(JSON.parse(String(clean)).input).toHaveLength(1)
    expect(holdsNullType(clean)).toBe(false)
    const held = tabbed(128_000, [codexBody().tools[0], AUTOMATION_UPDATE])
    expect(holdsNullType(held)).toBe(true)
    expect(JSON.stringify(JSON.parse(String(withTypedToolSchemas(held))))).not.toMatch(/"type":null/)
  })
})
