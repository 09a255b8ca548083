/**
 * Chat hosts that drop the reasoning of earlier assistant turns from the model's input unless the
 * request asks to keep it: DashScope (`preserve_thinking: true`: Qwen3.6 on, Kimi K2.6 there), Z.AI
 * and BigModel (`thinking.clear_thinking: false`: GLM-4.7, GLM-5), Moonshot (`thinking.keep:
 * "all"`: Kimi K2.6). Claude Code's tool loop translated to them, thinking on and its reasoning
 * going back, asks so; thinking off, a first turn, another model or another host do not; a relay
 * that refuses the field (the simulator's `strict-fields` words), or Z.AI in its own (code 1210,
 * "Invalid API parameter thinking.clear_thinking"), learns to go without it: for Z.AI and Moonshot
 * the preserved thinking alone, their off switch in the same `thinking` still sent. The proxy
 * in this process; the vendors' origins are served by a scripted upstream on 127.0.0.1 (the
 * gateway's connection pool for each is pointed there: nothing leaves this machine).
 */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {strictFieldsRefusal} from '../../sim/upstream/quirks.js'
import type {ProxyTarget} from './proxy.js'
import {CHAT_ANSWER, judgedMessagesGateway, serveOrigins, translatedChatTarget} from './proxy-fixture.js'

const DASHSCOPE = 'https://dashscope-intl.aliyuncs.com'
const ZAI = 'https://api.z.ai'
const MOONSHOT = 'https://api.moonshot.ai'
const VENDORS = new Set([DASHSCOPE, ZAI, MOONSHOT])
/** The models the scripted upstream refuses unknown fields for, as a strict relay does. */
const STRICT = 'qwen3.7-max'
const STRICT_GLM = 'glm-5.1-relay'
/** The model the scripted upstream refuses `clear_thinking` for in Z.AI's own words (code 1210). */
const NO_CLEAR = 'glm-5.2'

let targets: ProxyTarget[] = []
const {gateway, upstream, received, start, clear, close, post} = judgedMessagesGateway(
  (body) => {
    if (body.model === NO_CLEAR && String(JSON.stringify(body.thinking)).includes('clear_thinking'))
      return {
        status: 400,
        body: {error: {code: '1210', message: 'Invalid API parameter thinking.clear_thinking'}},
      }
    return body.model === STRICT || body.model === STRICT_GLM ? strictFieldsRefusal(body) : undefined
  },
  {route: () => ({targets})},
  {stream: '', json: CHAT_ANSWER},
)
// (the vendors' origins served by the scripted upstream)
serveOrigins(gateway, VENDORS, () => upstream.origin)

beforeAll(start)
afterAll(close)

const translated = translatedChatTarget

/** Claude Code's turn after a tool ran, its thinking of the turn before (a chat upstream's) going back. */
const toolLoop = (thinking: Record<string, unknown>, withReasoning = true) => ({
  model: 'claude-sonnet-4-5',
  max_tokens: 8192,
  thinking,
  messages: [
    {role: 'user', content: 'list the files'},
    {
      role: 'assistant',
      content: [
        ...(withReasoning ? [{type: 'thinking', thinking: 'I should run ls.', signature: 'gwx1.chat.'}] : []),
        {type: 'tool_use', id: 'toolu_1', name: 'Bash', input: {command: 'ls'}},
      ],
    },
    {role: 'user', content: [{type: 'tool_result', tool_use_id: 'toolu_1', content: 'a.ts\nb.ts'}]},
  ],
  tools: [{name: 'Bash', input_schema: {type: 'object', properties: {command: {type: 'string'}}}}],
})
const ON = {type: 'enabled', budget_tokens: 4096}

/** The bodies the upstream got for `body` to `target`. */
async function sent(target: ProxyTarget, body: unknown): Promise<Array<Record<string, unknown>>> {
  targets = [target]
  clear()
  const res = await post(body)
  expect(res.status).toBe(200)
  await res.text()
  return received.map((b) => JSON.parse(String(b)) as Record<string, unknown>)
}

/** What the one body sent says of preserved thinking: its DashScope flag, its `thinking`. */
const asked = (body: Record<string, unknown>) => [body.preserve_thinking, body.thinking]

