/**
 * The detached daemon starts without V8's optimizing compiler and gets it back with its first
 * model request (src/daemon/quiet-start.ts): TurboFan run once costs an idle daemon about 4 MB of
 * resident memory (bench/README.md, "rss60"). Seen in the daemon's own log with `--trace-opt`
 * (V8 prints a line for each function it compiles with TurboFan).
 */
import {spawn} from 'node:child_process'
import {closeSync, openSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, expect, it} from 'vitest'

import {ROOT, cliEnv, freePort, tempHome} from './helpers/cli.js'
import {issueKeyOverApi} from './helpers/gateway.js'

const cleanups: Array<() => void | Promise<void>> = []
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c()
})

const TURBOFAN = /^\[compiling method .*\(target TURBOFAN\)/m

it(
  'no TurboFan compile from the start to the first model request; TurboFan again after it',
  {timeout: 90_000},
  async () => {
    const t = tempHome()
    cleanups.push(t.cleanup)
    const port = await freePort()
    const logPath = join(t.home, 'daemon.log')
    const out = openSync(logPath, 'a')
    const child = spawn(
      process.execPath,
      ['--trace-opt', join(ROOT, 'dist', 'daemon', 'main.js'), '--port', String(port), '--sim'],
      {
        env: {...process.env, ...cliEnv(t.home)} as NodeJS.ProcessEnv,
        stdio: ['ignore', out, 'inherit'],
      },
    )
    closeSync(out)
    const exited = new Promise((resolve) => child.on('exit', resolve))
    cleanups.push(async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      await exited
    })
    const base = `http://127.0.0.1:${port}`
    await expect
      .poll(
        () =>
          fetch(`${base}/health`).then(
            (r) => r.ok,
            () => false,
          ),
        {timeout: 30_000, interval: 100},
      )
      .toBe(true)
    // started, one key issued, idle a second (the bench's idle RSS is read then)
    const key = await issueKeyOverApi(base, 'quiet')
    await new Promise((r) => setTimeout(r, 1000))
    const log = () => readFileSync(logPath, 'utf8')
    expect(log()).toContain('listening on')
    expect(log()).not.toMatch(TURBOFAN)

    const ask = async () => {
      const res = await fetch(`${base}/v1/chat/completions`, {
        method: 'POST',
        headers: {'content-type': 'application/json', authorization: `Bearer ${key}`},
        body: JSON.stringify({model: 'sim-mini', messages: [{role: 'user', content: 'Say hello.'}]}),
      })
      expect(res.status).toBe(200)
      await res.arrayBuffer()
    }
    // the request path gets hot: TurboFan compiles its functions again (within a few hundred)
    for (let i = 0; i < 3000 && !TURBOFAN.test(log()); i++) await ask()
    expect(log()).toMatch(TURBOFAN)
  },
)
