import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import type {Simulator} from './server.js'
import {startSim} from './server.js'

const ISO_MICRO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/

describe('simulator /api/v1/videos', () => {
  let sim: Simulator
  beforeEach(async () => {
    sim = await startSim({taskSeconds: 10})
  })
  afterEach(async () => {
    await sim.close()
  })

  async function call(method: string, path: string, body?: unknown, key = 'sim-key') {
    const res = await fetch(sim.baseUrl + path, {
      method,
      headers: {authorization: `Bearer ${key}`, 'content-type': 'application/json'},
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    return {status: res.status, body: (await res.json()) as any}
  }

  it('walks queued -> in_progress -> completed with exactly the fields of spec 2.6 (Alpha)', async () => {
    const created = await call('POST', '/videos', {
      model: 'Alpha2.6-T2V',
      prompt: 'fox',
      size: '1920*1080',
      seconds: 8,
    })
    expect(created.status).toBe(200)
    expect(created.body).toEqual({
      id: expect.stringMatching(/^task_/),
      status: 'queued',
      model: 'Alpha2.6-T2V',
      seconds: 8,
      size: '1920*1080',
      provider: 'sim-alpha-cloud',
    })
    const id = created.body.id
    const queued = await call('GET', `/videos/${id}`)
    expect(Object.keys(queued.body).sort()).toEqual(['created_at', 'id', 'status'])
    expect(queued.body.status).toBe('queued')
    expect(queued.body.created_at).toMatch(ISO_MICRO)
    sim.clock.advance(5)
    expect((await call('GET', `/videos/${id}`)).body).toEqual({
      id,
      status: 'in_progress',
      created_at: queued.body.created_at,
    })
    sim.clock.advance(5)
    const done = (await call('GET', `/videos/${id}`)).body
    expect(Object.keys(done).sort()).toEqual(
      [
        'completed_at',
        'created_at',
        'id',
        'raw_response',
        'seconds',
        'size',
        'status',
        'updated_at',
        'usage',
        'video_url',
      ].sort(),
    )
    expect(done).toMatchObject({
      status: 'completed',
      seconds: 8,
      size: '1920*1080',
      usage: {seconds: 8, video_count: 1, size: '1920*1080'},
    })
    expect(done.completed_at).toMatch(ISO_MICRO)
    const video = await fetch(done.video_url)
    expect(video.headers.get('content-type')).toBe('video/mp4')
    const bytes = Buffer.from(await video.arrayBuffer())
    expect(bytes.subarray(4, 8).toString('latin1')).toBe('ftyp')
  })

  it('omits the Alpha-only fields on completed Beta tasks and derives size from resolution', async () => {
    const {body} = await call('POST', '/videos', {
      model: 'BetaQ3-Pro-Text2Video',
      prompt: 'w',
      resolution: '1080P',
      duration: 3,
    })
    expect(body).toMatchObject({size: '1920*1080', seconds: 3, provider: 'sim-beta-studio'})
    sim.clock.advance(10)
    const done = (await call('GET', `/videos/${body.id}`)).body
    expect(Object.keys(done).sort()).toEqual([
      'completed_at',
      'created_at',
      'id',
      'raw_response',
      'status',
      'usage',
      'video_url',
    ])
    expect(done.usage).toEqual({seconds: 3, video_count: 1, size: '1920*1080'})
  })

  it.each([
    [{prompt: 'fox [fail] please'}, 'Alpha2.6-T2V'],
    [{prompt: 'fox', sim_outcome: 'failed'}, 'Alpha2.6-T2V'],
  ])('fails on request (%j)', async (extra, model) => {
    const {body} = await call('POST', '/videos', {model, ...extra})
    sim.clock.advance(10)
    const failed = (await call('GET', `/videos/${body.id}`)).body
    expect(Object.keys(failed).sort()).toEqual(['created_at', 'error', 'id', 'status'])
    expect(failed.status).toBe('failed')
    expect(failed.error).toContain('simulated failure')
  })

  it('answers UNKNOWN for ids older than 24 h and 404 for ids never issued', async () => {
    const {body} = await call('POST', '/videos', {model: 'Alpha2.6-T2V', prompt: 'fox'})
    sim.clock.advance(24 * 3600)
    expect(await call('GET', `/videos/${body.id}`)).toEqual({
      status: 200,
      body: {id: body.id, status: 'UNKNOWN'},
    })
    expect((await call('GET', '/videos/task_nope')).status).toBe(404)
  })

  it('accepts the native format (model in lower case) and sim_outcome in parameters', async () => {
    const {status, body} = await call('POST', '/videos', {
      model: 'betaq3-turbo-text2video',
      input: {prompt: 'cat'},
      parameters: {resolution: '540P', duration: 4, sim_outcome: 'failed'},
    })
    expect(status).toBe(200)
    expect(body).toMatchObject({model: 'betaq3-turbo-text2video', seconds: 4, size: '960*528'})
    sim.clock.advance(10)
    expect((await call('GET', `/videos/${body.id}`)).body.status).toBe('failed')
  })

  it.each([
    [{prompt: 'x'}, 'model is required'],
    [{model: 'Nope', prompt: 'x'}, 'unknown model: Nope'],
    [{model: 'alpha2.6-t2v', prompt: 'x'}, 'case-sensitive'],
    [{model: 'Alpha2.6-T2V'}, 'prompt is required'],
    [{model: 'Alpha2.6-I2V', prompt: 'x'}, 'img_url is required'],
    [{model: 'Alpha2.6-R2V', prompt: 'x'}, 'reference_video_urls is required'],
    [
      {model: 'BetaQ3-Pro-Start-End2Video', prompt: 'x', resolution: '720P'},
      'first_frame_url and last_frame_url',
    ],
    [{model: 'BetaQ2-Pro-Reference2Video', prompt: 'x'}, 'reference_images is required'],
    [{model: 'BetaQ2-Text2Video', prompt: 'x', duration: 12}, 'duration out of range'],
    [{model: 'betaq3-turbo-text2video', input: 'cat'}, 'input must be an object'],
  ])('refuses %j with 400 "%s"', async (body, message) => {
    const res = await call('POST', '/videos', body)
    expect(res.status).toBe(400)
    expect(res.body.error.message).toContain(message)
  })

  it('requires a Bearer key', async () => {
    const res = await fetch(sim.baseUrl + '/videos/x')
    expect(res.status).toBe(401)
  })
})
