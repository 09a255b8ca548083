import {existsSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'

import type {Simulator} from '../src/sim/server.js'
import {startSim} from '../src/sim/server.js'
import {ROOT, json, runCli, tempHome} from './helpers/cli.js'

const SAMPLE = readFileSync(join(ROOT, 'assets', 'sim', 'sample.mp4'))
const IMG = 'https://img.example/a.png'
const IMG2 = 'https://img.example/b.png'
const VID = 'https://vid.example/v.mp4'

describe('gwctl video (end to end against the simulator)', () => {
  let sim: Simulator | undefined
  let cleanup: () => void = () => {}
  afterEach(async () => {
    await sim?.close()
    sim = undefined
    cleanup()
  })

  async function setup(options: {taskSeconds?: number; apiKey?: string} = {}) {
    sim = await startSim({taskSeconds: options.taskSeconds ?? 1, apiKey: options.apiKey})
    const t = tempHome()
    cleanup = t.cleanup
    const env = {GWCTL_BASE_URL: sim.baseUrl, GWCTL_API_KEY: options.apiKey ?? 'sim-key'}
    const run = (args: string[], extra: Record<string, string | undefined> = {}) =>
      runCli(['video', ...args], {home: t.home, env: {...env, ...extra}})
    const posts = () => sim!.requests.filter((r) => r.method === 'POST' && r.path === '/api/v1/videos')
    return {sim, home: t.home, run, posts}
  }

  it.each<[string, string[], Record<string, unknown>]>([
    [
      'Alpha text to video',
      ['--model', 'Alpha2.6-T2V', '--prompt', 'a fox', '--seconds', '3', '--size', '1280x720'],
      {size: '1280*720', seconds: 3},
    ],
    [
      'Alpha image to video',
      ['--model', 'Alpha2.6-I2V', '--prompt', 'a fox', '--img-url', IMG, '--size', '720P'],
      {img_url: IMG, size: '720P'},
    ],
    [
      'Alpha reference video to video',
      [
        '--model',
        'Alpha2.6-R2V',
        '--prompt',
        'a fox',
        '--ref-video',
        VID,
        '--no-prompt-extend',
        '--shot-type',
        'single',
      ],
      {reference_video_urls: [VID], prompt_extend: false, shot_type: 'single'},
    ],
    [
      'Beta text to video',
      [
        '--model',
        'BetaQ3-Turbo-Text2Video',
        '--prompt',
        'waves',
        '--resolution',
        '540p',
        '--size',
        '960x528',
        '--audio',
        '--seed',
        '7',
      ],
      {resolution: '540P', size: '960*528', audio: true, seed: 7},
    ],
    [
      'Beta image to video',
      [
        '--model',
        'BetaQ2-Pro-Img2Video',
        '--img-url',
        IMG,
        '--resolution',
        '1080P',
        '--duration',
        '10',
        '--watermark',
      ],
      {img_url: IMG, resolution: '1080P', duration: 10, watermark: true},
    ],
    [
      'Beta first and last frame',
      [
        '--model',
        'BetaQ3-Pro-Start-End2Video',
        '--prompt',
        'opens',
        '--first-frame',
        IMG,
        '--last-frame',
        IMG2,
        '--resolution',
        '720P',
      ],
      {first_frame_url: IMG, last_frame_url: IMG2, resolution: '720P', duration: 5},
    ],
    [
      'Beta reference to video',
      [
        '--model',
        'BetaQ2-Pro-Reference2Video',
        '--prompt',
        'dance',
        '--ref-image',
        IMG,
        '--ref-image',
        IMG2,
        '--ref-video',
        VID,
        '--duration',
        '0',
      ],
      {reference_images: [IMG, IMG2], reference_video_urls: [VID], duration: 0},
    ],
  ])('%s: create --output waits, downloads the MP4 and journals it', async (_name, args, wire) => {
    const {run, posts, home} = await setup()
    const out = join(home, 'clip.mp4')
    const r = await run(['create', ...args, '--interval', '1', '--output', out, '--json'])
    expect(r.stderr).not.toContain('Error')
    expect(r.exitCode).toBe(0)
    const task = json(r)
    expect(task).toMatchObject({
      status: 'completed',
      video_url: expect.stringContaining('/sim-storage/videos/'),
    })
    expect(task.download).toMatchObject({path: out, bytes: SAMPLE.length})
    expect(readFileSync(out).equals(SAMPLE)).toBe(true)
    expect(existsSync(out + '.part')).toBe(false)
    expect(posts()).toHaveLength(1)
    expect(posts()[0].body).toMatchObject(wire)
    const list = json(await run(['list', '--json']))
    expect(list.tasks).toEqual([expect.objectContaining({id: task.id, status: 'completed', model: args[1]})])
  })

  it('prints concise human output and a journal table', async () => {
    const {run, sim} = await setup({taskSeconds: 600})
    const created = await run(['create', '--model', 'BetaQ3-Pro-Text2Video', '--prompt', 'a quiet lake'])
    expect(created.exitCode).toBe(0)
    expect(created.stdout).toMatch(/^id: +task_\w+$/m)
    expect(created.stdout).toMatch(/^status: +queued$/m)
    expect(created.stdout).toMatch(/^provider: +sim-beta-studio$/m)
    expect(created.stderr).toContain('gwctl video poll task_')
    // a Beta task's answer has no model or provider: get shows them from the journal (issue 25)
    const id = /^id: +(task_\w+)$/m.exec(created.stdout)![1]
    const got = await run(['get', id])
    expect(got.exitCode).toBe(0)
    expect(got.stdout).toMatch(/^model: +BetaQ3-Pro-Text2Video$/m)
    expect(got.stdout).toMatch(/^provider: +sim-beta-studio$/m)
    const list = await run(['list'])
    expect(list.stdout).toMatch(/^ID +LAST SEEN +MODEL +PROVIDER +CREATED +PROMPT$/m)
    expect(list.stdout).toMatch(
      /task_\w+ +queued at \d{4}-\d\d-\d\dT\S+Z +BetaQ3-Pro-Text2Video +sim-beta-studio .* a quiet lake$/m,
    )
    expect(list.stderr).toContain('gwctl video list --refresh')
    // --refresh asks the platform about the tasks not finished when last seen
    sim.clock.advance(3600)
    const before = sim.requests.length
    const refreshed = await run(['list', '--refresh'])
    expect(refreshed.exitCode).toBe(0)
    expect(refreshed.stdout).toMatch(/task_\w+ +completed at \S+ +BetaQ3-Pro-Text2Video/m)
    expect(sim.requests.length - before).toBe(1)
    // a finished task is not asked again
    await run(['list', '--refresh'])
    expect(sim.requests.length - before).toBe(1)
  })

  it('--json shapes of create, get, poll, list and models', async () => {
    const {run, sim} = await setup({taskSeconds: 600})
    const created = json(await run(['create', '--model', 'Alpha2.6-T2V', '--prompt', 'fox', '--json']))
    expect(Object.keys(created).sort()).toEqual(['id', 'model', 'provider', 'seconds', 'size', 'status'])
    const got = json(await run(['get', created.id, '--json']))
    expect(got).toEqual({
      id: created.id,
      status: expect.stringMatching(/^(queued|in_progress)$/),
      created_at: expect.any(String),
    })
    sim.clock.advance(600)
    const polled = json(await run(['poll', created.id, '--interval', '1', '--json']))
    expect(polled).toMatchObject({id: created.id, status: 'completed', usage: {video_count: 1}})
    const list = json(await run(['list', '--json']))
    expect(list.tasks[0]).toMatchObject({
      id: created.id,
      model: 'Alpha2.6-T2V',
      provider: 'sim-alpha-cloud',
      prompt: 'fox',
      status: 'completed',
    })
    const models = json(await run(['models', '--json']))
    expect(models.models).toHaveLength(14)
    expect(models.beta_sizes['1080P']['4:3']).toBe('1674*1238')
  })

  it('get and poll send the journal provider hint; --provider overrides it', async () => {
    const {run, sim} = await setup()
    const created = json(await run(['create', '--model', 'BetaQ3-Pro-Text2Video', '--prompt', 'x', '--json']))
    await run(['get', created.id])
    const gets = () => sim.requests.filter((r) => r.method === 'GET')
    expect(gets().at(-1)?.query).toEqual({provider: 'sim-beta-studio'})
    await run(['get', created.id, '--provider', 'other'])
    expect(gets().at(-1)?.query).toEqual({provider: 'other'})
    await run(['poll', created.id, '--interval', '1'])
    expect(gets().at(-1)?.query).toEqual({provider: 'sim-beta-studio'})
  })

  it('--param values and native bodies arrive on the wire unchanged', async () => {
    const {run, posts} = await setup()
    const p = await run([
      'create',
      '--model',
      'Alpha2.6-T2V',
      '--prompt',
      'fox',
      '--param',
      'n=2',
      '--param',
      'style={"look":"film","grain":[1,2]}',
      '--param',
      'label=plain text',
      '--param',
      'flag=false',
    ])
    expect(p.exitCode).toBe(0)
    expect(posts()[0].body).toEqual({
      model: 'Alpha2.6-T2V',
      prompt: 'fox',
      n: 2,
      style: {look: 'film', grain: [1, 2]},
      label: 'plain text',
      flag: false,
    })
    const input = '{"prompt":"cat","img_url":"https://i/x.png","custom":{"deep":[1]}}'
    const parameters = '{"size":"1280*720","resolution":"720P","duration":99,"watermark":true}'
    const n = await run([
      'create',
      '--model',
      'BetaQ3-Turbo-Text2Video',
      '--native-input',
      input,
      '--native-parameters',
      parameters,
      '--json',
    ])
    expect(n.exitCode).toBe(0)
    expect(posts()[1].body).toEqual({
      model: 'betaq3-turbo-text2video',
      input: JSON.parse(input),
      parameters: JSON.parse(parameters),
    })
    const raw = await run([
      'create',
      '--model',
      'Alpha2.6-T2V',
      '--prompt',
      'fox',
      '--seconds',
      '0',
      '--no-validate',
    ])
    expect(raw.exitCode).toBe(5)
    expect(posts()[2].body).toEqual({model: 'Alpha2.6-T2V', prompt: 'fox', seconds: 0})
  })

  it('warns on stderr for contradictory audio and size without resolution, and still sends', async () => {
    const {run, posts} = await setup()
    const r = await run([
      'create',
      '--model',
      'BetaQ2-Turbo-Img2Video',
      '--img-url',
      IMG,
      '--audio',
      '--size',
      '720x1280',
    ])
    expect(r.exitCode).toBe(0)
    expect(r.stderr).toContain('warning: --audio on BetaQ2-Turbo-Img2Video')
    expect(r.stderr).toContain('warning: size 720*1280 without resolution is ignored')
    expect(r.stdout).not.toContain('warning')
    expect(posts()[0].body).toMatchObject({audio: true, size: '720*1280'})
  })

  it('download refuses to overwrite without --force, then overwrites with it', async () => {
    const {run, home} = await setup()
    const created = json(
      await run([
        'create',
        '--model',
        'Alpha2.6-T2V',
        '--prompt',
        'fox',
        '--wait',
        '--interval',
        '1',
        '--json',
      ]),
    )
    const out = join(home, 'clip.mp4')
    writeFileSync(out, 'keep me')
    const refused = await run(['download', created.id, '--output', out])
    expect(refused.exitCode).toBe(2)
    expect(refused.stderr).toContain('exists')
    expect(refused.stderr).toContain('--force')
    expect(readFileSync(out, 'utf8')).toBe('keep me')
    const forced = await run(['download', created.id, '--output', out, '--force', '--json'])
    expect(forced.exitCode).toBe(0)
    expect(json(forced)).toMatchObject({id: created.id, path: out, bytes: SAMPLE.length})
    expect(readFileSync(out).equals(SAMPLE)).toBe(true)
    // one "saved" line for every download: download, create --output, poll --output (issue 25)
    const saved = (text: string) =>
      text.split('\n').find((l) => l.startsWith(`Saved ${out} (`) && /\(\d+(\.\d)? (B|KB|MB)\)\.$/.test(l))
    const again = await run(['download', created.id, '--output', out, '--force'])
    expect(saved(again.stdout)).toBeDefined()
    const polled = await run(['poll', created.id, '--output', out, '--force', '--interval', '1'])
    expect(polled.exitCode, polled.stderr).toBe(0)
    expect(saved(polled.stdout)).toBeDefined()
    expect(polled.stdout).not.toMatch(/^saved:/m)
  })

  it('create --output refuses an existing file before anything is sent', async () => {
    const {run, home, sim} = await setup()
    const out = join(home, 'clip.mp4')
    writeFileSync(out, 'keep me')
    const r = await run(['create', '--model', 'Alpha2.6-T2V', '--prompt', 'fox', '--output', out, '--json'])
    expect(r.exitCode).toBe(2)
    expect(json(r).error.code).toBe('file_exists')
    expect(sim.requests).toHaveLength(0)
  })
})
