/**
 * Property-based tests of the translation layer: odd but legal wire input (as the official SDKs,
 * the agent CLIs and real upstreams send it) through the decoders and encoders the translated
 * route uses. A request either translates, keeping each target's structural rules and the user's
 * words, or is refused with a TranslationError (a 400); a stream is translated without a throw
 * into a well-formed client stream that keeps its text and tool arguments. Seeded: CI sees the
 * same cases every run.
 */
import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {BoundedCarry} from './carry.js'
import {REASONING_BETWEEN} from './cm-common.js'
import type {Family} from './ir.js'
import {
  decodeClientRequest,
  encodeUpstreamRequest,
  StreamTranslator,
  translateResponseText,
  TranslationError,
} from './translate.js'

const FAMILIES: Family[] = ['chat', 'responses', 'messages', 'gemini']
// (FUZZ_SEED / FUZZ_RUNS: a longer hunt by hand, FUZZ_SHOW=1 printing refusals and failing bodies;
// CI runs the seeded default)
const SEED = Number(process.env.FUZZ_SEED ?? 20261128)
const RUNS = Number(process.env.FUZZ_RUNS ?? 200)

// ---------------------------------------------------------------------------------------------
// Text: ASCII, any code point, lone surrogates (a truncated emoji in a pasted log), JSON-ish
// ---------------------------------------------------------------------------------------------

const oddChar = fc.constantFrom(
  '\uD83D',
  '\uDE00',
  '\u0000',
  '\u2028',
  '"',
  '\\',
  '\n',
  '</s>',
  '<think>',
  ' ',
)
const text = fc.oneof(
  {weight: 3, arbitrary: fc.string({maxLength: 12})},
  {weight: 1, arbitrary: fc.string({unit: 'binary', maxLength: 8})},
  {
    weight: 1,
    arbitrary: fc.string({
      unit: fc.oneof(fc.string({unit: 'grapheme', minLength: 1, maxLength: 1}), oddChar),
      maxLength: 8,
    }),
  },
  {weight: 1, arbitrary: fc.constant('')},
)
/** A non-empty user text, tagged so that the output can be searched for it. */
const userText = fc.tuple(fc.nat(1_000_000), text).map(([n, t]) => `u${n}:${t}`)
const toolName = fc.oneof(
  fc.constantFrom('Bash', 'read_file', 'mcp__github__create_issue', 'a', 'x-y.z', 'tool with space'),
  fc.stringMatching(/^[a-zA-Z_][a-zA-Z0-9_-]{0,20}$/),
)
const callId = fc.oneof(
  fc.constantFrom('call_1', 'toolu_01', 'fc_abc', 'call:0', 'functions.Bash:0', 'x'),
  fc.stringMatching(/^[a-zA-Z0-9_:.-]{1,16}$/),
)
const jsonValue = fc.jsonValue({maxDepth: 2})
const args = fc.dictionary(fc.string({maxLength: 6}), jsonValue, {maxKeys: 3})
const extra = fc.option(
  fc.dictionary(fc.constantFrom('x_extra', 'metadata_x', 'foo'), jsonValue, {maxKeys: 2}),
  {
    nil: undefined,
  },
)
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='

// ---------------------------------------------------------------------------------------------
// One abstract conversation, rendered in each family's wire shape
// ---------------------------------------------------------------------------------------------

interface Call {
  id: string
  name: string
  args: Record<string, unknown>
}
type ResultContent = {kind: 'string'; text: string} | {kind: 'parts'; texts: string[]} | {kind: 'empty'}
interface Round {
  user: {texts: string[]; image: boolean; asString: boolean}
  reply?: {
    text: string | null
    reasoning?: {text: string; signature?: string}
    calls: Call[]
    results: Array<{content: ResultContent; isError: boolean}>
  }
}
interface Conversation {
  system?: {text: string; blocks: boolean}
  rounds: Round[]
  tools: string[]
  stream: boolean
  nulls: boolean
  extra?: Record<string, unknown>
}

const resultContent: fc.Arbitrary<ResultContent> = fc.oneof(
  fc.record({kind: fc.constant('string' as const), text}),
  fc.record({kind: fc.constant('parts' as const), texts: fc.array(text, {maxLength: 3})}),
  fc.constant({kind: 'empty' as const}),
)

const round: fc.Arbitrary<Round> = fc.record(
  {
    user: fc.record({
      texts: fc.array(userText, {minLength: 1, maxLength: 3}),
      image: fc.boolean(),
      asString: fc.boolean(),
    }),
    reply: fc
      .record(
        {
          text: fc.option(text, {nil: null}),
          reasoning: fc.record(
            {text, signature: fc.stringMatching(/^[A-Za-z0-9+/=]{1,24}$/)},
            {requiredKeys: ['text']},
          ),
          calls: fc.uniqueArray(fc.record({id: callId, name: toolName, args}), {
            maxLength: 3,
            selector: (c) => c.id,
          }),
          results: fc.array(fc.record({content: resultContent, isError: fc.boolean()}), {
            minLength: 3,
            maxLength: 3,
          }),
        },
        {requiredKeys: ['text', 'calls', 'results']},
      )
      .map((r) => ({...r, results: r.results.slice(0, r.calls.length)})),
  },
  {requiredKeys: ['user']},
)

const conversation: fc.Arbitrary<Conversation> = fc
  .record(
    {
      system: fc.record({text, blocks: fc.boolean()}),
      rounds: fc.array(round, {minLength: 1, maxLength: 4}),
      stream: fc.boolean(),
      nulls: fc.boolean(),
      extra,
    },
    {requiredKeys: ['rounds', 'stream', 'nulls']},
  )
  .map((c) => {
    // (every call's tool offered, as a client does; ids unique over the whole conversation)
    const tools = new Set<string>()
    const ids = new Set<string>()
    for (const r of c.rounds) {
      if (!r.reply) continue
      r.reply.calls = r.reply.calls.filter((call) => !ids.has(call.id) && ids.add(call.id))
      r.reply.results = r.reply.results.slice(0, r.reply.calls.length)
      for (const call of r.reply.calls) tools.add(call.name)
    }
    return {...c, tools: [...tools]}
  })

const schema = {type: 'object', properties: {}}

function resultText(c: ResultContent): string {
  return c.kind === 'string' ? c.text : c.kind === 'parts' ? c.texts.join('') : ''
}

function renderChat(c: Conversation): Record<string, unknown> {
  const messages: unknown[] = []
  if (c.system)
    messages.push({
      role: c.nulls ? 'developer' : 'system',
      content: c.system.blocks ? [{type: 'text', text: c.system.text}] : c.system.text,
    })
  for (const r of c.rounds) {
    const parts: unknown[] = r.user.texts.map((t) => ({type: 'text', text: t}))
    if (r.user.image) parts.push({type: 'image_url', image_url: {url: `data:image/png;base64,${PNG}`}})
    messages.push({
      role: 'user',
      content: r.user.asString && !r.user.image ? r.user.texts.join('\n') : parts,
      ...(c.nulls ? {name: null} : {}),
    })
    if (!r.reply) continue
    const a = r.reply
    const message: Record<string, unknown> = {role: 'assistant', content: a.text}
    if (a.text === null && !c.nulls) delete message.content
    if (a.reasoning) message.reasoning_content = a.reasoning.text
    if (a.calls.length > 0)
      message.tool_calls = a.calls.map((call) => ({
        id: call.id,
        type: 'function',
        function: {name: call.name, arguments: JSON.stringify(call.args)},
      }))
    else if (c.nulls) message.tool_calls = null
    messages.push(message)
    a.calls.forEach((call, i) => {
      const content = a.results[i].content
      messages.push({
        role: 'tool',
        tool_call_id: call.id,
        content:
          content.kind === 'parts'
            ? content.texts.map((t) => ({type: 'text', text: t}))
            : resultText(content),
      })
    })
  }
  return {
    model: 'gpt-x',
    messages,
    ...(c.tools.length > 0
      ? {tools: c.tools.map((name) => ({type: 'function', function: {name, parameters: schema}}))}
      : c.nulls
        ? {tools: []}
        : {}),
    ...(c.stream ? {stream: true, stream_options: {include_usage: true}} : {}),
    ...(c.nulls ? {temperature: null, max_tokens: null, tool_choice: c.tools.length ? 'auto' : null} : {}),
    ...c.extra,
  }
}

