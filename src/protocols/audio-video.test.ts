/**
 * A chat client's audio and video content parts (Qwen Code 0.24's `input_audio` and `video_url`,
 * sent for a model its table says takes them, such as `gemini-*` and `qwen*-omni`): decoded as the
 * IR's media part, so a translated route sends them to Gemini as `inlineData` or `fileData`, and
 * to the other families as the line naming them. Before, each was a 400, and the part stayed in
 * the client's history.
 */
import {describe, expect, it} from 'vitest'

import {chatMediaPart} from './chat.js'
import type {Family, ImagePart} from './ir.js'
import {withoutRefusedMedia} from './ir.js'
import {decodeClientRequest, encodeUpstreamRequest, estimateInputTokens} from './translate.js'

/** The parts Qwen Code 0.24.4 sent for `@clip.mp4 @voice.mp3 what is in these files?` (captured). */
const MP4 = 'AAAAIGZ0eXBpc29tAAACAGlzb21pc28yYXZjMW1wNDE='
const MP3 = 'SUQzBAAAAAAAAAAA//uQZA=='
const qwenParts = [
  {type: 'text', text: '\nContent from clip.mp4:\n'},
  {type: 'video_url', video_url: {url: `data:video/mp4;base64,${MP4}`}},
  {type: 'text', text: '\nContent from voice.mp3:\n'},
  {type: 'input_audio', input_audio: {data: `data:audio/mpeg;base64,${MP3}`, format: 'mp3'}},
]
const qwenBody = {
  model: 'gemini-3-pro-preview',
  messages: [{role: 'user', content: [{type: 'text', text: 'what is in these files?'}, ...qwenParts]}],
}

const media = (part: unknown): ImagePart[] => {
  const request = decodeClientRequest('chat', {messages: [{role: 'user', content: [part]}]}, {}).request
  return request.messages[0].parts as ImagePart[]
}

const upstreamBody = (body: unknown, up: Family): any =>
  JSON.parse(encodeUpstreamRequest(decodeClientRequest('chat', body, {}), up, 'm').body.toString())

