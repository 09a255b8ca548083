import Anthropic from '@anthropic-ai/sdk'
import {describe, expect, it} from 'vitest'

import {BoundedCarry} from './carry.js'
import {serveOnce} from './cm-test-helpers.js'
import type {Family, Message, Request, Response} from './ir.js'
import {TranslationError, emptyUsage} from './ir.js'
import {chatCodec} from './chat.js'
import * as claudeCode from './deferred-tools-fixture.js'
import {messagesCodec} from './messages.js'
import {claudeThinking} from './messages-request.js'
import {droppedThinking, MessagesStreamDecoder} from './messages-stream.js'
import {decodeClientRequest, encodeUpstreamRequest} from './translate.js'

const encodeMessages = (r: Request): any => messagesCodec.encodeRequest(r, 'up')

const base: Request = {model: 'm', system: [], messages: [], tools: [], stream: false}
const user = (text: string): Message => ({role: 'user', parts: [{type: 'text', text}]})
const user0 = (text: string) => ({role: 'user', content: text})

describe('messages decodeRequest', () => {
  it('reads every block type it can carry', () => {
    const r = messagesCodec.decodeRequest(
      {
        model: 'claude-x',
        max_tokens: 100,
        system: [{type: 'text', text: 'S', cache_control: {type: 'ephemeral', ttl: '1h'}}],
        messages: [
          {
            role: 'user',
            content: [
              {type: 'text', text: 'see', cache_control: {type: 'ephemeral'}},
              {type: 'image', source: {type: 'base64', media_type: 'image/gif', data: 'R0'}},
              {type: 'image', source: {type: 'url', url: 'https://x.test/i.png'}},
            ],
          },
          {
            role: 'assistant',
            content: [
              {type: 'thinking', thinking: 'T', signature: 'SIG'},
              {type: 'thinking', thinking: 'G', signature: 'gwx1.gemini.GSIG'},
              {type: 'thinking', thinking: '', signature: 'gwx1.responses.{"id":"rs_1"}'},
              {type: 'redacted_thinking', data: 'RED'},
              {type: 'tool_use', id: 'toolu_1', name: 'f', input: {a: 1}},
            ],
          },
          {
            role: 'user',
            content: [
              {
                type: 'tool_result',
                tool_use_id: 'toolu_1',
                content: 'out',
                is_error: true,
                cache_control: {type: 'ephemeral'},
              },
              {type: 'text', text: 'more'},
            ],
          },
        ],
      },
      {},
    )
    expect(r.system).toEqual([{type: 'text', text: 'S', cache: '1h'}])
    expect(r.messages).toEqual([
      {
        role: 'user',
        parts: [
          {type: 'text', text: 'see', cache: 'ephemeral'},
          {type: 'image', mediaType: 'image/gif', data: 'R0'},
          {type: 'image', url: 'https://x.test/i.png'},
        ],
      },
      {
        role: 'assistant',
        parts: [
          {type: 'reasoning', text: 'T', signature: {family: 'messages', value: 'SIG'}},
          {type: 'reasoning', text: 'G', signature: {family: 'gemini', value: 'GSIG', wrapped: true}},
          {
            type: 'reasoning',
            text: '',
            encrypted: {family: 'responses', value: '{"id":"rs_1"}', wrapped: true},
          },
          {type: 'reasoning', text: '', redacted: {family: 'messages', value: 'RED'}},
          {type: 'tool_call', id: 'toolu_1', name: 'f', arguments: '{"a":1}'},
        ],
      },
      {
        role: 'user',
        parts: [
          {
            type: 'tool_result',
            callId: 'toolu_1',
            name: 'f',
            content: [{type: 'text', text: 'out', cache: 'ephemeral'}],
            isError: true,
          },
          {type: 'text', text: 'more'},
        ],
      },
    ])
  })

  // a web search's blocks are read (web-search.test.ts); other server tools' have no equivalent
  it.each([
    [{type: 'code_execution_tool_result'}, 'code_execution_tool_result'],
    [
      {type: 'server_tool_use', name: 'code_execution', id: 's', input: {}},
      'server_tool_use (code_execution)',
    ],
  ])("refuses an assistant turn's %j block by name", (block, named) => {
    const body = {
      model: 'm',
      max_tokens: 1,
      messages: [user0('q'), {role: 'assistant', content: [block]}],
    }
    expect(() => messagesCodec.decodeRequest(body, {})).toThrow(TranslationError)
    expect(() => messagesCodec.decodeRequest(body, {})).toThrow(named)
  })

  it.each([
    [{tool_choice: {type: 'auto'}}, {toolChoice: {type: 'auto'}}],
    [
      {tool_choice: {type: 'any', disable_parallel_tool_use: true}},
      {toolChoice: {type: 'required'}, parallelToolCalls: false},
    ],
    [{tool_choice: {type: 'tool', name: 'f'}}, {toolChoice: {type: 'tool', name: 'f'}}],
    [{tool_choice: {type: 'none'}}, {toolChoice: {type: 'none'}}],
    [{thinking: {type: 'enabled', budget_tokens: 2048}}, {reasoning: {include: true, budgetTokens: 2048}}],
    [{thinking: {type: 'disabled'}}, {reasoning: {disabled: true}}],
    [{thinking: {type: 'adaptive'}}, {reasoning: {include: true}}],
    [{metadata: {user_id: 'u'}}, {user: 'u'}],
    [
      {stop_sequences: ['X'], temperature: 1, top_p: 0.5},
      {stop: ['X'], temperature: 1, topP: 0.5},
    ],
  ])('maps %j', (fields, expected) => {
    expect(
      messagesCodec.decodeRequest({model: 'm', max_tokens: 9, messages: [], ...fields}, {}),
    ).toMatchObject({
      maxTokens: 9,
      ...expected,
    })
  })

  it('keeps custom tools as functions and typed server tools apart', () => {
    const r = messagesCodec.decodeRequest(
      {
        model: 'm',
        max_tokens: 1,
        messages: [],
        tools: [
          {name: 'f', description: 'd', input_schema: {type: 'object'}},
          {type: 'custom', name: 'g', input_schema: {type: 'object'}},
          {type: 'web_search_20250305', name: 'web_search'},
          {type: 'bash_20250124', name: 'bash'},
        ],
      },
      {},
    )
    expect(r.tools.map((t) => t.name)).toEqual(['f', 'g'])
    expect(r.builtinTools?.map((t) => (t.raw as {type: string}).type)).toEqual(['bash_20250124'])
    // web search is one every family but chat runs (web-search.test.ts)
    expect(r.webSearch).toEqual({})
  })

  it('moves mid-conversation system messages into the system prompt, in order, with their cache marks', () => {
    // Claude Code's shape: the Agent tool's agent types as a system message after the last user turn
    const r = messagesCodec.decodeRequest(
      {
        model: 'm',
        max_tokens: 10,
        system: [{type: 'text', text: 'TOP', cache_control: {type: 'ephemeral'}}],
        messages: [
          {role: 'user', content: [{type: 'text', text: 'hi'}]},
          {role: 'assistant', content: 'hello'},
          {role: 'user', content: 'A'},
          {role: 'system', content: [{type: 'text', text: 'S1', cache_control: {type: 'ephemeral'}}]},
          {role: 'user', content: [{type: 'text', text: 'B'}]},
          {role: 'system', content: 'S2'},
          {role: 'system', content: ''},
        ],
      },
      {},
    )
    expect(r.system).toEqual([
      {type: 'text', text: 'TOP', cache: 'ephemeral'},
      {type: 'text', text: 'S1', cache: 'ephemeral'},
      {type: 'text', text: 'S2'},
    ])
    // the user turns around S1 are one turn, as Anthropic reads them
    expect(r.messages).toEqual([
      {role: 'user', parts: [{type: 'text', text: 'hi'}]},
      {role: 'assistant', parts: [{type: 'text', text: 'hello'}]},
      {
        role: 'user',
        parts: [
          {type: 'text', text: 'A'},
          {type: 'text', text: 'B'},
        ],
      },
    ])
    // a system message between turns of two roles leaves them as they are
    const between = messagesCodec.decodeRequest(
      {
        model: 'm',
        max_tokens: 10,
        messages: [user0('q'), {role: 'system', content: 'S'}, {role: 'assistant', content: 'a'}],
      },
      {},
    )
    expect(between.messages.map((m) => m.role)).toEqual(['user', 'assistant'])
    expect(between.system).toEqual([{type: 'text', text: 'S'}])
    // a block a system message cannot hold elsewhere: a line in its place, its type in the log row
    const odd = messagesCodec.decodeRequest(
      {
        model: 'm',
        messages: [{role: 'system', content: [{type: 'image', source: {type: 'url', url: 'u'}}]}],
      },
      {},
    )
    expect(odd.system).toEqual([
      {
        type: 'text',
        text: '[This system message held a block of type "image", left out: it cannot be sent to this model]',
      },
    ])
    expect(odd.leftOut).toEqual(['image'])
    expect(() =>
      messagesCodec.decodeRequest({model: 'm', messages: [{role: 'tool', content: 'x'}]}, {}),
    ).toThrow(/role "tool" cannot be translated/)
  })

  it("reads output_config: the effort into reasoning, a structured output's schema into the response format", () => {
    const schema = {type: 'object', properties: {a: {type: 'string'}}, required: ['a']}
    const decode = (extra: Record<string, unknown>) =>
      messagesCodec.decodeRequest({model: 'm', max_tokens: 10, messages: [], ...extra}, {})
    const adaptive = {thinking: {type: 'adaptive'}}
    expect(decode({...adaptive, output_config: {effort: 'low'}}).reasoning).toEqual({
      include: true,
      effort: 'low',
    })
    expect(decode({...adaptive, output_config: {effort: 'medium'}}).reasoning?.effort).toBe('medium')
    // the two levels above high are high, with the client's own kept for an upstream that takes it
    expect(decode({...adaptive, output_config: {effort: 'high'}}).reasoning).toEqual({
      include: true,
      effort: 'high',
    })
    for (const effort of ['xhigh', 'max'])
      expect(decode({...adaptive, output_config: {effort}}).reasoning).toEqual({
        include: true,
        effort: 'high',
        beyond: effort,
      })
    expect(decode({output_config: {effort: 'low'}}).reasoning).toEqual({effort: 'low'})
    expect(
      decode({thinking: {type: 'enabled', budget_tokens: 5000}, output_config: {effort: 'high'}}).reasoning,
    ).toEqual({include: true, budgetTokens: 5000, effort: 'high'})
    // thinking turned off stays off; an unknown level is no effort
    expect(decode({thinking: {type: 'disabled'}, output_config: {effort: 'high'}}).reasoning).toEqual({
      disabled: true,
    })
    expect(decode({...adaptive, output_config: {effort: 'ultra'}}).reasoning).toEqual({include: true})
    expect(decode({output_config: {task_budget: {type: 'tokens', total: 9}}}).reasoning).toBeUndefined()

    const format = {type: 'json_schema', schema}
    expect(decode({output_config: {format}}).responseFormat).toEqual({type: 'json_schema', schema})
    // the deprecated beta field, and output_config's own first when both are there
    expect(decode({output_format: format}).responseFormat).toEqual({type: 'json_schema', schema})
    const other = {type: 'json_schema', schema: {type: 'object'}}
    expect(decode({output_format: other, output_config: {format}}).responseFormat).toEqual({
      type: 'json_schema',
      schema,
    })
    for (const bad of [{type: 'json_schema'}, {type: 'text'}, 'json', null])
      expect(decode({output_config: {format: bad}}).responseFormat).toBeUndefined()
  })
})

