import {afterEach, describe, expect, it} from 'vitest'

import type {Simulator} from '../src/sim/server.js'
import {startSim} from '../src/sim/server.js'
import {json, runCli, spawnCli, tempHome} from './helpers/cli.js'

const IMG = 'https://img.example/a.png'
const IMG2 = 'https://img.example/b.png'

describe('gwctl video exit codes', () => {
  let sim: Simulator | undefined
  let cleanup: () => void = () => {}
  afterEach(async () => {
    await sim?.close()
    sim = undefined
    cleanup()
  })

  async function setup(apiKey?: string) {
    sim = await startSim({taskSeconds: 1, apiKey})
    const t = tempHome()
    cleanup = t.cleanup
    return {
      sim,
      run: (args: string[], env: Record<string, string | undefined> = {}) =>
        runCli(['video', ...args], {
          home: t.home,
          env: {GWCTL_BASE_URL: sim!.baseUrl, GWCTL_API_KEY: 'sim-key', ...env},
        }),
    }
  }

  it('2: a request that breaks a rule is refused, naming the rule, and nothing is sent', async () => {
    const {run, sim} = await setup()
    const r = await run(['create', '--model', 'BetaQ2-Text2Video', '--prompt', 'x', '--duration', '12'])
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toContain('duration 12 is out of range for BetaQ2-Text2Video: 1-10 s')
    expect(r.stderr).toContain('--duration 5')
    const j = await run([
      'create',
      '--model',
      'BetaQ3-Pro-Start-End2Video',
      '--prompt',
      'x',
      '--first-frame',
      IMG,
      '--last-frame',
      IMG2,
      '--json',
    ])
    expect(j.exitCode).toBe(2)
    expect(json(j).error).toMatchObject({
      code: 'missing_field',
      message: expect.stringContaining('needs resolution'),
    })
    expect(sim.requests).toHaveLength(0)
  })

  it('3: no API key, with a hint to set one', async () => {
    const {run, sim} = await setup()
    const r = await run(['create', '--model', 'Alpha2.6-T2V', '--prompt', 'x'], {GWCTL_API_KEY: undefined})
    expect(r.exitCode).toBe(3)
    expect(r.stderr).toContain('gwctl config set api-key')
    expect(sim.requests).toHaveLength(0)
  })

  it('4: a refused key, never echoed', async () => {
    const {run} = await setup('sk-the-right-key-123')
    const r = await run(['get', 'task_x', '--json'], {GWCTL_API_KEY: 'sk-wrong-key-456789'})
    expect(r.exitCode).toBe(4)
    expect(json(r).error.code).toBe('unauthorized')
    expect(r.stdout + r.stderr).not.toContain('sk-wrong-key-456789')
  })

  it('7: an id past 24 h answers UNKNOWN; the hint explains that ids live 24 h', async () => {
    const {run, sim} = await setup()
    const created = json(await run(['create', '--model', 'Alpha2.6-T2V', '--prompt', 'x', '--json']))
    sim.clock.advance(24 * 3600 + 1)
    const r = await run(['get', created.id])
    expect(r.exitCode).toBe(7)
    expect(r.stderr).toContain('status UNKNOWN')
    expect(r.stderr).toContain('24 hours')
    const j = json(await run(['poll', created.id, '--json']))
    expect(j.error).toMatchObject({code: 'task_expired', id: created.id})
    const list = json(await run(['list', '--json']))
    expect(list.tasks[0].status).toBe('UNKNOWN')
  })

  it('8: a failed task exits 8 with the error text (create --wait, poll and get)', async () => {
    const {run} = await setup()
    const r = await run([
      'create',
      '--model',
      'Alpha2.6-T2V',
      '--prompt',
      'x',
      '--param',
      'sim_outcome="failed"',
      '--wait',
      '--interval',
      '1',
    ])
    expect(r.exitCode).toBe(8)
    expect(r.stderr).toMatch(/Error: Task task_\w+ failed: simulated failure/)
    const id = /Task (task_\w+)/.exec(r.stderr)![1]
    const polled = await run(['poll', id, '--json'])
    expect(polled.exitCode).toBe(8)
    expect(json(polled).error).toMatchObject({code: 'task_failed', id, status: 'failed'})
    const got = await run(['get', id])
    expect(got.exitCode).toBe(8)
    expect(got.stdout).toMatch(/^error: +simulated failure/m)
  })

  it('5: --timeout stops waiting and says how to resume', async () => {
    sim = await startSim({taskSeconds: 600})
    const t = tempHome()
    cleanup = t.cleanup
    const env = {GWCTL_BASE_URL: sim.baseUrl, GWCTL_API_KEY: 'k'}
    const created = json(
      await runCli(['video', 'create', '--model', 'Alpha2.6-T2V', '--prompt', 'x', '--json'], {
        home: t.home,
        env,
      }),
    )
    const r = await runCli(['video', 'poll', created.id, '--interval', '1', '--timeout', '1'], {
      home: t.home,
      env,
    })
    expect(r.exitCode).toBe(5)
    expect(r.stderr).toContain(`gwctl video poll ${created.id}`)
  })

  it('7: an id the platform never issued', async () => {
    const {run} = await setup()
    const r = await run(['get', 'task_nope', '--json'])
    expect(r.exitCode).toBe(7)
    expect(json(r).error).toMatchObject({
      code: 'task_not_found',
      hint: expect.stringContaining('gwctl video list'),
    })
  })

  it('130: Ctrl-C stops waiting and names the command that resumes', async () => {
    sim = await startSim({taskSeconds: 600})
    const t = tempHome()
    cleanup = t.cleanup
    const env = {GWCTL_BASE_URL: sim.baseUrl, GWCTL_API_KEY: 'k'}
    const created = json(
      await runCli(['video', 'create', '--model', 'Alpha2.6-T2V', '--prompt', 'x', '--json'], {
        home: t.home,
        env,
      }),
    )
    const child = spawnCli(['video', 'poll', created.id, '--interval', '30'], {home: t.home, env})
    // Interrupt once the command is inside its wait loop (it has queried the task).
    while (!sim.requests.some((r) => r.method === 'GET')) await new Promise((r) => setTimeout(r, 50))
    child.kill('SIGINT')
    const r = await child
    expect(r.exitCode).toBe(130)
    expect(String(r.stderr)).toContain(`gwctl video poll ${created.id}`)
  })
})
