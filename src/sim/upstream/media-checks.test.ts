import {describe, expect, it} from 'vitest'

import {
  geminiImageProblem,
  geminiResultMediaProblem,
  messagesImageProblem,
  RESPONSE_COUNT_REFUSAL,
  RESPONSE_FILE_DATA_REFUSAL,
  RESPONSE_PARTS_REFUSAL,
} from './media-checks.js'

const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46, 0, 1]).toString('base64')
const image = (media_type: string, data: string) => ({
  type: 'image',
  source: {type: 'base64', media_type, data},
})

describe('the simulator refuses images as Anthropic and Gemini do', () => {
  it("Anthropic: a wrong label, more than 5 MB of base64 (in a tool's result too)", () => {
    const body = (block: unknown) => ({
      messages: [{role: 'user', content: [{type: 'text', text: 'hi'}, block]}],
    })
    expect(messagesImageProblem(body(image('image/png', JPEG)))).toBe(
      'messages.0.content.1.image.source.base64.data: Image does not match the provided media type image/png',
    )
    const big = JPEG + 'A'.repeat(5 * 1024 * 1024)
    expect(
      messagesImageProblem(
        body({type: 'tool_result', tool_use_id: 't', content: [image('image/jpeg', big)]}),
      ),
    ).toBe(
      `messages.0.content.1.tool_result.content.0.image.source.base64: image exceeds 5 MB maximum: ${big.length} bytes > 5242880 bytes`,
    )
    expect(messagesImageProblem(body(image('image/jpeg', JPEG)))).toBeUndefined()
    // placeholder bytes of no known type pass as what they claim
    expect(messagesImageProblem(body(image('image/png', 'AAAA')))).toBeUndefined()
  })

  it('Gemini: image/jpg and GIF refused, its five types taken', () => {
    const contents = (mimeType: string) => [{role: 'user', parts: [{inlineData: {mimeType, data: JPEG}}]}]
    expect(geminiImageProblem(contents('image/jpg'))).toBe('Unsupported MIME type: image/jpg')
    expect(geminiImageProblem(contents('image/gif'))).toBe('Unsupported MIME type: image/gif')
    for (const type of [
      'image/png',
      'image/jpeg',
      'image/webp',
      'image/heic',
      'image/heif',
      'application/pdf',
    ])
      expect(geminiImageProblem(contents(type))).toBeUndefined()
  })
})

describe("the simulator's Gemini refuses a function result's media where the model does not take them", () => {
  const png = {inlineData: {mimeType: 'image/png', data: 'AAAA'}}
  const fr = (id: string, parts?: unknown[]) => ({
    functionResponse: {name: 'Read', id, response: {output: ''}, ...(parts && {parts})},
  })
  const turn = (...parts: unknown[]) => [
    {role: 'user', parts: [{text: 'look'}]},
    {
      role: 'model',
      parts: [{functionCall: {name: 'Read', args: {}}}, {functionCall: {name: 'Read', args: {}}}],
    },
    {role: 'user', parts},
  ]
  const text = {text: '<system-reminder>x</system-reminder>'}
  const interleaved = turn(fr('a'), png, fr('b'), png, text)
  const flat = turn(fr('a'), fr('b'), png, png, text)
  const nested = turn(fr('a', [png]), fr('b', [png]), text)

  it('gemini-3*: media beside the responses refused in the part-count words, nested taken', () => {
    for (const model of ['gemini-3.8-flash', 'gemini-3-pro-preview']) {
      expect(geminiResultMediaProblem(model, interleaved)).toBe(RESPONSE_COUNT_REFUSAL)
      expect(geminiResultMediaProblem(model, flat)).toBe(RESPONSE_COUNT_REFUSAL)
      expect(geminiResultMediaProblem(model, turn(fr('a'), png))).toBe(RESPONSE_COUNT_REFUSAL)
      expect(geminiResultMediaProblem(model, nested)).toBeUndefined()
    }
  })

  it("gemini-2*: a response's parts refused, media between two responses refused, after them taken", () => {
    expect(geminiResultMediaProblem('gemini-2.5-flash', nested)).toBe(RESPONSE_PARTS_REFUSAL)
    expect(geminiResultMediaProblem('gemini-2.5-flash', interleaved)).toBe(RESPONSE_COUNT_REFUSAL)
    expect(geminiResultMediaProblem('gemini-2.5-flash', flat)).toBeUndefined()
    // (one call answered, its image after it: Gemini CLI's layout for Gemini 2.5)
    expect(geminiResultMediaProblem('gemini-2.5-pro', turn(fr('a'), png))).toBeUndefined()
    // another model (Gemma, an alias): media after the responses, or inside them
    expect(geminiResultMediaProblem('gemma-4-27b-it', flat)).toBeUndefined()
    expect(geminiResultMediaProblem('gemma-4-27b-it', nested)).toBeUndefined()
    expect(geminiResultMediaProblem('gemma-4-27b-it', interleaved)).toBe(RESPONSE_COUNT_REFUSAL)
    // quirk `media-in-responses`: Gemini 3's rule behind any name
    expect(geminiResultMediaProblem('team-gemini', flat, true)).toBe(RESPONSE_COUNT_REFUSAL)
    expect(geminiResultMediaProblem('team-gemini', nested, true)).toBeUndefined()
  })

  it('a URL (fileData) inside a response refused, for any model (the Gemini API takes none there)', () => {
    const url = {fileData: {mimeType: 'image/png', fileUri: 'https://example.com/a.png'}}
    for (const model of ['gemini-3.8-flash', 'gemma-4-27b-it'])
      expect(geminiResultMediaProblem(model, turn(fr('a', [png]), fr('b', [png, url]), text))).toBe(
        RESPONSE_FILE_DATA_REFUSAL('contents[2].parts[1].function_response.parts[1]'),
      )
    // (after the responses, where Gemini 2.5 takes it)
    expect(geminiResultMediaProblem('gemini-2.5-flash', turn(fr('a'), fr('b'), url))).toBeUndefined()
  })
})