describe("messages decodeRequest: Anthropic's tool search (deferred tools, tool_reference)", () => {
  // Claude Code 2.1.332's tools and its turn after the model called ToolSearch with
  // `select:WebFetch` (recorded from the real CLI: ./deferred-tools-fixture.ts): the placeholder it
  // always defers, the loaded tool deferred too, and the result a tool_reference followed by
  // "Tool loaded."
  const {schema, tool, placeholder, turn1, search, loaded, line} = claudeCode
  const called = search('toolu_1', 'select:WebFetch')
  const decode = (tools: unknown[], messages: unknown[]) =>
    messagesCodec.decodeRequest({model: 'm', max_tokens: 10, tools, messages}, {})

  it('leaves out a deferred tool nobody referenced, the placeholder included', () => {
    const r = decode([tool('Agent'), tool('ToolSearch'), placeholder, tool('Write')], [turn1])
    expect(r.tools.map((t) => t.name)).toEqual(['Agent', 'ToolSearch', 'Write'])
    expect(r.builtinTools).toBeUndefined()
  })

  it('loads a referenced tool after the others and writes the reference as its definition', () => {
    const r = decode(
      [
        tool('Agent'),
        tool('ToolSearch'),
        tool('WebFetch', {defer_loading: true}),
        placeholder,
        tool('Write'),
      ],
      [turn1, called, loaded('toolu_1', [{type: 'tool_reference', tool_name: 'WebFetch'}])],
    )
    // the list grows at its end only: a prompt cache keeps the prefix before it
    expect(r.tools.map((t) => t.name)).toEqual(['Agent', 'ToolSearch', 'Write', 'WebFetch'])
    expect(r.tools[3]).toEqual({name: 'WebFetch', description: 'WebFetch does it.', parameters: schema('x')})
    const result = r.messages[2].parts[0]
    expect(result).toEqual({
      type: 'tool_result',
      callId: 'toolu_1',
      name: 'ToolSearch',
      content: [
        {
          type: 'text',
          text: `<functions>\n${line('WebFetch')}\n</functions>`,
          references: [{name: 'WebFetch', description: 'WebFetch does it.', parameters: schema('x')}],
        },
      ],
    })
    expect(r.messages[2].parts[1]).toEqual({type: 'text', text: 'Tool loaded.', cache: 'ephemeral'})
  })

  it('one block for adjacent references; an undeferred or unknown tool; the order of first reference', () => {
    const tools = [
      tool('ToolSearch'),
      tool('Read'),
      tool('Cron', {defer_loading: true}),
      tool('Monitor', {defer_loading: true}),
      tool('Never', {defer_loading: true}),
    ]
    const second = {
      role: 'assistant',
      content: [{type: 'tool_use', id: 'toolu_2', name: 'ToolSearch', input: {query: 'select:Cron'}}],
    }
    const r = decode(tools, [
      turn1,
      called,
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_1',
            content: [
              {type: 'tool_reference', tool_name: 'Monitor'},
              {type: 'tool_reference', tool_name: 'Read'},
              {type: 'tool_reference', tool_name: 'Gone'},
              {type: 'text', text: 'and'},
              {type: 'tool_reference', tool_name: 'Cron'},
            ],
          },
        ],
      },
      second,
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_2',
            content: [{type: 'tool_reference', tool_name: 'Cron'}],
          },
        ],
      },
    ])
    expect(r.tools.map((t) => t.name)).toEqual(['ToolSearch', 'Read', 'Monitor', 'Cron'])
    const texts = (i: number) =>
      (r.messages[i].parts[0] as {content: Array<{text?: string}>}).content.map((p) => p.text)
    expect(texts(2)).toEqual([
      `<functions>\n${line('Monitor')}\n${line('Read')}\n<function>{"name":"Gone"}</function>\n</functions>`,
      'and',
      `<functions>\n${line('Cron')}\n</functions>`,
    ])
    expect(texts(4)).toEqual([`<functions>\n${line('Cron')}\n</functions>`])
  })

  it("keeps deferred tools as ordinary ones beside Anthropic's own tool search, which no other family runs", () => {
    for (const type of ['tool_search_tool_regex_20251119', 'tool_search_tool_bm25_20251119']) {
      const r = decode(
        [
          {type, name: 'tool_search_tool'},
          tool('get_weather', {defer_loading: true}),
          tool('get_time', {defer_loading: true}),
        ],
        [turn1],
      )
      expect(r.tools.map((t) => t.name)).toEqual(['get_weather', 'get_time'])
      const chat = chatCodec.encodeRequest(r, 'up', {}) as {tools: Array<{function: {name: string}}>}
      expect(chat.tools.map((t) => t.function.name)).toEqual(['get_weather', 'get_time'])
    }
  })

  it('gives the model a deferred tool the request forces', () => {
    const deferredTool = tool('WebFetch', {defer_loading: true})
    const forced = messagesCodec.decodeRequest(
      {
        model: 'm',
        max_tokens: 10,
        tools: [tool('Read'), deferredTool],
        tool_choice: {type: 'tool', name: 'WebFetch'},
        messages: [turn1],
      },
      {},
    )
    expect(forced.tools.map((t) => t.name)).toEqual(['Read', 'WebFetch'])
    expect(forced.toolChoice).toEqual({type: 'tool', name: 'WebFetch'})
    // loaded by a reference as well: once
    const both = messagesCodec.decodeRequest(
      {
        model: 'm',
        max_tokens: 10,
        tools: [tool('ToolSearch'), deferredTool],
        tool_choice: {type: 'tool', name: 'WebFetch'},
        messages: [turn1, called, loaded('toolu_1', [{type: 'tool_reference', tool_name: 'WebFetch'}])],
      },
      {},
    )
    expect(both.tools.map((t) => t.name)).toEqual(['ToolSearch', 'WebFetch'])
  })

  it('goes to every other family as a tool result any of them takes', () => {
    const r = decode(
      [tool('ToolSearch'), tool('WebFetch', {defer_loading: true}), placeholder],
      [turn1, called, loaded('toolu_1', [{type: 'tool_reference', tool_name: 'WebFetch'}])],
    )
    const chat = chatCodec.encodeRequest(r, 'up', {}) as {
      tools: Array<{function: {name: string}}>
      messages: Array<{role: string; content: unknown}>
    }
    expect(chat.tools.map((t) => t.function.name)).toEqual(['ToolSearch', 'WebFetch'])
    expect(chat.messages.find((m) => m.role === 'tool')?.content).toBe(
      `<functions>\n${line('WebFetch')}\n</functions>`,
    )
  })
})

