import {describe, expect, it} from 'vitest'

import type {Request} from './ir.js'
import {chatBodyWithoutSchemaKeys, oneTypeSchema, stripSchemaKeys, withoutSchemaKeys} from './tool-schemas.js'

const keys = (...k: string[]) => new Set(k)

/** A schema as Claude Code's tools write them (zod-to-json-schema). */
const claudeTool = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  properties: {
    command: {type: 'string', description: 'The command'},
    timeout: {type: 'number', exclusiveMinimum: 0, description: 'Milliseconds'},
    count: {type: 'integer', exclusiveMaximum: 10},
    mode: {type: 'string', const: 'fast'},
    // a property whose NAME is a refused keyword: it stays
    const: {type: 'string', description: 'a property called const'},
    env: {type: 'object', propertyNames: {pattern: '^[A-Z_]+$'}, additionalProperties: {type: 'string'}},
  },
  required: ['command', 'const'],
  additionalProperties: false,
}

describe('stripSchemaKeys', () => {
  it('drops the refused keywords everywhere, keeps property names, and says what it can another way', () => {
    const out = stripSchemaKeys(
      claudeTool,
      keys(
        '$schema',
        'exclusiveMinimum',
        'exclusiveMaximum',
        'const',
        'propertyNames',
        'additionalProperties',
      ),
    )
    expect(out).toEqual({
      type: 'object',
      properties: {
        command: {type: 'string', description: 'The command'},
        timeout: {type: 'number', description: 'Milliseconds', minimum: 0},
        count: {type: 'integer', maximum: 9},
        mode: {type: 'string', enum: ['fast']},
        const: {type: 'string', description: 'a property called const'},
        env: {type: 'object'},
      },
      required: ['command', 'const'],
    })
    // the client's schema is not touched
    expect(claudeTool.$schema).toBeDefined()
    expect(claudeTool.properties.timeout.exclusiveMinimum).toBe(0)
  })

  it('copies nothing when nothing refused is there, and gives the same bytes every time', () => {
    const schema = {type: 'object', properties: {a: {type: 'string'}}}
    expect(stripSchemaKeys(schema, keys('$schema'))).toBe(schema)
    const once = JSON.stringify(stripSchemaKeys(claudeTool, keys('$schema', 'const')))
    expect(JSON.stringify(stripSchemaKeys(claudeTool, keys('$schema', 'const')))).toBe(once)
  })

  it('leaves data alone: enum values, defaults, a boolean exclusive bound (draft 4) only dropped', () => {
    const schema = {
      type: 'object',
      properties: {
        a: {type: 'object', default: {$schema: 'kept', const: 1}},
        b: {type: 'number', minimum: 1, exclusiveMinimum: true},
        c: {type: 'number', const: 3},
      },
    }
    expect(stripSchemaKeys(schema, keys('$schema', 'const', 'exclusiveMinimum'))).toEqual({
      type: 'object',
      properties: {
        a: {type: 'object', default: {$schema: 'kept', const: 1}},
        b: {type: 'number', minimum: 1},
        c: {type: 'number'},
      },
    })
  })

  it('inlines local $refs when $ref or $defs is refused, cutting a cycle to its name', () => {
    const schema = {
      type: 'object',
      $defs: {
        Option: {type: 'object', properties: {label: {type: 'string'}}, additionalProperties: false},
        Node: {type: 'object', properties: {children: {type: 'array', items: {$ref: '#/$defs/Node'}}}},
      },
      definitions: {Old: {type: 'string'}},
      properties: {
        options: {type: 'array', items: {$ref: '#/$defs/Option'}},
        first: {$ref: '#/$defs/Option', description: 'The first one'},
        tree: {$ref: '#/$defs/Node'},
        old: {$ref: '#/definitions/Old'},
        away: {$ref: 'https://example.com/x.json'},
        self: {$ref: '#'},
      },
    }
    expect(stripSchemaKeys(schema, keys('$ref', 'additionalProperties'))).toEqual({
      type: 'object',
      properties: {
        options: {type: 'array', items: {type: 'object', properties: {label: {type: 'string'}}}},
        first: {type: 'object', properties: {label: {type: 'string'}}, description: 'The first one'},
        tree: {
          type: 'object',
          properties: {
            children: {type: 'array', items: {description: '(Node, as defined above)'}},
          },
        },
        old: {type: 'string'},
        away: {description: '(x.json)'},
        self: {description: '(#, as defined above)'},
      },
    })
    // only $defs refused: the same inlining (the refs would point to nothing)
    const out = stripSchemaKeys(schema, keys('$defs')) as {properties: Record<string, unknown>}
    expect(out.properties.old).toEqual({type: 'string'})
    expect(JSON.stringify(out)).not.toMatch(/\$ref|\$defs|definitions/)
  })
})

describe('withoutSchemaKeys', () => {
  it('changes only the tools whose schemas hold a refused keyword; a request without returns as it came', () => {
    const plain = {name: 'Read', parameters: {type: 'object', properties: {path: {type: 'string'}}}}
    const request = {
      model: 'm',
      system: [],
      messages: [],
      stream: false,
      tools: [plain, {name: 'Bash', parameters: claudeTool}],
    } as Request
    const out = withoutSchemaKeys(request, ['$schema'])
    expect(out).not.toBe(request)
    expect(out.tools[0]).toBe(plain)
    expect(out.tools[1].parameters).not.toHaveProperty('$schema')
    expect(withoutSchemaKeys({...request, tools: [plain]}, ['$schema']).tools[0]).toBe(plain)
  })
})

describe('chatBodyWithoutSchemaKeys', () => {
  it("strips a raw chat body's tools.function.parameters as withoutSchemaKeys does; none held: undefined", () => {
    const plain = {type: 'function', function: {name: 'Read', parameters: {type: 'object'}}}
    const body = {
      model: 'm',
      tools: [plain, {type: 'function', function: {name: 'Bash', parameters: claudeTool}}],
    }
    const before = JSON.stringify(body)
    const out = chatBodyWithoutSchemaKeys(body, ['$schema', 'exclusiveMinimum'])!
    expect(JSON.stringify(body)).toBe(before)
    expect(out.model).toBe('m')
    expect((out.tools as unknown[])[0]).toBe(plain)
    expect((out.tools as any[])[1].function.parameters).toEqual(
      stripSchemaKeys(claudeTool, keys('$schema', 'exclusiveMinimum')),
    )
    expect(chatBodyWithoutSchemaKeys({model: 'm', tools: [plain]}, ['$schema'])).toBeUndefined()
    expect(chatBodyWithoutSchemaKeys({model: 'm'}, ['$schema'])).toBeUndefined()
  })
})

describe('oneTypeSchema (a type list for Google, review61)', () => {
  it('makes a nullable of ["T", "null"], whatever nullable said beside it, and drops an enum of null alone', () => {
    expect(oneTypeSchema({nullable: false, type: ['string', 'null']})).toEqual({
      type: 'string',
      nullable: true,
    })
    expect(oneTypeSchema({type: ['string', 'null'], enum: [null]})).toEqual({type: 'string', nullable: true})
    expect(oneTypeSchema({type: ['string', 'null'], enum: ['a', null]})).toEqual({
      type: 'string',
      nullable: true,
      enum: ['a'],
    })
  })
})