function renderResponses(c: Conversation): Record<string, unknown> {
  const input: unknown[] = []
  for (const r of c.rounds) {
    const content: unknown[] = r.user.texts.map((t) => ({type: 'input_text', text: t}))
    if (r.user.image)
      content.push({type: 'input_image', image_url: `data:image/png;base64,${PNG}`, detail: 'auto'})
    input.push({
      ...(c.nulls ? {type: 'message'} : {}),
      role: 'user',
      content: r.user.asString && !r.user.image ? r.user.texts.join('\n') : content,
    })
    if (!r.reply) continue
    const a = r.reply
    if (a.reasoning)
      input.push({
        type: 'reasoning',
        id: 'rs_1',
        summary: a.reasoning.text ? [{type: 'summary_text', text: a.reasoning.text}] : [],
        ...(a.reasoning.signature ? {encrypted_content: a.reasoning.signature} : {}),
        ...(c.nulls ? {content: null} : {}),
      })
    if (a.text !== null)
      input.push({
        type: 'message',
        role: 'assistant',
        content: [{type: 'output_text', text: a.text, annotations: []}],
        ...(c.nulls ? {id: 'msg_1', status: 'completed'} : {}),
      })
    for (const call of a.calls)
      input.push({
        type: 'function_call',
        call_id: call.id,
        name: call.name,
        arguments: JSON.stringify(call.args),
        ...(c.nulls ? {id: `fc_${call.id}`, status: 'completed'} : {}),
      })
    a.calls.forEach((call, i) => {
      const content = a.results[i].content
      input.push({
        type: 'function_call_output',
        call_id: call.id,
        output:
          content.kind === 'parts'
            ? content.texts.map((t) => ({type: 'input_text', text: t}))
            : resultText(content),
      })
    })
  }
  return {
    model: 'gpt-x',
    input,
    ...(c.system ? {instructions: c.system.text} : c.nulls ? {instructions: null} : {}),
    ...(c.tools.length > 0
      ? {tools: c.tools.map((name) => ({type: 'function', name, parameters: schema, strict: false}))}
      : {}),
    ...(c.stream ? {stream: true} : {}),
    ...(c.nulls ? {store: false, reasoning: {effort: 'medium', summary: 'auto'}, include: []} : {}),
    ...c.extra,
  }
}

function renderMessages(c: Conversation): Record<string, unknown> {
  const messages: Array<{role: string; content: unknown}> = []
  const push = (role: string, content: unknown[]): void => {
    // consecutive user turns go as one (tool results, then the next prompt), as Claude Code sends them
    const last = messages.at(-1)
    if (last && last.role === role && Array.isArray(last.content)) last.content.push(...content)
    else messages.push({role, content})
  }
  for (const r of c.rounds) {
    const parts: unknown[] = r.user.texts.map((t) => ({type: 'text', text: t}))
    if (r.user.image)
      parts.push({type: 'image', source: {type: 'base64', media_type: 'image/png', data: PNG}})
    if (r.user.asString && !r.user.image && messages.at(-1)?.role !== 'user')
      messages.push({role: 'user', content: r.user.texts.join('\n')})
    else push('user', parts)
    if (!r.reply) continue
    const a = r.reply
    const content: unknown[] = []
    if (a.reasoning)
      content.push(
        a.reasoning.signature
          ? {type: 'thinking', thinking: a.reasoning.text, signature: a.reasoning.signature}
          : {type: 'redacted_thinking', data: 'EmwKAhgBEgy3'},
      )
    if (a.text) content.push({type: 'text', text: a.text})
    for (const call of a.calls)
      content.push({type: 'tool_use', id: call.id, name: call.name, input: call.args})
    // (an empty assistant turn is refused by Anthropic: a client never sends one)
    if (content.length === 0) content.push({type: 'text', text: '.'})
    messages.push({role: 'assistant', content})
    if (a.calls.length === 0) continue
    push(
      'user',
      a.calls.map((call, i) => {
        const res = a.results[i]
        const block: Record<string, unknown> = {type: 'tool_result', tool_use_id: call.id}
        if (res.content.kind === 'string') block.content = res.content.text
        else if (res.content.kind === 'parts')
          block.content = res.content.texts.map((t) => ({type: 'text', text: t}))
        if (res.isError) block.is_error = true
        return block
      }),
    )
  }
  return {
    model: 'claude-x',
    max_tokens: 1024,
    messages,
    ...(c.system
      ? {
          system: c.system.blocks
            ? [{type: 'text', text: c.system.text, cache_control: {type: 'ephemeral'}}]
            : c.system.text,
        }
      : {}),
    ...(c.tools.length > 0
      ? {tools: c.tools.map((name) => ({name, description: '', input_schema: schema}))}
      : {}),
    ...(c.stream ? {stream: true} : {}),
    ...(c.nulls ? {metadata: {user_id: 'u'}, thinking: {type: 'enabled', budget_tokens: 2048}} : {}),
    ...c.extra,
  }
}

function renderGemini(c: Conversation): Record<string, unknown> {
  const contents: unknown[] = []
  for (const r of c.rounds) {
    const parts: unknown[] = r.user.texts.map((t) => ({text: t}))
    if (r.user.image) parts.push({inlineData: {mimeType: 'image/png', data: PNG}})
    contents.push({role: 'user', parts})
    if (!r.reply) continue
    const a = r.reply
    const model: unknown[] = []
    if (a.reasoning)
      model.push({
        thought: true,
        text: a.reasoning.text,
        ...(a.reasoning.signature ? {thoughtSignature: a.reasoning.signature} : {}),
      })
    if (a.text) model.push({text: a.text})
    for (const call of a.calls)
      model.push({functionCall: {name: call.name, args: call.args, ...(c.nulls ? {} : {id: call.id})}})
    if (model.length === 0) model.push({text: '.'})
    contents.push({role: 'model', parts: model})
    if (a.calls.length === 0) continue
    contents.push({
      role: 'user',
      parts: a.calls.map((call, i) => ({
        functionResponse: {
          name: call.name,
          ...(c.nulls ? {} : {id: call.id}),
          response: a.results[i].isError
            ? {error: resultText(a.results[i].content)}
            : {output: resultText(a.results[i].content)},
        },
      })),
    })
  }
  return {
    contents,
    ...(c.system
      ? {
          systemInstruction: c.system.blocks
            ? {role: 'user', parts: [{text: c.system.text}]}
            : {parts: [{text: c.system.text}]},
        }
      : {}),
    ...(c.tools.length > 0
      ? {
          tools: [
            {functionDeclarations: c.tools.map((name) => ({name, description: '', parameters: schema}))},
          ],
        }
      : {}),
    ...(c.nulls ? {generationConfig: {temperature: 1, thinkingConfig: {includeThoughts: true}}} : {}),
    ...c.extra,
  }
}

const RENDER: Record<Family, (c: Conversation) => Record<string, unknown>> = {
  chat: renderChat,
  responses: renderResponses,
  messages: renderMessages,
  gemini: renderGemini,
}

// ---------------------------------------------------------------------------------------------
// The translated route's calls (src/daemon/router/proxy.ts `translateFor`)
// ---------------------------------------------------------------------------------------------

/** Refused by the decoder (a 400), or each target's body, or its refusal (a 400 for that target). */
type Outcome =
  {refused: string} | {bodies: Partial<Record<Family, Record<string, unknown>>>; refusals: string[]}

function translateAll(family: Family, body: unknown, stream: boolean): Outcome {
  const carry = new BoundedCarry()
  let client
  try {
    client = decodeClientRequest(family, body, {
      model: family === 'gemini' ? 'gemini-x' : undefined,
      stream,
      carry,
      toResponses: family === 'responses',
    })
  } catch (error) {
    if (error instanceof TranslationError) return {refused: error.message}
    throw error
  }
  const bodies: Partial<Record<Family, Record<string, unknown>>> = {}
  const refusals: string[] = []
  for (const target of FAMILIES) {
    try {
      const {body: out} = encodeUpstreamRequest(client, target, `${target}-model`, {carry})
      bodies[target] = JSON.parse(out.toString()) as Record<string, unknown>
    } catch (error) {
      if (!(error instanceof TranslationError)) throw error
      refusals.push(`${target}: ${error.message}`)
    }
  }
  return {bodies, refusals}
}

/** `text` with each lone surrogate as U+FFFD, as it goes upstream (translate.ts `upstreamBytes`). */
const wellFormed = (text: string): string => (text as string & {toWellFormed(): string}).toWellFormed()

/** Every string in a JSON value (keys too), for the search of the user's words. */
function strings(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value)
  else if (Array.isArray(value)) for (const v of value) strings(v, out)
  else if (value && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) {
      out.push(k)
      strings(v, out)
    }
  return out
}

// ---------------------------------------------------------------------------------------------
// Each target's structural rules
// ---------------------------------------------------------------------------------------------

function checkChat(body: Record<string, unknown>): void {
  const messages = body.messages as Array<Record<string, any>>
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]
    // (a history that ends in calls asks the model to go on from there: pairToolResults leaves it,
    // and no client sends one, as its own family refuses it too)
    if (
      m.role === 'assistant' &&
      Array.isArray(m.tool_calls) &&
      m.tool_calls.length > 0 &&
      i < messages.length - 1
    ) {
      const ids = m.tool_calls.map((c: any) => c.id)
      const answers = messages.slice(i + 1, i + 1 + ids.length)
      expect(answers.map((a) => a.role)).toEqual(ids.map(() => 'tool'))
      expect(answers.map((a) => a.tool_call_id).sort()).toEqual([...ids].sort())
    }
    if (m.role === 'tool') {
      // a tool message answers the assistant turn right before its run of tool messages
      let j = i - 1
      while (j >= 0 && messages[j].role === 'tool') j--
      expect(messages[j]?.role).toBe('assistant')
      expect((messages[j].tool_calls ?? []).map((c: any) => c.id)).toContain(m.tool_call_id)
    }
  }
}