describe("messages decodeRequest: a system message's tool changes and effort (Claude Code 2.1.3xx)", () => {
  const schema = {type: 'object', properties: {x: {type: 'string'}}, required: ['x']}
  const tool = (name: string, extra: Record<string, unknown> = {}) => ({
    name,
    description: `${name} does it.`,
    input_schema: schema,
    ...extra,
  })
  // the tools as Claude Code sends them with tool search: its own, then MCP tools deferred
  const tools = [
    tool('Bash'),
    tool('ToolSearch'),
    tool('mcp__docs__search', {defer_loading: true}),
    tool('mcp__docs__fetch', {defer_loading: true}),
  ]
  const user = (text: string) => ({role: 'user', content: [{type: 'text', text}]})
  const decode = (messages: unknown[], extra: Record<string, unknown> = {}) =>
    messagesCodec.decodeRequest({model: 'm', max_tokens: 10, tools, messages, ...extra}, {})

  it('a tool_addition by reference loads that deferred tool, after the others, from then on', () => {
    // Claude Code's shape (its Avl): the text, then the additions, the last with the cache mark
    const added = {
      role: 'system',
      content: [
        {type: 'text', text: 'The docs MCP server connected: its tools can be called now.'},
        {
          type: 'tool_addition',
          tool: {type: 'tool_reference', name: 'mcp__docs__fetch'},
          cache_control: {type: 'ephemeral'},
        },
      ],
    }
    const r = decode([user('hi'), added])
    expect(r.tools.map((t) => t.name)).toEqual(['Bash', 'ToolSearch', 'mcp__docs__fetch'])
    expect(r.tools[2]).toEqual({
      name: 'mcp__docs__fetch',
      description: 'mcp__docs__fetch does it.',
      parameters: schema,
    })
    // the text joins the system prompt with the message's cache mark; the addition has no text
    expect(r.system).toEqual([
      {type: 'text', text: 'The docs MCP server connected: its tools can be called now.', cache: 'ephemeral'},
    ])
    expect(r.messages).toEqual([{role: 'user', parts: [{type: 'text', text: 'hi'}]}])
    // a later ToolSearch result naming another tool loads it after: the list grows at its end
    const later = decode([
      user('hi'),
      added,
      {role: 'assistant', content: [{type: 'tool_use', id: 't1', name: 'ToolSearch', input: {query: 'q'}}]},
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 't1',
            content: [{type: 'tool_reference', tool_name: 'mcp__docs__search'}],
          },
        ],
      },
    ])
    expect(later.tools.map((t) => t.name)).toEqual([
      'Bash',
      'ToolSearch',
      'mcp__docs__fetch',
      'mcp__docs__search',
    ])
  })

  it('a tool_addition by definition adds the tool it defines; one without a name is left out with a line', () => {
    const definition = {name: 'mcp__late__ping', description: 'Pings.', input_schema: schema}
    const r = decode([
      user('hi'),
      {
        role: 'system',
        content: [
          {type: 'text', text: 'New tools.'},
          {type: 'tool_addition', tool: {type: 'tool_definition', definition}},
          {type: 'tool_addition', tool: {type: 'tool_definition', definition: {description: 'no name'}}},
        ],
      },
    ])
    expect(r.tools.map((t) => t.name)).toEqual(['Bash', 'ToolSearch', 'mcp__late__ping'])
    expect(r.tools[2]).toEqual({name: 'mcp__late__ping', description: 'Pings.', parameters: schema})
    expect(r.system.map((p) => p.text)).toEqual([
      'New tools.',
      '[This system message held a block of type "tool_definition", left out: it cannot be sent to this model]',
    ])
  })

  it('a tool_removal keeps the tool list and tells the model the tool is gone', () => {
    const r = decode([
      user('hi'),
      {
        role: 'system',
        content: [
          {type: 'text', text: 'The docs MCP server disconnected.'},
          {
            type: 'tool_removal',
            tool: {type: 'tool_reference', name: 'mcp__docs__fetch'},
            cache_control: {type: 'ephemeral', ttl: '1h'},
          },
        ],
      },
    ])
    expect(r.tools.map((t) => t.name)).toEqual(['Bash', 'ToolSearch'])
    expect(r.system).toEqual([
      {type: 'text', text: 'The docs MCP server disconnected.'},
      {
        type: 'text',
        text: '[The tool "mcp__docs__fetch" is no longer available: do not call it.]',
        cache: '1h',
      },
    ])
  })

  it("an effort statement holds from there on, over the request's own", () => {
    const statement = (effort: string) => ({role: 'system', content: [], output_config: {effort}})
    const r = decode(
      [
        user('a'),
        statement('low'),
        {role: 'assistant', content: 'ok'},
        user('b'),
        {
          role: 'system',
          content: [],
          output_config: {timing: {type: 'now', now: '2026-11-28T05:00:00+00:00'}},
        },
        {role: 'assistant', content: 'ok'},
        user('c'),
      ],
      {thinking: {type: 'adaptive'}, output_config: {effort: 'high'}},
    )
    // the statement's effort (low), not the request's (high); the time statement changes nothing
    expect(r.reasoning).toEqual({include: true, effort: 'low'})
    expect(r.system).toEqual([])
    expect(r.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user'])
    const later = decode(
      [user('a'), statement('low'), {role: 'assistant', content: 'ok'}, user('b'), statement('max')],
      {
        thinking: {type: 'adaptive'},
        output_config: {effort: 'low'},
      },
    )
    expect(later.reasoning).toEqual({include: true, effort: 'high', beyond: 'max'})
    // a later statement below high: the one above it before holds no more
    const down = decode(
      [user('a'), statement('max'), {role: 'assistant', content: 'ok'}, user('b'), statement('medium')],
      {
        thinking: {type: 'adaptive'},
        output_config: {effort: 'xhigh'},
      },
    )
    expect(down.reasoning).toEqual({include: true, effort: 'medium'})
    // thinking turned off stays off
    expect(decode([user('a'), statement('high')], {thinking: {type: 'disabled'}}).reasoning).toEqual({
      disabled: true,
    })
  })
})

