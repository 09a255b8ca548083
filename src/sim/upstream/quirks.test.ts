/** Quirks on demand, seen on the wire: exact chunks of each family's stream. */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {Simulator} from '../server.js'
import {startSim} from '../server.js'
import {geminiAnswer} from './gemini.js'
import {messagesAnswer} from './messages.js'
import {cutPieces, pickedTool, selectQuirks} from './quirks.js'
import {responsesAnswer} from './responses.js'

let sim: Simulator

beforeAll(async () => {
  sim = await startSim({timeScale: 1000})
})
afterAll(async () => {
  await sim.close()
})

type Json = Record<string, any>
type Event = {event?: string; data: any}

const AUTH = {
  authorization: 'Bearer sk-test',
  'x-api-key': 'sk-ant-test',
  'x-goog-api-key': 'g-test',
  'anthropic-version': '2023-06-01',
}

async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(sim.origin + path, {
    method: 'POST',
    headers: {'content-type': 'application/json', ...AUTH, ...headers},
    body: JSON.stringify(body),
  })
  const text = await response.text()
  const events: Event[] = []
  if ((response.headers.get('content-type') ?? '').startsWith('text/event-stream'))
    for (const block of text.split('\n\n').filter(Boolean)) {
      const event = /^event: (.*)$/m.exec(block)?.[1]
      const data = /^data: (.*)$/m.exec(block)?.[1] ?? ''
      events.push({...(event ? {event} : {}), data: data === '[DONE]' ? data : JSON.parse(data)})
    }
  return {status: response.status, text, events, json: events.length ? undefined : (JSON.parse(text) as Json)}
}

const chatTools = [
  {type: 'function', function: {name: 'get_weather', parameters: {properties: {city: {type: 'string'}}}}},
  {type: 'function', function: {name: 'get_time', parameters: {properties: {zone: {type: 'string'}}}}},
]
const chat = (body: Json, headers?: Record<string, string>) =>
  post('/v1/chat/completions', {messages: [{role: 'user', content: 'weather'}], ...body}, headers)
const toolDeltas = (events: Event[]) =>
  events.flatMap((e) => (e.data === '[DONE]' ? [] : (e.data.choices?.[0]?.delta?.tool_calls ?? [])))

describe('quirk selection', () => {
  it('takes quirks from the header and the model suffixes, and strips the suffixes', () => {
    expect(selectQuirks({'x-sim-quirk': 'cut-args, no-terminal'}, 'sim-mini+empty-args')).toEqual({
      model: 'sim-mini',
      quirks: new Set(['cut-args', 'no-terminal', 'empty-args']),
      unknown: [],
    })
    expect(selectQuirks({}, 'gpt+bogus').unknown).toEqual(['bogus'])
  })

  it('cuts arguments inside strings and inside \\"', () => {
    const json = JSON.stringify({city: 'said "weather"'})
    expect(cutPieces(json)).toEqual(['{"ci', 'ty":"said \\', '"w', 'eather\\', '""}'])
  })

  it('echoes the model without suffixes and refuses an unknown quirk', async () => {
    const ok = await chat({model: 'gpt-x+usage-last'})
    expect(ok.json?.model).toBe('gpt-x')
    const bad = await chat({model: 'gpt-x+paralel-tools'})
    expect(bad.status).toBe(400)
    expect(bad.json?.error.message).toContain('unknown sim quirk "paralel-tools"')
  })
})

