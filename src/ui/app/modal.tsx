/**
 * The terminal app's modal boxes: a confirmation, a new key shown once, a request's details, a
 * policy picker, a message and the help of the keys.
 */
import {Box, Text} from 'ink'

import type {LogRow} from '../../store/log-query.js'
import type {AppAgent} from './model.js'
import {cell} from './model.js'
import {RequestDetail} from './views/requests.js'

export type Modal =
  | {kind: 'confirm'; title: string; run: () => Promise<void>}
  | {kind: 'key'; title: string; key: string}
  | {kind: 'request'; row: LogRow}
  | {kind: 'policy'; agent: AppAgent; selected: number}
  | {kind: 'help'}
  | {kind: 'message'; text: string; error: boolean}

/** The box of a modal, in place of the view. */
export function ModalBox({
  modal,
  width,
  policies,
  names,
}: {
  modal: Modal
  width: number
  policies: string[]
  names: Map<string, string>
}) {
  const w = Math.min(width - 4, 76)
  if (modal.kind === 'request') return <RequestDetail row={modal.row} names={names} width={w + 4} />
  const lines: string[] = []
  let title = ''
  let footer = ''
  if (modal.kind === 'confirm') {
    title = 'Confirm'
    lines.push(modal.title)
    footer = 'y yes · n no'
  } else if (modal.kind === 'key') {
    title = 'New key'
    lines.push(modal.title, '', modal.key)
    footer = 'Enter or Esc dismisses; the key is not shown again'
  } else if (modal.kind === 'message') {
    title = modal.error ? 'Error' : 'Done'
    lines.push(modal.text)
    footer = 'Enter or Esc closes'
  } else if (modal.kind === 'help') {
    title = 'Keys'
    lines.push(
      'Tab / Shift-Tab, 1-5   switch view (Agents, Routes, Requests, Usage, Windows)',
      '↑ ↓ (j k), PgUp PgDn   select',
      'Enter                  open / reorder',
      '/                      filter requests: 2xx 4xx 5xx fallback or text',
      'e d                    bind / unbind its own config (agents enable / disable)',
      'r                      rotate its key (a bound config gets the new one)',
      'p                      move it to another policy (a new key, as r)',
      '← → (h l)              usage: group by agent, model, provider, tool, day, …',
      's                      usage: source gateway, history (agents’ logs), all',
      'S                      start the stopped gateway as it last ran',
      '?                      this help · q quit',
    )
    footer = 'Esc or ? closes'
  } else if (modal.kind === 'policy') {
    title = `Policy of ${modal.agent.name}`
    policies.forEach((p, i) =>
      lines.push(`${i === modal.selected ? '›' : ' '} ${p}${p === modal.agent.policyId ? ' (current)' : ''}`),
    )
    footer = '↑↓ select · Enter choose · Esc cancel'
  }
  const wrap = (text: string) => {
    const out: string[] = []
    for (let s = text; ;) {
      if (s.length <= w) {
        out.push(s)
        break
      }
      const cut = s.lastIndexOf(' ', w) > w / 2 ? s.lastIndexOf(' ', w) : w
      out.push(s.slice(0, cut))
      s = s.slice(cut).trimStart()
    }
    return out
  }
  return (
    <Box
      flexDirection="column"
      borderStyle={modal.kind === 'key' ? 'double' : 'single'}
      paddingX={1}
      width={w + 4}
    >
      <Text bold>{cell(title, w)}</Text>
      {lines.flatMap(wrap).map((l, i) => (
        <Text key={i}>{modal.kind === 'key' && l.startsWith('gw-') ? l : cell(l, w)}</Text>
      ))}
      <Text dimColor>{cell(footer, w)}</Text>
    </Box>
  )
}