describe('messages encodeRequest', () => {
  it('merges turns, puts tool results first, keeps only native thinking and sanitizes tool ids', () => {
    const body = messagesCodec.encodeRequest(
      {
        ...base,
        messages: [
          user('a'),
          user('b'),
          {
            role: 'assistant',
            parts: [
              {type: 'reasoning', text: 'ds', signature: {family: 'chat', value: ''}},
              {type: 'reasoning', text: '', redacted: {family: 'messages', value: 'RED'}},
              {type: 'reasoning', text: 'nosig'},
              {type: 'text', text: ''},
              {type: 'tool_call', id: 'functions.f:0', name: 'f', arguments: 'not json'},
            ],
          },
          {
            role: 'user',
            parts: [
              {type: 'text', text: 'also'},
              {type: 'tool_result', callId: 'functions.f:0', content: [], isError: true},
            ],
          },
        ],
      },
      'claude-x',
    )
    expect(body.messages).toEqual([
      {
        role: 'user',
        content: [
          {type: 'text', text: 'a'},
          {type: 'text', text: 'b', cache_control: {type: 'ephemeral'}},
        ],
      },
      {
        role: 'assistant',
        content: [
          {type: 'redacted_thinking', data: 'RED'},
          {type: 'tool_use', id: 'functions_f_0', name: 'f', input: {}},
        ],
      },
      {
        role: 'user',
        content: [
          {type: 'tool_result', tool_use_id: 'functions_f_0', is_error: true},
          {type: 'text', text: 'also', cache_control: {type: 'ephemeral'}},
        ],
      },
    ])
    expect(body.max_tokens).toBe(32000)
  })

  it('adds breakpoints like Claude Code when the client set none, and keeps the client’s exactly', () => {
    const messages: Message[] = [
      user('1'),
      {role: 'assistant', parts: [{type: 'text', text: 'r'}]},
      user('2'),
      user('3'),
    ]
    const auto = messagesCodec.encodeRequest({...base, system: [{type: 'text', text: 'S'}], messages}, 'm')
    expect(auto.system).toEqual([{type: 'text', text: 'S', cache_control: {type: 'ephemeral'}}])
    expect(auto.messages).toEqual([
      {role: 'user', content: [{type: 'text', text: '1', cache_control: {type: 'ephemeral'}}]},
      {role: 'assistant', content: [{type: 'text', text: 'r'}]},
      {
        role: 'user',
        content: [
          {type: 'text', text: '2'},
          {type: 'text', text: '3', cache_control: {type: 'ephemeral'}},
        ],
      },
    ])
    const kept = messagesCodec.encodeRequest(
      {
        ...base,
        system: [
          {type: 'text', text: 'S', cache: '1h'},
          {type: 'text', text: 'T'},
        ],
        messages,
      },
      'm',
    )
    expect(kept.system).toEqual([
      {type: 'text', text: 'S', cache_control: {type: 'ephemeral', ttl: '1h'}},
      {type: 'text', text: 'T'},
    ])
    expect(JSON.stringify(kept.messages)).not.toContain('cache_control')
  })

  it('sends thinking only where Anthropic takes it, and degrades instead of a 400', () => {
    const call = {type: 'tool_call' as const, id: 't1', name: 'f', arguments: '{}'}
    const result: Message = {role: 'user', parts: [{type: 'tool_result', callId: 't1', content: []}]}
    const signed = {
      type: 'reasoning' as const,
      text: 'T',
      signature: {family: 'messages' as const, value: 'S'},
    }
    const thinking = {budgetTokens: 3000}
    const withSig = messagesCodec.encodeRequest(
      {
        ...base,
        reasoning: thinking,
        temperature: 0.3,
        topP: 0.9,
        messages: [user('q'), {role: 'assistant', parts: [signed, call]}, result],
      },
      'm',
    )
    expect(withSig.thinking).toEqual({type: 'enabled', budget_tokens: 3000})
    expect(withSig.max_tokens).toBe(32000)
    expect(withSig.temperature).toBeUndefined()
    expect(withSig.top_p).toBeUndefined()
    const foreign = messagesCodec.encodeRequest(
      {
        ...base,
        reasoning: thinking,
        temperature: 0.3,
        topP: 0.9,
        messages: [user('q'), {role: 'assistant', parts: [call]}, result],
      },
      'm',
    )
    expect(foreign.thinking).toBeUndefined()
    expect(foreign.temperature).toBe(0.3)
    expect(foreign.top_p).toBeUndefined()
    // An earlier, finished tool loop does not matter.
    const earlier = messagesCodec.encodeRequest(
      {
        ...base,
        reasoning: thinking,
        messages: [
          user('q'),
          {role: 'assistant', parts: [call]},
          result,
          {role: 'assistant', parts: [{type: 'text', text: 'done'}]},
          user('next'),
        ],
      },
      'm',
    )
    expect(earlier.thinking).toEqual({type: 'enabled', budget_tokens: 3000})
  })

  it.each([
    [
      {reasoning: {effort: 'high' as const}, maxTokens: 64000},
      {thinking: {type: 'enabled', budget_tokens: 24000}, max_tokens: 64000},
    ],
    // a budget the client's limit cuts leaves the answer 4 096 (half of a smaller limit), not the
    // one token that a model thinking its whole budget would answer in
    [
      {reasoning: {budgetTokens: 5000}, maxTokens: 3000},
      {thinking: {type: 'enabled', budget_tokens: 1500}, max_tokens: 3000},
    ],
    [
      {reasoning: {effort: 'high' as const}, maxTokens: 8192},
      {thinking: {type: 'enabled', budget_tokens: 4096}, max_tokens: 8192},
    ],
    [
      {reasoning: {budgetTokens: 5000}, maxTokens: 1500},
      {thinking: {type: 'enabled', budget_tokens: 1024}, max_tokens: 1500},
    ],
    [{reasoning: {budgetTokens: 5000}, maxTokens: 1000}, {max_tokens: 1000}],
    [
      {reasoning: {budgetTokens: 20000}},
      {thinking: {type: 'enabled', budget_tokens: 20000}, max_tokens: 32000},
    ],
    // a client that sets no limit (Codex, Gemini CLI) gets 32 000, room for the answer kept above
    // a budget near it
    [
      {reasoning: {budgetTokens: 30000}},
      {thinking: {type: 'enabled', budget_tokens: 30000}, max_tokens: 34096},
    ],
    [
      {reasoning: {effort: 'low' as const}},
      {thinking: {type: 'enabled', budget_tokens: 4096}, max_tokens: 32000},
    ],
    [
      {
        reasoning: {budgetTokens: 2000},
        toolChoice: {type: 'required' as const},
        tools: [{name: 'f', parameters: {}}],
      },
      {tool_choice: {type: 'any'}},
    ],
    [{reasoning: {disabled: true}}, {max_tokens: 32000}],
  ])('sets thinking and max_tokens: %j', (fields, expected) => {
    const body = messagesCodec.encodeRequest({...base, messages: [user('q')], ...fields}, 'm')
    expect(body).toMatchObject(expected)
    if (!('thinking' in expected)) expect(body.thinking).toBeUndefined()
  })

  it("caps the default max_tokens at a Claude 3 model's documented output (8 192, 4 096), not a client's own", () => {
    const ask = (model: string, fields = {}) =>
      messagesCodec.encodeRequest({...base, messages: [user('q')], ...fields}, model).max_tokens
    expect(ask('claude-3-5-haiku-20241022')).toBe(8192)
    expect(ask('claude-3-5-sonnet-latest')).toBe(8192)
    expect(ask('claude-3-haiku-20240307')).toBe(4096)
    expect(ask('claude-3-7-sonnet-latest')).toBe(32000)
    expect(ask('claude-sonnet-4-5')).toBe(32000)
    expect(ask('claude-3-5-haiku-20241022', {maxTokens: 1000})).toBe(1000)
  })

  it('asks for JSON in the system prompt, maps tools and tool choice', () => {
    const body = messagesCodec.encodeRequest(
      {
        ...base,
        responseFormat: {type: 'json_schema', schema: {type: 'object', properties: {a: {type: 'string'}}}},
        tools: [{name: 'f', description: 'd', parameters: {properties: {}}}],
        builtinTools: [
          {family: 'chat', raw: {type: 'web_search'}},
          {family: 'messages', raw: {type: 'web_search_20250305', name: 'web_search'}},
        ],
        toolChoice: {type: 'tool', name: 'f'},
        parallelToolCalls: false,
        stop: ['Z'],
        user: 'u',
        stream: true,
      },
      'm',
    )
    expect(body).toMatchObject({
      system: [{type: 'text', text: expect.stringContaining('"a":{"type":"string"}')}],
      tools: [
        {name: 'f', description: 'd', input_schema: {type: 'object', properties: {}}},
        {type: 'web_search_20250305', name: 'web_search'},
      ],
      tool_choice: {type: 'tool', name: 'f', disable_parallel_tool_use: true},
      stop_sequences: ['Z'],
      metadata: {user_id: 'u'},
      stream: true,
    })
  })

  it('round-trips what Messages carries', () => {
    const body = {
      model: 'm',
      max_tokens: 4000,
      system: [{type: 'text', text: 'S', cache_control: {type: 'ephemeral'}}],
      messages: [
        {role: 'user', content: [{type: 'text', text: 'Q'}]},
        {
          role: 'assistant',
          content: [
            {type: 'thinking', thinking: 'T', signature: 'SIG'},
            {type: 'tool_use', id: 'toolu_1', name: 'f', input: {x: 1}},
          ],
        },
        {
          role: 'user',
          content: [{type: 'tool_result', tool_use_id: 'toolu_1', content: [{type: 'text', text: 'o'}]}],
        },
      ],
      tools: [{name: 'f', input_schema: {type: 'object'}}],
      tool_choice: {type: 'auto'},
      thinking: {type: 'enabled', budget_tokens: 2000},
      stream: true,
    }
    expect(messagesCodec.encodeRequest(messagesCodec.decodeRequest(body, {}), 'm')).toEqual(body)
  })

  // (found by fuzz.test.ts) Anthropic refuses "messages: first message must use the "user" role"
  it.each([
    [
      'a chat UI greeting first',
      [
        {role: 'assistant', content: 'How can I help?'},
        {role: 'user', content: 'Hi'},
      ],
    ],
    [
      'a user turn of blank text before the answer',
      [
        {role: 'user', content: ' '},
        {role: 'assistant', content: 'a'},
      ],
    ],
    ['no turn with anything in it', [{role: 'user', content: ''}]],
  ])('opens with a user turn where the conversation does not (%s)', (_, messages) => {
    const client = decodeClientRequest('chat', {model: 'gpt-x', messages}, {})
    const sent = JSON.parse(encodeUpstreamRequest(client, 'messages', 'claude-x').body.toString())
    expect(sent.messages[0]).toMatchObject({role: 'user', content: [{type: 'text', text: '.'}]})
    expect(sent.messages.map((m: {role: string}) => m.role)).toEqual(
      sent.messages.map((_: unknown, i: number) => (i % 2 ? 'assistant' : 'user')),
    )
  })
})

