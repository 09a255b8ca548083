import {spawnSync} from 'node:child_process'
import {existsSync, readFileSync, readdirSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {setTimeout as sleep} from 'node:timers/promises'
import {afterEach, describe, expect, it} from 'vitest'

import type {Simulator} from '../src/sim/server.js'
import {startSim} from '../src/sim/server.js'
import {execa} from 'execa'

import {BIN, ROOT, cliEnv, runCli, spawnCli, tempHome} from './helpers/cli.js'

const SAMPLE_BYTES = readFileSync(join(__dirname, '..', 'assets', 'sim', 'sample.mp4')).length

function alpha(i: number, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    id: `clip-${i}`,
    model: 'Alpha2.6-T2V',
    prompt: `a fox, take ${i}`,
    seconds: 3,
    ...extra,
  })
}

/** The batch journal's events (one batch per test home). */
function journal(home: string): Array<Record<string, any>> {
  const dir = join(home, 'video-batches')
  if (!existsSync(dir)) return []
  return readdirSync(dir).flatMap((f) =>
    readFileSync(join(dir, f), 'utf8')
      .split('\n')
      .filter((l) => l.trim())
      .flatMap((l) => {
        try {
          return [JSON.parse(l)]
        } catch {
          return []
        }
      }),
  )
}

