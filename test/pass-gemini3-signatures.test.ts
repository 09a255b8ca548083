// A Gemini client passed through to Gemini 3 with a tool loop whose calls another model made (Gemini
// 2.5, a fallback to another Gemini target, a route changed mid-loop: no thought signature), which
// a client naming a model that is not Gemini 3 sends unsigned (Gemini CLI adds its own
// `skip_thought_signature_validator` only for a Gemini 3 name): Gemini 3 refuses every such request
// ("Function call is missing a thought_signature in functionCall parts"). Learned from the first
// 400: that request and every later one go with the skip value on the first call of each model
// turn without a signature; a signature Gemini gave stays where it was, and the calls after the
// first of a parallel turn stay unsigned, as Gemini 3 sent them (vercel/ai #16298). A Gemini 2.5
// upstream without thinking, which refuses nothing, gets the client's bytes as they came; thinking
// (Gemini CLI's thinking config), it refuses such a turn as Gemini 3 does (openclaude #583, rowboat
// #694) and learns the same. Translated (Claude Code's history of calls another vendor made, thinking
// on), every Gemini gets the skip value on each turn's first call at once, 2.5 too.
import Anthropic from '@anthropic-ai/sdk'
import {describe, expect, it} from 'vitest'

import {projectLogRows, takeSimCalls, translatedRoutes} from './helpers/gateway.js'

// a Gemini entrance on the Gemini provider: passed through (translate is moot for one family)
const gw = translatedRoutes(
  {
    g3: ['sim-gemini', 'gemini-3-pro-preview+parallel-tools'],
    stream: ['sim-gemini', 'gemini-3-flash-preview'],
    g25: ['sim-gemini', 'gemini-2.5-flash'],
    g25think: ['sim-gemini', 'gemini-2.5-pro'],
    // a Gemini 3 behind a name that says 2.5 (a relay's mapping)
    alias: ['sim-gemini', 'gemini-2.5-pro+signed-calls'],
  },
  // (its Messages entrance translates to the same model)
  {prefix: 'g3sigs', families: ['gemini', 'messages']},
)

const GEMINI_PATH = /:(?:stream)?[gG]enerateContent$/
const SKIP = 'skip_thought_signature_validator'
const ask = (id: string, body: unknown, stream = false) =>
  fetch(
    `${gw.base}/v1beta/models/gemini-2.5-pro:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`,
    {
      method: 'POST',
      headers: {'content-type': 'application/json', 'x-goog-api-key': gw.keys.get(id)!},
      body: JSON.stringify(body),
    },
  )

const tools = [
  {
    functionDeclarations: [
      {
        name: 'read_file',
        description: 'Read a file',
        parametersJsonSchema: {type: 'object', properties: {path: {type: 'string'}}},
      },
      {
        name: 'grep',
        description: 'Search files',
        parametersJsonSchema: {type: 'object', properties: {pattern: {type: 'string'}}},
      },
    ],
  },
]
const user = (text: string) => ({role: 'user', parts: [{text}]})
const call = (name: string, args: Record<string, unknown>) => ({functionCall: {name, args}})
const answers = (...names: string[]) => ({
  role: 'user',
  parts: names.map((name) => ({functionResponse: {name, response: {output: 'ok'}}})),
})
/** Three parallel calls another model made: none signed. */
const unsigned = {
  role: 'model',
  parts: [call('read_file', {path: 'a'}), call('read_file', {path: 'b'}), call('grep', {pattern: 'c'})],
}
/** Each model content's parts, as signature or none, for the assertions. */
const signatures = (body: Record<string, any>) =>
  (body.contents as Array<{role: string; parts: Array<Record<string, any>>}>)
    .filter((c) => c.role === 'model')
    .map((c) => c.parts.map((p) => p.thoughtSignature ?? null))

