/**
 * A tool call with arguments that are not JSON in Codex's history (Qwen3-Coder's broken JSON, a
 * stream cut at its token limit: Codex keeps each call's arguments exactly as the model wrote
 * them), to DashScope or MiniMax, which refuse every later request for it (the simulator's
 * `dashscope-args` and `minimax-args` quirks, in each one's words): one failed try, learned for the model, and from then on each such
 * call goes with its arguments repaired. The real daemon, the official OpenAI SDK.
 */
import OpenAI from 'openai'
import {describe, expect, it} from 'vitest'

import {projectLogRows, takeSimCalls, translatedRoutes} from './helpers/gateway.js'

const MODEL = 'qwen3-coder-plus+dashscope-args'
// DashScope behind OpenRouter: its refusal in OpenRouter's `metadata.raw`
const RELAYED = 'qwen3-coder-plus+dashscope-args+openrouter-errors'
// MiniMax, which refuses it in its own words
const MINIMAX = 'MiniMax-M2.7+minimax-args'

const gw = translatedRoutes(
  {coder: MODEL, relayed: RELAYED, minimax: MINIMAX},
  {prefix: 'repair-args', provider: 'sim-chat', families: ['responses']},
)

/** Codex's next turn after a call whose stream was cut (its output: Codex's parse error), and one that ran. */
const history = (text: string): OpenAI.Responses.ResponseInputItem[] => [
  {type: 'message', role: 'user', content: [{type: 'input_text', text: 'list the files'}]},
  {type: 'function_call', call_id: 'call_1', name: 'shell', arguments: '{"command": ["bash", "-lc", "ls -la'},
  {
    type: 'function_call_output',
    call_id: 'call_1',
    output: 'failed to parse function arguments: EOF while parsing a string at line 1 column 36',
  },
  {type: 'function_call', call_id: 'call_2', name: 'shell', arguments: '{"command":["ls"]}'},
  {type: 'function_call_output', call_id: 'call_2', output: 'README.md'},
  {type: 'message', role: 'user', content: [{type: 'input_text', text}]},
]

const tools: OpenAI.Responses.Tool[] = [
  {
    type: 'function',
    name: 'shell',
    strict: false,
    parameters: {type: 'object', properties: {command: {type: 'array', items: {type: 'string'}}}},
  },
]

const argumentsSent = (body: Record<string, any>): string[] =>
  (body.messages as Array<{tool_calls?: Array<{function: {arguments: string}}>}>)
    .flatMap((m) => m.tool_calls ?? [])
    .map((c) => c.function.arguments)

describe("DashScope's refusal of a history call's arguments that are not JSON", {timeout: 60_000}, () => {
  /** One refused try, then the history repaired, on every later turn from the start; the rows. */
  async function learnsTheRepair(key: string, project: string): Promise<void> {
    const openai = new OpenAI({baseURL: `${gw.base}/v1`, apiKey: gw.keys.get(key)!, maxRetries: 0})
    await takeSimCalls(gw.simOrigin, /./)
    const first = await openai.responses.create({model: 'gpt-5.5', input: history('go on'), tools})
    expect(first.status).toBe('completed')
    expect(first.output.length).toBeGreaterThan(0)
    const tries = await takeSimCalls(gw.simOrigin, /\/chat\/completions$/)
    expect(tries.map(argumentsSent)).toEqual([
      ['{"command": ["bash", "-lc", "ls -la', '{"command":["ls"]}'],
      ['{"command": ["bash", "-lc", "ls -la"]}', '{"command":["ls"]}'],
    ])
    // the next turn: repaired from the start, the same bytes
    await openai.responses.create({model: 'gpt-5.5', input: history('and now?'), tools})
    const [next] = await takeSimCalls(gw.simOrigin, /\/chat\/completions$/)
    expect(argumentsSent(next)).toEqual(['{"command": ["bash", "-lc", "ls -la"]}', '{"command":["ls"]}'])
    expect((await projectLogRows(gw.base, project, 2)).map((r) => [r.status, r.error])).toEqual([
      [
        200,
        "sim-chat refused a history tool call's arguments that are not JSON: sent again with each such call's arguments repaired",
      ],
      [200, null],
    ])
  }

  it('one failed try, then the history goes repaired, on every later turn from the start', async () => {
    await learnsTheRepair('coder', 'repair-args-coder')
    const {adaptations} = (await (await fetch(`${gw.base}/api/adaptations`)).json()) as {adaptations: any[]}
    const learned = adaptations.find((a) => a.provider === 'sim-chat' && a.model === MODEL)
    expect(learned.rules).toEqual([
      "history tool calls' arguments that are not JSON repaired (closed, or {})",
    ])
  })

  it("MiniMax's words for it (invalid function arguments json string, 2013): learned the same way", async () => {
    await learnsTheRepair('minimax', 'repair-args-minimax')
  })

  it('the same refusal relayed by OpenRouter (its words in metadata.raw): learned the same way', async () => {
    const openai = new OpenAI({baseURL: `${gw.base}/v1`, apiKey: gw.keys.get('relayed')!, maxRetries: 0})
    await takeSimCalls(gw.simOrigin, /./)
    const first = await openai.responses.create({model: 'gpt-5.5', input: history('go on'), tools})
    expect(first.status).toBe('completed')
    const tries = await takeSimCalls(gw.simOrigin, /\/chat\/completions$/)
    expect(tries.map(argumentsSent)).toEqual([
      ['{"command": ["bash", "-lc", "ls -la', '{"command":["ls"]}'],
      ['{"command": ["bash", "-lc", "ls -la"]}', '{"command":["ls"]}'],
    ])
    expect((await projectLogRows(gw.base, 'repair-args-relayed', 1)).map((r) => [r.status, r.error])).toEqual(
      [
        [
          200,
          "sim-chat refused a history tool call's arguments that are not JSON: sent again with each such call's arguments repaired",
        ],
      ],
    )
  })
})
