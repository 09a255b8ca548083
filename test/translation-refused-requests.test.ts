/**
 * Three refusals a translated request used to get on every turn, which ended the conversation:
 * a forced tool choice to a chat server that takes only `auto` (Z.AI's 400 "Tool choice must be
 * auto", deepseek-reasoner's, OpenRouter's 404 "No endpoints found that support the provided 'tool_choice' value."),
 * learned once and sent as `auto` with the call asked for in words; a conversation ending with an
 * assistant message to a Claude model that takes no prefill (4.6 on), sent as a user turn asking
 * to continue it; an image Anthropic or Gemini cannot take (a wrong label, a BMP, a GIF to Gemini),
 * sent with the type its bytes say or as a line in its place. The real daemon, the simulator
 * (its quirks `tool-choice-auto-only`, `tool-choice-404` and `no-prefill`, its checks of images),
 * the official SDKs.
 */
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import {describe, expect, it} from 'vitest'

import {codexRequest, READ_FILE_TOOL} from './helpers/codex.js'
import {translatedRoutes} from './helpers/gateway.js'

/** Policy id -> the provider and model all its routes translate to. */
const ROUTES: Record<string, [provider: string, model: string]> = {
  zai: ['sim-chat', 'glm-4.6+tool-choice-auto-only'],
  // (the quirk in DeepSeek's words by the model's name: "deepseek-reasoner does not support this
  // tool_choice"; a model it cannot turn thinking off for: DeepSeek V4's forced call goes with
  // thinking off, translation-forced-thinking-off.test.ts)
  deepseek: ['sim-chat', 'deepseek-reasoner+tool-choice-auto-only'],
  openrouter: ['sim-chat', 'z-ai/glm-4.6+tool-choice-404'],
  opus46: ['sim-messages', 'claude-opus-4-6'],
  corp: ['sim-messages', 'corp-large+no-prefill'],
  sonnet45: ['sim-messages', 'claude-sonnet-4-5'],
  gemini: ['sim-gemini', 'gemini-2.5-flash'],
}

const gw = translatedRoutes(ROUTES, {prefix: 'refused'})

const {calls} = gw
const CHAT = /\/chat\/completions$/
const MESSAGES = /\/v1\/messages$/
const GEMINI = /:(?:stream)?[gG]enerateContent/
const {rows} = gw
const openai = (id: string) => new OpenAI({baseURL: `${gw.base}/v1`, apiKey: gw.keys.get(id)!, maxRetries: 0})

const BASH_TOOL = {
  name: 'Bash',
  description: 'Run a command',
  input_schema: {type: 'object' as const, properties: {command: {type: 'string'}}, required: ['command']},
}

describe('a forced tool_choice to a chat server that takes only auto', {timeout: 60_000}, () => {
  it.each([
    ['Z.AI', 'zai'],
    ['deepseek-reasoner', 'deepseek'],
  ])(
    "Claude Code's named tool on %s: refused once, then auto with the call asked for, on every later request",
    async (_, id) => {
      await calls(CHAT)
      const client = new Anthropic({baseURL: gw.base, apiKey: gw.keys.get(id)!, maxRetries: 0})
      const ask = () =>
        client.messages.create({
          model: 'claude-sonnet-4-5',
          max_tokens: 512,
          tools: [BASH_TOOL],
          tool_choice: {type: 'tool', name: 'Bash'},
          messages: [{role: 'user', content: 'List the files here.'}],
        })
      const first = await ask()
      expect(first.content.find((b) => b.type === 'tool_use')).toMatchObject({name: 'Bash'})
      const [refused, again] = await calls(CHAT)
      expect(refused.tool_choice).toEqual({type: 'function', function: {name: 'Bash'}})
      expect(again.tool_choice).toBe('auto')
      expect(again.messages.at(-1)).toEqual({
        role: 'user',
        content: 'List the files here.\n\nIn this answer, call the tool Bash.',
      })
      expect((await rows(id)).map((r) => [r.status, r.error])).toEqual([
        [
          200,
          'sim-chat refused a forced tool_choice: sent again with tool_choice auto, the call asked for at the end of the prompt',
        ],
      ])
      // the next request goes that way from the start: one call
      await ask()
      const next = await calls(CHAT)
      expect(next.map((c) => c.tool_choice)).toEqual(['auto'])
    },
  )

  it("Codex's tool_choice required through OpenRouter's 404: learned from its words, the turn answered", async () => {
    await calls(CHAT)
    const answer = await openai('openrouter').responses.create({
      ...codexRequest([{role: 'user', content: 'Read /tmp/notes.txt.'}]),
      tool_choice: 'required',
    })
    expect(answer.status).toBe('completed')
    expect(answer.output.find((o) => o.type === 'function_call')).toMatchObject({name: READ_FILE_TOOL.name})
    const sent = await calls(CHAT)
    expect(sent.map((c) => c.tool_choice)).toEqual(['required', 'auto'])
    expect(sent[1].messages.at(-1).content).toMatch(/\n\nIn this answer, call one of the tools\.$/)
    const [row] = await rows('openrouter')
    expect(row.status).toBe(200)
    expect(row.error).toContain('sim-chat refused a forced tool_choice: sent again with tool_choice auto')
  })
})

