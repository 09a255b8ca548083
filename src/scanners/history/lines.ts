/**
 * Streams the complete lines of a file from a byte offset, up to the size the file had when the
 * scan began (a file that grows during the scan is read consistently; the rest waits for the next
 * scan). A last line without its newline (an agent still writing) is not returned, and the
 * returned offset stays before it so the next scan reads it whole.
 */
import {closeSync, openSync, readSync} from 'node:fs'

const CHUNK = 1 << 20

export interface LineChunk {
  text: string
  /** Byte offset of the line's first byte. */
  offset: number
}

/** Whether bytes `[start, end)` are only whitespace (as `String.prototype.trim` sees it). */
function blank(chunk: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const b = chunk[i]
    if (b === 32 || (b >= 9 && b <= 13)) continue
    // Non-ASCII: Unicode spaces (U+00A0, U+FEFF, ...) are decoded to be sure.
    return b < 128 ? false : chunk.toString('utf8', start, end).trim() === ''
  }
  return true
}

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

/**
 * Calls `onLine` for every complete line in `[from, size)` and returns the offset just after the
 * last newline read. Blank lines are passed over. With `holds`, a line it says no to is never
 * decoded to a string: `onOther` is called instead (most lines of a history file carry a message
 * text, not a usage record). It is asked line by line: one search of the whole chunk per marker
 * measured slower (also when each marker's next place is remembered).
 */
export async function readLines(
  path: string,
  from: number,
  size: number,
  onLine: (line: LineChunk) => void,
  holds?: (line: Buffer) => boolean,
  onOther?: () => void,
): Promise<number> {
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
      let start = 0
      for (let nl = chunk.indexOf(10, start); nl !== -1; nl = chunk.indexOf(10, start)) {
        if (nl > start) {
          if (holds && !holds(chunk.subarray(start, nl))) {
            if (!blank(chunk, start, nl)) onOther?.()
          } else {
            const text = chunk.toString('utf8', start, nl)
            if (text.trim() !== '') onLine({text, offset: base + start})
          }
        }
        start = nl + 1
        end = base + start
      }
      if (start < chunk.length) {
        carry = Buffer.from(chunk.subarray(start))
        carryStart = base + start
      } else carry = undefined
    }
    return end
  } finally {
    closeSync(fd)
  }
}
