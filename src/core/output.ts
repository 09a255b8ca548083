/**
 * Everything gwctl prints goes through here: data to stdout (tables, lines, one JSON document),
 * progress and diagnostics to stderr, and progress only when stderr is a terminal.
 */

import {styleText} from 'node:util'

import stringWidth from 'string-width'

import {roundDollars} from './usd.js'

/** Colours are off with `NO_COLOR`, `FORCE_COLOR=0`, or when the stream is not a TTY. */
function colorLevel(stream: NodeJS.WriteStream): 0 | 1 {
  if (process.env.NO_COLOR !== undefined && process.env.NO_COLOR !== '') return 0
  if (process.env.FORCE_COLOR === '0') return 0
  if (process.env.FORCE_COLOR) return 1
  return stream.isTTY ? 1 : 0
}

type Paint = (text: string) => string

/** The few styles gwctl prints with; plain text when colours are off. */
export interface Colors {
  dim: Paint
  bold: Paint
  red: Paint
  green: Paint
  yellow: Paint
  /** Yellow and bold (a warning's label). */
  yellowBold: Paint
}

type Style = Parameters<typeof styleText>[0]

/**
 * Colours from Node's own `util.styleText` (Node 20.12+), which gwctl decides to use or not
 * itself ({@link colorLevel}); no colour library is loaded on start-up.
 */
function colors(level: 0 | 1): Colors {
  const paint =
    (...styles: Style[]): Paint =>
    (text) =>
      level === 0
        ? text
        : styles.reduceRight<string>((t, style) => styleText(style, t, {validateStream: false}), text)
  return {
    dim: paint('dim'),
    bold: paint('bold'),
    red: paint('red'),
    green: paint('green'),
    yellow: paint('yellow'),
    yellowBold: paint('yellow', 'bold'),
  }
}

let stdoutColors: Colors | undefined
let stderrColors: Colors | undefined

/** Colours for text bound to stdout. */
export function color(): Colors {
  stdoutColors ??= colors(colorLevel(process.stdout))
  return stdoutColors
}

/** Colours for text bound to stderr. */
export function colorErr(): Colors {
  stderrColors ??= colors(colorLevel(process.stderr))
  return stderrColors
}

/** Writes one line of data to stdout. */
export function out(line = ''): void {
  process.stdout.write(line + '\n')
}

/** Writes one line of diagnostics to stderr (warnings, notes, closing stats). */
export function err(line = ''): void {
  process.stderr.write(line + '\n')
}

/** A warning on stderr; it never changes the exit code. */
export function warn(message: string): void {
  err(colorErr().yellow('warning: ') + message)
}

/** Exactly one JSON document on stdout (its dollar amounts rounded: {@link roundDollars}). */
export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(roundDollars(value), null, 2) + '\n')
}

/** True when progress may be drawn: stderr is a terminal and the user did not ask for quiet. */
export function progressEnabled(): boolean {
  return Boolean(process.stderr.isTTY) && process.env.GWCTL_NO_PROGRESS === undefined
}

/**
 * A single status line on stderr that rewrites itself in place. A no-op when stderr is not a
 * terminal, so scripts and pipes see no progress noise.
 */
export class StatusLine {
  private active = false
  private readonly enabled = progressEnabled()

  update(text: string): void {
    if (!this.enabled) return
    const width = process.stderr.columns || 80
    const line = text.length >= width ? text.slice(0, width - 1) : text
    process.stderr.write('\r\x1b[2K' + line)
    this.active = true
  }

  /** Clears the line (leaving the cursor at column 0). */
  done(): void {
    if (!this.enabled || !this.active) return
    process.stderr.write('\r\x1b[2K')
    this.active = false
  }
}

// C0 controls but tab and newline, DEL and C1 (0x9b is a one-byte CSI)
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g

/**
 * Text from elsewhere (agent names, requested models, platform fields) made safe for a terminal:
 * control characters are shown as `\xHH` instead of being sent, so no escape sequence in the data
 * can recolour, retitle, rewrite or hide what is printed.
 */
export function printable(text: string): string {
  return text.replace(CONTROL, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`)
}

export interface Column<T> {
  header: string
  value: (row: T) => string | number | undefined | null
  align?: 'left' | 'right'
}

/**
 * Renders rows as a plain aligned table (no box drawing: easy to read and to grep): columns two
 * spaces apart, each as wide as its widest cell in terminal cells (wide characters count two,
 * colour codes none), a cell with line breaks spanning several lines, no trailing spaces.
 * string-width is already loaded by oclif, so a table costs nothing to load (cli-table3, used
 * before, added ~30 ms to every command that printed one).
 */
export function renderTable<T>(rows: readonly T[], columns: readonly Column<T>[]): string {
  const grid = [
    columns.map((c) => [color().bold(c.header)]),
    ...rows.map((row) => columns.map((c) => printable(String(c.value(row) ?? '')).split('\n'))),
  ]
  const widths = columns.map((_, i) =>
    Math.max(0, ...grid.map((cells) => Math.max(...cells[i].map((line) => stringWidth(line))))),
  )
  const lines: string[] = []
  for (const cells of grid) {
    const height = Math.max(...cells.map((c) => c.length))
    for (let l = 0; l < height; l++) {
      const parts = columns.map((c, i) => {
        const text = cells[i][l] ?? ''
        const pad = ' '.repeat(widths[i] - stringWidth(text))
        return c.align === 'right' ? pad + text : text + pad
      })
      lines.push(parts.join('  ').trimEnd())
    }
  }
  return lines.join('\n')
}

/** Prints a table, or `empty` when there are no rows. */
export function printTable<T>(
  rows: readonly T[],
  columns: readonly Column<T>[],
  empty = 'Nothing to show.',
): void {
  if (rows.length === 0) {
    out(empty)
    return
  }
  out(renderTable(rows, columns))
}

/** Prints `key: value` lines with aligned keys; undefined values are skipped. */
export function printFields(fields: Record<string, unknown>): void {
  const entries = Object.entries(fields).filter(([, v]) => v !== undefined && v !== null && v !== '')
  const width = Math.max(0, ...entries.map(([k]) => k.length))
  for (const [key, value] of entries) {
    const text = typeof value === 'object' ? JSON.stringify(value) : String(value)
    out(`${color().dim((key + ':').padEnd(width + 1))} ${printable(text)}`)
  }
}

/** Masks a secret for display: the first 4 characters, then an ellipsis. */
export function maskSecret(secret: string | undefined): string {
  if (!secret) return ''
  if (secret.length <= 8) return '****'
  return `${secret.slice(0, 4)}…${'*'.repeat(4)}`
}

/** "1m 05s" style duration. */
export function formatDuration(ms: number): string {
  const total = Math.max(0, Math.round(ms / 1000))
  const h = Math.floor(total / 3600)
  const m = Math.floor((total % 3600) / 60)
  const s = total % 60
  if (h > 0) return `${h}h ${String(m).padStart(2, '0')}m ${String(s).padStart(2, '0')}s`
  if (m > 0) return `${m}m ${String(s).padStart(2, '0')}s`
  return `${s}s`
}

/** The one line every download ends with: `Saved fox.mp4 (2.8 KB).` (video and gamma alike). */
export function savedLine(path: string, bytes: number): string {
  return `Saved ${path} (${formatBytes(bytes)}).`
}

/** "12.3 MB" style byte count. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`
  const units = ['KB', 'MB', 'GB']
  let value = bytes / 1024
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  return `${value.toFixed(1)} ${units[unit]}`
}
