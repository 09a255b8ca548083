/**
 * `gwctl` with no arguments: spec 10 says it opens the desktop app; on a terminal it opens the
 * terminal app (`gwctl open`), whether the gateway runs or not (the app says so and can start
 * it). Not on a terminal, oclif prints the help as usual. Kept tiny: this module loads on every
 * invocation.
 */
import type {Hook} from '@oclif/core'

const bare: Hook.Init = async function (options) {
  if (options.id !== undefined || options.argv.length > 0) return
  if (!process.stdout.isTTY || !process.stdin.isTTY || process.env.GWCTL_NO_DASHBOARD) return
  await options.config.runCommand('open', [])
  // oclif ignores a hook's exit(0) and would print the help after the app.
  process.exit(0)
}

export default bare
