/**
 * Anthropic's current models through translation: Opus 4.7 on (and Claude 5) take only adaptive
 * thinking (`thinking.type: adaptive` with `output_config.effort`), refuse `temperature` and
 * `top_p`, and omit the thinking's text unless `thinking.display` asks for it; Claude 4.5 and
 * older refuse adaptive thinking. Codex (Responses), Gemini CLI (Gemini) and chat clients on such
 * a model: the form the model's name says goes at once, and a name that says nothing learns it
 * from the refusal. The real daemon, the simulator's Messages upstream (its own table of Claude
 * models, and quirks `adaptive-only`, `no-adaptive` for other names), the official SDKs.
 */
import {GoogleGenAI} from '@google/genai'
import OpenAI from 'openai'
import {describe, expect, it} from 'vitest'

import {codexRequest} from './helpers/codex.js'
import {projectLogRows, takeSimCalls, translatedRoutes} from './helpers/gateway.js'

/** Policy id -> the Messages model its routes translate to. */
const MODELS: Record<string, string> = {
  opus48: 'claude-opus-4-8',
  sonnet45: 'claude-sonnet-4-5-20250929',
  // names that say nothing of the model's thinking: learned from the refusal
  corp: 'corp-large+adaptive-only',
  // a name that says adaptive, on a server that refuses it
  proxy46: 'claude-sonnet-4-6+no-adaptive',
}

const gw = translatedRoutes(MODELS, {
  prefix: 'claude',
  provider: 'sim-messages',
  families: ['responses', 'gemini', 'chat'],
})

const messagesCalls = (): Promise<Array<Record<string, any>>> => takeSimCalls(gw.simOrigin, /\/v1\/messages$/)
const logRows = (name: string, count = 1) => projectLogRows(gw.base, name, count)

/** What each Messages request asked of the model's thinking and sampling. */
const settings = (calls: Array<Record<string, any>>) =>
  calls.map((c) => ({
    thinking: c.thinking ?? null,
    effort: c.output_config?.effort ?? null,
    temperature: c.temperature ?? null,
  }))

const summaryText = (output: any[]): string =>
  output
    .filter((i) => i.type === 'reasoning')
    .flatMap((i) => i.summary ?? [])
    .map((s: any) => s.text)
    .join('')

