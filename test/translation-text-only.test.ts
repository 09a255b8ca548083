/**
 * A text-only model behind translation: DeepSeek's chat API refuses a request with one image in
 * it ("unknown variant `image_url`, expected `text`"), a `file` part likewise, and a llama.cpp
 * server without a vision projector answers 500 ("image input is not supported"). Through every
 * peer one screenshot or one PDF read by a tool ends the conversation: the refusal comes back on
 * every later turn, the media being in the history. The gateway learns the refusal once per
 * provider and model, sends the request again with a line in place of each image or file (the
 * model knows what was there), and sends the next requests that way from the start. The real
 * daemon, the simulator's `text-only` and `no-mmproj` quirks, the official SDKs.
 */
import Anthropic from '@anthropic-ai/sdk'
import {GoogleGenAI} from '@google/genai'
import OpenAI from 'openai'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {runCli} from './helpers/cli.js'
import {
  issueKeyOverApi,
  projectLogRows,
  simPolicy,
  startSimGatewayWithPolicies,
  takeSimCalls,
} from './helpers/gateway.js'

let base = ''
let home = ''
let simOrigin = ''
let stop: () => Promise<void> = async () => {}
const keys = new Map<string, string>()

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='
const PDF = Buffer.from('%PDF-1.7\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n').toString('base64')

const MODELS: Record<string, string> = {
  deepseek: 'deepseek-chat+text-only',
  // learned per provider and model: each test its own model
  'deepseek-pdf': 'deepseek-v4-flash+text-only',
  llama: 'qwen3-coder+no-mmproj',
  codex: 'deepseek-v4-pro+text-only',
}

beforeAll(async () => {
  const policy = (id: string, model: string) =>
    simPolicy(
      `text-${id}`,
      Object.fromEntries(
        ['messages', 'responses', 'gemini'].map((f) => [f, [{provider: 'sim-chat', model, translate: true}]]),
      ),
    )
  ;({base, home, simOrigin, stop} = await startSimGatewayWithPolicies([
    ...Object.entries(MODELS).map(([id, model]) => policy(id, model)),
    // llama.cpp without a projector first, a model that sees images after it
    {
      ...policy('llama-fallback', 'qwen3-coder-b+no-mmproj'),
      routes: {
        gemini: [
          {provider: 'sim-chat', model: 'qwen3-coder-b+no-mmproj', translate: true},
          {provider: 'sim-chat', model: 'sim-mini', translate: true},
        ],
      },
    },
  ]))
  for (const id of [...Object.keys(MODELS), 'llama-fallback'])
    keys.set(id, await issueKeyOverApi(base, `text-${id}`, 'generic_agent', `text-${id}`))
}, 120_000)

afterAll(() => stop())

const chatCalls = (): Promise<Array<Record<string, any>>> => takeSimCalls(simOrigin, /\/chat\/completions$/)

/** The log rows of the agent whose project is `name`, oldest first, once there are `count`. */
const logRows = (name: string, count = 1) => projectLogRows(base, name, count)

/** Every media part and every text of a chat body's messages, in order. */
const partsOf = (body: Record<string, any>): string[] =>
  body.messages.flatMap((m: any) =>
    typeof m.content === 'string'
      ? [m.content]
      : Array.isArray(m.content)
        ? m.content.map((c: any) => (c.type === 'text' ? c.text : c.type))
        : [],
  )

