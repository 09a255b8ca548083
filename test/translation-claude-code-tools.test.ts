/**
 * What a translated request must not carry for the upstream to take it (or to cache it): Claude
 * Code's attribution line, which changes every request, at the head of the system prompt (every
 * turn missed the upstream's prefix cache); a tool schema whose top level is a union (a zod union
 * of an MCP tool: Anthropic and OpenAI refuse the request); text blocks of whitespace alone
 * (Anthropic refuses them). The real daemon, the simulator (which refuses the last two as the
 * vendors do, and reports cached prompt tokens by prefix), the official SDKs. Also Claude Code's
 * mid-conversation system messages with tool changes, which only Anthropic takes as they are.
 */
import Anthropic from '@anthropic-ai/sdk'
import {GoogleGenAI} from '@google/genai'
import OpenAI from 'openai'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {issueKeyOverApi, simPolicy, startSimGatewayWithPolicies, takeSimCalls} from './helpers/gateway.js'

let base = ''
let simOrigin = ''
let stop: () => Promise<void> = async () => {}
const keys = new Map<string, string>()

beforeAll(async () => {
  ;({base, simOrigin, stop} = await startSimGatewayWithPolicies([
    simPolicy('cc-chat', {messages: [{provider: 'sim-chat', model: 'sim-mini', translate: true}]}),
    simPolicy('cc-own', {messages: [{provider: 'sim-messages', model: 'claude-sonnet-4-5'}]}),
    simPolicy('to-messages', {
      chat: [{provider: 'sim-messages', model: 'claude-sonnet-4-5', translate: true}],
    }),
    simPolicy('gemini-chat', {gemini: [{provider: 'sim-chat', model: 'sim-mini', translate: true}]}),
  ]))
  for (const id of ['cc-chat', 'cc-own', 'to-messages', 'gemini-chat'])
    keys.set(id, await issueKeyOverApi(base, id, 'generic_agent', id))
}, 120_000)

afterAll(() => stop())

/** Claude Code's system prompt: its attribution line first, which differs from request to request. */
const system = (cch: string): Anthropic.TextBlockParam[] => [
  {
    type: 'text',
    text: `x-anthropic-billing-header: cc_version=2.1.332.${cch.slice(0, 3)}; cc_entrypoint=cli; cch=${cch};`,
  },
  {
    type: 'text',
    text: `You are Claude Code. ${'Follow the rules. '.repeat(200)}`,
    cache_control: {type: 'ephemeral'},
  },
]

/** A zod union of an MCP server's tool, as its JSON Schema has it. */
const unionSchema = {
  anyOf: [
    {
      type: 'object',
      properties: {project: {type: 'string'}, iid: {type: 'integer'}},
      required: ['project', 'iid'],
    },
    {
      type: 'object',
      properties: {project: {type: 'string'}, url: {type: 'string'}},
      required: ['project', 'url'],
    },
  ],
}
const mergedSchema = {
  type: 'object',
  properties: {project: {type: 'string'}, iid: {type: 'integer'}, url: {type: 'string'}},
  required: ['project'],
}
const forms = 'Arguments take one of these forms: {project, iid} | {project, url}'