describe("messages encodeRequest: Anthropic's current models (adaptive thinking, no sampling)", () => {
  it("reads a Claude model's thinking from its name, as Anthropic, Bedrock, Vertex and OpenRouter write it", () => {
    const table: Array<[string, boolean, boolean]> = [
      // name, adaptive, only
      ['claude-opus-4-8', true, true],
      ['claude-opus-4-7', true, true],
      ['claude-opus-4-7-20260416', true, true],
      ['anthropic.claude-opus-4-7-v1:0', true, true],
      ['us.anthropic.claude-opus-4-8-v1:0', true, true],
      ['claude-opus-4-7@20260416', true, true],
      ['anthropic/claude-opus-4.7', true, true],
      ['claude-sonnet-5', true, true],
      ['claude-fable-5', true, true],
      ['claude-mythos-preview', true, true],
      ['claude-opus-4-6', true, false],
      ['claude-sonnet-4-6', true, false],
      ['claude-sonnet-4-5-20250929', false, false],
      ['claude-haiku-4-5', false, false],
      ['claude-opus-4-1-20250805', false, false],
      // a date is no minor version: Opus 4
      ['claude-opus-4-20250514', false, false],
      ['claude-3-7-sonnet-20250219', false, false],
      ['claude-haiku-4-6', false, false],
      // GitHub Copilot's ids: Opus 4.1, Sonnet 4.5; a two-digit minor
      ['claude-opus-41', false, false],
      ['claude-sonnet-45', false, false],
      ['claude-opus-4-10', true, true],
      ['claude-sonnet-4-7', true, false],
      ['claude-sonnet-4.8', true, false],
      // other vendors' names: nothing said
      ['glm-4.6', false, false],
      ['deepseek-chat', false, false],
      ['opus', false, false],
    ]
    for (const [name, adaptive, only] of table)
      expect([name, claudeThinking(name)]).toMatchObject([name, {adaptive, only}])
  })

  it('reads how a Claude 5 model is told not to think, and whether it takes a forced tool or binds its thinking', () => {
    const table: Array<[string, string, boolean, boolean]> = [
      // name, off, noForcedTools, prefixBinding
      ['claude-opus-4-8', 'omit', false, false],
      ['claude-sonnet-4-6', 'omit', false, false],
      ['claude-sonnet-5', 'disabled', false, false],
      ['claude-opus-5', 'disabled', false, false],
      ['claude-opus-5-20260601', 'disabled', false, false],
      ['claude-haiku-5-5', 'disabled', false, true],
      ['claude-sonnet-5-5', 'between_tools', true, true],
      ['anthropic/claude-sonnet-5.5', 'between_tools', true, true],
      ['claude-opus-5-5', 'low', true, true],
      ['us.anthropic.claude-opus-5-5-v1:0', 'low', true, true],
      ['claude-fable-5', 'low', false, false],
      ['claude-fable-5-1', 'low', true, true],
      ['claude-mythos-5-1', 'low', true, false],
      ['claude-mythos-preview', 'low', false, false],
      // a later Claude: taken as the most restrictive 5.x
      ['claude-sonnet-6', 'low', true, true],
      ['glm-4.6', 'omit', false, false],
    ]
    for (const [name, off, noForcedTools, prefixBinding] of table)
      expect([name, claudeThinking(name)]).toMatchObject([name, {off, noForcedTools, prefixBinding}])
  })

  const codex: Request = {
    ...base,
    messages: [user('hi')],
    reasoning: {effort: 'high', include: true},
    temperature: 0.5,
  }
  const encode = (request: Request, model: string, ctx?: object) =>
    messagesCodec.encodeRequest(request, model, ctx) as Record<string, any>

  it('Opus 4.7 on: adaptive thinking with the effort, its text asked for, no sampling settings', () => {
    const body = encode(codex, 'claude-opus-4-8')
    expect(body.thinking).toEqual({type: 'adaptive', display: 'summarized'})
    expect(body.output_config).toEqual({effort: 'high'})
    expect(body).not.toHaveProperty('temperature')
    // no limit from the client: room for adaptive thinking and the answer (Claude Code's default)
    expect(body.max_tokens).toBe(32000)
    // the client's own limit stands, and the effort its budget left with 4 096 kept for the answer:
    // high in 8 000 tokens is low (3 904), in 16 000 medium (11 904)
    expect(encode({...codex, maxTokens: 4000}, 'claude-opus-4-8').max_tokens).toBe(4000)
    expect(encode({...codex, maxTokens: 8000}, 'claude-opus-4-8').output_config).toEqual({effort: 'low'})
    expect(encode({...codex, maxTokens: 16000}, 'claude-opus-4-8').output_config).toEqual({effort: 'medium'})
    expect(encode({...codex, maxTokens: 64000}, 'claude-opus-4-8').output_config).toEqual({effort: 'high'})
    // a client that does not say whether it shows thinking (a chat client) gets its text
    expect(encode({...codex, reasoning: {effort: 'low'}}, 'claude-opus-4-8').thinking).toEqual({
      type: 'adaptive',
      display: 'summarized',
    })
    // the client shows no thinking: the model's default (omitted) stands
    expect(
      encode({...codex, reasoning: {effort: 'minimal', include: false}}, 'claude-opus-4-8'),
    ).toMatchObject({
      thinking: {type: 'adaptive'},
      output_config: {effort: 'low'},
    })
    // a budget is an effort: under 4k low, under 16k medium, else high
    expect(
      encode({...codex, reasoning: {budgetTokens: 8192, include: true}}, 'claude-opus-4-7').output_config,
    ).toEqual({effort: 'medium'})
    // thinking off: still no temperature or top_p on these models
    const off = encode({...codex, reasoning: {disabled: true}, topP: 0.9}, 'claude-opus-4-8')
    expect(off).not.toHaveProperty('thinking')
    expect(off).not.toHaveProperty('temperature')
    expect(off).not.toHaveProperty('top_p')
    // a forced tool call and thinking cannot go together, adaptive or not
    const forced = encode(
      {
        ...codex,
        tools: [{name: 'f', parameters: {type: 'object'}}],
        toolChoice: {type: 'tool', name: 'f'},
      },
      'claude-opus-4-8',
    )
    expect(forced).not.toHaveProperty('thinking')
    expect(forced).not.toHaveProperty('output_config')
  })

  it('Opus and Sonnet 4.6 adaptive, with sampling when thinking is off; older and unknown names a budget', () => {
    expect(encode(codex, 'claude-sonnet-4-6')).toMatchObject({
      thinking: {type: 'adaptive', display: 'summarized'},
    })
    expect(encode({...codex, reasoning: undefined}, 'claude-sonnet-4-6')).toMatchObject({temperature: 0.5})
    for (const model of ['claude-sonnet-4-5', 'glm-4.6']) {
      const body = encode(codex, model)
      expect(body.thinking).toEqual({type: 'enabled', budget_tokens: 24000})
      expect(body).not.toHaveProperty('output_config')
    }
  })

  const tools = [{name: 'f', parameters: {type: 'object'}}]
  const loop: Request = {
    ...codex,
    tools,
    messages: [
      user('hi'),
      {role: 'assistant', parts: [{type: 'tool_call', id: 'toolu_1', name: 'f', arguments: '{}'}]},
      {role: 'user', parts: [{type: 'tool_result', callId: 'toolu_1', content: [{type: 'text', text: 'o'}]}]},
    ],
  }
  const signed: Request = {
    ...loop,
    messages: [
      loop.messages[0],
      {
        role: 'assistant',
        parts: [
          {type: 'reasoning', text: 'plan', signature: {family: 'messages', value: 'sig'}},
          ...loop.messages[1].parts,
        ],
      },
      loop.messages[2],
    ],
  }

  it('an effort above high goes as itself to a Claude model that takes it (Opus 4.7 on), else as high', () => {
    const xhigh = {...codex, reasoning: {effort: 'high' as const, beyond: 'xhigh' as const, include: true}}
    expect(encode(xhigh, 'claude-opus-5-5').output_config).toEqual({effort: 'xhigh'})
    expect(
      encode({...xhigh, reasoning: {...xhigh.reasoning, beyond: 'max' as const}}, 'claude-opus-4-8')
        .output_config,
    ).toEqual({
      effort: 'max',
    })
    expect(encode(xhigh, 'claude-sonnet-4-6').output_config).toEqual({effort: 'high'})
    // a client limit that cuts the thinking lowers it as any effort
    expect(encode({...xhigh, maxTokens: 16000}, 'claude-opus-5-5').output_config).toEqual({effort: 'medium'})
  })

  it('Claude 5: a client that turns thinking off gets the way the model takes it; one that says nothing, its default', () => {
    const off = {...codex, reasoning: {disabled: true}}
    expect(encode(off, 'claude-sonnet-5').thinking).toEqual({type: 'disabled'})
    expect(encode(off, 'claude-haiku-5-5').thinking).toEqual({type: 'disabled'})
    expect(encode(off, 'claude-sonnet-5-5').thinking).toEqual({type: 'between_tools'})
    // Opus 5.5 cannot stop thinking: the least it thinks
    const opus = encode(off, 'claude-opus-5-5')
    expect(opus).not.toHaveProperty('thinking')
    expect(opus.output_config).toEqual({effort: 'low'})
    // Opus 4.8 is off when nothing is said
    expect(encode(off, 'claude-opus-4-8')).not.toHaveProperty('thinking')
    // nothing said: the model's default, not a setting
    for (const model of ['claude-sonnet-5', 'claude-opus-5-5', 'claude-sonnet-5-5']) {
      const body = encode({...codex, reasoning: undefined}, model)
      expect(body).not.toHaveProperty('thinking')
      expect(body).not.toHaveProperty('output_config')
      expect(body).not.toHaveProperty('temperature')
    }
    // a learned way wins over the name
    expect(encode(off, 'corp-claude', {claude: {thinkingOff: 'between_tools'}}).thinking).toEqual({
      type: 'between_tools',
    })
  })

  it('Claude 5.5: a forced tool choice goes as auto, the call asked for in the prompt, thinking kept', () => {
    const forced = {...codex, tools, toolChoice: {type: 'tool', name: 'f'} as const}
    const body = encode(forced, 'claude-opus-5-5')
    expect(body.tool_choice).toEqual({type: 'auto'})
    // at the end of the last user turn, after its cache mark: the system prompt stays as it was
    expect(body.messages.at(-1).content.at(-1)).toEqual({
      type: 'text',
      text: 'In this answer, call the tool f.',
    })
    expect(body.messages.at(-1).content.at(-2).cache_control).toEqual({type: 'ephemeral'})
    expect(body).not.toHaveProperty('system')
    expect(body.thinking).toEqual({type: 'adaptive', display: 'summarized'})
    expect(encode({...forced, toolChoice: {type: 'required'}}, 'claude-sonnet-5-5')).toMatchObject({
      tool_choice: {type: 'auto'},
    })
    // learned from a refusal, for a name that says nothing
    expect(encode(forced, 'corp-claude', {claude: {noForcedTools: true}}).tool_choice).toEqual({type: 'auto'})
    // a model that takes forcing but thinks by default is told not to think beside it
    const sonnet5 = encode(forced, 'claude-sonnet-5')
    expect(sonnet5.tool_choice).toEqual({type: 'tool', name: 'f'})
    expect(sonnet5.thinking).toEqual({type: 'disabled'})
    expect(sonnet5).not.toHaveProperty('output_config')
    // Opus 4.8 is off when nothing is said: nothing to say
    expect(encode(forced, 'claude-opus-4-8')).not.toHaveProperty('thinking')
  })

  it('Claude 5.5: a JSON answer goes through json_answer offered, not forced, with the call asked for', () => {
    const json: Request = {...base, messages: [user('route this')], responseFormat: {type: 'json_object'}}
    const body = encode(json, 'claude-opus-5-5')
    expect(body.tools.map((t: {name: string}) => t.name)).toEqual(['json_answer'])
    expect(body.tool_choice).toEqual({type: 'auto', disable_parallel_tool_use: true})
    expect(body).not.toHaveProperty('system')
    expect(body.messages.at(-1).content.at(-1).text).toBe(
      'Give your answer by calling the json_answer tool with it, and write no other text.',
    )
    // elsewhere it is forced, as before, the JSON instruction beside it
    const forced = encode(json, 'claude-sonnet-5')
    expect(forced.tool_choice).toEqual({type: 'tool', name: 'json_answer', disable_parallel_tool_use: true})
    expect(forced.system[0].text).toBe('Respond with one JSON object only, with no other text.')
    expect(forced.thinking).toEqual({type: 'disabled'})
  })

  it('a tool loop without signed thinking: thinking off as the model takes it; signed thinking kept, bound or not', () => {
    expect(encode(loop, 'claude-sonnet-5').thinking).toEqual({type: 'disabled'})
    expect(encode(loop, 'claude-opus-4-8')).not.toHaveProperty('thinking')
    // Opus 5.5 binds the blocks it gets back: one whose conversation changed is dropped, not refused
    const bound = encode(signed, 'claude-opus-5-5')
    expect(bound.thinking).toEqual({
      type: 'adaptive',
      display: 'summarized',
      block_binding: {prefix_mismatch_behavior: 'drop_block'},
    })
    expect(bound.messages[1].content[0]).toEqual({type: 'thinking', thinking: 'plan', signature: 'sig'})
    // thinking left out on such a model: said adaptive, with the setting
    expect(encode({...signed, reasoning: undefined}, 'claude-haiku-5-5').thinking).toEqual({
      type: 'adaptive',
      block_binding: {prefix_mismatch_behavior: 'drop_block'},
    })
    // between_tools takes no other field; a model that does not bind gets none
    expect(encode({...signed, reasoning: {disabled: true}}, 'claude-sonnet-5-5').thinking).toEqual({
      type: 'between_tools',
    })
    expect(encode(signed, 'claude-opus-4-8').thinking).not.toHaveProperty('block_binding')
    // learned for a name that says nothing
    expect(encode(signed, 'corp-claude', {claude: {dropUnboundThinking: true}}).thinking).toMatchObject({
      block_binding: {prefix_mismatch_behavior: 'drop_block'},
    })
    // the setting refused (a proxy): none; and bound blocks refused too, no block goes back
    expect(encode(signed, 'claude-opus-5-5', {claude: {noBlockBinding: true}}).thinking).not.toHaveProperty(
      'block_binding',
    )
    const none = encode(signed, 'claude-opus-5-5', {
      claude: {noBlockBinding: true, dropUnboundThinking: true},
    })
    expect(none.messages[1].content.map((b: {type: string}) => b.type)).toEqual(['tool_use'])
  })

  it('a model that binds thinking: the blocks before a turn without any are left out, from the start', () => {
    const think = (text: string) => ({
      type: 'reasoning' as const,
      text,
      signature: {family: 'messages' as const, value: `sig-${text}`},
    })
    const call = (id: string) => ({type: 'tool_call' as const, id, name: 'f', arguments: '{}'})
    const result = (id: string): Message => ({
      role: 'user',
      parts: [{type: 'tool_result', callId: id, content: [{type: 'text', text: 'o'}]}],
    })
    const history: Request = {
      ...codex,
      tools,
      messages: [
        user('one'),
        {role: 'assistant', parts: [think('a'), call('t1')]},
        result('t1'),
        // a text answer whose thinking the client did not keep (a chat client's)
        {role: 'assistant', parts: [{type: 'text', text: 'done'}]},
        user('two'),
        {role: 'assistant', parts: [think('c'), call('t2')]},
        result('t2'),
      ],
    }
    const blocks = (model: string) =>
      encode(history, model)
        .messages.filter((m: any) => m.role === 'assistant')
        .map((m: any) => m.content.map((b: any) => b.type))
    expect(blocks('claude-opus-5-5')).toEqual([['tool_use'], ['text'], ['thinking', 'tool_use']])
    // a model that does not bind gets them all
    expect(blocks('claude-opus-4-8')).toEqual([['thinking', 'tool_use'], ['text'], ['thinking', 'tool_use']])
    // no turn after the gap thinks: nothing to leave out
    expect(
      encode({...history, messages: history.messages.slice(0, 5)}, 'claude-opus-5-5')
        .messages.filter((m: any) => m.role === 'assistant')
        .map((m: any) => m.content.map((b: any) => b.type)),
    ).toEqual([['thinking', 'tool_use'], ['text']])
  })

  it('the form a refusal taught wins over the name', () => {
    const taught = encode(codex, 'claude-opus-4-8', {thinkingForm: 'enabled'})
    expect(taught.thinking).toEqual({type: 'enabled', budget_tokens: 24000})
    // the name said wrong: its sampling settings go again (thinking off)
    expect(
      encode({...codex, reasoning: {disabled: true}}, 'claude-opus-4-8', {thinkingForm: 'enabled'}),
    ).toMatchObject({temperature: 0.5})
    expect(encode(codex, 'corp-model', {thinkingForm: 'adaptive'})).toMatchObject({
      thinking: {type: 'adaptive', display: 'summarized'},
      output_config: {effort: 'high'},
    })
  })

  it("a Messages client's display: omitted is a client that shows no thinking", () => {
    const decode = (thinking: unknown) =>
      messagesCodec.decodeRequest(
        {model: 'm', max_tokens: 100, thinking, messages: [{role: 'user', content: 'hi'}]},
        {},
      ).reasoning
    expect(decode({type: 'adaptive', display: 'omitted'})).toEqual({include: false})
    expect(decode({type: 'adaptive', display: 'summarized'})).toEqual({include: true})
    expect(decode({type: 'enabled', budget_tokens: 2048, display: 'omitted'})).toEqual({
      include: false,
      budgetTokens: 2048,
    })
  })
})

