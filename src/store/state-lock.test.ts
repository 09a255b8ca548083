/**
 * The state lock after a crash (issue 14, item 2): a lock whose holder is dead, or a zombie not
 * yet reaped, is taken over at once; a live holder is still respected.
 */
import {spawn} from 'node:child_process'
import {mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {processAlive} from '../core/process.js'
import {lockState, StateLockedError} from './state-lock.js'

let dir: string
let path: string
const children: number[] = []

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'gwctl-lock-'))
  path = join(dir, 'state.json')
})

afterEach(() => {
  for (const pid of children.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // already gone
    }
  }
  rmSync(dir, {recursive: true, force: true})
})

/** A lock as a holder leaves it (proper-lockfile's folder, the owner file beside it). */
function leaveLock(owner: number | undefined, ageMs = 0): void {
  mkdirSync(`${path}.lock`)
  if (owner !== undefined) writeFileSync(`${path}.lock.owner`, `${owner}\n`)
  const when = (Date.now() - ageMs) / 1000
  utimesSync(`${path}.lock`, when, when)
}

/** The pid of a process that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], {stdio: 'ignore'})
  await new Promise((resolve) => child.once('exit', resolve))
  return child.pid!
}

/** Resolves once `check` holds, polling every 20 ms (gives up after 5 s). */
async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 250 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 20))
}

/**
 * The pid of a zombie: a child of `sleep 30` (which never reaps it) that has been killed. The
 * child is killed only once its shell has become `sleep`: a shell may reap a child that ends
 * before its `exec` (bash does, on SIGCHLD), which would leave no zombie.
 */
async function zombiePid(): Promise<number> {
  const parent = spawn('sh', ['-c', 'sleep 30 & echo $!; exec sleep 30'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  })
  children.push(parent.pid!)
  const pid = await new Promise<number>((resolve) =>
    parent.stdout.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim()))),
  )
  children.push(pid)
  const comm = () => {
    try {
      return readFileSync(`/proc/${parent.pid}/comm`, 'utf8').trim()
    } catch {
      return ''
    }
  }
  await until(() => comm() === 'sleep')
  process.kill(pid, 'SIGKILL')
  await until(() => !processAlive(pid))
  return pid
}

describe('state lock takeover', () => {
  it('takes over at once a lock whose holder has exited', async () => {
    leaveLock(await deadPid())
    const release = await lockState(path, {waitMs: 0})
    await release()
  })

  it('takes over a lock whose holder is a zombie not yet reaped', async () => {
    const zombie = await zombiePid()
    // the process still exists (a signal reaches it) but it is a zombie
    expect(() => process.kill(zombie, 0)).not.toThrow()
    expect(processAlive(zombie)).toBe(false)
    leaveLock(zombie)
    const release = await lockState(path, {waitMs: 0})
    await release()
  })

  it('takes over a lock without an owner file once it has not been touched for a second', async () => {
    // its modification time a second ahead, as proper-lockfile's precision probe leaves it: the
    // age counts from the last touch (the change time), not from that
    leaveLock(undefined, -1000)
    await expect(lockState(path, {waitMs: 0})).rejects.toBeInstanceOf(StateLockedError)
    await new Promise((resolve) => setTimeout(resolve, 1100))
    const release = await lockState(path, {waitMs: 0})
    await release()
  })

  it('takes over a lock whose owner file a killed holder left empty, once untouched for a second', async () => {
    // a kill between creating the owner file and writing its pid: no pid to look at, so the lock
    // is judged by its age, like a lock without an owner file (it used to count as live for 10 s)
    leaveLock(undefined)
    writeFileSync(`${path}.lock.owner`, '')
    await expect(lockState(path, {waitMs: 0})).rejects.toBeInstanceOf(StateLockedError)
    await new Promise((resolve) => setTimeout(resolve, 1100))
    const release = await lockState(path, {waitMs: 0})
    expect(readFileSync(`${path}.lock.owner`, 'utf8')).toBe(`${process.pid}\n`)
    await release()
  })

  it('respects a live holder (and a fresh lock whose owner file is not written yet)', async () => {
    const release = await lockState(path)
    await expect(lockState(path, {waitMs: 300})).rejects.toBeInstanceOf(StateLockedError)
    await release()
    leaveLock(undefined)
    await expect(lockState(path, {waitMs: 0})).rejects.toBeInstanceOf(StateLockedError)
  })

  it('respects a live holder whose lock went untouched for 15 s (its loop blocked by a long write)', async () => {
    // logs.pending's apply of 200 000 rows, one synchronous transaction, on a loaded machine:
    // at proper-lockfile's old 10 s staleness this lock was taken from its live holder
    const holder = spawn('sleep', ['30'], {stdio: 'ignore'})
    children.push(holder.pid!)
    leaveLock(holder.pid!, 15_000)
    await expect(lockState(path, {waitMs: 300})).rejects.toBeInstanceOf(StateLockedError)
    expect(readFileSync(`${path}.lock.owner`, 'utf8')).toBe(`${holder.pid}\n`)
    // untouched past 60 s, the lock is stale whatever its owner file says (a pid reused)
    rmSync(`${path}.lock`, {recursive: true})
    leaveLock(holder.pid!, 61_000)
    const release = await lockState(path, {waitMs: 300})
    await release()
  })

  it('takes the lock as soon as a live holder dies while it waits', async () => {
    const holder = spawn('sleep', ['30'], {stdio: 'ignore'})
    children.push(holder.pid!)
    leaveLock(holder.pid!)
    setTimeout(() => holder.kill('SIGKILL'), 300)
    const release = await lockState(path, {waitMs: 5000})
    await release()
    expect(holder.exitCode ?? holder.signalCode).toBeTruthy()
  })
})
