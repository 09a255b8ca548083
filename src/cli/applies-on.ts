/**
 * What applies a change to the gateway's policies or providers (`policies route/set/remove`,
 * `providers add/remove`), which write the state file. A running daemon loaded them at its start
 * and does not watch the file, so it needs `gwctl gateway restart`; a stopped one loads them when
 * it starts, and telling its user to restart a gateway that is not running sends them to a
 * command that does something else than they were told (it starts one, without `--sim`).
 */
import {colorErr, err} from '../core/output.js'

/** The command that applies the change now, for `--json`'s `appliesOn`. */
export type AppliesOn = 'gwctl gateway restart' | 'gwctl gateway start'

/** Prints the line that says how the change takes effect (unless `--json`) and returns the command. */
export async function printAppliesOn(json: boolean): Promise<AppliesOn> {
  // only the pid file is read: the daemon is not asked
  const {isGatewayRunning} = await import('../services/gateway.js')
  const running = isGatewayRunning()
  if (!json)
    err(
      colorErr().dim(
        running
          ? 'Run `gwctl gateway restart` to apply it.'
          : 'The gateway is not running: it loads this when it starts (`gwctl gateway start`).',
      ),
    )
  return running ? 'gwctl gateway restart' : 'gwctl gateway start'
}
