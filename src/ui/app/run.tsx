/**
 * Draws the terminal app full-screen (the alternate screen, restored on exit) until the user
 * quits or the signal aborts. Imported only by `gwctl open` and bare `gwctl` on a terminal, so
 * Ink, React and the app never load for other commands.
 */
import {render} from 'ink'

import type {AppActions} from './data.js'
import {liveActions} from './data.js'
import type {ViewName} from './app.js'
import {App} from './app.js'

export async function runApp(
  options: {signal?: AbortSignal; view?: ViewName; actions?: AppActions} = {},
): Promise<void> {
  const {signal} = options
  const color =
    !(process.env.NO_COLOR !== undefined && process.env.NO_COLOR !== '') && process.env.FORCE_COLOR !== '0'
  const alternate = process.stdout.isTTY
  if (alternate) process.stdout.write('\u001b[?1049h\u001b[H')
  const app = render(
    <App actions={options.actions ?? liveActions} initialView={options.view} color={color} />,
    {
      exitOnCtrlC: true,
    },
  )
  const onAbort = () => app.unmount()
  signal?.addEventListener('abort', onAbort, {once: true})
  try {
    await app.waitUntilExit()
  } finally {
    signal?.removeEventListener('abort', onAbort)
    if (alternate) process.stdout.write('\u001b[?1049l')
  }
}