describe('chat quirks', () => {
  it('parallel-tools: two calls, argument deltas interleaved by index', async () => {
    const {events} = await chat({model: 'gpt-x+parallel-tools', tools: chatTools, stream: true})
    const id = expect.stringMatching(/^call_/)
    expect(toolDeltas(events)).toEqual([
      {index: 0, id, type: 'function', function: {name: 'get_weather', arguments: ''}},
      {index: 1, id, type: 'function', function: {name: 'get_time', arguments: ''}},
      {index: 0, function: {arguments: '{"city":'}},
      {index: 1, function: {arguments: '{"zone":'}},
      {index: 0, function: {arguments: '"weather'}},
      {index: 1, function: {arguments: '"weather'}},
      {index: 0, function: {arguments: '"}'}},
      {index: 1, function: {arguments: '"}'}},
    ])
    const plain = await chat({model: 'gpt-x+parallel-tools', tools: chatTools.slice(0, 1)})
    expect(plain.json?.choices[0].message.tool_calls.map((c: Json) => c.function)).toEqual([
      {name: 'get_weather', arguments: '{"city":"weather"}'},
      {name: 'get_weather', arguments: '{"city":"weather #2"}'},
    ])
  })

  it("kimi-ids: Kimi K3's `{name}:{position}`, from 0 on every answer, stream and not", async () => {
    for (let answer = 0; answer < 2; answer++) {
      const {events} = await chat({model: 'kimi-k3+kimi-ids+parallel-tools', tools: chatTools, stream: true})
      expect(toolDeltas(events).flatMap((d: Json) => (d.id ? [d.id] : []))).toEqual([
        'get_weather:0',
        'get_time:1',
      ])
      const whole = await chat({model: 'kimi-k3', tools: chatTools.slice(0, 1)}, {'x-sim-quirk': 'kimi-ids'})
      expect(whole.json?.choices[0].message.tool_calls.map((c: Json) => c.id)).toEqual(['get_weather:0'])
    }
  })

  it('cut-args: one piece per chunk, cut mid-string and inside \\"', async () => {
    const {events} = await chat({model: 'gpt-x', tools: chatTools, stream: true}, {'x-sim-quirk': 'cut-args'})
    expect(toolDeltas(events).slice(1)).toEqual(
      ['{"ci', 'ty":"said \\', '"w', 'eather\\', '""}'].map((a) => ({index: 0, function: {arguments: a}})),
    )
  })

  /** The first tool call's arguments the quirks give, streamed (its deltas joined) or not. */
  const argsOf = async (quirks: string, stream: boolean, tools: unknown[]) => {
    const {events, json} = await chat({model: `gpt-x+${quirks}`, tools, stream})
    return stream
      ? toolDeltas(events)
          .map((d: any) => d.function.arguments ?? '')
          .join('')
      : (json as any).choices[0].message.tool_calls[0].function.arguments
  }

  it('single-quote-args, trailing-comma-args, fenced-args, parameter-args: arguments as broken tool parsers write them', async () => {
    for (const stream of [true, false]) {
      expect(await argsOf('single-quote-args', stream, chatTools)).toMatch(/^\{'city': '[^']*'\}$/)
      expect(await argsOf('trailing-comma-args', stream, chatTools)).toMatch(/^\{"city":"[^"]*", \}$/)
      expect(await argsOf('fenced-args', stream, chatTools)).toMatch(/^```json\n\{"city":"[^"]*"\}\n```$/)
      expect(await argsOf('parameter-args', stream, chatTools)).toMatch(
        /^<parameter=city>\n[^<]*\n<\/parameter>\n$/,
      )
    }
  })

  it("raw-input-args: a tool of one string `input` gets that string raw; another tool's arguments stay JSON", async () => {
    const free = [
      {
        type: 'function',
        function: {
          name: 'apply_patch',
          parameters: {type: 'object', properties: {input: {type: 'string'}}, required: ['input']},
        },
      },
    ]
    for (const stream of [true, false]) {
      const raw = await argsOf('raw-input-args', stream, free)
      expect(raw).not.toMatch(/^\{/)
      expect(raw.length).toBeGreaterThan(0)
      expect(await argsOf('raw-input-args', stream, chatTools)).toMatch(/^\{"city":"[^"]*"\}$/)
    }
  })

  it('python-literal-args: a boolean property as True, alone or in the whole repr', async () => {
    const tools = [
      {
        type: 'function',
        function: {
          name: 'list',
          parameters: {properties: {path: {type: 'string'}, recursive: {type: 'boolean'}}},
        },
      },
    ]
    for (const stream of [true, false]) {
      expect(await argsOf('python-literal-args', stream, tools)).toBe('{"path":"weather","recursive":True}')
      expect(await argsOf('python-literal-args+single-quote-args', stream, tools)).toBe(
        "{'path': 'weather', 'recursive': True}",
      )
    }
  })

  it("split-surrogate: an emoji's pair split across two chunks of text, reasoning and arguments", async () => {
    const raw = (await chat({model: 'sim-reasoner+reasoning-content+split-surrogate', stream: true})).text
    // each unit escaped alone, as a server escaping per UTF-16 unit writes it
    expect(raw).toContain(' \\ud83d"')
    expect(raw).toContain('"\\ude00.')
    const {events} = await chat({model: 'sim-reasoner+reasoning-content+split-surrogate', stream: true})
    const pieces = (field: string) =>
      events
        .flatMap((e) => (e.data === '[DONE]' ? [] : [e.data.choices?.[0]?.delta?.[field]]))
        .filter(Boolean)
    for (const field of ['content', 'reasoning_content']) {
      const list = pieces(field) as string[]
      expect(list.at(-2)?.endsWith(' \ud83d')).toBe(true)
      expect(list.at(-1)).toBe('\ude00.')
      expect(list.join('').endsWith(' \u{1F600}.')).toBe(true)
    }
    const call = await chat({model: 'gpt-x+split-surrogate', tools: chatTools, stream: true})
    const args = toolDeltas(call.events).map((d: any) => d.function.arguments ?? '')
    const cut = args.findIndex((a: string) => a.endsWith('\ud83d'))
    expect(args[cut + 1]?.startsWith('\ude00')).toBe(true)
    expect(JSON.parse(args.join(''))).toEqual({city: 'weather \u{1F600}'})
    // a JSON answer has the emoji whole
    const whole = await chat({model: 'gpt-x+split-surrogate'})
    expect(whole.json?.choices[0].message.content).toMatch(/ \u{1F600}\.$/u)
  })

  it("shifted-index: each call's head at the index before it, its arguments at its own", async () => {
    const {events} = await chat({model: 'gpt-x+parallel-tools+shifted-index', tools: chatTools, stream: true})
    const deltas = toolDeltas(events).map((d: any) => [
      d.index,
      d.id ?? '',
      d.function.name ?? '',
      d.function.arguments,
    ])
    expect(deltas.filter((d) => d[1] !== '')).toEqual([
      [0, expect.stringMatching(/^call_/), 'get_weather', ''],
      [0, expect.stringMatching(/^call_/), 'get_time', ''],
    ])
    const args = (index: number) => deltas.filter((d) => d[1] === '' && d[0] === index).map((d) => d[3])
    expect(JSON.parse(args(0).join(''))).toEqual({city: expect.any(String)})
    expect(JSON.parse(args(1).join(''))).toEqual({zone: expect.any(String)})
    // the second call's arguments come after its head
    expect(deltas.findIndex((d) => d[0] === 1)).toBeGreaterThan(deltas.findIndex((d) => d[2] === 'get_time'))
  })

  it('empty-args: arguments "" and no argument deltas', async () => {
    const {json} = await chat({model: 'gpt-x+empty-args', tools: chatTools})
    expect(json?.choices[0].message.tool_calls[0].function).toEqual({name: 'get_weather', arguments: ''})
    const {events} = await chat({model: 'gpt-x+empty-args', tools: chatTools, stream: true})
    expect(toolDeltas(events)).toHaveLength(1)
    expect(events.at(-2)?.data.choices[0].finish_reason).toBe('tool_calls')
  })

  it('reasoning-content: reasoning_content before the content, by quirk or a "reasoner" model name', async () => {
    for (const [model, headers] of [
      ['gpt-x', {'x-sim-quirk': 'reasoning-content'}],
      ['deepseek-reasoner', {}],
    ] as const) {
      const {events} = await chat({model, stream: true}, headers)
      const kinds = events
        .slice(1, -2)
        .map((e) => Object.keys(e.data.choices[0].delta)[0])
        .filter((k, i, all) => k !== all[i - 1])
      expect(kinds).toEqual(['reasoning_content', 'content'])
      const {json} = await chat({model}, headers)
      expect(json?.choices[0].message.reasoning_content).toMatch(/^Let me think about "weather"/)
    }
    const {json} = await chat({model: 'gpt-x'})
    expect(json?.choices[0].message).not.toHaveProperty('reasoning_content')
  })

  it('no-finish-reason: no chunk has a finish_reason, [DONE] still ends the stream; a JSON answer says null', async () => {
    const {events} = await chat({model: 'gpt-x+no-finish-reason', stream: true})
    expect(events.at(-1)?.data).toBe('[DONE]')
    expect(events.slice(0, -1).every((e) => e.data.choices[0].finish_reason === null)).toBe(true)
    const normal = await chat({model: 'gpt-x', stream: true})
    expect(normal.events.at(-2)?.data.choices[0].finish_reason).toBe('stop')
    const {json} = await chat({model: 'gpt-x+no-finish-reason'})
    expect(json?.choices[0].finish_reason).toBe(null)
  })

  it("vendor-finish, broken-finish: Z.ai's sensitive, network_error as the finish, stream and JSON answer", async () => {
    for (const [quirk, finish] of [
      ['vendor-finish', 'sensitive'],
      ['broken-finish', 'network_error'],
    ]) {
      const {events} = await chat({model: `gpt-x+${quirk}`, stream: true})
      expect(events.at(-2)?.data.choices[0].finish_reason).toBe(finish)
      expect(events.slice(0, -2).every((e) => e.data.choices[0].finish_reason === null)).toBe(true)
      const {json} = await chat({model: `gpt-x+${quirk}`})
      expect(json?.choices[0].finish_reason).toBe(finish)
    }
  })

  it('usage-last: usage on the finish chunk itself, no choices:[] chunk, even without include_usage', async () => {
    const {events} = await chat({model: 'gpt-x+usage-last', stream: true})
    const last = events.at(-2)?.data
    expect(last.choices).toEqual([{index: 0, delta: {}, logprobs: null, finish_reason: 'stop'}])
    expect(last.usage).toMatchObject({
      prompt_tokens: expect.any(Number),
      completion_tokens: expect.any(Number),
    })
    expect(events.slice(0, -2).every((e) => !('usage' in e.data))).toBe(true)
    const asked = await chat({model: 'gpt-x+usage-last', stream: true, stream_options: {include_usage: true}})
    expect(asked.events.filter((e) => e.data !== '[DONE]' && e.data.choices.length === 0)).toEqual([])
    expect(asked.events.at(-2)?.data.usage).toEqual(last.usage)
  })

  it('no-usage: no usage anywhere, asked for it or not, stream and not', async () => {
    const {events} = await chat({
      model: 'gpt-x+no-usage',
      stream: true,
      stream_options: {include_usage: true},
    })
    expect(events.at(-1)?.data).toBe('[DONE]')
    expect(events.at(-2)?.data.choices[0].finish_reason).toBe('stop')
    expect(events.slice(0, -1).every((e) => !('usage' in e.data) && e.data.choices.length === 1)).toBe(true)
    const last = await chat({model: 'gpt-x+no-usage+usage-last', stream: true})
    expect(last.events.slice(0, -1).every((e) => !('usage' in e.data))).toBe(true)
    const whole = await chat({model: 'gpt-x+no-usage'})
    expect(whole.json!.choices[0].message.content).toEqual(expect.any(String))
    expect('usage' in whole.json!).toBe(false)
  })

  it('read-path: the path the user names for the path argument; a PDF after the result is read', async () => {
    const read = {
      type: 'function',
      function: {
        name: 'Read',
        parameters: {
          properties: {file_path: {type: 'string'}, offset: {type: 'number'}, pages: {type: 'string'}},
        },
      },
    }
    const messages = [{role: 'user', content: 'Read /tmp/w/report.pdf and summarise it.'}]
    const called = await chat({model: 'gpt-x+read-path', tools: [read], messages})
    const call = called.json!.choices[0].message.tool_calls[0]
    expect(JSON.parse(call.function.arguments)).toEqual({file_path: '/tmp/w/report.pdf'})
    const plain = await chat({model: 'gpt-x', tools: [read], messages})
    expect(Object.keys(JSON.parse(plain.json!.choices[0].message.tool_calls[0].function.arguments))).toEqual([
      'file_path',
      'offset',
      'pages',
    ])
    // the result, then the PDF in a user message of its own: answered, not another call
    const pdf = `data:application/pdf;base64,${Buffer.from('%PDF-1.4').toString('base64')}`
    const answered = await chat({
      model: 'gpt-x+read-path',
      tools: [read],
      messages: [
        ...messages,
        {
          role: 'assistant',
          content: null,
          tool_calls: [{id: call.id, type: 'function', function: call.function}],
        },
        {role: 'tool', tool_call_id: call.id, content: 'PDF file read'},
        {role: 'user', content: [{type: 'file', file: {filename: 'report.pdf', file_data: pdf}}]},
      ],
    })
    expect(answered.json!.choices[0].message.tool_calls).toBeUndefined()
    expect(answered.json!.choices[0].message.content).toBe(
      'The tool answered: PDF file read. I received 1 document.',
    )
  })

  it('tool-search: the ToolSearch tool is called with the select: the user names, never without one', async () => {
    const fn = (name: string) => ({
      type: 'function',
      function: {name, parameters: {type: 'object', properties: {query: {type: 'string'}}}},
    })
    const tools = [fn('Agent'), fn('ToolSearch')]
    const messages = [{role: 'user', content: 'Load it with select:WebFetch and stop.'}]
    const called = await chat({model: 'gpt-x+tool-search', tools, messages})
    const call = called.json!.choices[0].message.tool_calls[0]
    expect(call.function.name).toBe('ToolSearch')
    expect(JSON.parse(call.function.arguments)).toEqual({query: 'select:WebFetch'})
    // without the quirk, or without a select: or a ToolSearch tool, the first tool as always
    for (const ask of [
      {model: 'gpt-x', tools, messages},
      {model: 'gpt-x+tool-search', tools, messages: [{role: 'user', content: 'Load WebFetch.'}]},
      {model: 'gpt-x+tool-search', tools: [fn('Agent')], messages},
    ])
      expect((await chat(ask)).json!.choices[0].message.tool_calls[0].function.name).toBe('Agent')
    // the result, then Claude Code's own words after it: answered, not another call
    const answered = await chat({
      model: 'gpt-x+tool-search',
      tools,
      messages: [
        ...messages,
        {
          role: 'assistant',
          content: null,
          tool_calls: [{id: call.id, type: 'function', function: call.function}],
        },
        {role: 'tool', tool_call_id: call.id, content: '<functions>WebFetch</functions>'},
        {role: 'user', content: 'Tool loaded.'},
      ],
    })
    expect(answered.json!.choices[0].message.tool_calls).toBeUndefined()
    expect(answered.json!.choices[0].message.content).toBe(
      'The tool answered: <functions>WebFetch</functions>',
    )
  })

  it("tool-search: Codex's tool_search with the search: the user names, then the tool it loaded, then the answer", async () => {
    const fn = (name: string, required: string[] = []) => ({
      type: 'function',
      function: {
        name,
        parameters: {
          type: 'object',
          properties: {query: {type: 'string'}, limit: {type: 'number'}},
          required,
        },
      },
    })
    const prompt = 'Find the issues (search:github), then tool:mcp__github__search_issues.'
    const tools = [fn('exec_command'), fn('tool_search', ['query'])]
    const user = {role: 'user', content: prompt}
    const first = await chat({model: 'gpt-x+tool-search', tools, messages: [user]})
    const search = first.json!.choices[0].message.tool_calls[0]
    expect(search.function.name).toBe('tool_search')
    expect(JSON.parse(search.function.arguments)).toEqual({query: 'github'})

    // the search's output loaded the namespace's tools: the one the user names is called
    const searched = [
      user,
      {
        role: 'assistant',
        content: null,
        tool_calls: [{id: search.id, type: 'function', function: search.function}],
      },
      {
        role: 'tool',
        tool_call_id: search.id,
        content: 'Tools loaded, now callable: mcp__github__search_issues',
      },
    ]
    const loaded = [...tools, fn('mcp__github__search_issues', ['query'])]
    const second = await chat({model: 'gpt-x+tool-search', tools: loaded, messages: searched})
    const call = second.json!.choices[0].message.tool_calls[0]
    expect(call.function.name).toBe('mcp__github__search_issues')
    // the user's words without the `tool:NAME` that picked the tool
    expect(JSON.parse(call.function.arguments)).toEqual({query: 'Find the issues (search:github), then .'})

    // its result is answered; so is the search's when the tool named is not offered, or without the quirk
    const third = await chat({
      model: 'gpt-x+tool-search',
      tools: loaded,
      messages: [
        ...searched,
        {
          role: 'assistant',
          content: null,
          tool_calls: [{id: call.id, type: 'function', function: call.function}],
        },
        {role: 'tool', tool_call_id: call.id, content: 'issue #7'},
      ],
    })
    expect(third.json!.choices[0].message.tool_calls).toBeUndefined()
    expect(third.json!.choices[0].message.content).toBe('The tool answered: issue #7')
    for (const ask of [
      {model: 'gpt-x+tool-search', tools, messages: searched},
      {model: 'gpt-x', tools: loaded, messages: searched},
    ]) {
      const answered = (await chat(ask)).json!.choices[0].message
      expect(answered.tool_calls).toBeUndefined()
      expect(answered.content).toBe(
        'The tool answered: Tools loaded, now callable: mcp__github__search_issues',
      )
    }
  })

  it('named-tool: the tool the user names with tool:NAME, else the first', async () => {
    const fn = (name: string) => ({
      type: 'function',
      function: {name, parameters: {type: 'object', properties: {target: {type: 'string'}}}},
    })
    const tools = [fn('exec_command'), fn('multi_agent_v1__close_agent')]
    const ask = (model: string, content: string) =>
      chat({model, tools, messages: [{role: 'user', content}]}).then(
        (r) => r.json!.choices[0].message.tool_calls[0].function,
      )
    const call = await ask('gpt-x+named-tool', 'Close it with tool:multi_agent_v1__close_agent now.')
    expect(call.name).toBe('multi_agent_v1__close_agent')
    expect(JSON.parse(call.arguments)).toEqual({target: 'Close it with now.'})
    expect((await ask('gpt-x', 'Close it with tool:multi_agent_v1__close_agent')).name).toBe('exec_command')
    expect((await ask('gpt-x+named-tool', 'Close it with tool:gone')).name).toBe('exec_command')
    // its required properties only, each of its type: Claude Code's WebSearch takes no string
    // for its optional domain lists
    const search = {
      type: 'function',
      function: {
        name: 'WebSearch',
        parameters: {
          type: 'object',
          properties: {
            query: {type: 'string', minLength: 2},
            allowed_domains: {type: 'array', items: {type: 'string'}},
            blocked_domains: {type: 'array', items: {type: 'string'}},
          },
          required: ['query'],
        },
      },
    }
    const searched = await chat({
      model: 'gpt-x+named-tool',
      tools: [fn('exec_command'), search],
      messages: [{role: 'user', content: 'Find it with tool:WebSearch.'}],
    })
    const searchCall = searched.json!.choices[0].message.tool_calls[0].function
    expect(searchCall.name).toBe('WebSearch')
    expect(JSON.parse(searchCall.arguments)).toEqual({query: 'Find it with .'})
  })

  it("tool-search and named-tool on the vendor upstreams: the picked tool, and Claude Code's words after a result answered", () => {
    const both = new Set(['tool-search', 'named-tool'] as const)
    expect(pickedTool(['Agent', 'ToolSearch'], 'load select:WebFetch', both)).toEqual({
      name: 'ToolSearch',
      args: {query: 'select:WebFetch'},
    })
    expect(pickedTool(['a', 'ns__b'], 'with tool:ns__b', both)).toEqual({name: 'ns__b'})
    expect(pickedTool(['a'], 'with tool:ns__b or select:X', both)).toBeUndefined()
    expect(pickedTool(['ToolSearch'], 'select:X', new Set())).toBeUndefined()
    const ask = 'Load it (select:WebFetch).'
    const fn = (name: string) => ({type: 'function', name, parameters: {type: 'object'}})
    const quirk = new Set(['tool-search'] as const)
    const responses = (input: unknown[]) =>
      responsesAnswer({model: 'gpt-x', input, tools: [fn('Agent'), fn('ToolSearch')]}, quirk)
    expect(
      responses([{type: 'message', role: 'user', content: [{type: 'input_text', text: ask}]}]).tool,
    ).toEqual({
      name: 'ToolSearch',
      args: {query: 'select:WebFetch'},
    })
    const loaded = responses([
      {type: 'message', role: 'user', content: [{type: 'input_text', text: ask}]},
      {type: 'function_call', call_id: 'c1', name: 'ToolSearch', arguments: '{}'},
      {type: 'function_call_output', call_id: 'c1', output: '<functions>WebFetch</functions>'},
      {type: 'message', role: 'user', content: [{type: 'input_text', text: 'Tool loaded.'}]},
    ])
    expect(loaded.tool).toBeUndefined()
    expect(loaded.text).toBe('The tool answered: <functions>WebFetch</functions>')
    const gemini = geminiAnswer(
      {
        contents: [{role: 'user', parts: [{text: ask}]}],
        tools: [{functionDeclarations: [{name: 'Agent'}, {name: 'ToolSearch'}]}],
      },
      quirk,
    )
    expect(gemini.tool?.name).toBe('ToolSearch')
    const messages = messagesAnswer(
      {
        model: 'claude-x',
        max_tokens: 10,
        messages: [{role: 'user', content: 'Close it with tool:ns__close.'}],
        tools: [
          {name: 'first', input_schema: {}},
          {name: 'ns__close', input_schema: {}},
        ],
      },
      new Set(['named-tool'] as const),
    )
    expect(messages.tool?.name).toBe('ns__close')
  })

  it("tool-search on the vendor upstreams: Codex's search, then the tool it loaded, then the answer", () => {
    const quirk = new Set(['tool-search'] as const)
    const prompt = 'Find the issues (search:github), then tool:mcp__github__search_issues.'
    const loadedTool = 'mcp__github__search_issues'
    expect(pickedTool(['exec_command', 'tool_search'], prompt, quirk)).toEqual({
      name: 'tool_search',
      args: {query: 'github'},
    })
    expect(pickedTool(['exec_command', 'tool_search'], prompt, new Set())).toBeUndefined()
    expect(pickedTool(['exec_command'], prompt, quirk)).toBeUndefined()
    // after a result: the named tool once offered, and only after the search's result
    expect(pickedTool(['tool_search', loadedTool], prompt, quirk, 'tool_search')).toEqual({name: loadedTool})
    expect(pickedTool(['tool_search'], prompt, quirk, 'tool_search')).toBeUndefined()
    expect(pickedTool(['tool_search', loadedTool], prompt, quirk, loadedTool)).toBeUndefined()
    expect(
      pickedTool(['tool_search', loadedTool], prompt, new Set(['named-tool'] as const), 'tool_search'),
    ).toBeUndefined()

    const schema = {type: 'object', properties: {query: {type: 'string'}}, required: ['query']}
    // Messages: the result of the search's tool_use, then the loaded tool's
    const messages = (last: string, content: string) =>
      messagesAnswer(
        {
          model: 'claude-x',
          max_tokens: 100,
          tools: [
            {name: 'tool_search', input_schema: schema},
            {name: loadedTool, input_schema: schema},
          ],
          messages: [
            {role: 'user', content: prompt},
            {role: 'assistant', content: [{type: 'tool_use', id: 't1', name: last, input: {}}]},
            {role: 'user', content: [{type: 'tool_result', tool_use_id: 't1', content}]},
          ],
        },
        quirk,
      )
    expect(messages('tool_search', 'Tools loaded').tool?.name).toBe(loadedTool)
    expect(messages(loadedTool, 'issue #7')).toMatchObject({text: 'The tool answered: issue #7'})
    expect(messages(loadedTool, 'issue #7').tool).toBeUndefined()

    // Gemini: the functionResponse names its function
    const gemini = (name: string) =>
      geminiAnswer(
        {
          contents: [
            {role: 'user', parts: [{text: prompt}]},
            {role: 'model', parts: [{functionCall: {name, args: {}}}]},
            {role: 'user', parts: [{functionResponse: {name, response: {output: 'issue #7'}}}]},
          ],
          tools: [{functionDeclarations: [{name: 'tool_search'}, {name: loadedTool}]}],
        },
        quirk,
      )
    expect(gemini('tool_search').tool?.name).toBe(loadedTool)
    expect(gemini(loadedTool).tool).toBeUndefined()
    expect(gemini(loadedTool).text).toBe('The tool answered: {"output":"issue #7"}')

    // Responses: the function_call_output of the search's call
    const responses = (name: string) =>
      responsesAnswer(
        {
          model: 'gpt-x',
          tools: [
            {type: 'function', name: 'tool_search', parameters: schema},
            {type: 'function', name: loadedTool, parameters: schema},
          ],
          input: [
            {type: 'message', role: 'user', content: [{type: 'input_text', text: prompt}]},
            {type: 'function_call', call_id: 'c1', name, arguments: '{}'},
            {type: 'function_call_output', call_id: 'c1', output: 'issue #7'},
          ],
        },
        quirk,
      )
    expect(responses('tool_search').tool?.name).toBe(loadedTool)
    expect(responses(loadedTool).tool).toBeUndefined()
    expect(responses(loadedTool).text).toBe('The tool answered: issue #7')
  })

  it("text-only and no-mmproj: DeepSeek's 400 and llama.cpp's 500 for media; the line in its place answered", async () => {
    const png = 'data:image/png;base64,iVBORw0KGgo='
    const withImage = [
      {role: 'user', content: 'hi'},
      {
        role: 'user',
        content: [
          {type: 'text', text: 'look'},
          {type: 'image_url', image_url: {url: png}},
        ],
      },
    ]
    const refused = await chat({model: 'deepseek-chat+text-only', messages: withImage})
    expect(refused.status).toBe(400)
    expect(refused.json!.error.message).toMatch(
      /^Failed to deserialize the JSON body into the target type: messages\[1\]: unknown variant `image_url`, expected `text` at line 1 column \d+$/,
    )
    const file = [
      {
        role: 'user',
        content: [
          {type: 'file', file: {filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERg=='}},
        ],
      },
    ]
    const pdf = await chat({model: 'deepseek-chat+text-only', messages: file})
    expect(pdf.json!.error.message).toContain('unknown variant `file`, expected `text`')
    const llama = await chat({model: 'qwen3+no-mmproj', messages: withImage})
    expect(llama.status).toBe(500)
    expect(llama.json).toEqual({
      error: {
        code: 500,
        message:
          'image input is not supported - hint: if this is unexpected, you may need to provide the mmproj',
        type: 'server_error',
      },
    })
    // a request without images is answered as ever
    expect((await chat({model: 'qwen3+no-mmproj', messages: [{role: 'user', content: 'hi'}]})).status).toBe(
      200,
    )
    // the gateway's line in place of a tool's PDF, after the tool result: answered as the result
    const answered = await chat({
      model: 'deepseek-chat+text-only',
      messages: [
        {role: 'user', content: 'Read report.pdf'},
        {
          role: 'assistant',
          content: null,
          tool_calls: [{id: 'c1', type: 'function', function: {name: 'Read', arguments: '{}'}}],
        },
        {role: 'tool', tool_call_id: 'c1', content: 'PDF file read'},
        {role: 'user', content: '[application/pdf file not attached: deepseek-chat takes no files]'},
      ],
    })
    expect(answered.json!.choices[0].message.content).toBe(
      'The tool answered: PDF file read. I was told: [application/pdf file not attached: deepseek-chat takes no files]',
    )
  })

  it('strict-fields: 400 in the OpenAI shape naming unknown top-level fields', async () => {
    const body = {model: 'gpt-x', user: 'u', seed: 1, store: true, metadata: {}}
    const strict = await chat(body, {'x-sim-quirk': 'strict-fields'})
    expect(strict.status).toBe(400)
    expect(strict.json).toEqual({
      error: {
        message: 'Unrecognized request argument supplied: store, metadata',
        type: 'invalid_request_error',
        param: null,
        code: null,
      },
    })
    expect((await chat(body)).status).toBe(200)
    expect(
      (await chat({model: 'gpt-x', user: 'u', provider: {}}, {'x-sim-quirk': 'strict-fields'})).status,
    ).toBe(200)
  })

  it('obfuscation: every chunk ends with a padding string of its own length, the rest as without it', async () => {
    const body = {stream: true, stream_options: {include_usage: true}, tools: chatTools}
    const padded = await chat({...body, model: 'gpt-x+obfuscation'})
    const plain = await chat({...body, model: 'gpt-x'})
    const chunks = padded.text.split('\n\n').filter((b) => b && b !== 'data: [DONE]')
    // the last member of every chunk, usage chunk included, as OpenAI sends it
    for (const chunk of chunks) expect(chunk).toMatch(/,"obfuscation":"[A-Za-z0-9]{1,24}"\}$/)
    const pads = padded.events.flatMap((e) => (e.data === '[DONE]' ? [] : [e.data.obfuscation as string]))
    expect(pads).toHaveLength(chunks.length)
    expect(new Set(pads.map((p) => p.length)).size).toBeGreaterThan(3)
    // ids and times differ between two answers
    const strip = (events: Event[]) =>
      events.map((e) =>
        e.data === '[DONE]'
          ? e.data
          : JSON.stringify({...e.data, id: 'x', created: 0, obfuscation: undefined}).replace(
              /"call_[^"]*"/g,
              '"call"',
            ),
      )
    expect(strip(padded.events)).toEqual(strip(plain.events))
    expect(plain.text).not.toContain('obfuscation')
  })

  it("glm-tool-stream: a call's arguments held and sent whole unless asked tool_stream, then in pieces beside the reasoning", async () => {
    const body = {model: 'glm-5.1+glm-tool-stream', stream: true, tools: chatTools}
    const deltas = (events: Event[]) =>
      events.flatMap((e) => (e.data === '[DONE]' ? [] : [e.data.choices?.[0]?.delta ?? {}])) as Json[]
    const held = deltas((await chat(body)).events)
    expect(held.some((d) => typeof d.reasoning_content === 'string')).toBe(true)
    const heldCalls = held.filter((d) => d.tool_calls)
    // one chunk, the call whole: its index, id, name and all of its arguments
    expect(heldCalls).toHaveLength(1)
    expect(heldCalls[0].tool_calls).toEqual([
      {
        index: 0,
        id: expect.stringMatching(/^call_/),
        type: 'function',
        function: {name: 'get_weather', arguments: '{"city":"weather"}'},
      },
    ])
    const streamed = deltas((await chat({...body, tool_stream: true})).events)
    const calls = streamed.filter((d) => d.tool_calls)
    // the head beside the last piece of reasoning, then the arguments in pieces
    expect(calls[0]).toMatchObject({
      reasoning_content: expect.any(String),
      tool_calls: [{index: 0, function: {name: 'get_weather', arguments: ''}}],
    })
    expect(calls.length).toBeGreaterThan(2)
    expect(calls.map((d) => d.tool_calls[0].function.arguments).join('')).toBe('{"city":"weather"}')
  })

  it('no-terminal: the stream ends without [DONE]', async () => {
    const {events, text} = await chat({model: 'gpt-x+no-terminal', stream: true})
    expect(text).not.toContain('[DONE]')
    expect(events.at(-1)?.data.choices[0].finish_reason).toBe('stop')
  })
})

describe('messages quirks', () => {
  const body = {
    model: 'claude-x',
    max_tokens: 100,
    stream: true,
    messages: [{role: 'user', content: 'call the tool'}],
    tools: [
      {name: 'lookup', input_schema: {type: 'object'}},
      {name: 'fetch', input_schema: {type: 'object'}},
    ],
  }
  const jsonDeltas = (events: Event[]) =>
    events
      .filter((e) => e.data.delta?.type === 'input_json_delta')
      .map((e) => [e.data.index, e.data.delta.partial_json])

  it('parallel-tools: two tool_use blocks; the answer names the model without suffixes', async () => {
    const {events} = await post('/v1/messages', {...body, model: 'claude-x+parallel-tools'})
    expect(events[0].data.message.model).toBe('claude-x')
    const starts = events.filter((e) => e.event === 'content_block_start').map((e) => e.data.content_block)
    expect(starts).toMatchObject([
      {type: 'tool_use', name: 'lookup', input: {}},
      {type: 'tool_use', name: 'fetch', input: {}},
    ])
  })

  it('cut-args: input_json_delta pieces cut mid-string and inside \\"', async () => {
    const {events} = await post('/v1/messages', body, {'x-sim-quirk': 'cut-args'})
    expect(jsonDeltas(events)).toEqual(
      ['{"qu', 'ery":"said \\', '"call', ' the tool\\', '""}'].map((p) => [0, p]),
    )
  })

  it('empty-args: no input_json_delta, input {}', async () => {
    const {events} = await post('/v1/messages', {...body, model: 'claude-x+empty-args'})
    expect(jsonDeltas(events)).toEqual([])
    const {json} = await post('/v1/messages', {...body, model: 'claude-x+empty-args', stream: false})
    expect(json?.content[0]).toMatchObject({type: 'tool_use', input: {}})
  })

  it('no-terminal: message_delta is the last event, no message_stop', async () => {
    const {events} = await post('/v1/messages', {...body, model: 'claude-x+no-terminal'})
    expect(events.at(-1)?.event).toBe('message_delta')
    const normal = await post('/v1/messages', body)
    expect(normal.events.at(-1)?.event).toBe('message_stop')
  })

  it('cache-1h: half the cache write (rounded up) is a 1-hour write, by model suffix or header', async () => {
    const plain = await post('/v1/messages', {...body, stream: false})
    const write = plain.json?.usage.cache_creation_input_tokens as number
    expect(write).toBeGreaterThan(1)
    expect(plain.json?.usage.cache_creation).toEqual({
      ephemeral_5m_input_tokens: write,
      ephemeral_1h_input_tokens: 0,
    })
    const oneHour = Math.ceil(write / 2)
    const {json} = await post('/v1/messages', {...body, model: 'claude-x+cache-1h', stream: false})
    expect(json?.model).toBe('claude-x')
    expect(json?.usage).toMatchObject({
      input_tokens: plain.json?.usage.input_tokens,
      cache_creation_input_tokens: write,
      cache_read_input_tokens: plain.json?.usage.cache_read_input_tokens,
      cache_creation: {ephemeral_5m_input_tokens: write - oneHour, ephemeral_1h_input_tokens: oneHour},
    })
    // streamed: message_start carries the breakdown, message_delta the totals only (as Anthropic's)
    const {events} = await post('/v1/messages', body, {'x-sim-quirk': 'cache-1h'})
    expect(events[0].data.message.usage.cache_creation).toEqual({
      ephemeral_5m_input_tokens: write - oneHour,
      ephemeral_1h_input_tokens: oneHour,
    })
    const delta = events.find((e) => e.event === 'message_delta')
    expect(delta?.data.usage.cache_creation_input_tokens).toBe(write)
    expect(delta?.data.usage.cache_creation).toBeUndefined()
  })
})

describe('responses quirks', () => {
  const body = {
    model: 'gpt-r',
    stream: true,
    input: 'call the tool',
    tools: [
      {type: 'function', name: 'lookup', parameters: {type: 'object'}},
      {type: 'function', name: 'fetch', parameters: {type: 'object'}},
    ],
  }
  const argDeltas = (events: Event[]) =>
    events.filter((e) => e.event === 'response.function_call_arguments.delta').map((e) => e.data.delta)

  it('parallel-tools: two function_call items', async () => {
    const {json} = await post('/v1/responses', {...body, stream: false, model: 'gpt-r+parallel-tools'})
    expect(json?.model).toBe('gpt-r')
    expect(json?.output.map((i: Json) => [i.type, i.name, i.arguments])).toEqual([
      ['function_call', 'lookup', '{"query":"call the tool"}'],
      ['function_call', 'fetch', '{"query":"call the tool"}'],
    ])
  })

  it('cut-args and empty-args: argument deltas cut mid-token, or none', async () => {
    const cut = await post('/v1/responses', {...body, model: 'gpt-r+cut-args'})
    expect(argDeltas(cut.events)).toEqual(['{"qu', 'ery":"said \\', '"call', ' the tool\\', '""}'])
    const empty = await post('/v1/responses', {...body, model: 'gpt-r+empty-args'})
    expect(argDeltas(empty.events)).toEqual([])
    const done = empty.events.find((e) => e.event === 'response.output_item.done')
    expect(done?.data.item).toMatchObject({type: 'function_call', arguments: ''})
  })

  it('no-terminal: no response.completed', async () => {
    const {events} = await post('/v1/responses', {...body, model: 'gpt-r+no-terminal'})
    expect(events.map((e) => e.event)).not.toContain('response.completed')
    expect(events.at(-1)?.event).toBe('response.output_item.done')
  })

  it("prefix-cache: the same request again reads its whole prompt; the next turn reads the first's", async () => {
    const first = {
      model: 'gpt-r+prefix-cache',
      stream: false,
      instructions: `You are a prefix-cache probe. ${'Keep to the rules. '.repeat(40)}`,
      input: [{type: 'message', role: 'user', content: [{type: 'input_text', text: 'Say hi.'}]}],
    }
    const usage = async (b: Json) => (await post('/v1/responses', b)).json!.usage as Json
    const one = await usage(first)
    expect(one.input_tokens_details.cached_tokens).toBe(0)
    // (a retry of the same bytes: OpenAI reads it whole)
    const again = await usage(first)
    expect(again.input_tokens_details.cached_tokens).toBe(one.input_tokens)
    const next = await usage({
      ...first,
      input: [
        ...first.input,
        {type: 'message', role: 'assistant', content: [{type: 'output_text', text: 'Hi.'}]},
        {type: 'message', role: 'user', content: [{type: 'input_text', text: 'Again.'}]},
      ],
    })
    expect(next.input_tokens_details.cached_tokens).toBe(again.input_tokens)
    expect(next.input_tokens).toBeGreaterThan(one.input_tokens)
  })
})

describe('gemini quirks', () => {
  const body = {
    contents: [{role: 'user', parts: [{text: 'use a tool'}]}],
    tools: [{functionDeclarations: [{name: 'lookup'}, {name: 'fetch'}]}],
  }

  it('parallel-tools: two functionCall parts in one answer; empty-args: args {}', async () => {
    const {json} = await post('/v1beta/models/gemini-x+parallel-tools+empty-args:generateContent', body)
    expect(json?.modelVersion).toBe('gemini-x')
    expect(json?.candidates[0].content.parts).toEqual([
      {functionCall: {name: 'lookup', args: {}}},
      {functionCall: {name: 'fetch', args: {}}},
    ])
  })

  it('no-terminal: no chunk carries finishReason', async () => {
    const path = '/v1beta/models/gemini-x:streamGenerateContent?alt=sse'
    const {events} = await post(path, {contents: [{parts: [{text: 'x'}]}]}, {'x-sim-quirk': 'no-terminal'})
    expect(events.length).toBeGreaterThan(1)
    expect(events.every((e) => e.data.candidates[0].finishReason === undefined)).toBe(true)
    const normal = await post(path, {contents: [{parts: [{text: 'x'}]}]})
    expect(normal.events.at(-1)?.data.candidates[0].finishReason).toBe('STOP')
  })

  it("no-thinking-budget: any thinkingBudget refused in Google's words (Gemma 4), 0 and -1 included; none taken", async () => {
    const path = '/v1beta/models/gemma-4-31b-it+no-thinking-budget:generateContent'
    const config = (thinkingConfig: Json) => ({
      contents: [{parts: [{text: 'x'}]}],
      generationConfig: {thinkingConfig},
    })
    for (const thinkingBudget of [24576, 0, -1]) {
      const refused = await post(path, config({thinkingBudget, includeThoughts: true}))
      expect(refused.status).toBe(400)
      expect(refused.json).toEqual({
        error: {
          code: 400,
          message: 'Thinking budget is not supported for this model.',
          status: 'INVALID_ARGUMENT',
        },
      })
    }
    expect((await post(path, config({includeThoughts: true}))).status).toBe(200)
  })

  it("Gemma 3 refuses a system instruction in Google's words, by name and with no-system-instruction", async () => {
    const said = async (model: string, body: Json) => {
      const answer = await post(`/v1beta/models/${model}:generateContent`, body)
      return answer.status === 200 ? 200 : (answer.json as {error: {message: string}}).error.message
    }
    const withSystem = {systemInstruction: {parts: [{text: 'Be brief.'}]}, contents: [{parts: [{text: 'x'}]}]}
    expect(await said('gemma-3-27b-it', withSystem)).toBe(
      'Developer instruction is not enabled for models/gemma-3-27b-it',
    )
    expect(await said('gemma3-x+no-system-instruction', withSystem)).toBe(
      'Developer instruction is not enabled for models/gemma3-x',
    )
    expect(await said('gemma-3-27b-it', {contents: [{parts: [{text: 'Be brief.\n\nx'}]}]})).toBe(200)
    expect(await said('gemma-4-31b-it', withSystem)).toBe(200)
  })

  it('countTokens: Gemma 3 refuses a system instruction in the request it wraps, and counts one without', async () => {
    const path = '/v1beta/models/gemma-3-27b-it:countTokens'
    const request = {model: 'models/gemma-3-27b-it', contents: [{role: 'user', parts: [{text: 'x'}]}]}
    const refused = await post(path, {
      generateContentRequest: {...request, systemInstruction: {parts: [{text: 'Be brief.'}]}},
    })
    expect(refused.status).toBe(400)
    expect((refused.json as {error: {message: string}}).error.message).toBe(
      'Developer instruction is not enabled for models/gemma-3-27b-it',
    )
    const counted = await post(path, {generateContentRequest: request})
    expect(counted.status).toBe(200)
    expect((counted.json as {totalTokens: number}).totalTokens).toBeGreaterThan(0)
  })

  it("by name: Gemma 3 refuses any thinking config, Gemma 4 a budget and any level but MINIMAL and HIGH, in Google's words", async () => {
    const config = (thinkingConfig: Json) => ({
      contents: [{parts: [{text: 'x'}]}],
      generationConfig: {thinkingConfig},
    })
    const said = async (model: string, thinkingConfig: Json) => {
      const answer = await post(`/v1beta/models/${model}:generateContent`, config(thinkingConfig))
      return answer.status === 200 ? 200 : (answer.json as {error: {message: string}}).error.message
    }
    for (const thinking of [{thinkingBudget: 0}, {includeThoughts: true}, {thinkingLevel: 'HIGH'}])
      expect(await said('gemma-3-27b-it', thinking)).toBe('Thinking is not enabled for models/gemma-3-27b-it')
    expect(await said('gemma-3n-e4b-it', {includeThoughts: true})).toBe(
      'Thinking is not enabled for models/gemma-3n-e4b-it',
    )
    expect(await said('gemma3-x+no-thinking', {includeThoughts: true})).toBe(
      'Thinking is not enabled for models/gemma3-x',
    )
    expect(
      (await post('/v1beta/models/gemma-3-27b-it:generateContent', {contents: [{parts: [{text: 'x'}]}]}))
        .status,
    ).toBe(200)
    for (const level of ['LOW', 'MEDIUM'])
      expect(await said('gemma-4-31b-it', {thinkingLevel: level})).toBe(
        'Thinking level is not supported for this model.',
      )
    expect(await said('gemma-4-31b-it', {thinkingBudget: 1024})).toBe(
      'Thinking budget is not supported for this model.',
    )
    for (const level of ['MINIMAL', 'HIGH'])
      expect(await said('gemma-4-31b-it', {thinkingLevel: level, includeThoughts: true})).toBe(200)
  })

  it('thoughts-no-finish: thoughts, a usage of thoughts only, no finishReason (stream and answer)', async () => {
    const path = '/v1beta/models/gemini-3-pro:streamGenerateContent?alt=sse'
    const body = {
      contents: [{parts: [{text: 'x'}]}],
      generationConfig: {thinkingConfig: {includeThoughts: true}},
    }
    const {events} = await post(path, body, {'x-sim-quirk': 'thoughts-no-finish'})
    expect(events.every((e) => e.data.candidates[0].finishReason === undefined)).toBe(true)
    const parts = events.flatMap((e) => e.data.candidates[0].content.parts)
    expect(parts.length).toBeGreaterThan(0)
    expect(parts.every((p: Json) => p.thought === true)).toBe(true)
    const usage = events.at(-1)?.data.usageMetadata
    expect(usage.candidatesTokenCount).toBeUndefined()
    expect(usage.thoughtsTokenCount).toBeGreaterThan(0)
    expect(usage.totalTokenCount).toBe(usage.promptTokenCount + usage.thoughtsTokenCount)
    // as Gemini 2.5 streams it: each thought chunk with the running usage of thoughts, then the
    // ending chunk with no part and the final usage
    expect(events.at(-1)?.data.candidates[0].content.parts).toEqual([])
    const thoughtChunks = events.slice(0, -1)
    expect(thoughtChunks.length).toBeGreaterThan(1)
    const running = thoughtChunks.map((e) => e.data.usageMetadata.thoughtsTokenCount as number)
    expect(running.every((n, i) => n > 0 && n >= (running[i - 1] ?? 0))).toBe(true)
    expect(running.at(-1)).toBe(usage.thoughtsTokenCount)
    expect(thoughtChunks.every((e) => e.data.usageMetadata.candidatesTokenCount === undefined)).toBe(true)
    // a thinking stream that answers: its thought chunk counts the thoughts too, no candidate yet
    const answered = await post(path, body)
    const thought = answered.events.find((e) => e.data.candidates[0].content.parts[0]?.thought === true)
    expect(thought?.data.usageMetadata.thoughtsTokenCount).toBeGreaterThan(0)
    expect(thought?.data.usageMetadata.candidatesTokenCount).toBeUndefined()
    expect(answered.events.at(-1)?.data.candidates[0].finishReason).toBe('STOP')
    // with no-terminal: cut after the last thought chunk, without the ending chunk
    const cut = await post(path, body, {'x-sim-quirk': 'thoughts-no-finish,no-terminal'})
    expect(cut.events.map((e) => e.data)).toEqual(
      thoughtChunks.map((e) => ({...e.data, responseId: expect.any(String)})),
    )
    // without includeThoughts: no part at all, the same usage; the answer (not a stream) alike
    const hidden = await post(path, {contents: body.contents}, {'x-sim-quirk': 'thoughts-no-finish'})
    expect(hidden.events.flatMap((e) => e.data.candidates[0].content.parts)).toEqual([])
    expect(hidden.events.at(-1)?.data.usageMetadata.thoughtsTokenCount).toBeGreaterThan(0)
    const whole = await post('/v1beta/models/gemini-3-pro+thoughts-no-finish:generateContent', body)
    expect(whole.json?.candidates[0].finishReason).toBeUndefined()
    expect(whole.json?.candidates[0].content.parts[0].thought).toBe(true)
    expect(whole.json?.usageMetadata.candidatesTokenCount).toBeUndefined()
  })

  it('empty-stop: the first answer after a function response is STOP with no part; the same request again is whole', async () => {
    const path = '/v1beta/models/gemini-2.5-flash+empty-stop:streamGenerateContent?alt=sse'
    // (contents of this test's own, so that no other test's request was emptied before)
    const contents = (tag: string) => [
      {role: 'user', parts: [{text: `read a ${tag}`}]},
      {role: 'model', parts: [{functionCall: {name: 'read', args: {path: 'a'}}}]},
      {role: 'user', parts: [{functionResponse: {name: 'read', response: {content: 'file body'}}}]},
    ]
    const tools = [{functionDeclarations: [{name: 'read', parameters: {type: 'object'}}]}]
    const body = {contents: contents('stream'), tools}
    const first = await post(path, body)
    expect(first.events).toHaveLength(1)
    expect(first.events[0]!.data.candidates[0]).toEqual({
      content: {role: 'model'},
      finishReason: 'STOP',
      index: 0,
    })
    expect(first.events[0]!.data.usageMetadata.candidatesTokenCount).toBeUndefined()
    const again = await post(path, body)
    const parts = again.events.flatMap((e) => e.data.candidates[0].content.parts)
    expect(parts.some((p: Json) => typeof p.text === 'string' && p.text.length > 0)).toBe(true)
    expect(again.events.at(-1)?.data.candidates[0].finishReason).toBe('STOP')
    // a first turn (no function response last) is answered
    const plain = await post(path, {contents: [{role: 'user', parts: [{text: 'hi'}]}]})
    expect(plain.events.flatMap((e) => e.data.candidates[0].content.parts).length).toBeGreaterThan(0)
    // the answer (not a stream) alike
    const whole = '/v1beta/models/gemini-2.5-flash+empty-stop:generateContent'
    const json = {contents: contents('json'), tools}
    expect((await post(whole, json)).json?.candidates[0]).toEqual({
      content: {role: 'model'},
      finishReason: 'STOP',
      index: 0,
    })
    expect((await post(whole, json)).json?.candidates[0].content.parts.length).toBeGreaterThan(0)
  })

  it('empty-stop-thought: a thought, then STOP on a bare signature; whole when sent again', async () => {
    const path = '/v1beta/models/gemini-2.5-flash+empty-stop-thought:streamGenerateContent?alt=sse'
    const body = {
      contents: [
        {role: 'user', parts: [{text: 'read b'}]},
        // (signed: Gemini 2.5 thinking refuses its call back without one)
        {
          role: 'model',
          parts: [
            {
              functionCall: {name: 'read', args: {path: 'b'}},
              thoughtSignature: 'skip_thought_signature_validator',
            },
          ],
        },
        {role: 'user', parts: [{functionResponse: {name: 'read', response: {content: 'b body'}}}]},
      ],
      generationConfig: {thinkingConfig: {includeThoughts: true}},
    }
    const first = await post(path, body)
    expect(first.events.map((e) => e.data.candidates[0].content.parts)).toEqual([
      [{text: expect.any(String), thought: true}],
      [{text: '', thoughtSignature: expect.any(String)}],
    ])
    expect(first.events.at(-1)?.data.candidates[0].finishReason).toBe('STOP')
    expect(first.events.at(-1)?.data.usageMetadata.thoughtsTokenCount).toBeGreaterThan(0)
    const again = await post(path, body)
    expect(
      again.events.flatMap((e) => e.data.candidates[0].content.parts).some((p: Json) => p.text && !p.thought),
    ).toBe(true)
  })
})

describe('Kimi quirks (chat)', () => {
  it('kimi-temperature: a temperature other than 1 refused in its words, no param; 1 or none taken', async () => {
    const refused = await chat({model: 'kimi-k2.5+kimi-temperature', temperature: 0})
    expect(refused.status).toBe(400)
    expect(refused.json).toEqual({
      error: {
        message: 'invalid temperature: only 1 is allowed for this model',
        type: 'invalid_request_error',
      },
    })
    expect((await chat({model: 'kimi-k2.5+kimi-temperature', temperature: 1})).status).toBe(200)
    expect((await chat({model: 'kimi-k2.5+kimi-temperature'})).status).toBe(200)
  })

  it('kimi-always-thinks (and a kimi-k3 name): thinking off, an effort but low, high, max, a forced choice refused', async () => {
    const words = async (body: Json) => {
      const res = await chat(body)
      return res.status === 200 ? 200 : [res.status, res.json?.error.message, Object.keys(res.json?.error)]
    }
    const keys = ['message', 'type']
    for (const model of [
      'kimi-k3',
      'kimi-k3.1-pro-highspeed',
      'sim-mini+kimi-always-thinks',
      'kimi-for-coding+kimi-always-thinks',
    ]) {
      expect(await words({model, thinking: {type: 'disabled'}}), model).toEqual([
        400,
        'invalid thinking: only type=enabled is allowed for this model',
        keys,
      ])
      // (Kimi Code's words, liliMozi/openhanako #2092)
      for (const effort of ['none', 'off', 'medium', 'xhigh'])
        expect(await words({model, reasoning_effort: effort}), `${model} ${effort}`).toEqual([
          400,
          `Unsupported value: 'reasoning_effort' does not support '${effort}' with this model. Supported values are: 'low', 'high', and 'max'.`,
          keys,
        ])
      expect(await words({model, tools: chatTools, tool_choice: 'required'}), model).toEqual([
        400,
        "tool_choice 'required' is incompatible with thinking enabled",
        keys,
      ])
      for (const effort of ['low', 'high', 'max', undefined])
        expect(await words({model, reasoning_effort: effort}), `${model} ${effort}`).toBe(200)
      expect(await words({model, tools: chatTools, tool_choice: 'auto'}), model).toBe(200)
    }
    // K3 Fast, K2.6: as before
    expect(await words({model: 'kimi-k3-fast', thinking: {type: 'disabled'}})).toBe(200)
    expect(await words({model: 'kimi-k2.6', thinking: {type: 'disabled'}})).toBe(200)
  })

  it('reasoning-content-required: a tool call turn without reasoning_content refused in its words; an empty one taken', async () => {
    const turn = (extra: Json) => [
      {role: 'user', content: 'weather'},
      {
        role: 'assistant',
        content: null,
        ...extra,
        tool_calls: [{id: 'c1', type: 'function', function: {name: 'get_weather', arguments: '{}'}}],
      },
      {role: 'tool', tool_call_id: 'c1', content: 'sunny'},
    ]
    const refused = await chat({model: 'kimi-k2.5+reasoning-content-required', messages: turn({})})
    expect(refused.status).toBe(400)
    expect(refused.json).toEqual({
      error: {
        message:
          'thinking is enabled but reasoning_content is missing in assistant tool call message at index 1',
        type: 'invalid_request_error',
      },
    })
    const empty = await chat({
      model: 'kimi-k2.5+reasoning-content-required',
      messages: turn({reasoning_content: ''}),
    })
    expect(empty.status).toBe(200)
    // its own answers carry no reasoning (a Kimi turn that streamed none before its call)
    const called = await chat({model: 'kimi-k2.5+reasoning-content-required', tools: chatTools})
    expect(called.json!.choices[0].message.tool_calls).toHaveLength(1)
    expect(called.json!.choices[0].message).not.toHaveProperty('reasoning_content')
  })

  it("reasoning-content-required in DeepSeek V4's words and body for a deepseek-v4 model; an empty one taken", async () => {
    const messages = [
      {role: 'user', content: 'weather'},
      {
        role: 'assistant',
        content: null,
        tool_calls: [{id: 'c1', type: 'function', function: {name: 'get_weather', arguments: '{}'}}],
      },
      {role: 'tool', tool_call_id: 'c1', content: 'sunny'},
    ]
    const refused = await chat({model: 'deepseek-v4-flash+reasoning-content-required', messages})
    expect(refused.status).toBe(400)
    expect(refused.json).toEqual({
      error: {
        message: 'The `reasoning_content` in the thinking mode must be passed back to the API.',
        type: 'invalid_request_error',
        param: null,
        code: 'invalid_request_error',
      },
    })
    const empty = messages.map((m, i) => (i === 1 ? {...m, reasoning_content: ''} : m))
    expect(
      (await chat({model: 'deepseek-v4-flash+reasoning-content-required', messages: empty})).status,
    ).toBe(200)

    // the text that ends the tool loop wants it too (DeepSeek V4 only): refused without, taken empty
    const ended = [...empty, {role: 'assistant', content: 'Sunny.'}, {role: 'user', content: 'thanks'}]
    for (const model of ['deepseek-v4-flash', 'kimi-k2.5'])
      expect((await chat({model: `${model}+reasoning-content-required`, messages: ended})).status).toBe(
        model === 'kimi-k2.5' ? 200 : 400,
      )
    const whole = ended.map((m, i) => (i === 3 ? {...m, reasoning_content: ''} : m))
    expect(
      (await chat({model: 'deepseek-v4-flash+reasoning-content-required', messages: whole})).status,
    ).toBe(200)
    // a text turn of a conversation without tools is no tool loop's: taken as it is
    const plain = [
      {role: 'user', content: 'hi'},
      {role: 'assistant', content: 'Hello.'},
      {role: 'user', content: 'weather'},
    ]
    expect(
      (await chat({model: 'deepseek-v4-flash+reasoning-content-required', messages: plain})).status,
    ).toBe(200)
  })

  it("tool-choice-auto-only in a thinking-mode server's words by the model's name, taken with thinking off", async () => {
    const forced = (model: string, extra: Json = {}) =>
      chat({model: `${model}+tool-choice-auto-only`, tools: chatTools, tool_choice: 'required', ...extra})
    const named = {tool_choice: {type: 'function', function: {name: 'get_weather'}}}
    for (const [model, extra, message, code] of [
      ['deepseek-v4-flash', {}, 'Thinking mode does not support this tool_choice', 'invalid_request_error'],
      [
        'deepseek-reasoner',
        {},
        'deepseek-reasoner does not support this tool_choice',
        'invalid_request_error',
      ],
      ['kimi-k2.6', {}, "tool_choice 'required' is incompatible with thinking enabled", null],
      ['kimi-k2.6', named, "tool_choice 'specified' is incompatible with thinking enabled", null],
      [
        'qwen3-max',
        {},
        '<400> InternalError.Algo.InvalidParameter: The tool_choice parameter does not support being set to required or object in thinking mode',
        'invalid_parameter_error',
      ],
    ] as const) {
      const refused = await forced(model, extra)
      expect([model, refused.status]).toEqual([model, 400])
      expect(refused.json!.error).toEqual({message, type: 'invalid_request_error', param: null, code})
    }
    // Z.AI's words for any other name; thinking off takes the forced choice
    expect((await forced('glm-4.6')).json!.error.message).toBe('Tool choice must be auto')
    expect((await forced('deepseek-v4-flash', {thinking: {type: 'disabled'}})).status).toBe(200)
    expect((await forced('kimi-k2.6', {thinking: {type: 'disabled'}})).status).toBe(200)
    expect((await forced('qwen3-max', {enable_thinking: false})).status).toBe(200)
    expect((await forced('deepseek-v4-flash', {tool_choice: 'auto'})).status).toBe(200)
    // the function a forced choice names is the one called (the first tool otherwise)
    const second = await forced('deepseek-v4-flash', {
      thinking: {type: 'disabled'},
      tools: [...chatTools, {type: 'function', function: {name: 'answer', parameters: {type: 'object'}}}],
      tool_choice: {type: 'function', function: {name: 'answer'}},
    })
    expect(second.json!.choices[0].message.tool_calls.map((c: Json) => c.function.name)).toEqual(['answer'])
  })

  it("usage-in-choice: Moonshot's usage on the finish chunk's choice, cache hits beside the counts", async () => {
    const messages = [
      {role: 'user', content: 'weather'},
      {role: 'assistant', content: 'Sunny.'},
      {role: 'user', content: 'And tomorrow?'},
    ]
    await chat({model: 'kimi-k2.5+usage-in-choice', messages: messages.slice(0, 1)})
    const {events} = await chat({model: 'kimi-k2.5+usage-in-choice', stream: true, messages})
    expect(events.at(-1)?.data).toBe('[DONE]')
    const last = events.at(-2)!.data
    expect(last).not.toHaveProperty('usage')
    expect(last.choices[0].finish_reason).toBe('stop')
    expect(Object.keys(last.choices[0].usage)).toEqual([
      'prompt_tokens',
      'completion_tokens',
      'total_tokens',
      'cached_tokens',
    ])
    expect(last.choices[0].usage.cached_tokens).toBeGreaterThan(0)
    expect(events.slice(0, -2).every((e) => !('usage' in e.data) && !('usage' in e.data.choices[0]))).toBe(
      true,
    )
    const whole = await chat({model: 'kimi-k2.5+usage-in-choice', messages})
    expect(Object.keys(whole.json!.usage)).toEqual([
      'prompt_tokens',
      'completion_tokens',
      'total_tokens',
      'cached_tokens',
    ])
  })

  it('think-tags: the reasoning at the start of the content in <think> tags, both tags cut in a stream', async () => {
    const {json} = await chat({model: 'gpt-x+think-tags'})
    const message = json!.choices[0].message
    expect(message.content).toMatch(/^<think>\nLet me think about "weather".*\n<\/think>\n\nHello from /s)
    expect(message).not.toHaveProperty('reasoning_content')
    const {events} = await chat({model: 'gpt-x+think-tags', stream: true})
    const pieces = events.slice(1, -2).map((e) => e.data.choices[0].delta.content as string)
    expect(pieces.slice(0, 2)).toEqual(['<thi', 'nk>\n'])
    expect(pieces).toContain('\n</th')
    expect(pieces.join('')).toBe(message.content)
    const called = await chat({model: 'gpt-x+think-tags', tools: chatTools})
    expect(called.json!.choices[0].message.content).toMatch(/^<think>\n[\s\S]*\n<\/think>\n\n$/)
    // no reasoning_content is asked back (DeepSeek's check is off)
    const turn2 = await chat({
      model: 'gpt-x+think-tags',
      messages: [
        {role: 'user', content: 'weather'},
        {role: 'assistant', content: null, tool_calls: called.json!.choices[0].message.tool_calls},
        {role: 'tool', tool_call_id: called.json!.choices[0].message.tool_calls[0].id, content: 'sunny'},
      ],
    })
    expect(turn2.status).toBe(200)
  })

  it('think-open-in-prompt: the reasoning, then only </think> (cut in a stream), then the text', async () => {
    const {json} = await chat({model: 'gpt-x+think-open-in-prompt'})
    const message = json!.choices[0].message
    expect(message.content).toMatch(/^Let me think about "weather".*\n<\/think>\n\nHello from /s)
    expect(message.content).not.toContain('<think>')
    expect(message).not.toHaveProperty('reasoning_content')
    const {events} = await chat({model: 'gpt-x+think-open-in-prompt', stream: true})
    const pieces = events.slice(1, -2).map((e) => e.data.choices[0].delta.content as string)
    expect(pieces).toContain('\n</th')
    expect(pieces).toContain('ink>\n\n')
    expect(pieces.join('')).toBe(message.content)
    // a turn its template did not open thinking for: the text alone
    const plain = await chat({
      model: 'gpt-x+think-open-in-prompt',
      messages: [{role: 'user', content: '[no-think] weather'}],
    })
    expect(plain.json!.choices[0].message.content).toMatch(/^Hello from /)
  })

  it('mistral-thinking: content as thinking and text chunks; a stream mixes chunks and strings', async () => {
    const {json} = await chat({model: 'magistral-medium-latest+mistral-thinking'})
    const [thinking, text, ...rest] = json!.choices[0].message.content
    expect(thinking).toEqual({
      type: 'thinking',
      thinking: [{type: 'text', text: expect.stringMatching(/^Let me think about "weather"/)}],
      closed: true,
    })
    expect(text).toEqual({type: 'text', text: expect.stringMatching(/^Hello from /)})
    expect(rest).toEqual([])
    const {events} = await chat({model: 'magistral-medium-latest+mistral-thinking', stream: true})
    const contents = events.slice(1, -2).map((e) => e.data.choices[0].delta.content)
    const thoughts = contents.filter((c) => Array.isArray(c) && c[0].type === 'thinking')
    expect(thoughts.map((c) => c[0].thinking[0].text).join('')).toBe(thinking.thinking[0].text)
    const texts = contents.slice(thoughts.length)
    expect(texts[0]).toEqual([{type: 'text', text: expect.any(String)}])
    expect(texts.slice(1).every((c) => typeof c === 'string')).toBe(true)
    expect(texts[0][0].text + texts.slice(1).join('')).toBe(text.text)
  })

  it("object-args: the arguments as a JSON object, whole on the call's first chunk, and in the JSON answer", async () => {
    const whole = await chat({model: 'gpt-x+object-args', tools: chatTools})
    const call = whole.json!.choices[0].message.tool_calls[0]
    expect(call.function.arguments).toEqual({city: expect.any(String)})
    const {events} = await chat({model: 'gpt-x+object-args', tools: chatTools, stream: true})
    const deltas = toolDeltas(events)
    expect(deltas).toHaveLength(1)
    expect(deltas[0]).toMatchObject({index: 0, id: expect.any(String), function: {name: 'get_weather'}})
    expect(deltas[0].function.arguments).toEqual(call.function.arguments)
  })
})

describe('Gemini 3 through a chat server (chat)', () => {
  const turn2 = (assistant: Json) => [
    {role: 'user', content: 'weather'},
    assistant,
    {role: 'tool', tool_call_id: assistant.tool_calls[0].id, content: 'sunny'},
  ]
  const SKIP = 'skip_thought_signature_validator'

  it("reasoning-details: OpenRouter's details beside the reasoning, the call's signature in them; a turn without them refused in its words", async () => {
    const model = 'google/gemini-3-pro-preview+reasoning-details'
    const {json} = await chat({model, tools: chatTools})
    const message = json!.choices[0].message
    const call = message.tool_calls[0]
    expect(message.reasoning).toMatch(/^Let me think/)
    expect(message.reasoning_details).toEqual([
      {type: 'reasoning.text', text: message.reasoning, format: 'google-gemini-v1', index: 0},
      {
        type: 'reasoning.encrypted',
        data: expect.any(String),
        id: call.id,
        format: 'google-gemini-v1',
        index: 1,
      },
    ])
    // a stream: the text in pieces at index 0, the signature beside the call's first delta
    const {events} = await chat({model, tools: chatTools, stream: true})
    const deltas = events.filter((e) => e.data !== '[DONE]').map((e) => e.data.choices[0]?.delta ?? {})
    const pieces = deltas.flatMap((d) => d.reasoning_details ?? [])
    expect(pieces.filter((p) => p.type === 'reasoning.text').every((p) => p.index === 0)).toBe(true)
    const first = deltas.find((d) => d.tool_calls)!
    expect(first.reasoning_details).toEqual([{...message.reasoning_details[1], id: first.tool_calls[0].id}])

    expect((await chat({model, messages: turn2(message)})).status).toBe(200)
    const skipped = {...message, reasoning_details: [{type: 'reasoning.encrypted', data: SKIP, id: call.id}]}
    expect((await chat({model, messages: turn2(skipped)})).status).toBe(200)
    const {reasoning_details: _, ...without} = message
    const refused = await chat({model, messages: turn2(without)})
    expect(refused.status).toBe(400)
    expect(refused.json!.error.message).toBe('Provider returned error')
    expect(refused.json!.error.metadata.raw).toMatch(
      /^Gemini models require OpenRouter reasoning details to be preserved in each request\. [\s\S]*Function call is missing a thought_signature in functionCall parts\. [\s\S]*position 2\./,
    )
    const forged = {...message, reasoning_details: [{...message.reasoning_details[1], data: 'forged'}]}
    const corrupted = await chat({model, messages: turn2(forged)})
    expect(corrupted.status).toBe(400)
    expect(corrupted.json!.error.metadata.raw).toContain('Corrupted thought signature.')
  })

  it("extra-content: Google's signature on the call (its first delta in a stream); a turn without it refused in its words", async () => {
    const model = 'gemini-3-flash-preview+extra-content'
    const {json} = await chat({model, tools: chatTools})
    const message = json!.choices[0].message
    expect(message.tool_calls[0].extra_content).toEqual({google: {thought_signature: expect.any(String)}})
    const {events} = await chat({model, tools: chatTools, stream: true})
    expect(toolDeltas(events)[0].extra_content).toEqual({google: {thought_signature: expect.any(String)}})

    expect((await chat({model, messages: turn2(message)})).status).toBe(200)
    const {extra_content: _, ...bare} = message.tool_calls[0]
    const refused = await chat({model, messages: turn2({...message, tool_calls: [bare]})})
    expect(refused.status).toBe(400)
    expect(refused.json).toEqual({
      error: {
        code: 400,
        message: expect.stringMatching(
          /^Function call is missing a thought_signature in functionCall parts\./,
        ),
        status: 'INVALID_ARGUMENT',
      },
    })
    const skipped = {...bare, extra_content: {google: {thought_signature: SKIP}}}
    expect((await chat({model, messages: turn2({...message, tool_calls: [skipped]})})).status).toBe(200)
    // an earlier turn is not checked (only the current one, as Gemini does)
    const older = [
      ...turn2({...message, tool_calls: [bare]}),
      {role: 'assistant', content: 'ok'},
      {role: 'user', content: 'more'},
    ]
    expect((await chat({model, messages: older})).status).toBe(200)
  })
})

describe("Gemini's schema subset and Vertex AI's call ids", () => {
  const schema = {
    $schema: 'http://json-schema.org/draft-07/schema#',
    type: 'object',
    properties: {
      command: {type: 'string'},
      timeout: {type: 'number', exclusiveMinimum: 0},
      // a property called const: a name, not a keyword
      const: {type: 'string'},
    },
    additionalProperties: false,
  }
  const lines = [
    `Invalid JSON payload received. Unknown name "$schema" at 'tools[0].function_declarations[1].parameters': Cannot find field.`,
    `Invalid JSON payload received. Unknown name "exclusiveMinimum" at 'tools[0].function_declarations[1].parameters.properties[1].value': Cannot find field.`,
    `Invalid JSON payload received. Unknown name "additionalProperties" at 'tools[0].function_declarations[1].parameters': Cannot find field.`,
  ]

  it("gemini-schema on chat: Google's OpenAI-compatible endpoint refuses the keywords, its bodies in a list", async () => {
    const tools = [chatTools[0], {type: 'function', function: {name: 'Bash', parameters: schema}}]
    const refused = await chat({model: 'gemini-2.5-flash+gemini-schema', tools})
    expect(refused.status).toBe(400)
    expect(refused.json).toEqual([
      {error: {code: 400, message: lines.join('\n'), status: 'INVALID_ARGUMENT'}},
    ])
    const plain = {type: 'object', properties: {command: {type: 'string'}, const: {type: 'string'}}}
    const taken = await chat({
      model: 'gemini-2.5-flash+gemini-schema',
      tools: [chatTools[0], {type: 'function', function: {name: 'Bash', parameters: plain}}],
    })
    expect(taken.status).toBe(200)
    // without the quirk: taken as it is
    expect((await chat({model: 'gemini-2.5-flash', tools})).status).toBe(200)
  })

  it('gemini-schema: a list of types (or a tuple of items) refused as Google words it; one type with nullable taken', async () => {
    const listed = {
      type: 'object',
      properties: {
        path: {type: 'string'},
        limit: {type: ['integer', 'null']},
        pair: {type: 'array', items: [{type: 'string'}]},
      },
    }
    const refused = await chat({
      model: 'gemini-2.5-flash+gemini-schema',
      tools: [{type: 'function', function: {name: 'Read', parameters: listed}}],
    })
    expect(refused.status).toBe(400)
    expect(refused.json).toEqual([
      {
        error: {
          code: 400,
          message: [
            `Invalid JSON payload received. Unknown name "type" at 'tools[0].function_declarations[0].parameters.properties[1].value': Proto field is not repeating, cannot start list.`,
            `Invalid JSON payload received. Unknown name "items" at 'tools[0].function_declarations[0].parameters.properties[2].value': Proto field is not repeating, cannot start list.`,
          ].join('\n'),
          status: 'INVALID_ARGUMENT',
        },
      },
    ])
    const one = {
      type: 'object',
      properties: {
        path: {type: 'string'},
        limit: {type: 'integer', nullable: true},
        pair: {type: 'array', items: {type: 'string'}},
      },
    }
    const taken = await chat({
      model: 'gemini-2.5-flash+gemini-schema',
      tools: [{type: 'function', function: {name: 'Read', parameters: one}}],
    })
    expect(taken.status).toBe(200)
  })

  const contents = (id: boolean) => [
    {role: 'user', parts: [{text: 'list'}]},
    {role: 'model', parts: [{functionCall: {name: 'ls', args: {}, ...(id ? {id: 'c1'} : {})}}]},
    {
      role: 'user',
      parts: [{functionResponse: {name: 'ls', response: {output: 'a'}, ...(id ? {id: 'c1'} : {})}}],
    },
  ]
  const tools = [{functionDeclarations: [{name: 'ls', parametersJsonSchema: {type: 'object'}}]}]

  it("gemini-schema and vertex-no-ids on Gemini: the API's error body, one line each", async () => {
    const path = (quirks: string) => `/v1beta/models/gemini-2.5-pro${quirks}:generateContent`
    const declarations = [{name: 'ls'}, {name: 'Bash', parametersJsonSchema: schema}]
    const refused = await post(path('+gemini-schema'), {
      contents: contents(false),
      tools: [{functionDeclarations: declarations}],
    })
    expect(refused.status).toBe(400)
    expect(refused.json).toMatchObject({error: {code: 400, message: lines.join('\n')}})

    const ids = await post(path('+vertex-no-ids'), {contents: contents(true), tools})
    expect(ids.status).toBe(400)
    expect(ids.json).toMatchObject({
      error: {
        code: 400,
        message: [
          `Invalid JSON payload received. Unknown name "id" at 'contents[1].parts[0].function_call': Cannot find field.`,
          `Invalid JSON payload received. Unknown name "id" at 'contents[2].parts[0].function_response': Cannot find field.`,
        ].join('\n'),
      },
    })
    const taken = await post(path('+vertex-no-ids'), {contents: contents(false), tools})
    expect(taken.status).toBe(200)
    expect(taken.json!.candidates[0].content.parts[0].text).toMatch(/^The tool answered: /)
    expect((await post(path(''), {contents: contents(true), tools})).status).toBe(200)
  })
})

describe('thinking and efforts refused in the servers’ words', () => {
  it("ollama-no-think and ollama-think-value: Ollama's 400 for an effort, none without one", async () => {
    const noThink = await chat({model: 'sim-mini+ollama-no-think', reasoning_effort: 'high'})
    expect([noThink.status, noThink.json]).toEqual([
      400,
      {
        error: {
          message: '"sim-mini" does not support thinking',
          type: 'invalid_request_error',
          param: null,
          code: null,
        },
      },
    ])
    const level = await chat({model: 'sim-mini+ollama-think-value', reasoning_effort: 'medium'})
    expect([level.status, level.json!.error.message, level.json!.error.type]).toEqual([
      400,
      'think value "medium" is not supported for this model',
      'api_error',
    ])
    expect((await chat({model: 'sim-mini+ollama-no-think'})).status).toBe(200)
  })

  it("the same on Ollama's Anthropic endpoint: thinking enabled, or an effort it reads as a level", async () => {
    const messages = (body: Json) =>
      post('/v1/messages', {max_tokens: 64, messages: [{role: 'user', content: 'hi'}], ...body})
    const enabled = await messages({
      model: 'llama3.1:8b+ollama-no-think',
      thinking: {type: 'enabled', budget_tokens: 2048},
    })
    expect(enabled.status).toBe(400)
    expect(enabled.json).toMatchObject({
      type: 'error',
      error: {type: 'invalid_request_error', message: '"llama3.1:8b" does not support thinking'},
    })
    const effort = {
      model: 'llama3.1:8b+ollama-no-think',
      thinking: {type: 'adaptive'},
      output_config: {effort: 'xhigh'},
    }
    expect((await messages(effort)).status).toBe(400)
    const level = await messages({...effort, model: 'qwen3:8b+ollama-think-value'})
    expect(level.json!.error.message).toBe('think value "high" is not supported for this model')
    // adaptive alone, thinking disabled, or neither: what such a model takes
    for (const body of [
      {thinking: {type: 'adaptive'}},
      {thinking: {type: 'disabled'}, output_config: {effort: 'high'}},
      {},
    ])
      expect((await messages({model: 'llama3.1:8b+ollama-no-think', ...body})).status).toBe(200)
  })

  it("deepseek-effort-off: DeepSeek's Anthropic endpoint refuses an effort beside thinking disabled, in its body", async () => {
    const messages = (body: Json) =>
      post('/v1/messages', {
        model: 'deepseek-v4-pro+deepseek-effort-off',
        max_tokens: 64,
        messages: [{role: 'user', content: 'hi'}],
        ...body,
      })
    const refused = await messages({thinking: {type: 'disabled'}, output_config: {effort: 'max'}})
    expect(refused.status).toBe(400)
    expect(refused.json).toEqual({
      error: {
        message: 'thinking options type cannot be disabled when reasoning_effort is set',
        type: 'invalid_request_error',
        param: null,
        code: 'invalid_request_error',
      },
    })
    // thinking disabled alone, the effort with thinking: taken
    for (const body of [
      {thinking: {type: 'disabled'}},
      {thinking: {type: 'adaptive'}, output_config: {effort: 'max'}},
      {output_config: {effort: 'high'}},
    ])
      expect((await messages(body)).status).toBe(200)
  })

  it("reasoning-content-required on the Messages endpoint: DeepSeek's and Kimi's refusal of a tool call turn without thinking; an empty unsigned block taken by DeepSeek", async () => {
    const loop = (first: Json[]) => [
      {role: 'user', content: 'list the files'},
      {role: 'assistant', content: [...first, {type: 'tool_use', id: 'toolu_1', name: 'Bash', input: {}}]},
      {role: 'user', content: [{type: 'tool_result', tool_use_id: 'toolu_1', content: 'a.txt'}]},
    ]
    const messages = (model: string, first: Json[], body: Json = {}) =>
      post('/v1/messages', {
        model: `${model}+reasoning-content-required`,
        max_tokens: 64,
        messages: loop(first),
        ...body,
      })
    const deepseek = await messages('deepseek-v4-pro', [])
    expect(deepseek.status).toBe(400)
    expect(deepseek.json).toEqual({
      error: {
        message: 'The `content[].thinking` in the thinking mode must be passed back to the API.',
        type: 'invalid_request_error',
        param: null,
        code: 'invalid_request_error',
      },
    })
    const kimi = await messages('kimi-k2.6', [], {thinking: {type: 'adaptive'}})
    expect(kimi.status).toBe(400)
    expect(kimi.json).toEqual({
      type: 'error',
      error: {
        type: 'invalid_request_error',
        message:
          'thinking is enabled but reasoning_content is missing in assistant tool call message at index 1',
      },
    })
    // an empty unsigned block (no signature verified), or thinking off: taken
    const empty = [{type: 'thinking', thinking: '', signature: ''}]
    expect((await messages('deepseek-v4-pro', empty)).status).toBe(200)
    expect((await messages('deepseek-v4-pro', [], {thinking: {type: 'disabled'}})).status).toBe(200)
    expect((await messages('kimi-k2.6', [], {thinking: {type: 'disabled'}})).status).toBe(200)
  })

  it("tool-choice-auto-only on the Messages endpoint: DeepSeek's and Kimi's refusal of a forced choice while thinking, the forced tool called with thinking disabled", async () => {
    const tools = [
      {name: 'Bash', input_schema: {type: 'object', properties: {command: {type: 'string'}}}},
      {name: 'StructuredOutput', input_schema: {type: 'object', properties: {summary: {type: 'string'}}}},
    ]
    const messages = (model: string, body: Json) =>
      post('/v1/messages', {
        model: `${model}+tool-choice-auto-only`,
        max_tokens: 64,
        messages: [{role: 'user', content: 'hi'}],
        tools,
        tool_choice: {type: 'tool', name: 'StructuredOutput'},
        ...body,
      })
    // DeepSeek's words in its OpenAI-shaped body, for V4 too (thinking left out: on by default)
    for (const body of [{}, {thinking: {type: 'adaptive'}}])
      expect((await messages('deepseek-v4-pro', body)).json).toEqual({
        error: {
          message: 'deepseek-reasoner does not support this tool_choice',
          type: 'invalid_request_error',
          param: null,
          code: 'invalid_request_error',
        },
      })
    // Kimi's in Anthropic's body, `required` for any
    const kimi = await messages('kimi-k2.6', {tool_choice: {type: 'any'}})
    expect([kimi.status, kimi.json!.error.message]).toEqual([
      400,
      "tool_choice 'required' is incompatible with thinking enabled",
    ])
    // thinking disabled: the forced tool called; a choice that forces nothing: taken
    const taken = await messages('deepseek-v4-pro', {thinking: {type: 'disabled'}})
    expect(taken.status).toBe(200)
    expect(taken.json!.content).toEqual([
      expect.objectContaining({type: 'tool_use', name: 'StructuredOutput'}),
    ])
    expect((await messages('kimi-k2.6', {tool_choice: {type: 'auto'}})).status).toBe(200)
  })

  it("kimi-enabled-only on the Messages endpoint: thinking off, a forced choice and Anthropic's budget rules refused in Anthropic's body", async () => {
    const messages = async (body: Json) => {
      const res = await post('/v1/messages', {
        model: 'kimi-k2.7-code+kimi-enabled-only',
        max_tokens: 512,
        messages: [{role: 'user', content: 'hi'}],
        ...body,
      })
      return res.status === 200 ? 200 : [res.status, res.json!.type, res.json!.error]
    }
    const refused = (message: string) => [400, 'error', {type: 'invalid_request_error', message}]
    for (const type of ['disabled', 'between_tools'])
      expect(await messages({thinking: {type}})).toEqual(
        refused('invalid thinking: only type=enabled is allowed for this model'),
      )
    const tools = [{name: 'T', input_schema: {type: 'object'}}]
    for (const [choice, word] of [
      [{type: 'any'}, 'required'],
      [{type: 'tool', name: 'T'}, 'specified'],
    ] as const)
      expect(
        await messages({
          tools,
          tool_choice: choice,
          thinking: {type: 'enabled', budget_tokens: 1024},
          max_tokens: 2048,
        }),
      ).toEqual(refused(`tool_choice '${word}' is incompatible with thinking enabled`))
    expect(await messages({thinking: {type: 'enabled', budget_tokens: 512}})).toEqual(
      refused('thinking.enabled.budget_tokens: Input should be greater than or equal to 1024'),
    )
    expect(await messages({thinking: {type: 'enabled', budget_tokens: 1024}})).toEqual(
      refused('`max_tokens` must be greater than `thinking.budget_tokens`'),
    )
    // taken: no thinking, adaptive, enabled within the rules, a choice that forces nothing
    for (const body of [
      {},
      {thinking: {type: 'adaptive'}},
      {thinking: {type: 'enabled', budget_tokens: 1024}, max_tokens: 1536},
      {tools, tool_choice: {type: 'auto'}},
    ])
      expect(await messages(body)).toBe(200)
    // not by the name alone (Kimi Code's K3 takes disabled)
    const byName = await post('/v1/messages', {
      model: 'kimi-k2.7-code',
      max_tokens: 64,
      messages: [{role: 'user', content: 'hi'}],
      thinking: {type: 'disabled'},
    })
    expect(byName.status).toBe(200)
  })

  it('tools-effort-none (gpt-5.6) takes tools only with none; tools-no-effort (gpt-5.4) only without an effort', async () => {
    const refused = await chat({model: 'sim-mini+tools-effort-none', tools: chatTools})
    expect(refused.status).toBe(400)
    expect(refused.json!.error).toEqual({
      message:
        "Function tools with reasoning_effort are not supported for sim-mini in /v1/chat/completions. To use function tools, use /v1/responses or set reasoning_effort to 'none'.",
      type: 'invalid_request_error',
      param: 'reasoning_effort',
      code: null,
    })
    expect(
      (await chat({model: 'sim-mini+tools-effort-none', tools: chatTools, reasoning_effort: 'none'})).status,
    ).toBe(200)
    expect((await chat({model: 'sim-mini+tools-effort-none', reasoning_effort: 'high'})).status).toBe(200)
    const older = await chat({model: 'sim-mini+tools-no-effort', tools: chatTools, reasoning_effort: 'low'})
    expect(older.json!.error.message).toBe(
      'Function tools with reasoning_effort are not supported for sim-mini in /v1/chat/completions. Please use /v1/responses instead.',
    )
    expect((await chat({model: 'sim-mini+tools-no-effort', tools: chatTools})).status).toBe(200)
  })

  it("xai-params: xAI's {code, error} for reasoningEffort (chat and Responses) and stop", async () => {
    const effort = await chat({model: 'grok-4-latest+xai-params', reasoning_effort: 'high'})
    expect([effort.status, effort.json]).toEqual([
      400,
      {
        code: 'Client specified an invalid argument',
        error: 'Model grok-4-latest does not support parameter reasoningEffort.',
      },
    ])
    expect((await chat({model: 'grok-4-latest+xai-params', stop: ['x']})).json!.error).toBe(
      'Model grok-4-latest does not support parameter stop.',
    )
    const responses = await post('/v1/responses', {
      model: 'grok-4+xai-params',
      input: 'hi',
      reasoning: {effort: 'low', summary: 'auto'},
    })
    expect([responses.status, responses.json!.error]).toEqual([
      400,
      'Model grok-4 does not support parameter reasoningEffort.',
    ])
    expect(
      (await post('/v1/responses', {model: 'grok-4+xai-params', input: 'hi', reasoning: {summary: 'auto'}}))
        .status,
    ).toBe(200)
  })

  it("plain-tools: vLLM's 400 for Codex's additional_tools item, then for a tool that is not a function", async () => {
    const fn = {type: 'function', name: 'f', parameters: {type: 'object', properties: {}}}
    const lite = await post('/v1/responses', {
      model: 'gpt-oss-120b+plain-tools',
      input: [{type: 'additional_tools', role: 'developer', tools: [fn]}],
      tools: [fn],
    })
    expect([lite.status, lite.json!.error]).toEqual([
      400,
      {
        message: "Unsupported Responses API input item type: 'additional_tools'",
        type: 'BadRequestError',
        param: 'input',
        code: 400,
      },
    ])
    const namespace = await post('/v1/responses', {
      model: 'gpt-oss-120b+plain-tools',
      input: 'hi',
      tools: [fn, {type: 'namespace', name: 'ns', tools: [fn]}],
    })
    expect([namespace.status, (namespace.json!.error as {message: string}).message]).toEqual([
      400,
      'tool type namespace not supported',
    ])
    const custom = await post('/v1/responses', {
      model: 'gpt-oss-120b+plain-tools',
      input: 'hi',
      tools: [{type: 'custom', name: 'exec'}],
    })
    expect((custom.json!.error as {message: string}).message).toBe('tool type custom not supported')
    const plain = await post('/v1/responses', {model: 'gpt-oss-120b+plain-tools', input: 'hi', tools: [fn]})
    expect(plain.status).toBe(200)
    // a custom tool sent as a function of one `input` is called with the user's words there
    const exec = {
      type: 'function',
      name: 'functions__exec',
      parameters: {type: 'object', properties: {input: {type: 'string'}}},
    }
    const called = await post('/v1/responses', {
      model: 'gpt-oss-120b+plain-tools',
      input: 'use a tool',
      tools: [exec],
    })
    expect((called.json!.output as Array<Record<string, unknown>>)[0]).toMatchObject({
      type: 'function_call',
      name: 'functions__exec',
      arguments: JSON.stringify({input: 'use a tool'}),
    })
    expect(
      (
        await post('/v1/responses', {
          model: 'gpt-oss-120b',
          input: 'hi',
          tools: [{type: 'custom', name: 'exec'}],
        })
      ).status,
    ).toBe(200)
  })

  it("lite-azure, not-lite: Azure's 400 for a namespace under Codex's Lite header, OpenAI's for a model that is not Lite", async () => {
    const fn = {type: 'function', name: 'f', parameters: {type: 'object', properties: {}}}
    const LITE = {'x-openai-internal-codex-responses-lite': 'true'}
    const item = (tools: unknown[]) => [
      {type: 'additional_tools', role: 'developer', tools},
      {type: 'message', role: 'user', content: 'hi'},
    ]
    const namespace = {type: 'namespace', name: 'collaboration', tools: [fn]}
    const refused = await post(
      '/v1/responses',
      {model: 'gpt-6.2-sol+lite-azure', input: item([namespace])},
      LITE,
    )
    expect([refused.status, refused.json!.error]).toEqual([
      400,
      {
        message:
          'X-OpenAI-Internal-Codex-Responses-Lite only supports function tools, custom tools, and client-executed tool search.',
        type: 'invalid_request_error',
        param: 'tools',
        code: 'unsupported_value',
      },
    ])
    // the same rules for `tools` under the header
    const top = await post(
      '/v1/responses',
      {model: 'gpt-6.2-sol+lite-azure', input: 'hi', tools: [namespace]},
      LITE,
    )
    expect(top.status).toBe(400)
    // what the Lite API takes, and anything without the header, passes
    const search = {type: 'tool_search', execution: 'client', parameters: {type: 'object', properties: {}}}
    for (const [tools, headers] of [
      [[fn, {type: 'custom', name: 'exec'}, search], LITE],
      [[namespace], {}],
    ] as const)
      expect(
        (await post('/v1/responses', {model: 'gpt-6.2-sol+lite-azure', input: item([...tools])}, headers))
          .status,
      ).toBe(200)

    const model = await post('/v1/responses', {model: 'gpt-5.5+not-lite', input: item([fn])}, LITE)
    expect([model.status, model.json!.error]).toEqual([
      400,
      {
        message: 'This model is not supported when using X-OpenAI-Internal-Codex-Responses-Lite.',
        type: 'invalid_request_error',
        param: 'model',
        code: 'unsupported_value',
      },
    ])
    expect((await post('/v1/responses', {model: 'gpt-5.5+not-lite', input: item([fn])})).status).toBe(200)
  })

  it("azure-namespace-description: Azure's 400 for a namespace without a description, in tools or in the Lite item; a described one passes", async () => {
    const model = 'gpt-6.2-sol+azure-namespace-description'
    const ns = (description?: string) => ({
      type: 'namespace',
      name: 'functions',
      ...(description === undefined ? {} : {description}),
      tools: [{type: 'function', name: 'wait', parameters: {type: 'object', properties: {}}}],
    })
    const lite = (tool: object) => [
      {type: 'additional_tools', role: 'developer', tools: [tool]},
      {type: 'message', role: 'user', content: 'hi'},
    ]
    const empty = await post('/v1/responses', {model, input: lite(ns(''))})
    expect([empty.status, empty.json!.error]).toEqual([
      400,
      {
        message:
          "Invalid 'input[0].tools[0].description': empty string. Expected a string with minimum length 1, but got an empty string instead.",
        type: 'invalid_request_error',
        param: 'input[0].tools[0].description',
        code: 'empty_string',
      },
    ])
    const missing = await post('/v1/responses', {model, input: 'hi', tools: [ns()]})
    expect([missing.status, missing.json!.error.param, missing.json!.error.code]).toEqual([
      400,
      'tools[0].description',
      'missing_required_parameter',
    ])
    expect(
      (await post('/v1/responses', {model, input: lite(ns('Tools in the functions namespace.'))})).status,
    ).toBe(200)
  })

  it("azure-store: Azure's 400 for a reasoning item named by its id with store false; store true, or no such item, passes", async () => {
    const input = [
      {type: 'message', id: 'msg_1', role: 'user', content: 'hi'},
      {type: 'reasoning', id: 'rs_9', summary: []},
      {type: 'message', id: 'msg_2', role: 'user', content: 'again'},
    ]
    for (const store of [false, undefined]) {
      const refused = await post('/v1/responses', {model: 'gpt-5.4+azure-store', input, store})
      expect([refused.status, refused.json!.error]).toEqual([
        400,
        {
          message:
            "Item with id 'rs_9' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input.",
          type: 'invalid_request_error',
          param: 'input',
          code: null,
        },
      ])
    }
    expect((await post('/v1/responses', {model: 'gpt-5.4+azure-store', input, store: true})).status).toBe(200)
    const firstTurn = {model: 'gpt-5.4+azure-store', input: [input[0]], store: false}
    expect((await post('/v1/responses', firstTurn)).status).toBe(200)
  })

  it("encrypted-foreign: reasoning bound to the key that made it, another key's (or a foreign compaction item) refused in ChatGPT's words", async () => {
    const model = 'gpt-5.5+encrypted-foreign'
    const user = {type: 'message', role: 'user', content: 'hi'}
    const first = {model, input: [user], reasoning: {effort: 'low'}, include: ['reasoning.encrypted_content']}
    const answer = (key: string) =>
      post('/v1/responses', first, {authorization: `Bearer ${key}`}).then((r) =>
        (r.json!.output as Json[]).find((i) => i.type === 'reasoning')!,
      )
    const mine = await answer('key-a')
    const theirs = await answer('key-b')
    expect(mine.encrypted_content).not.toBe(theirs.encrypted_content)
    const turn = (items: Json[], key = 'key-a') =>
      post('/v1/responses', {...first, input: [user, ...items, user]}, {authorization: `Bearer ${key}`})
    expect((await turn([mine])).status).toBe(200)
    const refused = await turn([theirs])
    expect([refused.status, refused.json!.error]).toEqual([
      400,
      {
        message: `The encrypted content for item ${String(theirs.id)} could not be verified. Reason: Encrypted content could not be decrypted or parsed.`,
        type: 'invalid_request_error',
        param: null,
        code: null,
      },
    ])
    // the sim's own compaction is taken, another's refused by its id
    const own = {
      type: 'compaction',
      id: 'cmp_1',
      encrypted_content: Buffer.from('sim-compaction:3').toString('base64'),
    }
    expect((await turn([own])).status).toBe(200)
    const foreign = await turn([{...own, encrypted_content: 'gAAAAABforeign=='}])
    expect([foreign.status, (foreign.json!.error as Json).message]).toEqual([
      400,
      'The encrypted content for item cmp_1 could not be verified. Reason: Encrypted content could not be decrypted or parsed.',
    ])
    // without the quirk, any key's reasoning is the sim's
    const plain = (await post('/v1/responses', {...first, model: 'gpt-5.5'}, {authorization: 'Bearer key-b'}))
      .json!
    const item = (plain.output as Json[]).find((i) => i.type === 'reasoning')!
    expect(
      (await post('/v1/responses', {...first, model: 'gpt-5.5', input: [user, item, user]})).status,
    ).toBe(200)
  })

  it("redacted-thinking: a redacted block between two signed thinking blocks, streamed whole; its data back as it came, else Anthropic's 400", async () => {
    for (const model of ['claude-sonnet-4-6', 'claude-haiku-5-5']) {
      const user = {role: 'user', content: 'think about it'}
      const first = {
        model: `${model}+redacted-thinking`,
        max_tokens: 4096,
        thinking: {type: 'adaptive', display: 'summarized'},
        messages: [user],
      }
      const answer = (await post('/v1/messages', first)).json!
      const blocks = answer.content as Json[]
      expect(blocks.map((b) => b.type)).toEqual(['thinking', 'redacted_thinking', 'thinking', 'text'])
      expect(Buffer.from(String(blocks[1].data), 'base64').toString()).toMatch(/^simred:[0-9a-f]{32}:/)
      // the same blocks in a stream: the redacted one whole in its start
      const streamed = await post('/v1/messages', {...first, stream: true})
      const starts = streamed.events
        .filter((e) => e.event === 'content_block_start')
        .map((e) => e.data.content_block)
      expect(starts[1]).toEqual(blocks[1])
      const turn = (content: Json[]) =>
        post('/v1/messages', {
          ...first,
          messages: [user, {role: 'assistant', content}, {role: 'user', content: 'go on'}],
        })
      expect((await turn(blocks)).status).toBe(200)
      const changed = await turn([
        blocks[0],
        {...blocks[1], data: `${String(blocks[1].data)}x`},
        ...blocks.slice(2),
      ])
      expect([changed.status, changed.json!.error.message]).toEqual([
        400,
        'messages.1.content.1: `thinking` or `redacted_thinking` blocks in the latest assistant message cannot be modified. These blocks must remain as they were in the original response.',
      ])
      // sent back as a thinking block signed by its data: the signature check's 400
      const asThinking = await turn([
        blocks[0],
        {type: 'thinking', thinking: '', signature: blocks[1].data},
        ...blocks.slice(2),
      ])
      expect([asThinking.status, asThinking.json!.error.message]).toEqual([
        400,
        'messages.1.content.1: Invalid `signature` in `thinking` block',
      ])
    }
  })

  it("no-json-tools: Gemini 2.x's 400 for function declarations beside a JSON response mime type; either alone passes", async () => {
    const path = '/v1beta/models/gemini-2.5-flash+no-json-tools:generateContent'
    const contents = [{role: 'user', parts: [{text: 'hi'}]}]
    const tools = [{functionDeclarations: [{name: 'f', parametersJsonSchema: {type: 'object'}}]}]
    const json = {responseMimeType: 'application/json', responseJsonSchema: {type: 'object'}}
    const refused = await post(path, {contents, tools, generationConfig: json})
    expect([refused.status, refused.json!.error]).toEqual([
      400,
      {
        code: 400,
        message: "Function calling with a response mime type: 'application/json' is unsupported",
        status: 'INVALID_ARGUMENT',
      },
    ])
    expect((await post(path, {contents, tools})).status).toBe(200)
    expect((await post(path, {contents, generationConfig: json})).status).toBe(200)
  })

  it("reasoning-text: DeepSeek's reasoning as reasoning_text content; its 400 for a call's turn without it", async () => {
    const fn = {type: 'function', name: 'exec', parameters: {type: 'object', properties: {}}}
    const user = {type: 'message', role: 'user', content: 'use a tool'}
    const call = {type: 'function_call', call_id: 'a', name: 'exec', arguments: '{}'}
    const output = {type: 'function_call_output', call_id: 'a', output: 'a b'}
    const ask = (input: unknown[]) =>
      post('/v1/responses', {
        model: 'deepseek-v4-pro+reasoning-text',
        input,
        tools: [fn],
        reasoning: {effort: 'high', summary: 'auto'},
        include: ['reasoning.encrypted_content'],
      })
    const first = await ask([user])
    expect(first.json!.output[0]).toEqual({
      type: 'reasoning',
      id: expect.any(String),
      summary: [],
      content: [{type: 'reasoning_text', text: expect.any(String)}],
    })
    const refused = await ask([user, {type: 'reasoning', summary: []}, call, output])
    expect([refused.status, refused.json!.error.message]).toEqual([
      400,
      'The `reasoning_text` in the thinking mode must be passed back to the API.',
    ])
    expect((await ask([user, call, output])).status).toBe(400)
    const empty = {type: 'reasoning', summary: [], content: [{type: 'reasoning_text', text: ''}]}
    expect((await ask([user, empty, call, output])).status).toBe(200)
  })

  it("strict-responses-fields: OpenCode Go's 400 for a top-level field it does not know; the reference's fields pass", async () => {
    const known = {
      model: 'muse-spark-1.3+strict-responses-fields',
      input: [{type: 'message', role: 'user', content: 'hi'}],
      instructions: 'Be brief.',
      store: false,
      include: ['reasoning.encrypted_content'],
      prompt_cache_key: 'k',
      reasoning: {effort: 'low', summary: 'auto'},
      parallel_tool_calls: true,
      tool_choice: 'auto',
    }
    const refused = await post('/v1/responses', {...known, access_programs: {cyber: 'standard'}})
    expect([refused.status, refused.json!.error]).toEqual([
      400,
      {
        message: 'unknown parameter `access_programs`',
        type: 'invalid_request_error',
        param: null,
        code: null,
      },
    ])
    const made = await post('/v1/responses', {...known, totally_made_up_param: 1})
    expect(made.json!.error).toMatchObject({message: 'unknown parameter `totally_made_up_param`'})
    expect((await post('/v1/responses', known)).status).toBe(200)
    // without the quirk, any field is taken
    const loose = {...known, model: 'muse-spark-1.3', access_programs: {cyber: 'standard'}}
    expect((await post('/v1/responses', loose)).status).toBe(200)
  })

  it("adjacent-outputs: DeepSeek's 400 for an item between a tool call and its output; a batch of calls and its outputs passes", async () => {
    const fn = {type: 'function', name: 'exec', parameters: {type: 'object', properties: {}}}
    const user = {type: 'message', role: 'user', content: 'list the files'}
    const hook = {type: 'message', role: 'developer', content: 'PostToolUse: 2 files.'}
    const call = (id: string) => ({type: 'function_call', call_id: id, name: 'exec', arguments: '{}'})
    const output = (id: string) => ({type: 'function_call_output', call_id: id, output: 'a b'})
    const ask = (input: unknown[]) =>
      post('/v1/responses', {model: 'deepseek-v4-flash+adjacent-outputs', input, tools: [fn]})
    const deepseek = (message: string) => ({
      message,
      type: 'invalid_request_error',
      param: null,
      code: 'invalid_request_error',
    })
    const between = await ask([user, call('call_00_a'), hook, output('call_00_a')])
    expect([between.status, between.json!.error]).toEqual([
      400,
      deepseek('No tool output found for tool call call_00_a'),
    ])
    // a reasoning item between is refused too; an output whose call is not right before it
    expect((await ask([user, call('a'), {type: 'reasoning', summary: []}, output('a')])).status).toBe(400)
    const early = await ask([user, output('a'), call('a')])
    expect(early.json!.error).toEqual(deepseek('No tool call found for tool output with call_id a'))
    // the same history with each output right after its call, and parallel calls' batch, pass
    expect((await ask([user, call('a'), output('a'), hook])).status).toBe(200)
    expect((await ask([user, call('a'), call('b'), output('b'), output('a'), hook])).status).toBe(200)
    // without the quirk, the order is the client's own
    expect(
      (await post('/v1/responses', {model: 'deepseek-v4-flash', input: [user, call('a'), hook, output('a')]}))
        .status,
    ).toBe(200)
  })

  it("dashscope-thinking: DashScope's 400 for a non-stream call without enable_thinking false; streams pass", async () => {
    const refused = await chat({model: 'sim-mini+dashscope-thinking'})
    expect([refused.status, refused.json!.error]).toEqual([
      400,
      {
        code: 'invalid_parameter_error',
        param: null,
        message: 'parameter.enable_thinking must be set to false for non-streaming calls',
        type: 'invalid_request_error',
      },
    ])
    expect((await chat({model: 'sim-mini+dashscope-thinking', enable_thinking: false})).status).toBe(200)
    expect((await chat({model: 'sim-mini+dashscope-thinking', stream: true})).status).toBe(200)
  })

  it("dashscope-args: DashScope's 400 for a history tool call whose arguments are not JSON", async () => {
    const history = (args: string) => [
      {role: 'user', content: 'list files'},
      {
        role: 'assistant',
        content: null,
        tool_calls: [{id: 'c1', type: 'function', function: {name: 'shell', arguments: args}}],
      },
      {role: 'tool', tool_call_id: 'c1', content: 'README.md'},
    ]
    const refused = await chat({model: 'qwen3-coder-plus+dashscope-args', messages: history('{"cmd": "ls')})
    expect([refused.status, refused.json!.error]).toEqual([
      400,
      {
        code: 'invalid_parameter_error',
        param: null,
        message:
          '<400> InternalError.Algo.InvalidParameter: The "function.arguments" parameter of the code model must be in JSON format.',
        type: 'invalid_request_error',
      },
    ])
    const taken = await chat({model: 'qwen3-coder-plus+dashscope-args', messages: history('{"cmd": "ls"}')})
    expect(taken.status).toBe(200)
    // without the quirk: taken as it came
    expect((await chat({model: 'qwen3-coder-plus', messages: history('{"cmd": "ls')})).status).toBe(200)
  })

  it("minimax-args: MiniMax's 400 for it, the call's id in its words", async () => {
    const messages = [
      {role: 'user', content: 'list files'},
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {id: 'call_function_ab_1', type: 'function', function: {name: 'shell', arguments: '{"cmd'}},
        ],
      },
      {role: 'tool', tool_call_id: 'call_function_ab_1', content: 'error'},
    ]
    const refused = await chat({model: 'MiniMax-M2.7+minimax-args', messages})
    expect([refused.status, refused.json]).toEqual([
      400,
      {
        type: 'error',
        error: {
          type: 'bad_request_error',
          message:
            'invalid params, invalid function arguments json string, tool_call_id: call_function_ab_1 (2013)',
          http_code: '400',
        },
        request_id: 'sim',
      },
    ])
  })

  it("minimax-system, system-first: several system messages refused in MiniMax's words, Qwen3.5's template's", async () => {
    const two = [
      {role: 'system', content: 'a'},
      {role: 'system', content: 'b'},
      {role: 'user', content: 'hi'},
    ]
    const minimax = await chat({model: 'MiniMax-M2.7+minimax-system', messages: two})
    expect([minimax.status, minimax.json!.error.message]).toEqual([
      400,
      'invalid params, invalid chat setting (2013)',
    ])
    const qwen = await chat({model: 'qwen3.5-35b+system-first', messages: two})
    expect(qwen.status).toBe(400)
    expect(qwen.json!.error).toMatchObject({code: 400, type: 'invalid_request_error'})
    expect(qwen.json!.error.message).toMatch(
      /Error: Jinja Exception: System message must be at the beginning\.$/,
    )
    // one system message, first: taken; a second one anywhere is refused by both
    const one = [
      {role: 'system', content: 'a b'},
      {role: 'user', content: 'hi'},
    ]
    expect((await chat({model: 'MiniMax-M2.7+minimax-system', messages: one})).status).toBe(200)
    expect((await chat({model: 'qwen3.5-35b+system-first', messages: one})).status).toBe(200)
    const later = [
      ...one,
      {role: 'assistant', content: 'Hello.'},
      {role: 'system', content: 'c'},
      {role: 'user', content: 'go'},
    ]
    expect((await chat({model: 'MiniMax-M2.7+minimax-system', messages: later})).status).toBe(400)
    expect((await chat({model: 'qwen3.5-35b+system-first', messages: later})).status).toBe(400)
  })

  it("dashscope-context, cerebras-context, lmstudio-context, lmstudio-fit-context, lmstudio-mlx-context, minimax-context, vllm-context, xinference-context: a prompt past the window in each vendor's words", async () => {
    const long = Array.from({length: 2200}, (_, i) => `line ${i} of a long tool output`).join('\n')
    const ask = (quirks: string, content = long) =>
      chat({model: `sim-mini+${quirks}`, max_tokens: 100000, messages: [{role: 'user', content}]})
    const dashscope = await ask('dashscope-context')
    expect([dashscope.status, dashscope.json!.error.message]).toEqual([
      400,
      '<400> InternalError.Algo.InvalidParameter: Range of input length should be [1, 8192]',
    ])
    const lmstudio = await ask('lmstudio-context+context-4k')
    expect(lmstudio.status).toBe(400)
    expect(lmstudio.json!.error).toMatch(
      /^Trying to keep the first \d+ tokens when context the overflows\. However, the model is loaded with context length of only 4096 tokens, which is not enough\./,
    )
    const minimax = await ask('minimax-context')
    expect([minimax.status, minimax.json!.error]).toEqual([
      400,
      {
        type: 'bad_request_error',
        message: 'invalid params, context window exceeds limit (2013)',
        http_code: '400',
      },
    ])
    const vllm = await ask('vllm-context')
    expect([vllm.status, vllm.json!.type, vllm.json!.code]).toEqual([400, 'BadRequestError', 400])
    expect(vllm.json!.message).toMatch(
      /^The decoder prompt \(length \d+\) is longer than the maximum model length of 8192\./,
    )
    const xinference = await ask('xinference-context')
    expect(xinference.status).toBe(500)
    expect(xinference.json!.detail).toMatch(
      /^\[address=[^\]]+\] The decoder prompt \(length \d+\) is longer than the maximum model length of 8192\./,
    )
    const cerebras = await ask('cerebras-context')
    expect(cerebras.status).toBe(400)
    expect(cerebras.json).toMatchObject({
      type: 'invalid_request_error',
      param: 'validation_error',
      code: 'context_length_exceeded',
    })
    expect(cerebras.json!.message).toMatch(
      /^Please reduce the length of the messages or completion\. Current length is \d+ while limit is 8192$/,
    )
    const fit = await ask('lmstudio-fit-context+context-4k')
    expect(fit.status).toBe(400)
    expect(fit.json!.error).toMatch(
      /^Input does not fit in context length\. The input has \d+ tokens, but the context length only supports 4096 tokens\.$/,
    )
    const mlx = await ask('lmstudio-mlx-context')
    expect([mlx.status, mlx.json]).toEqual([
      500,
      {error: {code: 500, message: 'Context size has been exceeded.', type: 'server_error'}},
    ])
    // the prompt alone is counted: a short one with a large max_tokens is answered, even with context-8k
    expect((await ask('minimax-context+context-8k', 'hi')).status).toBe(200)
    // MiniMax's Anthropic endpoint says it the same way
    const messages = await post('/v1/messages', {
      model: 'MiniMax-M2.7+minimax-context',
      max_tokens: 1024,
      messages: [{role: 'user', content: long}],
    })
    expect([messages.status, messages.json!.error.message]).toEqual([
      400,
      'invalid params, context window exceeds limit (2013)',
    ])
  })

  it('stream-errors: a streamed request refused as LM Studio refuses it, a 200 stream of one error event', async () => {
    const long = Array.from({length: 2200}, (_, i) => `line ${i} of a long tool output`).join('\n')
    const streamed = await chat({
      model: 'sim-mini+lmstudio-fit-context+stream-errors',
      stream: true,
      messages: [{role: 'user', content: long}],
    })
    expect(streamed.status).toBe(200)
    expect(streamed.events).toHaveLength(1)
    expect(streamed.events[0]!.event).toBe('error')
    expect(streamed.events[0]!.data.error).toMatch(/^Input does not fit in context length\./)
    // the same request not streamed: the 400 as before
    const whole = await chat({
      model: 'sim-mini+lmstudio-fit-context+stream-errors',
      messages: [{role: 'user', content: long}],
    })
    expect(whole.status).toBe(400)
    // a request that fits streams its answer
    const fits = await chat({model: 'sim-mini+lmstudio-fit-context+stream-errors', stream: true})
    expect(fits.status).toBe(200)
    expect(fits.events.at(-1)!.data).toBe('[DONE]')
  })

  it('template-kwargs: thinking on unless chat_template_kwargs turns it off; a top-level switch ignored', async () => {
    const reasoning = async (extra: Json) => {
      const answer = await chat({model: 'Qwen/Qwen3.6-35B-A3B+template-kwargs', ...extra})
      expect(answer.status).toBe(200)
      return answer.json!.choices[0].message.reasoning_content !== undefined
    }
    expect(await reasoning({})).toBe(true)
    expect(await reasoning({enable_thinking: false, thinking: {type: 'disabled'}})).toBe(true)
    expect(await reasoning({chat_template_kwargs: {enable_thinking: false}})).toBe(false)
    expect(await reasoning({chat_template_kwargs: {thinking: false}})).toBe(false)
  })

  it("zai-always-thinks: Z.AI's 1210 for thinking disabled or an effort GLM-5.3 does not take; it always thinks", async () => {
    const words = 'This model always engages in thinking and cannot be disabled; please use low, high, or max'
    for (const extra of [
      {thinking: {type: 'disabled'}},
      {reasoning_effort: 'medium'},
      {reasoning_effort: 'none'},
    ]) {
      const refused = await chat({model: 'glm-5.3+zai-always-thinks', ...extra})
      expect([refused.status, refused.json], JSON.stringify(extra)).toEqual([
        400,
        {error: {code: '1210', message: words}},
      ])
    }
    for (const extra of [
      {},
      {reasoning_effort: 'low'},
      {reasoning_effort: 'high'},
      {reasoning_effort: 'max'},
    ]) {
      const answer = await chat({model: 'glm-5.3+zai-always-thinks', ...extra})
      expect(answer.status, JSON.stringify(extra)).toBe(200)
      expect(answer.json!.choices[0].message.reasoning_content, JSON.stringify(extra)).toBeTruthy()
    }
  })

  it("minimax-thinking and enum-thinking: MiniMax-M3's refusal of enabled, a zod relay's of adaptive", async () => {
    const messages = (model: string, thinking: Json) =>
      post('/v1/messages', {model, max_tokens: 4096, thinking, messages: [{role: 'user', content: 'hi'}]})
    const enabled = await messages('MiniMax-M3+minimax-thinking', {type: 'enabled', budget_tokens: 2048})
    expect([enabled.status, enabled.json]).toEqual([
      400,
      {
        type: 'error',
        error: {
          type: 'bad_request_error',
          message: 'invalid params, invalid thinking.type: "enabled" (allowed: adaptive, disabled) (2013)',
          http_code: '400',
        },
      },
    ])
    expect((await messages('MiniMax-M3+minimax-thinking', {type: 'adaptive'})).status).toBe(200)
    const adaptive = await messages('qwen3.7-plus+enum-thinking', {type: 'adaptive', display: 'omitted'})
    expect([adaptive.status, adaptive.json]).toEqual([
      400,
      {
        type: 'error',
        error: {
          type: 'invalid_request_error',
          message:
            "Invalid request: thinking.type: Invalid enum value. Expected 'enabled' | 'disabled', received 'adaptive'",
        },
      },
    ])
    expect(
      (await messages('qwen3.7-plus+enum-thinking', {type: 'enabled', budget_tokens: 2048})).status,
    ).toBe(200)
  })

  it('pydantic-thinking and effort-levels: adaptive as a member it lacks, efforts above high', async () => {
    const messages = (model: string, extra: Json) =>
      post('/v1/messages', {model, max_tokens: 4096, messages: [{role: 'user', content: 'hi'}], ...extra})
    const adaptive = await messages('qwen3.7-plus+pydantic-thinking', {thinking: {type: 'adaptive'}})
    expect([adaptive.status, adaptive.json]).toEqual([
      400,
      {
        type: 'error',
        error: {type: 'invalid_request_error', message: 'thinking.adaptive: Extra inputs are not permitted'},
      },
    ])
    expect(
      (await messages('qwen3.7-plus+pydantic-thinking', {thinking: {type: 'enabled', budget_tokens: 2048}}))
        .status,
    ).toBe(200)
    for (const effort of ['xhigh', 'max']) {
      const refused = await messages('m+effort-levels', {
        thinking: {type: 'adaptive'},
        output_config: {effort},
      })
      expect([refused.status, refused.json], effort).toEqual([
        400,
        {
          type: 'error',
          error: {
            type: 'invalid_request_error',
            message: "output_config.effort: Input should be 'low', 'medium' or 'high'",
          },
        },
      ])
    }
    for (const effort of ['low', 'medium', 'high'])
      expect(
        (await messages('m+effort-levels', {thinking: {type: 'adaptive'}, output_config: {effort}})).status,
        effort,
      ).toBe(200)
  })

  it("no-minimal-effort: o3's refusal of an effort above high too", async () => {
    const refused = await post('/v1/chat/completions', {
      model: 'o3+no-minimal-effort',
      messages: [{role: 'user', content: 'hi'}],
      reasoning_effort: 'xhigh',
    })
    expect([refused.status, (refused.json as {error: {message: string}}).error.message]).toEqual([
      400,
      "Unsupported value: 'reasoning_effort' does not support 'xhigh' with this model. Supported values are: 'low', 'medium', and 'high'.",
    ])
  })

  it("ollama-effort: Ollama's words for an effort it does not map, on chat and Responses; max and none taken", async () => {
    const words = 'invalid reasoning value: "xhigh" (must be "high", "medium", "low", "max", or "none")'
    const chatRefused = await post('/v1/chat/completions', {
      model: 'glm-5.2:cloud+ollama-effort',
      messages: [{role: 'user', content: 'hi'}],
      reasoning_effort: 'xhigh',
    })
    expect([chatRefused.status, (chatRefused.json as {error: {message: string}}).error.message]).toEqual([
      400,
      words,
    ])
    const responsesRefused = await post('/v1/responses', {
      model: 'glm-5.2:cloud+ollama-effort',
      input: 'hi',
      reasoning: {effort: 'xhigh', summary: 'auto'},
    })
    expect([responsesRefused.status, responsesRefused.json!.error]).toEqual([
      400,
      {message: words, type: 'invalid_request_error', param: null, code: null},
    ])
    for (const effort of ['max', 'none', 'high'])
      expect(
        (
          await post('/v1/responses', {
            model: 'glm-5.2:cloud+ollama-effort',
            input: 'hi',
            reasoning: {effort},
          })
        ).status,
        effort,
      ).toBe(200)
  })

  it("pydantic-effort: SGLang's literal_error for an effort outside low, medium and high", async () => {
    const refused = await post('/v1/chat/completions', {
      model: 'glm-5+pydantic-effort',
      messages: [{role: 'user', content: 'hi'}],
      reasoning_effort: 'xhigh',
    })
    expect(refused.status).toBe(400)
    expect(refused.json).toMatchObject({object: 'error', type: 'Bad Request', param: null, code: 400})
    expect((refused.json as {message: string}).message).toContain(
      "{'type': 'literal_error', 'loc': ('body', 'reasoning_effort'), 'msg': \"Input should be 'low', 'medium' or 'high'\", 'input': 'xhigh'",
    )
    const taken = await post('/v1/chat/completions', {
      model: 'glm-5+pydantic-effort',
      messages: [{role: 'user', content: 'hi'}],
      reasoning_effort: 'high',
    })
    expect(taken.status).toBe(200)
  })

  it("no-effort-model: OpenAI's refusal of reasoning.effort on Responses, none included; the summary taken", async () => {
    const refused = await post('/v1/responses', {
      model: 'gpt-4o-mini+no-effort-model',
      input: 'hi',
      reasoning: {effort: 'none', summary: 'auto'},
    })
    expect([refused.status, refused.json!.error]).toEqual([
      400,
      {
        message: "Unsupported parameter: 'reasoning.effort' is not supported with this model.",
        type: 'invalid_request_error',
        param: 'reasoning.effort',
        code: 'unsupported_parameter',
      },
    ])
    expect(
      (
        await post('/v1/responses', {
          model: 'gpt-4o-mini+no-effort-model',
          input: 'hi',
          reasoning: {summary: 'auto'},
        })
      ).status,
    ).toBe(200)
  })

  it("Responses: OpenAI's minimum of 16 output tokens", async () => {
    const refused = await post('/v1/responses', {model: 'gpt-4.1', input: 'quota', max_output_tokens: 1})
    expect([refused.status, refused.json!.error]).toEqual([
      400,
      {
        message:
          "Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got 1 instead.",
        type: 'invalid_request_error',
        param: 'max_output_tokens',
        code: 'integer_below_min_value',
      },
    ])
    expect(
      (await post('/v1/responses', {model: 'gpt-4.1', input: 'quota', max_output_tokens: 16})).status,
    ).toBe(200)
  })
})

describe('successive-roles', () => {
  it("two user messages in a row get DeepSeek's 400, in its words (its indices count the system message)", async () => {
    const messages = [
      {role: 'system', content: 'Be brief.'},
      {role: 'user', content: 'hi'},
      {role: 'user', content: 'again'},
    ]
    const refused = await post('/v1/chat/completions', {model: 'sim-mini+successive-roles', messages})
    expect(refused.status).toBe(400)
    expect(refused.json?.error).toEqual({
      message:
        'sim-mini does not support successive user or assistant messages (messages[1] and messages[2] in your input). You should interleave the user/assistant messages in the message sequence.',
      type: 'invalid_request_error',
      param: null,
      code: 'invalid_request_error',
    })
    const alternating = [...messages.slice(0, 2), {role: 'assistant', content: 'Hello.'}, messages[2]]
    const taken = await post('/v1/chat/completions', {
      model: 'sim-mini+successive-roles',
      messages: alternating,
    })
    expect(taken.status).toBe(200)
  })
})

describe('more tools than the model takes', () => {
  const chatFns = (n: number) =>
    Array.from({length: n}, (_, i) => ({
      type: 'function',
      function: {name: `t${i}`, parameters: {type: 'object'}},
    }))

  it("tool-cap-128: OpenAI's 400 on chat completions and Responses, Kimi's words on Messages; 128 pass", async () => {
    const refused = await chat({model: 'gpt-5-mini+tool-cap-128', tools: chatFns(140)})
    expect([refused.status, refused.json!.error]).toEqual([
      400,
      {
        message:
          "Invalid 'tools': array too long. Expected an array with maximum length 128, but got an array with length 140 instead.",
        type: 'invalid_request_error',
        param: 'tools',
        code: 'array_above_max_length',
      },
    ])
    expect((await chat({model: 'gpt-5-mini+tool-cap-128', tools: chatFns(128)})).status).toBe(200)
    const fns = Array.from({length: 129}, (_, i) => ({
      type: 'function',
      name: `t${i}`,
      parameters: {type: 'object'},
    }))
    const responses = await post('/v1/responses', {model: 'gpt-5-mini+tool-cap-128', input: 'hi', tools: fns})
    expect([responses.status, (responses.json!.error as {code: string}).code]).toEqual([
      400,
      'array_above_max_length',
    ])
    expect(
      (await post('/v1/responses', {model: 'gpt-5-mini+tool-cap-128', input: 'hi', tools: fns.slice(1)}))
        .status,
    ).toBe(200)
    const messages = await post('/v1/messages', {
      model: 'kimi-k2.6+tool-cap-128',
      max_tokens: 100,
      messages: [{role: 'user', content: 'hi'}],
      tools: Array.from({length: 130}, (_, i) => ({name: `t${i}`, input_schema: {type: 'object'}})),
    })
    expect([messages.status, (messages.json!.error as {message: string}).message]).toEqual([
      400,
      'a max of 128 tools can be supported',
    ])
  })

  it("tool-cap-512 on Gemini: the API's words for its function declarations across its tools entries", async () => {
    const declarations = (n: number, from = 0) =>
      Array.from({length: n}, (_, i) => ({name: `t${from + i}`, parametersJsonSchema: {type: 'object'}}))
    const path = '/v1beta/models/gemini-2.5-pro+tool-cap-512:generateContent'
    const contents = [{role: 'user', parts: [{text: 'hi'}]}]
    const refused = await post(path, {
      contents,
      tools: [{functionDeclarations: declarations(300)}, {functionDeclarations: declarations(213, 300)}],
    })
    expect([refused.status, refused.json!.error]).toEqual([
      400,
      {
        code: 400,
        message:
          '* GenerateContentRequest.tools[0].function_declarations: [FIELD_INVALID] At most 512 function declarations can be specified.\n',
        status: 'INVALID_ARGUMENT',
      },
    ])
    expect((await post(path, {contents, tools: [{functionDeclarations: declarations(512)}]})).status).toBe(
      200,
    )
  })
})

describe("ollama-truncate: Ollama's silent cut of a prompt past its context (4 096)", () => {
  // about 11 000 of the simulator's tokens
  const LONG = Array.from({length: 2200}, (_, i) => `line ${i} of a long tool output`).join('\n')

  it('chat: a 200 that reports 2 050 prompt tokens (half its context and two) and no cache; a short prompt as it is', async () => {
    const body = {model: 'qwen3:8b+ollama-truncate', messages: [{role: 'user', content: LONG}]}
    const cut = await chat(body)
    expect(cut.status).toBe(200)
    expect(cut.json!.usage).toMatchObject({prompt_tokens: 2050, prompt_tokens_details: {cached_tokens: 0}})
    // the same streamed, with its usage chunk
    const streamed = await chat({...body, stream: true, stream_options: {include_usage: true}})
    expect(streamed.events.find((e) => e.data?.usage)?.data.usage.prompt_tokens).toBe(2050)
    const short = await chat({model: 'qwen3:8b+ollama-truncate', messages: [{role: 'user', content: 'hi'}]})
    expect(short.json!.usage.prompt_tokens).toBeLessThan(100)
  })

  it('its Anthropic endpoint: input_tokens 2 050, no cache, streamed or not', async () => {
    const body = {
      model: 'qwen3:8b+ollama-truncate',
      max_tokens: 100,
      messages: [{role: 'user', content: LONG}],
    }
    const cut = await post('/v1/messages', body)
    expect(cut.status).toBe(200)
    expect(cut.json!.usage).toMatchObject({
      input_tokens: 2050,
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 0,
    })
    const streamed = await post('/v1/messages', {...body, stream: true})
    const start = streamed.events.find((e) => e.event === 'message_start')!
    expect(start.data.message.usage.input_tokens).toBe(2050)
  })
})
