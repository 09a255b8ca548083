import type {ChildProcess} from 'node:child_process'
import {spawn} from 'node:child_process'
import {readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'

import {tempHome} from '../../test/helpers/cli.js'
import {claimPidFile, readPidFile, releasePidFile, runningDaemon} from './pidfile.js'
import {describePortTaken, findPortHolder, isPortFree} from './port-holder.js'

describe('pid file', () => {
  const children: ChildProcess[] = []
  const cleanups: Array<() => void> = []
  afterEach(() => {
    for (const c of children.splice(0)) c.kill('SIGKILL')
    for (const c of cleanups.splice(0)) c()
  })

  /** A process whose command line looks like a daemon's. */
  async function fakeDaemon(): Promise<ChildProcess> {
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', 'gateway', 'run'], {
      stdio: 'ignore',
    })
    children.push(child)
    await new Promise((r) => child.once('spawn', r))
    return child
  }

  it('is claimed once; a live daemon keeps it; a dead one leaves a stale file that is replaced', async () => {
    const t = tempHome()
    cleanups.push(t.cleanup)
    const path = join(t.home, 'gateway.pid')
    const daemon = await fakeDaemon()
    writeFileSync(path, `${daemon.pid}\n4999\n`)
    expect(runningDaemon(path)).toEqual({pid: daemon.pid, port: 4999})
    expect(claimPidFile(5000, path)).toEqual({ok: false, holder: {pid: daemon.pid, port: 4999}})

    daemon.kill('SIGKILL')
    await new Promise((r) => daemon.once('exit', r))
    expect(runningDaemon(path)).toBeUndefined()
    expect(claimPidFile(5000, path)).toEqual({ok: true})
    expect(readFileSync(path, 'utf8')).toBe(`${process.pid}\n5000\n`)
    releasePidFile(path)
    expect(readPidFile(path)).toBeUndefined()
  })

  it('treats a reused pid that is not a daemon as stale', async () => {
    const t = tempHome()
    cleanups.push(t.cleanup)
    const path = join(t.home, 'gateway.pid')
    const other = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], {stdio: 'ignore'})
    children.push(other)
    await new Promise((r) => other.once('spawn', r))
    writeFileSync(path, `${other.pid}\n4999\n`)
    expect(runningDaemon(path)).toBeUndefined()
    expect(claimPidFile(5000, path)).toEqual({ok: true})
  })
})

describe('port holder', () => {
  it('names this process when it listens on a port', async () => {
    const {createServer} = await import('node:net')
    const server = createServer()
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
    const port = (server.address() as {port: number}).port
    try {
      expect(await isPortFree(port)).toBe(false)
      expect(findPortHolder(port)?.pid).toBe(process.pid)
      expect(describePortTaken(port)).toContain(`pid ${process.pid}`)
    } finally {
      await new Promise((r) => server.close(r))
    }
    expect(await isPortFree(port)).toBe(true)
  })
})
