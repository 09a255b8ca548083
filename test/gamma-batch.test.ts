import {readFileSync, readdirSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'

import type {GammaEnv} from './helpers/gamma.js'
import {GAMMA, gammaEnv} from './helpers/gamma.js'

describe('gwctl gamma batch (end to end against the simulator)', () => {
  let env: GammaEnv | undefined
  afterEach(async () => {
    await env?.close()
    env = undefined
  })

  it('refuses a bad line before sending, runs the manifest with downloads, fails with exit 8, resumes without a second create', async () => {
    env = await gammaEnv(1)
    const manifest = join(env.home, 'scenes.jsonl')
    const lines = [
      JSON.stringify({id: 'fox', text: 'a fox jumps', resolution: '768P', ratio: '16:9', duration: 5}),
      JSON.stringify({
        id: 'owl',
        text: 'an owl',
        'first-frame': 'https://img.example/owl.png',
        resolution: '2K',
        duration: 4,
      }),
      JSON.stringify({id: 'bad', text: 'x', resolution: '4K', ratio: '1:1', duration: 4}),
    ]
    writeFileSync(manifest, lines.join('\n') + '\n')
    const refused = await env.run(['batch', manifest])
    expect(refused.exitCode).toBe(2)
    expect(refused.stderr).toMatch(/line 3: .*resolution/i)
    expect(env.gammaRequests('POST')).toHaveLength(0)

    lines[2] = JSON.stringify({
      id: 'boom',
      text: 'this one sim-fail',
      resolution: '768P',
      ratio: '1:1',
      duration: 4,
    })
    writeFileSync(manifest, lines.join('\n') + '\n')
    const out = join(env.home, 'out')
    const r = await env.run(['batch', manifest, '--output-dir', out, '--interval', '1', '--json'])
    expect(r.exitCode).toBe(8)
    const summary = JSON.parse(r.stdout.trim().split('\n').at(-1)!)
    expect(summary).toMatchObject({
      total: 3,
      completed: 2,
      failed: 1,
      failures: [{id: 'boom', status: 'failed'}],
    })
    expect(readdirSync(out).sort()).toEqual(['fox.mp4', 'owl.mp4'])
    expect(readFileSync(join(out, 'fox.mp4')).length).toBeGreaterThan(0)
    const posts = env.gammaRequests('POST')
    expect(posts).toHaveLength(3)
    expect(posts[0].path).toBe(GAMMA + '/video_generation')

    const again = await env.run(['batch', manifest, '--output-dir', out, '--interval', '1'])
    expect(again.exitCode).toBe(8)
    expect(env.gammaRequests('POST')).toHaveLength(3)
  }, 60_000)
})