describe('Gemini 3 passed through a history of calls it did not sign', {timeout: 60_000}, () => {
  it("learned from the first 400, sent again with the skip value on each turn's first call; the next request at once", async () => {
    // turn 1 of the loop on Gemini 3 itself: its parallel calls, the first signed, the second not
    await takeSimCalls(gw.simOrigin, GEMINI_PATH)
    const start = [user('Use the tool to read both files.')]
    const first = await ask('g3', {contents: start, tools})
    expect(first.status).toBe(200)
    const own = ((await first.json()) as any).candidates[0].content
    const ownSignatures = own.parts.map((p: any) => p.thoughtSignature ?? null)
    expect(ownSignatures).toEqual([expect.any(String), null])
    expect(ownSignatures[0]).not.toBe(SKIP)
    // then a step another model answered (a fallback), and the loop goes back to Gemini 3
    const names = own.parts.map((p: any) => p.functionCall.name)
    const history = [...start, own, answers(...names), unsigned, answers('read_file', 'read_file', 'grep')]
    await takeSimCalls(gw.simOrigin, GEMINI_PATH)
    const second = await ask('g3', {contents: history, tools})
    expect(second.status).toBe(200)
    const tries = await takeSimCalls(gw.simOrigin, GEMINI_PATH)
    expect(tries.map(signatures)).toEqual([
      [ownSignatures, [null, null, null]],
      [ownSignatures, [SKIP, null, null]],
    ])
    const rows = await projectLogRows(gw.base, 'g3sigs-g3', 2)
    expect(rows.map((r) => [r.status, r.error])).toEqual([
      [200, null],
      [
        200,
        expect.stringMatching(
          /^sim-gemini refused a tool call turn without its thought signature: sent again with Google's skip_thought_signature_validator/,
        ),
      ],
    ])
    // the next step of the loop: one try, the skip value where it went before
    const third = await ask('g3', {
      contents: [...history, {role: 'model', parts: [{text: 'Done.'}]}, user('Thanks.')],
      tools,
    })
    expect(third.status).toBe(200)
    expect((await takeSimCalls(gw.simOrigin, GEMINI_PATH)).map(signatures)).toEqual([
      [ownSignatures, [SKIP, null, null], [null]],
    ])
  })

  it('a stream: refused before it began, sent again signed, the client gets the answer', async () => {
    await takeSimCalls(gw.simOrigin, GEMINI_PATH)
    const res = await ask(
      'stream',
      {contents: [user('Read the files.'), unsigned, answers('read_file', 'read_file', 'grep')], tools},
      true,
    )
    expect(res.status).toBe(200)
    expect(await res.text()).toMatch(/^data: .*"text"/m)
    expect((await takeSimCalls(gw.simOrigin, GEMINI_PATH)).map(signatures)).toEqual([
      [[null, null, null]],
      [[SKIP, null, null]],
    ])
  })

  it("Gemini 2.5 without thinking, which refuses no such turn: the client's bytes, no skip value", async () => {
    await takeSimCalls(gw.simOrigin, GEMINI_PATH)
    const body = {
      contents: [user('Read the files.'), unsigned, answers('read_file', 'read_file', 'grep')],
      tools,
    }
    for (let i = 0; i < 2; i++) expect((await ask('g25', body)).status).toBe(200)
    const sent = await takeSimCalls(gw.simOrigin, GEMINI_PATH)
    expect(sent).toEqual([body, body])
    expect((await projectLogRows(gw.base, 'g3sigs-g25', 2)).map((r) => r.error)).toEqual([null, null])
  })

  it("Gemini 2.5 thinking (Gemini CLI's thinking config): refuses the other model's unsigned turn, learned as for Gemini 3", async () => {
    await takeSimCalls(gw.simOrigin, GEMINI_PATH)
    const body = {
      contents: [user('Read the files.'), unsigned, answers('read_file', 'read_file', 'grep')],
      tools,
      generationConfig: {thinkingConfig: {thinkingBudget: 8192, includeThoughts: true}},
    }
    for (let i = 0; i < 2; i++) expect((await ask('g25think', body)).status).toBe(200)
    expect((await takeSimCalls(gw.simOrigin, GEMINI_PATH)).map(signatures)).toEqual([
      [[null, null, null]],
      [[SKIP, null, null]],
      [[SKIP, null, null]],
    ])
    expect((await projectLogRows(gw.base, 'g3sigs-g25think', 2)).map((r) => [r.status, r.error])).toEqual([
      [200, expect.stringMatching(/^sim-gemini refused a tool call turn without its thought signature/)],
      [200, null],
    ])
  })

  // Claude Code with thinking on: the simulator's Gemini 2.5 then refuses an unsigned first call,
  // as Gemini 2.5 thinking does (openclaude #583: before stop 61's mend, one refused try each)
  for (const id of ['g25', 'stream', 'alias'])
    it(`translated (Claude Code's parallel calls another vendor made, thinking on) to ${id}: the skip value on the first call, one try`, async () => {
      await takeSimCalls(gw.simOrigin, GEMINI_PATH)
      const answer = await claudeCodeTurn(id)
      expect(answer.content.some((b) => b.type === 'text')).toBe(true)
      const sent = await takeSimCalls(gw.simOrigin, GEMINI_PATH)
      expect(sent.map(signatures)).toEqual([[[SKIP, null]]])
      // (thinking on: a budget to Gemini 2.5, a level to Gemini 3)
      expect(sent[0].generationConfig.thinkingConfig).not.toMatchObject({thinkingBudget: 0})
      expect(sent[0].generationConfig.thinkingConfig).toBeDefined()
    })
})

/** Claude Code's turn after two parallel calls another vendor made, translated to `id`'s Gemini. */
function claudeCodeTurn(id: string) {
  const client = new Anthropic({baseURL: gw.base, apiKey: gw.keys.get(id)!, maxRetries: 0})
  const use = (n: number) => ({
    type: 'tool_use' as const,
    id: `toolu_0${n}`,
    name: 'read_file',
    input: {path: `f${n}`},
  })
  return client.messages.create({
    model: 'claude-sonnet-4-5',
    max_tokens: 16000,
    thinking: {type: 'enabled', budget_tokens: 8000},
    tools: [
      {
        name: 'read_file',
        description: 'Read a file',
        input_schema: {type: 'object', properties: {path: {type: 'string'}}},
      },
    ],
    messages: [
      {role: 'user', content: 'Use the tool to read both files.'},
      {role: 'assistant', content: [use(1), use(2)]},
      {
        role: 'user',
        content: [1, 2].map((n) => ({
          type: 'tool_result' as const,
          tool_use_id: `toolu_0${n}`,
          content: 'ok',
        })),
      },
    ],
  })
}