describe("a chat client's audio and video parts", () => {
  it.each([
    ['a data URL (Qwen Code)', {data: `data:audio/mpeg;base64,${MP3}`, format: 'mp3'}, 'audio/mpeg'],
    ["bare base64, OpenAI's mp3", {data: MP3, format: 'mp3'}, 'audio/mpeg'],
    ["bare base64, OpenAI's wav", {data: MP3, format: 'wav'}, 'audio/wav'],
    ['m4a', {data: MP3, format: 'm4a'}, 'audio/mp4'],
    ['flac', {data: MP3, format: 'flac'}, 'audio/flac'],
    ['ogg', {data: MP3, format: 'ogg'}, 'audio/ogg'],
    ['webm', {data: MP3, format: 'webm'}, 'audio/webm'],
    ['aac', {data: MP3, format: 'AAC'}, 'audio/aac'],
    ['a format not listed', {data: MP3, format: 'aiff'}, 'audio/aiff'],
    ['no format', {data: MP3}, 'audio/wav'],
    ["a data URL's type over the format", {data: `data:audio/ogg;base64,${MP3}`, format: 'mp3'}, 'audio/ogg'],
  ])('input_audio, %s: its bytes with their type', (_, audio, mediaType) => {
    expect(media({type: 'input_audio', input_audio: audio})).toEqual([{type: 'image', mediaType, data: MP3}])
  })

  it('input_audio by URL (Qwen Code for a file it references, DashScope): the file by its URL (review59)', () => {
    expect(
      media({type: 'input_audio', input_audio: {data: 'https://x.test/a/voice.mp3', format: 'mp3'}}),
    ).toEqual([{type: 'image', mediaType: 'audio/mpeg', url: 'https://x.test/a/voice.mp3'}])
  })

  it.each([
    ['a data URL (Qwen Code)', {url: `data:video/mp4;base64,${MP4}`}, {mediaType: 'video/mp4', data: MP4}],
    [
      'an https URL',
      {url: 'https://x.test/a/clip.webm?s=1'},
      {mediaType: 'video/webm', url: 'https://x.test/a/clip.webm?s=1'},
    ],
    [
      'a .mov URL',
      {url: 'https://x.test/clip.MOV'},
      {mediaType: 'video/quicktime', url: 'https://x.test/clip.MOV'},
    ],
    [
      'a URL without an extension',
      {url: 'https://x.test/v/123'},
      {mediaType: 'video/mp4', url: 'https://x.test/v/123'},
    ],
    [
      "the URL itself (vLLM's examples)",
      'https://x.test/draw.mp4',
      {mediaType: 'video/mp4', url: 'https://x.test/draw.mp4'},
    ],
  ])('video_url, %s', (_, video, part) => {
    expect(media({type: 'video_url', video_url: video})).toEqual([{type: 'image', ...part}])
  })

  it('go to Gemini as inlineData with their own types, in place among the texts', () => {
    const body = upstreamBody(qwenBody, 'gemini')
    expect(body.contents).toEqual([
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

  it('a video by URL goes to Gemini as fileData', () => {
    const body = upstreamBody(
      {messages: [{role: 'user', content: [{type: 'video_url', video_url: {url: 'https://x.test/c.mp4'}}]}]},
      'gemini',
    )
    expect(body.contents[0].parts).toEqual([
      {fileData: {mimeType: 'video/mp4', fileUri: 'https://x.test/c.mp4'}},
    ])
  })

  it('go to Claude, Responses and chat as the line naming each', () => {
    const messages = upstreamBody(qwenBody, 'messages')
    // (the last block carries the gateway's cache mark)
    expect(messages.messages[0].content.map((b: any) => b.text)).toEqual([
      'what is in these files?',
      '\nContent from clip.mp4:\n',
      '[video/mp4 file not attached: Anthropic takes PDF and text documents only]',
      '\nContent from voice.mp3:\n',
      '[audio/mpeg file not attached: Anthropic takes PDF and text documents only]',
    ])
    const responses = upstreamBody(qwenBody, 'responses')
    expect(responses.input[0].content).toContainEqual({
      type: 'input_text',
      text: '[audio/mpeg file not attached: the Responses API takes PDF and text files only]',
    })
    // (a translated chat upstream: OpenAI's input_audio takes wav and mp3 for its audio models
    // only, which every other chat server refuses: the line)
    const chat = upstreamBody(qwenBody, 'chat')
    expect(chat.messages[0].content).toContain(
      '[video/mp4 file not attached: chat completions take PDF and text files only]',
    )
    expect(chat.messages[0].content).toContain(
      '[audio/mpeg file not attached: chat completions take PDF and text files only]',
    )
  })

  it("in a tool message, go with the tool's result", () => {
    const body = {
      messages: [
        {role: 'user', content: 'listen'},
        {
          role: 'assistant',
          content: null,
          tool_calls: [{id: 'c1', type: 'function', function: {name: 'read_file', arguments: '{}'}}],
        },
        {role: 'tool', tool_call_id: 'c1', content: [qwenParts[3]]},
      ],
    }
    const gemini = upstreamBody(body, 'gemini')
    expect(JSON.stringify(gemini.contents.at(-1))).toContain(
      `{"inlineData":{"mimeType":"audio/mpeg","data":"${MP3}"}}`,
    )
    const messages = upstreamBody(body, 'messages')
    expect(messages.messages.at(-1).content[0]).toMatchObject({
      type: 'tool_result',
      content: [
        {type: 'text', text: '[audio/mpeg file not attached: Anthropic takes PDF and text documents only]'},
      ],
    })
  })

  it('are media for the pass-through rule, and go as a line where the model took none', () => {
    expect(chatMediaPart(qwenParts[1])).toEqual({type: 'image', mediaType: 'video/mp4', data: MP4})
    expect(chatMediaPart(qwenParts[3])).toEqual({type: 'image', mediaType: 'audio/mpeg', data: MP3})
    const request = decodeClientRequest('chat', qwenBody, {}).request
    const lines = withoutRefusedMedia(request, {audio: true}, 'qwen3.5-plus').messages[0].parts
    expect(lines[2]).toEqual({type: 'image', mediaType: 'video/mp4', data: MP4})
    expect(lines[4]).toEqual({
      type: 'text',
      text: '[audio/mpeg file not attached: qwen3.5-plus takes no audio]',
    })
    // images or files refused: audio and video stay
    expect(withoutRefusedMedia(request, {images: true, files: true}, 'm')).toBe(request)
    const all = withoutRefusedMedia(request, {video: true, audio: true}, 'deepseek-chat').messages[0].parts
    expect(all[2]).toEqual({
      type: 'text',
      text: '[video/mp4 file not attached: deepseek-chat takes no video]',
    })
  })

  it('count in the estimate by their size, not as a PDF', () => {
    const big = 'A'.repeat(400_000) // 300 KB
    const request = decodeClientRequest(
      'chat',
      {messages: [{role: 'user', content: [{type: 'input_audio', input_audio: {data: big, format: 'mp3'}}]}]},
      {},
    ).request
    expect(estimateInputTokens(request)).toBe(600)
  })
})
