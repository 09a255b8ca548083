import {mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {PlatformClient} from '../api/http.js'
import {UsageError} from '../core/errors.js'
import type {Simulator} from '../sim/server.js'
import {startSim} from '../sim/server.js'
import {setSetting} from '../store/settings.js'
import {listVideoTasks} from '../store/video-journal.js'
import {checkOutputPath, createVideoTask, resolveInterval, waitForVideoTask} from './video-tasks.js'

describe('video task services', () => {
  let home: string
  const saved = process.env.GWCTL_HOME
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), 'gwctl-tasks-'))
    process.env.GWCTL_HOME = home
  })
  afterEach(() => {
    process.env.GWCTL_HOME = saved
    rmSync(home, {recursive: true, force: true})
  })

  it('polls every 15 s by default, or the video.interval setting, or the option', () => {
    expect(resolveInterval()).toBe(15)
    setSetting('video.interval', '7')
    expect(resolveInterval()).toBe(7)
    expect(resolveInterval(2)).toBe(2)
  })

  it.each<[string, (dir: string) => string, boolean, string | undefined]>([
    ['a new file', (d) => join(d, 'new.mp4'), false, undefined],
    ['an existing file', (d) => join(d, 'old.mp4'), false, 'file_exists'],
    ['an existing file with force', (d) => join(d, 'old.mp4'), true, undefined],
    ['a folder', (d) => join(d, 'sub'), true, 'output_is_folder'],
    ['a missing folder', (d) => join(d, 'nope', 'x.mp4'), false, 'output_folder_missing'],
  ])('output path: %s', (_name, path, force, code) => {
    writeFileSync(join(home, 'old.mp4'), 'x')
    mkdirSync(join(home, 'sub'))
    const target = path(home)
    if (code === undefined) {
      expect(checkOutputPath(target, force)).toBe(target)
    } else {
      const error = (() => {
        try {
          checkOutputPath(target, force)
        } catch (e) {
          return e as UsageError
        }
        throw new Error('expected an error')
      })()
      expect(error).toBeInstanceOf(UsageError)
      expect(error.code).toBe(code)
    }
  })

  describe('against the simulator', () => {
    let sim: Simulator
    let client: PlatformClient
    beforeEach(async () => {
      sim = await startSim({taskSeconds: 600})
      client = new PlatformClient({baseUrl: sim.baseUrl, apiKey: 'k', backoffMs: 1})
    })
    afterEach(async () => {
      await sim.close()
    })

    it('journals the created task and each new status seen while waiting', async () => {
      const warnings: string[][] = []
      const {submission} = await createVideoTask(
        {model: 'BetaQ3-Pro-Text2Video', prompt: 'lake', size: '1280x720'},
        {client, onWarnings: (w) => warnings.push(w)},
      )
      expect(warnings[0][0]).toContain('without resolution is ignored')
      expect(listVideoTasks()[0]).toMatchObject({
        id: submission.id,
        status: 'queued',
        provider: 'sim-beta-studio',
        prompt: 'lake',
      })
      sim.clock.advance(600)
      const seen: string[] = []
      const task = await waitForVideoTask(submission.id, {
        client,
        intervalSeconds: 1,
        onProgress: (t) => seen.push(t.status),
      })
      expect(task.status).toBe('completed')
      expect(seen).toEqual(['completed'])
      expect(listVideoTasks()[0]).toMatchObject({status: 'completed', video_url: task.video_url})
      expect(sim.requests.filter((r) => r.method === 'GET').at(-1)?.query).toEqual({
        provider: 'sim-beta-studio',
      })
    })

    it('refuses a bad request before any client call', async () => {
      await expect(createVideoTask({model: 'Alpha2.6-T2V'}, {client})).rejects.toMatchObject({
        code: 'missing_field',
      })
      expect(sim.requests).toHaveLength(0)
      expect(listVideoTasks()).toEqual([])
    })
  })
})
