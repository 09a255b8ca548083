import {describe, expect, it} from 'vitest'

import {ANTHROPIC_IMAGE_MAX, sniffImageType} from './images.js'
import type {Family} from './ir.js'
import {decodeClientRequest, encodeUpstreamRequest} from './translate.js'

/** Base64 of `head` (bytes) padded with zeros to `size` bytes. */
const image = (head: number[] | string, size = 64): string => {
  const bytes = Buffer.alloc(size)
  const h = typeof head === 'string' ? Buffer.from(head, 'latin1') : Buffer.from(head)
  h.copy(bytes)
  return bytes.toString('base64')
}
const PNG = image([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
const JPEG = image([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46])
const GIF = image('GIF89a')
const WEBP = image('RIFF\x24\0\0\0WEBPVP8 ')
const BMP = image('BM6\0\0\0')
const HEIC = image('\0\0\0\x18ftypheic')
const TIFF = image('II*\0')

/** What the upstream is sent for one user turn holding `images` (a data URL's type and base64). */
function sent(
  client: Family,
  upstream: Family,
  images: Array<[type: string, data: string]>,
): {json: any; notes?: string[]} {
  const text = 'what is this?'
  const body =
    client === 'chat'
      ? {
          model: 'm',
          messages: [
            {
              role: 'user',
              content: [
                {type: 'text', text},
                ...images.map(([t, d]) => ({type: 'image_url', image_url: {url: `data:${t};base64,${d}`}})),
              ],
            },
          ],
        }
      : client === 'responses'
        ? {
            model: 'm',
            input: [
              {
                role: 'user',
                content: [
                  {type: 'input_text', text},
                  ...images.map(([t, d]) => ({type: 'input_image', image_url: `data:${t};base64,${d}`})),
                ],
              },
            ],
          }
        : client === 'gemini'
          ? {
              contents: [
                {
                  role: 'user',
                  parts: [{text}, ...images.map(([t, d]) => ({inlineData: {mimeType: t, data: d}}))],
                },
              ],
            }
          : {
              model: 'm',
              max_tokens: 100,
              messages: [
                {
                  role: 'user',
                  content: [
                    {type: 'text', text},
                    ...images.map(([t, d]) => ({
                      type: 'image',
                      source: {type: 'base64', media_type: t, data: d},
                    })),
                  ],
                },
              ],
            }
  const decoded = decodeClientRequest(client, body, {model: 'm', stream: false})
  const out = encodeUpstreamRequest(
    decoded,
    upstream,
    upstream === 'messages' ? 'claude-sonnet-4-5' : 'gemini-2.5-pro',
  )
  return {json: JSON.parse(out.body.toString()), notes: out.sent.notes}
}

/** Blocks without the cache marks the encoder adds (on the last block of the last user turns). */
const unmarked = (blocks: any[]): unknown[] => blocks.map(({cache_control: _, ...b}) => b)
/** The image blocks (or the lines in their place) of a Messages body's first turn. */
const messagesImages = (json: any): unknown[] => unmarked(json.messages[0].content.slice(1))
/** The parts after the text of a Gemini body's first turn. */
const geminiImages = (json: any): unknown[] => json.contents[0].parts.slice(1)

describe('sniffImageType: the type an image is, from its first 16 base64 characters', () => {
  it.each([
    [PNG, 'image/png'],
    [JPEG, 'image/jpeg'],
    [GIF, 'image/gif'],
    [WEBP, 'image/webp'],
    [BMP, 'image/bmp'],
    [HEIC, 'image/heic'],
    [image('\0\0\0\x1cftypmif1'), 'image/heif'],
    [image('\0\0\0\x1cftypavif'), 'image/avif'],
    [TIFF, 'image/tiff'],
    [image('MM\0*'), 'image/tiff'],
    [image('hello world, not an image'), undefined],
    ['AA', undefined],
  ])('%#: %s', (data, type) => {
    expect(sniffImageType(data)).toBe(type)
  })
})

describe('images to a Messages upstream', () => {
  it.each(['chat', 'responses', 'gemini'] as const)(
    '%s client: a JPEG named image/png goes as image/jpeg, image/jpg as image/jpeg, a WebP named GIF as WebP',
    (client) => {
      const {json, notes} = sent(client, 'messages', [
        ['image/png', JPEG],
        ['image/jpg', image('not sniffable')],
        ['image/gif', WEBP],
      ])
      expect(messagesImages(json)).toEqual([
        {type: 'image', source: {type: 'base64', media_type: 'image/jpeg', data: JPEG}},
        {type: 'image', source: {type: 'base64', media_type: 'image/jpeg', data: image('not sniffable')}},
        {type: 'image', source: {type: 'base64', media_type: 'image/webp', data: WEBP}},
      ])
      expect(notes).toBeUndefined()
    },
  )

  it.each(['chat', 'responses', 'gemini'] as const)(
    '%s client: a BMP, a HEIC and a TIFF go as a line each, and the row says which and why',
    (client) => {
      const {json, notes} = sent(client, 'messages', [
        ['image/png', PNG],
        ['image/png', BMP],
        ['image/heic', HEIC],
        ['image/tiff', TIFF],
      ])
      const why = 'Anthropic takes JPEG, PNG, GIF and WebP images only'
      expect(messagesImages(json)).toEqual([
        {type: 'image', source: {type: 'base64', media_type: 'image/png', data: PNG}},
        {type: 'text', text: `[image/bmp image not attached: ${why}]`},
        {type: 'text', text: `[image/heic image not attached: ${why}]`},
        {type: 'text', text: `[image/tiff image not attached: ${why}]`},
      ])
      expect(notes).toEqual([
        `left out the 2nd image (image/bmp: ${why}), the 3rd image (image/heic: ${why}), the 4th image (image/tiff: ${why}): a line in place of each`,
      ])
    },
  )

  it('an image of more than 5 MB of base64 goes as a line; one of exactly 5 MB goes', () => {
    const big = PNG + 'A'.repeat(ANTHROPIC_IMAGE_MAX + 4 - PNG.length)
    const fits = PNG + 'A'.repeat(ANTHROPIC_IMAGE_MAX - PNG.length)
    const {json, notes} = sent('chat', 'messages', [
      ['image/png', big],
      ['image/png', fits],
    ])
    const [first, second] = messagesImages(json) as any[]
    expect(first).toEqual({
      type: 'text',
      text: "[image/png image not attached: 5.0 MB of base64, over Anthropic's 5 MB for an image]",
    })
    expect(second.source.data.length).toBe(ANTHROPIC_IMAGE_MAX)
    expect(notes).toEqual([
      "left out the 1st image (image/png: 5.0 MB of base64, over Anthropic's 5 MB for an image): a line in place of it",
    ])
  })

  it("an image in a tool's result is fitted the same way; an image by URL goes as it came", () => {
    const decoded = decodeClientRequest(
      'chat',
      {
        model: 'm',
        messages: [
          {role: 'user', content: 'look'},
          {
            role: 'assistant',
            content: null,
            tool_calls: [{id: 'c1', type: 'function', function: {name: 'shot', arguments: '{}'}}],
          },
          {role: 'tool', tool_call_id: 'c1', content: 'done'},
          {
            role: 'user',
            content: [
              {type: 'image_url', image_url: {url: 'https://x.test/a.png'}},
              {type: 'image_url', image_url: {url: `data:image/png;base64,${BMP}`}},
            ],
          },
        ],
      },
      {},
    )
    const json = JSON.parse(encodeUpstreamRequest(decoded, 'messages', 'claude-sonnet-4-5').body.toString())
    expect(unmarked(json.messages.at(-1).content.slice(1))).toEqual([
      {type: 'image', source: {type: 'url', url: 'https://x.test/a.png'}},
      {
        type: 'text',
        text: '[image/bmp image not attached: Anthropic takes JPEG, PNG, GIF and WebP images only]',
      },
    ])
  })
})

describe('images to a Gemini upstream', () => {
  it.each(['messages', 'chat'] as const)(
    '%s client: image/jpg goes as image/jpeg, a mislabelled WebP as image/webp, a HEIC as itself',
    (client) => {
      const {json, notes} = sent(client, 'gemini', [
        ['image/jpg', JPEG],
        ['image/png', WEBP],
        ['image/heic', HEIC],
      ])
      expect(geminiImages(json)).toEqual([
        {inlineData: {mimeType: 'image/jpeg', data: JPEG}},
        {inlineData: {mimeType: 'image/webp', data: WEBP}},
        {inlineData: {mimeType: 'image/heic', data: HEIC}},
      ])
      expect(notes).toBeUndefined()
    },
  )

  it.each(['messages', 'chat'] as const)(
    "%s client: a GIF and a BMP go as a line each; a 6 MB PNG goes (the limit is Anthropic's)",
    (client) => {
      const big = PNG + 'A'.repeat(6 * 1024 * 1024)
      const {json, notes} = sent(client, 'gemini', [
        ['image/gif', GIF],
        ['image/bmp', BMP],
        ['image/png', big],
      ])
      const why = 'Gemini takes PNG, JPEG, WebP, HEIC and HEIF images only'
      expect(geminiImages(json)).toEqual([
        {text: `[image/gif image not attached: ${why}]`},
        {text: `[image/bmp image not attached: ${why}]`},
        {inlineData: {mimeType: 'image/png', data: big}},
      ])
      expect(notes).toEqual([
        `left out the 1st image (image/gif: ${why}), the 2nd image (image/bmp: ${why}): a line in place of each`,
      ])
    },
  )
})
