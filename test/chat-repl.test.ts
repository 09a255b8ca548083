import {execFileSync} from 'node:child_process'
import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {execa} from 'execa'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import type {Simulator} from '../src/sim/server.js'
import {startSim} from '../src/sim/server.js'
import {BIN, cliEnv, runCli, tempHome} from './helpers/cli.js'

let sim: Simulator
let home: {home: string; cleanup: () => void}

beforeEach(async () => {
  sim = await startSim({timeScale: 100})
  home = tempHome()
})
afterEach(async () => {
  await sim.close()
  home.cleanup()
})

const env = (): Record<string, string> => ({GWCTL_BASE_URL: sim.baseUrl, GWCTL_API_KEY: 'test-key'})
const chatRequests = (): any[] =>
  sim.requests.filter((r) => r.path === '/api/v1/chat/completions').map((r) => r.body)

describe('gwctl chat --interactive (piped input)', () => {
  it('keeps the history, runs the slash commands, saves JSON and sums usage at the end', async () => {
    const saved = join(home.home, 'conversation.json')
    const input = [
      'first question',
      '/model sim-pro',
      'second question',
      '/system Answer in French.',
      '/bogus',
      `/save ${saved}`,
      '/clear',
      'after clear',
      '/exit',
      'never sent',
      '',
    ].join('\n')
    const r = await runCli(['chat', '--interactive', '-m', 'sim-mini'], {home: home.home, env: env(), input})
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toBe(
      [
        'Hello from alpha-cloud! You said: "first question". This is a simulated reply of sim-mini.',
        'Hello from alpha-cloud! You said: "second question". This is a simulated reply of sim-pro.',
        'Hello from alpha-cloud! You said: "after clear". This is a simulated reply of sim-pro.',
        '',
      ].join('\n'),
    )
    const bodies = chatRequests()
    expect(bodies.map((b) => b.model)).toEqual(['sim-mini', 'sim-pro', 'sim-pro'])
    expect(bodies[1].messages.map((m: {role: string}) => m.role)).toEqual(['user', 'assistant', 'user'])
    expect(bodies[1].messages[1].content).toContain('You said: "first question"')
    expect(bodies[2].messages).toEqual([
      {role: 'system', content: 'Answer in French.'},
      {role: 'user', content: 'after clear'},
    ])
    expect(bodies.every((b) => b.stream === true && b.stream_options.include_usage === true)).toBe(true)
    expect(r.stderr).toContain('Unknown command /bogus')
    expect(r.stderr).toMatch(/cached\) \+/)

    const conversation = JSON.parse(readFileSync(saved, 'utf8'))
    expect(conversation.model).toBe('sim-pro')
    expect(conversation.messages.map((m: {role: string}) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'user',
      'assistant',
    ])
    expect(conversation.usage.turns).toBe(2)

    // The second turn repeats the first one's messages: the simulated prompt cache reports them.
    const summary = /Session: 3 turns · (\d+) prompt \((\d+) cached\) \+ (\d+) completion/.exec(r.stderr)
    expect(summary).not.toBeNull()
    expect(Number(summary![2])).toBeGreaterThan(0)
  })

  it('sends the message arguments as the first turn and survives a failing turn', async () => {
    const r = await runCli(['chat', '-i', '-m', 'sim-mini', 'opening line'], {
      home: home.home,
      env: env(),
      input: 'oops [error-mid-stream]\n/model no-such-model\nrefused\n/model sim-mini\nstill here\n',
    })
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toContain('You said: "opening line"')
    expect(r.stderr).toContain('failed mid-stream')
    expect(r.stderr).toContain('does not exist')
    const bodies = chatRequests()
    expect(bodies).toHaveLength(4)
    // The partial answer of the failed turn stays in the history; the refused one does not.
    expect(bodies[2].model).toBe('no-such-model')
    expect(bodies[3].messages.map((m: {content: string}) => m.content.slice(0, 12))).toEqual([
      'opening line',
      'Hello from a',
      'oops [error-',
      'Hello from a',
      'still here',
    ])
  })

  it('refuses --json with the REPL', async () => {
    const r = await runCli(['chat', '-i', '-m', 'sim-mini', '--json'], {
      home: home.home,
      env: env(),
      input: '',
    })
    expect(r.exitCode).toBe(2)
    expect(JSON.parse(r.stdout).error.message).toContain('--json cannot be used')
  })
})

