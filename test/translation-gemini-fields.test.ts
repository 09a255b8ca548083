/**
 * Gemini's refusal of fields it does not know, which otherwise fails every turn of a session:
 * Google's OpenAI-compatible endpoint (and relays that convert a tool's schema to Gemini's
 * `parameters`) refuses JSON Schema keywords outside its subset ("Invalid JSON payload received.
 * Unknown name \"$schema\" at 'tools[0].function_declarations[0].parameters': Cannot find
 * field."), which Claude Code's and Codex's tools carry on every request; Vertex AI refuses the
 * `id` of function calls and responses, so every second turn of a tool loop fails. The gateway
 * learns each refusal once per provider and model: one failed try, then the request goes again
 * without what was refused, and every later request goes that way at once, with the same bytes.
 * The real daemon, the simulator's `gemini-schema` and `vertex-no-ids` quirks, the official SDKs.
 */
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {runCli} from './helpers/cli.js'
import type {GeminiRoutes} from './helpers/gateway.js'
import {projectLogRows, startGeminiRoutes} from './helpers/gateway.js'

let base = ''
let home = ''
let keys = new Map<string, string>()
let routes: GeminiRoutes | undefined

/** Each test its own model: what is learned is kept per provider and model. */
const ROUTES: Record<string, {provider: string; model: string}> = {
  claude: {provider: 'sim-chat', model: 'gemini-2.5-flash+gemini-schema'},
  codex: {provider: 'sim-chat', model: 'gemini-2.5-pro+gemini-schema'},
  relay: {provider: 'sim-gemini', model: 'gemini-2.5-flash+gemini-schema'},
  'vertex-messages': {provider: 'sim-gemini', model: 'gemini-2.5-pro+vertex-no-ids+parallel-tools'},
  'vertex-chat': {provider: 'sim-gemini', model: 'gemini-2.5-flash+vertex-no-ids+parallel-tools'},
}

/** A chat client on a chat upstream: passed through, not translated (qwen-code, opencode). */
const PASSED = {provider: 'sim-chat', model: 'gemini-2.5-flash-lite+gemini-schema'}

beforeAll(async () => {
  routes = await startGeminiRoutes('gfields', ROUTES, PASSED)
  ;({base, home, keys} = routes)
}, 120_000)

afterAll(() => routes?.stop())

const chatCalls = () => routes!.chatCalls()
const geminiCalls = () => routes!.geminiCalls()

/** A schema as Claude Code's tools write them (zod-to-json-schema), with a shared definition. */
const BASH_SCHEMA = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  properties: {
    command: {type: 'string', description: 'The command to run'},
    timeout: {type: 'number', exclusiveMinimum: 0, maximum: 600000},
    mode: {type: 'string', const: 'foreground'},
    env: {type: 'object', propertyNames: {pattern: '^[A-Z_]+$'}, additionalProperties: {type: 'string'}},
    // a property whose name is a refused keyword: a name, kept
    const: {type: 'string'},
    options: {type: 'array', items: {$ref: '#/$defs/Option'}},
  },
  $defs: {Option: {type: 'object', properties: {label: {type: 'string'}}, additionalProperties: false}},
  required: ['command'],
  additionalProperties: false,
}

const REFUSED = /"(?:\$schema|\$ref|\$defs|exclusiveMinimum|propertyNames|additionalProperties)"|"const":"/