function checkMessages(body: Record<string, unknown>): void {
  const messages = body.messages as Array<{role: string; content: any}>
  expect(messages[0]?.role).toBe('user')
  for (let i = 1; i < messages.length; i++) expect(messages[i].role).not.toBe(messages[i - 1].role)
  messages.forEach((m, i) => {
    if (m.role !== 'user' || !Array.isArray(m.content)) return
    const results = m.content.filter((b: any) => b.type === 'tool_result').map((b: any) => b.tool_use_id)
    if (results.length === 0) return
    const prev = messages[i - 1]
    const uses = Array.isArray(prev?.content)
      ? prev.content.filter((b: any) => b.type === 'tool_use').map((b: any) => b.id)
      : []
    for (const id of results) expect(uses).toContain(id)
  })
}

function checkGemini(body: Record<string, unknown>): void {
  const contents = body.contents as Array<{role: string; parts: any[]}>
  contents.forEach((c, i) => {
    const responses = c.parts.filter((p) => p.functionResponse).map((p) => p.functionResponse.name)
    if (responses.length === 0) return
    const prev = contents[i - 1]
    expect(prev?.role).toBe('model')
    const calls = prev.parts.filter((p) => p.functionCall).map((p) => p.functionCall.name)
    for (const name of responses) expect(calls).toContain(name)
  })
}

function checkResponses(body: Record<string, unknown>): void {
  const input = body.input
  if (!Array.isArray(input)) return
  const calls = new Set<string>()
  for (const item of input as Array<Record<string, any>>) {
    if (item.type === 'function_call') calls.add(item.call_id)
    if (item.type === 'function_call_output') expect(calls).toContain(item.call_id)
  }
}

const CHECK: Record<Family, (body: Record<string, unknown>) => void> = {
  chat: checkChat,
  responses: checkResponses,
  messages: checkMessages,
  gemini: checkGemini,
}

describe('fuzz: client requests through decode and encode', () => {
  for (const family of FAMILIES)
    it(`a ${family} request translates for every target, its turns paired and its user text kept`, () => {
      fc.assert(
        fc.property(conversation, (c) => {
          const out = translateAll(family, RENDER[family](c), c.stream)
          // (a well-formed conversation of tools offered: nothing to refuse)
          expect(out).not.toHaveProperty('refused')
          if (!('bodies' in out)) return
          expect(out.refusals).toEqual([])
          for (const target of FAMILIES) {
            const body = out.bodies[target]!
            CHECK[target](body)
            const all = strings(body)
            for (const r of c.rounds)
              for (const t of r.user.texts) {
                const kept = wellFormed(t)
                expect(
                  all.some((s) => s.includes(kept)),
                  `${target} lost ${JSON.stringify(t)}`,
                ).toBe(true)
              }
          }
        }),
        {seed: SEED, numRuns: RUNS},
      )
    })
})

// ---------------------------------------------------------------------------------------------
// Odd but legal pieces, spliced into a well-formed body: what some SDK or CLI sends somewhere
// ---------------------------------------------------------------------------------------------

const oddArgs = fc.oneof(
  fc.constantFrom('', '{}', '{"a":', 'null', '[]', '"s"', '{"a":1}{"b":2}', ' {"x": "\\ud83d"} '),
  args.map((a) => JSON.stringify(a)),
)
const oddChatMessage: fc.Arbitrary<unknown> = fc.oneof(
  fc.record({role: fc.constant('user'), content: fc.constantFrom('', [], null)}),
  fc.record({
    role: fc.constant('user'),
    content: fc.constantFrom(
      [{type: 'text', text: ''}],
      [{type: 'image_url', image_url: 'https://example.com/a.png'}],
      [{type: 'image_url', image_url: {url: 'https://example.com/a.png', detail: 'low'}}],
      [{type: 'input_audio', input_audio: {data: 'AAAA', format: 'wav'}}],
      [{type: 'file', file: {file_data: `data:application/pdf;base64,${PNG}`, filename: 'a.pdf'}}],
      [{type: 'refusal', refusal: 'no'}],
      [{type: 'text', text: 'hi', cache_control: {type: 'ephemeral'}}],
    ),
  }),
  fc.record({
    role: fc.constant('assistant'),
    content: fc.constantFrom('', null, [], [{type: 'text', text: 'a'}], [{type: 'refusal', refusal: 'r'}]),
    refusal: fc.constantFrom(null, 'no'),
    reasoning_content: fc.constantFrom(undefined, null, '', 'think'),
    reasoning: fc.constantFrom(undefined, null, 'think'),
  }),
  fc.record({
    role: fc.constant('assistant'),
    content: fc.constantFrom(null, ''),
    tool_calls: fc.array(
      fc.record({
        id: fc.oneof(callId, fc.constantFrom('', null as unknown as string)),
        type: fc.constantFrom('function', undefined),
        function: fc.record({name: fc.oneof(toolName, fc.constant('')), arguments: oddArgs}),
      }),
      {maxLength: 3},
    ),
  }),
  fc.record({
    role: fc.constant('tool'),
    tool_call_id: fc.oneof(callId, fc.constant('')),
    content: fc.constantFrom(
      '',
      [],
      [{type: 'text', text: 'r'}],
      [{type: 'image_url', image_url: {url: `data:image/png;base64,${PNG}`}}],
    ),
  }),
  fc.record({
    role: fc.constantFrom('system', 'developer'),
    content: fc.constantFrom('', [], [{type: 'text', text: 's'}]),
  }),
)
// (the deprecated `function` role is refused with a 400 by the decoder, chat.ts: not generated,
// as it would stop every case it is in before the rest is read)
const oddChatTop = fc.record(
  {
    tool_choice: fc.constantFrom(
      'none',
      'auto',
      'required',
      {type: 'function', function: {name: 'Bash'}},
      null,
    ),
    response_format: fc.constantFrom(
      {type: 'json_object'},
      {type: 'text'},
      {type: 'json_schema', json_schema: {name: 'x', schema: {type: 'object'}, strict: true}},
      {type: 'json_schema', json_schema: {name: 'x'}},
    ),
    stop: fc.constantFrom('\n', ['a', 'b'], [], null),
    reasoning_effort: fc.constantFrom('low', 'high', 'minimal', 'none', null),
    max_completion_tokens: fc.constantFrom(1, 0, null, 100000),
    n: fc.constantFrom(1, null),
    parallel_tool_calls: fc.boolean(),
    tools: fc.constantFrom(
      [],
      [{type: 'function', function: {name: 'Bash'}}],
      [{type: 'function', function: {name: 'Bash', parameters: {}}}],
      [
        {
          type: 'function',
          function: {name: 'Bash', description: null, parameters: {type: 'object'}, strict: true},
        },
      ],
      [{type: 'custom', custom: {name: 'apply_patch'}}],
    ),
  },
  {requiredKeys: []},
)

const oddMessagesBlock: fc.Arbitrary<unknown> = fc.constantFrom(
  {type: 'text', text: ''},
  {type: 'text', text: 'x', citations: null},
  {type: 'image', source: {type: 'url', url: 'https://example.com/a.png'}},
  {type: 'image', source: {type: 'base64', media_type: 'image/webp', data: PNG}},
  {type: 'document', source: {type: 'base64', media_type: 'application/pdf', data: PNG}, title: 'a'},
  {type: 'document', source: {type: 'text', media_type: 'text/plain', data: 'doc'}},
  {type: 'document', source: {type: 'url', url: 'https://example.com/a.pdf'}},
  {type: 'tool_result', tool_use_id: 'toolu_x', content: []},
  {
    type: 'tool_result',
    tool_use_id: 'toolu_x',
    content: [{type: 'image', source: {type: 'base64', media_type: 'image/png', data: PNG}}],
  },
  {type: 'search_result', source: 'https://e.com', title: 't', content: [{type: 'text', text: 's'}]},
)
const oddAssistantBlock: fc.Arbitrary<unknown> = fc.constantFrom(
  {type: 'thinking', thinking: '', signature: ''},
  {type: 'thinking', thinking: 'x'},
  {type: 'redacted_thinking', data: ''},
  {type: 'text', text: ''},
  {type: 'tool_use', id: 'toolu_x', name: 'Bash', input: {}},
  {type: 'tool_use', id: '', name: '', input: {}},
  {type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {query: 'q'}},
  {
    type: 'web_search_tool_result',
    tool_use_id: 'srvtoolu_1',
    content: [{type: 'web_search_result', url: 'https://e.com', title: 't', encrypted_content: 'e'}],
  },
  {
    type: 'web_search_tool_result',
    tool_use_id: 'srvtoolu_1',
    content: {type: 'web_search_tool_result_error', error_code: 'unavailable'},
  },
)
const oddMessagesMessage: fc.Arbitrary<unknown> = fc.oneof(
  fc.record({
    role: fc.constant('user'),
    content: fc.oneof(fc.constantFrom('', []), fc.array(oddMessagesBlock, {minLength: 1, maxLength: 3})),
  }),
  fc.record({
    role: fc.constant('assistant'),
    content: fc.oneof(
      fc.constantFrom('', [], 'a'),
      fc.array(oddAssistantBlock, {minLength: 1, maxLength: 3}),
    ),
  }),
)
const oddMessagesTop = fc.record(
  {
    system: fc.constantFrom(
      '',
      [],
      [{type: 'text', text: ''}],
      [{type: 'text', text: 's', cache_control: {type: 'ephemeral', ttl: '1h'}}],
    ),
    tool_choice: fc.constantFrom(
      {type: 'auto'},
      {type: 'any'},
      {type: 'none'},
      {type: 'tool', name: 'Bash'},
      {type: 'auto', disable_parallel_tool_use: true},
    ),
    thinking: fc.constantFrom(
      {type: 'disabled'},
      {type: 'enabled', budget_tokens: 1024},
      {type: 'adaptive'},
      {type: 'enabled', budget_tokens: 0},
    ),
    tools: fc.constantFrom(
      [],
      [{name: 'Bash', input_schema: {type: 'object'}}],
      [{type: 'web_search_20250305', name: 'web_search', max_uses: 5}],
      [
        {
          type: 'custom',
          name: 'Bash',
          input_schema: {type: 'object', properties: {}},
          cache_control: {type: 'ephemeral'},
        },
      ],
      [{type: 'text_editor_20250728', name: 'str_replace_based_edit_tool'}],
    ),
    stop_sequences: fc.constantFrom([], ['\n\nHuman:']),
    temperature: fc.constantFrom(0, 1),
    top_k: fc.constantFrom(1),
    output_config: fc.constantFrom(
      {effort: 'low'},
      {format: {type: 'json_schema', schema: {type: 'object'}}},
    ),
  },
  {requiredKeys: []},
)

