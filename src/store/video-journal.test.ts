import {appendFileSync, chmodSync, mkdtempSync, readFileSync, rmSync, statSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {appendJournal, findVideoTask, journalPath, listVideoTasks} from './video-journal.js'

describe('video journal', () => {
  let home: string
  const saved = process.env.GWCTL_HOME
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), 'gwctl-journal-'))
    process.env.GWCTL_HOME = home
  })
  afterEach(() => {
    process.env.GWCTL_HOME = saved
    rmSync(home, {recursive: true, force: true})
  })

  const created = (id: string, at: string) =>
    ({
      type: 'created',
      id,
      model: 'Alpha2.6-T2V',
      provider: 'p',
      prompt: 'fox',
      created_at: at,
      status: 'queued',
    }) as const

  it('makes a journal left 0644 private again on the next append', () => {
    appendFileSync(journalPath(), '', {mode: 0o644})
    chmodSync(journalPath(), 0o644)
    appendJournal(created('t1', '2026-01-01T00:00:00.000Z'))
    expect((statSync(journalPath()).mode & 0o777).toString(8)).toBe('600')
  })

  it('writes a 0600 file and folds status events into the last known status', () => {
    appendJournal(created('t1', '2026-01-01T00:00:00.000Z'))
    appendJournal(created('t2', '2026-01-02T00:00:00.000Z'))
    appendJournal({type: 'status', id: 't1', status: 'in_progress', at: '2026-01-01T00:01:00.000Z'})
    appendJournal({
      type: 'status',
      id: 't1',
      status: 'completed',
      at: '2026-01-01T00:02:00.000Z',
      video_url: 'http://v',
    })
    expect(statSync(journalPath()).mode & 0o777).toBe(0o600)
    const tasks = listVideoTasks()
    expect(tasks.map((t) => t.id)).toEqual(['t2', 't1'])
    expect(findVideoTask('t1')).toMatchObject({
      status: 'completed',
      video_url: 'http://v',
      provider: 'p',
      prompt: 'fox',
    })
    expect(findVideoTask('t2')?.status).toBe('queued')
  })

  it('ignores a torn last line and keeps later appends readable', () => {
    appendJournal(created('t1', '2026-01-01T00:00:00.000Z'))
    appendFileSync(journalPath(), '{"type":"created","id":"t9","mod') // crash mid-write
    expect(listVideoTasks().map((t) => t.id)).toEqual(['t1'])
    appendJournal(created('t2', '2026-01-02T00:00:00.000Z'))
    expect(listVideoTasks().map((t) => t.id)).toEqual(['t2', 't1'])
    const lines = readFileSync(journalPath(), 'utf8').split('\n')
    expect(lines[1]).toBe('{"type":"created","id":"t9","mod')
  })

  it('ignores status events of tasks it never saw created', () => {
    appendJournal({type: 'status', id: 'other', status: 'completed', at: '2026-01-01T00:00:00.000Z'})
    expect(listVideoTasks()).toEqual([])
  })
})
