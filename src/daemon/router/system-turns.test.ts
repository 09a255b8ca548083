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
import {withSystemTurnsPlaced} from './system-turns.js'

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

/** A system message's text as it goes in a user turn. */
const reminder = (text: string, mark?: unknown) => ({
  type: 'text',
  text: `<system-reminder>\n${text}\n</system-reminder>`,
  ...(mark !== undefined && {cache_control: mark}),
})

describe('withSystemTurnsPlaced', () => {
  it('puts a system message after a user turn at its end, as a system-reminder block; every other byte as it came', () => {
    const out = withSystemTurnsPlaced(claudeBody([user('hi'), AGENTS]))
    expect(String(out)).toBe(
      String(
        claudeBody([
          {
            role: 'user',
            content: [
              {type: 'text', text: 'hi'},
              reminder('Agent types: general-purpose, Explore.', {type: 'ephemeral'}),
            ],
          },
        ]),
      ),
    )
  })

  it('keeps the system prompt and the turns of request 1 at the head of request 2 (the prefix cache holds)', () => {
    const date = {role: 'system', content: "Today's date is 2026-07-01."}
    const one = parse(withSystemTurnsPlaced(claudeBody([user('hi'), date])))
    const call = {role: 'assistant', content: [{type: 'tool_use', id: 't1', name: 'Bash', input: {}}]}
    const result = {role: 'user', content: [{type: 'tool_result', tool_use_id: 't1', content: 'a.txt'}]}
    const env = {role: 'system', content: [{type: 'text', text: '# Environment'}]}
    const two = parse(withSystemTurnsPlaced(claudeBody([user('hi'), date, call, result, env])))
    expect(two.system).toEqual(one.system)
    expect(two.system).toEqual(SYSTEM)
    expect(JSON.stringify(two.messages).startsWith(JSON.stringify(one.messages).slice(0, -1))).toBe(true)
    expect(two.messages).toEqual([
      {role: 'user', content: [{type: 'text', text: 'hi'}, reminder("Today's date is 2026-07-01.")]},
      call,
      {role: 'user', content: [...result.content, reminder('# Environment')]},
    ])
  })

  it('puts one after an assistant turn at the start of the next user turn, after its tool results', () => {
    const call = {role: 'assistant', content: [{type: 'tool_use', id: 't1', name: 'Bash', input: {}}]}
    const result = {
      role: 'user',
      content: [
        {type: 'tool_result', tool_use_id: 't1', content: 'a.txt'},
        {type: 'text', text: 'go on'},
      ],
    }
    const out = parse(withSystemTurnsPlaced(claudeBody([user('hi'), call, AGENTS, result])))
    expect(out.messages[2]).toEqual({
      role: 'user',
      content: [
        result.content[0],
        reminder('Agent types: general-purpose, Explore.', {type: 'ephemeral'}),
        result.content[1],
      ],
    })
    // a string turn becomes its one text block
    const plain = parse(
      withSystemTurnsPlaced(
        claudeBody([
          user('hi'),
          {role: 'assistant', content: 'ok'},
          {role: 'system', content: 'S'},
          {role: 'user', content: 'more'},
        ]),
      ),
    )
    expect(plain.messages[2]).toEqual({role: 'user', content: [reminder('S'), {type: 'text', text: 'more'}]})
    expect(plain.system).toEqual(SYSTEM)
  })

  it('sends one with no user turn beside it to the end of the system prompt (a string one its first block)', () => {
    const between = [user('hi'), {role: 'assistant', content: 'a'}, AGENTS, {role: 'assistant', content: 'b'}]
    expect(parse(withSystemTurnsPlaced(claudeBody(between, 'Be brief.'))).system).toEqual([
      {type: 'text', text: 'Be brief.'},
      ...AGENTS.content,
    ])
    const none = Buffer.from(
      JSON.stringify({
        model: 'm',
        messages: [
          {role: 'assistant', content: 'a'},
          {role: 'system', content: 'S'},
        ],
      }),
    )
    expect(String(withSystemTurnsPlaced(none))).toBe(
      '{"model":"m","messages":[{"role":"assistant","content":"a"}],"system":[{"type":"text","text":"S"}]}',
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
    const out = parse(withSystemTurnsPlaced(claudeBody([user('hi'), changes])))
    expect(out.tools).toEqual([
      TOOLS[0],
      {name: 'mcp__docs__fetch', description: 'Fetches.', input_schema: schema},
      definition,
    ])
    // the message's cache mark on its last text, the removal's line
    expect(out.system).toEqual(SYSTEM)
    expect(out.messages).toEqual([
      {
        role: 'user',
        content: [
          {type: 'text', text: 'hi'},
          reminder('MCP tools changed.'),
          reminder('[The tool "Bash" is no longer available: do not call it.]', {type: 'ephemeral'}),
        ],
      },
    ])
  })

  it("takes a per-turn effort statement as the request's effort; any other block is a line", () => {
    const statement = {role: 'system', content: [], output_config: {effort: 'low'}}
    const out = parse(
      withSystemTurnsPlaced(
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
    expect(parse(withSystemTurnsPlaced(claudeBody([user('hi'), statement]))).output_config).toBeUndefined()
    const odd = {role: 'system', content: [{type: 'image', source: {type: 'url', url: 'u'}}]}
    expect(parse(withSystemTurnsPlaced(claudeBody([user('hi'), odd]))).messages[0].content.at(-1)).toEqual(
      reminder(
        '[This system message held a block of type "image", left out: it cannot be sent to this model]',
      ),
    )
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
    for (const body of cases) expect(withSystemTurnsPlaced(body)).toBe(body)
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

  it('go in the user turn beside them: the server answers, the bytes as stated', async () => {
    targets = [messagesTarget('deepseek', 'deepseek-v4', upstream.origin)]
    const answer = await send(claudeBody([user('hi'), AGENTS]), 'claude-cli/2.1.332 (external, cli)')
    expect(answer.status).toBe(200)
    expect(received).toHaveLength(1)
    expect(String(received[0])).toBe(
      '{"model":"deepseek-v4","messages":[{"role":"user","content":[{"type":"text","text":"hi"},' +
        '{"type":"text","text":"<system-reminder>\\nAgent types: general-purpose, Explore.\\n</system-reminder>","cache_control":{"type":"ephemeral"}}]}],' +
        '"system":[{"type":"text","text":"You are Claude Code, Anthropic\'s official CLI for Claude."},' +
        '{"type":"text","text":"The rest of the prompt.","cache_control":{"type":"ephemeral"}}],' +
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