const oddResponsesItem: fc.Arbitrary<unknown> = fc.constantFrom(
  {role: 'user', content: ''},
  {role: 'user', content: []},
  {role: 'developer', content: 'd'},
  {role: 'system', content: [{type: 'input_text', text: ''}]},
  {type: 'message', role: 'user', content: [{type: 'input_image', image_url: 'https://example.com/a.png'}]},
  {
    type: 'message',
    role: 'user',
    content: [{type: 'input_file', file_data: `data:application/pdf;base64,${PNG}`, filename: 'a.pdf'}],
  },
  {type: 'message', role: 'assistant', content: []},
  {type: 'message', role: 'assistant', content: [{type: 'refusal', refusal: 'no'}]},
  {type: 'message', role: 'assistant', content: 'plain'},
  {type: 'reasoning', id: 'rs_2', summary: []},
  {type: 'reasoning', id: 'rs_3', summary: [], encrypted_content: null},
  {
    type: 'reasoning',
    summary: [{type: 'summary_text', text: ''}],
    content: [{type: 'reasoning_text', text: 'r'}],
  },
  {type: 'function_call', call_id: 'call_x', name: 'Bash', arguments: ''},
  {type: 'function_call', call_id: 'call_y', name: 'Bash', arguments: '{"a":'},
  {type: 'function_call_output', call_id: 'call_x', output: ''},
  {type: 'function_call_output', call_id: 'call_z', output: []},
  {
    type: 'function_call_output',
    call_id: 'call_x',
    output: [{type: 'input_image', image_url: `data:image/png;base64,${PNG}`}],
  },
  {type: 'custom_tool_call', call_id: 'call_c', name: 'apply_patch', input: '*** Begin Patch'},
  {type: 'custom_tool_call_output', call_id: 'call_c', output: 'done'},
  {type: 'local_shell_call', call_id: 'call_s', action: {type: 'exec', command: ['ls']}, status: 'completed'},
  {type: 'local_shell_call_output', call_id: 'call_s', output: 'a'},
  {type: 'web_search_call', id: 'ws_1', status: 'completed', action: {type: 'search', query: 'q'}},
  {type: 'item_reference', id: 'msg_1'},
)
const oddResponsesTop = fc.record(
  {
    input: fc.constantFrom('', 'just text', []),
    instructions: fc.constantFrom('', null),
    tool_choice: fc.constantFrom(
      'auto',
      'none',
      'required',
      {type: 'function', name: 'Bash'},
      {type: 'custom', name: 'apply_patch'},
    ),
    tools: fc.constantFrom(
      [],
      [{type: 'function', name: 'Bash', parameters: null, strict: null}],
      [
        {
          type: 'custom',
          name: 'apply_patch',
          description: 'p',
          format: {type: 'grammar', syntax: 'lark', definition: 'start: "x"'},
        },
      ],
      [{type: 'web_search'}],
      [{type: 'web_search_preview', search_context_size: 'low'}],
      [{type: 'local_shell'}],
    ),
    text: fc.constantFrom(
      {format: {type: 'text'}, verbosity: 'low'},
      {format: {type: 'json_schema', name: 'x', schema: {type: 'object'}, strict: true}},
    ),
    reasoning: fc.constantFrom(null, {effort: 'minimal'}, {effort: 'none'}, {summary: 'detailed'}),
    max_output_tokens: fc.constantFrom(null, 16),
    prompt_cache_key: fc.constantFrom('k'),
    include: fc.constantFrom(['reasoning.encrypted_content']),
  },
  {requiredKeys: []},
)

const oddGeminiContent: fc.Arbitrary<unknown> = fc.oneof(
  fc
    .record(
      {
        role: fc.constantFrom('user', 'model', undefined, 'function'),
        parts: fc.array(
          fc.constantFrom(
            {text: ''},
            {text: 'x', thought: true},
            {thought: true, thoughtSignature: 'c2ln'},
            {text: 'y', thoughtSignature: 'c2ln'},
            {inlineData: {mimeType: 'image/png', data: PNG}},
            {inlineData: {mimeType: 'application/pdf', data: PNG}},
            {fileData: {mimeType: 'image/png', fileUri: 'https://example.com/a.png'}},
            {functionCall: {name: 'Bash'}},
            {functionCall: {name: 'Bash', args: {}, id: ''}},
            {functionResponse: {name: 'Bash'}},
            {functionResponse: {name: 'Bash', response: {}}},
            {functionResponse: {name: 'Other', response: {output: 'o'}, id: 'nope'}},
            {executableCode: {language: 'PYTHON', code: 'print(1)'}},
            {codeExecutionResult: {outcome: 'OUTCOME_OK', output: '1'}},
          ),
          {maxLength: 3},
        ),
      },
      {requiredKeys: ['parts']},
    )
    // (a call in a user turn or a response in the model's is no client's: Gemini refuses both)
    .map((c) => ({
      ...c,
      parts: c.parts.filter((p) => !(c.role === 'model' ? 'functionResponse' in p : 'functionCall' in p)),
    })),
)
const oddGeminiTop = fc.record(
  {
    systemInstruction: fc.constantFrom(
      {parts: []},
      {parts: [{text: ''}]},
      {role: 'system', parts: [{text: 's'}]},
    ),
    tools: fc.constantFrom(
      [],
      [{functionDeclarations: []}],
      [{functionDeclarations: [{name: 'Bash'}]}],
      [{functionDeclarations: [{name: 'Bash', parametersJsonSchema: {type: 'object'}}]}],
      [{googleSearch: {}}],
      [{urlContext: {}}],
      [{codeExecution: {}}],
    ),
    toolConfig: fc.constantFrom(
      {functionCallingConfig: {mode: 'ANY'}},
      {functionCallingConfig: {mode: 'ANY', allowedFunctionNames: ['Bash']}},
      {functionCallingConfig: {mode: 'NONE'}},
      {functionCallingConfig: {mode: 'VALIDATED'}},
    ),
    generationConfig: fc.constantFrom(
      {},
      {maxOutputTokens: 0, stopSequences: []},
      {responseMimeType: 'application/json'},
      {responseMimeType: 'application/json', responseSchema: {type: 'OBJECT'}},
      {responseMimeType: 'application/json', responseJsonSchema: {type: 'object'}},
      {thinkingConfig: {thinkingBudget: -1}},
      {thinkingConfig: {thinkingBudget: 0}},
      {thinkingConfig: {thinkingLevel: 'low'}},
    ),
  },
  {requiredKeys: []},
)

/**
 * A body whose call ids are unique: a second call of an id already used gets an id of its own.
 * (Every API makes a call's id unique in its turn, Anthropic refuses a repeat, and the agent CLIs
 * send back the ids they were given; a repeat in a later turn, which a chat server that numbers
 * each turn's calls gives, pairs as it should and is left. The constant ids of the odd pieces
 * would repeat them within a turn or leave one unanswered beside an answered one, which no client
 * sends.)
 */
function uniqueCallIds(family: Family, body: Record<string, unknown>): void {
  const seen = new Set<string>()
  const fresh = (id: unknown): unknown => {
    if (typeof id !== 'string' || !seen.has(id)) {
      if (typeof id === 'string') seen.add(id)
      return id
    }
    const next = `${id}~${seen.size}`
    seen.add(next)
    return next
  }
  const list = body[ODD[family].list]
  if (!Array.isArray(list)) return
  for (const item of list as Array<Record<string, any>>) {
    if (!item || typeof item !== 'object') continue
    if (family === 'chat' && Array.isArray(item.tool_calls))
      for (const call of item.tool_calls) if (call && typeof call === 'object') call.id = fresh(call.id)
    if (family === 'messages' && Array.isArray(item.content))
      for (const block of item.content) if (block?.type === 'tool_use') block.id = fresh(block.id)
    if (family === 'responses' && item.type === 'function_call') item.call_id = fresh(item.call_id)
  }
}

