/**
 * The detached daemon's own entry point: `gwctl gateway start` spawns
 * `node dist/daemon/main.js --port N [--sim]` instead of `bin/run.js gateway run`, so the daemon
 * never loads oclif (its command loader, flag parser, help, semver, minimatch: about 120 modules
 * and 7 MB of resident memory kept for the daemon's whole life). `gwctl gateway run`, the
 * foreground form for systemd, launchd and containers, stays the oclif command; both call
 * `runDaemon`. `gateway start` has checked the flags, the state file and the port before spawning,
 * so the arguments here are trusted; a failure is written to the daemon log (stderr) and ends the
 * process with its exit code, which `gateway start` reports.
 */
import {readFileSync} from 'node:fs'

import {beginQuietStart} from './quiet-start.js'

// TurboFan off while the daemon loads and starts (quiet-start.ts): before its modules are even
// resolved, so they are imported below, not at the top
beginQuietStart()
const [{ExitCode, GwError, fileSystemError}, {runDaemonUntilSignalled}] = await Promise.all([
  import('../core/errors.js'),
  import('./lifecycle.js'),
])

/** `--name value` of argv, or undefined. */
function option(argv: readonly string[], name: string): string | undefined {
  const i = argv.indexOf(name)
  return i >= 0 ? argv[i + 1] : undefined
}

export async function main(argv: readonly string[] = process.argv.slice(2)): Promise<number> {
  const port = Number(option(argv, '--port'))
  const drainSeconds = Number(option(argv, '--drain') ?? 10)
  if (!Number.isInteger(port) || port < 1 || port > 65535 || !(drainSeconds >= 0)) {
    process.stderr.write(`Error: usage: main.js --port <1-65535> [--sim] [--drain <seconds>]\n`)
    return ExitCode.usage
  }
  const {version} = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string
  }
  try {
    await runDaemonUntilSignalled({port, version, drainMs: drainSeconds * 1000, sim: argv.includes('--sim')})
    return ExitCode.ok
  } catch (error) {
    const gw = error instanceof GwError ? error : fileSystemError(error)
    process.stderr.write(`Error: ${gw ? gw.message : ((error as Error)?.stack ?? String(error))}\n`)
    if (gw?.hint) process.stderr.write(`${gw.hint}\n`)
    return gw ? gw.exitCode : ExitCode.unexpected
  }
}

process.exitCode = await main()
