import {afterEach, describe, expect, it} from 'vitest'

import type {CliResult} from './helpers/cli.js'
import {json} from './helpers/cli.js'
import type {GammaEnv} from './helpers/gamma.js'
import {GAMMA, gammaEnv, textToVideo} from './helpers/gamma.js'

const DAY = 24 * 3600

describe('gwctl gamma list / cancel / get', {timeout: 120_000}, () => {
  let env: GammaEnv | undefined
  afterEach(async () => {
    await env?.close()
    env = undefined
  })

  /** A (succeeded generation), B (failed generation), C (queued analysis), D (queued generation). */
  async function fourTasks(e: GammaEnv): Promise<Record<'A' | 'B' | 'C' | 'D', string>> {
    const A = await e.create('video_generation', textToVideo('a'))
    e.sim.clock.advance(2000)
    const B = await e.create('video_generation', textToVideo('sim-fail b'))
    e.sim.clock.advance(2000)
    const C = await e.create('h3_context_ir', {content: [{type: 'text', text: 'c'}], duration: 5})
    e.sim.clock.advance(1)
    const D = await e.create('video_generation', textToVideo('d'))
    return {A, B, C, D}
  }

  const ids = (r: CliResult) => json(r).items.map((t: {id: string}) => t.id)

  it('lists newest first with a total, and applies each filter (AND, counted in total)', async () => {
    env = await gammaEnv(1000)
    const {A, B, C, D} = await fourTasks(env)

    const all = await env.run(['list'])
    expect(all.exitCode).toBe(0)
    const rows = all.stdout.split('\n').filter((l) => l.startsWith('cgt-'))
    expect(rows.map((l) => l.split(/\s+/)[0])).toEqual([D, C, B, A])
    expect(rows[0]).toMatch(/generation\s+queued/)
    expect(rows[2]).toMatch(/generation\s+failed/)
    expect(all.stdout).toMatch(/^Total: 4$/m)

    const cases: Array<[string[], string[]]> = [
      [['--status', 'succeeded'], [A]],
      [['--status', 'failed'], [B]],
      [
        ['--status', 'queued'],
        [D, C],
      ],
      [['--type', 'h3_context_ir'], [C]],
      [
        ['--type', 'generation'],
        [D, B, A],
      ],
      [['--status', 'queued', '--type', 'generation'], [D]],
      [
        ['--task-id', A, '--task-id', C, '--task-id', A],
        [C, A],
      ],
      [['--task-id', A, '--status', 'failed'], []],
      [
        ['--model', 'Gamma-H3'],
        [D, C, B, A],
      ],
      [['--model', 'Other-1'], []],
    ]
    for (const [flags, expected] of cases) {
      const r = await env.run(['list', ...flags, '--json'])
      expect(r.exitCode, flags.join(' ')).toBe(0)
      expect(ids(r), flags.join(' ')).toEqual(expected)
      expect(json(r).total, flags.join(' ')).toBe(expected.length)
    }
    const sent = env.gammaRequests('GET').at(-4)!
    expect(sent.query).toMatchObject({'filter.task_ids': [A, C, A]})

    const empty = await env.run(['list', '--model', 'Other-1'])
    expect(empty.stdout).toContain('No tasks.')
    expect(empty.stdout).toMatch(/^Total: 0$/m)
  })

  it('pages with --page/--page-size and walks every page with --all', async () => {
    env = await gammaEnv(1000)
    const {A, B, C, D} = await fourTasks(env)
    const first = await env.run(['list', '--page-size', '3'])
    expect(first.stdout).toContain('Total: 4 (page 1 of 2; --page N or --all for more)')
    const second = await env.run(['list', '--page-size', '3', '--page', '2', '--json'])
    expect(ids(second)).toEqual([A])
    expect(json(second).total).toBe(4)

    env.sim.requests.length = 0
    const all = await env.run(['list', '--all', '--page-size', '3', '--json'])
    expect(ids(all)).toEqual([D, C, B, A])
    expect(json(all).total).toBe(4)
    expect(env.gammaRequests('GET').map((r) => r.query.page_num)).toEqual(['1', '2'])

    const human = await env.run(['list', '--all', '--page-size', '1'])
    expect(human.stdout.split('\n').filter((l) => l.startsWith('cgt-'))).toHaveLength(4)
    expect(human.stdout).toMatch(/^Total: 4$/m)
  })

  it('gives an empty result for an invalid filter value, which the CLI refuses before sending', async () => {
    env = await gammaEnv(1000)
    await fourTasks(env)
    const res = await fetch(`${env.sim.origin}${GAMMA}/query/video_generation?filter.status=bogus`, {
      headers: {authorization: 'Bearer sk-x'},
    })
    const body = (await res.json()) as {platform_id: string}
    expect(body).toMatchObject({items: [], total: 0})
    expect(res.headers.get('platform-id')).toBe(body.platform_id)
    env.sim.requests.length = 0
    const r = await env.run(['list', '--status', 'bogus'])
    expect(r.exitCode).toBe(2)
    expect(env.gammaRequests()).toHaveLength(0)
  })

  it('hides tasks after 7 days from get, list and cancel', async () => {
    env = await gammaEnv(1000)
    const old = await env.create('video_generation', textToVideo('old'))
    env.sim.clock.advance(6 * DAY)
    const recent = await env.create('video_generation', textToVideo('recent'))
    expect((await env.run(['get', old])).exitCode).toBe(0)
    env.sim.clock.advance(DAY + 60)
    const get = await env.run(['get', old])
    expect(get.exitCode).toBe(7)
    expect(get.stderr).toContain('visible for 7 days')
    expect(ids(await env.run(['list', '--json']))).toEqual([recent])
    expect(json(await env.run(['list', '--json'])).total).toBe(1)
    expect((await env.run(['cancel', old])).exitCode).toBe(7)
  })

  it('cancels and deletes by the state table of the spec', async () => {
    env = await gammaEnv(1000)
    // queued -> cancelled
    const q = await env.create('video_generation', textToVideo('q'))
    const cancelled = await env.run(['cancel', q])
    expect(cancelled.exitCode).toBe(0)
    expect(cancelled.stdout).toContain(`Cancelled task ${q} (it had not started; no charge).`)
    expect(json(await env.run(['get', q, '--json'])).task.status).toBe('cancelled')

    // cancelled -> refused, unchanged
    const again = await env.run(['cancel', q])
    expect(again.exitCode).toBe(5)
    expect(again.stderr).toMatch(/no further operation is allowed \(2002\)/)
    expect(again.stderr).toMatch(/platform_id: pid-[0-9a-f]{16}/)
    expect(again.stderr).toContain('a cancelled task allows no further operation')
    const againJson = json(await env.run(['cancel', q, '--json']))
    expect(againJson.error).toMatchObject({
      code: 'task_cancelled',
      numeric_code: '2002',
      task_status: 'cancelled',
    })
    expect(json(await env.run(['get', q, '--json'])).task.status).toBe('cancelled')

    // running -> refused, unchanged
    const running = await env.create('video_generation', textToVideo('r'))
    const failing = await env.create('video_generation', textToVideo('sim-fail f'))
    env.sim.clock.advance(300)
    const refused = await env.run(['cancel', running])
    expect(refused.exitCode).toBe(5)
    expect(refused.stderr).toMatch(/cannot be cancelled while processing \(2001\)/)
    expect(refused.stderr).toMatch(/platform_id: pid-/)
    expect(refused.stderr).toContain('a task can be cancelled only while queued')
    expect(json(await env.run(['get', running, '--json'])).task.status).toBe('running')

    // succeeded and failed -> deleted
    env.sim.clock.advance(1000)
    // a failed task exits 8 as in `video get`, with the reason
    const got = await env.run(['get', failing, '--json'])
    expect(got.exitCode).toBe(8)
    expect(json(got).error).toMatchObject({code: 'task_failed', task_id: failing, status: 'failed'})
    const human = await env.run(['get', failing])
    expect(human.exitCode).toBe(8)
    expect(human.stdout).toMatch(/^reason: +the platform gave no reason/m)
    const deleted = await env.run(['cancel', running, '--json'])
    expect(deleted.exitCode).toBe(0)
    expect(json(deleted)).toMatchObject({task_id: running, action: 'deleted', status: 'deleted'})
    expect(json(deleted).platform_id).toMatch(/^pid-/)
    const deletedFailed = await env.run(['cancel', failing])
    expect(deletedFailed.stdout).toContain(`Deleted task ${failing}.`)
    expect((await env.run(['get', running])).exitCode).toBe(7)
    expect((await env.run(['get', failing])).exitCode).toBe(7)
    expect(ids(await env.run(['list', '--json']))).toEqual([q])

    const deletes = env.gammaRequests('DELETE').map((r) => r.path.split('/').at(-1))
    expect(deletes).toEqual([q, q, q, running, running, failing])
  })

  it('polls a task until it finishes and reports usage', async () => {
    env = await gammaEnv(1)
    const id = await env.create('video_generation', {
      content: [
        {type: 'text', text: 'dance'},
        {type: 'video_url', video_url: {url: 'https://x/d.mp4'}, role: 'reference_video'},
      ],
      resolution: '768P',
      duration: 8,
    })
    const r = await env.run(['poll', id, '--interval', '0.1', '--json'])
    expect(r.exitCode).toBe(0)
    expect(json(r).task).toMatchObject({
      status: 'succeeded',
      ratio: 'adaptive',
      usage: {total_seconds: 13, input_seconds: 5, output_seconds: 8, input_image_count: 0},
    })
  })

  it('stops waiting at --timeout with exit 5 and leaves the task running', async () => {
    env = await gammaEnv(1000)
    const id = await env.create('video_generation', textToVideo('slow'))
    const r = await env.run(['poll', id, '--interval', '0.1', '--timeout', '0.3', '--json'])
    expect(r.exitCode).toBe(5)
    expect(json(r).error).toMatchObject({code: 'wait_timeout', task_id: id, status: 'queued'})
    expect(json(await env.run(['get', id, '--json'])).task.status).toBe('queued')
  })
})
