import {existsSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'

import {json} from './helpers/cli.js'
import type {GammaEnv} from './helpers/gamma.js'
import {GAMMA, gammaEnv, textToVideo} from './helpers/gamma.js'

const FAST = ['--interval', '0.1', '--timeout', '30']

describe('gwctl gamma generate / analyze / regenerate', {timeout: 120_000}, () => {
  let env: GammaEnv | undefined
  afterEach(async () => {
    await env?.close()
    env = undefined
  })

  it('generates, waits and downloads the video; refuses to overwrite without --force', async () => {
    env = await gammaEnv(1)
    const out = join(env.home, 'fox.mp4')
    const r = await env.run([
      'generate',
      '--text',
      'a red fox in snow',
      '--first-frame',
      'https://example.com/fox.png',
      '--resolution',
      '768P',
      '--duration',
      '6',
      '--watermark',
      '--output',
      out,
      ...FAST,
    ])
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toMatch(/status:\s+succeeded/)
    expect(r.stdout).toMatch(/usage:\s+6 s billed \(input 0 s, output 6 s\), 1 image\(s\)/)
    expect(r.stdout).toContain(`Saved ${out}`)
    const [create] = env.gammaRequests('POST')
    expect(create.path).toBe(`${GAMMA}/video_generation`)
    expect(create.body).toEqual({
      model: 'Gamma-H3',
      content: [
        {type: 'text', text: 'a red fox in snow'},
        {type: 'image_url', image_url: {url: 'https://example.com/fox.png'}, role: 'first_frame'},
      ],
      resolution: '768P',
      duration: 6,
      aigc_watermark: true,
    })
    const url = /url:\s+(\S+)/.exec(r.stdout)![1]
    const served = Buffer.from(await (await fetch(url)).arrayBuffer())
    expect(readFileSync(out).equals(served)).toBe(true)
    expect(served.length).toBeGreaterThan(0)

    const posts = env.gammaRequests('POST').length
    const again = await env.run([
      'generate',
      '--text',
      'x',
      '--ratio',
      '1:1',
      '--resolution',
      '768P',
      '--duration',
      '5',
      '-o',
      out,
    ])
    expect(again.exitCode).toBe(2)
    expect(again.stderr).toContain('already exists')
    expect(env.gammaRequests('POST')).toHaveLength(posts)

    const forced = await env.run([
      'generate',
      '--text',
      'x',
      '--ratio',
      '1:1',
      '--resolution',
      '2K',
      '--duration',
      '5',
      '-o',
      out,
      '--force',
      '--json',
      ...FAST,
    ])
    expect(forced.exitCode).toBe(0)
    const doc = json(forced)
    expect(doc.task.status).toBe('succeeded')
    expect(doc.task.resolution).toBe('2K')
    expect(doc.file).toEqual({path: out, bytes: served.length})
    expect(doc.platform_id).toMatch(/^pid-/)
    expect(existsSync(`${out}.part`)).toBe(false)
  })

  it('prints only the task id without --wait, and the platform_id of answers with --verbose', async () => {
    env = await gammaEnv(1)
    const r = await env.run([
      'generate',
      '--text',
      'a fox',
      '--ratio',
      '9:16',
      '--resolution',
      '768P',
      '--duration',
      '4',
      '--json',
    ])
    expect(r.exitCode).toBe(0)
    const created = json(r)
    expect(Object.keys(created).sort()).toEqual(['platform_id', 'task_id'])
    const get = await env.run(['get', created.task_id, '--verbose'])
    expect(get.exitCode).toBe(0)
    expect(get.stdout).toMatch(/platform_id:\s+pid-[0-9a-f]{16}/)
    const plain = await env.run(['get', created.task_id])
    expect(plain.stdout).not.toContain('platform_id')
  })

  it('exits 8 when the task fails', async () => {
    env = await gammaEnv(1)
    const r = await env.run([
      'generate',
      '--text',
      'sim-fail please',
      '--ratio',
      '1:1',
      '--resolution',
      '768P',
      '--duration',
      '5',
      '--wait',
      ...FAST,
    ])
    expect(r.exitCode).toBe(8)
    expect(r.stderr).toMatch(/Task cgt-\S+ failed: the platform gave no reason\./)
    expect(r.stderr).not.toContain('--verbose')
    expect(r.stderr).toMatch(/platform_id: pid-/)
  })

  it('pipes the enhanced prompt of analyze --wait into generate --text -', async () => {
    env = await gammaEnv(1)
    const analyze = await env.run([
      'analyze',
      '--text',
      'a fox',
      '--ref-image',
      'https://example.com/fox.png',
      '--duration',
      '5',
      '--wait',
      ...FAST,
    ])
    expect(analyze.exitCode).toBe(0)
    const prompt = analyze.stdout.trim()
    expect(prompt.split('\n')).toHaveLength(1)
    expect(prompt).toMatch(/^a fox\. .+reference/)
    expect(analyze.stderr).toMatch(/usage: \d+ tokens \(prompt \d+, completion \d+\)/)
    expect(env.gammaRequests('POST')[0].path).toBe(`${GAMMA}/h3_context_ir`)
    expect(env.gammaRequests('POST')[0].body).not.toHaveProperty('resolution')

    const generate = await env.run(
      ['generate', '--text', '-', '--resolution', '768P', '--duration', '5', '--ratio', '16:9', '--json'],
      analyze.stdout,
    )
    expect(generate.exitCode).toBe(0)
    const post = env.gammaRequests('POST')[1]
    expect(post.path).toBe(`${GAMMA}/video_generation`)
    expect((post.body as any).content).toEqual([{type: 'text', text: prompt}])

    const asJson = json(
      await env.run(['analyze', '--text', 'a fox', '--duration', '5', '--wait', '--json', ...FAST]),
    )
    expect(asJson.task.task_type).toBe('h3_context_ir')
    expect(asJson.task.content.prompt).toMatch(/^a fox\./)
    expect(asJson.task.usage.total_tokens).toBe(
      asJson.task.usage.prompt_tokens + asJson.task.usage.completion_tokens,
    )
  })

  it('takes a raw content array from --content FILE', async () => {
    env = await gammaEnv(1)
    const file = join(env.home, 'content.json')
    const content = [
      {type: 'text', text: 'dance'},
      {type: 'video_url', video_url: {url: 'https://example.com/d.mp4'}, role: 'reference_video'},
      {type: 'audio_url', audio_url: {url: 'https://example.com/m.mp3'}, role: 'reference_audio'},
    ]
    writeFileSync(file, JSON.stringify(content))
    const r = await env.run([
      'generate',
      '--content',
      file,
      '--resolution',
      '768P',
      '--duration',
      '10',
      '--json',
    ])
    expect(r.exitCode).toBe(0)
    expect((env.gammaRequests('POST')[0].body as any).content).toEqual(content)
  })

  it('regenerates by task id and by original video, and refuses a source that is not succeeded', async () => {
    env = await gammaEnv(1000)
    const source = await env.create('video_generation', textToVideo())

    const early = await env.run(['regenerate', '--from', source])
    expect(early.exitCode).toBe(2)
    expect(early.stderr).toContain(`Source task ${source} is queued; regeneration needs a succeeded source`)
    expect(env.gammaRequests('POST').filter((r) => r.path.endsWith('video_regeneration'))).toHaveLength(0)

    env.sim.clock.advance(1000)
    const byId = await env.run(['regenerate', '--from', source, '--json'])
    expect(byId.exitCode).toBe(0)
    const regenPosts = () =>
      env!.gammaRequests('POST').filter((r) => r.path === `${GAMMA}/video_regeneration`)
    expect(regenPosts()[0].body).toEqual({model: 'Gamma-H3', resolution: '2K', source_task_id: source})
    env.sim.clock.advance(1000)
    const task = json(await env.run(['get', json(byId).task_id, '--json'])).task
    expect(task).toMatchObject({task_type: 'regeneration', status: 'succeeded', resolution: '2K'})
    expect(task.content.url).toMatch(/\.mp4\?expires=/)

    const byVideo = await env.run([
      'regenerate',
      '--base-video',
      'https://example.com/fox-768p.mp4',
      '--text',
      'a red fox in snow',
      '--ref-image',
      'https://example.com/fox.png',
      '--json',
    ])
    expect(byVideo.exitCode).toBe(0)
    expect(regenPosts()[1].body).toEqual({
      model: 'Gamma-H3',
      resolution: '2K',
      content: [
        {type: 'text', text: 'a red fox in snow'},
        {type: 'image_url', image_url: {url: 'https://example.com/fox.png'}, role: 'reference_image'},
        {type: 'video_url', video_url: {url: 'https://example.com/fox-768p.mp4'}, role: 'base_video'},
      ],
    })

    const analysis = await env.create('h3_context_ir', {content: [{type: 'text', text: 'x'}], duration: 5})
    env.sim.clock.advance(1000)
    const wrongType = await env.run(['regenerate', '--from', analysis])
    expect(wrongType.exitCode).toBe(2)
    expect(wrongType.stderr).toContain('needs a generation task')

    env.sim.clock.advance(8 * 24 * 3600)
    const gone = await env.run(['regenerate', '--from', source])
    expect(gone.exitCode).toBe(7)
    expect(gone.stderr).toContain('no longer visible')
    expect(regenPosts()).toHaveLength(2)
  })

  it('shows the error envelope with its numeric code and platform_id', async () => {
    env = await gammaEnv(1)
    env.sim.faults.add({status: 400, message: 'content must contain a text item', path: '/video_generation'})
    const r = await env.run([
      'generate',
      '--text',
      'a fox',
      '--ratio',
      '1:1',
      '--resolution',
      '768P',
      '--duration',
      '5',
    ])
    expect(r.exitCode).toBe(5)
    expect(r.stderr).toContain('The platform answered 400: content must contain a text item (1001)')
    expect(r.stderr).toMatch(/platform_id: pid-[0-9a-f]{16}/)

    env.sim.faults.add({status: 400, message: 'content must contain a text item', path: '/video_generation'})
    const verbose = await env.run([
      'generate',
      '--text',
      'a fox',
      '--ratio',
      '1:1',
      '--resolution',
      '768P',
      '--duration',
      '5',
      '--verbose',
    ])
    expect(verbose.stderr).toMatch(/numeric_code: 1001/)
    expect(verbose.stderr).toMatch(/type: bad_request_error/)
    expect(verbose.stderr).toMatch(/upstream_code: 400/)

    const missing = await env.run(['get', 'cgt-nope', '--json'])
    expect(missing.exitCode).toBe(7)
    expect(json(missing).error).toMatchObject({
      code: 'task_not_visible',
      numeric_code: '1004',
      type: 'not_found_error',
      platform_id: expect.stringMatching(/^pid-/),
    })
  })

  it('rejects input that breaks a rule with exit 2, naming the rule, and sends nothing', async () => {
    env = await gammaEnv(1)
    const base = ['--resolution', '768P', '--duration', '5']
    const cases: Array<[string[], string]> = [
      [['generate', ...base, '--ratio', '1:1'], 'one-text'],
      [['generate', '--text', ' ', ...base, '--ratio', '1:1'], 'one-text'],
      [['generate', '--text', 'a fox', ...base], 'text-to-video-ratio'],
      [['generate', '--text', 'a fox', ...base, '--ratio', 'adaptive'], 'text-to-video-ratio'],
      [
        [
          'generate',
          '--text',
          'a fox',
          '--image',
          'https://x/a.png',
          '--ref-audio',
          'https://x/a.mp3',
          ...base,
        ],
        'frames-xor-references',
      ],
      [
        ['generate', '--text', 'a fox', '--image', 'https://x/a.png', '--image', 'https://x/b.png', ...base],
        'allowed-combination',
      ],
      [
        ['generate', '--text', 'a fox', '--ratio', '1:1', '--resolution', '1080P', '--duration', '5'],
        'resolution',
      ],
      [
        ['generate', '--text', 'a fox', '--ratio', '1:1', '--resolution', '768P', '--duration', '16'],
        'duration',
      ],
      [['generate', '--text', 'a fox', '--ratio', '1:1', '--resolution', '768P'], 'duration'],
      [['analyze', '--text', 'a fox', '--duration', '3'], 'duration'],
      [['regenerate', '--from', 'cgt-1', '--resolution', '768P'], 'resolution'],
      [['regenerate', '--text', 'a fox'], 'regeneration-form'],
      [['regenerate', '--from', 'cgt-1', '--text', 'a fox'], 'regeneration-form'],
    ]
    for (const [args, rule] of cases) {
      const r = await env.run(args)
      expect(r.exitCode, args.join(' ')).toBe(2)
      expect(r.stderr, args.join(' ')).toContain(`Rule "${rule}"`)
    }
    const file = join(env.home, 'two-bases.json')
    writeFileSync(
      file,
      JSON.stringify([
        {type: 'text', text: 'a fox'},
        {type: 'video_url', video_url: {url: 'https://x/v.mp4'}, role: 'base_video'},
      ]),
    )
    const twoBases = await env.run([
      'regenerate',
      '--content',
      file,
      '--base-video',
      'https://x/w.mp4',
      '--json',
    ])
    expect(twoBases.exitCode).toBe(2)
    expect(json(twoBases).error).toMatchObject({code: 'content_rule', rule: 'one-base-video'})
    expect(env.gammaRequests()).toHaveLength(0)
  })
})
