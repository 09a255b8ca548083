/**
 * Claude Code on GLM at Z.AI, translated: the simulator's `glm-tool-stream` (Z.AI's GLM-4.6 on,
 * which holds a call's arguments and sends them whole at the end unless asked `tool_stream: true`,
 * then streams them in pieces, the call's head beside the last piece of reasoning) is asked, and
 * Claude Code gets its tool_use with the whole arguments, in many `input_json_delta`s as they come;
 * off Z.AI the simulator is not asked and holds them, and the call still arrives whole. The proxy
 * in this process, the simulator behind it (Z.AI's origin pointed at it: nothing leaves this machine).
 */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {simProxy} from '../../../test/helpers/sim-proxy.js'
import type {ProxyTarget} from './proxy.js'
import {claudeCodeHeaders, serveOrigins} from './proxy-fixture.js'

let targets: ProxyTarget[] = []
const proxied = simProxy({route: () => ({targets})})
const {gateway} = proxied
let simOrigin = ''
serveOrigins(gateway, new Set(['https://api.z.ai']), () => simOrigin)

beforeAll(async () => {
  simOrigin = (await proxied.start()).origin
})
afterAll(() => proxied.close())

/** The simulator as GLM-5.1 behind `baseUrl` (Z.AI's, or its own origin), translated from Messages. */
const glm = (baseUrl: string): ProxyTarget => ({
  // (`origin: sim`: the simulator's quirk header goes with the request)
  provider: {name: 'zai', family: 'chat', baseUrl, credential: {secret: 'upstream-key'}, origin: 'sim'},
  model: 'glm-5.1',
  translate: true,
})

/** Claude Code's streamed turn with its Write tool; the Messages events it got, in order. */
async function claudeCodeTurn(): Promise<Array<Record<string, any>>> {
  const res = await fetch(`${gateway.url}/v1/messages`, {
    method: 'POST',
    headers: claudeCodeHeaders({'x-sim-quirk': 'glm-tool-stream'}),
    body: JSON.stringify({
      model: 'claude-sonnet-4-5',
      max_tokens: 32000,
      stream: true,
      thinking: {type: 'enabled', budget_tokens: 4096},
      messages: [
        {role: 'user', content: 'Write the whole report of the quarter into report.md, every section.'},
      ],
      tools: [
        {
          name: 'Write',
          description: 'Write a file',
          input_schema: {
            type: 'object',
            properties: {file_path: {type: 'string'}, content: {type: 'string'}},
            required: ['file_path', 'content'],
          },
        },
      ],
    }),
  })
  expect(res.status).toBe(200)
  const text = await res.text()
  return text
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => JSON.parse(line.slice(6)) as Record<string, any>)
}

/** The tool_use's input as its deltas join, the count of them, and how the turn stopped. */
function toolUse(events: Array<Record<string, any>>) {
  const start = events.find((e) => e.type === 'content_block_start' && e.content_block.type === 'tool_use')
  expect(start?.content_block.name).toBe('Write')
  const deltas = events
    .filter((e) => e.type === 'content_block_delta' && e.index === start!.index)
    .map((e) => e.delta as {type: string; partial_json: string})
  expect(deltas.every((d) => d.type === 'input_json_delta')).toBe(true)
  return {
    input: JSON.parse(deltas.map((d) => d.partial_json).join('')) as Record<string, unknown>,
    pieces: deltas.length,
    stop: events.find((e) => e.type === 'message_delta')?.delta.stop_reason,
    thought: events.some((e) => e.type === 'content_block_start' && e.content_block.type === 'thinking'),
  }
}

describe("Claude Code's Write on GLM at Z.AI, translated", () => {
  it('asked to stream: the whole arguments, in many pieces, beside the reasoning', async () => {
    targets = [glm('https://api.z.ai/v1')]
    proxied.clear()
    const call = toolUse(await claudeCodeTurn())
    const [sent] = proxied.upstreamCalls('/chat/completions')
    expect((sent.body as {tool_stream?: unknown}).tool_stream).toBe(true)
    expect(call).toMatchObject({stop: 'tool_use', thought: true})
    expect(Object.keys(call.input).sort()).toEqual(['content', 'file_path'])
    expect(call.pieces).toBeGreaterThan(3)
  })

  it('off Z.AI, not asked: the simulator holds them, and the call still comes whole', async () => {
    targets = [glm(simOrigin + '/v1')]
    proxied.clear()
    const call = toolUse(await claudeCodeTurn())
    const [sent] = proxied.upstreamCalls('/chat/completions')
    expect((sent.body as {tool_stream?: unknown}).tool_stream).toBeUndefined()
    expect(call).toMatchObject({stop: 'tool_use', thought: true, pieces: 1})
    expect(Object.keys(call.input).sort()).toEqual(['content', 'file_path'])
  })
})