/** Family -> where the odd pieces go: the body's list of turns, and top-level fields. */
const ODD: Record<
  Family,
  {list: string; item: fc.Arbitrary<unknown>; top: fc.Arbitrary<Record<string, unknown>>}
> = {
  chat: {list: 'messages', item: oddChatMessage, top: oddChatTop},
  responses: {list: 'input', item: oddResponsesItem, top: oddResponsesTop},
  messages: {list: 'messages', item: oddMessagesMessage, top: oddMessagesTop},
  gemini: {list: 'contents', item: oddGeminiContent, top: oddGeminiTop},
}

describe('fuzz: odd client requests', () => {
  for (const family of FAMILIES)
    it(`a ${family} request with odd pieces translates or is refused with a 400, never a throw`, () => {
      const odd = ODD[family]
      fc.assert(
        fc.property(
          conversation,
          fc.array(fc.tuple(fc.nat(), odd.item), {minLength: 1, maxLength: 3}),
          odd.top,
          (c, inserts, top) => {
            const body = RENDER[family](c)
            const list = body[odd.list]
            if (Array.isArray(list))
              for (const [at, item] of inserts) list.splice(at % (list.length + 1), 0, item)
            // (a copy, shared objects apart, as JSON: the odd pieces are constants, and this test writes
            // into the body)
            const full = JSON.parse(JSON.stringify({...body, ...top})) as Record<string, unknown>
            uniqueCallIds(family, full)
            const out = translateAll(family, full, c.stream)
            if (process.env.FUZZ_SHOW)
              for (const r of 'refused' in out ? [out.refused] : out.refusals)
                console.log(`REFUSED ${family}: ${r}`)
            if (!('bodies' in out)) return
            // (the decoder pairs calls and results whatever the client sent: pairToolResults)
            for (const [target, body] of Object.entries(out.bodies))
              try {
                CHECK[target as Family](body)
              } catch (e) {
                if (process.env.FUZZ_SHOW)
                  console.log('FAILED', target, JSON.stringify(full), JSON.stringify(body))
                throw e
              }
          },
        ),
        {seed: SEED, numRuns: RUNS},
      )
    })
})

// ---------------------------------------------------------------------------------------------
// Upstream streams: one abstract answer, written as each family's SSE, cut at any byte
// ---------------------------------------------------------------------------------------------

interface StreamCall {
  id: string
  name: string
  args: Record<string, unknown>
  /** Where its argument text is cut into pieces. */
  cuts: number[]
}
interface Answer {
  reasoning?: {pieces: string[]; signature?: string}
  text: string[]
  calls: StreamCall[]
  /** Text after the calls (a second text block). */
  after: string[]
  /** Interleaved thinking: a signed thinking block before each call but the first (Claude's, between tools). */
  between: boolean
  /** The upstream says why it stopped (a chat `finish_reason`…); else it ends without. */
  finish: boolean
  usage: 'none' | 'with-finish' | 'after'
  /** Each family's variations: chat's index/id/name on every piece, a `[DONE]`, pings… */
  variant: {
    repeatHead: boolean
    noIndex: boolean
    role: boolean
    done: boolean
    pings: boolean
    reasoningField: boolean
    /** Chat: `null`s where OpenAI writes them (`usage` with include_usage); Gemini: usage on every chunk. */
    nulls: boolean
    /** Messages: a tool_use's input whole in its start (no deltas); Gemini: the last text in the finish chunk. */
    whole: boolean
  }
}

// (no `<think>` in a stream's text: a chat upstream's content that opens with it is reasoning by
// design, chat-stream.ts)
const streamText = fc.oneof(
  fc.string({maxLength: 8}),
  fc.string({unit: 'binary', maxLength: 6}),
  fc.string({
    unit: fc.constantFrom('\uD83D', '\uDE00', 'é', '日', '😀', '"', '\\', '\n', '\r\n', ' ', 'data: x'),
    maxLength: 6,
  }),
)
const answer: fc.Arbitrary<Answer> = fc.record(
  {
    reasoning: fc.record(
      {
        pieces: fc.array(streamText, {minLength: 1, maxLength: 4}),
        signature: fc.stringMatching(/^[A-Za-z0-9+/]{4,16}$/),
      },
      {requiredKeys: ['pieces']},
    ),
    text: fc.array(streamText, {maxLength: 5}),
    after: fc.array(streamText, {maxLength: 2}),
    between: fc.boolean(),
    calls: fc.uniqueArray(
      fc.record({
        id: fc.stringMatching(/^call_[a-zA-Z0-9]{1,8}$/),
        name: fc.constantFrom('Bash', 'read_file', 'grep'),
        args,
        cuts: fc.array(fc.nat(60), {maxLength: 4}),
      }),
      {maxLength: 3, selector: (c) => c.id},
    ),
    finish: fc.boolean(),
    usage: fc.constantFrom('none' as const, 'with-finish' as const, 'after' as const),
    variant: fc.record({
      repeatHead: fc.boolean(),
      noIndex: fc.boolean(),
      role: fc.boolean(),
      done: fc.boolean(),
      pings: fc.boolean(),
      reasoningField: fc.boolean(),
      nulls: fc.boolean(),
      whole: fc.boolean(),
    }),
  },
  {requiredKeys: ['text', 'calls', 'after', 'between', 'finish', 'usage', 'variant']},
)

/** The thinking before call `k` of an answer with interleaved thinking. */
const betweenText = (k: number): string => `between ${k}`

/** The text and reasoning a client should read of `a` from `upstream` (what that family carries). */
function expected(upstream: Family, a: Answer, client: Family): {text: string; reasoning: string} {
  const interleaved = upstream === 'messages' || upstream === 'responses'
  const blocks = [a.reasoning?.pieces.join('') ?? '']
  if (interleaved && a.between) for (let k = 1; k < a.calls.length; k++) blocks.push(betweenText(k))
  // (a chat client's one reasoning field: each block's text a paragraph of its own)
  const reasoning = blocks.filter(Boolean).join(client === 'chat' ? REASONING_BETWEEN : '')
  return {text: a.text.join('') + (interleaved ? a.after.join('') : ''), reasoning}
}

/** A call's argument text cut at its cut points. */
function argPieces(call: StreamCall): string[] {
  const json = JSON.stringify(call.args)
  const points = [...new Set(call.cuts.map((c) => c % (json.length + 1)))].sort((a, b) => a - b)
  const out: string[] = []
  let last = 0
  for (const p of points) {
    out.push(json.slice(last, p))
    last = p
  }
  out.push(json.slice(last))
  return out
}

const data = (value: unknown): string => `data: ${JSON.stringify(value)}\n\n`
const named = (event: string, value: Record<string, unknown>): string =>
  `event: ${event}\n${data({type: event, ...value})}`

function chatUpstream(a: Answer): string {
  const v = a.variant
  const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra = {}): string =>
    data({
      ...(v.nulls ? {usage: null} : {}),
      id: 'chatcmpl-1',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'up',
      choices: [{index: 0, delta, finish_reason: finish}],
      ...extra,
    })
  const usage = {prompt_tokens: 10, completion_tokens: 5, total_tokens: 15}
  // (Azure OpenAI's first chunk: no choices, its prompt's filter results)
  let out = v.pings
    ? data({
        id: '',
        object: '',
        created: 0,
        model: '',
        choices: [],
        prompt_filter_results: [{prompt_index: 0}],
      })
    : ''
  if (v.role) out += chunk({role: 'assistant', content: ''})
  for (const piece of a.reasoning?.pieces ?? [])
    out += chunk({[v.reasoningField ? 'reasoning' : 'reasoning_content']: piece})
  for (const piece of a.text)
    out += chunk({content: piece, ...(v.nulls ? {role: 'assistant', tool_calls: null} : {})})
  // (Gemini's OpenAI-compatible endpoint: each call whole in a chunk of its own, with no index)
  if (v.noIndex && v.whole)
    for (const call of a.calls)
      out += chunk({
        tool_calls: [
          {id: call.id, type: 'function', function: {name: call.name, arguments: JSON.stringify(call.args)}},
        ],
      })
  else
    a.calls.forEach((call, index) => {
      argPieces(call).forEach((piece, i) => {
        const head = i === 0 || v.repeatHead
        out += chunk({
          tool_calls: [
            {
              // (an index left out only after a call's first piece, and only with one call: as the
              // servers that leave it out do; without an index two calls' pieces cannot be told apart)
              ...(v.noIndex && i > 0 && a.calls.length === 1 ? {} : {index}),
              ...(head ? {id: call.id, type: 'function'} : {}),
              // (`arguments: null` in a call's head, as some servers write an empty start)
              function: {
                ...(head ? {name: call.name} : {}),
                arguments: v.nulls && piece === '' ? null : piece,
              },
            },
          ],
        })
      })
    })
  if (a.finish)
    out += chunk({}, a.calls.length ? 'tool_calls' : 'stop', a.usage === 'with-finish' ? {usage} : {})
  if (a.usage === 'after')
    out += data({
      id: 'chatcmpl-1',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'up',
      choices: [],
      usage,
    })
  if (v.done) out += 'data: [DONE]\n\n'
  return out
}

