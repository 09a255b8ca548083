import {describe, expect, it} from 'vitest'

import {UsageError} from '../core/errors.js'
import {
  buildContextRequest,
  buildGenerationRequest,
  buildRegenerationRequest,
  contentFromInput,
  parseContentJson,
  validateContent,
  validateDuration,
  validateRatio,
  validateResolution,
} from './gamma-content.js'

const text = (t = 'a red fox') => ({type: 'text', text: t})
const img = (role?: string) => ({
  type: 'image_url',
  image_url: {url: 'https://x/a.png'},
  ...(role ? {role} : {}),
})
const vid = (role?: string) => ({
  type: 'video_url',
  video_url: {url: 'https://x/a.mp4'},
  ...(role ? {role} : {}),
})
const aud = (role?: string) => ({
  type: 'audio_url',
  audio_url: {url: 'https://x/a.mp3'},
  ...(role ? {role} : {}),
})

function ruleOf(fn: () => unknown): string | undefined {
  try {
    fn()
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError)
    expect((error as UsageError).exitCode).toBe(2)
    const rule = (error as UsageError).details?.rule as string
    expect((error as UsageError).message).toContain(`Rule "${rule}"`)
    return rule
  }
  return undefined
}

describe('validateContent: allowed sets (spec 2.1)', () => {
  it.each([
    ['text only', [text()], true],
    ['text + image without role', [text(), img()], false],
    ['text + first frame', [text(), img('first_frame')], false],
    ['text + last frame', [text(), img('last_frame')], false],
    ['text + first and last frame', [text(), img('last_frame'), img('first_frame')], false],
    ['text + one reference image', [text(), img('reference_image')], false],
    ['text + reference video', [text(), vid('reference_video')], false],
    ['text + reference audio', [text(), aud('reference_audio')], false],
    [
      'text + mix of references',
      [
        text(),
        img('reference_image'),
        img('reference_image'),
        vid('reference_video'),
        aud('reference_audio'),
      ],
      false,
    ],
  ])('%s', (_name, content, textOnly) => {
    expect(validateContent(content, 'generation')).toEqual({textOnly})
    expect(validateContent(content, 'analysis')).toEqual({textOnly})
  })
})

describe('validateContent: invalid sets name their rule', () => {
  it.each([
    ['no text', [img('first_frame')], 'one-text'],
    ['two texts', [text(), text('b')], 'one-text'],
    ['empty text', [text('')], 'one-text'],
    ['blank text', [text('   ')], 'one-text'],
    ['empty array', [], 'one-text'],
    ['not an array', {type: 'text'}, 'content-shape'],
    ['unknown type', [text(), {type: 'file_url', file_url: {url: 'x'}}], 'content-shape'],
    ['image without url', [text(), {type: 'image_url', image_url: {}}], 'content-shape'],
    ['text item without text', [{type: 'text'}], 'content-shape'],
    [
      'frame + reference image',
      [text(), img('first_frame'), img('reference_image')],
      'frames-xor-references',
    ],
    [
      'last frame + reference video',
      [text(), img('last_frame'), vid('reference_video')],
      'frames-xor-references',
    ],
    [
      'image without role + reference audio',
      [text(), img(), aud('reference_audio')],
      'frames-xor-references',
    ],
    ['two first frames', [text(), img('first_frame'), img('first_frame')], 'allowed-combination'],
    ['two images without role', [text(), img(), img()], 'allowed-combination'],
    ['image without role + last frame', [text(), img(), img('last_frame')], 'allowed-combination'],
    ['three frames', [text(), img('first_frame'), img('last_frame'), img()], 'allowed-combination'],
    ['video without role', [text(), vid()], 'item-role'],
    ['audio without role', [text(), aud()], 'item-role'],
    ['image with a video role', [text(), img('reference_video')], 'item-role'],
    ['video with a frame role', [text(), vid('first_frame')], 'item-role'],
    ['text with a role', [{...text(), role: 'first_frame'}], 'item-role'],
    ['base video in generation', [text(), vid('base_video')], 'item-role'],
  ])('%s -> %s', (_name, content, rule) => {
    expect(ruleOf(() => validateContent(content, 'generation'))).toBe(rule)
  })
})

describe('validateContent: regeneration by original video', () => {
  it.each([
    ['text + base video', [text(), vid('base_video')], undefined],
    ['frames + base video', [text(), img('first_frame'), img('last_frame'), vid('base_video')], undefined],
    [
      'references + base video',
      [text(), img('reference_image'), vid('reference_video'), vid('base_video')],
      undefined,
    ],
    ['no base video', [text(), img('first_frame')], 'one-base-video'],
    ['two base videos', [text(), vid('base_video'), vid('base_video')], 'one-base-video'],
    ['no text', [vid('base_video')], 'one-text'],
    [
      'frames + references + base video',
      [text(), img(), vid('reference_video'), vid('base_video')],
      'frames-xor-references',
    ],
  ])('%s', (_name, content, rule) => {
    expect(ruleOf(() => validateContent(content, 'regeneration'))).toBe(rule)
  })
})