describe("Claude Code's attribution line", {timeout: 60_000}, () => {
  it('leaves a translated system prompt: turn 2 reads the prefix from the upstream cache', async () => {
    const client = new Anthropic({baseURL: base, apiKey: keys.get('cc-chat')!, maxRetries: 0})
    const ask = {role: 'user' as const, content: 'Say hello.'}
    await takeSimCalls(simOrigin, /./)
    const first = await client.messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 256,
      system: system('71fea'),
      messages: [ask],
    })
    const said = first.content.map((b) => (b.type === 'text' ? b.text : '')).join('')
    const second = await client.messages
      .stream({
        model: 'claude-sonnet-4-5',
        max_tokens: 256,
        system: system('0c3d9'),
        messages: [ask, {role: 'assistant', content: said}, {role: 'user', content: 'Again.'}],
      })
      .finalMessage()
    const [one, two] = await takeSimCalls(simOrigin, /\/chat\/completions$/)
    expect(JSON.stringify([one, two])).not.toContain('x-anthropic-billing-header')
    // the same system message and first turn, byte for byte
    expect(JSON.stringify(two.messages.slice(0, 2))).toBe(JSON.stringify(one.messages))
    expect(one.messages[0].content).toMatch(/^You are Claude Code\./)
    // turn 2's cached tokens are the whole of turn 1's prompt
    expect(first.usage.cache_read_input_tokens ?? 0).toBe(0)
    expect(second.usage.cache_read_input_tokens).toBe(first.usage.input_tokens)
  })

  it("leaves a request passed through to a Messages server that is not Anthropic's API, the same bytes every turn", async () => {
    // (the simulator at loopback: any server but api.anthropic.com, which keeps the line, is such
    // a server: DeepSeek's, Kimi's, Z.AI's Anthropic endpoints; src/daemon/router/billing-line.ts)
    // (Claude Code's User-Agent: the only client whose body is searched for the line)
    const client = new Anthropic({
      baseURL: base,
      apiKey: keys.get('cc-own')!,
      maxRetries: 0,
      defaultHeaders: {'user-agent': 'claude-cli/2.1.332 (external, cli)'},
    })
    await takeSimCalls(simOrigin, /./)
    for (const cch of ['71fea', 'a03c2'])
      await client.messages.create({
        model: 'claude-sonnet-4-5',
        max_tokens: 256,
        system: system(cch),
        messages: [{role: 'user', content: 'Say hello.'}],
      })
    const [first, second] = await takeSimCalls(simOrigin, /\/messages$/)
    expect(first.system).toEqual([system('71fea')[1]])
    expect(second).toEqual(first)
  })
})

describe('a tool schema whose top level is a union', {timeout: 60_000}, () => {
  it('reaches Anthropic from a chat client as one object, its forms in the description', async () => {
    const openai = new OpenAI({baseURL: `${base}/v1`, apiKey: keys.get('to-messages')!, maxRetries: 0})
    await takeSimCalls(simOrigin, /./)
    const answer = await openai.chat.completions.create({
      model: 'claude-sonnet-4-5',
      messages: [{role: 'user', content: 'Fetch issue 4 of gwctl.'}],
      tools: [
        {
          type: 'function',
          function: {name: 'fetch_issue', description: 'Fetches an issue.', parameters: unionSchema},
        },
      ],
    })
    expect(answer.choices[0].finish_reason).toBeDefined()
    const [body] = await takeSimCalls(simOrigin, /\/messages$/)
    expect(body.tools).toEqual([
      {name: 'fetch_issue', description: `Fetches an issue.\n\n${forms}`, input_schema: mergedSchema},
    ])
  })

  it('reaches a chat upstream from Gemini CLI as one object', async () => {
    const ai = new GoogleGenAI({apiKey: keys.get('gemini-chat')!, httpOptions: {baseUrl: base}})
    await takeSimCalls(simOrigin, /./)
    const answer = await ai.models.generateContent({
      model: 'gemini-2.5-flash',
      contents: [{role: 'user', parts: [{text: 'Fetch issue 4 of gwctl.'}]}],
      config: {tools: [{functionDeclarations: [{name: 'fetch_issue', parametersJsonSchema: unionSchema}]}]},
    })
    expect(answer.candidates?.length).toBe(1)
    const [body] = await takeSimCalls(simOrigin, /\/chat\/completions$/)
    expect(body.tools).toEqual([
      {type: 'function', function: {name: 'fetch_issue', description: forms, parameters: mergedSchema}},
    ])
  })
})

describe('whitespace-only text', {timeout: 60_000}, () => {
  it('a chat history with a blank system prompt and answers of "\\n\\n" is taken by Anthropic', async () => {
    const openai = new OpenAI({baseURL: `${base}/v1`, apiKey: keys.get('to-messages')!, maxRetries: 0})
    await takeSimCalls(simOrigin, /./)
    const answer = await openai.chat.completions.create({
      model: 'claude-sonnet-4-5',
      messages: [
        {role: 'system', content: '  '},
        {role: 'user', content: 'List the files.'},
        {
          role: 'assistant',
          content: '\n\n',
          tool_calls: [{id: 'c1', type: 'function', function: {name: 'ls', arguments: '{}'}}],
        },
        {role: 'tool', tool_call_id: 'c1', content: 'a.txt'},
        {role: 'assistant', content: '\n\n'},
        {role: 'user', content: 'Thanks. Which one is newest?'},
      ],
    })
    expect(answer.choices[0].message.content).toBeTruthy()
    const [body] = await takeSimCalls(simOrigin, /\/messages$/)
    expect(body.system).toBeUndefined()
    expect(body.messages.map((m: any) => [m.role, m.content.map((b: any) => b.type)])).toEqual([
      ['user', ['text']],
      ['assistant', ['tool_use']],
      ['user', ['tool_result', 'text']],
    ])
  })
})

