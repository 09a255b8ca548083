/**
 * Claude Code's `max_tokens: 1` probe of a model (its `/model` check) translated to a chat
 * completions upstream whose reasoning model cannot finish within it: OpenAI's 400 "Could not
 * finish the message because max_tokens or model output limit was reached" (BerriAI/litellm
 * #35061), which states no floor, and Claude Code called the model unavailable. Learned per model
 * as the Responses floor is: sent again at once with 16, and so from then on. The real daemon, the
 * simulator's chat upstream under `output-floor-16`.
 */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {projectLogRows, startTranslatedRoutes, takeSimCalls} from './helpers/gateway.js'

let base = ''
let simOrigin = ''
let stop: () => Promise<void> = async () => {}
let keys = new Map<string, string>()

beforeAll(async () => {
  ;({base, simOrigin, stop, keys} = await startTranslatedRoutes(
    {gpt: ['sim-chat', 'gpt-5.5+output-floor-16'], json: ['sim-chat', 'gpt-4.1+output-floor-16']},
    {prefix: 'floor', families: ['messages']},
  ))
}, 120_000)

afterAll(() => stop())

/** The output maximum of each chat body the simulator received since the last call. */
const maxima = async (): Promise<unknown[]> =>
  (await takeSimCalls(simOrigin, /\/chat\/completions$/)).map(
    (body) => body.max_completion_tokens ?? body.max_tokens,
  )

/** A Messages request of the route `id`, as Claude Code sends it. */
const ask = (id: string, body: Record<string, unknown>) =>
  fetch(`${base}/v1/messages`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-api-key': keys.get(id)!,
      'anthropic-version': '2023-06-01',
      'user-agent': 'claude-cli/2.1.332 (external, cli)',
    },
    body: JSON.stringify({model: 'claude-sonnet-4-5', messages: [{role: 'user', content: 'count'}], ...body}),
  })

/** Claude Code's probe of a model, as it sends it. */
const probe = () => ask('gpt', {max_tokens: 1})

/** A classifier's request for a JSON answer in a few tokens (a structured output: `output_config.format`). */
const classify = () =>
  ask('json', {
    max_tokens: 10,
    output_config: {
      format: {
        type: 'json_schema',
        schema: {
          type: 'object',
          properties: {ok: {type: 'boolean'}},
          required: ['ok'],
          additionalProperties: false,
        },
      },
    },
  })

describe("Claude Code's max_tokens 1 probe on a chat route", {timeout: 60_000}, () => {
  it('refused without a floor stated: sent again with 16, and so from then on', async () => {
    await maxima()
    const first = await probe()
    expect(first.status).toBe(200)
    expect(((await first.json()) as {type: string}).type).toBe('message')
    expect(await maxima()).toEqual([1, 16])
    expect((await projectLogRows(base, 'floor-gpt', 1)).map((r) => [r.status, r.error])).toEqual([
      [200, 'sim-chat refused max_tokens 1: sent again with 16, its minimum'],
    ])
    // the next probe: one try
    expect((await probe()).status).toBe(200)
    expect(await maxima()).toEqual([16])
  })

  it('a request for JSON below 16, the same words (its JSON cut short, or the floor): sent again once with 16, each later one for JSON so, a plain one as it came', async () => {
    await maxima()
    const first = await classify()
    expect(first.status).toBe(200)
    expect(await maxima()).toEqual([10, 16])
    expect((await projectLogRows(base, 'floor-json', 1)).map((r) => [r.status, r.error])).toEqual([
      [
        200,
        "sim-chat refused max_tokens 10 for JSON (its answer cut short, or the model's floor): sent again with 16, and each request for JSON so",
      ],
    ])
    expect((await classify()).status).toBe(200)
    expect(await maxima()).toEqual([16])
    // (a plain tiny maximum to that model is not raised by it: the model's own refusal teaches its floor)
    expect((await ask('json', {max_tokens: 1})).status).toBe(200)
    expect(await maxima()).toEqual([1, 16])
  })
})