describe(
  "Gemini's schema subset behind a chat server: one failed try, then learned",
  {timeout: 60_000},
  () => {
    it('Claude Code: turn 1 refused once and sent again stripped; turn 2 sends the stripped tools at once', async () => {
      const client = new Anthropic({baseURL: base, apiKey: keys.get('claude')!, maxRetries: 0})
      const tools = [
        {name: 'Bash', description: 'Run a command', input_schema: BASH_SCHEMA as Anthropic.Tool.InputSchema},
      ]
      const ask = {role: 'user' as const, content: 'List the files.'}
      const params = {model: 'claude-sonnet-4-5', max_tokens: 1024, tools}
      await chatCalls()
      const first = await client.messages.stream({...params, messages: [ask]}).finalMessage()
      expect(first.stop_reason).toBe('tool_use')
      const calls = await chatCalls()
      expect(calls).toHaveLength(2)
      expect(JSON.stringify(calls[0].tools)).toMatch(/"\$schema"/)
      const retried = calls[1].tools[0].function.parameters
      expect(JSON.stringify(retried)).not.toMatch(REFUSED)
      expect(retried.properties.const).toEqual({type: 'string'})
      expect(retried.properties.mode).toEqual({type: 'string', enum: ['foreground']})
      expect(retried.properties.options.items).toEqual({
        type: 'object',
        properties: {label: {type: 'string'}},
      })
      const [row] = await projectLogRows(base, 'gfields-claude', 1)
      expect(row).toMatchObject({status: 200})
      expect(row.error).toMatch(/refused the tool-schema keywords .*\$schema.*: sent again without them/)

      const call = first.content.find((b) => b.type === 'tool_use')!
      const second = await client.messages.create({
        ...params,
        messages: [
          ask,
          {role: 'assistant', content: first.content},
          {role: 'user', content: [{type: 'tool_result', tool_use_id: call.id, content: 'a.txt'}]},
        ],
      })
      expect(second.content.find((b) => b.type === 'text')).toMatchObject({text: 'The tool answered: a.txt'})
      const later = await chatCalls()
      expect(later).toHaveLength(1)
      // the same bytes as the retry of turn 1 (the upstream's prompt cache)
      expect(JSON.stringify(later[0].tools)).toBe(JSON.stringify(calls[1].tools))
      expect((await projectLogRows(base, 'gfields-claude', 2))[1]).toMatchObject({status: 200, error: null})

      const {adaptations} = (await (await fetch(`${base}/api/adaptations`)).json()) as {adaptations: any[]}
      expect(adaptations.find((a) => a.model === ROUTES.claude.model)).toMatchObject({
        provider: 'sim-chat',
        rules: [expect.stringMatching(/^tool schemas sent without \$schema, .*\(Gemini's schema subset\)$/)],
      })
      const doctor = await runCli(['doctor', '--json'], {home})
      const check = JSON.parse(doctor.stdout).checks.find((c: any) => c.id === 'translation')
      expect(check.detail).toMatch(
        /sim-chat gemini-2\.5-flash\+gemini-schema \(\d+ s ago\): tool schemas sent without/,
      )
    })

    it('Codex: the same through a Responses client', async () => {
      const openai = new OpenAI({baseURL: `${base}/v1`, apiKey: keys.get('codex')!, maxRetries: 0})
      const params = {
        model: 'gpt-5-codex',
        store: false,
        tools: [{type: 'function' as const, name: 'shell', parameters: BASH_SCHEMA, strict: false}],
      }
      await chatCalls()
      const first = await openai.responses.create({...params, input: 'List the files.'})
      expect(first.output.some((o) => o.type === 'function_call')).toBe(true)
      const calls = await chatCalls()
      expect(calls).toHaveLength(2)
      expect(JSON.stringify(calls[1].tools)).not.toMatch(REFUSED)
      await openai.responses.create({...params, input: 'And again.'})
      expect(await chatCalls()).toHaveLength(1)
    })

    it("a relay that converts a Gemini upstream's parametersJsonSchema to parameters: learned alike", async () => {
      const client = new Anthropic({baseURL: base, apiKey: keys.get('relay')!, maxRetries: 0})
      const tools = [{name: 'Bash', input_schema: BASH_SCHEMA as Anthropic.Tool.InputSchema}]
      const params = {model: 'claude-sonnet-4-5', max_tokens: 1024, tools}
      await geminiCalls()
      const first = await client.messages.create({
        ...params,
        messages: [{role: 'user', content: 'Use the tool to list the files.'}],
      })
      expect(first.stop_reason).toBe('tool_use')
      const calls = await geminiCalls()
      expect(calls).toHaveLength(2)
      const sent = calls[1].tools[0].functionDeclarations[0].parametersJsonSchema
      expect(JSON.stringify(sent)).not.toMatch(REFUSED)
      await client.messages.create({...params, messages: [{role: 'user', content: 'Use the tool again.'}]})
      expect(await geminiCalls()).toHaveLength(1)
    })
  },
)

describe(
  "Gemini's schema subset behind a chat server, a chat client passed through",
  {timeout: 60_000},
  () => {
    it('qwen-code: turn 1 refused once and sent again stripped; turn 2 sends the stripped tools at once', async () => {
      const openai = new OpenAI({baseURL: `${base}/v1`, apiKey: keys.get('passed')!, maxRetries: 0})
      // qwen-code's and opencode's tools: zod's JSON Schema, with `$schema` and `additionalProperties`
      const tools = [
        {
          type: 'function' as const,
          function: {name: 'run_shell_command', description: 'Run a command', parameters: BASH_SCHEMA},
        },
        {
          type: 'function' as const,
          function: {
            name: 'read_file',
            parameters: {
              $schema: 'https://json-schema.org/draft/2020-12/schema',
              type: 'object',
              properties: {path: {type: 'string'}, limit: {type: 'integer', exclusiveMinimum: 0}},
              required: ['path'],
              additionalProperties: false,
            },
          },
        },
      ]
      const ask = {role: 'user' as const, content: 'List the files.'}
      await chatCalls()
      // (qwen-code streams)
      const first = await openai.chat.completions
        .stream({model: 'qwen3-coder-plus', messages: [ask], tools})
        .finalChatCompletion()
      const message = first.choices[0].message
      expect(first.choices[0].finish_reason).toBe('tool_calls')
      const calls = await chatCalls()
      expect(calls).toHaveLength(2)
      // the first try as the client sent it, the second without what was refused
      expect(calls[0].tools).toEqual(tools)
      expect(JSON.stringify(calls[1].tools)).not.toMatch(REFUSED)
      expect(calls[1].tools[1].function.parameters).toEqual({
        type: 'object',
        properties: {path: {type: 'string'}, limit: {type: 'integer', minimum: 1}},
        required: ['path'],
      })
      const retried = calls[1].tools[0].function.parameters
      expect(retried.properties.const).toEqual({type: 'string'})
      expect(retried.properties.mode).toEqual({type: 'string', enum: ['foreground']})
      const [row] = await projectLogRows(base, 'gfields-passed', 1)
      expect(row).toMatchObject({status: 200})
      expect(row.error).toMatch(
        /^sim-chat refused the tool-schema keywords \$schema, .*additionalProperties.*: sent again without them$/,
      )

      const call = message.tool_calls![0]
      const second = await openai.chat.completions.create({
        model: 'qwen3-coder-plus',
        tools,
        messages: [ask, message, {role: 'tool', tool_call_id: call.id, content: 'a.txt'}],
      })
      expect(second.choices[0].message.content).toBe('The tool answered: a.txt')
      const later = await chatCalls()
      expect(later).toHaveLength(1)
      // the same bytes as the retry of turn 1 (the upstream's prompt cache)
      expect(JSON.stringify(later[0].tools)).toBe(JSON.stringify(calls[1].tools))
      expect((await projectLogRows(base, 'gfields-passed', 2))[1]).toMatchObject({status: 200, error: null})

      const {adaptations} = (await (await fetch(`${base}/api/adaptations`)).json()) as {adaptations: any[]}
      expect(adaptations.find((a) => a.model === PASSED.model)).toMatchObject({
        provider: 'sim-chat',
        rules: [expect.stringMatching(/^tool schemas sent without \$schema, .*\(Gemini's schema subset\)$/)],
      })
    })
  },
)

describe("Vertex AI's refusal of call ids: turn 2 of a tool loop", {timeout: 60_000}, () => {
  const noIds = (body: Record<string, any>) =>
    (body.contents as Array<{parts: Array<Record<string, any>>}>).every((c) =>
      c.parts.every((p) => p.functionCall?.id === undefined && p.functionResponse?.id === undefined),
    )

  it('Claude Code: parallel calls of one name keep ids of their own; turn 2 answers, sent without ids', async () => {
    const client = new Anthropic({baseURL: base, apiKey: keys.get('vertex-messages')!, maxRetries: 0})
    const tools = [
      {
        name: 'Read',
        description: 'Read a file',
        input_schema: {type: 'object' as const, properties: {path: {type: 'string'}}},
      },
    ]
    const ask = {role: 'user' as const, content: 'Use the tool to read both files.'}
    const params = {model: 'claude-sonnet-4-5', max_tokens: 1024, tools}
    await geminiCalls()
    const first = await client.messages.stream({...params, messages: [ask]}).finalMessage()
    const uses = first.content.filter((b) => b.type === 'tool_use')
    expect(uses).toHaveLength(2)
    expect(new Set(uses.map((u) => u.id)).size).toBe(2)
    expect((await geminiCalls()).length).toBe(1)

    const turn2 = (content: string) =>
      client.messages.create({
        ...params,
        messages: [
          ask,
          {role: 'assistant', content: first.content},
          {
            role: 'user',
            content: uses.map((u, i) => ({
              type: 'tool_result' as const,
              tool_use_id: u.id,
              content: `${content}${i}`,
            })),
          },
        ],
      })
    const second = await turn2('file ')
    expect(second.content.find((b) => b.type === 'text')).toMatchObject({
      text: expect.stringMatching(/^The tool answered: /),
    })
    const calls = await geminiCalls()
    expect(calls).toHaveLength(2)
    expect(noIds(calls[0])).toBe(false)
    expect(noIds(calls[1])).toBe(true)
    // the calls and their responses still in order, by name
    expect(calls[1].contents[1].parts.map((p: any) => p.functionCall?.name)).toEqual(['Read', 'Read'])
    expect(calls[1].contents[2].parts.map((p: any) => p.functionResponse.response)).toEqual([
      {output: 'file 0'},
      {output: 'file 1'},
    ])
    const rows = await projectLogRows(base, 'gfields-vertex-messages', 2)
    expect(rows[1].error).toMatch(/refused the id of function calls and responses: sent again without it/)
    // learned: the next turn goes without ids at once
    await turn2('again ')
    const later = await geminiCalls()
    expect(later).toHaveLength(1)
    expect(noIds(later[0])).toBe(true)
  })

  it('a chat client (opencode): turn 2 answers, the bytes upstream have no id', async () => {
    const openai = new OpenAI({baseURL: `${base}/v1`, apiKey: keys.get('vertex-chat')!, maxRetries: 0})
    const tools = [
      {
        type: 'function' as const,
        function: {name: 'read', parameters: {type: 'object', properties: {path: {type: 'string'}}}},
      },
    ]
    const ask = {role: 'user' as const, content: 'Use the tool to read both files.'}
    await geminiCalls()
    const first = await openai.chat.completions.create({model: 'gemini', messages: [ask], tools})
    const message = first.choices[0].message
    const ids = message.tool_calls!.map((c) => c.id)
    expect(ids).toHaveLength(2)
    expect(new Set(ids).size).toBe(2)
    await geminiCalls()
    const second = await openai.chat.completions.create({
      model: 'gemini',
      tools,
      messages: [
        ask,
        message,
        ...ids.map((id, i) => ({role: 'tool' as const, tool_call_id: id, content: `file ${i}`})),
      ],
    })
    expect(second.choices[0].message.content).toMatch(/^The tool answered: /)
    const calls = await geminiCalls()
    expect(calls).toHaveLength(2)
    expect(noIds(calls[1])).toBe(true)
    expect(JSON.stringify(calls[1].contents)).not.toMatch(/"id"/)
  })
})
