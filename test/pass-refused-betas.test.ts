/**
 * Claude Code passed through to a host fronting Claude that validates `anthropic-beta` (Vertex AI,
 * Azure Foundry, Bedrock, a relay): each new Claude Code beta was refused on every request
 * ("Unexpected value(s) `advisor-tool-2026-03-01` for the `anthropic-beta` header", anthropics/
 * claude-code #70563; Bedrock's "invalid beta flag", router-for-me/CLIProxyAPI #4750). The refusal
 * is learned, the request goes again at once without the values named (Bedrock: without the
 * header, then without the `context_management` its beta was for), and later ones go so from the
 * start. The real daemon, the simulator's Messages upstream under `strict-betas` and `bedrock-betas`.
 */
import {describe, expect, it} from 'vitest'

import {takeSimRequests, translatedRoutes} from './helpers/gateway.js'

const gw = translatedRoutes(
  {
    vertex: ['sim-messages', 'claude-sonnet-4-5+strict-betas'],
    bedrock: ['sim-messages', 'claude-opus-4-5+bedrock-betas'],
    vertexfast: ['sim-messages', 'claude-opus-4-6+strict-betas'],
  },
  {prefix: 'betas', families: ['messages']},
)

/** What the simulator's Messages endpoint received since the last call: each body and its betas. */
const received = async () =>
  (await takeSimRequests(gw.simOrigin, /^\/v1\/messages$/)).map(({headers, body}) => ({
    beta: headers['anthropic-beta'],
    body,
  }))

const {rows} = gw

const CLAUDE_CODE_BETAS = 'claude-code-20250219,advisor-tool-2026-03-01,interleaved-thinking-2025-05-14'

/** Claude Code's request, as it sends it: its betas in the header (context editing's and fast mode's with their fields). */
const post = (id: string, model: string, betas = CLAUDE_CODE_BETAS) =>
  fetch(`${gw.base}/v1/messages`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-api-key': gw.keys.get(id)!,
      'anthropic-version': '2023-06-01',
      'anthropic-beta': betas,
      'user-agent': 'claude-cli/2.1.332 (external, cli)',
    },
    body: JSON.stringify({
      model,
      max_tokens: 4096,
      system: [{type: 'text', text: 'You are Claude Code.', cache_control: {type: 'ephemeral'}}],
      messages: [{role: 'user', content: 'Say hello.'}],
      ...(betas.includes('context-management-')
        ? {context_management: {edits: [{type: 'clear_thinking_20251015', keep: 'all'}]}}
        : {}),
      ...(betas.includes('fast-mode-') ? {speed: 'fast'} : {}),
    }),
  })

/** Claude Code's betas beside its context editing. */
const WITH_CONTEXT = `${CLAUDE_CODE_BETAS},context-management-2025-06-27`
/** Claude Code's betas in fast mode (`/fast`, with its `speed`). */
const FAST = `${CLAUDE_CODE_BETAS},fast-mode-2026-02-01`

describe('anthropic-beta values refused by a host fronting Claude', {timeout: 60_000}, () => {
  it("Anthropic's words name the value: sent again without it, and so from then on", async () => {
    await received()
    const first = await post('vertex', 'claude-sonnet-4-5')
    expect(first.status).toBe(200)
    expect(((await first.json()) as any).content).toEqual([expect.objectContaining({type: 'text'})])
    const sent = await received()
    expect(sent.map((s) => s.beta)).toEqual([
      CLAUDE_CODE_BETAS,
      'claude-code-20250219,interleaved-thinking-2025-05-14',
    ])
    // the body as it came, both times
    expect(sent[1].body).toEqual(sent[0].body)
    expect((await rows('vertex', 1)).map((r) => [r.status, r.error])).toEqual([
      [200, 'sim-messages refused anthropic-beta advisor-tool-2026-03-01: sent again without it'],
    ])
    const {adaptations} = (await (await fetch(`${gw.base}/api/adaptations`)).json()) as {
      adaptations: Array<{model: string; rules: string[]}>
    }
    expect(adaptations.find((a) => a.model === 'claude-sonnet-4-5+strict-betas')?.rules).toEqual([
      'anthropic-beta sent without advisor-tool-2026-03-01 (refused)',
    ])

    // the next turn: one try, without it
    expect((await post('vertex', 'claude-sonnet-4-5')).status).toBe(200)
    expect((await received()).map((s) => s.beta)).toEqual([
      'claude-code-20250219,interleaved-thinking-2025-05-14',
    ])
    expect((await rows('vertex', 2))[1].error).toBeNull()
  })

  it("Bedrock's invalid beta flag names none: sent again without the header and the context_management its beta was for", async () => {
    await received()
    expect((await post('bedrock', 'claude-opus-4-5', WITH_CONTEXT)).status).toBe(200)
    const sent = await received()
    expect(sent.map((s) => [s.beta, s.body.context_management !== undefined])).toEqual([
      [WITH_CONTEXT, true],
      [undefined, false],
    ])
    expect((await rows('bedrock', 1)).map((r) => r.error)).toEqual([
      'sim-messages refused its anthropic-beta values (invalid beta flag, none named): sent again without the header and without context_management (a field of those betas)',
    ])
    // the next turn: one try, neither
    expect((await post('bedrock', 'claude-opus-4-5', WITH_CONTEXT)).status).toBe(200)
    expect((await received()).map((s) => [s.beta, s.body.context_management !== undefined])).toEqual([
      [undefined, false],
    ])
  })

  it("a beta named takes the body field that needs it in the same retry (fast mode's speed)", async () => {
    await received()
    expect((await post('vertexfast', 'claude-opus-4-6', FAST)).status).toBe(200)
    const sent = await received()
    expect(sent.map((s) => [s.beta, s.body.speed])).toEqual([
      [FAST, 'fast'],
      [CLAUDE_CODE_BETAS.replace(',advisor-tool-2026-03-01', ''), undefined],
    ])
    const {speed: _, ...rest} = sent[0].body
    expect(sent[1].body).toEqual(rest)
    expect((await rows('vertexfast', 1)).map((r) => r.error)).toEqual([
      'sim-messages refused anthropic-beta advisor-tool-2026-03-01, fast-mode-2026-02-01: sent again without them and without speed (a field of those betas)',
    ])
    // the next turn: one try, without either
    expect((await post('vertexfast', 'claude-opus-4-6', FAST)).status).toBe(200)
    expect((await received()).map((s) => [s.beta, s.body.speed])).toEqual([
      [CLAUDE_CODE_BETAS.replace(',advisor-tool-2026-03-01', ''), undefined],
    ])
  })
})
