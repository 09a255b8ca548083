import {describe, expect, it} from 'vitest'

import {ExitCode, TaskFailedError, UpstreamError} from '../core/errors.js'
import type {TaskWatch} from './task-wait.js'
import {waitForTask} from './task-wait.js'

/** A task whose queries answer the given statuses in turn (the last one repeats). */
function watch(statuses: Array<string | Error>): TaskWatch<{status: string}> & {queries: number} {
  const w = {
    id: 't1',
    resume: 'gwctl video poll t1',
    queries: 0,
    async query() {
      const next = statuses[Math.min(w.queries++, statuses.length - 1)]
      if (next instanceof Error) throw next
      return {status: next}
    },
    status: (t: {status: string}) => t.status,
    settled: (t: {status: string}) => {
      if (t.status === 'failed') throw new TaskFailedError('Task t1 failed: boom.')
      return t.status === 'done'
    },
  }
  return w
}

describe('waitForTask', () => {
  it('polls until the task settles', async () => {
    const w = watch(['queued', 'running', 'done'])
    await expect(waitForTask(w, {intervalMs: 1})).resolves.toEqual({status: 'done'})
    expect(w.queries).toBe(3)
  })

  it('a failed task passes through as it is (exit 8)', async () => {
    const error = await waitForTask(watch(['queued', 'failed']), {intervalMs: 1}).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(TaskFailedError)
    expect((error as TaskFailedError).message).toBe('Task t1 failed: boom.')
  })

  it('a timeout exits 5 and names the resume command; 0 means never', async () => {
    const error = await waitForTask(watch(['queued']), {intervalMs: 5, timeoutSeconds: 0.02}).catch(
      (e: unknown) => e,
    )
    expect(error).toMatchObject({code: 'wait_timeout', exitCode: ExitCode.upstream})
    expect((error as Error).message).toMatch(/^Task t1 is still queued after/)
    expect((error as {hint: string}).hint).toContain('`gwctl video poll t1` waits again')
    await expect(
      waitForTask(watch(['queued', 'queued', 'done']), {intervalMs: 1, timeoutSeconds: 0}),
    ).resolves.toEqual({
      status: 'done',
    })
  })

  it('an error while waiting keeps its exit code and adds the task id and the resume command', async () => {
    const network = new UpstreamError('Network error: nothing is listening at http://x.', {
      code: 'network',
      hint: 'Check the base URL.',
    })
    const error = await waitForTask(watch(['queued', network]), {intervalMs: 1}).catch((e: unknown) => e)
    expect(error).toMatchObject({code: 'network', exitCode: ExitCode.upstream, details: {task_id: 't1'}})
    expect((error as Error).message).toContain('(while waiting for task t1)')
    expect((error as {hint: string}).hint).toContain('Check the base URL.')
    expect((error as {hint: string}).hint).toContain('`gwctl video poll t1` resumes waiting')
  })

  it('an abort (Ctrl-C) is exit 130 with the resume command', async () => {
    const controller = new AbortController()
    const pending = waitForTask(watch(['queued']), {intervalMs: 10_000, signal: controller.signal})
    setTimeout(() => controller.abort(), 10)
    const error = await pending.catch((e: unknown) => e)
    expect(error).toMatchObject({exitCode: ExitCode.interrupted, hint: 'Resume with `gwctl video poll t1`.'})
  })
})
