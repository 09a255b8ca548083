/**
 * A Messages upstream's paused turn, continued for a translated client. Anthropic's server-side
 * web search loop may stop a turn with `stop_reason: "pause_turn"`: the turn is not done, and the
 * caller is to send the answer back as-is so the model goes on. Claude Code does; Codex (Responses)
 * and Gemini CLI (Gemini) have no such stop and would take the half-done turn for the answer. The
 * gateway continues it itself and the client gets the whole turn: one answer or one stream, every
 * search in it, usage summed over the upstream calls. The real daemon, the simulator's `pause-turn`
 * quirk (each answer one search, paused, until the turn holds the searches asked for), the official
 * SDKs.
 */
import {GoogleGenAI} from '@google/genai'
import OpenAI from 'openai'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {messagesAnswer, messagesUsage} from '../src/sim/upstream/messages.js'
import {selectQuirks} from '../src/sim/upstream/quirks.js'
import {encryptedResult} from '../src/sim/upstream/web-search.js'
import {
  issueKeyOverApi,
  projectLogRows,
  simPolicy,
  startSimGatewayWithPolicies,
  takeSimCalls,
} from './helpers/gateway.js'

let base = ''
let simOrigin = ''
let stop: () => Promise<void> = async () => {}
const keys = new Map<string, string>()

beforeAll(async () => {
  ;({base, simOrigin, stop} = await startSimGatewayWithPolicies([
    simPolicy(
      'pause',
      Object.fromEntries(
        ['responses', 'gemini'].map((f) => [
          f,
          [{provider: 'sim-messages', model: 'sim-mini+pause-turn', translate: true}],
        ]),
      ),
    ),
  ]))
  for (const agent of ['codex', 'gemini', 'cap'])
    keys.set(agent, await issueKeyOverApi(base, `pause-${agent}`, 'generic_agent', 'pause'))
}, 120_000)

afterAll(() => stop())

interface Row {
  status: number
  error: string | null
  inputTokens: number
  outputTokens: number
}

/** The Messages requests the simulator got since the last call, oldest first. */
const messagesCalls = () => takeSimCalls(simOrigin, /\/v1\/messages$/)

/** The usage the simulator answered each request with, summed: gwctl's input and output tokens. */
/**
 * The simulator's usage of the calls: every call's prompt summed (`input`, what they were billed:
 * the log row's), the last call's (`last`, the context the conversation holds: the client's), and
 * every call's output summed.
 */
function simUsageSum(calls: Array<Record<string, any>>): {input: number; last: number; output: number} {
  let input = 0
  let last = 0
  let output = 0
  for (const call of calls) {
    const {model, quirks} = selectQuirks({}, call.model)
    const usage = messagesUsage(messagesAnswer({...call, model}, quirks), quirks) as Record<string, number>
    last = usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens
    input += last
    output += usage.output_tokens
  }
  return {input, last, output}
}

/**
 * The continuations carry the paused content back as the simulator sent it: each call after the
 * first ends with an assistant message holding every search so far (the call and its results, the
 * results' `encrypted_content` the simulator's own), and is otherwise the first call's request.
 */
function expectContinued(calls: Array<Record<string, any>>, searches: number): void {
  expect(calls).toHaveLength(searches + 1)
  const [first, ...continuations] = calls
  expect(first.messages.at(-1).role).toBe('user')
  continuations.forEach((call, i) => {
    expect(call.messages.slice(0, -1)).toEqual(first.messages)
    expect(call.tools).toEqual(first.tools)
    const last = call.messages.at(-1)
    expect(last.role).toBe('assistant')
    expect(last.content.map((b: {type: string}) => b.type)).toEqual(
      Array.from({length: i + 1}, () => ['server_tool_use', 'web_search_tool_result']).flat(),
    )
    for (const block of last.content.filter((b: {type: string}) => b.type === 'web_search_tool_result'))
      for (const page of block.content) expect(page.encrypted_content).toBe(encryptedResult(page.url))
  })
}

