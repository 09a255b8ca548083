/**
 * `gwctl` with no arguments: spec 10 says it opens the desktop app; there is none, so on a
 * terminal with the gateway running it opens the live dashboard instead, and otherwise oclif
 * prints the help as usual. Kept tiny: this module loads on every invocation.
 */
import type {Hook} from '@oclif/core'

const bare: Hook.Init = async function (options) {
  if (options.id !== undefined || options.argv.length > 0) return
  if (!process.stdout.isTTY || !process.stdin.isTTY || process.env.GWCTL_NO_DASHBOARD) return
  const {runningDaemon} = await import('../../daemon/pidfile.js')
  if (!runningDaemon()) return
  await options.config.runCommand('dashboard', [])
  // oclif ignores a hook's exit(0) and would print the help after the dashboard.
  process.exit(0)
}

export default bare