describe('Anthropic models that take adaptive thinking only (Opus 4.7 on)', {timeout: 60_000}, () => {
  it('Codex on claude-opus-4-8: adaptive thinking with its effort, the summary asked for and shown, turn 2 accepted', async () => {
    await messagesCalls()
    const openai = new OpenAI({baseURL: `${gw.base}/v1`, apiKey: gw.keys.get('opus48')!, maxRetries: 0})
    const first = await openai.responses.create(
      codexRequest([{role: 'user', content: 'Use the tool to read /tmp/notes.txt.'}]),
    )
    expect(first.status).toBe('completed')
    // the thinking's text came back (asked for with display: summarized), as Codex's summary
    expect(summaryText(first.output)).not.toBe('')
    const call = first.output.find((i: any) => i.type === 'function_call') as any
    expect(call?.name).toBe('read_file')
    // turn 2: the reasoning item (its signature inside encrypted_content) and the call's output
    const second = await openai.responses.create(
      codexRequest([
        {role: 'user', content: 'Use the tool to read /tmp/notes.txt.'},
        ...first.output,
        {type: 'function_call_output', call_id: call.call_id, output: 'the notes'},
      ]),
    )
    expect(second.status).toBe('completed')
    const calls = await messagesCalls()
    expect(settings(calls)).toEqual([
      {thinking: {type: 'adaptive', display: 'summarized'}, effort: 'high', temperature: null},
      {thinking: {type: 'adaptive', display: 'summarized'}, effort: 'high', temperature: null},
    ])
    // the thinking went back with the signature the model gave it
    const back = calls[1].messages.find((m: any) => m.role === 'assistant').content[0]
    expect(back.type).toBe('thinking')
    expect(back.signature).toBeTruthy()
    // nothing to learn: no refusal on the way
    const rows = await logRows('claude-opus48', 2)
    expect(rows.map((r) => [r.status, r.error ?? null])).toEqual([
      [200, null],
      [200, null],
    ])
  })

  it('Codex streaming on claude-opus-4-8: the summary streams', async () => {
    await messagesCalls()
    const openai = new OpenAI({baseURL: `${gw.base}/v1`, apiKey: gw.keys.get('opus48')!, maxRetries: 0})
    const stream = await openai.responses.create(codexRequest('Say hello.', true))
    let summary = ''
    let done: any
    for await (const event of stream as any) {
      if (event.type === 'response.reasoning_summary_text.delta') summary += event.delta
      if (event.type === 'response.completed') done = event.response
    }
    expect(done?.status).toBe('completed')
    expect(summary).not.toBe('')
    expect(settings(await messagesCalls())).toEqual([
      {thinking: {type: 'adaptive', display: 'summarized'}, effort: 'high', temperature: null},
    ])
  })

  it("Gemini CLI's temperature and thoughts on claude-opus-4-8: no temperature sent, the thoughts shown", async () => {
    await messagesCalls()
    const genai = new GoogleGenAI({apiKey: gw.keys.get('opus48')!, httpOptions: {baseUrl: gw.base}})
    const answer = await genai.models.generateContent({
      model: 'gemini-2.5-pro',
      contents: 'Say hello.',
      config: {temperature: 0, topP: 1, thinkingConfig: {includeThoughts: true, thinkingBudget: 8192}},
    })
    const parts = answer.candidates?.[0]?.content?.parts ?? []
    expect(parts.some((p) => p.thought && p.text)).toBe(true)
    expect(parts.some((p) => !p.thought && p.text)).toBe(true)
    // a budget of 8 192 is a medium effort
    expect(settings(await messagesCalls())).toEqual([
      {thinking: {type: 'adaptive', display: 'summarized'}, effort: 'medium', temperature: null},
    ])
  })

  it('Codex without a reasoning summary: the thinking omitted, its signature kept, turn 2 accepted', async () => {
    await messagesCalls()
    const openai = new OpenAI({baseURL: `${gw.base}/v1`, apiKey: gw.keys.get('opus48')!, maxRetries: 0})
    const ask = (input: unknown) =>
      openai.responses.create({...codexRequest(input), reasoning: {effort: 'low'}})
    const prompt = {role: 'user', content: 'Use the tool to read /tmp/notes.txt.'}
    const first = await ask([prompt])
    expect(summaryText(first.output)).toBe('')
    const reasoning = first.output.find((i: any) => i.type === 'reasoning') as any
    expect(reasoning?.encrypted_content).toBeTruthy()
    const call = first.output.find((i: any) => i.type === 'function_call') as any
    const second = await ask([
      prompt,
      ...first.output,
      {type: 'function_call_output', call_id: call.call_id, output: 'the notes'},
    ])
    expect(second.status).toBe('completed')
    const calls = await messagesCalls()
    expect(settings(calls)).toEqual([
      {thinking: {type: 'adaptive'}, effort: 'low', temperature: null},
      {thinking: {type: 'adaptive'}, effort: 'low', temperature: null},
    ])
    // the empty thinking went back with its signature (the sim checks it)
    const back = calls[1].messages.find((m: any) => m.role === 'assistant').content[0]
    expect([back.type, back.thinking, typeof back.signature]).toEqual(['thinking', '', 'string'])
  })

  it("a chat client's reasoning_effort: the thinking's text asked for, and back as reasoning_content", async () => {
    await messagesCalls()
    const openai = new OpenAI({baseURL: `${gw.base}/v1`, apiKey: gw.keys.get('opus48')!, maxRetries: 0})
    const answer: any = await openai.chat.completions.create({
      model: 'gpt-5',
      reasoning_effort: 'medium',
      messages: [{role: 'user', content: 'Say hello.'}],
    } as any)
    expect(answer.choices[0].message.reasoning_content).toBeTruthy()
    expect(settings(await messagesCalls())).toEqual([
      {thinking: {type: 'adaptive', display: 'summarized'}, effort: 'medium', temperature: null},
    ])
  })

  it('a chat client with a temperature and no reasoning: the temperature left out', async () => {
    await messagesCalls()
    const openai = new OpenAI({baseURL: `${gw.base}/v1`, apiKey: gw.keys.get('opus48')!, maxRetries: 0})
    const answer = await openai.chat.completions.create({
      model: 'gpt-5',
      temperature: 0.2,
      messages: [{role: 'user', content: 'Say hello.'}],
    })
    expect(answer.choices[0].message.content).toBeTruthy()
    expect(settings(await messagesCalls())).toEqual([{thinking: null, effort: null, temperature: null}])
  })
})