const QUERY = 'gwctl release notes'

describe('a paused turn (pause_turn) continued for translated clients', {timeout: 60_000}, () => {
  it('Codex (Responses): every search and the text in one answer and in one stream; the row sums the usage', async () => {
    await messagesCalls()
    const openai = new OpenAI({baseURL: `${base}/v1`, apiKey: keys.get('codex')!, maxRetries: 0})
    const request = {
      model: 'gpt-5.5',
      input: `search the web for ${QUERY}`,
      tools: [{type: 'web_search' as const}],
    }

    const whole = await openai.responses.create(request)
    expect(whole.status).toBe('completed')
    expect(whole.output.map((o) => o.type)).toEqual(['web_search_call', 'web_search_call', 'message'])
    const queries = whole.output
      .filter((o) => o.type === 'web_search_call')
      .map((o) => ((o as OpenAI.Responses.ResponseFunctionWebSearch).action as {query?: string}).query)
    expect(queries).toEqual([`search the web for ${QUERY}`, `search the web for ${QUERY} (search 2)`])
    expect(whole.output_text).toBe(
      `Web search results for "search the web for ${QUERY}". search the web for ${QUERY} (result 1) and search the web for ${QUERY} (result 2) cover it.`,
    )
    const wholeCalls = await messagesCalls()
    expectContinued(wholeCalls, 2)
    const wholeSum = simUsageSum(wholeCalls)
    expect(whole.usage).toMatchObject({input_tokens: wholeSum.last, output_tokens: wholeSum.output})

    const events: OpenAI.Responses.ResponseStreamEvent[] = []
    for await (const event of await openai.responses.create({...request, stream: true})) events.push(event)
    const types = events.map((e) => e.type)
    // one response: one start, one end, nothing of the pauses in between
    expect(types.filter((t) => t === 'response.created')).toHaveLength(1)
    expect(types.filter((t) => t === 'response.completed')).toHaveLength(1)
    expect(types.at(-1)).toBe('response.completed')
    expect(types).not.toContain('response.failed')
    expect(types).not.toContain('error')
    const added = events.filter(
      (e): e is OpenAI.Responses.ResponseOutputItemAddedEvent => e.type === 'response.output_item.added',
    )
    expect(added.map((e) => [e.output_index, e.item.type])).toEqual([
      [0, 'web_search_call'],
      [1, 'web_search_call'],
      [2, 'message'],
    ])
    const done = events.at(-1) as OpenAI.Responses.ResponseCompletedEvent
    expect(done.response.output.map((o) => o.type)).toEqual(['web_search_call', 'web_search_call', 'message'])
    const text = events
      .filter((e): e is OpenAI.Responses.ResponseTextDeltaEvent => e.type === 'response.output_text.delta')
      .map((e) => e.delta)
      .join('')
    expect(text).toBe(whole.output_text)
    const streamCalls = await messagesCalls()
    expectContinued(streamCalls, 2)
    expect(streamCalls.every((c) => c.stream === true)).toBe(true)
    const streamSum = simUsageSum(streamCalls)
    expect(done.response.usage).toMatchObject({
      input_tokens: streamSum.last,
      output_tokens: streamSum.output,
    })

    const rows = (await projectLogRows(base, 'pause-codex', 2)) as unknown as Row[]
    expect(rows.map((r) => [r.status, r.inputTokens, r.outputTokens, r.error])).toEqual([
      [200, wholeSum.input, wholeSum.output, 'sim-messages paused the turn (pause_turn): continued 2 times'],
      [
        200,
        streamSum.input,
        streamSum.output,
        'sim-messages paused the turn (pause_turn): continued 2 times',
      ],
    ])
  })

  it("Gemini CLI's google_web_search: the grounding of every search and the whole text, JSON and streamed", async () => {
    await messagesCalls()
    const ai = new GoogleGenAI({apiKey: keys.get('gemini')!, httpOptions: {baseUrl: base}})
    const request = {
      model: 'gemini-2.5-flash',
      contents: [{role: 'user', parts: [{text: `${QUERY}, 3 searches`}]}],
      config: {tools: [{googleSearch: {}}]},
    }
    const q = `${QUERY}, 3 searches`
    const queries = [q, `${q} (search 2)`, `${q} (search 3)`]

    const whole = await ai.models.generateContent(request)
    const grounding = whole.candidates?.[0]?.groundingMetadata
    expect(grounding?.webSearchQueries).toEqual(queries)
    expect(grounding?.groundingChunks).toHaveLength(6)
    expect(whole.text).toContain(`Web search results for "${q}".`)
    expect(whole.candidates?.[0]?.finishReason).toBe('STOP')
    const wholeCalls = await messagesCalls()
    expectContinued(wholeCalls, 3)
    const wholeSum = simUsageSum(wholeCalls)
    expect(whole.usageMetadata?.promptTokenCount).toBe(wholeSum.last)

    const chunks = []
    for await (const chunk of await ai.models.generateContentStream(request)) chunks.push(chunk)
    const last = chunks.at(-1)!
    expect(last.candidates?.[0]?.finishReason).toBe('STOP')
    expect(chunks.filter((c) => c.candidates?.[0]?.finishReason)).toHaveLength(1)
    expect(last.candidates?.[0]?.groundingMetadata?.webSearchQueries).toEqual(queries)
    expect(chunks.map((c) => c.text ?? '').join('')).toBe(whole.text)
    const streamCalls = await messagesCalls()
    expectContinued(streamCalls, 3)
    const streamSum = simUsageSum(streamCalls)
    expect(last.usageMetadata?.promptTokenCount).toBe(streamSum.last)

    const rows = (await projectLogRows(base, 'pause-gemini', 2)) as unknown as Row[]
    expect(rows.map((r) => [r.status, r.inputTokens, r.outputTokens, r.error])).toEqual([
      [200, wholeSum.input, wholeSum.output, 'sim-messages paused the turn (pause_turn): continued 3 times'],
      [
        200,
        streamSum.input,
        streamSum.output,
        'sim-messages paused the turn (pause_turn): continued 3 times',
      ],
    ])
  })

  it('a turn that pauses past the continuations ends as it is, the log row saying so', async () => {
    await messagesCalls()
    const openai = new OpenAI({baseURL: `${base}/v1`, apiKey: keys.get('cap')!, maxRetries: 0})
    const request = {model: 'gpt-5.5', input: `${QUERY}: 9 searches`, tools: [{type: 'web_search' as const}]}
    const whole = await openai.responses.create(request)
    // 1 answer and 5 continuations, each a search
    expect(whole.output.map((o) => o.type)).toEqual(Array(6).fill('web_search_call'))
    const calls = await messagesCalls()
    expect(calls).toHaveLength(6)
    const sum = simUsageSum(calls)
    expect(whole.usage).toMatchObject({input_tokens: sum.last, output_tokens: sum.output})

    const events: OpenAI.Responses.ResponseStreamEvent[] = []
    for await (const event of await openai.responses.create({...request, stream: true})) events.push(event)
    expect(events.filter((e) => e.type === 'response.created')).toHaveLength(1)
    const done = events.at(-1) as OpenAI.Responses.ResponseCompletedEvent
    expect(done.response.output.map((o) => o.type)).toEqual(Array(6).fill('web_search_call'))
    expect(await messagesCalls()).toHaveLength(6)

    const rows = (await projectLogRows(base, 'pause-cap', 2)) as unknown as Row[]
    for (const row of rows) {
      expect(row.status).toBe(200)
      expect(row.error).toBe(
        'sim-messages paused the turn (pause_turn) again after 5 continuations: the client got it as it was',
      )
    }
  })
})
