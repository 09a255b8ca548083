/**
 * The statusline's published figures: `statusline.json` in the home folder, written by the running
 * daemon from its usage memory (usage-memory.ts) so that `gwctl statusline` reads one small file
 * instead of making a loopback request. A request costs the CLI node:net and a round trip, 10-12 ms
 * of a 35 ms call; the file costs a read (services/usage-statusline.ts; docs/USAGE-WINDOWS.md).
 *
 * Only what a statusline has asked for is published: each loopback answer registers its key (the
 * client's local midnight and Claude Code's session id), and from then on every change of the
 * memory (a request the gateway answered, new history rows) writes the figures of every key asked
 * within {@link ASKED_TTL_MS}, at most {@link ASKED_MAX} of them, at most once per
 * {@link PUBLISH_EVERY_MS} and {@link PUBLISH_DELAY_MS} after the change (a burst of requests: one
 * write). Nothing is published until a statusline asks, so a gateway without one does no work here.
 *
 * The file is written whole to a temp file and renamed over (a reader sees the old file or the new,
 * never a part), mode 0600, and carries the daemon's pid and the time it was written: the reader
 * takes it only from the live daemon of the pid file, and only while fresh (the figures move with
 * time alone at a 5-hour window's end, which the reader checks, and at the day's change, which is
 * in the key). The daemon removes it when it exits.
 */
import {renameSync, rmSync, writeFileSync} from 'node:fs'

/** One published line's key: the client's local midnight (Unix ms) and Claude Code's session id. */
export interface PublishedKey {
  todayStartMs: number
  session?: string
}

/** The file's content (services/usage-statusline.ts reads it); F: the figures of a line (usage-memory.ts). */
export interface PublishedFigures<F> {
  v: 1
  /** The daemon that wrote it. */
  pid: number
  /** Unix ms. */
  written: number
  /** By {@link publishedKey}. */
  lines: Record<string, F>
}

/** How a key is written in {@link PublishedFigures.lines} (services/usage-statusline.ts makes the same). */
export const publishedKey = (key: PublishedKey) => `${key.todayStartMs} ${key.session ?? ''}`

/** Between a change and the write that follows it (several requests finishing together: one write). */
export const PUBLISH_DELAY_MS = 5
/** The least time between two writes (under load, about five writes a second). */
export const PUBLISH_EVERY_MS = 200
/** A key not asked for this long is no longer published (its next call asks the daemon again). */
export const ASKED_TTL_MS = 6 * 3_600_000
/** The most keys published (the sessions a user keeps open, in a time zone or two). */
export const ASKED_MAX = 32

export class StatuslinePublisher<F> {
  private readonly asked = new Map<string, PublishedKey & {at: number}>()
  private timer: NodeJS.Timeout | undefined
  private lastWrite = 0
  private readonly removeAtExit = () => rmSync(this.path, {force: true})

  constructor(
    private readonly path: string,
    private readonly figures: (key: PublishedKey, now: number) => F,
  ) {
    process.once('exit', this.removeAtExit)
  }

  /** A statusline asked for `key`: publish it from now on, and now. */
  ask(key: PublishedKey): void {
    const name = publishedKey(key)
    this.asked.delete(name) // the newest last: the oldest go first past ASKED_MAX
    this.asked.set(name, {...key, at: Date.now()})
    while (this.asked.size > ASKED_MAX) this.asked.delete(this.asked.keys().next().value!)
    this.changed()
  }

  /** The figures may have changed: write them soon. */
  changed(): void {
    if (this.timer || this.asked.size === 0) return
    const wait = Math.max(PUBLISH_DELAY_MS, this.lastWrite + PUBLISH_EVERY_MS - Date.now())
    this.timer = setTimeout(() => {
      this.timer = undefined
      this.write()
    }, wait)
    this.timer.unref()
  }

  /** Writes the file now (tests; the timer). */
  write(now = Date.now()): void {
    this.lastWrite = now
    const temp = `${this.path}.${process.pid}.tmp`
    try {
      const lines: Record<string, F> = {}
      for (const [name, key] of this.asked) {
        if (now - key.at > ASKED_TTL_MS) this.asked.delete(name)
        else lines[name] = this.figures(key, now)
      }
      const file: PublishedFigures<F> = {v: 1, pid: process.pid, written: now, lines}
      writeFileSync(temp, JSON.stringify(file), {mode: 0o600})
      renameSync(temp, this.path)
    } catch {
      // logs.db unreadable, a full disk, a removed home folder: no file, and the statusline asks
      // over loopback instead (whose answer says what failed)
      rmSync(temp, {force: true})
      rmSync(this.path, {force: true})
    }
  }

  /** Stops publishing and removes the file. */
  close(): void {
    clearTimeout(this.timer)
    this.timer = undefined
    process.removeListener('exit', this.removeAtExit)
    this.removeAtExit()
  }
}
