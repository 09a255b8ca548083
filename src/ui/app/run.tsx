/**
 * Draws the terminal app full-screen (the alternate screen, restored on exit) until the user
 * quits or the signal aborts. Imported only by `gwctl open` and bare `gwctl` on a terminal, so
 * Ink, React and the app never load for other commands.
 */
import {colorEnabled, runScreen} from '../screen.js'
import type {AppActions} from './data.js'
import {liveActions} from './data.js'
import type {ViewName} from './model.js'
import {App} from './app.js'

export async function runApp(
  options: {signal?: AbortSignal; view?: ViewName; actions?: AppActions} = {},
): Promise<void> {
  await runScreen(
    <App actions={options.actions ?? liveActions} initialView={options.view} color={colorEnabled()} />,
    {signal: options.signal},
  )
}
