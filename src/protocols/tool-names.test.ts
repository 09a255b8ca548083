import {describe, expect, it} from 'vitest'

import {BoundedCarry} from './carry.js'
import type {Family} from './ir.js'
import {decodeClientRequest, encodeUpstreamRequest, StreamTranslator, translateResponse} from './translate.js'

/** A Claude Code plugin's MCP tool: 68 characters, taken by Anthropic (128), not by OpenAI or Gemini (64). */
const LONG = 'mcp__plugin_chrome-devtools-mcp_chrome-devtools__get_console_message'
const tool = (name: string) => ({name, description: 'd', input_schema: {type: 'object', properties: {}}})

const claudeCode = (extra: Record<string, unknown> = {}) => ({
  model: 'claude-sonnet-4-5',
  max_tokens: 256,
  tools: [tool('Read'), tool(LONG)],
  messages: [{role: 'user', content: 'What did the console say?'}],
  ...extra,
})

const sent = (family: Family, body: unknown, up: Family): any =>
  JSON.parse(encodeUpstreamRequest(decodeClientRequest(family, body, {}), up, 'm').body.toString())

describe('tool names an upstream refuses', () => {
  it("Claude Code's long MCP name goes to OpenAI in 64 characters, its head and tail kept, the same every time", () => {
    const body = sent('messages', claudeCode(), 'chat')
    const [read, long] = body.tools.map((t: any) => t.function.name)
    expect(read).toBe('Read')
    expect(long).toHaveLength(64)
    expect(long).toMatch(/^[a-zA-Z0-9_-]+$/)
    expect(long.startsWith('mcp__plugin_chrome-devtools')).toBe(true)
    expect(long.endsWith('get_console_message')).toBe(true)
    expect(sent('messages', claudeCode(), 'chat').tools[1].function.name).toBe(long)
    // Anthropic takes it as it is
    expect(
      sent(
        'chat',
        {
          model: 'x',
          messages: [{role: 'user', content: 'hi'}],
          tools: [{type: 'function', function: {name: LONG, parameters: {}}}],
        },
        'messages',
      ).tools[0].name,
    ).toBe(LONG)
  })

  it('renames the history and the tool choice alike, and the call comes back under the client name', () => {
    const history = claudeCode({
      tool_choice: {type: 'tool', name: LONG},
      messages: [
        {role: 'user', content: 'What did the console say?'},
        {role: 'assistant', content: [{type: 'tool_use', id: 'toolu_1', name: LONG, input: {}}]},
        {role: 'user', content: [{type: 'tool_result', tool_use_id: 'toolu_1', content: 'no errors'}]},
      ],
    })
    const client = decodeClientRequest('messages', history, {})
    const body = JSON.parse(encodeUpstreamRequest(client, 'chat', 'm').body.toString())
    const upstreamName = body.tools[1].function.name
    expect(upstreamName).not.toBe(LONG)
    expect(body.tool_choice).toEqual({type: 'function', function: {name: upstreamName}})
    expect(body.messages[1].tool_calls[0].function.name).toBe(upstreamName)
    // the answer's call, JSON and stream
    const answer = translateResponse('chat', client, {
      id: 'c1',
      object: 'chat.completion',
      model: 'm',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: null,
            tool_calls: [{id: 'call_1', type: 'function', function: {name: upstreamName, arguments: '{}'}}],
          },
          finish_reason: 'tool_calls',
        },
      ],
      usage: {prompt_tokens: 5, completion_tokens: 2},
    })
    expect((answer.body.content as any[])[0]).toMatchObject({type: 'tool_use', name: LONG})
    const stream = new StreamTranslator(
      'chat',
      decodeClientRequest('messages', {...history, stream: true}, {}),
      {
        carry: new BoundedCarry(),
      },
    )
    const chunk = (delta: unknown, finish: string | null = null) =>
      `data: ${JSON.stringify({id: 'c2', object: 'chat.completion.chunk', model: 'm', choices: [{index: 0, delta, finish_reason: finish}]})}\n\n`
    const out =
      stream.push(
        Buffer.from(
          chunk({role: 'assistant'}) +
            chunk({
              tool_calls: [
                {index: 0, id: 'call_2', type: 'function', function: {name: upstreamName, arguments: '{}'}},
              ],
            }) +
            chunk({}, 'tool_calls') +
            'data: [DONE]\n\n',
        ),
      ) + stream.end()
    expect(out).toContain(`"name":"${LONG}"`)
    expect(out).not.toContain(upstreamName)
  })

  it('a deferred MCP tool ToolSearch loaded (Claude Code 2.1.3xx): its definition in the result names it as the upstream does', () => {
    const body = claudeCode({
      tools: [tool('ToolSearch'), {...tool(LONG), defer_loading: true}],
      messages: [
        {role: 'user', content: 'What did the console say?'},
        {
          role: 'assistant',
          content: [{type: 'tool_use', id: 'toolu_1', name: 'ToolSearch', input: {query: 'select:console'}}],
        },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'toolu_1',
              content: [{type: 'tool_reference', tool_name: LONG}],
            },
            {type: 'text', text: 'Tool loaded.'},
          ],
        },
      ],
    })
    for (const up of ['chat', 'gemini'] as const) {
      const out = sent('messages', body, up)
      const names: string[] =
        up === 'chat'
          ? out.tools.map((t: any) => t.function.name)
          : out.tools[0].functionDeclarations.map((t: any) => t.name)
      expect(names[0]).toBe('ToolSearch')
      expect(names[1]).not.toBe(LONG)
      const result =
        up === 'chat'
          ? out.messages.find((m: any) => m.role === 'tool').content
          : JSON.stringify(out.contents.at(-1).parts[0].functionResponse.response)
      const definition = JSON.stringify({
        description: 'd',
        name: names[1],
        parameters: {type: 'object', properties: {}},
      })
      expect(result).toContain(up === 'chat' ? definition : JSON.stringify(definition).slice(1, -1))
      expect(result).not.toContain(LONG)
    }
  })

  it('renames a call in the history whose tool is no longer in the list (an MCP server gone mid-session)', () => {
    const body = sent(
      'messages',
      claudeCode({
        tools: [tool('Read')],
        messages: [
          {role: 'user', content: 'What did the console say?'},
          {role: 'assistant', content: [{type: 'tool_use', id: 'toolu_1', name: LONG, input: {}}]},
          {role: 'user', content: [{type: 'tool_result', tool_use_id: 'toolu_1', content: 'no errors'}]},
        ],
      }),
      'chat',
    )
    const name = body.messages[1].tool_calls[0].function.name
    expect(name).toHaveLength(64)
    expect(name.endsWith('get_console_message')).toBe(true)
    // a literal name in the history that a rename would take keeps it; the rename gets a hash
    const gemini = {
      contents: [
        {role: 'user', parts: [{text: 'search'}]},
        {role: 'model', parts: [{functionCall: {name: 'github_search', args: {}}}]},
        {role: 'user', parts: [{functionResponse: {name: 'github_search', response: {output: 'x'}}}]},
      ],
      tools: [{functionDeclarations: [{name: 'github.search', parameters: {type: 'object'}}]}],
    }
    const chat = sent('gemini', gemini, 'chat')
    expect(chat.messages[1].tool_calls[0].function.name).toBe('github_search')
    expect(chat.tools[0].function.name).toMatch(/^github_search_[0-9a-f]{8}$/)
  })

  it("Gemini's dots go to OpenAI as `_`, a name that would clash gets a hash, and Gemini gets a letter first", () => {
    const gemini = {
      contents: [{role: 'user', parts: [{text: 'search'}]}],
      tools: [
        {
          functionDeclarations: [
            {name: 'github.search', parameters: {type: 'object'}},
            {name: 'github_search', parameters: {type: 'object'}},
          ],
        },
      ],
    }
    const names = sent('gemini', gemini, 'chat').tools.map((t: any) => t.function.name)
    expect(names[1]).toBe('github_search')
    expect(names[0]).toMatch(/^github_search_[0-9a-f]{8}$/)
    const toGemini = sent(
      'chat',
      {
        model: 'x',
        messages: [{role: 'user', content: 'hi'}],
        tools: [{type: 'function', function: {name: '3d-render', parameters: {}}}],
      },
      'gemini',
    )
    expect(toGemini.tools[0].functionDeclarations[0].name).toMatch(/^_3d-render_[0-9a-f]{8}$/)
  })

  it("a Gemini upstream's function response carries the call's renamed name", () => {
    const body = sent(
      'messages',
      {
        model: 'c',
        max_tokens: 100,
        tools: [tool(`${'x'.repeat(70)}`)],
        messages: [
          {role: 'user', content: 'go'},
          {role: 'assistant', content: [{type: 'tool_use', id: 'toolu_1', name: 'x'.repeat(70), input: {}}]},
          {role: 'user', content: [{type: 'tool_result', tool_use_id: 'toolu_1', content: 'done'}]},
        ],
      },
      'gemini',
    )
    const declared = body.tools[0].functionDeclarations[0].name
    expect(declared).toHaveLength(64)
    expect(body.contents[1].parts[0].functionCall.name).toBe(declared)
    expect(body.contents[2].parts[0].functionResponse.name).toBe(declared)
  })
})

