/**
 * Gemini CLI routed by a policy to another model than the one it names:
 * - a tool call a fallback of another family made (here a chat upstream) comes back with Google's
 *   `skip_thought_signature_validator`, which Gemini CLI keeps in its history, so the turn goes on
 *   when its next request reaches Gemini 3 (no "Function call is missing a thought_signature");
 * - its thinking config refused by a Gemini model of another generation (gemini-3's
 *   `thinkingLevel` by Gemini 2.5: "Thinking level is not supported for this model."; a utility
 *   call's `thinkingBudget: 0` by 2.5 Pro) is learned per model on the pass-through, the request
 *   going again at once in the form the model takes, and later ones so from the start.
 * - its `web_fetch` (Google's URL context tool, alone in a request of its own) on a translated
 *   route: a 400 that says why, nothing sent, so Gemini CLI fetches the page itself and asks again
 *   without the tool, which translates (not an answer from memory).
 * The real daemon, the simulator (its `no-thinking-level` and `thinking-only` quirks, its Gemini 3
 * signature check), the Google Gen AI SDK.
 */
import {ApiError, GoogleGenAI} from '@google/genai'
import type {Content, Part} from '@google/genai'
import {describe, expect, it} from 'vitest'

import {takeSimCalls, translatedRoutes} from './helpers/gateway.js'

const gw = translatedRoutes(
  {
    // the fallback of another family: Gemini CLI translated to chat completions
    chat: ['sim-chat', 'gpt-5-mini'],
    // Gemini 3, passed through
    g3: ['sim-gemini', 'gemini-3-pro-preview'],
    // a Gemini 2.5 model, which takes no thinking level, passed through
    flash: ['sim-gemini', 'gemini-2.5-flash+no-thinking-level'],
    // Gemini 2.5 Pro, which cannot turn thinking off, passed through
    pro: ['sim-gemini', 'gemini-2.5-pro+thinking-only'],
    // Gemma 3, which takes no system instruction nor thinking config, passed through
    gemma3: ['sim-gemini', 'gemma-3-27b-it'],
  },
  {prefix: 'gcli', families: ['gemini']},
)

const GEMINI_PATH = /:(?:stream)?[gG]enerateContent$/
const {rows} = gw
const learned = async (model: string): Promise<string[]> => {
  const {adaptations} = (await (await fetch(`${gw.base}/api/adaptations`)).json()) as {
    adaptations: Array<{model: string; rules: string[]}>
  }
  return adaptations.find((a) => a.model === model)?.rules ?? []
}
const client = (id: string) => new GoogleGenAI({apiKey: gw.keys.get(id)!, httpOptions: {baseUrl: gw.base}})