describe("Claude Code's tool loop, thinking on, to a host that drops earlier reasoning", () => {
  it.each([
    ['qwen3.6-plus on DashScope', 'qwen3.6-plus', `${DASHSCOPE}/compatible-mode/v1`, [true, undefined]],
    ['Kimi K2.6 on DashScope', 'kimi-k2.6', `${DASHSCOPE}/compatible-mode/v1`, [true, undefined]],
    [
      'GLM-5.1 on Z.AI',
      'glm-5.1',
      `${ZAI}/api/paas/v4`,
      [undefined, {type: 'enabled', clear_thinking: false}],
    ],
    ['Kimi K2.6 on Moonshot', 'kimi-k2.6', `${MOONSHOT}/v1`, [undefined, {type: 'enabled', keep: 'all'}]],
  ])('%s: asked to keep it, the reasoning going back', async (_, model, baseUrl, expected) => {
    const [body] = await sent(translated('pt', model, baseUrl), toolLoop(ON))
    expect(asked(body)).toEqual(expected)
    expect((body.messages as Array<Record<string, unknown>>)[1]).toMatchObject({
      role: 'assistant',
      reasoning_content: 'I should run ls.',
    })
  })

  it('thinking off, no reasoning going back, another model or another host: nothing asked', async () => {
    const cases: Array<[ProxyTarget, unknown]> = [
      [translated('pt', 'qwen3.6-plus', `${DASHSCOPE}/compatible-mode/v1`), toolLoop({type: 'disabled'})],
      [translated('pt', 'qwen3.6-plus', `${DASHSCOPE}/compatible-mode/v1`), toolLoop(ON, false)],
      [translated('pt', 'glm-5.1', `${ZAI}/api/paas/v4`), toolLoop(ON, false)],
      // (Qwen3.5 and earlier, Kimi K2.7 and K3, GLM off Z.AI, Qwen3.6 off DashScope)
      [translated('pt', 'qwen3.5-plus', `${DASHSCOPE}/compatible-mode/v1`), toolLoop(ON)],
      [translated('pt', 'kimi-k2.7-code', `${MOONSHOT}/v1`), toolLoop(ON)],
      [translated('pt', 'glm-5.1', `${DASHSCOPE}/compatible-mode/v1`), toolLoop(ON)],
      [translated('pt', 'qwen3.6-plus', upstream.origin), toolLoop(ON)],
    ]
    for (const [target, body] of cases) {
      const [one] = await sent(target, body)
      expect([target.model, ...asked(one)]).toEqual([
        target.model,
        undefined,
        // (thinking off keeps its own switch)
        (body as {thinking: {type: string}}).thinking.type === 'disabled' && target.model?.startsWith('glm')
          ? {type: 'disabled'}
          : undefined,
      ])
    }
  })
})

describe('a relay that refuses the field', () => {
  it('learned at once: sent again without it and answered; the next request without it from the first try', async () => {
    const target = translated('pt-strict', STRICT, `${DASHSCOPE}/compatible-mode/v1`)
    const first = await sent(target, toolLoop(ON))
    expect(first.map((b) => b.preserve_thinking)).toEqual([true, undefined])
    const [row] = await gateway.settled(1)
    expect(row).toMatchObject({status: 200})
    expect(row.error).toMatch(/refused preserve_thinking: sent again without it/)
    const later = await sent(target, toolLoop(ON))
    expect(later.map((b) => b.preserve_thinking)).toEqual([undefined])
  })

  /**
   * Claude Code's tool loop, thinking on, to `model` on Z.AI, its preserved thinking refused: sent
   * again without it, the row says so, the next request without it from the first try. The bodies
   * a request with thinking off then sent.
   */
  async function learnedThenOff(name: string, model: string): Promise<unknown[]> {
    const target = translated(name, model, `${ZAI}/api/paas/v4`)
    const first = await sent(target, toolLoop(ON))
    expect(first.map((b) => b.thinking)).toEqual([{type: 'enabled', clear_thinking: false}, undefined])
    const [row] = await gateway.settled(1)
    expect(row).toMatchObject({status: 200})
    expect(row.error).toMatch(/refused preserved thinking .*: sent again without it/)
    expect((await sent(target, toolLoop(ON))).map((b) => b.thinking)).toEqual([undefined])
    return (await sent(target, toolLoop({type: 'disabled'}))).map((b) => b.thinking)
  }

  it("Z.AI's preserved thinking refused by a relay: learned narrowly, the next request without it", async () => {
    // the off switch is its own refusal: tried first (this relay refuses it too, then learned)
    expect(await learnedThenOff('pt-strict-glm', STRICT_GLM)).toEqual([{type: 'disabled'}, undefined])
  })

  it("Z.AI's own words (code 1210, thinking.clear_thinking): learned; thinking off still sends its switch", async () => {
    // (a drop of `thinking` would have taken the off switch too: GLM would think anyway)
    expect(await learnedThenOff('pt-zai-1210', NO_CLEAR)).toEqual([{type: 'disabled'}])
  })
})