describe('a function named web_search beside the web search the upstream runs', () => {
  const fn = (name: string) => ({type: 'function', name, parameters: {type: 'object', properties: {}}})
  /** Codex with a user's own `web_search` function (an MCP server's) beside OpenAI's search. */
  const codex = (input: unknown[] = [{role: 'user', content: 'find it'}], extra = {}) => ({
    model: 'gpt-5',
    input,
    tools: [fn('shell'), fn('web_search'), {type: 'web_search'}],
    ...extra,
  })
  /** Gemini CLI's request with Google Search and a `web_search` function. */
  const geminiCli = {
    contents: [{role: 'user', parts: [{text: 'find it'}]}],
    tools: [{functionDeclarations: [{name: 'web_search', parameters: {type: 'object'}}]}, {googleSearch: {}}],
  }
  const functionNames = (up: Family, body: any): string[] =>
    up === 'messages'
      ? body.tools.filter((t: any) => t.type === undefined).map((t: any) => t.name)
      : up === 'gemini'
        ? body.tools.flatMap((t: any) => (t.functionDeclarations ?? []).map((d: any) => d.name))
        : up === 'chat'
          ? body.tools.map((t: any) => t.function.name)
          : body.tools.filter((t: any) => t.type === 'function').map((t: any) => t.name)

  it.each([
    // [what, client, body, upstream, the function's name there]
    ['Codex to Claude: renamed', 'responses', codex(), 'messages', /^web_search_[0-9a-f]{8}$/],
    ['Codex to Gemini: kept (googleSearch has no name)', 'responses', codex(), 'gemini', /^web_search$/],
    ['Codex to chat: kept (no search there)', 'responses', codex(), 'chat', /^web_search$/],
    ['Gemini CLI to Claude: renamed', 'gemini', geminiCli, 'messages', /^web_search_[0-9a-f]{8}$/],
    ['Gemini CLI to OpenAI: renamed', 'gemini', geminiCli, 'responses', /^web_search_[0-9a-f]{8}$/],
    [
      'Codex to Claude without the search: kept',
      'responses',
      codex(undefined, {tools: [fn('web_search')]}),
      'messages',
      /^web_search$/,
    ],
  ] as const)('%s', (_, client, body, up, name) => {
    const out = sent(client, body, up)
    const names = functionNames(up, out)
    expect(names.filter((n) => name.test(n))).toHaveLength(1)
    if (up === 'messages') {
      // one tool of each name: the search is Anthropic's `web_search`, the function another name
      const all = out.tools.map((t: any) => t.name)
      expect(new Set(all).size).toBe(all.length)
    }
    // the same name on every request (a pure function of the name: the prompt cache holds)
    expect(functionNames(up, sent(client, body, up))).toEqual(names)
  })

  it("renames the history's calls and a forced choice, and the upstream's calls come back as web_search (JSON and stream)", () => {
    const history = codex(
      [
        {role: 'user', content: 'find it'},
        {type: 'function_call', call_id: 'call_1', name: 'web_search', arguments: '{"q":"a"}'},
        {type: 'function_call_output', call_id: 'call_1', output: 'nothing'},
      ],
      {tool_choice: {type: 'function', name: 'web_search'}},
    )
    const client = decodeClientRequest('responses', history, {})
    const body = JSON.parse(encodeUpstreamRequest(client, 'messages', 'm').body.toString())
    const renamed = body.tools.find((t: any) => t.type === undefined && t.name !== 'shell').name
    expect(renamed).toMatch(/^web_search_[0-9a-f]{8}$/)
    expect(body.tools.find((t: any) => t.type?.startsWith('web_search_'))).toMatchObject({name: 'web_search'})
    expect(body.tool_choice).toMatchObject({type: 'tool', name: renamed})
    expect(body.messages[1].content[0]).toMatchObject({type: 'tool_use', name: renamed})
    const answer = translateResponse('messages', client, {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'm',
      content: [{type: 'tool_use', id: 'toolu_2', name: renamed, input: {q: 'b'}}],
      stop_reason: 'tool_use',
      usage: {input_tokens: 5, output_tokens: 2},
    })
    expect((answer.body.output as any[]).find((i) => i.type === 'function_call')).toMatchObject({
      name: 'web_search',
      arguments: '{"q":"b"}',
    })
    const stream = new StreamTranslator(
      'messages',
      decodeClientRequest('responses', {...history, stream: true}, {}),
    )
    const event = (type: string, data: Record<string, unknown>) =>
      `event: ${type}\ndata: ${JSON.stringify({type, ...data})}\n\n`
    const out =
      stream.push(
        Buffer.from(
          event('message_start', {
            message: {
              id: 'msg_2',
              type: 'message',
              role: 'assistant',
              model: 'm',
              content: [],
              usage: {input_tokens: 5, output_tokens: 1},
            },
          }) +
            event('content_block_start', {
              index: 0,
              content_block: {type: 'tool_use', id: 'toolu_3', name: renamed, input: {}},
            }) +
            event('content_block_delta', {
              index: 0,
              delta: {type: 'input_json_delta', partial_json: '{"q":"c"}'},
            }) +
            event('content_block_stop', {index: 0}) +
            event('message_delta', {delta: {stop_reason: 'tool_use'}, usage: {output_tokens: 3}}) +
            event('message_stop', {}),
        ),
      ) + stream.end()
    expect(out).toContain('"name":"web_search"')
    expect(out).not.toContain(renamed)
  })
})
