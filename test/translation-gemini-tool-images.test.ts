/**
 * Claude Code's Read of two screenshots at once (two parallel calls, each result an image, then its
 * `<system-reminder>` text) translated onto Gemini. A tool's image went as a part right after its
 * `functionResponse`, between the two responses: Gemini 3 refuses any medium beside the responses
 * and Gemini 2.x one between them ("Please ensure that the number of function response parts is
 * equal to the number of function call parts of the function call turn."), and since the image
 * stays in the history, every later turn too. Now Gemini 3 names get each image inside its
 * response (`functionResponse.parts`), other models every response first and the images after;
 * a Gemini 3 behind a name that does not say so learns nesting from the refusal, once. The real
 * daemon, the simulator's Gemini (its `media-in-responses` quirk), the official Anthropic SDK.
 * A chat client (opencode: a tool message takes text only, the image in the user message after
 * it) has its image beside the response: in that response's `parts` for Gemini 3, after it
 * otherwise, and an alias learns nesting from it too (the official OpenAI SDK).
 */
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {
  issueKeyOverApi,
  projectLogRows,
  simPolicy,
  startSimGatewayWithPolicies,
  takeSimCalls,
} from './helpers/gateway.js'

const MODELS: Record<string, string> = {
  three: 'gemini-3.8-flash',
  two: 'gemini-2.5-flash',
  // a Gemini 3 behind an alias: the name says nothing, the refusal teaches it
  alias: 'team-gemini+media-in-responses',
}
/** The chat client's policies (`chat-<id>`): another alias, learned apart from the one above. */
const CHAT: Record<string, string> = {three: MODELS.three, alias: 'chat-gemini+media-in-responses'}

let base = ''
let simOrigin = ''
let stop: () => Promise<void> = async () => {}
const keys = new Map<string, string>()

beforeAll(async () => {
  ;({base, simOrigin, stop} = await startSimGatewayWithPolicies([
    ...Object.entries(MODELS).map(([id, model]) =>
      simPolicy(`gimg-${id}`, {messages: [{provider: 'sim-gemini', model, translate: true}]}),
    ),
    ...Object.entries(CHAT).map(([id, model]) =>
      simPolicy(`gimg-chat-${id}`, {chat: [{provider: 'sim-gemini', model, translate: true}]}),
    ),
  ]))
  for (const id of Object.keys(MODELS))
    keys.set(id, await issueKeyOverApi(base, `gimg-${id}`, 'claude_code', `gimg-${id}`))
  for (const id of Object.keys(CHAT))
    keys.set(`chat-${id}`, await issueKeyOverApi(base, `gimg-chat-${id}`, 'generic_agent', `gimg-chat-${id}`))
}, 120_000)

afterAll(() => stop())

const geminiCalls = () => takeSimCalls(simOrigin, /:(?:streamGenerateContent|generateContent)$/)

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='
const image = {
  type: 'image' as const,
  source: {type: 'base64' as const, media_type: 'image/png' as const, data: PNG},
}
const read = (id: string, file: string) => ({
  type: 'tool_use' as const,
  id,
  name: 'Read',
  input: {file_path: `/tmp/${file}.png`},
})
const REMINDER = '<system-reminder>Screenshots are large: describe them briefly.</system-reminder>'
const results = (...ids: string[]) => ({
  role: 'user' as const,
  content: [
    ...ids.map((id) => ({type: 'tool_result' as const, tool_use_id: id, content: [image]})),
    {type: 'text' as const, text: REMINDER},
  ],
})
const TURN: Anthropic.MessageParam[] = [
  {role: 'user', content: 'Compare the two screenshots.'},
  {role: 'assistant', content: [read('toolu_01A', 'before'), read('toolu_01B', 'after')]},
  results('toolu_01A', 'toolu_01B'),
]
const claudeCode = (messages: Anthropic.MessageParam[]): Anthropic.MessageCreateParamsNonStreaming => ({
  model: 'claude-sonnet-4-5',
  max_tokens: 4096,
  system: 'You are Claude Code.',
  tools: [{name: 'Read', input_schema: {type: 'object', properties: {file_path: {type: 'string'}}}}],
  messages,
})
const client = (id: string) => new Anthropic({baseURL: base, apiKey: keys.get(id)!, maxRetries: 0})

const inline = {inlineData: {mimeType: 'image/png', data: PNG}}
const response = (id: string, output: string, parts?: unknown[]) => ({
  functionResponse: {name: 'Read', id, response: {output}, ...(parts && {parts})},
})
const NESTED = {
  role: 'user',
  parts: [
    response('toolu_01A', '[image attached]', [inline]),
    response('toolu_01B', '[image attached]', [inline]),
    {text: REMINDER},
  ],
}
const FLAT = {
  role: 'user',
  parts: [response('toolu_01A', ''), response('toolu_01B', ''), inline, inline, {text: REMINDER}],
}

const answered = (answer: Anthropic.Message) => {
  expect(answer.stop_reason).toBe('end_turn')
  expect(answer.content.some((b) => b.type === 'text')).toBe(true)
}

