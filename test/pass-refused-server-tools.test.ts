/**
 * Claude Code's advisor (`advisor_20260301`, with an advisor model set) passed through to a host
 * that refuses the tool by its tag (sifxprime/krouter PR #16: "tools.N: Input tag
 * 'advisor_20260301' found using 'type' does not match any of the expected tags"), as a host
 * fronting Claude does once its `advisor-tool-2026-03-01` beta is learned away: the refusal is
 * learned per provider and model, the request goes again at once without the tool and with the
 * advisor's records in its history as the advice's text, and later turns go so from the start.
 * The real daemon, the simulator's Messages upstream under `no-advisor` (and `strict-betas`).
 */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {ADVICE, ADVISOR_TOOL, advisedTurns, BASH_TOOL} from './helpers/claude-code.js'
import {projectLogRows, startTranslatedRoutes, takeSimRequests} from './helpers/gateway.js'

let base = ''
let simOrigin = ''
let stop: () => Promise<void> = async () => {}
let keys = new Map<string, string>()

beforeAll(async () => {
  ;({base, simOrigin, stop, keys} = await startTranslatedRoutes(
    {
      relay: ['sim-messages', 'claude-sonnet-4-5+no-advisor'],
      vertex: ['sim-messages', 'claude-sonnet-4-5+strict-betas+no-advisor'],
    },
    {prefix: 'advisor', families: ['messages']},
  ))
}, 120_000)

afterAll(() => stop())

/** What the simulator's Messages endpoint received since the last call: each body and its betas. */
const received = async () =>
  (await takeSimRequests(simOrigin, /^\/v1\/messages$/)).map(({headers, body}) => ({
    beta: headers['anthropic-beta'],
    body,
  }))

const rows = (id: string, count: number) => projectLogRows(base, `advisor-${id}`, count)

const BETAS = 'claude-code-20250219,advisor-tool-2026-03-01,interleaved-thinking-2025-05-14'
/** Claude Code's turn after one that asked the advisor (the blocks as Anthropic answered them). */
const MESSAGES = advisedTurns(ADVICE, [{type: 'text', text: 'go on', cache_control: {type: 'ephemeral'}}])

/** The same history with the advisor's records as text, as a host without the advisor takes it. */
const AS_TEXT = [
  MESSAGES[0],
  {
    role: 'assistant',
    content: [
      {type: 'text', text: 'Let me ask the advisor.'},
      {type: 'text', text: "Advisor's advice: Check the fake timer first."},
      {type: 'text', text: 'I will look at the timer first.'},
    ],
  },
  MESSAGES[2],
]

const post = (id: string, model: string) =>
  fetch(`${base}/v1/messages`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-api-key': keys.get(id)!,
      'anthropic-version': '2023-06-01',
      'anthropic-beta': BETAS,
      'user-agent': 'claude-cli/2.1.332 (external, cli)',
    },
    body: JSON.stringify({
      model,
      max_tokens: 4096,
      system: [{type: 'text', text: 'You are Claude Code.', cache_control: {type: 'ephemeral'}}],
      tools: [BASH_TOOL, ADVISOR_TOOL],
      messages: MESSAGES,
    }),
  })

describe("Claude Code's advisor refused by its tag", {timeout: 60_000}, () => {
  it('refused once: sent again without the tool, its records as text; the next turn one try', async () => {
    await received()
    const first = await post('relay', 'claude-sonnet-4-5')
    expect(first.status).toBe(200)
    expect(((await first.json()) as any).content).toEqual([expect.objectContaining({type: 'text'})])
    const sent = await received()
    expect(sent.map((s) => s.body.tools.map((t: {name: string}) => t.name))).toEqual([
      ['Bash', 'advisor'],
      ['Bash'],
    ])
    expect(sent[0].body.messages).toEqual(MESSAGES)
    expect(sent[1].body.messages).toEqual(AS_TEXT)
    expect((await rows('relay', 1)).map((r) => [r.status, r.error])).toEqual([
      [200, 'sim-messages refused its advisor_20260301 tool: sent again without it'],
    ])
    const {adaptations} = (await (await fetch(`${base}/api/adaptations`)).json()) as {
      adaptations: Array<{model: string; rules: string[]}>
    }
    expect(adaptations.find((a) => a.model === 'claude-sonnet-4-5+no-advisor')?.rules).toEqual([
      'advisor_20260301 tools left out (refused)',
    ])

    // the next turn: one try, without it
    expect((await post('relay', 'claude-sonnet-4-5')).status).toBe(200)
    const next = await received()
    expect(next).toHaveLength(1)
    expect(next[0].body.tools).toEqual([BASH_TOOL])
    expect(next[0].body.messages).toEqual(AS_TEXT)
    expect((await rows('relay', 2))[1].error).toBeNull()
  })

  it('a host fronting Claude: its beta refused, then the tool; the next turn one try without both', async () => {
    await received()
    expect((await post('vertex', 'claude-sonnet-4-5')).status).toBe(200)
    const sent = await received()
    expect(sent.map((s) => [s.beta, s.body.tools.length])).toEqual([
      [BETAS, 2],
      ['claude-code-20250219,interleaved-thinking-2025-05-14', 2],
      ['claude-code-20250219,interleaved-thinking-2025-05-14', 1],
    ])
    expect((await rows('vertex', 1)).map((r) => r.error)).toEqual([
      'sim-messages refused anthropic-beta advisor-tool-2026-03-01: sent again without it; sim-messages refused its advisor_20260301 tool: sent again without it',
    ])
    expect((await post('vertex', 'claude-sonnet-4-5')).status).toBe(200)
    const next = await received()
    expect(next.map((s) => [s.beta, s.body.tools.length])).toEqual([
      ['claude-code-20250219,interleaved-thinking-2025-05-14', 1],
    ])
    expect(next[0].body.messages).toEqual(AS_TEXT)
  })
})
