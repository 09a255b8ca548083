import {describe, expect, it} from 'vitest'

import {
  ALPHA_SIZES,
  BETA_SIZES,
  VIDEO_MODELS,
  alphaTierOfSize,
  betaTierOfSize,
  describeDuration,
  findVideoModel,
  findVideoModelLoose,
  normalizeSize,
} from './video-catalog.js'

describe('size conversion', () => {
  it.each([
    ['1280x720', '1280*720'],
    ['1280X720', '1280*720'],
    ['1280 x 720', '1280*720'],
    ['1280×720', '1280*720'],
    ['1280*720', '1280*720'],
    [' 960*528 ', '960*528'],
  ])('%s -> %s', (input, expected) => {
    expect(normalizeSize(input)).toBe(expected)
  })

  it.each([
    ['1280*720', '720P'],
    ['832*1088', '720P'],
    ['1632*1248', '1080P'],
    ['1104*816', undefined],
  ])('Alpha tier of %s is %s', (size, tier) => {
    expect(alphaTierOfSize(size)).toBe(tier)
  })

  it.each([
    ['960*528', '540P'],
    ['816*1104', '720P'],
    ['1238*1674', '1080P'],
    ['1088*832', undefined],
  ])('Beta tier of %s is %s', (size, tier) => {
    expect(betaTierOfSize(size)).toBe(tier)
  })
})

describe('model table (spec 2.1)', () => {
  it('holds the 14 models with their modes and the spec ranges', () => {
    expect(VIDEO_MODELS).toHaveLength(14)
    expect(VIDEO_MODELS.filter((m) => m.family === 'Alpha')).toHaveLength(3)
    expect(describeDuration(findVideoModel('BetaQ2-Turbo-Img2Video')!.duration)).toBe('1-16 s, default 5')
    expect(describeDuration(findVideoModel('BetaQ2-Turbo-Start-End2Video')!.duration)).toBe(
      '1-10 s, default 5',
    )
    expect(describeDuration(findVideoModel('BetaQ2-Pro-Reference2Video')!.duration)).toBe(
      '0 (auto) or 1-10 s, default 5',
    )
    expect(describeDuration(findVideoModel('Alpha2.6-R2V')!.duration)).toBe('positive integer')
  })

  it('marks exactly the two contradictory models as "listed as supported"', () => {
    expect(VIDEO_MODELS.filter((m) => m.audio === 'listed-as-supported').map((m) => m.name)).toEqual([
      'BetaQ2-Turbo-Img2Video',
      'BetaQ2-Pro-Start-End2Video',
    ])
  })

  it('limits Q2 image-to-video to 720P/1080P', () => {
    for (const m of VIDEO_MODELS.filter((x) => x.mode === 'image-to-video' && x.series === 'Q2')) {
      expect(m.resolutions).toEqual(['720P', '1080P'])
    }
  })

  it('finds native lower-case names', () => {
    expect(findVideoModelLoose('betaq3-turbo-text2video')?.name).toBe('BetaQ3-Turbo-Text2Video')
    expect(findVideoModel('betaq3-turbo-text2video')).toBeUndefined()
  })

  it('has five sizes per tier', () => {
    for (const sizes of Object.values(ALPHA_SIZES)) expect(sizes).toHaveLength(5)
    for (const row of Object.values(BETA_SIZES)) expect(Object.keys(row)).toHaveLength(5)
  })
})
