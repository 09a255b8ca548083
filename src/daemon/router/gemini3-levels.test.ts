/**
 * Gemini 3's thinking level through the proxy (in this process; the upstream a scripted one that
 * refuses as the simulator's Gemini does, `refusedThinkingBudget`): Claude Code with thinking off
 * translated to a Gemini 3 Flash gets `thinkingLevel: MINIMAL`, not a budget; refused
 * ("Thinking level MINIMAL is not supported for this model."), it goes again at once with `LOW`,
 * the row says so, and the next request goes with `LOW` the first time; streamed too (Claude Code
 * always streams). Gemini CLI's own body passed through is left as it came, until the model refuses
 * its level: `gemini-3.8-flash` refusing `MINIMAL` has it sent again with `LOW`, and the next with
 * `LOW` at once.
 */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {refusedThinkingBudget} from '../../sim/upstream/quirks.js'
import type {ProviderConfig} from '../../store/schema.js'
import type {ProxyTarget} from './proxy.js'
import {judgedMessagesGateway} from './proxy-fixture.js'

const ANSWER = JSON.stringify({
  candidates: [{content: {role: 'model', parts: [{text: 'done'}]}, finishReason: 'STOP', index: 0}],
  usageMetadata: {promptTokenCount: 3, candidatesTokenCount: 1, totalTokenCount: 4},
})

/** The upstream model of the test (what the simulator's rules by name read). */
let upstreamModel = ''
let targets: ProxyTarget[] = []
// a Flash that takes no MINIMAL by a name the gateway's rule takes for one that does (the
// simulator's `no-minimal-level`: gemini-3.8-flash behind an alias, a later release); a relay's
// name that fixes the level (CLIProxyAPI's, Antigravity's `gemini-3-pro-high`) refusing any other
// in Vertex's words
const {gateway, upstream, received, start, clear, close} = judgedMessagesGateway(
  (body) => {
    const fixed = /-(low|medium|high)$/.exec(upstreamModel)?.[1].toUpperCase()
    const level = (body.generationConfig as {thinkingConfig?: {thinkingLevel?: unknown}} | undefined)
      ?.thinkingConfig?.thinkingLevel
    if (fixed !== undefined && typeof level === 'string' && level.toUpperCase() !== fixed)
      return {
        status: 400,
        body: {
          error: {
            code: 400,
            message: `Unable to submit request because thinking_level ${level.toUpperCase()} is not supported by this model.`,
            status: 'INVALID_ARGUMENT',
          },
        },
      }
    const refused = refusedThinkingBudget(body, new Set(['no-minimal-level']), upstreamModel)
    return refused
      ? {status: 400, body: {error: {code: 400, message: refused, status: 'INVALID_ARGUMENT'}}}
      : undefined
  },
  {route: () => ({targets})},
  {stream: `data: ${ANSWER}\r\n\r\n`, json: ANSWER},
)

beforeAll(start)
afterAll(close)

const provider = (name: string): ProviderConfig => ({
  name,
  family: 'gemini',
  baseUrl: upstream.origin,
  credential: {secret: 'upstream-key'},
})

/** The last answer's bytes (what {@link post} read). */
let answered = ''

/** Posts `body` to the gateway at `path`; the status, once its answer is read ({@link answered}). */
async function post(path: string, body: unknown, headers: Record<string, string>): Promise<number> {
  clear()
  const res = await fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: {'content-type': 'application/json', ...headers},
    body: JSON.stringify(body),
  })
  answered = await res.text()
  return res.status
}

const thinkingSent = () =>
  received.map(
    (b) =>
      (JSON.parse(String(b)) as {generationConfig?: {thinkingConfig?: unknown}}).generationConfig
        ?.thinkingConfig,
  )

