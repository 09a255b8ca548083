import {afterEach, describe, expect, it} from 'vitest'

import {freePort} from '../../test/helpers/cli.js'
import type {Simulator} from './server.js'
import {startSim} from './server.js'

const PATH = '/api/v1/multimodal/gamma/videos'

describe('gamma simulator module', () => {
  let sim: Simulator | undefined
  afterEach(async () => sim?.close())

  async function call(method: string, path: string, body?: unknown, key = 'sk-x') {
    const res = await fetch(sim!.origin + path, {
      method,
      headers: {...(key ? {authorization: `Bearer ${key}`} : {}), 'content-type': 'application/json'},
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    return {status: res.status, header: res.headers.get('platform-id'), body: (await res.json()) as any}
  }

  it('answers framework errors (auth, unknown route) in the envelope with a Platform-Id header', async () => {
    sim = await startSim({port: await freePort(), taskSeconds: 1000})
    for (const r of [
      await call('GET', `${PATH}/query/video_generation/x`, undefined, ''),
      await call('GET', `${PATH}/nothing`),
    ]) {
      expect(r.body).toMatchObject({
        type: 'error',
        error: {type: expect.any(String), http_code: String(r.status)},
      })
      expect(r.body.error.message).toMatch(/\(\d+\)$/)
      expect(r.header).toBe(r.body.platform_id)
    }
  })

  it('refuses a missing or empty text item with a parameter error', async () => {
    sim = await startSim({port: await freePort(), taskSeconds: 1000})
    const r = await call('POST', `${PATH}/video_generation`, {
      model: 'Gamma-H3',
      content: [{type: 'text', text: ''}],
      resolution: '768P',
      duration: 5,
      ratio: '1:1',
    })
    expect(r.status).toBe(400)
    expect(r.body.error).toMatchObject({type: 'bad_request_error', http_code: '400'})
    expect(r.body.error.message).toMatch(/text item \(1001\)$/)
  })

  it('takes task ids comma-separated or repeated, and checks the page size', async () => {
    sim = await startSim({port: await freePort(), taskSeconds: 1000})
    const ids: string[] = []
    for (let i = 0; i < 3; i++) {
      const r = await call('POST', `${PATH}/h3_context_ir`, {
        model: 'Gamma-H3',
        content: [{type: 'text', text: `t${i}`}],
        duration: 5,
      })
      ids.push(r.body.task_id)
    }
    const list = `${PATH}/query/video_generation`
    const a = await call('GET', `${list}?filter.task_ids=${ids[0]},${ids[2]}`)
    const b = await call(
      'GET',
      `${list}?filter.task_ids=${ids[0]}&filter.task_ids=${ids[2]}&filter.task_ids=${ids[0]}`,
    )
    expect(a.body.items.map((t: any) => t.id)).toEqual([ids[2], ids[0]])
    expect(b.body.items.map((t: any) => t.id)).toEqual([ids[2], ids[0]])
    expect(b.body.total).toBe(2)
    expect((await call('GET', `${list}?page_size=101`)).status).toBe(400)
    const page = await call('GET', `${list}?page_size=2&page_num=2`)
    expect(page.body).toMatchObject({total: 3, items: [{id: ids[0], modality: 'text', status: 'queued'}]})
    expect((await call('GET', `${list}?filter.task_type=video`)).body).toMatchObject({items: [], total: 0})
  })
})
