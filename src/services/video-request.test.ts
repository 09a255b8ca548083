import {describe, expect, it} from 'vitest'

import {UsageError} from '../core/errors.js'
import type {VideoRequestOptions} from './video-request.js'
import {buildVideoRequest, parseParams} from './video-request.js'

const URL_A = 'https://img.example/a.png'
const URL_B = 'https://img.example/b.png'
const VID = 'https://vid.example/v.mp4'

/** The error a request raises (fails the test when none is raised). */
function failure(options: VideoRequestOptions): UsageError {
  try {
    buildVideoRequest(options)
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError)
    return error as UsageError
  }
  throw new Error('expected a UsageError, got none')
}

describe('buildVideoRequest: rejected requests name the rule', () => {
  it.each<[string, VideoRequestOptions, string, string]>([
    ['unknown model', {model: 'Gamma-H3', prompt: 'x'}, 'unknown_model', 'Unknown video model "Gamma-H3"'],
    // required fields per mode
    ['Alpha T2V without prompt', {model: 'Alpha2.6-T2V'}, 'missing_field', 'needs a non-empty prompt'],
    [
      'Alpha T2V with blank prompt',
      {model: 'Alpha2.6-T2V', prompt: '  '},
      'missing_field',
      'non-empty prompt',
    ],
    ['Alpha I2V without img_url', {model: 'Alpha2.6-I2V', prompt: 'x'}, 'missing_field', 'needs img_url'],
    [
      'Alpha R2V without videos',
      {model: 'Alpha2.6-R2V', prompt: 'x'},
      'missing_field',
      'needs reference_video_urls',
    ],
    ['Beta T2V without prompt', {model: 'BetaQ3-Pro-Text2Video'}, 'missing_field', 'non-empty prompt'],
    [
      'Beta I2V without img_url',
      {model: 'BetaQ3-Pro-Img2Video', prompt: 'x'},
      'missing_field',
      'needs img_url',
    ],
    [
      'first-last without prompt',
      {model: 'BetaQ3-Pro-Start-End2Video', firstFrame: URL_A, lastFrame: URL_B, resolution: '720P'},
      'missing_field',
      'change between the frames',
    ],
    [
      'first-last without last frame',
      {model: 'BetaQ3-Pro-Start-End2Video', prompt: 'x', firstFrame: URL_A, resolution: '720P'},
      'missing_field',
      'needs both frames',
    ],
    [
      'first-last without resolution',
      {model: 'BetaQ3-Pro-Start-End2Video', prompt: 'x', firstFrame: URL_A, lastFrame: URL_B},
      'missing_field',
      'needs resolution',
    ],
    [
      'first-last as reference_images with one frame',
      {
        model: 'BetaQ2-Pro-Start-End2Video',
        prompt: 'x',
        firstFrame: URL_A,
        resolution: '720P',
        framesAs: 'reference-images',
      },
      'missing_field',
      'needs both frames',
    ],
    [
      'reference without images',
      {model: 'BetaQ2-Pro-Reference2Video', prompt: 'x'},
      'missing_field',
      'needs reference_images',
    ],
    [
      'reference without prompt',
      {model: 'BetaQ2-Pro-Reference2Video', refImages: [URL_A]},
      'missing_field',
      'non-empty prompt',
    ],
    // Alpha seconds: positive integer
    ['seconds 0', {model: 'Alpha2.6-T2V', prompt: 'x', seconds: 0}, 'invalid_seconds', 'positive integer'],
    [
      'seconds -3',
      {model: 'Alpha2.6-T2V', prompt: 'x', seconds: '-3'},
      'invalid_seconds',
      'positive integer',
    ],
    ['seconds 2.5', {model: 'Alpha2.6-T2V', prompt: 'x', seconds: '2.5'}, 'invalid_seconds', 'got "2.5"'],
    [
      'seconds text',
      {model: 'Alpha2.6-T2V', prompt: 'x', seconds: 'five'},
      'invalid_seconds',
      'positive integer',
    ],
    // Alpha sizes
    [
      'Alpha size off the list',
      {model: 'Alpha2.6-T2V', prompt: 'x', size: '1000x1000'},
      'invalid_size',
      'not an Alpha size',
    ],
    [
      'Alpha Beta-only size',
      {model: 'Alpha2.6-T2V', prompt: 'x', size: '1104*816'},
      'invalid_size',
      '720P: 1280*720',
    ],
    [
      'Alpha tier label on T2V',
      {model: 'Alpha2.6-T2V', prompt: 'x', size: '720P'},
      'invalid_size',
      'not an Alpha size',
    ],
    [
      'Alpha shot type',
      {model: 'Alpha2.6-T2V', prompt: 'x', params: ['shot_type=wide']},
      'invalid_shot_type',
      '"single" or "multi"',
    ],
    // Beta duration ranges per model
    [
      'Q3 duration 17',
      {model: 'BetaQ3-Pro-Text2Video', prompt: 'x', duration: 17},
      'invalid_duration',
      '1-16 s',
    ],
    [
      'Q3 duration 0',
      {model: 'BetaQ3-Turbo-Text2Video', prompt: 'x', duration: 0},
      'invalid_duration',
      '1-16 s',
    ],
    [
      'Q2 T2V duration 11',
      {model: 'BetaQ2-Text2Video', prompt: 'x', duration: '11'},
      'invalid_duration',
      '1-10 s',
    ],
    [
      'Q2-Pro I2V duration 11',
      {model: 'BetaQ2-Pro-Img2Video', imgUrl: URL_A, duration: 11},
      'invalid_duration',
      '1-10 s',
    ],
    [
      'Q2-Turbo start-end duration 11',
      {
        model: 'BetaQ2-Turbo-Start-End2Video',
        prompt: 'x',
        firstFrame: URL_A,
        lastFrame: URL_B,
        resolution: '720P',
        duration: 11,
      },
      'invalid_duration',
      '1-10 s',
    ],
    [
      'reference duration 11',
      {model: 'BetaQ2-Pro-Reference2Video', prompt: 'x', refImages: [URL_A], duration: 11},
      'invalid_duration',
      '0 (auto) or 1-10 s',
    ],
    [
      'Beta duration 2.5',
      {model: 'BetaQ3-Pro-Text2Video', prompt: 'x', duration: '2.5'},
      'invalid_duration',
      'out of range',
    ],
    // resolution per mode
    [
      'Beta resolution 4K',
      {model: 'BetaQ3-Pro-Text2Video', prompt: 'x', resolution: '4K'},
      'invalid_resolution',
      '540P, 720P, 1080P',
    ],
    [
      'Q2 image-to-video 540P',
      {model: 'BetaQ2-Pro-Img2Video', imgUrl: URL_A, resolution: '540p'},
      'invalid_resolution',
      '720P, 1080P',
    ],
    [
      'Q2-Turbo I2V 540P',
      {model: 'BetaQ2-Turbo-Img2Video', imgUrl: URL_A, resolution: '540P'},
      'invalid_resolution',
      '720P, 1080P',
    ],
    // audio
    [
      'audio on Q2 T2V',
      {model: 'BetaQ2-Text2Video', prompt: 'x', audio: true},
      'audio_not_supported',
      'model table: not supported',
    ],
    [
      'audio on Q2-Pro I2V',
      {model: 'BetaQ2-Pro-Img2Video', imgUrl: URL_A, audio: true},
      'audio_not_supported',
      'not supported',
    ],
    [
      'audio on Q2-Turbo start-end',
      {
        model: 'BetaQ2-Turbo-Start-End2Video',
        prompt: 'x',
        firstFrame: URL_A,
        lastFrame: URL_B,
        resolution: '720P',
        audio: true,
      },
      'audio_not_supported',
      'not supported',
    ],
    [
      'audio on reference (not stated)',
      {model: 'BetaQ2-Pro-Reference2Video', prompt: 'x', refImages: [URL_A], audio: true},
      'audio_not_supported',
      'not stated',
    ],
    [
      'audio as text',
      {model: 'BetaQ3-Pro-Text2Video', prompt: 'x', params: ['audio="yes"']},
      'invalid_boolean',
      'true or false',
    ],
    // seed
    ['seed -1', {model: 'BetaQ3-Pro-Text2Video', prompt: 'x', seed: '-1'}, 'invalid_seed', '0 to 2147483647'],
    [
      'seed 2^31',
      {model: 'BetaQ3-Pro-Text2Video', prompt: 'x', seed: '2147483648'},
      'invalid_seed',
      '0 to 2147483647',
    ],
    ['seed text', {model: 'BetaQ3-Pro-Text2Video', prompt: 'x', seed: 'abc'}, 'invalid_seed', 'got "abc"'],
    // prompt length (Beta)
    [
      'Beta prompt 5001',
      {model: 'BetaQ3-Pro-Text2Video', prompt: 'a'.repeat(5001)},
      'prompt_too_long',
      'at most 5000',
    ],
    // reference images and videos
    [
      'reference 8 images',
      {model: 'BetaQ2-Pro-Reference2Video', prompt: 'x', refImages: Array(8).fill(URL_A)},
      'invalid_reference_images',
      'at most 7 images',
    ],
    [
      'reference 5 images with a video',
      {model: 'BetaQ2-Pro-Reference2Video', prompt: 'x', refImages: Array(5).fill(URL_A), refVideos: [VID]},
      'invalid_reference_images',
      'at most 4 images when reference videos',
    ],
    [
      'reference 3 videos',
      {model: 'BetaQ2-Pro-Reference2Video', prompt: 'x', refImages: [URL_A], refVideos: [VID, VID, VID]},
      'invalid_reference_videos',
      '1-2 videos',
    ],
    [
      'reference videos on a Q3 model (via --param)',
      {model: 'BetaQ3-Pro-Text2Video', prompt: 'x', params: [`reference_video_urls=["${VID}"]`]},
      'invalid_reference_videos',
      'only by BetaQ2-Pro-Reference2Video',
    ],
    [
      'reference images in first-last must be 2',
      {
        model: 'BetaQ3-Pro-Start-End2Video',
        prompt: 'x',
        resolution: '720P',
        params: [`reference_images=["${URL_A}"]`],
      },
      'invalid_frames',
      'exactly 2 URLs',
    ],
    // URLs
    [
      'img_url not http',
      {model: 'Alpha2.6-I2V', prompt: 'x', imgUrl: 'file:///etc/passwd'},
      'invalid_url',
      'http(s) URLs',
    ],
    ['img_url not a URL', {model: 'BetaQ3-Pro-Img2Video', imgUrl: 'cat.png'}, 'invalid_url', '"cat.png"'],
    [
      'callback ftp',
      {model: 'Alpha2.6-T2V', prompt: 'x', callbackUrl: 'ftp://x/y'},
      'invalid_url',
      'callback_url',
    ],
    [
      'audio_url relative',
      {model: 'Alpha2.6-T2V', prompt: 'x', audioUrl: '/a.mp3'},
      'invalid_url',
      'audio_url',
    ],
    [
      'ref video not http',
      {model: 'Alpha2.6-R2V', prompt: 'x', refVideos: ['s3://b/v.mp4']},
      'invalid_url',
      'reference_video_urls',
    ],
    [
      'frame not http',
      {
        model: 'BetaQ3-Pro-Start-End2Video',
        prompt: 'x',
        firstFrame: URL_A,
        lastFrame: 'b.png',
        resolution: '720P',
      },
      'invalid_url',
      'last_frame_url',
    ],
    // Beta sizes and tiers
    [
      'Beta size of another tier',
      {model: 'BetaQ3-Pro-Text2Video', prompt: 'x', resolution: '1080P', size: '1280x720'},
      'size_not_in_tier',
      'does not belong to resolution 1080P',
    ],
    [
      'Beta size off the table',
      {model: 'BetaQ3-Pro-Text2Video', prompt: 'x', size: '1000*1000'},
      'invalid_size',
      'not a Beta size',
    ],
    [
      'Beta Alpha-only size',
      {model: 'BetaQ3-Pro-Text2Video', prompt: 'x', resolution: '720P', size: '1088*832'},
      'size_not_in_tier',
      '720P',
    ],
    // flags of the other family or mode
    [
      '--seconds on Beta',
      {model: 'BetaQ3-Pro-Text2Video', prompt: 'x', seconds: 5},
      'field_not_for_model',
      'Beta: --duration',
    ],
    [
      '--duration on Alpha',
      {model: 'Alpha2.6-T2V', prompt: 'x', duration: 5},
      'field_not_for_model',
      'Alpha: --seconds',
    ],
    [
      '--img-url on T2V',
      {model: 'BetaQ3-Pro-Text2Video', prompt: 'x', imgUrl: URL_A},
      'field_not_for_model',
      'image-to-video',
    ],
    [
      '--ref-video on a Q3 model',
      {model: 'BetaQ3-Pro-Text2Video', prompt: 'x', refVideos: [VID]},
      'field_not_for_model',
      '--ref-video',
    ],
    [
      '--first-frame on I2V',
      {model: 'BetaQ3-Pro-Img2Video', imgUrl: URL_A, firstFrame: URL_A},
      'field_not_for_model',
      '--first-frame',
    ],
    [
      '--audio on Alpha',
      {model: 'Alpha2.6-T2V', prompt: 'x', audio: true},
      'field_not_for_model',
      'Alpha: --audio-url',
    ],
    [
      '--shot-type on Beta',
      {model: 'BetaQ3-Pro-Text2Video', prompt: 'x', shotType: 'single'},
      'field_not_for_model',
      '--shot-type',
    ],
    // params and native
    [
      '--param without =',
      {model: 'Alpha2.6-T2V', prompt: 'x', params: ['oops']},
      'invalid_param',
      'not key=value',
    ],
    [
      'native input not JSON',
      {model: 'Alpha2.6-T2V', nativeInput: '{prompt'},
      'invalid_json',
      '--native-input is not valid JSON',
    ],
    [
      'native input an array',
      {model: 'Alpha2.6-T2V', nativeInput: '[1]'},
      'invalid_json',
      'must be a JSON object',
    ],
    [
      'native parameters alone',
      {model: 'Alpha2.6-T2V', nativeParameters: '{}'},
      'missing_field',
      'needs --native-input',
    ],
    [
      'native mixed with standard flags',
      {model: 'Alpha2.6-T2V', prompt: 'x', nativeInput: '{"prompt":"x"}'},
      'native_and_standard',
      '--prompt cannot be combined',
    ],
    ['native unknown model', {model: 'nope', nativeInput: '{}'}, 'unknown_model', 'Unknown video model'],
  ])('%s', (_name, options, code, message) => {
    const error = failure(options)
    expect(error.code).toBe(code)
    expect(error.message).toContain(message)
    expect(error.exitCode).toBe(2)
  })
})

