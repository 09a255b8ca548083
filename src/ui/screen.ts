/**
 * The one way gwctl draws a full-screen Ink app (`gwctl open`, the live `gwctl dashboard`): the
 * alternate screen while it runs (the shell's screen comes back on exit, even on an error),
 * Ctrl-C quits, an aborted signal unmounts, and Ink redraws only the lines that changed.
 *
 * Callers delete `process.env.CI` before importing Ink (its is-in-ci check runs at import and
 * would draw only the last frame); they have checked that stdout is a terminal.
 */
import {render} from 'ink'
import type {ReactElement} from 'react'

/** Colours unless NO_COLOR is set (non-empty) or FORCE_COLOR=0. */
export function colorEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return !(env.NO_COLOR !== undefined && env.NO_COLOR !== '') && env.FORCE_COLOR !== '0'
}

export interface ScreenOptions {
  signal?: AbortSignal
  /** Draw on the alternate screen (default: when stdout is a terminal). */
  alternateScreen?: boolean
  stdout?: NodeJS.WriteStream
  /** Route console output above the app (default true; tests under a patched console turn it off). */
  patchConsole?: boolean
}

/** Renders `element` until it exits (q, Ctrl-C) or the signal aborts. */
export async function runScreen(element: ReactElement, options: ScreenOptions = {}): Promise<void> {
  const {signal} = options
  const stdout = options.stdout ?? process.stdout
  const alternate = options.alternateScreen ?? Boolean(stdout.isTTY)
  if (signal?.aborted) return
  if (alternate) stdout.write('\u001b[?1049h\u001b[H')
  try {
    const app = render(element, {
      stdout,
      exitOnCtrlC: true,
      incrementalRendering: true,
      patchConsole: options.patchConsole ?? true,
    })
    const onAbort = () => app.unmount()
    signal?.addEventListener('abort', onAbort, {once: true})
    try {
      await app.waitUntilExit()
    } finally {
      signal?.removeEventListener('abort', onAbort)
    }
  } finally {
    // the alternate screen gives the shell its screen back; inline, the last frame stays and the
    // shell's prompt goes on the next line, not glued to the frame's last line
    stdout.write(alternate ? '\u001b[?1049l' : '\n')
  }
}