describe("Claude Code's mid-conversation system messages", {timeout: 60_000}, () => {
  const schema = {type: 'object' as const, properties: {url: {type: 'string'}}, required: ['url']}
  const tools = [
    {name: 'Bash', description: 'Runs a command.', input_schema: {type: 'object' as const, properties: {}}},
    // an MCP tool, deferred (Claude Code 2.1.3xx's tool search)
    {name: 'mcp__docs__fetch', description: 'Fetches a page.', input_schema: schema, defer_loading: true},
  ] as Anthropic.Tool[]
  // its shapes (2.1.332's Avl): the text, the removals, the additions, the cache mark on the last;
  // and its per-turn effort statement
  const messages = [
    {role: 'user', content: 'Read the docs.'},
    {
      role: 'system',
      content: [
        {type: 'text', text: 'The docs MCP server connected; the lint server left.'},
        {type: 'tool_removal', tool: {type: 'tool_reference', name: 'mcp__lint__run'}},
        {
          type: 'tool_addition',
          tool: {type: 'tool_reference', name: 'mcp__docs__fetch'},
          cache_control: {type: 'ephemeral'},
        },
      ],
    },
    {role: 'system', content: [], output_config: {effort: 'low'}},
  ] as unknown as Anthropic.MessageParam[]
  const ask = (key: string, userAgent?: string) =>
    new Anthropic({
      baseURL: base,
      apiKey: keys.get(key)!,
      maxRetries: 0,
      defaultHeaders: {
        'anthropic-beta': 'mid-conversation-tool-changes-2026-07-01',
        ...(userAgent ? {'user-agent': userAgent} : {}),
      },
    }).messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 256,
      system: 'You are Claude Code.',
      tools,
      messages,
    })

  it('reach a chat upstream translated: the tool loaded, the removal a line, no 400', async () => {
    await takeSimCalls(simOrigin, /./)
    const answer = await ask('cc-chat')
    expect(answer.type).toBe('message')
    const [body] = await takeSimCalls(simOrigin, /\/chat\/completions$/)
    expect(body.tools.map((t: any) => t.function.name)).toEqual(['Bash', 'mcp__docs__fetch'])
    // the effort statement's effort, the request having none of its own
    expect(body.reasoning_effort).toBe('low')
    expect(body.messages.map((m: any) => m.role)).toEqual(['system', 'user'])
    expect(JSON.stringify(body.messages[0].content)).toContain(
      'The docs MCP server connected; the lint server left.',
    )
    expect(JSON.stringify(body.messages[0].content)).toContain(
      '[The tool \\"mcp__lint__run\\" is no longer available: do not call it.]',
    )
  })

  it("reach a Messages server that is not Anthropic's passed through: in the user turn before them, the system prompt as it came", async () => {
    await takeSimCalls(simOrigin, /./)
    const answer = await ask('cc-own', 'claude-cli/2.1.332 (external, cli)')
    expect(answer.type).toBe('message')
    const [body] = await takeSimCalls(simOrigin, /\/messages$/)
    expect(body.messages).toEqual([
      {
        role: 'user',
        content: [
          {type: 'text', text: 'Read the docs.'},
          {
            type: 'text',
            text: '<system-reminder>\nThe docs MCP server connected; the lint server left.\n</system-reminder>',
          },
          {
            type: 'text',
            text: '<system-reminder>\n[The tool "mcp__lint__run" is no longer available: do not call it.]\n</system-reminder>',
            cache_control: {type: 'ephemeral'},
          },
        ],
      },
    ])
    expect(body.system).toBe('You are Claude Code.')
    expect(body.tools).toEqual([
      tools[0],
      {name: 'mcp__docs__fetch', description: 'Fetches a page.', input_schema: schema},
    ])
  })
})