describe('messages answers', () => {
  it('decodes blocks, stop reasons and usage (input includes the cache)', () => {
    const r = messagesCodec.decodeResponse({
      id: 'msg_1',
      model: 'claude-x',
      content: [
        {type: 'thinking', thinking: 'T', signature: 'S'},
        {type: 'redacted_thinking', data: 'R'},
        {type: 'text', text: 'Hi'},
        {type: 'tool_use', id: 'toolu_1', name: 'f', input: {}},
      ],
      stop_reason: 'stop_sequence',
      stop_sequence: 'END',
      usage: {
        input_tokens: 10,
        cache_read_input_tokens: 100,
        cache_creation_input_tokens: 50,
        cache_creation: {ephemeral_5m_input_tokens: 20, ephemeral_1h_input_tokens: 30},
        output_tokens: 7,
      },
    })
    expect(r).toEqual({
      id: 'msg_1',
      model: 'claude-x',
      parts: [
        {type: 'reasoning', text: 'T', signature: {family: 'messages', value: 'S'}},
        {type: 'reasoning', text: '', redacted: {family: 'messages', value: 'R'}},
        {type: 'text', text: 'Hi'},
        {type: 'tool_call', id: 'toolu_1', name: 'f', arguments: '{}'},
      ],
      stop: 'stop_sequence',
      stopSequence: 'END',
      usage: {
        inputTokens: 160,
        outputTokens: 7,
        cacheReadTokens: 100,
        cacheCreationTokens: 50,
        cache1hTokens: 30,
        reasoningTokens: 0,
      },
    })
    for (const [wire, ir] of [
      ['end_turn', 'end'],
      ['max_tokens', 'max_tokens'],
      ['tool_use', 'tool_use'],
      ['pause_turn', 'pause'],
      ['refusal', 'content_filter'],
      ['model_context_window_exceeded', 'context_window'],
    ])
      expect(messagesCodec.decodeResponse({content: [], stop_reason: wire}).stop).toBe(ir)
  })

  it('encodes an answer the Anthropic SDK reads, wrapping foreign signatures and keeping them in the carry', async () => {
    const carry = new BoundedCarry()
    const response: Response = {
      id: 'resp_1',
      model: 'gemini-2.5-pro',
      parts: [
        {type: 'reasoning', text: 'plan', signature: {family: 'gemini', value: 'G=='}},
        {type: 'text', text: 'Running it.'},
        {type: 'tool_call', id: 'call_1', name: 'run', arguments: '{"cmd":"ls"}'},
      ],
      stop: 'tool_use',
      usage: {...emptyUsage(), inputTokens: 500, cacheReadTokens: 400, outputTokens: 12},
    }
    const server = await serveOnce(JSON.stringify(messagesCodec.encodeResponse(response, {carry})), false)
    try {
      const client = new Anthropic({baseURL: server.url, apiKey: 'k', maxRetries: 0})
      const m = await client.messages.create({
        model: 'x',
        max_tokens: 10,
        messages: [{role: 'user', content: 'x'}],
      })
      expect(m.content).toEqual([
        {type: 'thinking', thinking: 'plan', signature: 'gwx1.gemini.G=='},
        {type: 'text', text: 'Running it.'},
        {type: 'tool_use', id: 'call_1', name: 'run', input: {cmd: 'ls'}},
      ])
      expect(m.stop_reason).toBe('tool_use')
      expect(m.usage).toMatchObject({
        input_tokens: 100,
        cache_read_input_tokens: 400,
        cache_creation_input_tokens: 0,
        output_tokens: 12,
      })
      expect(carry.get('call_1')).toEqual([response.parts[0]])
    } finally {
      await server.close()
    }
  })
})

