/**
 * Issue 13: one set of rules, exits and messages across video, gamma, chat and the gateway.
 * Every test runs the real CLI against the simulator and checks what a user sees.
 */
import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import type {Simulator} from '../src/sim/server.js'
import {startSim} from '../src/sim/server.js'
import {json, runCli, spawnCli, tempHome} from './helpers/cli.js'

let sim: Simulator
let home: {home: string; cleanup: () => void}
let simClosed = false

beforeEach(async () => {
  sim = await startSim({timeScale: 100, taskSeconds: 600})
  simClosed = false
  home = tempHome()
})
afterEach(async () => {
  if (!simClosed) await sim.close()
  home.cleanup()
})

const env = (extra: Record<string, string> = {}): Record<string, string> => ({
  GWCTL_BASE_URL: sim.baseUrl,
  GWCTL_API_KEY: 'test-key',
  ...extra,
})
const run = (args: string[], extra: Record<string, string> = {}) =>
  runCli(args, {home: home.home, env: env(extra)})
const sent = (path: string) => sim.requests.filter((r) => r.path.includes(path))

describe('the same rules in video and gamma', () => {
  it('gamma refuses a frame that is not an http(s) URL, as video does (exit 2, nothing sent)', async () => {
    const gamma = await run([
      'gamma',
      'generate',
      '--text',
      'x',
      '--first-frame',
      'notaurl',
      '-r',
      '768P',
      '-d',
      '5',
    ])
    expect(gamma.exitCode).toBe(2)
    expect(gamma.stderr).toContain('(--first-frame) must be an http(s) URL; got "notaurl"')
    const video = await run([
      'video',
      'create',
      '-m',
      'BetaQ3-Pro-Start-End2Video',
      '--prompt',
      'x',
      '--first-frame',
      'notaurl',
      '--last-frame',
      'https://x/b.png',
      '-r',
      '720P',
    ])
    expect(video.exitCode).toBe(2)
    // one hint for both
    const hint = 'give a publicly reachable http:// or https:// URL'
    expect(gamma.stderr).toContain(hint)
    expect(video.stderr).toContain(hint)
    expect(sim.requests).toHaveLength(0)
  })

  it('gamma without -d says the flag is required, not "got undefined"', async () => {
    const r = await run(['gamma', 'generate', '--text', 'x', '-r', '768P', '--ratio', '16:9'])
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toContain('--duration (-d) is required')
    expect(r.stderr).not.toContain('undefined')
  })

  it('Ctrl-C during gamma generate --wait prints the `gamma poll ID` resume line (exit 130)', async () => {
    const child = spawnCli(
      ['gamma', 'generate', '--text', 'x', '-r', '768P', '-d', '5', '--ratio', '16:9', '--wait'],
      {home: home.home, env: env()},
    )
    while (!sent('/gamma/').some((r) => r.method === 'GET')) await new Promise((r) => setTimeout(r, 50))
    child.kill('SIGINT')
    const r = await child
    expect(r.exitCode).toBe(130)
    expect(String(r.stderr)).toMatch(/Resume with `gwctl gamma poll cgt-\S+`/)
  })

  it('--timeout 0 means "never" in video as in gamma (it is accepted and waits)', async () => {
    await sim.close()
    sim = await startSim({taskSeconds: 1})
    const r = await run([
      'video',
      'create',
      '-m',
      'Alpha2.6-T2V',
      '--prompt',
      'x',
      '--wait',
      '--interval',
      '1',
      '--timeout',
      '0',
      '--json',
    ])
    expect(r.exitCode).toBe(0)
    expect(json(r).status).toBe('completed')
  })

  it('a wait that breaks after the create names the task and the command that resumes it', async () => {
    const child = spawnCli(
      ['video', 'create', '-m', 'Alpha2.6-T2V', '--prompt', 'x', '--wait', '--interval', '1'],
      {home: home.home, env: env()},
    )
    while (!sent('/videos').some((r) => r.method === 'GET')) await new Promise((r) => setTimeout(r, 50))
    await sim.close()
    simClosed = true
    const r = await child
    expect(r.exitCode).toBe(5)
    const id = /task_\w+/.exec(String(r.stderr))?.[0]
    expect(id).toBeDefined()
    expect(String(r.stderr)).toContain(`while waiting for task ${id}`)
    expect(String(r.stderr)).toContain(`\`gwctl video poll ${id}\` resumes waiting`)
  })
})

describe('messages in the user words', () => {
  it('a rule names the flag and the allowed values, never a section of the spec', async () => {
    const r = await run(['chat', '-m', 'sim-pro', '--temperature', '3', 'hi'])
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toContain('--temperature from 0.0 to 2.0')
    expect(r.stderr).not.toMatch(/spec \d/)
  })

  it('schema errors read as sentences naming the field and an example, not JSON Schema', async () => {
    const r = await runCli(['providers', 'add', 'x', '--family', 'chat', '--base-url', 'htp://x y'], {
      home: home.home,
    })
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toContain(
      'provider field "baseUrl" (--base-url) must be an http(s) URL without spaces, query or fragment, e.g. https://api.openai.com/v1.',
    )
    expect(r.stderr).not.toMatch(/must match pattern|\^https/)
  })

  it('a 404 for an endpoint hints that the base URL should end in /api/v1', async () => {
    const r = await run(['video', 'create', '-m', 'Alpha2.6-T2V', '--prompt', 'x', '--json'], {
      GWCTL_BASE_URL: sim.origin,
    })
    expect(r.exitCode).toBe(7)
    expect(json(r).error.code).toBe('no_such_endpoint')
    expect(json(r).error.hint).toContain('should end in /api/v1')
    expect(json(r).error.hint).toContain(`${sim.origin}/api/v1`)
  })

  it('a 504 caused by the user own --timeout says so', async () => {
    const r = await run(['chat', '-m', 'sim-mini', '--only', 'delta-cheap', '--timeout', '1', 'x'])
    expect(r.exitCode).toBe(5)
    expect(r.stderr).toContain('Your --timeout 1')
    expect(r.stderr).not.toContain('failed on its side')
  })

  it('a 429 with Retry-After: 120 says to wait 120 s', async () => {
    sim.faults.add({status: 429, retryAfter: '120', path: '/chat/completions'})
    const r = await run(['chat', '-m', 'sim-pro', 'hi'])
    expect(r.exitCode).toBe(5)
    expect(r.stderr).toContain('wait 120 s')
  })

  it('--param with broken JSON is sent as a string, with a warning', async () => {
    const r = await run(['chat', '-m', 'sim-pro', '--param', 'n={bad', 'hi'])
    expect(r.exitCode).toBe(0)
    expect(r.stderr).toContain('warning: --param n: "{bad" looks like JSON but does not parse')
    const video = await run(['video', 'create', '-m', 'Alpha2.6-T2V', '--prompt', 'x', '--param', 'n=[1,'])
    expect(video.exitCode).toBe(0)
    expect(video.stderr).toContain('--param n: "[1," looks like JSON')
  })

  it('an API key of only whitespace is refused locally (exit 3, nothing sent)', async () => {
    const r = await run(['chat', '-m', 'sim-pro', 'hi', '--json'], {GWCTL_API_KEY: '   '})
    expect(r.exitCode).toBe(3)
    expect(json(r).error.message).toContain('GWCTL_API_KEY (setting "api-key") is only whitespace')
    const set = await runCli(['config', 'set', 'api-key', ' '], {home: home.home})
    expect(set.exitCode).toBe(2)
    expect(sim.requests).toHaveLength(0)
  })
})