describe('a prefill to a Claude model that takes none', {timeout: 60_000}, () => {
  const prefill = [
    {role: 'user' as const, content: 'Write a haiku about rain.'},
    {role: 'assistant' as const, content: 'Soft rain on the roof'},
  ]
  const continuation =
    'Your answer so far reads: «Soft rain on the roof». Continue it from exactly where it stops, without repeating any of it.'

  it("Opus 4.6 by its name: a chat client's last assistant text goes as a user turn, at once", async () => {
    await calls(MESSAGES)
    const answer = await openai('opus46').chat.completions.create({model: 'x', messages: prefill})
    expect(answer.choices[0].message.content).toBeTruthy()
    const [sent] = await calls(MESSAGES)
    expect(sent.messages).toHaveLength(1)
    expect(sent.messages[0].role).toBe('user')
    expect(sent.messages[0].content.map((b: any) => b.text)).toEqual([
      'Write a haiku about rain.',
      continuation,
    ])
    const [row] = await rows('opus46')
    expect([row.status, row.error]).toEqual([
      200,
      'ended with an assistant message, a prefill the model refuses: sent as a user turn asking it to continue that text',
    ])
  })

  it('a name that says nothing: its refusal learned once, then a user turn from the start', async () => {
    await calls(MESSAGES)
    const client = openai('corp')
    await client.chat.completions.create({model: 'x', messages: prefill})
    const [refused, again] = await calls(MESSAGES)
    expect(refused.messages.at(-1).role).toBe('assistant')
    expect(again.messages.at(-1).role).toBe('user')
    const [row] = await rows('corp')
    expect(row.status).toBe(200)
    expect(row.error).toContain(
      'sim-messages refused a conversation ending with an assistant message (prefill): sent again with that text in a user turn asking to continue it',
    )
    await client.chat.completions.create({model: 'x', messages: prefill})
    expect((await calls(MESSAGES)).map((c) => c.messages.at(-1).role)).toEqual(['user'])
  })
})

describe('images an upstream cannot take', {timeout: 60_000}, () => {
  const bytes = (head: number[] | string): string => {
    const b = Buffer.alloc(48)
    ;(typeof head === 'string' ? Buffer.from(head, 'latin1') : Buffer.from(head)).copy(b)
    return b.toString('base64')
  }
  const JPEG = bytes([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46])
  const BMP = bytes('BM6\0\0\0')
  const GIF = bytes('GIF89a')

  it('a chat client on Claude: a JPEG named PNG goes as JPEG, a BMP as a line, and every turn is answered', async () => {
    await calls(MESSAGES)
    const client = openai('sonnet45')
    const history: any[] = [
      {
        role: 'user',
        content: [
          {type: 'text', text: 'What do these show?'},
          {type: 'image_url', image_url: {url: `data:image/png;base64,${JPEG}`}},
          {type: 'image_url', image_url: {url: `data:image/png;base64,${BMP}`}},
        ],
      },
    ]
    const first = await client.chat.completions.create({model: 'x', messages: history})
    history.push(first.choices[0].message, {role: 'user', content: 'And now?'})
    const second = await client.chat.completions.create({model: 'x', messages: history})
    expect(second.choices[0].message.content).toBeTruthy()
    const sent = await calls(MESSAGES)
    // one request a turn: nothing refused
    expect(sent).toHaveLength(2)
    const blocks = sent[1].messages[0].content.map(({cache_control: _, ...b}: any) => b)
    expect(blocks).toEqual([
      {type: 'text', text: 'What do these show?'},
      {type: 'image', source: {type: 'base64', media_type: 'image/jpeg', data: JPEG}},
      {
        type: 'text',
        text: '[image/bmp image not attached: Anthropic takes JPEG, PNG, GIF and WebP images only]',
      },
    ])
    const note =
      'left out the 2nd image (image/bmp: Anthropic takes JPEG, PNG, GIF and WebP images only): a line in place of it'
    expect((await rows('sonnet45', 2)).map((r) => [r.status, r.error])).toEqual([
      [200, note],
      [200, note],
    ])
  })

  it('Claude Code on Gemini: a GIF goes as a line, image/jpg as image/jpeg', async () => {
    await calls(GEMINI)
    const client = new Anthropic({baseURL: gw.base, apiKey: gw.keys.get('gemini')!, maxRetries: 0})
    const answer = await client.messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 256,
      messages: [
        {
          role: 'user',
          content: [
            {type: 'image', source: {type: 'base64', media_type: 'image/gif', data: GIF}},
            {type: 'image', source: {type: 'base64', media_type: 'image/jpg' as 'image/jpeg', data: JPEG}},
            {type: 'text', text: 'Describe them.'},
          ],
        },
      ],
    })
    expect(answer.content.some((b) => b.type === 'text')).toBe(true)
    const [sent] = await calls(GEMINI)
    expect(sent.contents[0].parts.slice(0, 2)).toEqual([
      {text: '[image/gif image not attached: Gemini takes PNG, JPEG, WebP, HEIC and HEIF images only]'},
      {inlineData: {mimeType: 'image/jpeg', data: JPEG}},
    ])
    const [row] = await rows('gemini')
    expect(row.error).toBe(
      'left out the 1st image (image/gif: Gemini takes PNG, JPEG, WebP, HEIC and HEIF images only): a line in place of it',
    )
  })
})
