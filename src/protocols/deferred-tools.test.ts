/**
 * Anthropic's tool search in Messages form, for a body passed through to a server that does not
 * implement it (Claude Code's deferred tools and `tool_reference` blocks): the translated route's
 * rule (./messages.ts), every other byte as it came.
 */
import {describe, expect, it} from 'vitest'

import {holdsDeferral, withDeferredToolsLoaded} from './deferred-tools.js'
import {
  deferred,
  functions,
  line,
  loaded,
  placeholder,
  ref,
  search,
  tool,
  turn1,
} from './deferred-tools-fixture.js'
import {messagesCodec} from './messages.js'

// Claude Code's request over the fixture's tools and turns (./deferred-tools-fixture.ts)
const body = (tools: unknown[], messages: unknown[], extra: Record<string, unknown> = {}) => ({
  model: 'kimi-for-coding',
  max_tokens: 32000,
  messages,
  system: [{type: 'text', text: 'You are Claude Code.', cache_control: {type: 'ephemeral'}}],
  tools,
  stream: true,
  ...extra,
})
const rewrite = (b: unknown): unknown => {
  const out = withDeferredToolsLoaded(Buffer.from(JSON.stringify(b)))
  return out === undefined ? undefined : JSON.parse(String(out))
}

describe('withDeferredToolsLoaded', () => {
  it('leaves out a deferred tool nobody referenced, the placeholder included', () => {
    const sent = body(
      [tool('Agent'), tool('ToolSearch'), deferred('WebFetch'), placeholder, tool('Write')],
      [turn1],
    )
    expect(rewrite(sent)).toEqual({...sent, tools: [tool('Agent'), tool('ToolSearch'), tool('Write')]})
  })

  it('every tool deferred and none loaded yet: no tools and no tool_choice (a choice among none is refused)', () => {
    const sent = body([deferred('WebFetch'), placeholder], [turn1], {tool_choice: {type: 'auto'}})
    const {tools: _tools, tool_choice: _choice, ...rest} = sent as Record<string, unknown>
    expect(rewrite(sent)).toEqual(rest)
  })

  it('loads referenced tools after the others in the order of first reference; each run of references one <functions> block', () => {
    const sent = body(
      [
        tool('ToolSearch'),
        deferred('Cron'),
        tool('Read'),
        deferred('Monitor'),
        deferred('Never'),
        deferred('WebFetch'),
        placeholder,
        tool('Write'),
      ],
      [
        turn1,
        search('toolu_1', 'select:Monitor,Read'),
        loaded('toolu_1', [
          ref('Monitor'),
          ref('Read'),
          ref('Gone'),
          {type: 'text', text: 'and'},
          ref('Cron'),
        ]),
        search('toolu_2', 'select:Cron,WebFetch'),
        loaded('toolu_2', [ref('Cron'), ref('WebFetch')]),
      ],
    )
    const out = rewrite(sent) as {tools: unknown[]; messages: Array<{content: unknown[]}>}
    expect(out.tools).toEqual([
      tool('ToolSearch'),
      tool('Read'),
      tool('Write'),
      tool('Monitor'),
      tool('Cron'),
      tool('WebFetch'),
    ])
    expect(out.messages[2].content).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 'toolu_1',
        content: [
          functions(line('Monitor'), line('Read'), '<function>{"name":"Gone"}</function>'),
          {type: 'text', text: 'and'},
          functions(line('Cron')),
        ],
      },
      {type: 'text', text: 'Tool loaded.', cache_control: {type: 'ephemeral'}},
    ])
    expect(out.messages[4].content[0]).toEqual({
      type: 'tool_result',
      tool_use_id: 'toolu_2',
      content: [functions(line('Cron'), line('WebFetch'))],
    })
    // the rest as it came, in its order
    expect({...out, tools: sent.tools, messages: sent.messages}).toEqual(sent)
    expect(Object.keys(out)).toEqual(Object.keys(sent))
  })

  it("writes the same text as the translated route's decoder", () => {
    const sent = body(
      [tool('ToolSearch'), deferred('WebFetch'), placeholder],
      [turn1, search('toolu_1', 'select:WebFetch'), loaded('toolu_1', [ref('WebFetch'), ref('Gone')])],
    )
    const decoded = messagesCodec.decodeRequest(sent, {})
    const result = decoded.messages[2].parts[0] as {content: Array<{text: string}>}
    const out = rewrite(sent) as {messages: Array<{content: Array<{content: Array<{text: string}>}>}>}
    expect(out.messages[2].content[0].content[0].text).toBe(result.content[0].text)
    expect(decoded.tools.map((t) => t.name)).toEqual(['ToolSearch', 'WebFetch'])
  })

  it("keeps the cache marks where they were, a reference's on its run's block", () => {
    const sent = body(
      [tool('ToolSearch'), tool('WebFetch', {defer_loading: true, cache_control: {type: 'ephemeral'}})],
      [
        turn1,
        search('toolu_1', 'select:WebFetch'),
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'toolu_1',
              content: [ref('WebFetch', {cache_control: {type: 'ephemeral', ttl: '1h'}})],
              cache_control: {type: 'ephemeral'},
            },
          ],
        },
      ],
    )
    const out = rewrite(sent) as {tools: unknown[]; messages: Array<{content: unknown[]}>; system: unknown}
    expect(out.tools).toEqual([tool('ToolSearch'), tool('WebFetch', {cache_control: {type: 'ephemeral'}})])
    expect(out.messages[2].content).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 'toolu_1',
        content: [{...functions(line('WebFetch')), cache_control: {type: 'ephemeral', ttl: '1h'}}],
        cache_control: {type: 'ephemeral'},
      },
    ])
    expect(out.system).toEqual(sent.system)
  })

  it('is deterministic, and a turn keeps the bytes of the turn before but for the tools it loads', () => {
    const tools = [tool('ToolSearch'), deferred('Cron'), deferred('WebFetch'), placeholder]
    const first = [turn1, search('toolu_1', 'select:WebFetch'), loaded('toolu_1', [ref('WebFetch')])]
    const second = [
      ...first,
      search('toolu_2', 'select:Cron'),
      loaded('toolu_2', [ref('Cron')]),
      {role: 'assistant', content: [{type: 'text', text: 'done'}]},
    ]
    const a = withDeferredToolsLoaded(Buffer.from(JSON.stringify(body(tools, first))))
    const again = withDeferredToolsLoaded(Buffer.from(JSON.stringify(body(tools, first))))
    expect(String(again)).toBe(String(a))
    const b = JSON.parse(
      String(withDeferredToolsLoaded(Buffer.from(JSON.stringify(body(tools, second))))),
    ) as {
      tools: unknown[]
      messages: unknown[]
    }
    const parsedA = JSON.parse(String(a)) as {tools: unknown[]; messages: unknown[]}
    expect(b.messages.slice(0, 3)).toEqual(parsedA.messages)
    expect(b.tools).toEqual([...parsedA.tools, tool('Cron')])
  })

  it('gives the model a deferred tool the request forces', () => {
    const sent = body([tool('Read'), deferred('WebFetch'), placeholder], [turn1], {
      tool_choice: {type: 'tool', name: 'WebFetch'},
    })
    expect((rewrite(sent) as {tools: unknown[]}).tools).toEqual([tool('Read'), tool('WebFetch')])
  })

  it("un-defers the tools in place beside Anthropic's own tool search", () => {
    const server = {type: 'tool_search_tool_regex_20251119', name: 'tool_search_tool'}
    const sent = body([server, deferred('get_weather'), tool('Read')], [turn1])
    expect((rewrite(sent) as {tools: unknown[]}).tools).toEqual([server, tool('get_weather'), tool('Read')])
  })

  it('leaves a body without deferral alone: undefined, no parse', () => {
    for (const b of [
      body([tool('Read')], [turn1]),
      // the words inside a string only, or nothing to change
      body([tool('Read')], [{role: 'user', content: 'what is "defer_loading"?'}]),
      body([tool('Read', {defer_loading: false})], [turn1]),
      // not JSON
      '{"defer_loading": tru',
    ]) {
      const bytes = Buffer.from(typeof b === 'string' ? b : JSON.stringify(b))
      expect(withDeferredToolsLoaded(bytes)).toBeUndefined()
    }
    expect(holdsDeferral(Buffer.from(JSON.stringify(body([tool('Read')], [turn1]))))).toBe(false)
  })

  it('splices: what it does not change goes byte for byte as it came, written any way', () => {
    const tools = [tool('ToolSearch'), deferred('WebFetch'), placeholder]
    const talk = {role: 'user', content: 'what does "tool_reference" mean?'}
    const messages = [turn1, talk, search('toolu_1', 'select:WebFetch'), loaded('toolu_1', [ref('WebFetch')])]
    const spaced = JSON.stringify(body(tools, messages, {metadata: {user_id: 'u'}}), null, 2)
    const out = String(withDeferredToolsLoaded(Buffer.from(spaced)))
    // the same as for the body written compactly
    expect(JSON.parse(out)).toEqual(rewrite(body(tools, messages, {metadata: {user_id: 'u'}})))
    // the members and messages it leaves alone, with their spaces
    for (const kept of [turn1, talk, search('toolu_1', 'select:WebFetch')])
      expect(out).toContain(JSON.stringify(kept, null, 2).replaceAll('\n', '\n    '))
    expect(out).toContain(
      `"system": ${JSON.stringify(body([], []).system, null, 2).replaceAll('\n', '\n  ')}`,
    )
    expect(out.endsWith(`"metadata": {\n    "user_id": "u"\n  }\n}`)).toBe(true)
    // the message with the reference and the tools, written as JSON writes them
    const written = loaded('toolu_1', [])
    written.content[0] = {type: 'tool_result', tool_use_id: 'toolu_1', content: [functions(line('WebFetch'))]}
    expect(out).toContain(JSON.stringify(written))
    expect(out).toContain(`"tools": ${JSON.stringify([tool('ToolSearch'), tool('WebFetch')])}`)
  })

  it('takes out tools and tool_choice wherever they stand, with their separators', () => {
    const b = `{"tool_choice":{"type":"auto"} , "tools":[${JSON.stringify(placeholder)}],"model":"m","messages":[]}`
    expect(String(withDeferredToolsLoaded(Buffer.from(b)))).toBe('{"model":"m","messages":[]}')
  })

  it('gives undefined where a value it reads is not JSON, and reads the last of a name given twice', () => {
    expect(
      withDeferredToolsLoaded(Buffer.from('{"tools":[{"defer_loading":true,}],"messages":[]}')),
    ).toBeUndefined()
    const twice = `{"tools":[],"messages":[],"tools":[${JSON.stringify(tool('Read'))},${JSON.stringify(placeholder)}]}`
    // (the one a parse would not keep goes, as the whole body's write left it out)
    expect(String(withDeferredToolsLoaded(Buffer.from(twice)))).toBe(
      `{"messages":[],"tools":[${JSON.stringify(tool('Read'))}]}`,
    )
    const none = `{"tools":[${JSON.stringify(tool('Read'))}],"tool_choice":{"type":"any"},"messages":[],"tools":[${JSON.stringify(placeholder)}],"tool_choice":{"type":"auto"}}`
    expect(String(withDeferredToolsLoaded(Buffer.from(none)))).toBe('{"messages":[]}')
  })
})