describe('Claude Code with thinking off, translated to Gemini 3 Flash', () => {
  const CLAUDE_CODE = {
    model: 'claude-haiku-4-5',
    max_tokens: 512,
    thinking: {type: 'disabled'},
    messages: [{role: 'user', content: 'Summarise this session in five words.'}],
  }
  const ask = () => post('/v1/messages', CLAUDE_CODE, {'x-api-key': 'gw', 'anthropic-version': '2023-06-01'})

  it('MINIMAL refused: learned, sent again with LOW and answered; the next request with LOW at once', async () => {
    upstreamModel = 'gemini-3-flash-preview'
    targets = [{provider: provider('g3-flash'), model: upstreamModel, translate: true}]
    expect(await ask()).toBe(200)
    expect(thinkingSent()).toEqual([{thinkingLevel: 'MINIMAL'}, {thinkingLevel: 'LOW'}])
    // (no budget beside the level: Google refuses the two together)
    expect(received.some((b) => String(b).includes('thinkingBudget'))).toBe(false)
    const [row] = await gateway.settled(1)
    expect(row).toMatchObject({status: 200})
    expect(row.error).toMatch(/refused thinkingLevel MINIMAL: sent again with LOW, the next level up/)

    expect(await ask()).toBe(200)
    expect(thinkingSent()).toEqual([{thinkingLevel: 'LOW'}])
    expect((await gateway.settled(1))[0]).toMatchObject({status: 200, error: null})
  })

  it('streamed (as Claude Code always asks): MINIMAL refused, LOW streamed back; the next with LOW at once', async () => {
    upstreamModel = 'gemini-3-flash-preview'
    targets = [{provider: provider('g3-flash-stream'), model: upstreamModel, translate: true}]
    const streamed = () =>
      post(
        '/v1/messages',
        {...CLAUDE_CODE, stream: true},
        {'x-api-key': 'gw', 'anthropic-version': '2023-06-01'},
      )
    expect(await streamed()).toBe(200)
    expect(thinkingSent()).toEqual([{thinkingLevel: 'MINIMAL'}, {thinkingLevel: 'LOW'}])
    // the Gemini stream as Messages events, the answer's text in them
    expect(answered).toContain('event: message_start')
    expect(answered).toContain('"text_delta","text":"done"')
    expect(answered).toContain('event: message_stop')
    const [row] = await gateway.settled(1)
    expect(row).toMatchObject({status: 200})
    expect(row.error).toMatch(/refused thinkingLevel MINIMAL: sent again with LOW, the next level up/)

    expect(await streamed()).toBe(200)
    expect(thinkingSent()).toEqual([{thinkingLevel: 'LOW'}])
    expect(answered).toContain('"text_delta","text":"done"')
  })

  it("a relay's gemini-3-pro-high: HIGH, the level its name fixes, from the first request (before: LOW and MEDIUM refused first)", async () => {
    upstreamModel = 'gemini-3-pro-high'
    targets = [{provider: provider('relay-high'), model: upstreamModel, translate: true}]
    expect(await ask()).toBe(200)
    expect(thinkingSent()).toEqual([{thinkingLevel: 'HIGH'}])
    expect((await gateway.settled(1))[0]).toMatchObject({status: 200, error: null})
  })

  it('Gemini 3 Pro by its name: LOW from the first request (it cannot stop thinking)', async () => {
    upstreamModel = 'gemini-3.1-pro-preview'
    targets = [{provider: provider('g3-pro'), model: upstreamModel, translate: true}]
    expect(await ask()).toBe(200)
    expect(thinkingSent()).toEqual([{thinkingLevel: 'LOW'}])
  })
})

describe('Gemini CLI passed through to Gemini 3', () => {
  it('its thinking config goes as it came, byte for byte', async () => {
    upstreamModel = 'gemini-3.1-pro-preview'
    targets = [{provider: provider('g3-cli'), model: upstreamModel}]
    const body = {
      contents: [{role: 'user', parts: [{text: 'hi'}]}],
      generationConfig: {temperature: 1, thinkingConfig: {includeThoughts: true, thinkingLevel: 'HIGH'}},
    }
    expect(
      await post('/v1beta/models/gemini-3.1-pro-preview:generateContent', body, {'x-goog-api-key': 'gw'}),
    ).toBe(200)
    expect(received.map(String)).toEqual([JSON.stringify(body)])
  })

  it("its LOW refused by a relay's gemini-3-pro-high: sent again with HIGH at once, not MEDIUM first; the next with HIGH", async () => {
    upstreamModel = 'gemini-3-pro-high'
    targets = [{provider: provider('relay-cli'), model: upstreamModel}]
    const body = {
      contents: [{role: 'user', parts: [{text: 'hi'}]}],
      generationConfig: {thinkingConfig: {includeThoughts: true, thinkingLevel: 'low'}},
    }
    const ask = () => post('/v1beta/models/gemini-3-pro-high:generateContent', body, {'x-goog-api-key': 'gw'})
    expect(await ask()).toBe(200)
    expect(thinkingSent()).toEqual([
      {includeThoughts: true, thinkingLevel: 'low'},
      {includeThoughts: true, thinkingLevel: 'high'},
    ])
    const [row] = await gateway.settled(1)
    expect(row.error).toMatch(/refused thinkingLevel low: sent again with HIGH, the level its name says/)
    expect(await ask()).toBe(200)
    expect(thinkingSent()).toEqual([{includeThoughts: true, thinkingLevel: 'high'}])
  })

  it('MINIMAL refused by gemini-3.8-flash: sent again with LOW and answered; the next request with LOW at once', async () => {
    upstreamModel = 'gemini-3.8-flash'
    targets = [{provider: provider('g38-cli'), model: upstreamModel}]
    const body = {
      contents: [{role: 'user', parts: [{text: 'hi'}]}],
      generationConfig: {thinkingConfig: {thinkingLevel: 'MINIMAL'}},
    }
    const ask = () => post('/v1beta/models/gemini-3.8-flash:generateContent', body, {'x-goog-api-key': 'gw'})
    expect(await ask()).toBe(200)
    expect(thinkingSent()).toEqual([{thinkingLevel: 'MINIMAL'}, {thinkingLevel: 'LOW'}])
    expect(JSON.parse(answered)).toMatchObject({candidates: [{content: {parts: [{text: 'done'}]}}]})
    const [row] = await gateway.settled(1)
    expect(row).toMatchObject({status: 200})
    expect(row.error).toMatch(/refused thinkingLevel MINIMAL: sent again with LOW, the next level up/)

    expect(await ask()).toBe(200)
    expect(thinkingSent()).toEqual([{thinkingLevel: 'LOW'}])
    // the rest of its body as it came
    expect(received.map(String)).toEqual([
      JSON.stringify({...body, generationConfig: {thinkingConfig: {thinkingLevel: 'LOW'}}}),
    ])
  })
})