describe("Claude Code's two screenshots translated onto Gemini", {timeout: 60_000}, () => {
  it('gemini-3.8-flash: each image inside its functionResponse, one part per call; answered 200 in one try', async () => {
    await geminiCalls()
    answered(await client('three').messages.create(claudeCode(TURN)))
    const [sent, ...more] = await geminiCalls()
    expect(more).toEqual([])
    expect(sent.contents).toHaveLength(3)
    expect(sent.contents[2]).toEqual(NESTED)
    const [row] = await projectLogRows(base, 'gimg-three', 1)
    expect([row.status, row.error]).toEqual([200, null])
  })

  it('gemini-2.5-flash: both responses first, then the images, then the text; answered 200 in one try', async () => {
    answered(await client('two').messages.create(claudeCode(TURN)))
    const [sent, ...more] = await geminiCalls()
    expect(more).toEqual([])
    expect(sent.contents[2]).toEqual(FLAT)
    const [row] = await projectLogRows(base, 'gimg-two', 1)
    expect([row.status, row.error]).toEqual([200, null])
  })

  it('a Gemini 3 behind an alias: refused once, nesting learned, sent again at once; the next turn nested from the first try', async () => {
    answered(await client('alias').messages.create(claudeCode(TURN)))
    const [refused, again, ...more] = await geminiCalls()
    expect(more).toEqual([])
    expect(refused.contents[2]).toEqual(FLAT)
    expect(again.contents[2]).toEqual(NESTED)
    expect({...again, contents: undefined}).toEqual({...refused, contents: undefined})
    const [row] = await projectLogRows(base, 'gimg-alias', 1)
    expect([row.status, row.error]).toEqual([
      200,
      "sim-gemini refused images and documents beside the functionResponse parts: sent again with each inside its functionResponse's parts, one part per call",
    ])
    const {adaptations} = (await (await fetch(`${base}/api/adaptations`)).json()) as {
      adaptations: Array<{provider: string; model: string; rules: string[]}>
    }
    expect(adaptations.find((a) => a.model === MODELS.alias)?.rules).toEqual([
      "images and documents of a function's result sent inside its functionResponse (parts), one part per call (refused beside the responses)",
    ])
    // the next turn: one more screenshot; its history goes as the turn before went
    const turn2: Anthropic.MessageParam[] = [
      ...TURN,
      {role: 'assistant', content: [read('toolu_01C', 'third')]},
      results('toolu_01C'),
    ]
    answered(await client('alias').messages.create(claudeCode(turn2)))
    const [sent, ...rest] = await geminiCalls()
    expect(rest).toEqual([])
    expect(sent.contents.slice(0, 3)).toEqual(again.contents)
    expect(sent.contents[4]).toEqual({
      role: 'user',
      parts: [response('toolu_01C', '[image attached]', [inline]), {text: REMINDER}],
    })
  })
})

describe("a chat client's image beside its tool message translated onto Gemini", {timeout: 60_000}, () => {
  const chat = (id: string) =>
    new OpenAI({baseURL: `${base}/v1`, apiKey: keys.get(`chat-${id}`)!, maxRetries: 0})
  const turn: OpenAI.ChatCompletionMessageParam[] = [
    {role: 'user', content: 'What is in before.png?'},
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        {
          id: 'call_1',
          type: 'function',
          function: {name: 'read', arguments: '{"filePath":"/tmp/before.png"}'},
        },
      ],
    },
    {role: 'tool', tool_call_id: 'call_1', content: 'Image read successfully'},
    {role: 'user', content: [{type: 'image_url', image_url: {url: `data:image/png;base64,${PNG}`}}]},
  ]
  const ask = (id: string) =>
    chat(id).chat.completions.create({
      model: 'gpt-4o',
      tools: [{type: 'function', function: {name: 'read', parameters: {type: 'object'}}}],
      messages: turn,
    })
  const READ = {
    role: 'user',
    parts: [
      {
        functionResponse: {
          name: 'read',
          id: 'call_1',
          response: {output: 'Image read successfully'},
          parts: [inline],
        },
      },
    ],
  }

  it('gemini-3.8-flash: the image inside the response it follows; answered 200 in one try', async () => {
    await geminiCalls()
    const answer = await ask('three')
    expect(answer.choices[0].message.content).toBeTruthy()
    const [sent, ...more] = await geminiCalls()
    expect(more).toEqual([])
    expect(sent.contents[2]).toEqual(READ)
    const [row] = await projectLogRows(base, 'gimg-chat-three', 1)
    expect([row.status, row.error]).toEqual([200, null])
  })

  it('a Gemini 3 behind an alias: the image after the response refused once, nesting learned, sent again', async () => {
    await geminiCalls()
    const answer = await ask('alias')
    expect(answer.choices[0].message.content).toBeTruthy()
    const [refused, again, ...more] = await geminiCalls()
    expect(more).toEqual([])
    expect(refused.contents[2].parts).toEqual([
      {functionResponse: {name: 'read', id: 'call_1', response: {output: 'Image read successfully'}}},
      inline,
    ])
    expect(again.contents[2]).toEqual(READ)
    const [row] = await projectLogRows(base, 'gimg-chat-alias', 1)
    expect(row.status).toBe(200)
    expect(row.error).toMatch(/refused images and documents beside the functionResponse parts/)
  })
})
