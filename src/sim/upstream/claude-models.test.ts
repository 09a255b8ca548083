/**
 * Anthropic's models as the simulated Messages upstream takes them, by id and by quirk: thinking
 * on by default, the `thinking.type` each takes, forced tool choice, prefill, sampling, and the
 * prefix binding of thinking blocks (Fable 5.1, Opus 5.5, Sonnet 5.5, Haiku 5.5), with
 * Anthropic's exact refusals.
 */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {Simulator} from '../server.js'
import {startSim} from '../server.js'
import {simTokens} from '../sse.js'
import {thinkingSignature} from './turn-checks.js'

let sim: Simulator

beforeAll(async () => {
  sim = await startSim({timeScale: 1000})
})
afterAll(async () => {
  await sim.close()
})

type Json = Record<string, any>
type Event = {event?: string; data: any}

const BETA = 'thinking-binding-controls-2026-08-01'

async function post(body: unknown, headers: Record<string, string> = {}, path = '/v1/messages') {
  const response = await fetch(sim.origin + path, {
    method: 'POST',
    headers: {'content-type': 'application/json', 'x-api-key': 'sk-ant-test', ...headers},
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
  const text = await response.text()
  const events: Event[] = []
  if ((response.headers.get('content-type') ?? '').startsWith('text/event-stream'))
    for (const block of text.split('\n\n').filter(Boolean)) {
      const event = /^event: (.*)$/m.exec(block)?.[1]
      const data = /^data: (.*)$/m.exec(block)?.[1] ?? ''
      events.push({...(event ? {event} : {}), data: JSON.parse(data)})
    }
  const json = events.length ? undefined : (JSON.parse(text) as Json)
  return {status: response.status, json, events, message: json?.error?.message as string | undefined}
}

const ask = (model: string, extra: Json = {}): Json => ({
  model,
  max_tokens: 100,
  messages: [{role: 'user', content: 'Say hello.'}],
  ...extra,
})

const TOOLS = [{name: 'lookup', input_schema: {type: 'object'}}]
const types = (json: Json | undefined): string[] => (json?.content ?? []).map((b: Json) => b.type)

const E1 =
  '"thinking.type.disabled" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.'
const E2 =
  '"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.'
const E3 =
  '"thinking.type.disabled" is not supported for this model. Use "thinking.type.between_tools" for the lowest thinking setting, or "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.'
const E4 = '"thinking.type.between_tools" is not supported for this model.'
const E5 = 'tool_choice: type "tool" and "any" are not supported for this model.'
const E6 = 'Thinking may not be enabled when tool_choice forces tool use.'
const E7 =
  'This model does not support assistant message prefill. The conversation must end with a user message.'
const e9 = (at: string, beta: boolean) =>
  `${at}: Invalid \`signature\` in \`thinking\` block. The block is bound to a different conversation. Remove the block, or set \`thinking.block_binding.prefix_mismatch_behavior\` to "drop_block".` +
  (beta ? '' : ` That setting requires the \`${BETA}\` value in the \`anthropic-beta\` header.`)

const CLAUDE_5 = [
  'claude-sonnet-5',
  'claude-opus-5',
  'claude-fable-5',
  'claude-fable-5-1',
  'claude-mythos-5',
  'claude-mythos-5-1',
  'claude-opus-5-5',
  'claude-sonnet-5-5',
  'claude-haiku-5-5',
]

describe('thinking on by default', () => {
  it('Claude 5 thinks with no thinking field: an empty thinking block with its signature first', async () => {
    for (const model of [...CLAUDE_5, 'claude-opus-5-5-20261101', 'corp+thinks-by-default']) {
      const {status, json} = await post(ask(model))
      expect([model, status, types(json)]).toEqual([model, 200, ['thinking', 'text']])
      expect(json?.content[0].thinking).toBe('')
      expect(json?.content[0].signature).toBeTruthy()
      // the thinking's tokens counted
      expect(json?.usage.output_tokens).toBeGreaterThan(simTokens(json?.content[1].text))
    }
  })

  it('Opus 4.7 and 4.8, and models not named, do not', async () => {
    for (const model of ['claude-opus-4-7', 'claude-opus-4-8', 'claude-sonnet-4-6', 'claude-x']) {
      const {json} = await post(ask(model))
      expect([model, types(json)]).toEqual([model, ['text']])
    }
  })

  it('shows the text when display is summarized', async () => {
    const {json} = await post(ask('claude-sonnet-5', {thinking: {type: 'adaptive', display: 'summarized'}}))
    expect(json?.content[0].thinking).toMatch(/^The user wrote/)
  })
})

describe('thinking.type by model', () => {
  it('disabled: refused on Opus 5.5, Fable and Mythos 5.x; pointed to between_tools on Sonnet 5.5', async () => {
    const disabled = {thinking: {type: 'disabled'}}
    for (const model of [
      'claude-opus-5-5',
      'claude-fable-5',
      'claude-fable-5-1',
      'claude-mythos-5',
      'claude-mythos-5-1',
      'claude-mythos-5-1@2026',
      'corp+no-disabled',
    ])
      expect([model, (await post(ask(model, disabled))).message]).toEqual([model, E1])
    for (const model of ['claude-sonnet-5-5', 'corp+between-tools'])
      expect([model, (await post(ask(model, disabled))).message]).toEqual([model, E3])
  })

  it('disabled: on Sonnet 5, Opus 5, Haiku 5.5 at effort high or below only; any effort on Opus 4.8', async () => {
    for (const model of ['claude-sonnet-5', 'claude-opus-5', 'claude-haiku-5-5', 'corp+thinks-by-default']) {
      for (const effort of [undefined, 'low', 'medium', 'high']) {
        const {status, json} = await post(
          ask(model, {thinking: {type: 'disabled'}, ...(effort ? {output_config: {effort}} : {})}),
        )
        expect([model, effort, status, types(json)]).toEqual([model, effort, 200, ['text']])
      }
      for (const effort of ['xhigh', 'max'])
        expect(
          (await post(ask(model, {thinking: {type: 'disabled'}, output_config: {effort}}))).message,
        ).toBe(
          `"thinking.type" value "disabled" is not supported with "output_config.effort" value "${effort}" for this model`,
        )
    }
    const opus48 = await post(
      ask('claude-opus-4-8', {thinking: {type: 'disabled'}, output_config: {effort: 'max'}}),
    )
    expect([opus48.status, types(opus48.json)]).toEqual([200, ['text']])
  })

  it('between_tools: Sonnet 5.5 only; no thinking block without a tool call, one before a call', async () => {
    const between = {thinking: {type: 'between_tools'}}
    for (const model of ['claude-sonnet-5-5', 'corp+between-tools']) {
      const text = await post(ask(model, between))
      expect([text.status, types(text.json)]).toEqual([200, ['text']])
      expect(text.json?.usage.output_tokens).toBe(simTokens(text.json?.content[0].text))
      const tools = await post(
        ask(model, {...between, tools: TOOLS, messages: [{role: 'user', content: 'call the tool'}]}),
      )
      expect(types(tools.json)).toEqual(['thinking', 'tool_use'])
      expect(tools.json?.content[0]).toMatchObject({thinking: '', signature: expect.any(String)})
      // a tool offered, not called: text only
      const offered = await post(ask(model, {...between, tools: TOOLS}))
      expect(types(offered.json)).toEqual(['text'])
    }
    for (const model of [
      'claude-opus-5-5',
      'claude-sonnet-5',
      'claude-haiku-5-5',
      'claude-opus-4-8',
      'claude-x',
    ])
      expect([model, (await post(ask(model, between))).message]).toEqual([model, E4])
  })

  it('between_tools: effort high or below, and no other field', async () => {
    const model = 'claude-sonnet-5-5'
    for (const effort of ['low', 'medium', 'high'])
      expect(
        (await post(ask(model, {thinking: {type: 'between_tools'}, output_config: {effort}}))).status,
      ).toBe(200)
    expect(
      (await post(ask(model, {thinking: {type: 'between_tools'}, output_config: {effort: 'xhigh'}}))).message,
    ).toBe(
      '"thinking.type" value "between_tools" is not supported with "output_config.effort" value "xhigh" for this model',
    )
    for (const [field, value] of [
      ['display', 'summarized'],
      ['budget_tokens', 1024],
      ['block_binding', {prefix_mismatch_behavior: 'drop_block'}],
    ] as const) {
      const {status, message} = await post(ask(model, {thinking: {type: 'between_tools', [field]: value}}), {
        'anthropic-beta': BETA,
      })
      expect([status, message]).toEqual([
        400,
        `thinking.between_tools.${field}: Extra inputs are not permitted`,
      ])
    }
  })

  it('enabled: refused on Opus 4.7 on and every Claude 5', async () => {
    for (const model of ['claude-opus-4-7', 'claude-opus-4-8', ...CLAUDE_5])
      expect([
        model,
        (await post(ask(model, {thinking: {type: 'enabled', budget_tokens: 1024}}))).message,
      ]).toEqual([model, E2])
  })

  it('sampling: temperature, top_p, top_k refused on every Claude 5', async () => {
    for (const model of CLAUDE_5)
      for (const field of ['temperature', 'top_p', 'top_k'])
        expect([model, (await post(ask(model, {[field]: 1}))).message]).toEqual([
          model,
          `\`${field}\` is deprecated for this model.`,
        ])
  })
})

describe('forced tool choice', () => {
  const forcedBodies = (model: string, extra: Json = {}) => [
    ask(model, {tools: TOOLS, tool_choice: {type: 'any'}, ...extra}),
    ask(model, {tools: TOOLS, tool_choice: {type: 'tool', name: 'lookup'}, ...extra}),
  ]

  it('refused on Opus 5.5, Sonnet 5.5, Fable 5.1, Mythos 5.1, on Messages and token counting', async () => {
    for (const model of [
      'claude-opus-5-5',
      'claude-sonnet-5-5',
      'claude-fable-5-1',
      'claude-mythos-5-1',
      'corp+no-forced-tools',
    ])
      for (const body of forcedBodies(model)) {
        expect([model, (await post(body)).message]).toEqual([model, E5])
        expect([model, (await post(body, {}, '/v1/messages/count_tokens')).message]).toEqual([model, E5])
      }
    // auto and none are taken
    for (const type of ['auto', 'none'])
      expect((await post(ask('claude-opus-5-5', {tools: TOOLS, tool_choice: {type}}))).status).toBe(200)
  })

  it('refused while thinking is on, where forcing is taken', async () => {
    // thinking by default, or adaptive sent
    for (const model of ['claude-sonnet-5', 'claude-opus-5', 'claude-haiku-5-5', 'corp+thinks-by-default'])
      for (const body of forcedBodies(model)) expect([model, (await post(body)).message]).toEqual([model, E6])
    for (const model of ['claude-opus-4-7', 'claude-opus-4-8', 'claude-sonnet-5', 'corp+adaptive-only'])
      for (const body of forcedBodies(model, {thinking: {type: 'adaptive'}}))
        expect([model, (await post(body)).message]).toEqual([model, E6])
    // enabled on any model
    for (const model of ['claude-x', 'claude-sonnet-4-5', 'claude-sonnet-4-6'])
      for (const body of forcedBodies(model, {thinking: {type: 'enabled', budget_tokens: 1024}}))
        expect([model, (await post(body)).message]).toEqual([model, E6])
  })

  it('taken with thinking off, and where adaptive thinking may go with it', async () => {
    const cases: Array<[string, Json]> = [
      ['claude-sonnet-5', {thinking: {type: 'disabled'}}],
      ['claude-haiku-5-5', {thinking: {type: 'disabled'}, output_config: {effort: 'high'}}],
      ['claude-opus-4-8', {}],
      ['claude-x', {}],
      ['claude-x', {thinking: {type: 'adaptive'}}],
      ['claude-sonnet-4-6', {thinking: {type: 'adaptive'}}],
      // Fable 5 and Mythos 5 always think, and take forcing (Fable 5.1 is the change)
      ['claude-fable-5', {}],
      ['claude-mythos-5', {thinking: {type: 'adaptive'}}],
    ]
    for (const [model, extra] of cases)
      for (const body of forcedBodies(model, extra)) {
        const {status, json} = await post(body)
        expect([model, status, types(json).at(-1)]).toEqual([model, 200, 'tool_use'])
      }
  })
})

describe('prefill', () => {
  const prefilled = (model: string) => ({
    ...ask(model),
    messages: [
      {role: 'user', content: 'Say hello.'},
      {role: 'assistant', content: [{type: 'text', text: 'Hello'}]},
    ],
  })

  it('refused on Opus and Sonnet 4.6 and every later model', async () => {
    for (const model of [
      'claude-opus-4-6',
      'claude-sonnet-4-6',
      'claude-opus-4-7',
      'claude-opus-4-8',
      ...CLAUDE_5,
      'claude-x+no-prefill',
    ]) {
      expect([model, (await post(prefilled(model))).message]).toEqual([model, E7])
      // a string content too
      const text = {
        ...prefilled(model),
        messages: [
          {role: 'user', content: 'Hi'},
          {role: 'assistant', content: 'Hel'},
        ],
      }
      expect([model, (await post(text)).message]).toEqual([model, E7])
    }
  })

  it('taken on Claude 4.5 and models not named', async () => {
    for (const model of ['claude-sonnet-4-5', 'claude-haiku-4-5', 'claude-x'])
      expect([model, (await post(prefilled(model))).status]).toEqual([model, 200])
  })

  it('a paused turn sent back to go on is no prefill (Opus 5.5, its thinking bound)', async () => {
    const body = {
      model: 'claude-opus-5-5+pause-turn',
      max_tokens: 100,
      tools: [{type: 'web_search_20250305', name: 'web_search'}],
      messages: [{role: 'user', content: 'vitest docs, 2 searches'}],
    }
    const one = await post(body)
    expect([one.json?.stop_reason, types(one.json)]).toEqual([
      'pause_turn',
      ['thinking', 'server_tool_use', 'web_search_tool_result'],
    ])
    const two = await post({
      ...body,
      messages: [...body.messages, {role: 'assistant', content: one.json?.content}],
    })
    expect([two.status, two.json?.stop_reason]).toEqual([200, 'pause_turn'])
    const turn = [...(one.json?.content as Json[]), ...(two.json?.content as Json[])]
    const three = await post({...body, messages: [...body.messages, {role: 'assistant', content: turn}]})
    expect([three.status, three.json?.stop_reason]).toEqual([200, 'end_turn'])
    // a turn ending with the server tool's call (not its result) is a continuation too
    const call = await post({
      ...body,
      model: 'claude-opus-5-5',
      messages: [...body.messages, {role: 'assistant', content: one.json?.content.slice(0, 2)}],
    })
    expect(call.message).not.toBe(E7)
    // one that ends with text after the searches is a prefill
    const text = await post({
      ...body,
      messages: [...body.messages, {role: 'assistant', content: [...turn, {type: 'text', text: 'So'}]}],
    })
    expect(text.message).toBe(E7)
  })
})

describe('prefix binding of thinking blocks', () => {
  const MODEL = 'claude-opus-5-5'
  const system = [{type: 'text', text: 'You are terse.', cache_control: {type: 'ephemeral'}}]
  const first = {
    model: MODEL,
    max_tokens: 100,
    system,
    thinking: {type: 'adaptive'},
    tools: TOOLS,
    messages: [{role: 'user', content: 'call the tool'}],
  }
  const result = (assistant: Json[]) => ({
    role: 'user',
    content: [
      {type: 'tool_result', tool_use_id: assistant.find((b) => b.type === 'tool_use')?.id, content: 'sunny'},
    ],
  })

  /**
   * Three answers of one conversation: A (thinking, call), B (thinking, text), C (thinking, call),
   * and the history that sends them all back with C's result.
   */
  async function conversation(): Promise<Json[]> {
    const a = (await post(first)).json!
    expect(types(a)).toEqual(['thinking', 'tool_use'])
    const h1 = [...first.messages, {role: 'assistant', content: a.content}, result(a.content)]
    const b = await post({...first, messages: h1})
    expect([b.status, types(b.json)]).toEqual([200, ['thinking', 'text']])
    const h2 = [
      ...h1,
      {role: 'assistant', content: b.json?.content},
      {role: 'user', content: 'call the tool again'},
    ]
    const c = await post({...first, messages: h2})
    expect([c.status, types(c.json)]).toEqual([200, ['thinking', 'tool_use']])
    return [...h2, {role: 'assistant', content: c.json?.content}, result(c.json?.content)]
  }

  /** The history without the thinking blocks of the assistant messages at `at`. */
  const without = (history: Json[], ...at: number[]) =>
    history.map((m, n) =>
      at.includes(n) ? {...m, content: m.content.filter((b: Json) => b.type !== 'thinking')} : m,
    )

  it('takes back what it answered, turn after turn; the signature differs from an unbound one', async () => {
    const history = await conversation()
    const last = await post({...first, messages: history})
    expect([last.status, types(last.json)]).toEqual([200, ['thinking', 'text']])
    const a = history[1].content[0]
    expect(a.signature).not.toBe(thinkingSignature(''))
    expect(Buffer.from(a.signature, 'base64').toString()).toMatch(
      /^simsig:[0-9a-f]{32}\.[0-9a-f]{16}\.0:[0-9a-f]{32}$/,
    )
  })

  it('reads the prefix as content: key order, formatting, cache marks, a string as a text block', async () => {
    const history = await conversation()
    const reordered = {
      messages: history.map((m, n) =>
        n === 0
          ? {
              content: [{text: 'call the tool', type: 'text', cache_control: {type: 'ephemeral'}}],
              role: 'user',
            }
          : m,
      ),
      tools: [{input_schema: {type: 'object'}, name: 'lookup'}],
      thinking: {type: 'adaptive'},
      system: 'You are terse.',
      max_tokens: 100,
      model: MODEL,
    }
    const spaced = JSON.stringify(reordered, null, 2)
    expect((await post(spaced)).status).toBe(200)
  })

  it('refuses a block whose earlier turn was edited, naming the block; with the beta, without its sentence', async () => {
    const history = await conversation()
    const edited = [{role: 'user', content: 'call the tool, please'}, ...history.slice(1)]
    expect((await post({...first, messages: edited})).message).toBe(e9('messages.1.content.0', false))
    expect(
      (await post({...first, messages: edited}, {'anthropic-beta': `other-beta, ${BETA}`})).message,
    ).toBe(e9('messages.1.content.0', true))
    // the system or the tools changed: every block is bound to another prefix
    expect((await post({...first, system: 'Be verbose.', messages: history})).message).toBe(
      e9('messages.1.content.0', false),
    )
    expect(
      (
        await post({
          ...first,
          tools: [...TOOLS, {name: 'more', input_schema: {type: 'object'}}],
          messages: history,
        })
      ).message,
    ).toBe(e9('messages.1.content.0', false))
    // a later message edited: the blocks after it only
    const later = history.map((m, n) => (n === 4 ? {role: 'user', content: 'call it again'} : m))
    expect((await post({...first, messages: later})).message).toBe(e9('messages.5.content.0', false))
  })

  it('drop_block with the beta: the block and every later one left out, the answer says so', async () => {
    const history = await conversation()
    const edited = [{role: 'user', content: 'call the tool, please'}, ...history.slice(1)]
    const binding = {type: 'adaptive', block_binding: {prefix_mismatch_behavior: 'drop_block'}}
    const dropped = await post({...first, thinking: binding, messages: edited}, {'anthropic-beta': BETA})
    expect([dropped.status, types(dropped.json)]).toEqual([200, ['thinking', 'text']])
    expect(dropped.json?.input_transformations).toEqual(
      [1, 3, 5].map((n) => ({
        type: 'thinking_dropped',
        reason: 'prefix_binding_mismatch',
        message_index: n,
        content_index: 0,
      })),
    )
    // streamed: on message_start
    const stream = await post(
      {...first, thinking: binding, messages: edited, stream: true},
      {'anthropic-beta': BETA},
    )
    expect(stream.events[0].data.message.input_transformations).toHaveLength(3)
    // nothing to drop: no input_transformations
    const clean = await post({...first, thinking: binding, messages: history}, {'anthropic-beta': BETA})
    expect([clean.status, clean.json?.input_transformations]).toEqual([200, undefined])
    // error, the default, refuses
    const error = {type: 'adaptive', block_binding: {prefix_mismatch_behavior: 'error'}}
    expect(
      (await post({...first, thinking: error, messages: edited}, {'anthropic-beta': BETA})).message,
    ).toBe(e9('messages.1.content.0', true))
  })

  it('block_binding without the beta header is an unknown field', async () => {
    const binding = {type: 'adaptive', block_binding: {prefix_mismatch_behavior: 'drop_block'}}
    for (const model of [MODEL, 'claude-x'])
      expect((await post({...first, model, thinking: binding})).message).toBe(
        'thinking.adaptive.block_binding: Extra inputs are not permitted',
      )
  })

  it('thinking blocks may be left out from the start, the end or all; not from the middle, nor put back', async () => {
    const history = await conversation()
    // A left out; A and B
    for (const at of [[1], [1, 3]])
      expect([at, (await post({...first, messages: without(history, ...at)})).status]).toEqual([at, 200])
    // C; all of them (no thinking field sent: the call needs no thinking block before it)
    const {thinking: _thinking, ...noThinking} = first
    for (const at of [[5], [1, 3, 5]])
      expect([at, (await post({...noThinking, messages: without(history, ...at)})).status]).toEqual([at, 200])
    // B left out of the middle: C's chain broken
    expect((await post({...first, messages: without(history, 3)})).message).toBe(
      e9('messages.5.content.0', false),
    )
    // C made while A was left out; A put back: C's chain broken
    const h = without(history.slice(0, 5), 1)
    const c = await post({...first, messages: h})
    expect(types(c.json)).toEqual(['thinking', 'tool_use'])
    const back = [
      ...history.slice(0, 5),
      {role: 'assistant', content: c.json?.content},
      result(c.json?.content),
    ]
    expect((await post({...first, messages: back})).message).toBe(e9('messages.5.content.0', false))
    expect((await post({...first, messages: without(back, 1)})).status).toBe(200)
  })

  it('an unbound block is refused where the check runs, and a bound one taken where it does not', async () => {
    const unbound = [
      ...first.messages,
      {
        role: 'assistant',
        content: [
          {type: 'thinking', thinking: '', signature: thinkingSignature('')},
          {type: 'tool_use', id: 'toolu_1', name: 'lookup', input: {}},
        ],
      },
      {role: 'user', content: [{type: 'tool_result', tool_use_id: 'toolu_1', content: 'sunny'}]},
    ]
    for (const model of [
      'claude-opus-5-5',
      'claude-sonnet-5-5',
      'claude-haiku-5-5',
      'claude-fable-5-1',
      'corp+prefix-binding',
    ])
      expect([model, (await post({...first, model, messages: unbound})).message]).toEqual([
        model,
        e9('messages.1.content.0', false),
      ])
    for (const model of ['claude-mythos-5-1', 'claude-opus-5', 'claude-sonnet-5', 'claude-x'])
      expect([model, (await post({...first, model, messages: unbound})).status]).toEqual([model, 200])
    // a bound block (edited prefix and all) on a model without the check
    const history = await conversation()
    const edited = [{role: 'user', content: 'call the tool, please'}, ...history.slice(1)]
    expect((await post({...first, model: 'claude-opus-5', messages: edited})).status).toBe(200)
  })

  it('a block whose text or signature was changed is still an invalid signature, bound or not', async () => {
    const history = await conversation()
    const block = history[1].content[0]
    for (const changed of [
      {...block, thinking: 'edited'},
      {...block, signature: Buffer.from('simsig:' + 'a'.repeat(32)).toString('base64')},
      // its binding changed, its hash kept
      {
        ...block,
        signature: Buffer.from(
          Buffer.from(block.signature, 'base64')
            .toString()
            .replace(/^simsig:./, (s: string) => (s.endsWith('0') ? 'simsig:1' : 'simsig:0')),
        ).toString('base64'),
      },
    ]) {
      const messages = history.map((m, n) =>
        n === 1 ? {...m, content: [changed, ...m.content.slice(1)]} : m,
      )
      expect((await post({...first, messages})).message).toBe(
        'messages.1.content.0: Invalid `signature` in `thinking` block',
      )
    }
  })
})