describe('gwctl video batch (end to end against the simulator)', () => {
  let sim: Simulator | undefined
  let cleanup: () => void = () => {}
  afterEach(async () => {
    await sim?.close()
    sim = undefined
    cleanup()
  })

  async function setup(options: {taskSeconds?: number; faults?: string[]} = {}) {
    sim = await startSim({taskSeconds: options.taskSeconds ?? 1, faults: options.faults})
    const t = tempHome()
    cleanup = t.cleanup
    const env = {GWCTL_BASE_URL: sim.baseUrl, GWCTL_API_KEY: 'sim-key', GWCTL_VIDEO_INTERVAL: '1'}
    const manifest = (name: string, lines: string[]) => {
      const path = join(t.home, name)
      writeFileSync(path, lines.join('\n') + '\n')
      return path
    }
    const run = (args: string[], input?: string) =>
      runCli(['video', 'batch', ...args], {home: t.home, env, input, timeoutMs: 120_000})
    const spawn = (args: string[]) => spawnCli(['video', 'batch', ...args], {home: t.home, env})
    const posts = () => sim!.requests.filter((r) => r.method === 'POST' && r.path === '/api/v1/videos')
    return {home: t.home, manifest, run, spawn, posts}
  }

  it('refuses a manifest with one bad line before sending anything (exit 2, line and rule named)', async () => {
    const {manifest, run, posts, home} = await setup()
    const file = manifest('m.jsonl', [alpha(1), alpha(2, {seconds: -4}), alpha(3), 'not json'])
    const r = await run([file])
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toContain('2 invalid lines; nothing was sent')
    expect(r.stderr).toMatch(/line 2: .*seconds.*\[invalid_seconds\]/)
    expect(r.stderr).toMatch(/line 4: not JSON.*\[bad_json\]/)
    expect(posts()).toHaveLength(0)
    expect(journal(home)).toHaveLength(0)

    // --skip-invalid runs the valid lines only
    const skipped = await run([file, '--skip-invalid', '--no-download', '--json'])
    expect(skipped.exitCode).toBe(0)
    expect(posts()).toHaveLength(2)
    const lines = skipped.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    expect(lines.at(-1)).toMatchObject({total: 2, completed: 2, failed: 0, skipped_invalid: 2, submitted: 2})
    expect(
      lines
        .slice(0, -1)
        .map((l) => l.id)
        .sort(),
    ).toEqual(['clip-1', 'clip-3'])
  })

  it('reads CSV from stdin and refuses an output that exists unless --force', async () => {
    const {run, posts, home} = await setup()
    const csv = 'id,model,prompt,seconds,size\ncat,Alpha2.6-T2V,"a cat, sleeping",3,1280x720\n'
    const out = join(home, 'out')
    const first = await run(['-', '--output-dir', out], csv)
    expect(first.exitCode).toBe(0)
    expect(readFileSync(join(out, 'cat.mp4')).length).toBe(SAMPLE_BYTES)
    expect(posts()).toHaveLength(1)
    expect(posts()[0].body).toMatchObject({prompt: 'a cat, sleeping', size: '1280*720'})

    // the same manifest again: already done, nothing sent, file kept
    const again = await run(['-', '--output-dir', out], csv)
    expect(again.exitCode).toBe(0)
    expect(again.stdout).toContain('done earlier')
    expect(posts()).toHaveLength(1)

    // another manifest writing to the same file: refused before sending
    const other = 'id,model,prompt,seconds\ncat,Alpha2.6-T2V,a tiger,3\n'
    const refused = await run(['-', '--output-dir', out], other)
    expect(refused.exitCode).toBe(2)
    expect(refused.stderr).toMatch(/line 2: .*cat\.mp4 exists.*\[file_exists\]/)
    expect(posts()).toHaveLength(1)
    const forced = await run(['-', '--output-dir', out, '--force'], other)
    expect(forced.exitCode).toBe(0)
    expect(posts()).toHaveLength(2)
  })

  it('runs 50 tasks with --concurrency 8: every video downloaded, never more than 8 in flight', async () => {
    const {manifest, run, posts, home} = await setup({taskSeconds: 1})
    const file = manifest(
      'fifty.jsonl',
      Array.from({length: 50}, (_, i) => alpha(i + 1)),
    )
    const out = join(home, 'out')
    const r = await run([file, '--concurrency', '8', '--output-dir', out, '--json'])
    expect(r.stderr).toBe('')
    expect(r.exitCode).toBe(0)
    expect(posts()).toHaveLength(50)
    expect(readdirSync(out).sort()).toEqual(Array.from({length: 50}, (_, i) => `clip-${i + 1}.mp4`).sort())
    const summary = JSON.parse(r.stdout.trim().split('\n').at(-1)!)
    expect(summary).toMatchObject({total: 50, completed: 50, failed: 0, submitted: 50})
    // in flight: from the line's `sending` to its `ended` in the journal
    const events = journal(home)
    const spans = new Map<number, [number, number]>()
    for (const e of events) {
      if (e.type === 'sending') spans.set(e.line, [Date.parse(e.at), Infinity])
      if (e.type === 'ended') spans.get(e.line)![1] = Date.parse(e.at)
    }
    let most = 0
    for (const [start] of spans.values()) {
      most = Math.max(most, [...spans.values()].filter(([s, end]) => s <= start && end > start).length)
    }
    expect(most).toBeLessThanOrEqual(8)
    expect(most).toBeGreaterThanOrEqual(4)
  }, 120_000)

  it('backs off on 429 with Retry-After and creates each task once', async () => {
    const {manifest, run, posts, home} = await setup({
      faults: ['status=429,retry-after=1,times=6,path=/videos,method=POST'],
    })
    const file = manifest('m.jsonl', [alpha(1), alpha(2), alpha(3)])
    const r = await run([file, '--concurrency', '3', '--no-download'])
    expect(r.exitCode).toBe(0)
    // six creates were answered 429 (not acted on) and sent again; three tasks exist
    expect(posts()).toHaveLength(9)
    const polled = new Set(sim!.requests.filter((q) => q.method === 'GET').map((q) => q.path))
    expect(polled.size).toBe(3)
    expect(journal(home).filter((e) => e.type === 'submitted')).toHaveLength(3)
  }, 60_000)

  it('exits 8 naming the failed task when one fails', async () => {
    const {manifest, run} = await setup()
    const file = manifest('m.jsonl', [alpha(1), alpha(2, {prompt: 'breaks [fail]'})])
    const r = await run([file, '--no-download', '--json'])
    expect(r.exitCode).toBe(8)
    const summary = JSON.parse(r.stdout.trim().split('\n').at(-1)!)
    expect(summary).toMatchObject({
      completed: 1,
      failed: 1,
      failures: [{line: 2, id: 'clip-2', status: 'failed'}],
    })
  })

  it('resumes after kill -9 without creating any task twice', async () => {
    const {manifest, run, spawn, posts, home} = await setup({taskSeconds: 4})
    const file = manifest(
      'm.jsonl',
      Array.from({length: 6}, (_, i) => alpha(i + 1)),
    )
    const out = join(home, 'out')
    const child = spawn([file, '--concurrency', '2', '--output-dir', out])
    // wait until two creates are answered and journaled, none on the wire
    for (let i = 0; i < 200; i++) {
      const events = journal(home)
      const sent = events.filter((e) => e.type === 'sending').length
      const done = events.filter((e) => e.type === 'submitted').length
      if (done >= 2 && done === sent) break
      await sleep(25)
    }
    child.kill('SIGKILL')
    await child
    const before = posts().length
    expect(before).toBeGreaterThanOrEqual(2)
    expect(journal(home).filter((e) => e.type === 'submitted')).toHaveLength(before)

    const r = await run([file, '--concurrency', '2', '--output-dir', out])
    expect(r.exitCode).toBe(0)
    expect(posts()).toHaveLength(6)
    expect(new Set(posts().map((p) => (p.body as {prompt: string}).prompt)).size).toBe(6)
    expect(readdirSync(out)).toHaveLength(6)
  }, 60_000)

  it('Ctrl-C stops creating, prints the resume command and exits 130; the rerun finishes', async () => {
    const {manifest, run, spawn, posts, home} = await setup({taskSeconds: 4})
    const file = manifest(
      'm.jsonl',
      Array.from({length: 5}, (_, i) => alpha(i + 1)),
    )
    const child = spawn([file, '--concurrency', '1', '--no-download'])
    for (let i = 0; i < 200 && !journal(home).some((e) => e.type === 'submitted'); i++) await sleep(25)
    child.kill('SIGINT')
    const result = await child
    expect(result.exitCode).toBe(130)
    expect(String(result.stderr)).toContain(`Resume with \`gwctl video batch ${file} --no-download\``)
    expect(posts()).toHaveLength(1)

    const r = await run(['--resume', file, '--concurrency', '5', '--no-download'])
    expect(r.exitCode).toBe(0)
    expect(posts()).toHaveLength(5)
  }, 60_000)
})

