import {describe, expect, it} from 'vitest'

import {geminiImageProblem, messagesImageProblem} from './media-checks.js'

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