function messagesUpstream(a: Answer): string {
  const v = a.variant
  let out = named('message_start', {
    message: {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'up',
      content: [],
      stop_reason: null,
      usage: {input_tokens: 10, output_tokens: 1},
    },
  })
  let index = 0
  const ping = (): string => (v.pings ? named('ping', {}) : '')
  if (a.reasoning) {
    out += named('content_block_start', {
      index,
      content_block: {type: 'thinking', thinking: '', signature: ''},
    })
    for (const piece of a.reasoning.pieces)
      out += named('content_block_delta', {index, delta: {type: 'thinking_delta', thinking: piece}}) + ping()
    if (a.reasoning.signature)
      out += named('content_block_delta', {
        index,
        delta: {type: 'signature_delta', signature: a.reasoning.signature},
      })
    out += named('content_block_stop', {index})
    index++
  }
  if (a.text.length) {
    out += named('content_block_start', {index, content_block: {type: 'text', text: ''}})
    for (const piece of a.text)
      out += named('content_block_delta', {index, delta: {type: 'text_delta', text: piece}}) + ping()
    out += named('content_block_stop', {index})
    index++
  }
  a.calls.forEach((call, k) => {
    if (a.between && k > 0) {
      out += named('content_block_start', {
        index,
        content_block: {type: 'thinking', thinking: '', signature: ''},
      })
      out += named('content_block_delta', {index, delta: {type: 'thinking_delta', thinking: betweenText(k)}})
      out += named('content_block_delta', {index, delta: {type: 'signature_delta', signature: `sig${k}`}})
      out += named('content_block_stop', {index})
      index++
    }
    out += named('content_block_start', {
      index,
      content_block: {type: 'tool_use', id: call.id, name: call.name, input: v.whole ? call.args : {}},
    })
    // (an Anthropic-compatible server may give the input whole in the start, with no deltas)
    if (!v.whole)
      for (const piece of argPieces(call))
        out += named('content_block_delta', {index, delta: {type: 'input_json_delta', partial_json: piece}})
    out += named('content_block_stop', {index})
    index++
  })
  if (a.after.length) {
    out += named('content_block_start', {index, content_block: {type: 'text', text: ''}})
    for (const piece of a.after)
      out += named('content_block_delta', {index, delta: {type: 'text_delta', text: piece}})
    out += named('content_block_stop', {index})
    index++
  }
  if (a.finish) {
    out += named('message_delta', {
      delta: {stop_reason: a.calls.length ? 'tool_use' : 'end_turn', stop_sequence: null},
      usage: a.usage === 'none' ? {} : {output_tokens: 5},
    })
    out += named('message_stop', {})
  }
  return out
}

function responsesUpstream(a: Answer): string {
  let seq = 0
  const ev = (type: string, value: Record<string, unknown>): string =>
    named(type, {...value, sequence_number: seq++})
  const response = {
    id: 'resp_1',
    object: 'response',
    model: 'up',
    status: 'in_progress',
    output: [] as unknown[],
  }
  let out = ev('response.created', {response}) + ev('response.in_progress', {response})
  const output: unknown[] = []
  let oi = 0
  const reasoning = (id: string, pieces: string[], signature?: string): void => {
    const item = {type: 'reasoning', id, summary: [] as unknown[]}
    const at = {item_id: id, output_index: oi, summary_index: 0}
    out += ev('response.output_item.added', {output_index: oi, item})
    out += ev('response.reasoning_summary_part.added', {...at, part: {type: 'summary_text', text: ''}})
    for (const delta of pieces) out += ev('response.reasoning_summary_text.delta', {...at, delta})
    const text = pieces.join('')
    out += ev('response.reasoning_summary_text.done', {...at, text})
    out += ev('response.reasoning_summary_part.done', {...at, part: {type: 'summary_text', text}})
    const done = {
      ...item,
      summary: [{type: 'summary_text', text}],
      ...(signature ? {encrypted_content: signature} : {}),
    }
    out += ev('response.output_item.done', {output_index: oi, item: done})
    output.push(done)
    oi++
  }
  const message = (id: string, pieces: string[]): void => {
    const item = {type: 'message', id, role: 'assistant', status: 'in_progress', content: [] as unknown[]}
    const at = {item_id: id, output_index: oi, content_index: 0}
    out += ev('response.output_item.added', {output_index: oi, item})
    out += ev('response.content_part.added', {...at, part: {type: 'output_text', text: '', annotations: []}})
    for (const delta of pieces) out += ev('response.output_text.delta', {...at, delta, logprobs: []})
    const text = pieces.join('')
    out += ev('response.output_text.done', {...at, text})
    const part = {type: 'output_text', text, annotations: []}
    out += ev('response.content_part.done', {...at, part})
    const done = {...item, status: 'completed', content: [part]}
    out += ev('response.output_item.done', {output_index: oi, item: done})
    output.push(done)
    oi++
  }
  if (a.reasoning) reasoning('rs_1', a.reasoning.pieces, a.reasoning.signature)
  if (a.text.length) message('msg_1', a.text)
  a.calls.forEach((call, k) => {
    // (a reasoning model's reasoning item before each further call)
    if (a.between && k > 0) reasoning(`rs_b${k}`, [betweenText(k)], `enc${k}`)
    const id = `fc_${call.id}`
    const item = {
      type: 'function_call',
      id,
      call_id: call.id,
      name: call.name,
      arguments: '',
      status: 'in_progress',
    }
    out += ev('response.output_item.added', {output_index: oi, item})
    for (const delta of argPieces(call))
      out += ev('response.function_call_arguments.delta', {item_id: id, output_index: oi, delta})
    const json = JSON.stringify(call.args)
    out += ev('response.function_call_arguments.done', {item_id: id, output_index: oi, arguments: json})
    const done = {...item, arguments: json, status: 'completed'}
    out += ev('response.output_item.done', {output_index: oi, item: done})
    output.push(done)
    oi++
  })
  if (a.after.length) message('msg_2', a.after)
  if (a.finish)
    out += ev('response.completed', {
      response: {
        ...response,
        status: 'completed',
        output,
        ...(a.usage === 'none'
          ? {usage: null}
          : {
              usage: {
                input_tokens: 10,
                output_tokens: 5,
                total_tokens: 15,
                input_tokens_details: {cached_tokens: 0},
                output_tokens_details: {reasoning_tokens: 0},
              },
            }),
      },
    })
  return out
}

function geminiUpstream(a: Answer): string {
  const chunk = (parts: unknown[], top: Record<string, unknown> = {}): string =>
    data({
      candidates: [{content: {role: 'model', parts}, index: 0}],
      ...top,
      modelVersion: 'up',
      responseId: 'r1',
    })
  let out = ''
  if (a.reasoning) {
    a.reasoning.pieces.forEach((text, i) => {
      const last = i === a.reasoning!.pieces.length - 1
      out += chunk([
        {
          text,
          thought: true,
          ...(last && a.reasoning!.signature ? {thoughtSignature: a.reasoning!.signature} : {}),
        },
      ])
    })
  }
  const usage = {usageMetadata: {promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15}}
  // (the last text may come in the finish chunk, as Gemini sends it)
  const held = a.finish && a.variant.whole && a.calls.length === 0 ? a.text.at(-1) : undefined
  const texts = held === undefined ? a.text : a.text.slice(0, -1)
  for (const text of texts) out += chunk([{text}], a.variant.nulls ? usage : {})
  // (Gemini sends each call whole, its args an object; with `id` on the Gemini API, without on Vertex)
  if (a.calls.length)
    out += chunk(
      a.calls.map((call) => ({
        functionCall: {name: call.name, args: call.args, ...(a.variant.noIndex ? {} : {id: call.id})},
      })),
    )
  if (a.finish) {
    const last = data({
      // (a finish chunk whose content has no parts, as Gemini sends one)
      candidates: [
        {
          content:
            a.variant.pings && held === undefined
              ? {role: 'model'}
              : {role: 'model', parts: [{text: held ?? ''}]},
          finishReason: 'STOP',
          index: 0,
        },
      ],
      ...(a.usage === 'none' ? {} : usage),
      modelVersion: 'up',
      responseId: 'r1',
    })
    out += last
  }
  return out
}

const UPSTREAM: Record<Family, (a: Answer) => string> = {
  chat: chatUpstream,
  messages: messagesUpstream,
  responses: responsesUpstream,
  gemini: geminiUpstream,
}

/** What a client read from its stream: text, each call's id/name/args, and whether it was whole. */
interface ClientRead {
  text: string
  reasoning: string
  calls: Array<{name: string; args: unknown}>
  error: boolean
}

