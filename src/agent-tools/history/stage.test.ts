import {availableParallelism} from 'node:os'
import {describe, expect, it} from 'vitest'

import {
  generationBounds,
  generationCount,
  GENERATIONS,
  DEFAULT_MAX_READERS,
  maxThreads,
  readerCount,
  scratchCount,
  stageJobs,
  WORKER_MIN_BYTES,
} from './stage.js'

describe('the reader pool of a staged rescan', () => {
  it('takes one reader per WORKER_MIN_BYTES above the first, up to the threads', () => {
    expect(readerCount(0, 16)).toBe(1)
    expect(readerCount(WORKER_MIN_BYTES - 1, 16)).toBe(1)
    expect(readerCount(WORKER_MIN_BYTES, 16)).toBe(2)
    expect(readerCount(1 << 30, 16)).toBe(16)
    expect(readerCount(1 << 30, 3)).toBe(3)
    expect(readerCount(1 << 30, 1)).toBe(1)
  })

  it('is sized by the cores, up to nine, unless history.threads says otherwise', () => {
    expect(maxThreads()).toBe(Math.min(availableParallelism(), DEFAULT_MAX_READERS))
    expect(maxThreads(undefined, 2)).toBe(2)
    expect(maxThreads(undefined, 8)).toBe(8)
    expect(maxThreads(undefined, 16)).toBe(9)
    expect(maxThreads(undefined, 64)).toBe(9)
    // the setting is taken as it is, above the default's cap too
    expect(maxThreads(3, 16)).toBe(3)
    expect(maxThreads(16, 16)).toBe(16)
    expect(maxThreads(64)).toBe(64)
  })

  it('writes one scratch for two readers, else one per two, at most the merge can attach', () => {
    expect(scratchCount(1, 8, {})).toBe(1)
    expect(scratchCount(2, 8, {})).toBe(1)
    expect(scratchCount(3, 8, {})).toBe(2)
    expect(scratchCount(16, 8, {})).toBe(8)
    expect(scratchCount(32, 8, {})).toBe(8)
    // GWCTL_HISTORY_SCRATCHES (tests, measuring), never more than the readers or the cap
    expect(scratchCount(16, 8, {GWCTL_HISTORY_SCRATCHES: '3'})).toBe(3)
    expect(scratchCount(2, 8, {GWCTL_HISTORY_SCRATCHES: '5'})).toBe(2)
    expect(scratchCount(16, 8, {GWCTL_HISTORY_SCRATCHES: '12'})).toBe(8)
    expect(scratchCount(4, 8, {GWCTL_HISTORY_SCRATCHES: 'x'})).toBe(2)
  })

  it('gives reader i scratch i mod n, locked only where two readers share it, from one counter', () => {
    const jobs = stageJobs([], [['a', 'b']], 3)
    expect(jobs.map((j) => [j.scratches, j.lock])).toEqual([
      [['a'], 1],
      [['b'], undefined],
      [['a'], 1],
    ])
    expect(new Set(jobs.map((j) => j.shared)).size).toBe(1)
    // the counter, two locks, one generation's count, the generations made
    expect(jobs[0].shared.byteLength).toBe(4 * 5)
    expect(jobs[0].done).toBe(3)
    // the scratch connections' page caches share 256 MB, 8 MB at least each
    expect(jobs[0].cacheKb).toBe(Math.round(-262144 / 3))
    expect(stageJobs([], [['a']], 64)[0].cacheKb).toBe(-8192)
    expect(stageJobs([], [['a']], 1).map((j) => j.lock)).toEqual([undefined])
  })

  it('reads several scratches in generations of consecutive files, each with scratches of its own', () => {
    expect(generationBounds(10, 4)).toEqual([0, 3, 5, 8, 10])
    expect(generationBounds(3, 4)).toEqual([0, 1, 2, 3])
    expect(generationBounds(7, 1)).toEqual([0, 7])
    // one scratch (copied whole): one generation; several: GENERATIONS, or the variable's
    expect(generationCount(1, {GWCTL_HISTORY_GENERATIONS: '3'})).toBe(1)
    expect(generationCount(4, {})).toBe(GENERATIONS)
    expect(generationCount(4, {GWCTL_HISTORY_GENERATIONS: '1'})).toBe(1)
    expect(generationCount(4, {GWCTL_HISTORY_GENERATIONS: '3'})).toBe(3)
    expect(generationCount(4, {GWCTL_HISTORY_GENERATIONS: '99'})).toBe(16)
    const jobs = stageJobs(
      [],
      [
        ['a', 'b'],
        ['c', 'd'],
      ],
      3,
      [0, 5, 9],
    )
    expect(jobs.map((j) => j.scratches)).toEqual([
      ['a', 'c'],
      ['b', 'd'],
      ['a', 'c'],
    ])
    expect(jobs[0].bounds).toEqual([0, 5, 9])
    expect(jobs[0].shared.byteLength).toBe(4 * 6)
  })
})
