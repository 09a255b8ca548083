/**
 * A chat upstream whose tool calls' arguments are no JSON, as the tool parsers of vLLM, SGLang and
 * llama.cpp write them for Qwen3-Coder and GLM (the simulator's `single-quote-args`,
 * `trailing-comma-args`, `fenced-args`, `python-literal-args`; Qwen3-Coder's own `<parameter=…>`
 * form as LM Studio passed it on, `parameter-args`; research47 #2): a Messages client (Claude Code, whose JSON
 * parse of the streamed input failed the turn; `{}` when not streamed) and a Responses client
 * (Codex) get the arguments the model meant, and the log row says they were repaired. A valid
 * call's argument bytes go out as they came. The real daemon, the official SDKs.
 */
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {issueKeyOverApi, projectLogRows, simPolicy, startSimGatewayWithPolicies} from './helpers/gateway.js'

const BROKEN = ['single-quote-args', 'trailing-comma-args', 'fenced-args', 'parameter-args'] as const
/** Python's literals, alone (double-quoted strings) and in the whole repr of a dict. */
const PYTHON = ['python-literal-args', 'python-literal-args+single-quote-args'] as const
const QUIRKS = [...BROKEN, ...PYTHON, 'plain'] as const

/** A policy's id for `quirk` (an id takes no `+`). */
const idOf = (quirk: string): string => `args-${quirk.replace(/\+/g, '-')}`

let base = ''
let stop: () => Promise<void> = async () => {}
const keys = new Map<string, string>()

beforeAll(async () => {
  ;({base, stop} = await startSimGatewayWithPolicies(
    QUIRKS.map((quirk) => {
      const model = quirk === 'plain' ? 'sim-mini' : `sim-mini+${quirk}`
      return simPolicy(idOf(quirk), {
        messages: [{provider: 'sim-chat', model, translate: true}],
        responses: [{provider: 'sim-chat', model, translate: true}],
      })
    }),
  ))
  for (const quirk of QUIRKS)
    keys.set(quirk, await issueKeyOverApi(base, idOf(quirk), 'generic_agent', idOf(quirk)))
}, 120_000)

afterAll(() => stop())

const params = {
  model: 'claude-sonnet-4-5',
  max_tokens: 1024,
  tools: [
    {
      name: 'Bash',
      description: 'Run a command',
      input_schema: {type: 'object' as const, properties: {command: {type: 'string'}}},
    },
  ],
  messages: [{role: 'user' as const, content: 'List the files.'}],
}

/** The joined `input_json_delta`s of a Messages stream, read as the bytes came. */
async function streamedInput(key: string): Promise<string> {
  const response = await fetch(`${base}/v1/messages`, {
    method: 'POST',
    headers: {'content-type': 'application/json', 'x-api-key': key, 'anthropic-version': '2023-06-01'},
    body: JSON.stringify({...params, stream: true}),
  })
  const text = await response.text()
  return [...text.matchAll(/^data: (.*)$/gm)]
    .map((m) => JSON.parse(m[1]) as {delta?: {type?: string; partial_json?: string}})
    .filter((e) => e.delta?.type === 'input_json_delta')
    .map((e) => e.delta!.partial_json)
    .join('')
}

describe('tool call arguments that are no JSON', {timeout: 60_000}, () => {
  for (const quirk of BROKEN)
    it(`${quirk}: Claude Code gets the arguments the model meant, stream and not; the row says so`, async () => {
      const client = new Anthropic({baseURL: base, apiKey: keys.get(quirk)!, maxRetries: 0})
      for (const answer of [
        await client.messages.create(params),
        await client.messages.stream(params).finalMessage(),
      ]) {
        expect(answer.stop_reason).toBe('tool_use')
        const call = answer.content.find((b) => b.type === 'tool_use')!
        expect(call.input).toEqual({command: 'List the files.'})
      }
      // what Claude Code's own stream reader parses: the deltas joined
      expect(JSON.parse(await streamedInput(keys.get(quirk)!))).toEqual({command: 'List the files.'})
      const rows = await projectLogRows(base, idOf(quirk), 3)
      expect(rows.map((r) => r.error)).toEqual(
        Array(3).fill(
          "sim-chat: repaired a tool call's arguments (not JSON as they came: their syntax fixed)",
        ),
      )
    })

  for (const quirk of PYTHON)
    it(`${quirk}: True, False, None reach Claude Code as JSON's, stream and not; the row says so`, async () => {
      const client = new Anthropic({baseURL: base, apiKey: keys.get(quirk)!, maxRetries: 0})
      const withFlag = {
        ...params,
        tools: [
          {
            ...params.tools[0],
            input_schema: {
              type: 'object' as const,
              properties: {command: {type: 'string'}, run_in_background: {type: 'boolean'}},
            },
          },
        ],
      }
      const meant = {command: 'List the files.', run_in_background: true}
      for (const answer of [
        await client.messages.create(withFlag),
        await client.messages.stream(withFlag).finalMessage(),
      ]) {
        const call = answer.content.find((b) => b.type === 'tool_use')!
        expect(call.input).toEqual(meant)
      }
      const response = await fetch(`${base}/v1/messages`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-api-key': keys.get(quirk)!,
          'anthropic-version': '2023-06-01',
        },
        body: JSON.stringify({...withFlag, stream: true}),
      })
      const deltas = [...(await response.text()).matchAll(/^data: (.*)$/gm)]
        .map((m) => JSON.parse(m[1]) as {delta?: {type?: string; partial_json?: string}})
        .filter((e) => e.delta?.type === 'input_json_delta')
        .map((e) => e.delta!.partial_json!)
      // no delta carries the literal as it came: held from its first byte, repaired at the end
      expect(deltas.join('')).not.toMatch(/True|False|None/)
      expect(JSON.parse(deltas.join(''))).toEqual(meant)
      const rows = await projectLogRows(base, idOf(quirk), 3)
      expect(rows.map((r) => r.error)).toEqual(
        Array(3).fill(
          "sim-chat: repaired a tool call's arguments (not JSON as they came: their syntax fixed)",
        ),
      )
    })

  it('single-quote-args: Codex on the Responses entrance gets arguments that parse, stream and not', async () => {
    const openai = new OpenAI({baseURL: `${base}/v1`, apiKey: keys.get('single-quote-args')!, maxRetries: 0})
    const request = {
      model: 'gpt-5-codex',
      input: 'List the files.',
      tools: [
        {
          type: 'function' as const,
          name: 'shell',
          description: 'Run a command',
          parameters: {type: 'object', properties: {command: {type: 'string'}}},
          strict: false,
        },
      ],
      store: false,
    }
    const done: string[] = []
    const stream = openai.responses.stream(request)
    stream.on('response.function_call_arguments.done', (e) => done.push(e.arguments))
    for (const answer of [await openai.responses.create(request), await stream.finalResponse()]) {
      const call = answer.output.find((o) => o.type === 'function_call')
      expect(JSON.parse(call?.type === 'function_call' ? call.arguments : '')).toEqual({
        command: 'List the files.',
      })
    }
    expect(done.map((a) => JSON.parse(a) as unknown)).toEqual([{command: 'List the files.'}])
  })

  it("a valid call's argument bytes go out as they came, with no note", async () => {
    expect(await streamedInput(keys.get('plain')!)).toBe(JSON.stringify({command: 'List the files.'}))
    const [row] = await projectLogRows(base, 'args-plain')
    expect(row.error).toBeNull()
  })
})
