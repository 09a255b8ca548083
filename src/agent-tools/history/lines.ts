/**
 * Streams the complete lines of a file from a byte offset, up to the size the file had when the
 * scan began (a file that grows during the scan is read consistently; the rest waits for the next
 * scan). A last line without its newline (an agent still writing) is not returned, and the
 * returned offset stays before it so the next scan reads it whole.
 */
import {closeSync, openSync, readSync} from 'node:fs'

const CHUNK = 1 << 20
const WINDOW = 1 << 15

export interface LineChunk {
  text: string
  /** Byte offset of the line's first byte. */
  offset: number
}

/** Whether a line is only whitespace (as `String.prototype.trim` sees it). */
const blank = (line: string): boolean =>
  line.length === 0 || ((line.charCodeAt(0) <= 32 || line.charCodeAt(0) >= 128) && line.trim() === '')

/**
 * One read buffer per thread, grown to the largest file read (at most CHUNK) and reused: a new
 * buffer per file is fresh memory from the system, and the read into it page-faults every 4 KB
 * (most of a reader thread's time in `read`; 10 000 small files must not allocate 10 000 MB
 * either). Safe to share: `readLines` never awaits, and nothing keeps a view of it (lines are
 * decoded, a carried partial line is copied).
 */
let shared: Buffer | undefined
const buffer = (bytes: number): Buffer => {
  if (!shared || shared.length < bytes) shared = Buffer.allocUnsafe(bytes)
  return shared
}

/** The lines of `chunk[from, to)` (`to` at a newline), decoded at once, their byte offsets from `base`. */
function lines(
  chunk: Buffer,
  from: number,
  to: number,
  base: number,
  take: (text: string, offset: number) => void,
) {
  const text = chunk.toString('utf8', from, to)
  if (text.length === to - from) {
    // ASCII: a character is a byte.
    for (let start = 0; ;) {
      const nl = text.indexOf('\n', start)
      take(text.slice(start, nl === -1 ? text.length : nl), base + from + start)
      if (nl === -1) return
      start = nl + 1
    }
  } else if (!text.includes('\uFFFD')) {
    let offset = base + from
    for (let start = 0; ;) {
      const nl = text.indexOf('\n', start)
      const line = text.slice(start, nl === -1 ? text.length : nl)
      take(line, offset)
      if (nl === -1) return
      offset += Buffer.byteLength(line) + 1
      start = nl + 1
    }
  } else {
    for (let start = from; start <= to;) {
      const nl = chunk.indexOf(10, start)
      take(chunk.toString('utf8', start, nl), base + start)
      start = nl + 1
    }
  }
}

/**
 * Calls `onLine` for every complete line in `[from, size)` and returns the offset just after the
 * last newline read. Blank lines are passed over. With `holds`, a line it says no to goes to
 * `onOther` instead (most lines of a history file carry a message text, not a usage record).
 *
 * The complete lines of each read are decoded WINDOW bytes at a time and cut with string
 * searches: per line, a Buffer's `indexOf`, `subarray` and `toString` are three calls into C++ and
 * an object each, which cost more than decoding every line (the marker tests then search
 * strings). A window's string stays below V8's large-object size, even two bytes a character, so
 * it is young memory, reused (a 1 MB string is fresh pages every time: slower than line by line).
 * Byte offsets: in an ASCII window the string's indexes are bytes; otherwise each line's UTF-8
 * length is added up, which gives the file's bytes back only when they were valid UTF-8 (no U+FFFD
 * in the text): a window holding U+FFFD is cut by its bytes, line by line.
 */
export async function readLines(
  path: string,
  from: number,
  size: number,
  onLine: (line: LineChunk) => void,
  holds?: (line: string) => boolean,
  onOther?: () => void,
): Promise<number> {
  const take = (text: string, offset: number): void => {
    if (blank(text)) return
    if (!holds || holds(text)) onLine({text, offset})
    else onOther?.()
  }
  // Synchronous: a history file is mostly small, and three thread-pool round trips (open, read,
  // close) per file cost more than the reads (a 1 MB read from the page cache is well under 1 ms).
  const fd = openSync(path, 'r')
  try {
    let pos = from
    let carry: Buffer | undefined
    let carryStart = from
    let end = from
    const buf = buffer(Math.max(1, Math.min(CHUNK, size - from)))
    while (pos < size) {
      const bytesRead = readSync(fd, buf, 0, Math.min(buf.length, size - pos), pos)
      if (bytesRead === 0) break
      const chunk: Buffer = carry
        ? Buffer.concat([carry, buf.subarray(0, bytesRead)])
        : buf.subarray(0, bytesRead)
      const base = carry ? carryStart : pos
      pos += bytesRead
      const last = chunk.lastIndexOf(10)
      // Decoded a window at a time: a string under V8's large-object size is young memory, reused;
      // a 1 MB one is fresh pages each time.
      for (let at = 0; at < last;) {
        let to = at + WINDOW < last ? chunk.lastIndexOf(10, at + WINDOW) : last
        if (to < at) to = chunk.indexOf(10, at)
        lines(chunk, at, to, base, take)
        at = to + 1
      }
      if (last !== -1) end = base + last + 1
      if (last + 1 < chunk.length) {
        carry = Buffer.from(chunk.subarray(last + 1))
        carryStart = base + last + 1
      } else carry = undefined
    }
    return end
  } finally {
    closeSync(fd)
  }
}