describe('messages answers: the thinking part of the output', () => {
  it('reads output_tokens_details.thinking_tokens as the reasoning, and writes it back the same way', () => {
    const r = messagesCodec.decodeResponse(
      {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        model: 'claude-x',
        content: [{type: 'text', text: 'hi'}],
        stop_reason: 'end_turn',
        usage: {input_tokens: 5, output_tokens: 40, output_tokens_details: {thinking_tokens: 25}},
      },
      {},
    )
    expect(r.usage).toMatchObject({outputTokens: 40, reasoningTokens: 25})
    const out = messagesCodec.encodeResponse(r, {request: base}) as {usage: Record<string, unknown>}
    expect(out.usage.output_tokens_details).toEqual({thinking_tokens: 25})
    // no reasoning: written as before, without the field
    const plain = messagesCodec.encodeResponse(
      {...r, usage: {...r.usage, reasoningTokens: 0}},
      {request: base},
    )
    expect((plain as {usage: Record<string, unknown>}).usage.output_tokens_details).toBeUndefined()
  })
})

describe('messages answers written as text', () => {
  const odd = 'say "hi"\n\u00e9\u2028 😀 \\'
  const answers: Array<[string, Response]> = [
    ['text', {id: 'msg_1', model: 'm', parts: [{type: 'text', text: odd}], stop: 'end', usage: emptyUsage()}],
    [
      'every part kind, a stop sequence and one-hour cache writes',
      {
        id: '',
        model: '',
        parts: [
          {type: 'reasoning', text: 'T', signature: {family: 'messages', value: 'SIG'}},
          {type: 'reasoning', text: '', redacted: {family: 'messages', value: 'RED'}},
          {type: 'reasoning', text: 'G', signature: {family: 'gemini', value: 'gsig'}},
          {type: 'reasoning', text: 'R', encrypted: {family: 'responses', value: '{"id":"rs_1"}'}},
          {type: 'reasoning', text: ''},
          {type: 'reasoning', text: 'plain'},
          {type: 'text', text: ''},
          {type: 'text', text: 'a'},
          {type: 'text', text: 'b'},
          {type: 'tool_call', id: 'toolu_1', name: 'f', arguments: '{"x": [1, "é"]}'},
          {type: 'tool_call', id: 'toolu_2', name: 'g', arguments: 'not json'},
          {type: 'tool_call', id: 'toolu_3', name: 'h', arguments: '[1]'},
          {type: 'tool_call', id: 'toolu_4', name: 'i', arguments: ''},
        ],
        stop: 'stop_sequence',
        stopSequence: 'END',
        usage: {
          inputTokens: 100,
          outputTokens: 7,
          cacheReadTokens: 20,
          cacheCreationTokens: 30,
          cache1hTokens: 10,
          reasoningTokens: 3,
        },
      },
    ],
    [
      'no parts, a context-window stop',
      {id: 'm', model: 'x', parts: [], stop: 'context_window', usage: emptyUsage()},
    ],
  ]
  it.each(answers)('%s: the bytes JSON.stringify writes for encodeResponse', (_name, response) => {
    const ctx = {newId: (prefix: string) => `${prefix}made`, request: {...base, model: 'asked'}}
    const text = messagesCodec.encodeResponseText!(response, ctx)
    expect(text).toBe(JSON.stringify(messagesCodec.encodeResponse(response, ctx)))
  })

  it('keeps foreign reasoning for the next turn as the object encoder does', () => {
    const response = answers[1][1]
    const [a, b] = [new BoundedCarry(), new BoundedCarry()]
    messagesCodec.encodeResponse(response, {carry: a})
    messagesCodec.encodeResponseText!(response, {carry: b})
    for (const id of ['toolu_1', 'toolu_2', 'toolu_3', 'toolu_4']) expect(b.get(id)).toEqual(a.get(id))
    expect(b.get('toolu_1')).toBeDefined()
  })
})