describe('a text-only model behind translation', {timeout: 60_000}, () => {
  it("Claude Code's pasted screenshot on DeepSeek: the image refused once, then a line in its place on every turn", async () => {
    await chatCalls()
    const client = new Anthropic({baseURL: base, apiKey: keys.get('deepseek')!, maxRetries: 0})
    const ask = {
      role: 'user' as const,
      content: [
        {
          type: 'image' as const,
          source: {type: 'base64' as const, media_type: 'image/png' as const, data: PNG},
        },
        {type: 'text' as const, text: 'Why does this page look broken?'},
      ],
    }
    const first = await client.messages
      .stream({model: 'claude-sonnet-4-5', max_tokens: 512, messages: [ask]})
      .finalMessage()
    expect(first.content.some((b) => b.type === 'text' && b.text.length > 0)).toBe(true)
    const calls = await chatCalls()
    expect(calls).toHaveLength(2)
    expect(partsOf(calls[0])).toContain('image_url')
    const line = '[image/png image not attached: deepseek-chat+text-only takes no images]'
    expect(JSON.stringify(calls[1])).not.toContain('image_url')
    expect(partsOf(calls[1]).join('\n')).toContain(line)
    // everything else went again as it was
    expect({...calls[1], messages: undefined}).toEqual({...calls[0], messages: undefined})
    expect((await logRows('text-deepseek', 1)).map((r) => [r.status, r.error])).toEqual([
      [200, 'sim-chat refused images (a text-only model): sent again with a line in place of each'],
    ])

    // turn 2 carries the screenshot in its history: one request, the line already in place
    const second = await client.messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 512,
      messages: [ask, {role: 'assistant', content: first.content}, {role: 'user', content: 'And now?'}],
    })
    expect(second.content.length).toBeGreaterThan(0)
    const later = await chatCalls()
    expect(later).toHaveLength(1)
    expect(partsOf(later[0]).join('\n')).toContain(line)
    expect((await logRows('text-deepseek', 2))[1]).toMatchObject({status: 200, error: null})

    // what was learned, for the user who wonders why the model cannot see: the API and doctor
    const {adaptations} = (await (await fetch(`${base}/api/adaptations`)).json()) as {adaptations: any[]}
    expect(adaptations.find((a) => a.model === 'deepseek-chat+text-only')).toMatchObject({
      provider: 'sim-chat',
      rules: ['images sent as a line of text (a text-only model)'],
    })
    const doctor = await runCli(['doctor', '--json'], {home})
    const check = JSON.parse(doctor.stdout).checks.find((c: any) => c.id === 'translation')
    expect(check).toMatchObject({ok: true})
    expect(check.detail).toMatch(
      /sim-chat deepseek-chat\+text-only \(\d+ s ago\): images sent as a line of text/,
    )
  })

  it("Claude Code's Read of a PNG and of a PDF on DeepSeek: each tool result's file as a line in the tool message", async () => {
    await chatCalls()
    const client = new Anthropic({baseURL: base, apiKey: keys.get('deepseek-pdf')!, maxRetries: 0})
    const tools = [
      {
        name: 'Read',
        description: 'Read a file',
        input_schema: {type: 'object' as const, properties: {file_path: {type: 'string'}}},
      },
    ]
    const history = (file: any) => [
      {role: 'user' as const, content: 'Look at the file.'},
      {
        role: 'assistant' as const,
        content: [{type: 'tool_use' as const, id: 'toolu_01', name: 'Read', input: {file_path: '/w/f'}}],
      },
      {
        role: 'user' as const,
        content: [{type: 'tool_result' as const, tool_use_id: 'toolu_01', content: [file]}],
      },
    ]
    const png = {type: 'image', source: {type: 'base64', media_type: 'image/png', data: PNG}}
    const pdf = {type: 'document', source: {type: 'base64', media_type: 'application/pdf', data: PDF}}
    await client.messages.create({model: 'claude-sonnet-4-5', max_tokens: 512, tools, messages: history(png)})
    const imageCalls = await chatCalls()
    expect(imageCalls).toHaveLength(2)
    const tool = imageCalls[1].messages.find((m: any) => m.role === 'tool')
    expect(tool.content).toBe('[image/png image not attached: deepseek-v4-flash+text-only takes no images]')
    expect(imageCalls[1].messages.at(-1).role).toBe('tool')

    // a PDF is refused apart (`unknown variant \`file\``): learned as well, the image rule kept
    await client.messages.create({model: 'claude-sonnet-4-5', max_tokens: 512, tools, messages: history(pdf)})
    const pdfCalls = await chatCalls()
    expect(pdfCalls).toHaveLength(2)
    expect(JSON.stringify(pdfCalls[0])).toContain('"type":"file"')
    expect(JSON.stringify(pdfCalls[1])).not.toContain('"type":"file"')
    expect(JSON.stringify(pdfCalls[1])).toContain(
      '[application/pdf file not attached: deepseek-v4-flash+text-only takes no files]',
    )
    const rows = await logRows('text-deepseek-pdf', 2)
    expect(rows.map((r) => r.error)).toEqual([
      'sim-chat refused images (a text-only model): sent again with a line in place of each',
      'sim-chat refused images and files (a text-only model): sent again with a line in place of each',
    ])
  })

  it("Gemini CLI's image on a llama.cpp server without a vision projector: its 500 learned, not a failure", async () => {
    await chatCalls()
    const gemini = new GoogleGenAI({apiKey: keys.get('llama')!, httpOptions: {baseUrl: base}})
    const contents = [
      {role: 'user', parts: [{text: 'What is this?'}, {inlineData: {mimeType: 'image/png', data: PNG}}]},
    ]
    const answer = await gemini.models.generateContent({model: 'gemini-2.5-flash', contents})
    expect(answer.text).toBeTruthy()
    const calls = await chatCalls()
    expect(calls).toHaveLength(2)
    expect(partsOf(calls[1]).join('\n')).toContain(
      '[image/png image not attached: qwen3-coder+no-mmproj takes no images]',
    )
    const [row] = await logRows('text-llama', 1)
    expect(row).toMatchObject({
      status: 200,
      error: 'sim-chat refused images (a text-only model): sent again with a line in place of each',
    })
    // the stream goes without it from the start
    let streamed = ''
    for await (const chunk of await gemini.models.generateContentStream({
      model: 'gemini-2.5-flash',
      contents,
    }))
      streamed += chunk.text ?? ''
    expect(streamed).toBeTruthy()
    expect(await chatCalls()).toHaveLength(1)
  })

  it("llama.cpp's 500 with a fallback behind it: the fallback gets the image, nothing is learned", async () => {
    await chatCalls()
    const gemini = new GoogleGenAI({apiKey: keys.get('llama-fallback')!, httpOptions: {baseUrl: base}})
    const contents = [
      {role: 'user', parts: [{text: 'What is this?'}, {inlineData: {mimeType: 'image/png', data: PNG}}]},
    ]
    const answer = await gemini.models.generateContent({model: 'gemini-2.5-flash', contents})
    expect(answer.text).toContain('I received 1 image')
    const calls = await chatCalls()
    expect(calls.map((c) => c.model)).toEqual(['qwen3-coder-b+no-mmproj', 'sim-mini'])
    expect(partsOf(calls[1])).toContain('image_url')
    // the next request tries the first target with its image again (nothing learned of it)
    await gemini.models.generateContent({model: 'gemini-2.5-flash', contents})
    expect((await chatCalls()).map((c) => partsOf(c).includes('image_url'))).toEqual([true, true])
  })

  it("Codex's input_image on DeepSeek (Responses entrance): learned the same way", async () => {
    await chatCalls()
    const openai = new OpenAI({baseURL: `${base}/v1`, apiKey: keys.get('codex')!, maxRetries: 0})
    const response = await openai.responses.create({
      model: 'gpt-5-codex',
      store: false,
      input: [
        {
          role: 'user',
          content: [
            {type: 'input_text', text: 'Describe the screenshot.'},
            {type: 'input_image', image_url: `data:image/png;base64,${PNG}`, detail: 'auto'},
          ],
        },
      ],
    })
    expect(response.output_text).toBeTruthy()
    const calls = await chatCalls()
    expect(calls).toHaveLength(2)
    expect(partsOf(calls[1]).join('\n')).toContain('[image/png image not attached:')
  })
})