function sseEvents(text: string): Array<{event?: string; data: string}> {
  const out: Array<{event?: string; data: string}> = []
  for (const block of text.split('\n\n')) {
    if (!block) continue
    let event: string | undefined
    const lines: string[] = []
    for (const line of block.split('\n'))
      if (line.startsWith('event: ')) event = line.slice(7)
      else if (line.startsWith('data: ')) lines.push(line.slice(6))
      else throw new Error(`not an SSE line: ${JSON.stringify(line)}`)
    out.push({event, data: lines.join('\n')})
  }
  return out
}

function readMessagesClient(text: string): ClientRead {
  const events = sseEvents(text).map((e) => ({
    name: e.event,
    body: JSON.parse(e.data) as Record<string, any>,
  }))
  for (const e of events) expect(e.body.type).toBe(e.name)
  const error = events.at(-1)?.name === 'error'
  expect(events[0].name).toBe(error && events.length === 1 ? 'error' : 'message_start')
  const open = new Map<number, Record<string, any>>()
  const seen = new Set<number>()
  let out = ''
  let reasoning = ''
  const calls: ClientRead['calls'] = []
  let ended = 0
  for (const {name, body} of events) {
    expect(ended, 'nothing after message_stop').toBe(0)
    if (name === 'content_block_start') {
      expect(seen.has(body.index), `block ${body.index} started twice`).toBe(false)
      expect(open.size, 'one block open at a time').toBe(0)
      seen.add(body.index)
      open.set(body.index, {...body.content_block, json: ''})
    } else if (name === 'content_block_delta') {
      const block = open.get(body.index)
      expect(block, `delta of block ${body.index}, which is not open`).toBeDefined()
      if (body.delta.type === 'text_delta') out += body.delta.text
      if (body.delta.type === 'thinking_delta') reasoning += body.delta.thinking
      if (body.delta.type === 'input_json_delta') block!.json += body.delta.partial_json
    } else if (name === 'content_block_stop') {
      const block = open.get(body.index)
      expect(block, `stop of block ${body.index}, which is not open`).toBeDefined()
      open.delete(body.index)
      if (block!.type === 'tool_use') calls.push({name: block!.name, args: JSON.parse(block!.json || '{}')})
    } else if (name === 'message_stop') ended++
  }
  if (!error) {
    expect(ended).toBe(1)
    expect(open.size).toBe(0)
  }
  return {text: out, reasoning, calls, error}
}

function readChatClient(text: string): ClientRead {
  const events = sseEvents(text)
  const last = events.at(-1)?.data
  const error = last !== '[DONE]'
  if (!error) expect(events.filter((e) => e.data === '[DONE]')).toHaveLength(1)
  let out = ''
  let reasoning = ''
  const calls = new Map<number, {name: string; json: string}>()
  let finishes = 0
  for (const e of events) {
    if (e.data === '[DONE]') continue
    const body = JSON.parse(e.data) as Record<string, any>
    if (body.error) continue
    for (const choice of body.choices ?? []) {
      const delta = choice.delta ?? {}
      if (typeof delta.content === 'string') out += delta.content
      if (typeof delta.reasoning_content === 'string') reasoning += delta.reasoning_content
      for (const call of delta.tool_calls ?? []) {
        expect(typeof call.index).toBe('number')
        let c = calls.get(call.index)
        if (!c) {
          expect(call.id, 'a call opens with its id').toBeTruthy()
          expect(call.function?.name, 'a call opens with its name').toBeTruthy()
          c = {name: call.function.name, json: ''}
          calls.set(call.index, c)
        }
        c.json += call.function?.arguments ?? ''
      }
      if (choice.finish_reason) finishes++
    }
  }
  if (!error) expect(finishes).toBe(1)
  return {
    text: out,
    reasoning,
    calls: [...calls.values()].map((c) => ({name: c.name, args: JSON.parse(c.json || '{}')})),
    error,
  }
}

function readResponsesClient(text: string): ClientRead {
  const events = sseEvents(text).map((e) => ({
    name: e.event,
    body: JSON.parse(e.data) as Record<string, any>,
  }))
  for (const e of events) expect(e.body.type).toBe(e.name)
  // (an error goes as `error`, which openai-node reads, and then `response.failed`, which Codex reads)
  const terminal = events.filter((e) =>
    ['response.completed', 'response.incomplete', 'response.failed'].includes(e.name!),
  )
  expect(terminal).toHaveLength(1)
  expect(events.at(-1)).toBe(terminal[0])
  const error = terminal[0].name === 'response.failed'
  if (error) expect(events.at(-2)?.name).toBe('error')
  if (events[0].name !== 'error') expect(events[0].name).toBe('response.created')
  const open = new Map<number, Record<string, any>>()
  const done = new Set<number>()
  let out = ''
  let reasoning = ''
  const calls: ClientRead['calls'] = []
  for (const {name, body} of events) {
    if (name === 'response.output_item.added') {
      expect(open.has(body.output_index) || done.has(body.output_index)).toBe(false)
      open.set(body.output_index, {...body.item, json: ''})
    } else if (name === 'response.output_text.delta') {
      expect(open.has(body.output_index)).toBe(true)
      out += body.delta
    } else if (name === 'response.reasoning_summary_text.delta' || name === 'response.reasoning_text.delta') {
      reasoning += body.delta
    } else if (name === 'response.function_call_arguments.delta') {
      expect(open.has(body.output_index)).toBe(true)
      open.get(body.output_index)!.json += body.delta
    } else if (name === 'response.output_item.done') {
      const item = open.get(body.output_index)
      expect(item, `done of item ${body.output_index}, which is not open`).toBeDefined()
      open.delete(body.output_index)
      done.add(body.output_index)
      if (item!.type === 'function_call') {
        expect(body.item.arguments).toBe(item!.json)
        calls.push({name: body.item.name, args: JSON.parse(item!.json || '{}')})
      }
    }
  }
  if (!error) expect(open.size).toBe(0)
  return {text: out, reasoning, calls, error}
}

function readGeminiClient(text: string): ClientRead {
  // (an error goes unframed, last: @google/genai throws only for a read of `{"error":…}` alone)
  const at = text.startsWith('{"error"') ? 0 : text.lastIndexOf('\n\n{"error"') + 2
  const error = at === 0 || at > 1
  if (error) expect(JSON.parse(text.slice(at)).error).toBeDefined()
  const events = sseEvents(error ? text.slice(0, at) : text).map(
    (e) => JSON.parse(e.data) as Record<string, any>,
  )
  let out = ''
  let reasoning = ''
  const calls: ClientRead['calls'] = []
  let finishes = 0
  for (const e of events) {
    for (const c of e.candidates ?? []) {
      for (const p of c.content?.parts ?? []) {
        if (typeof p.text === 'string' && !p.thought) out += p.text
        if (typeof p.text === 'string' && p.thought) reasoning += p.text
        if (p.functionCall) calls.push({name: p.functionCall.name, args: p.functionCall.args ?? {}})
      }
      if (c.finishReason) finishes++
    }
  }
  if (!error) expect(finishes).toBe(1)
  return {text: out, reasoning, calls, error}
}

const READ: Record<Family, (text: string) => ClientRead> = {
  chat: readChatClient,
  messages: readMessagesClient,
  responses: readResponsesClient,
  gemini: readGeminiClient,
}

/**
 * The tool names each client family offers for the answer's three tools: names its own API takes
 * that another family refuses (a digit first, which Gemini refuses; Claude Code's MCP plugin tools
 * past 64 characters; Gemini's `.` and `:`), which go upstream renamed (tool-names.ts) and must
 * come back under the client's own.
 */
const CLIENT_NAMES: Record<Family, Record<string, string>> = {
  chat: {Bash: 'Bash', read_file: '9_read', grep: 'grep-x'},
  responses: {Bash: 'Bash', read_file: '9_read', grep: 'grep-x'},
  messages: {Bash: 'Bash', read_file: '9_read', grep: `mcp__plugin_${'x'.repeat(60)}__grep`},
  gemini: {Bash: 'Bash', read_file: 'srv.read:v2', grep: '_grep'},
}
const BASE_NAMES = ['Bash', 'read_file', 'grep']

/** The tool names of an upstream body, in order. */
function upstreamNames(upstream: Family, body: Record<string, any>): string[] {
  const tools = (body.tools ?? []) as any[]
  if (upstream === 'chat') return tools.map((t) => t.function.name)
  if (upstream === 'gemini')
    return tools.flatMap((t) => (t.functionDeclarations ?? []).map((d: any) => d.name))
  return tools.map((t) => t.name)
}

/** A client's streaming request of `family` that offers the answer's tools, and their names upstream. */
function streamingClient(family: Family) {
  const c: Conversation = {
    rounds: [{user: {texts: ['hi'], image: false, asString: true}}],
    tools: BASE_NAMES.map((n) => CLIENT_NAMES[family][n]),
    stream: true,
    nulls: false,
  }
  const client = decodeClientRequest(family, RENDER[family](c), {
    model: family === 'gemini' ? 'gemini-x' : undefined,
    stream: true,
    carry: new BoundedCarry(),
    toResponses: family === 'responses',
  })
  const names = {} as Record<Family, Record<string, string>>
  for (const upstream of FAMILIES) {
    const body = JSON.parse(encodeUpstreamRequest(client, upstream, 'm').body.toString()) as Record<
      string,
      any
    >
    const sent = upstreamNames(upstream, body)
    names[upstream] = Object.fromEntries(BASE_NAMES.map((n, i) => [n, sent[i]]))
  }
  return {client, names}
}

