/**
 * The live dashboard on a real terminal (a pseudo-terminal driven by python3): `gwctl dashboard`
 * draws it from a running gateway (a fake one whose command line says
 * `gateway run`, named by the pid file), and q quits with exit 0.
 */
import type {ChildProcess} from 'node:child_process'
import {spawn, spawnSync} from 'node:child_process'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'

import {BIN, ROOT, cliEnv, freePort, tempHome} from './helpers/cli.js'

const hasPython = spawnSync('python3', ['--version']).status === 0
const cleanups: Array<() => void> = []
afterEach(() => {
  for (const c of cleanups.splice(0)) c()
})

const FAKE = `
const port = Number(process.env.FAKE_PORT)
require('node:http').createServer((req, res) => {
  res.setHeader('content-type', 'application/json')
  if (req.url === '/health') return res.end('{"status":"ok"}')
  if (req.url === '/api/dashboard') return res.end(JSON.stringify({
    routes: [{policyId: 'default', family: 'messages', agents: 3, targets: [{provider: 'sim-messages', circuit: {state: 'half-open'}}]}],
    recent_requests: [], recent_usage: [],
    gateway: {pid: process.pid, port, uptime_s: 5, version: '9.9.9'},
  }))
  res.statusCode = 404; res.end('{}')
}).listen(port, '127.0.0.1', () => process.stdout.write('ready\\n'))
`

async function fakeDaemon(home: string): Promise<number> {
  const port = await freePort()
  const child: ChildProcess = spawn(process.execPath, ['-e', FAKE, 'gateway', 'run'], {
    env: {...process.env, FAKE_PORT: String(port)},
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  cleanups.push(() => child.kill('SIGKILL'))
  await new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()))
  writeFileSync(join(home, 'gateway.pid'), `${child.pid}\n${port}\n`)
  return port
}

function inTerminal(home: string, args: string[]): {exit: number; output: string} {
  const env = {...process.env, ...cliEnv(home)} as Record<string, string>
  for (const [k, v] of Object.entries(cliEnv(home))) if (v === undefined) delete env[k]
  const r = spawnSync(
    'python3',
    [join(ROOT, 'test/helpers/run-in-pty.py'), 'q or Ctrl-C quits', 'q', 'node', BIN, ...args],
    {
      env,
      encoding: 'utf8',
      timeout: 40_000,
    },
  )
  const result = JSON.parse(r.stdout) as {exit: number; output: string}
  // eslint-disable-next-line no-control-regex
  return {...result, output: result.output.replace(/\x1b\[[0-9;?]*[a-zA-Z]/g, '')}
}

describe.skipIf(!hasPython)('live dashboard on a terminal', () => {
  it('gwctl dashboard draws routes with breaker state; q quits with exit 0, ending with a newline', async () => {
    const t = tempHome()
    cleanups.push(t.cleanup)
    const port = await fakeDaemon(t.home)
    const r = inTerminal(t.home, ['dashboard'])
    expect(r.exit).toBe(0)
    expect(r.output).toContain(`gateway running on 127.0.0.1:${port}`)
    expect(r.output).toMatch(/default\/messages\s+3 agents\s+sim-messages \[half-open\]/)
    // the screen is left clean: the shell's prompt starts on a line of its own
    expect(r.output).toContain('q or Ctrl-C quits\r\n')
    expect(r.output.endsWith('\n')).toBe(true)
  })
})