const hasScript = ((): boolean => {
  try {
    execFileSync('script', ['--version'], {stdio: 'ignore'})
    return true
  } catch {
    return false
  }
})()

describe.skipIf(!hasScript)('gwctl chat REPL on a pseudo-terminal', () => {
  it('opens without a message, and Ctrl-C cancels the reply in flight without leaving', async () => {
    sim.faults.add({chunkDelayMs: 200, path: '/chat/completions'})
    const command = `node ${BIN} chat -m sim-mini`
    const child = execa('script', ['-qefc', command, '/dev/null'], {
      env: {...cliEnv(home.home, env()), COLUMNS: '200'},
      extendEnv: true,
      reject: false,
    })
    let seen = ''
    const waiters: Array<() => void> = []
    child.stdout!.on('data', (chunk: Buffer) => {
      seen += chunk.toString()
      for (const check of [...waiters]) check()
    })
    const waitFor = (pattern: RegExp): Promise<void> =>
      new Promise((resolve) => {
        const check = (): void => {
          if (!pattern.test(seen)) return
          waiters.splice(waiters.indexOf(check), 1)
          resolve()
        }
        waiters.push(check)
        check()
      })
    await waitFor(/\/help for commands/)
    child.stdin!.write('tell me [words=100]\r')
    await waitFor(/the simulator/)
    child.stdin!.write('\x03')
    await waitFor(/\(reply cancelled\)/)
    child.stdin!.write('again\r')
    await waitFor(/You said: "again"[^\n]*\n[^\n]*tokens\/s/)
    child.stdin!.write('/exit\r')
    const done = await child
    expect(done.exitCode).toBe(0)
    expect(seen).toMatch(/Session: 2 turns/)
    expect(seen).not.toContain('throughput.')
    const bodies = chatRequests()
    expect(bodies).toHaveLength(2)
    expect(bodies[1].messages[1].content).toMatch(/^the simulator/)
  })
})

describe.skipIf(!hasScript)('gwctl chat REPL left with Ctrl-D', () => {
  it('prints the session summary on a line of its own, not glued to the "> " prompt (issue 25)', async () => {
    const child = execa('script', ['-qefc', `node ${BIN} chat -m sim-mini`, '/dev/null'], {
      env: {...cliEnv(home.home, env()), COLUMNS: '200'},
      extendEnv: true,
      reject: false,
    })
    let seen = ''
    let wake: () => void = () => undefined
    child.stdout!.on('data', (chunk: Buffer) => {
      seen += chunk.toString()
      wake()
    })
    const waitFor = async (pattern: RegExp): Promise<void> => {
      while (!pattern.test(seen)) await new Promise<void>((resolve) => (wake = resolve))
    }
    await waitFor(/\/help for commands/)
    child.stdin!.write('hi\r')
    await waitFor(/You said: "hi"[^\n]*\n[^\n]*tokens\/s[^\n]*\n[^]*> /)
    child.stdin!.write('\x04')
    const done = await child
    expect(done.exitCode).toBe(0)
    // eslint-disable-next-line no-control-regex
    const plain = seen.replace(/\u001b\[[0-9;?]*[A-Za-z]/g, '')
    expect(plain).toMatch(/\r?\nSession: 1 turn/)
    expect(plain).not.toMatch(/> Session:/)
  })
})

describe('gwctl chat without a message on a non-terminal', () => {
  it('reads the message from stdin instead of opening the REPL', async () => {
    const r = await runCli(['chat', '-m', 'sim-mini'], {home: home.home, env: env(), input: 'from a pipe\n'})
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toContain('You said: "from a pipe"')
    expect(r.stderr).not.toContain('Session:')
  })
})
