import {MockAgent} from 'undici'
import {afterEach, describe, expect, it} from 'vitest'

import {NotFoundError} from '../core/errors.js'
import {cancelGammaTask, listGammaTasks} from '../services/gamma-tasks.js'
import {GammaApi} from './gamma.js'
import {PlatformClient} from './http.js'

const BASE = 'http://platform.test/api/v1'
const PATH = '/api/v1/multimodal/gamma/videos'

function setup(): {agent: MockAgent; api: GammaApi} {
  const agent = new MockAgent()
  agent.disableNetConnect()
  const api = new GammaApi(
    new PlatformClient({baseUrl: BASE, apiKey: 'sk-unit', dispatcher: agent, backoffMs: 1}),
  )
  return {agent, api}
}

describe('GammaApi', () => {
  let agent: MockAgent | undefined
  afterEach(async () => agent?.close())

  it('keeps the Platform-Id header when the body has no platform_id', async () => {
    const s = setup()
    agent = s.agent
    s.agent
      .get('http://platform.test')
      .intercept({path: `${PATH}/video_generation`, method: 'POST'})
      .reply(200, {task_id: 't1'}, {headers: {'platform-id': 'pid-header'}})
    s.agent
      .get('http://platform.test')
      .intercept({path: `${PATH}/query/video_generation/t1`, method: 'GET'})
      .reply(
        200,
        {task: {id: 't1', status: 'queued'}, platform_id: 'pid-body'},
        {headers: {'platform-id': 'pid-other'}},
      )
    const created = await s.api.create('video_generation', {
      model: 'Gamma-H3',
      content: [],
      resolution: '2K',
      duration: 5,
    })
    expect(created).toEqual({task_id: 't1', platform_id: 'pid-header'})
    expect((await s.api.get('t1')).platform_id).toBe('pid-body')
  })

  it('parses the envelope of an error: numeric code, type and platform_id', async () => {
    const s = setup()
    agent = s.agent
    s.agent
      .get('http://platform.test')
      .intercept({path: `${PATH}/query/video_generation/nope`, method: 'GET'})
      .reply(404, {
        type: 'error',
        error: {type: 'not_found_error', message: 'task not found (40401)', http_code: '404'},
        platform_id: 'pid-err',
      })
    const error = await s.api.get('nope').catch((e: unknown) => e)
    expect(error).toBeInstanceOf(NotFoundError)
    expect((error as NotFoundError).details).toMatchObject({
      numeric_code: '40401',
      type: 'not_found_error',
      upstream_code: '404',
      platform_id: 'pid-err',
    })
  })

  it('infers the action of a cancel from its status when the body has no action', async () => {
    const s = setup()
    agent = s.agent
    s.agent
      .get('http://platform.test')
      .intercept({path: `${PATH}/video_generation/t2`, method: 'DELETE'})
      .reply(200, {status: 'cancelled'}, {headers: {'platform-id': 'pid-c'}})
    expect(await cancelGammaTask(s.api, 't2')).toEqual({
      task_id: 't2',
      status: 'cancelled',
      action: 'cancelled',
      platform_id: 'pid-c',
    })
  })

  it('walks pages for --all and keeps one copy of a task that moved between pages', async () => {
    const s = setup()
    agent = s.agent
    const task = (id: string, created: number) => ({id, created_at: created, status: 'succeeded'})
    const pool = s.agent.get('http://platform.test')
    pool
      .intercept({path: `${PATH}/query/video_generation?page_num=1&page_size=2`, method: 'GET'})
      .reply(200, {items: [task('c', 3), task('b', 2)], total: 3})
    pool
      .intercept({path: `${PATH}/query/video_generation?page_num=2&page_size=2`, method: 'GET'})
      .reply(200, {items: [task('b', 2), task('a', 1)], total: 4})
    const result = await listGammaTasks(s.api, {all: true, pageSize: 2})
    expect(result.items.map((t) => t.id)).toEqual(['c', 'b', 'a'])
    expect(result.pages_read).toBe(2)
    expect(result.total).toBe(4)
    s.agent.assertNoPendingInterceptors()
  })
})