describe('one URL rule with video: inputs are http(s) URLs', () => {
  it.each([
    ['notaurl', '--first-frame'],
    ['ftp://x/a.png', '--first-frame'],
    ['file:///etc/passwd', '--first-frame'],
  ])('refuses %s, naming the flag and the URL', (url, flag) => {
    const content = contentFromInput({text: 'x', firstFrame: url})
    expect(ruleOf(() => validateContent(content, 'generation'))).toBe('http-url')
    expect(() => validateContent(content, 'generation')).toThrow(`${flag}) must be an http(s) URL`)
  })

  it('refuses a callback URL that is not http(s)', () => {
    const content = contentFromInput({text: 'x'})
    const build = () =>
      buildGenerationRequest({content, resolution: '768P', duration: 5, ratio: '16:9', callbackUrl: 'nope'})
    expect(ruleOf(build)).toBe('http-url')
  })
})

describe('a missing required flag says it is required', () => {
  it('duration and resolution', () => {
    expect(() => validateDuration(undefined)).toThrow('--duration (-d) is required')
    expect(() => validateDuration(undefined)).not.toThrow('undefined')
    expect(() => validateResolution(undefined, 'generation')).toThrow('--resolution (-r) is required')
  })
})

describe('duration, resolution, ratio', () => {
  it.each([
    [4, undefined],
    [15, undefined],
    ['10', undefined],
    [3, 'duration'],
    [16, 'duration'],
    [5.5, 'duration'],
    ['5.5', 'duration'],
    ['five', 'duration'],
    [undefined, 'duration'],
  ])('duration %s', (value, rule) => {
    expect(ruleOf(() => validateDuration(value))).toBe(rule)
  })

  it.each([
    ['768P', 'generation', undefined],
    ['2K', 'generation', undefined],
    ['1080P', 'generation', 'resolution'],
    [undefined, 'generation', 'resolution'],
    ['2K', 'regeneration', undefined],
    ['768P', 'regeneration', 'resolution'],
  ] as const)('resolution %s for %s', (value, purpose, rule) => {
    expect(ruleOf(() => validateResolution(value, purpose))).toBe(rule)
  })

  it.each([
    ['16:9', true, undefined],
    ['9:16', true, undefined],
    [undefined, false, undefined],
    ['adaptive', false, undefined],
    [undefined, true, 'text-to-video-ratio'],
    ['adaptive', true, 'text-to-video-ratio'],
    ['2:1', false, 'ratio'],
  ] as const)('ratio %s (text only: %s)', (value, textOnly, rule) => {
    expect(ruleOf(() => validateRatio(value, textOnly))).toBe(rule)
  })
})

describe('request builders', () => {
  it('builds a generation request with the spec field names', () => {
    const content = contentFromInput({
      text: 'a fox',
      firstFrame: 'https://x/f.png',
      lastFrame: 'https://x/l.png',
    })
    expect(
      buildGenerationRequest({
        content,
        resolution: '2K',
        duration: '8',
        watermark: true,
        callbackUrl: 'https://cb',
      }),
    ).toEqual({
      model: 'Gamma-H3',
      content: [
        {type: 'text', text: 'a fox'},
        {type: 'image_url', image_url: {url: 'https://x/f.png'}, role: 'first_frame'},
        {type: 'image_url', image_url: {url: 'https://x/l.png'}, role: 'last_frame'},
      ],
      resolution: '2K',
      duration: 8,
      aigc_watermark: true,
      callback_url: 'https://cb',
    })
  })

  it('needs a concrete ratio for text-to-video generation but not for analysis', () => {
    const content = contentFromInput({text: 'a fox'})
    expect(ruleOf(() => buildGenerationRequest({content, resolution: '768P', duration: 5}))).toBe(
      'text-to-video-ratio',
    )
    expect(buildContextRequest({content, duration: 5})).toEqual({model: 'Gamma-H3', content, duration: 5})
  })

  it('builds both regeneration forms, 2K only', () => {
    expect(buildRegenerationRequest({sourceTaskId: 'cgt-1'})).toEqual({
      model: 'Gamma-H3',
      resolution: '2K',
      source_task_id: 'cgt-1',
    })
    const content = contentFromInput({
      text: 'a fox',
      refAudios: ['https://x/a.mp3'],
      baseVideo: 'https://x/v.mp4',
    })
    expect(buildRegenerationRequest({content}).content?.at(-1)).toEqual({
      type: 'video_url',
      video_url: {url: 'https://x/v.mp4'},
      role: 'base_video',
    })
    expect(ruleOf(() => buildRegenerationRequest({sourceTaskId: 'cgt-1', resolution: '768P'}))).toBe(
      'resolution',
    )
    expect(ruleOf(() => buildRegenerationRequest({sourceTaskId: 'cgt-1', content}))).toBe('regeneration-form')
    expect(ruleOf(() => buildRegenerationRequest({}))).toBe('regeneration-form')
  })

  it('reads a raw content array or a request body from JSON', () => {
    expect(parseContentJson('[{"type":"text","text":"x"}]', 'f.json')).toEqual([{type: 'text', text: 'x'}])
    expect(parseContentJson('{"content":[{"type":"text","text":"x"}]}', 'f.json')).toEqual([
      {type: 'text', text: 'x'},
    ])
    expect(() => parseContentJson('[', 'f.json')).toThrow(/f.json is not valid JSON/)
  })
})
