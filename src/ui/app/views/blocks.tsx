/**
 * The 5-hour windows (`gwctl usage blocks --live`, and the Windows tab of the app): the recent
 * windows, the active one's time left, burn rate and projection, and the weekly totals. Fed by
 * the gateway's event stream (each finished request is added in memory; the log database is read
 * again only when the daemon reports history rows it scanned), redrawn every 15 s for the clock.
 */
import {Box, Text, useApp, useInput} from 'ink'
import {useEffect, useState} from 'react'

import {activeLines, blocksTable, weeksTable} from '../../../cli/usage-columns.js'
import {liveGatewayPort} from '../../../services/gateway-api.js'
import type {EventHandlers} from '../../../services/gateway-events.js'
import {followEvents} from '../../../services/gateway-events.js'
import type {BlocksOptions, BlocksReport, LiveBlocks} from '../../../services/usage-blocks.js'
import {liveBlocks} from '../../../services/usage-blocks.js'
import {runScreen} from '../../screen.js'
import type {ViewProps} from './shared.js'

type Report = Pick<BlocksReport, 'blocks' | 'active' | 'weeks' | 'timezone'>

/** The windows' screen for `report`, cut to `height` lines (the newest windows kept). */
export function BlocksView({
  report,
  width,
  height,
  status,
}: {
  report: Report | null
  width: number
  height: number
  status?: string
}) {
  if (!report) return <Text>{status ?? 'Reading the usage…'}</Text>
  const compact = width < 100
  const active = activeLines(report.active, report.timezone, compact)
  const weeks = report.weeks.length > 0 ? weeksTable(report.weeks.slice(-4), compact).split('\n') : []
  const room = Math.max(2, height - active.length - weeks.length - 3 - (status ? 1 : 0))
  const table = blocksTable({...report, blocks: report.blocks.filter((b) => !b.gap)}, compact).split('\n')
  const shown = table.length > room ? [table[0], ...table.slice(table.length - room + 1)] : table
  const clip = (line: string) => line.slice(0, Math.max(1, width + 32)) // colour codes take no cells
  return (
    <Box flexDirection="column">
      {status ? <Text dimColor>{status}</Text> : null}
      {shown.map((line, i) => (
        <Text key={`t${i}`} wrap="truncate">
          {clip(line)}
        </Text>
      ))}
      <Text> </Text>
      {active.map((line, i) => (
        <Text key={`a${i}`} wrap="truncate" bold={i === 0}>
          {line}
        </Text>
      ))}
      <Text> </Text>
      {weeks.map((line, i) => (
        <Text key={`w${i}`} wrap="truncate">
          {line}
        </Text>
      ))}
    </Box>
  )
}

/** A subscription to the gateway's events (the app's own, or `followEvents` for the CLI). */
type Subscribe = (handlers: EventHandlers, signal: AbortSignal) => Promise<void>

/** Follows the gateway and keeps the windows' report current. */
function useLiveReport(options: LiveOptions, subscribe: Subscribe): {report: Report | null; status: string} {
  const [report, setReport] = useState<Report | null>(null)
  const [status, setStatus] = useState('Connecting to the gateway…')
  useEffect(() => {
    const controller = new AbortController()
    const {signal} = controller
    let live: LiveBlocks | undefined
    const draw = () => live && setReport(live.report())
    const clock = setInterval(draw, 15_000)
    void (async () => {
      try {
        live = await liveBlocks(options)
        draw()
        await subscribe(
          {
            onEvent(event) {
              if (event.type === 'request' && live?.add(event.entry)) draw()
              else if (event.type === 'usage') void live?.reload().then(draw)
            },
            onUp: () => {
              setStatus('live · q quits')
              void live?.reload().then(draw)
            },
            onDown: (reason) => setStatus(`${reason} Waiting for it · q quits`),
          },
          signal,
        )
      } catch (error) {
        if (!signal.aborted) setStatus((error as Error).message)
      }
    })()
    return () => {
      controller.abort()
      clearInterval(clock)
    }
  }, [])
  return {report, status}
}

type LiveOptions = Omit<BlocksOptions, 'signal' | 'now' | 'until'>

/** The Windows tab of the app (on the app's own event subscription). */
export function BlocksTab({
  width,
  height,
  subscribe,
  source = 'all',
}: ViewProps & {subscribe: Subscribe; source?: BlocksOptions['source']}) {
  const {report, status} = useLiveReport(
    {source, since: Math.floor(Date.now() / 1000) - 7 * 86_400},
    subscribe,
  )
  return <BlocksView report={report} width={width - 1} height={height} status={report ? undefined : status} />
}

function LiveBlocksScreen({options}: {options: LiveOptions}) {
  const {exit} = useApp()
  useInput((input, key) => {
    if (input === 'q' || (key.ctrl && input === 'c')) exit()
  })
  const {report, status} = useLiveReport(options, (handlers, signal) =>
    followEvents(() => liveGatewayPort(signal).catch(() => undefined), handlers, {signal}),
  )
  const width = process.stdout.columns ?? 100
  const height = (process.stdout.rows ?? 30) - 1
  return <BlocksView report={report} width={width} height={height} status={status} />
}

/** `gwctl usage blocks --live`: draws until q, Ctrl-C or the signal. */
export async function runBlocksLive(options: LiveOptions & {signal?: AbortSignal}): Promise<void> {
  const {signal, ...rest} = options
  await runScreen(<LiveBlocksScreen options={rest} />, {signal})
}