describe('buildVideoRequest: accepted requests', () => {
  it.each<[string, VideoRequestOptions, Record<string, unknown>]>([
    [
      'Alpha size x becomes *',
      {model: 'Alpha2.6-T2V', prompt: 'fox', size: '1280x720', seconds: '5'},
      {model: 'Alpha2.6-T2V', prompt: 'fox', size: '1280*720', seconds: 5},
    ],
    [
      'Alpha size X and spaces',
      {model: 'Alpha2.6-T2V', prompt: 'f', size: '1920 X 1080'},
      {size: '1920*1080'},
    ],
    ['Alpha 1080P tier size', {model: 'Alpha2.6-T2V', prompt: 'f', size: '1248*1632'}, {size: '1248*1632'}],
    [
      'Alpha I2V tier label',
      {model: 'Alpha2.6-I2V', prompt: 'f', imgUrl: URL_A, size: '720p'},
      {size: '720P', img_url: URL_A},
    ],
    [
      'Alpha switches',
      {
        model: 'Alpha2.6-R2V',
        prompt: 'f',
        refVideos: [VID],
        promptExtend: false,
        shotType: 'single',
        audioUrl: VID,
        callbackUrl: 'http://cb.example/x',
      },
      {
        reference_video_urls: [VID],
        prompt_extend: false,
        shot_type: 'single',
        audio_url: VID,
        callback_url: 'http://cb.example/x',
      },
    ],
    [
      'Beta lower-case resolution',
      {model: 'BetaQ3-Pro-Text2Video', prompt: 'w', resolution: '540p', size: '960x528'},
      {resolution: '540P', size: '960*528'},
    ],
    [
      'Beta 1080P 4:3',
      {model: 'BetaQ3-Pro-Text2Video', prompt: 'w', resolution: '1080P', size: '1674*1238'},
      {size: '1674*1238'},
    ],
    ['Q3 duration 16', {model: 'BetaQ3-Turbo-Img2Video', imgUrl: URL_A, duration: 16}, {duration: 16}],
    [
      'Q2-Turbo I2V duration 16',
      {model: 'BetaQ2-Turbo-Img2Video', imgUrl: URL_A, duration: '16'},
      {duration: 16},
    ],
    [
      'Q2 I2V 1080P',
      {model: 'BetaQ2-Pro-Img2Video', imgUrl: URL_A, resolution: '1080P'},
      {resolution: '1080P'},
    ],
    ['I2V prompt optional', {model: 'BetaQ3-Pro-Img2Video', imgUrl: URL_A}, {img_url: URL_A}],
    [
      'first-last as named fields (default), duration defaulted',
      {
        model: 'BetaQ3-Pro-Start-End2Video',
        prompt: 'open',
        firstFrame: URL_A,
        lastFrame: URL_B,
        resolution: '720p',
      },
      {first_frame_url: URL_A, last_frame_url: URL_B, resolution: '720P', duration: 5},
    ],
    [
      'first-last as reference_images',
      {
        model: 'BetaQ2-Pro-Start-End2Video',
        prompt: 'open',
        firstFrame: URL_A,
        lastFrame: URL_B,
        resolution: '1080P',
        framesAs: 'reference-images',
        duration: 16,
      },
      {reference_images: [URL_A, URL_B], duration: 16},
    ],
    [
      'reference: duration 0 (auto), 4 images with 2 videos',
      {
        model: 'BetaQ2-Pro-Reference2Video',
        prompt: 'r',
        refImages: Array(4).fill(URL_A),
        refVideos: [VID, VID],
        duration: 0,
      },
      {duration: 0, reference_video_urls: [VID, VID]},
    ],
    [
      'reference: 7 images without videos',
      {model: 'BetaQ2-Pro-Reference2Video', prompt: 'r', refImages: Array(7).fill(URL_A)},
      {duration: 5},
    ],
    [
      'seed bounds',
      {model: 'BetaQ3-Pro-Text2Video', prompt: 'w', seed: '2147483647', watermark: true},
      {seed: 2147483647, watermark: true},
    ],
    ['seed 0', {model: 'BetaQ3-Pro-Text2Video', prompt: 'w', seed: 0, audio: true}, {seed: 0, audio: true}],
    ['Beta prompt 5000', {model: 'BetaQ3-Pro-Text2Video', prompt: 'a'.repeat(5000)}, {}],
    [
      'case-insensitive model name',
      {model: 'betaq3-pro-text2video', prompt: 'w'},
      {model: 'BetaQ3-Pro-Text2Video'},
    ],
    [
      'params pass through, JSON-parsed',
      {
        model: 'Alpha2.6-T2V',
        prompt: 'f',
        params: ['sim_outcome=failed', 'n=2', 'extra={"a":[1]}', 'flag=true', 'text=a=b'],
      },
      {sim_outcome: 'failed', n: 2, extra: {a: [1]}, flag: true, text: 'a=b'},
    ],
    [
      'native: lower-case model, input and parameters as given',
      {
        model: 'BetaQ3-Turbo-Text2Video',
        nativeInput: '{"prompt":"cat","X":1}',
        nativeParameters: '{"duration":99}',
      },
      {model: 'betaq3-turbo-text2video', input: {prompt: 'cat', X: 1}, parameters: {duration: 99}},
    ],
    [
      '--no-validate sends anything',
      {model: 'Whatever-Model', seconds: '-1', size: '3x3', validate: false},
      {model: 'Whatever-Model', seconds: -1, size: '3*3'},
    ],
    [
      '--no-validate skips rules of a known model',
      {model: 'BetaQ2-Text2Video', duration: 99, audio: true, validate: false},
      {model: 'BetaQ2-Text2Video', duration: 99, audio: true},
    ],
  ])('%s', (_name, options, expected) => {
    const {body} = buildVideoRequest(options)
    expect(body).toMatchObject(expected)
  })

  it('sends only the fields that were given', () => {
    const {body} = buildVideoRequest({model: 'Alpha2.6-T2V', prompt: 'fox'})
    expect(body).toEqual({model: 'Alpha2.6-T2V', prompt: 'fox'})
  })
})

