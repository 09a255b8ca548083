/**
 * The log store's side file (`logs.pending` beside `logs.db`): where a batch goes when it cannot be
 * committed at once because another process holds `logs.db`'s write lock (`gwctl usage rescan`
 * swapping its history table in). A batch in memory would be lost to a `kill -9` for as long as the
 * lock is held; appended here with one `write()` it is in the page cache as soon as the call
 * returns, and survives the process (not a power cut: no fsync, as the WAL's `synchronous = NORMAL`).
 *
 * Each row is one line: the JSON array `[seq, ...the row's values in the insert's column order]`.
 * `seq` grows by one per row and never repeats; `logs.db` keeps the highest `seq` committed
 * (table `log_spill`, written in the same transaction as the rows), so a replay after any crash
 * (between the commit and the truncation of this file, or in the middle of either) inserts each row
 * exactly once: the rows at or below the committed `seq` are skipped. A last line without its
 * newline is a write torn by a crash or a full disk: it is ignored and cut off before the next
 * append.
 */
import {closeSync, existsSync, ftruncateSync, openSync, readFileSync, statSync, writeSync} from 'node:fs'

import {pendingFileOf} from './paths.js'

/** The side file of the log database at `dbPath`: `logs.db` -> `logs.pending`. */
export const spillPath = pendingFileOf

/** The table that records the highest sequence committed (one row, created with the schema). */
export const SPILL_SCHEMA = `CREATE TABLE IF NOT EXISTS log_spill (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  committed_seq INTEGER NOT NULL
)`
export const SELECT_COMMITTED = 'SELECT committed_seq FROM log_spill WHERE id = 1'
export const UPSERT_COMMITTED = `INSERT INTO log_spill (id, committed_seq) VALUES (1, ?)
  ON CONFLICT (id) DO UPDATE SET committed_seq = MAX(committed_seq, excluded.committed_seq)`

/** What a side file holds: its rows (flat, `columns` values each) and their sequence numbers. */
export interface SpilledRows {
  seqs: number[]
  /** The rows' values, one after another (`seqs.length * columns` values). */
  values: unknown[]
  /** The highest sequence in the file (0 when empty). */
  maxSeq: number
  /** Lines that do not parse as a row of `columns` values (a torn last write included). */
  bad: number
  /** Bytes of the file up to its last complete line. */
  goodBytes: number
  /** Bytes of the file. */
  bytes: number
}

/** Reads the side file at `path` (missing: empty). */
export function readSpill(path: string, columns: number): SpilledRows {
  const out: SpilledRows = {seqs: [], values: [], maxSeq: 0, bad: 0, goodBytes: 0, bytes: 0}
  if (!existsSync(path)) return out
  const buffer = readFileSync(path)
  out.bytes = buffer.length
  const end = buffer.lastIndexOf(0x0a) + 1
  out.goodBytes = end
  if (end < buffer.length) out.bad++ // torn last line
  const text = buffer.subarray(0, end).toString('utf8')
  for (const line of text.split('\n')) {
    if (line === '') continue
    let row: unknown
    try {
      row = JSON.parse(line)
    } catch {
      out.bad++
      continue
    }
    // (a row of one column fewer was kept by a gateway of before the last column, `billed_try`,
    // whose 0 it gets)
    if (
      !Array.isArray(row) ||
      (row.length !== columns + 1 && row.length !== columns) ||
      !Number.isSafeInteger(row[0])
    ) {
      out.bad++
      continue
    }
    const seq = row[0] as number
    out.seqs.push(seq)
    for (let i = 1; i <= columns; i++) out.values.push(i < row.length ? row[i] : 0)
    if (seq > out.maxSeq) out.maxSeq = seq
  }
  return out
}

/**
 * Appends `rows` rows of `values` (flat, `columns` each) with sequences from `firstSeq` on, in one
 * `write()`. Throws what the file system says (a full or read-only disk); a partial write is cut
 * back to `knownBytes` (the file's size before) so that no torn line is left in the middle.
 */
export function appendSpill(
  path: string,
  values: ArrayLike<unknown>,
  columns: number,
  firstSeq: number,
  knownBytes: number,
): number {
  const rows = values.length / columns
  const lines: string[] = new Array(rows)
  const row: unknown[] = new Array(columns + 1)
  for (let r = 0; r < rows; r++) {
    row[0] = firstSeq + r
    for (let c = 0; c < columns; c++) row[c + 1] = values[r * columns + c]
    lines[r] = JSON.stringify(row)
  }
  const data = Buffer.from(`${lines.join('\n')}\n`, 'utf8')
  const fd = openSync(path, 'a', 0o600)
  try {
    let written = 0
    try {
      written = writeSync(fd, data)
    } finally {
      if (written !== data.length) {
        try {
          ftruncateSync(fd, knownBytes)
        } catch {
          // the next append's repair (truncateSpill to the last complete line) cuts it
        }
      }
    }
    if (written !== data.length)
      throw Object.assign(new Error('short write to the log side file'), {code: 'ENOSPC'})
  } finally {
    closeSync(fd)
  }
  return knownBytes + data.length
}

/** Cuts the side file to `bytes` (0: empty); a missing file is left missing. */
export function truncateSpill(path: string, bytes = 0): void {
  if (!existsSync(path)) return
  const fd = openSync(path, 'r+')
  try {
    ftruncateSync(fd, bytes)
  } finally {
    closeSync(fd)
  }
}

/** The side file's size (0 when missing). */
export function spillBytes(path: string): number {
  try {
    return statSync(path).size
  } catch {
    return 0
  }
}
