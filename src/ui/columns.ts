/**
 * Table columns sized to their content and fitted to the terminal's width, for the app's views
 * and the live dashboard: each column is as wide as its widest cell (header included, up to its
 * `max`); when the row is too wide the widest squeezable columns (those that `give` first)
 * give way down to their `min`
 * (cells cut with an ellipsis), and when even the minima do not fit, the least useful columns
 * (highest `drop`) are left out. Nothing is stretched: a narrow table on a wide terminal stays
 * narrow. Pure, so the frames that use it are the same on every terminal of a size.
 */
import {printable} from '../core/output.js'

export interface Column<T> {
  header: string
  value: (row: T) => string
  right?: boolean
  /** Narrowest it is squeezed to; without one it keeps its content's width. */
  min?: number
  /** Widest it grows for its content (default: no limit). */
  max?: number
  /**
   * Left out when the minima do not fit: the highest first; 0 (default) is never left out.
   */
  drop?: number
  /** Squeezed before the others when the row is too wide: the highest first (default 0). */
  give?: number
}

export interface FittedColumn<T> extends Column<T> {
  width: number
}

/** Fits text (escaped: names and models come from outside) into exactly `width` columns. */
export function fit(text: string | number | null | undefined, width: number, right = false): string {
  if (width <= 0) return ''
  const s = printable(String(text ?? ''))
  const cut = s.length > width ? s.slice(0, Math.max(0, width - 1)) + '…' : s
  return right ? cut.padStart(width) : cut.padEnd(width)
}

function widthOf(text: string): number {
  return printable(text).length
}

/**
 * The columns that fit in `width` (one space between two), each with its width, for these rows.
 */
export function fitColumns<T>(
  columns: readonly Column<T>[],
  rows: readonly T[],
  width: number,
): FittedColumn<T>[] {
  let shown = [...columns]
  for (;;) {
    const natural = shown.map((c) => {
      let w = widthOf(c.header)
      for (const r of rows) w = Math.max(w, widthOf(c.value(r)))
      return Math.max(1, Math.min(w, c.max ?? Infinity))
    })
    // a column without a `min` is never squeezed (times, counts, states)
    const minOf = (i: number) => Math.min(natural[i], Math.max(1, shown[i].min ?? natural[i]))
    const widths = [...natural]
    const total = () => widths.reduce((a, b) => a + b, 0) + Math.max(0, shown.length - 1)
    // squeeze the widest column that can give way (those that `give` first), one cell at a time
    while (total() > width) {
      const give = (i: number) => shown[i].give ?? 0
      let at = -1
      for (let i = 0; i < shown.length; i++)
        if (
          widths[i] > minOf(i) &&
          (at < 0 || give(i) > give(at) || (give(i) === give(at) && widths[i] > widths[at]))
        )
          at = i
      if (at < 0) break
      widths[at]--
    }
    const droppable = shown.filter((c) => (c.drop ?? 0) > 0)
    if (total() <= width || droppable.length === 0) return shown.map((c, i) => ({...c, width: widths[i]}))
    const worst = droppable.reduce((a, b) => ((b.drop ?? 0) > (a.drop ?? 0) ? b : a))
    shown = shown.filter((c) => c !== worst)
  }
}

/** One line of fitted columns (the header when `row` is undefined), cut to `width`. */
export function columnsLine<T>(
  columns: readonly FittedColumn<T>[],
  row: T | undefined,
  width: number,
): string {
  const cells = columns.map((c) => fit(row === undefined ? c.header : c.value(row), c.width, c.right))
  return fit(cells.join(' ').trimEnd(), width)
}

/**
 * `fitted` with `column` added at the end when the room left is at least its `min` (its width:
 * its content's, up to that room); `fitted` unchanged otherwise. For a column worth showing only
 * when it costs the others nothing (a request's error).
 */
export function addIfRoom<T>(
  fitted: FittedColumn<T>[],
  column: Column<T>,
  rows: readonly T[],
  width: number,
): FittedColumn<T>[] {
  const used = fitted.reduce((a, c) => a + c.width, 0) + Math.max(0, fitted.length - 1)
  const room = width - used - 1
  let natural = widthOf(column.header)
  for (const r of rows) natural = Math.max(natural, widthOf(column.value(r)))
  if (room < Math.max(1, column.min ?? natural)) return fitted
  return [...fitted, {...column, width: Math.min(room, natural)}]
}
