/** Flags shared by the `gwctl gateway` commands (commands may not import each other). */
import {Flags} from '@oclif/core'

/** `--port` of the commands that start a daemon. */
export const startPortFlag = Flags.integer({
  description: 'Port on 127.0.0.1 (default: GWCTL_GATEWAY_PORT, setting gateway.port, else 4317).',
  min: 1,
  max: 65535,
})

/** `--sim` of the commands that start a daemon. */
export const simFlag = Flags.boolean({
  description:
    'Also run the offline simulator inside the daemon and route every protocol to it (nothing leaves the machine).',
})

/** `--drain` of the commands that stop a daemon. */
export const drainFlag = Flags.integer({
  description: 'Seconds in-flight requests may take to finish.',
  default: 10,
  min: 0,
})