describe("messages decodeRequest: a tool's result or a user turn with blocks another family lacks", () => {
  const searchResult = {
    type: 'search_result',
    source: 'https://docs.example.com/gwctl',
    title: 'gwctl docs',
    content: [
      {type: 'text', text: 'gwctl fronts model traffic.'},
      {type: 'text', text: 'It translates protocols.'},
    ],
    citations: {enabled: true},
  }
  const searchText =
    'Search result "gwctl docs" <https://docs.example.com/gwctl>:\ngwctl fronts model traffic.\nIt translates protocols.'
  const called = {
    role: 'assistant',
    content: [{type: 'tool_use', id: 'toolu_1', name: 'kb', input: {q: 'gwctl'}}],
  }
  const body = (result: unknown[], after: unknown[] = []) => ({
    model: 'm',
    max_tokens: 9,
    tools: [{name: 'kb', input_schema: {type: 'object'}}],
    messages: [
      user0('what is gwctl?'),
      called,
      {role: 'user', content: [{type: 'tool_result', tool_use_id: 'toolu_1', content: result}, ...after]},
    ],
  })
  const upstream = (family: Family, b: unknown): any =>
    JSON.parse(encodeUpstreamRequest(decodeClientRequest('messages', b, {}), family, 'up').body.toString())

  it.each([
    // [where the search result is, what each family's model reads]
    ['in a tool result', body([searchResult])],
    ['in a user turn, beside a tool result', body([{type: 'text', text: 'see below'}], [searchResult])],
  ])('reads a search_result %s as text naming its title and source, for every other family', (_, b) => {
    const r = messagesCodec.decodeRequest(b, {})
    expect(r.leftOut).toBeUndefined()
    const texts = r.messages[2].parts.flatMap((p) => (p.type === 'tool_result' ? p.content : [p])) as Array<{
      text: string
    }>
    expect(texts.map((t) => t.text)).toContain(searchText)
    const chat = upstream('chat', b)
    expect(JSON.stringify(chat.messages.slice(2))).toContain(JSON.stringify(searchText).slice(1, -1))
    const responses = upstream('responses', b)
    expect(JSON.stringify(responses.input.slice(2))).toContain(JSON.stringify(searchText).slice(1, -1))
    const gemini = upstream('gemini', b)
    expect(JSON.stringify(gemini.contents.at(-1))).toContain(JSON.stringify(searchText).slice(1, -1))
  })

  it('keeps a search_result as it came for a Messages upstream, cache marks where they were', () => {
    const inResult = encodeMessages(messagesCodec.decodeRequest(body([searchResult]), {}))
    // (the breakpoint on the tool result is the one added where Claude Code puts them)
    expect(inResult.messages[2].content[0]).toMatchObject({
      type: 'tool_result',
      tool_use_id: 'toolu_1',
      content: [searchResult],
    })
    const marked = {...searchResult, cache_control: {type: 'ephemeral'}}
    const inTurn = encodeMessages(
      messagesCodec.decodeRequest(body([{type: 'text', text: 'ok'}], [marked]), {}),
    )
    expect(inTurn.messages[2].content[1]).toEqual(marked)
  })

  it.each([
    [
      "an unknown block in a tool's result",
      body([
        {type: 'text', text: 'rows:'},
        {type: 'chart', data: [1, 2]},
      ]),
      [
        'rows:',
        `[The tool's result held a block of type "chart", left out: it cannot be sent to this model]`,
      ],
      ['chart'],
    ],
    [
      'an unknown block of a user turn',
      body([{type: 'text', text: 'ok'}], [{type: 'container_upload', file_id: 'file_1'}]),
      [
        'ok',
        '[This message held a block of type "container_upload", left out: it cannot be sent to this model]',
      ],
      ['container_upload'],
    ],
    [
      'two of one type and one without a type, each a line, each type named once',
      body([{type: 'chart'}, {type: 'chart'}, {}]),
      [
        `[The tool's result held a block of type "chart", left out: it cannot be sent to this model]`,
        `[The tool's result held a block of type "chart", left out: it cannot be sent to this model]`,
        `[The tool's result held a block of type "unknown", left out: it cannot be sent to this model]`,
      ],
      ['chart', 'unknown'],
    ],
  ])('%s: a line that says it was left out, and its type for the log row', (_, b, lines, types) => {
    const r = messagesCodec.decodeRequest(b, {})
    const texts = r.messages[2].parts.flatMap((p) => (p.type === 'tool_result' ? p.content : [p])) as Array<{
      text: string
    }>
    expect(texts.map((t) => t.text)).toEqual(lines)
    expect(r.leftOut).toEqual(types)
    // every family takes the request
    for (const family of ['chat', 'responses', 'gemini'] as const)
      expect(JSON.stringify(upstream(family, b))).toContain('left out: it cannot be sent to this model')
  })
})

describe('thinking blocks the upstream dropped (input_transformations)', () => {
  it('counts them by reason, from the stream start or its last delta, for the log row', () => {
    expect(
      droppedThinking([
        {type: 'thinking_dropped', reason: 'prefix_binding_mismatch', location: 'messages.1.content.0'},
        {type: 'thinking_dropped', reason: 'prefix_binding_mismatch'},
        {type: 'thinking_dropped', reason: 'model_binding_mismatch'},
        {type: 'thinking_mismatch_allowed'},
      ]),
    ).toBe('2 (prefix_binding_mismatch), 1 (model_binding_mismatch)')
    expect(droppedThinking([{type: 'thinking_dropped', reason: 'a b\nc'}])).toBe('1 (no reason given)')
    expect(droppedThinking([])).toBeUndefined()
    expect(droppedThinking('x')).toBeUndefined()
    const decoder = new MessagesStreamDecoder()
    decoder.event(
      'message_start',
      JSON.stringify({
        type: 'message_start',
        message: {
          id: 'm',
          input_transformations: [{type: 'thinking_dropped', reason: 'prefix_binding_mismatch'}],
        },
      }),
    )
    expect(decoder.droppedThinking()).toBe('1 (prefix_binding_mismatch)')
  })
})