/** `a` with its calls named as `names` says. */
const named_ = (a: Answer, names: Record<string, string>): Answer => ({
  ...a,
  calls: a.calls.map((c) => ({...c, name: names[c.name]})),
})

/** `text`'s UTF-8 bytes cut at `cuts`. */
function byteChunks(text: string, cuts: number[]): Buffer[] {
  const bytes = Buffer.from(text)
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b)
  const out: Buffer[] = []
  let last = 0
  for (const p of points) {
    out.push(bytes.subarray(last, p))
    last = p
  }
  out.push(bytes.subarray(last))
  return out
}

describe('fuzz: upstream streams through each decoder and encoder', () => {
  for (const upstream of FAMILIES)
    it(`a ${upstream} stream, cut anywhere, reaches every client family whole`, () => {
      const clients = Object.fromEntries(FAMILIES.map((f) => [f, streamingClient(f)])) as Record<
        Family,
        ReturnType<typeof streamingClient>
      >
      fc.assert(
        fc.property(answer, fc.array(fc.nat(), {maxLength: 12}), (a, cuts) => {
          for (const family of FAMILIES) {
            const {client, names} = clients[family]
            // (the upstream calls the tools by the names it was sent)
            const sse = UPSTREAM[upstream](named_(a, names[upstream]))
            const t = new StreamTranslator(upstream, client, {
              carry: new BoundedCarry(),
              newId: (p) => `${p}_1`,
            })
            let text = ''
            for (const piece of byteChunks(sse, cuts)) text += t.push(piece)
            text += t.end()
            const read = READ[family](text)
            if (process.env.FUZZ_SHOW && read.error)
              console.log('ERROR', upstream, family, JSON.stringify(a), text.slice(-300))
            // (an answer without its end is cut: the client is told so, as an error, not a whole answer)
            if (read.error) continue
            // (a lone surrogate the upstream escaped goes on as it came, or as U+FFFD)
            const want = expected(upstream, a, family)
            expect(wellFormed(read.text)).toBe(wellFormed(want.text))
            expect(wellFormed(read.reasoning), 'reasoning').toBe(wellFormed(want.reasoning))
            expect(read.calls).toEqual(
              a.calls.map((c) => ({name: CLIENT_NAMES[family][c.name], args: c.args})),
            )
          }
        }),
        {seed: SEED, numRuns: Math.ceil(RUNS / 2)},
      )
    })
})

// ---------------------------------------------------------------------------------------------
// Whole (non-stream) answers: the same abstract answer as each family's JSON
// ---------------------------------------------------------------------------------------------

function chatAnswer(a: Answer): unknown {
  const text = a.text.join('')
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'up',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: a.text.length ? text : null,
          ...(a.reasoning
            ? {[a.variant.reasoningField ? 'reasoning' : 'reasoning_content']: a.reasoning.pieces.join('')}
            : {}),
          ...(a.calls.length
            ? {
                tool_calls: a.calls.map((c) => ({
                  id: c.id,
                  type: 'function',
                  function: {name: c.name, arguments: JSON.stringify(c.args)},
                })),
              }
            : a.variant.nulls
              ? {tool_calls: null, refusal: null}
              : {}),
        },
        finish_reason: a.finish ? (a.calls.length ? 'tool_calls' : 'stop') : null,
      },
    ],
    ...(a.usage === 'none' ? {} : {usage: {prompt_tokens: 10, completion_tokens: 5, total_tokens: 15}}),
  }
}

function messagesAnswer(a: Answer): unknown {
  const content: unknown[] = []
  if (a.reasoning)
    content.push({
      type: 'thinking',
      thinking: a.reasoning.pieces.join(''),
      signature: a.reasoning.signature ?? '',
    })
  if (a.text.length) content.push({type: 'text', text: a.text.join('')})
  for (const c of a.calls) content.push({type: 'tool_use', id: c.id, name: c.name, input: c.args})
  return {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'up',
    content,
    stop_reason: a.finish ? (a.calls.length ? 'tool_use' : 'end_turn') : null,
    stop_sequence: null,
    usage: a.usage === 'none' ? {input_tokens: 0, output_tokens: 0} : {input_tokens: 10, output_tokens: 5},
  }
}

function responsesAnswer(a: Answer): unknown {
  const output: unknown[] = []
  if (a.reasoning)
    output.push({
      type: 'reasoning',
      id: 'rs_1',
      summary: [{type: 'summary_text', text: a.reasoning.pieces.join('')}],
      ...(a.reasoning.signature ? {encrypted_content: a.reasoning.signature} : {}),
    })
  if (a.text.length)
    output.push({
      type: 'message',
      id: 'msg_1',
      role: 'assistant',
      status: 'completed',
      content: [{type: 'output_text', text: a.text.join(''), annotations: []}],
    })
  for (const c of a.calls)
    output.push({
      type: 'function_call',
      id: `fc_${c.id}`,
      call_id: c.id,
      name: c.name,
      arguments: JSON.stringify(c.args),
      status: 'completed',
    })
  return {
    id: 'resp_1',
    object: 'response',
    model: 'up',
    status: 'completed',
    output,
    usage: a.usage === 'none' ? null : {input_tokens: 10, output_tokens: 5, total_tokens: 15},
  }
}

function geminiAnswer(a: Answer): unknown {
  const parts: unknown[] = []
  if (a.reasoning)
    parts.push({
      text: a.reasoning.pieces.join(''),
      thought: true,
      ...(a.reasoning.signature ? {thoughtSignature: a.reasoning.signature} : {}),
    })
  if (a.text.length) parts.push({text: a.text.join('')})
  for (const c of a.calls)
    parts.push({functionCall: {name: c.name, args: c.args, ...(a.variant.noIndex ? {} : {id: c.id})}})
  return {
    candidates: [{content: {role: 'model', parts}, finishReason: 'STOP', index: 0}],
    ...(a.usage === 'none'
      ? {}
      : {usageMetadata: {promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15}}),
    modelVersion: 'up',
    responseId: 'r1',
  }
}

const ANSWER: Record<Family, (a: Answer) => unknown> = {
  chat: chatAnswer,
  messages: messagesAnswer,
  responses: responsesAnswer,
  gemini: geminiAnswer,
}

/** The text and calls of a client's whole answer. */
function readAnswer(
  family: Family,
  body: Record<string, any>,
): {text: string; calls: Array<{name: string; args: unknown}>} {
  switch (family) {
    case 'chat': {
      const m = body.choices[0].message
      return {
        text: m.content ?? '',
        calls: (m.tool_calls ?? []).map((c: any) => ({
          name: c.function.name,
          args: JSON.parse(c.function.arguments),
        })),
      }
    }
    case 'messages':
      return {
        text: body.content
          .filter((b: any) => b.type === 'text')
          .map((b: any) => b.text)
          .join(''),
        calls: body.content
          .filter((b: any) => b.type === 'tool_use')
          .map((b: any) => ({name: b.name, args: b.input})),
      }
    case 'responses':
      return {
        text: body.output
          .filter((i: any) => i.type === 'message')
          .flatMap((i: any) => i.content.map((c: any) => c.text ?? ''))
          .join(''),
        calls: body.output
          .filter((i: any) => i.type === 'function_call')
          .map((i: any) => ({name: i.name, args: JSON.parse(i.arguments)})),
      }
    default: {
      const parts = body.candidates[0].content?.parts ?? []
      return {
        text: parts
          .filter((p: any) => typeof p.text === 'string' && !p.thought)
          .map((p: any) => p.text)
          .join(''),
        calls: parts
          .filter((p: any) => p.functionCall)
          .map((p: any) => ({name: p.functionCall.name, args: p.functionCall.args ?? {}})),
      }
    }
  }
}

describe('fuzz: whole upstream answers through each decoder and encoder', () => {
  for (const upstream of FAMILIES)
    it(`a ${upstream} answer reaches every client family with its text and calls`, () => {
      const clients = Object.fromEntries(FAMILIES.map((f) => [f, streamingClient(f)])) as Record<
        Family,
        ReturnType<typeof streamingClient>
      >
      fc.assert(
        fc.property(answer, (a) => {
          for (const family of FAMILIES) {
            const {client, names} = clients[family]
            const body = JSON.parse(JSON.stringify(ANSWER[upstream](named_(a, names[upstream])))) as unknown
            const out = translateResponseText(upstream, client, body, {
              carry: new BoundedCarry(),
              newId: (p) => `${p}_1`,
            })
            const read = readAnswer(family, JSON.parse(out.text) as Record<string, any>)
            expect(wellFormed(read.text)).toBe(wellFormed(a.text.join('')))
            expect(read.calls).toEqual(
              a.calls.map((c) => ({name: CLIENT_NAMES[family][c.name], args: c.args})),
            )
          }
        }),
        {seed: SEED, numRuns: Math.ceil(RUNS / 2)},
      )
    })
})
