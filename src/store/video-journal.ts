/**
 * The local journal of video tasks: `<GWCTL_HOME>/video-tasks.jsonl`, mode 0600, append-only.
 *
 * The `/videos` API has no list endpoint, so every task gwctl creates is written here (one
 * `created` line), and every status gwctl later sees is appended as a `status` line.
 * {@link listVideoTasks} folds the lines into one record per task. A line is written with a
 * single `appendFile`; a line torn by a crash (no newline, or not JSON) is skipped when reading,
 * and the next append starts on a fresh line, so it never spoils the lines around it.
 */
import {
  appendFileSync,
  chmodSync,
  closeSync,
  existsSync,
  openSync,
  readFileSync,
  readSync,
  statSync,
} from 'node:fs'

import {checkHome, ensureHome, homeFile} from './paths.js'

/** One line of the journal. */
export type JournalEvent =
  | {
      type: 'created'
      id: string
      model: string
      provider?: string
      prompt?: string
      created_at: string
      status: string
    }
  | {type: 'status'; id: string; status: string; at: string; video_url?: string; error?: string}

/** A task as the journal knows it (the fold of its lines). */
export interface JournalTask {
  id: string
  model: string
  provider?: string
  prompt?: string
  created_at: string
  status: string
  /** When the status was last seen. */
  updated_at: string
  video_url?: string
  error?: string
}

/** Path of the journal file. */
export function journalPath(): string {
  return homeFile('videoJournal')
}

function endsWithNewline(path: string): boolean {
  const size = statSync(path).size
  if (size === 0) return true
  const fd = openSync(path, 'r')
  try {
    const buf = Buffer.alloc(1)
    readSync(fd, buf, 0, 1, size - 1)
    return buf[0] === 0x0a
  } finally {
    closeSync(fd)
  }
}

/** Appends one event (creating the file with mode 0600). */
export function appendJournal(event: JournalEvent): void {
  ensureHome()
  const path = journalPath()
  const exists = existsSync(path)
  // After a torn last line, start on a fresh line so this event stays readable.
  const prefix = exists && !endsWithNewline(path) ? '\n' : ''
  appendFileSync(path, prefix + JSON.stringify(event) + '\n', {mode: 0o600})
  // the mode of a new file is subject to the umask, and an older journal may be 0644
  if (!exists || (statSync(path).mode & 0o777) !== 0o600) chmodSync(path, 0o600)
}

/** Every readable event, oldest first; torn or foreign lines are skipped. */
export function readJournal(): JournalEvent[] {
  checkHome()
  const path = journalPath()
  if (!existsSync(path)) return []
  const events: JournalEvent[] = []
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (!line.trim()) continue
    try {
      const event = JSON.parse(line) as JournalEvent
      if (
        event &&
        typeof event === 'object' &&
        typeof event.id === 'string' &&
        typeof event.type === 'string'
      ) {
        events.push(event)
      }
    } catch {
      // a torn line (crash mid-write): ignore it
    }
  }
  return events
}

/** Folds events into one record per task, newest created first. */
export function foldJournal(events: readonly JournalEvent[]): JournalTask[] {
  const tasks = new Map<string, JournalTask>()
  for (const event of events) {
    if (event.type === 'created') {
      tasks.set(event.id, {
        id: event.id,
        model: event.model,
        provider: event.provider,
        prompt: event.prompt,
        created_at: event.created_at,
        status: event.status,
        updated_at: event.created_at,
      })
    } else if (event.type === 'status') {
      const task = tasks.get(event.id)
      if (!task) continue
      task.status = event.status
      task.updated_at = event.at
      if (event.video_url) task.video_url = event.video_url
      if (event.error) task.error = event.error
    }
  }
  return [...tasks.values()].sort((a, b) => b.created_at.localeCompare(a.created_at))
}

/** Every task of the journal, newest first. */
export function listVideoTasks(): JournalTask[] {
  return foldJournal(readJournal())
}

/** The journal's record of one task, if gwctl created it here. */
export function findVideoTask(id: string): JournalTask | undefined {
  return listVideoTasks().find((t) => t.id === id)
}
