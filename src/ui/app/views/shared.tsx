/**
 * What the four views of the terminal app share: their props, the selectable row, the window of
 * a list that keeps the selection on screen, and the colours of states. The views are pure
 * components of their props (data, selection, width, height): each line is built to the exact
 * width (`cell` in `../model.ts`), so frames are the same on every terminal of that size and
 * tests compare them whole.
 */
import {Text} from 'ink'

import type {AppData} from '../model.js'

export interface ViewProps {
  data: AppData
  width: number
  /** Lines the view may use. */
  height: number
  selected: number
  now: number
  color: boolean
}

/** A line, selected (marker + inverse) or not. */
export function Row({text, selected, color}: {text: string; selected?: boolean; color: boolean}) {
  return (
    <Text inverse={Boolean(selected) && color} bold={Boolean(selected) && !color}>
      {(selected ? '›' : ' ') + text}
    </Text>
  )
}

/** Which rows of a list of `count` are visible in `height` lines with `selected` on screen. */
export function windowOf(count: number, selected: number, height: number): [number, number] {
  if (count <= height) return [0, count]
  const start = Math.min(Math.max(0, selected - Math.floor(height / 2)), count - height)
  return [start, start + height]
}

const STATE_COLORS: Record<string, string> = {
  closed: 'green',
  open: 'red',
  'half-open': 'yellow',
  bound: 'green',
  unbound: 'gray',
  stale: 'yellow',
}

/** The colour of a breaker or binding state, by its first word; none without colours. */
export function stateColor(text: string, color: boolean): string | undefined {
  return color ? STATE_COLORS[text.split(' ')[0]] : undefined
}