describe.skipIf(spawnSync('python3', ['--version']).status !== 0)('gwctl video batch on a terminal', () => {
  it('draws the live view on stderr, then the per-task lines and the totals', async () => {
    const sim = await startSim({taskSeconds: 2})
    const t = tempHome()
    try {
      const file = join(t.home, 'm.jsonl')
      writeFileSync(file, [alpha(1), alpha(2), alpha(3)].join('\n') + '\n')
      const env = {...process.env, ...cliEnv(t.home, {GWCTL_BASE_URL: sim.baseUrl, GWCTL_API_KEY: 'k'})}
      for (const [k, v] of Object.entries(env)) if (v === undefined) delete env[k]
      const r = await execa(
        'python3',
        [
          join(ROOT, 'test/helpers/run-in-pty.py'),
          'running',
          '',
          'node',
          BIN,
          'video',
          'batch',
          file,
          '--concurrency',
          '2',
          '--interval',
          '1',
          '--no-download',
        ],
        {env: env as Record<string, string>, extendEnv: false, timeout: 40_000},
      )
      const result = JSON.parse(String(r.stdout)) as {exit: number; output: string}
      // eslint-disable-next-line no-control-regex
      const output = result.output.replace(/\x1b\[[0-9;?]*[a-zA-Z]/g, '')
      expect(result.exit).toBe(0)
      expect(output).toMatch(/\d\/3 done {2}\d running/)
      expect(output).toMatch(/line \d +clip-\d +(queued|in_progress|sending)/)
      for (const i of [1, 2, 3]) expect(output).toMatch(new RegExp(`line ${i}  clip-${i}  completed  task_`))
      expect(output).toContain('3 of 3 completed, 0 failed')
    } finally {
      await sim.close()
      t.cleanup()
    }
  }, 60_000)
})
