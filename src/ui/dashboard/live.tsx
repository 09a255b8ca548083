/**
 * The live dashboard (Ink): polls the gateway every second and redraws; q or Ctrl-C quits.
 * Imported only by `gwctl dashboard` on a terminal, so Ink and React never load at start-up.
 */
import {useApp, useInput, useStdout} from 'ink'
import {useEffect, useState} from 'react'

import type {DashboardData} from '../../services/dashboard.js'
import {runScreen} from '../screen.js'
import {DashboardView} from './view.js'

export interface LiveDashboardProps {
  load: (signal: AbortSignal) => Promise<DashboardData>
  /** What to draw before the first refresh. */
  initial?: DashboardData | null
  intervalMs?: number
}

export function LiveDashboard({load, initial = null, intervalMs = 1000}: LiveDashboardProps) {
  const {exit} = useApp()
  const {stdout} = useStdout()
  const [data, setData] = useState<DashboardData | null>(initial)
  const [error, setError] = useState<string | null>(null)
  useInput((input, key) => {
    if (input === 'q' || (key.ctrl && input === 'c')) exit()
  })
  useEffect(() => {
    const controller = new AbortController()
    let timer: NodeJS.Timeout | undefined
    const tick = async () => {
      try {
        setData(await load(controller.signal))
        setError(null)
      } catch (e) {
        if (controller.signal.aborted) return
        setError((e as Error).message)
      }
      if (!controller.signal.aborted) timer = setTimeout(() => void tick(), intervalMs)
    }
    void tick()
    return () => {
      controller.abort()
      if (timer) clearTimeout(timer)
    }
  }, [load, intervalMs])
  return <DashboardView data={data} error={error} columns={stdout?.columns} rows={stdout?.rows} />
}

/** Draws the live dashboard until the user quits (or the signal aborts). */
export async function runLiveDashboard(
  load: (signal: AbortSignal) => Promise<DashboardData>,
  options: {initial?: DashboardData; signal?: AbortSignal} = {},
): Promise<void> {
  // Inline, as before: the dashboard stays on screen after q (a last snapshot in the scrollback).
  await runScreen(<LiveDashboard load={load} initial={options.initial} />, {
    signal: options.signal,
    alternateScreen: false,
  })
}