describe('Claude 4.5 and older, which refuse adaptive thinking', {timeout: 60_000}, () => {
  it('Codex on claude-sonnet-4-5: thinking enabled with a budget, no display', async () => {
    await messagesCalls()
    const openai = new OpenAI({baseURL: `${gw.base}/v1`, apiKey: gw.keys.get('sonnet45')!, maxRetries: 0})
    const answer = await openai.responses.create(codexRequest('Say hello.'))
    expect(answer.status).toBe('completed')
    expect(summaryText(answer.output)).not.toBe('')
    const [call] = await messagesCalls()
    expect(call.thinking).toEqual({type: 'enabled', budget_tokens: 24000})
    expect(call.output_config).toBeUndefined()
  })
})

describe('a name that says nothing of the thinking: learned from the refusal', {timeout: 60_000}, () => {
  it('enabled refused: sent again as adaptive at once, and so from then on; a refused temperature too', async () => {
    await messagesCalls()
    const genai = new GoogleGenAI({apiKey: gw.keys.get('corp')!, httpOptions: {baseUrl: gw.base}})
    const ask = () =>
      genai.models.generateContent({
        model: 'gemini-2.5-pro',
        contents: 'Say hello.',
        config: {temperature: 0, thinkingConfig: {includeThoughts: true, thinkingBudget: 20000}},
      })
    const first = await ask()
    expect(first.candidates?.[0]?.content?.parts?.some((p) => p.thought && p.text)).toBe(true)
    const calls = await messagesCalls()
    // thinking on: no temperature goes with it; the form is what the refusal taught
    expect(settings(calls)).toEqual([
      {thinking: {type: 'enabled', budget_tokens: 20000}, effort: null, temperature: null},
      {thinking: {type: 'adaptive', display: 'summarized'}, effort: 'high', temperature: null},
    ])
    const rows = await logRows('claude-corp')
    expect(rows.map((r) => [r.status, r.error])).toEqual([
      [
        200,
        'sim-messages refused thinking.type enabled: sent again as adaptive thinking with output_config.effort',
      ],
    ])
    // learned: the next request goes adaptive from the start
    await ask()
    expect(settings(await messagesCalls())).toEqual([
      {thinking: {type: 'adaptive', display: 'summarized'}, effort: 'high', temperature: null},
    ])
    // thinking off, a temperature: refused by this model, learned away too
    await genai.models.generateContent({
      model: 'gemini-2.5-pro',
      contents: 'Say hello.',
      config: {temperature: 0.3, thinkingConfig: {thinkingBudget: 0}},
    })
    expect(settings(await messagesCalls())).toEqual([
      {thinking: null, effort: null, temperature: 0.3},
      {thinking: null, effort: null, temperature: null},
    ])
    const {adaptations} = (await (await fetch(`${gw.base}/api/adaptations`)).json()) as {adaptations: any[]}
    const learned = adaptations.find(
      (a) => a.provider === 'sim-messages' && a.model === 'corp-large+adaptive-only',
    )
    expect(learned.rules).toEqual(
      expect.arrayContaining([
        'sent without temperature',
        'thinking sent as adaptive, with output_config.effort',
      ]),
    )
  })

  it('adaptive refused (a name that says 4.6, a server that takes only budgets): sent again enabled', async () => {
    await messagesCalls()
    const openai = new OpenAI({baseURL: `${gw.base}/v1`, apiKey: gw.keys.get('proxy46')!, maxRetries: 0})
    const answer = await openai.responses.create(codexRequest('Say hello.'))
    expect(answer.status).toBe('completed')
    expect(settings(await messagesCalls())).toEqual([
      {thinking: {type: 'adaptive', display: 'summarized'}, effort: 'high', temperature: null},
      {thinking: {type: 'enabled', budget_tokens: 24000}, effort: null, temperature: null},
    ])
    const rows = await logRows('claude-proxy46')
    expect(rows.map((r) => r.error)).toEqual([
      'sim-messages refused adaptive thinking: sent again with thinking.type enabled and a budget',
    ])
  })
})
