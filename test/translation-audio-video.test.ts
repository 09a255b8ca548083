/**
 * A chat client's audio and video (Qwen Code 0.24.4's `video_url` and `input_audio` parts, which
 * it sends for `gemini-*`, `qwen*-omni` and other models its table says take them): a translated
 * route sends them to Gemini as `inlineData` of their own types, and to Claude as the line naming
 * each; a text-only chat model a request passes through to refuses them once, and each then goes
 * as a line. Before, the translated request was a 400 on every turn (the part stays in Qwen's
 * history). The real daemon, the simulator, the official `openai` SDK, with the parts Qwen Code
 * sent (captured).
 */
import OpenAI from 'openai'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {projectLogRows, startKeyedPolicies, takeSimCalls} from './helpers/gateway.js'

let base = ''
let simOrigin = ''
let stop: () => Promise<void> = async () => {}
let keys = new Map<string, string>()

const MP4 = 'AAAAIGZ0eXBpc29tAAACAGlzb21pc28yYXZjMW1wNDE='
const MP3 = 'SUQzBAAAAAAAAAAA//uQZA=='

/** Qwen Code's user message for `@clip.mp4 @voice.mp3 what is in these files?` (its own parts). */
const qwenAsk = {
  role: 'user',
  content: [
    {type: 'text', text: 'what is in these files?'},
    {type: 'text', text: '\nContent from clip.mp4:\n'},
    {type: 'video_url', video_url: {url: `data:video/mp4;base64,${MP4}`}},
    {type: 'text', text: '\nContent from voice.mp3:\n'},
    {type: 'input_audio', input_audio: {data: `data:audio/mpeg;base64,${MP3}`, format: 'mp3'}},
  ],
} as unknown as OpenAI.ChatCompletionMessageParam

const ROUTES: Record<string, [provider: string, model: string, translate: boolean]> = {
  gemini: ['sim-gemini', 'gemini-3-pro-preview', true],
  claude: ['sim-messages', 'claude-sonnet-4-5', true],
  // passed through, untranslated, to a text-only model (DeepSeek's deserializer)
  deepseek: ['sim-chat', 'deepseek-chat+text-only', false],
}

beforeAll(async () => {
  ;({base, simOrigin, stop, keys} = await startKeyedPolicies(
    Object.fromEntries(
      Object.entries(ROUTES).map(([id, [provider, model, translate]]) => [
        id,
        {chat: [{provider, model, ...(translate ? {translate} : {})}]},
      ]),
    ),
    {prefix: 'av'},
  ))
}, 120_000)

afterAll(() => stop())

const client = (id: string) => new OpenAI({baseURL: `${base}/v1`, apiKey: keys.get(id)!, maxRetries: 0})

describe("Qwen Code's audio and video on a translated route", {timeout: 60_000}, () => {
  it('reach Gemini as inlineData with their own types, streamed and not', async () => {
    await takeSimCalls(simOrigin, /[gG]enerateContent/)
    const answer = await client('gemini').chat.completions.create({
      model: 'gemini-3-pro-preview',
      messages: [qwenAsk],
    })
    expect(answer.choices[0].message.content).toBeTruthy()
    const stream = await client('gemini').chat.completions.create({
      model: 'gemini-3-pro-preview',
      messages: [qwenAsk],
      stream: true,
    })
    for await (const _ of stream) void _
    const calls = await takeSimCalls(simOrigin, /[gG]enerateContent/)
    expect(calls).toHaveLength(2)
    for (const call of calls)
      expect(call.contents).toEqual([
        {
          role: 'user',
          parts: [
            {text: 'what is in these files?'},
            {text: '\nContent from clip.mp4:\n'},
            {inlineData: {mimeType: 'video/mp4', data: MP4}},
            {text: '\nContent from voice.mp3:\n'},
            {inlineData: {mimeType: 'audio/mpeg', data: MP3}},
          ],
        },
      ])
  })

  it('reach Claude as the line naming each, answered on the first try', async () => {
    await takeSimCalls(simOrigin, /\/messages$/)
    const answer = await client('claude').chat.completions.create({
      model: 'claude-sonnet-4-5',
      messages: [qwenAsk],
    })
    expect(answer.choices[0].message.content).toBeTruthy()
    const calls = await takeSimCalls(simOrigin, /\/messages$/)
    expect(calls).toHaveLength(1)
    const texts = calls[0].messages[0].content.map((b: any) => b.text)
    expect(texts).toContain('[video/mp4 file not attached: Anthropic takes PDF and text documents only]')
    expect(texts).toContain('[audio/mpeg file not attached: Anthropic takes PDF and text documents only]')
  })
})

describe("Qwen Code's audio and video passed through to a text-only model", {timeout: 60_000}, () => {
  it('refused once for both (DeepSeek reads only text), then each goes as a line, from then on', async () => {
    await takeSimCalls(simOrigin, /\/chat\/completions$/)
    const answer = await client('deepseek').chat.completions.create({
      model: 'deepseek-chat',
      messages: [qwenAsk],
    })
    expect(answer.choices[0].message.content).toBeTruthy()
    const calls = await takeSimCalls(simOrigin, /\/chat\/completions$/)
    // refused for the video (its words: `text` is all it reads), then answered with both as lines
    expect(calls).toHaveLength(2)
    expect(calls[1].messages[0].content).toEqual([
      {type: 'text', text: 'what is in these files?'},
      {type: 'text', text: '\nContent from clip.mp4:\n'},
      {type: 'text', text: '[video/mp4 file not attached: deepseek-chat+text-only takes no video]'},
      {type: 'text', text: '\nContent from voice.mp3:\n'},
      {type: 'text', text: '[audio/mpeg file not attached: deepseek-chat+text-only takes no audio]'},
    ])
    expect((await projectLogRows(base, 'av-deepseek', 1))[0]).toMatchObject({status: 200})
    // the next turn: one request, the lines in place from the start
    await client('deepseek').chat.completions.create({model: 'deepseek-chat', messages: [qwenAsk]})
    const later = await takeSimCalls(simOrigin, /\/chat\/completions$/)
    expect(later).toHaveLength(1)
    expect(JSON.stringify(later[0])).not.toMatch(/input_audio|video_url/)
  })
})
