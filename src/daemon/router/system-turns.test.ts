/**
 * Claude Code's mid-conversation system messages out of a Messages body passed through to a server
 * that is not Anthropic's: the bytes that go upstream, and the bodies left as they came.
 */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {withDeferredToolsLoaded} from '../../protocols/deferred-tools.js'
import type {ProxyTarget} from './proxy.js'
import type {Upstream} from './proxy-fixture.js'
import {
  MESSAGES_ANSWER,
  MESSAGES_STREAM,
  messagesTarget,
  ProxyGateway,
  startJudgedUpstream,
} from './proxy-fixture.js'
import {withSystemTurnsHoisted} from './system-turns.js'

const SYSTEM = [
  {type: 'text', text: "You are Claude Code, Anthropic's official CLI for Claude."},
  {type: 'text', text: 'The rest of the prompt.', cache_control: {type: 'ephemeral'}},
]
const schema = {type: 'object', properties: {x: {type: 'string'}}}
const TOOLS = [
  {name: 'Bash', description: 'Runs "system" commands', input_schema: schema},
  {name: 'mcp__docs__fetch', description: 'Fetches.', input_schema: schema, defer_loading: true},
]
/** The Agent tool's agent types, as Claude Code sends them after the last user turn. */
const AGENTS = {
  role: 'system',
  content: [
    {type: 'text', text: 'Agent types: general-purpose, Explore.', cache_control: {type: 'ephemeral'}},
  ],
}
/** Claude Code's key order: model, messages, system, tools, then the rest. */
const claudeBody = (messages: unknown[], system: unknown = SYSTEM, extra: Record<string, unknown> = {}) =>
  Buffer.from(
    JSON.stringify({
      model: 'deepseek-v4',
      messages,
      system,
      tools: TOOLS,
      max_tokens: 32000,
      ...extra,
      stream: true,
    }),
  )
const user = (text: string) => ({role: 'user', content: [{type: 'text', text}]})
const parse = (b: Buffer) => JSON.parse(String(b)) as Record<string, any>

describe('withSystemTurnsHoisted', () => {
  it("moves a system message's text to the end of the system prompt, every other byte as it came", () => {
    const out = withSystemTurnsHoisted(claudeBody([user('hi'), AGENTS]))
    expect(String(out)).toBe(String(claudeBody([user('hi')], [...SYSTEM, ...AGENTS.content])))
  })

  it('keeps the system bytes of turn 1 at the head of turn 2 (the prefix cache holds)', () => {
    const turn1 = String(withSystemTurnsHoisted(claudeBody([user('hi'), AGENTS])))
    const skills = {role: 'system', content: 'Skills: commit, review.'}
    const turn2 = withSystemTurnsHoisted(
      claudeBody([user('hi'), AGENTS, {role: 'assistant', content: 'hello'}, user('more'), skills]),
    )
    const system1 = JSON.stringify(parse(Buffer.from(turn1)).system)
    const system2 = JSON.stringify(parse(turn2).system)
    expect(system2.startsWith(system1.slice(0, -1))).toBe(true)
    expect(parse(turn2).system.at(-1)).toEqual({type: 'text', text: 'Skills: commit, review.'})
    expect(parse(turn2).messages.map((m: any) => m.role)).toEqual(['user', 'assistant', 'user'])
  })

  it('makes a string system prompt its first block; a body without one gets the texts alone', () => {
    expect(parse(withSystemTurnsHoisted(claudeBody([user('hi'), AGENTS], 'Be brief.'))).system).toEqual([
      {type: 'text', text: 'Be brief.'},
      ...AGENTS.content,
    ])
    const none = Buffer.from(
      JSON.stringify({model: 'm', messages: [user('hi'), {role: 'system', content: 'S'}]}),
    )
    expect(String(withSystemTurnsHoisted(none))).toBe(
      '{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],"system":[{"type":"text","text":"S"}]}',
    )
  })

  it('loads a deferred tool by reference, adds a defined one, keeps a removed one with a line', () => {
    const definition = {name: 'mcp__late__ping', description: 'Pings.', input_schema: schema}
    const changes = {
      role: 'system',
      content: [
        {type: 'text', text: 'MCP tools changed.'},
        {type: 'tool_removal', tool: {type: 'tool_reference', name: 'Bash'}},
        {type: 'tool_addition', tool: {type: 'tool_reference', name: 'mcp__docs__fetch'}},
        {
          type: 'tool_addition',
          tool: {type: 'tool_definition', definition},
          cache_control: {type: 'ephemeral'},
        },
      ],
    }
    const out = parse(withSystemTurnsHoisted(claudeBody([user('hi'), changes])))
    expect(out.tools).toEqual([
      TOOLS[0],
      {name: 'mcp__docs__fetch', description: 'Fetches.', input_schema: schema},
      definition,
    ])
    // the message's cache mark on its last text, the removal's line
    expect(out.system).toEqual([
      ...SYSTEM,
      {type: 'text', text: 'MCP tools changed.'},
      {
        type: 'text',
        text: '[The tool "Bash" is no longer available: do not call it.]',
        cache_control: {type: 'ephemeral'},
      },
    ])
    expect(out.messages).toEqual([user('hi')])
  })

  it("takes a per-turn effort statement as the request's effort; any other block is a line", () => {
    const statement = {role: 'system', content: [], output_config: {effort: 'low'}}
    const out = parse(
      withSystemTurnsHoisted(
        claudeBody([user('hi'), statement], SYSTEM, {
          thinking: {type: 'adaptive'},
          output_config: {effort: 'high'},
        }),
      ),
    )
    expect(out.output_config).toEqual({effort: 'low'})
    expect(out.system).toEqual(SYSTEM)
    expect(out.messages).toEqual([user('hi')])
    // no output_config in the request: none added
    expect(parse(withSystemTurnsHoisted(claudeBody([user('hi'), statement]))).output_config).toBeUndefined()
    const odd = {role: 'system', content: [{type: 'image', source: {type: 'url', url: 'u'}}]}
    expect(parse(withSystemTurnsHoisted(claudeBody([user('hi'), odd]))).system.at(-1)).toEqual({
      type: 'text',
      text: '[This system message held a block of type "image", left out: it cannot be sent to this model]',
    })
  })

  it('leaves a body without a system message as it came (the same Buffer)', () => {
    const cases = [
      claudeBody([user('hi')]),
      // the words in a text (a string's quotes are escaped: no match)
      claudeBody([user('"role":"system"')]),
      // a tool call's input with them: a match, but no system message
      claudeBody([
        user('hi'),
        {role: 'assistant', content: [{type: 'tool_use', id: 't', name: 'Bash', input: {role: 'system'}}]},
      ]),
      Buffer.from('{"messages":[{"role":"system"'),
    ]
    for (const body of cases) expect(withSystemTurnsHoisted(body)).toBe(body)
  })
})