describe('Gemini CLI routed to another model', {timeout: 60_000}, () => {
  it("a call a chat fallback made goes on to Gemini 3: the answer's first call carries Google's skip value", async () => {
    const config = {
      tools: [
        {
          functionDeclarations: [
            {
              name: 'run_shell',
              parametersJsonSchema: {type: 'object', properties: {command: {type: 'string'}}},
            },
          ],
        },
      ],
    }
    const ask: Content = {role: 'user', parts: [{text: 'List the files.'}]}
    const parts: Part[] = []
    for await (const chunk of await client('chat').models.generateContentStream({
      model: 'gemini-3-pro-preview',
      contents: [ask],
      config,
    }))
      parts.push(...(chunk.candidates?.[0]?.content?.parts ?? []))
    // Gemini CLI drops thought parts from the history it sends back
    const kept = parts.filter((p) => !p.thought)
    const callPart = kept.find((p) => p.functionCall)!
    expect(callPart.thoughtSignature).toBe('skip_thought_signature_validator')
    await gw.calls(GEMINI_PATH)
    // the next request of the loop reaches Gemini 3 (the fallback's turn over), as Gemini CLI sends it
    const next = await client('g3').models.generateContent({
      model: 'gemini-3-pro-preview',
      config,
      contents: [
        ask,
        {role: 'model', parts: kept},
        {
          role: 'user',
          parts: [
            {
              functionResponse: {
                id: callPart.functionCall!.id,
                name: callPart.functionCall!.name,
                response: {output: 'a.ts b.ts'},
              },
            },
          ],
        },
      ],
    })
    expect(next.candidates?.[0]?.content?.parts?.length).toBeGreaterThan(0)
    const sent = await gw.calls(GEMINI_PATH)
    expect(sent).toHaveLength(1)
    expect(sent[0].contents[1].parts.find((p: any) => p.functionCall).thoughtSignature).toBe(
      'skip_thought_signature_validator',
    )
    const [row] = await rows('g3')
    expect([row.status, row.error]).toEqual([200, null])
  })

  it("gemini-3's thinkingLevel to Gemini 2.5: learned from its refusal, sent again without it, later ones alike", async () => {
    await gw.calls(GEMINI_PATH)
    const ask = () =>
      client('flash').models.generateContent({
        model: 'gemini-3-pro-preview',
        contents: [{role: 'user', parts: [{text: 'Say hello.'}]}],
        config: {thinkingConfig: {includeThoughts: true, thinkingLevel: 'HIGH' as never}},
      })
    expect((await ask()).candidates?.length).toBe(1)
    const calls = await gw.calls(GEMINI_PATH)
    expect(calls.map((c) => c.generationConfig.thinkingConfig)).toEqual([
      {includeThoughts: true, thinkingLevel: 'HIGH'},
      {includeThoughts: true},
    ])
    const [row] = await rows('flash')
    expect([row.status, row.error]).toEqual([
      200,
      'sim-gemini refused thinkingLevel HIGH: sent again without it, the model decides',
    ])
    expect(await learned('gemini-2.5-flash+no-thinking-level')).toEqual([
      'thinkingLevel left out (the model takes none)',
    ])
    // the next request: one try, the same form
    await ask()
    const later = await gw.calls(GEMINI_PATH)
    expect(later.map((c) => c.generationConfig.thinkingConfig)).toEqual([{includeThoughts: true}])
  })

  it("Gemma 3's refusal of the system instruction: learned, sent again with it in the first user turn, later ones alike", async () => {
    await gw.calls(GEMINI_PATH)
    const ask = () =>
      client('gemma3').models.generateContent({
        model: 'gemini-2.5-flash',
        contents: [{role: 'user', parts: [{text: 'Say hello.'}]}],
        config: {systemInstruction: 'You are Gemini CLI.', thinkingConfig: {includeThoughts: true}},
      })
    expect((await ask()).candidates?.length).toBe(1)
    const calls = await gw.calls(GEMINI_PATH)
    // (Google's "Thinking is not enabled", then "Developer instruction is not enabled": each learned)
    expect(calls).toHaveLength(3)
    expect(calls[2]).not.toHaveProperty('systemInstruction')
    expect(calls[2].contents).toEqual([
      {role: 'user', parts: [{text: 'You are Gemini CLI.\n\n'}, {text: 'Say hello.'}]},
    ])
    const [row] = await rows('gemma3')
    expect(row.status).toBe(200)
    expect(row.error).toContain(
      'sim-gemini refused systemInstruction: sent again with the system text in the first user turn (the model takes none)',
    )
    expect(await learned('gemma-3-27b-it')).toContain(
      'the system prompt in the first user turn (systemInstruction refused)',
    )
    // the next request: one try, the same form
    await ask()
    const later = await gw.calls(GEMINI_PATH)
    expect(later.map((c) => c.contents)).toEqual([calls[2].contents])
  })

  it("a utility call's thinkingBudget 0 to Gemini 2.5 Pro: learned, sent again without the budget", async () => {
    await gw.calls(GEMINI_PATH)
    const answer = await client('pro').models.generateContent({
      model: 'gemini-2.5-flash-lite',
      contents: [{role: 'user', parts: [{text: 'Classify this.'}]}],
      config: {temperature: 0, thinkingConfig: {thinkingBudget: 0}},
    })
    expect(answer.candidates?.length).toBe(1)
    const calls = await gw.calls(GEMINI_PATH)
    expect(calls.map((c) => c.generationConfig)).toEqual([
      {temperature: 0, thinkingConfig: {thinkingBudget: 0}},
      {temperature: 0},
    ])
    const [row] = await rows('pro')
    expect([row.status, row.error]).toEqual([
      200,
      'sim-gemini refused thinkingBudget 0: sent again without it, the model decides',
    ])
  })

  it("web_fetch's URL context to a chat route: a 400 that says why, nothing sent; Gemini CLI's fallback goes through", async () => {
    await takeSimCalls(gw.simOrigin, /./)
    const prompt =
      "Follow the user's instructions to process the authorized URLs.\n\n<authorized_urls>\nhttps://example.com/changelog\n</authorized_urls>\n"
    const error = await client('chat')
      .models.generateContent({
        model: 'gemini-3-flash-preview',
        contents: [{role: 'user', parts: [{text: prompt}]}],
        config: {tools: [{urlContext: {}}]},
      })
      .catch((e: unknown) => e)
    // (Gemini CLI retries no 400: its WebFetchTool takes the throw as the primary fetch failing)
    expect(error).toBeInstanceOf(ApiError)
    expect((error as ApiError).status).toBe(400)
    expect((error as Error).message).toContain(
      "Gemini's URL context tool cannot be translated to a chat completions upstream: it has no tool that reads a web page",
    )
    expect(await takeSimCalls(gw.simOrigin, /\/chat\/completions$/)).toHaveLength(0)
    const [row] = await rows('chat', 2).then((r) => r.slice(-1))
    expect(row.status).toBe(400)
    // the fallback: the page's text in the prompt, no tool
    const answer = await client('chat').models.generateContent({
      model: 'gemini-3-flash-preview',
      contents: [{role: 'user', parts: [{text: 'Summarize this page: Changelog. v2 adds X.'}]}],
    })
    expect(answer.text).toBeTruthy()
    const sent = await takeSimCalls(gw.simOrigin, /\/chat\/completions$/)
    expect(sent).toHaveLength(1)
    expect(sent[0].tools).toBeUndefined()
  })
})
