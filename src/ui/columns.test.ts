/** Columns sized to content and fitted to a width: squeeze, then leave out, never stretch. */
import {describe, expect, it} from 'vitest'

import type {Column} from './columns.js'
import {addIfRoom, columnsLine, fitColumns} from './columns.js'

type Row = {name: string; model: string; status: number; note: string}
const rows: Row[] = [
  {name: 'claude-code', model: 'anthropic/claude-sonnet-4-5', status: 200, note: ''},
  {name: 'ci', model: 'sim-chat/sim-mini', status: 502, note: 'upstream 502'},
]
const columns: Column<Row>[] = [
  {header: 'NAME', value: (r) => r.name, min: 6},
  {header: 'MODEL', value: (r) => r.model, min: 10},
  {header: 'STATUS', value: (r) => String(r.status), right: true},
  {header: 'NOTE', value: (r) => r.note, min: 8, drop: 1},
]
const lines = (width: number, cols = columns) => {
  const fitted = fitColumns(cols, rows, width)
  return [undefined, ...rows].map((r) => columnsLine(fitted, r, width).trimEnd())
}

describe('fitColumns', () => {
  it('sizes each column to its widest cell and never stretches one on a wide terminal', () => {
    expect(lines(200)).toEqual([
      'NAME        MODEL                       STATUS NOTE',
      'claude-code anthropic/claude-sonnet-4-5    200',
      'ci          sim-chat/sim-mini              502 upstream 502',
    ])
  })

  it('squeezes the widest column with a min first, with an ellipsis; a column without one keeps its width', () => {
    expect(lines(50)).toEqual([
      'NAME        MODEL              STATUS NOTE',
      'claude-code anthropic/claude-…    200',
      'ci          sim-chat/sim-mini     502 upstream 502',
    ])
  })

  it('leaves the droppable column out when the minima do not fit', () => {
    expect(lines(32)).toEqual([
      'NAME        MODEL         STATUS',
      'claude-code anthropic/cl…    200',
      'ci          sim-chat/sim…    502',
    ])
  })

  it('adds a column only where the others leave room for it', () => {
    const base = columns.slice(0, 3)
    const note: Column<Row> = {header: 'NOTE', value: (r) => r.note, min: 8}
    expect(addIfRoom(fitColumns(base, rows, 60), note, rows, 60).map((c) => c.header)).toContain('NOTE')
    expect(addIfRoom(fitColumns(base, rows, 48), note, rows, 48).map((c) => c.header)).not.toContain('NOTE')
  })
})