describe("Claude Code's system messages passed through to a server that is not Anthropic", () => {
  const received: Buffer[] = []
  let upstream: Upstream
  let targets: ProxyTarget[] = []
  const gateway = new ProxyGateway({route: () => ({targets})})

  beforeAll(async () => {
    // DeepSeek's Anthropic endpoint, as it answers a system message in `messages`
    upstream = await startJudgedUpstream(
      received,
      (body) =>
        (body.messages as any[]).some((m) => m.role === 'system')
          ? {
              status: 400,
              body: {
                error: {
                  message: "messages[1].role: unknown variant 'system', expected 'user' or 'assistant'",
                  type: 'invalid_request_error',
                },
              },
            }
          : undefined,
      {stream: MESSAGES_STREAM, json: MESSAGES_ANSWER},
    )
    await gateway.listen()
  })

  afterAll(async () => {
    await gateway.close()
    upstream.close()
  })

  const send = (body: Buffer, userAgent: string) =>
    fetch(`${gateway.url}/v1/messages`, {
      method: 'POST',
      headers: {'content-type': 'application/json', 'x-api-key': 'gw', 'user-agent': userAgent},
      body,
    })

  it('go in its system prompt: the server answers, the bytes as stated', async () => {
    targets = [messagesTarget('deepseek', 'deepseek-v4', upstream.origin)]
    const answer = await send(claudeBody([user('hi'), AGENTS]), 'claude-cli/2.1.332 (external, cli)')
    expect(answer.status).toBe(200)
    expect(received).toHaveLength(1)
    expect(String(received[0])).toBe(
      '{"model":"deepseek-v4","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],' +
        '"system":[{"type":"text","text":"You are Claude Code, Anthropic\'s official CLI for Claude."},' +
        '{"type":"text","text":"The rest of the prompt.","cache_control":{"type":"ephemeral"}},' +
        '{"type":"text","text":"Agent types: general-purpose, Explore.","cache_control":{"type":"ephemeral"}}],' +
        // (the deferred tool nobody referenced left out: DeepSeek's model is not Claude's, ./tool-search.ts)
        '"tools":[{"name":"Bash","description":"Runs \\"system\\" commands","input_schema":{"type":"object","properties":{"x":{"type":"string"}}}}],' +
        '"max_tokens":32000,"stream":true}',
    )
  })

  it("are another client's own business: its body goes as it came", async () => {
    received.length = 0
    const body = claudeBody([user('hi'), AGENTS])
    const answer = await send(body, 'opencode/1.18.33')
    expect(answer.status).toBe(400)
    // (its system message where it was; only its deferred tool nobody referenced left out, as for
    // any client's body to a model that is not Claude's: ./tool-search.ts)
    expect(received).toHaveLength(1)
    expect(String(received[0])).toBe(String(withDeferredToolsLoaded(body)))
    expect(String(received[0])).toContain('"role":"system"')
  })
})