describe('buildVideoRequest: warnings', () => {
  it.each<[string, VideoRequestOptions, string[]]>([
    [
      'Q2-Turbo I2V audio (listed as supported)',
      {model: 'BetaQ2-Turbo-Img2Video', imgUrl: URL_A, audio: true},
      ['documented for the Q3 models'],
    ],
    [
      'Q2-Pro start-end audio (listed as supported)',
      {
        model: 'BetaQ2-Pro-Start-End2Video',
        prompt: 'x',
        firstFrame: URL_A,
        lastFrame: URL_B,
        resolution: '720P',
        audio: true,
      },
      ['documented for the Q3 models', 'Leave out --audio'],
    ],
    [
      'size without resolution',
      {model: 'BetaQ3-Pro-Text2Video', prompt: 'x', size: '1080x1920'},
      ['without resolution is ignored', '--resolution 1080P'],
    ],
    ['Q3 audio: no warning', {model: 'BetaQ3-Pro-Text2Video', prompt: 'x', audio: true}, []],
    [
      'size with resolution: no warning',
      {model: 'BetaQ3-Pro-Text2Video', prompt: 'x', resolution: '720P', size: '720*1280'},
      [],
    ],
  ])('%s', (_name, options, fragments) => {
    const {warnings} = buildVideoRequest(options)
    if (fragments.length === 0) expect(warnings).toEqual([])
    else for (const f of fragments) expect(warnings.join('\n')).toContain(f)
  })
})

describe('parseParams', () => {
  it.each<[string, unknown]>([
    ['a=1', 1],
    ['a=1.5', 1.5],
    ['a=null', null],
    ['a=false', false],
    ['a="5"', '5'],
    ['a=hello', 'hello'],
    ['a=', ''],
    ['a=[1,"x"]', [1, 'x']],
  ])('%s', (pair, value) => {
    expect(parseParams([pair])).toEqual({a: value})
  })

  it('refuses __proto__ instead of silently replacing the prototype', () => {
    expect(() => parseParams(['__proto__={"prompt":"x"}'])).toThrow(/"__proto__" is not a field name/)
  })
})
