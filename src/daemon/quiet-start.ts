/**
 * The detached daemon's start without V8's optimizing compiler (TurboFan). Loading the daemon's
 * modules resolves a few hundred paths, and that alone makes Node's own path functions
 * (`normalizeString`, `getPathFromURLPosix`) hot enough to be optimized: once TurboFan has
 * compiled anything, about 3.5 MB of its own machine code is paged in from the node binary and
 * its compile zones stay in the malloc arena, about 4 MB of resident memory an idle daemon kept
 * for nothing (start-up code runs once; bench/README.md, "rss60"). So `daemon/main.ts` turns the
 * compiler off before it loads the daemon, and it is turned back on at the first work that
 * repeats: the first model request (before its handler runs) or the first history file a scan
 * reads. A daemon with neither keeps interpreting and baseline-compiling what little it runs.
 * (While the flag is off, V8's flag hash differs and Node compiles the built-in modules loaded
 * meanwhile from source instead of its code cache: the start's CPU stayed the same. `--opt` puts
 * the hash back.)
 *
 * Only the detached daemon does this (`gateway run` has loaded oclif by then, and tests run the
 * lifecycle in their own process: a flag is the whole process's); not when the daemon's node was
 * given an option about the compiler itself (`--no-opt`, `--jitless`, ...), which it keeps; and
 * only on Node 20 and 22. Node 24 turns on V8's middle compiler (Maglev) by default, which
 * `--no-opt` leaves on, and there the code Maglev compiled while TurboFan was off never reaches
 * TurboFan once `--opt` is back (review of rss60: `nextTick`, `writeHead`, `URL` stayed on
 * Maglev after 5 000 requests): a daemon polled for its statusline before its first model
 * request would keep them there for good.
 */
import {setFlagsFromString} from 'node:v8'

import type {Route} from './server.js'

let quiet = false

/** Node options that already decide about the optimizing compiler: left as they are. */
const COMPILER_OPTION = /--(?:no[-_])?(?:opt|turbofan|jitless|max[-_]opt)\b/

/** The newest Node major whose V8 has Maglev off by default (the quiet start's own limit). */
const LAST_NODE_WITHOUT_MAGLEV = 22

/** Turns TurboFan off until {@link endQuietStart} (the detached daemon's first line). */
export function beginQuietStart(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions = process.env.NODE_OPTIONS ?? '',
  nodeMajor = Number.parseInt(process.versions.node, 10),
): boolean {
  if (quiet || !(nodeMajor <= LAST_NODE_WITHOUT_MAGLEV)) return false
  if (COMPILER_OPTION.test(`${execArgv.join(' ')} ${nodeOptions}`)) return false
  setFlagsFromString('--no-opt')
  quiet = true
  return true
}

/** Whether the start is still quiet (TurboFan off). */
export function isQuietStart(): boolean {
  return quiet
}

/** Turns TurboFan back on (nothing when it was never turned off, or is on again already). */
export function endQuietStart(): void {
  if (!quiet) return
  quiet = false
  setFlagsFromString('--opt')
}

/**
 * While the start is quiet, each of `routes` (the model entrances) first ends it, and then every
 * one of them gets its own handler back: later requests call the handler directly, as before.
 */
export function endQuietStartAtFirst(routes: readonly Route[]): void {
  if (!quiet) return
  const handlers = routes.map((route) => route.handler)
  const restore = () => routes.forEach((route, i) => (route.handler = handlers[i]!))
  routes.forEach((route, i) => {
    route.handler = (request, context) => {
      endQuietStart()
      restore()
      return handlers[i]!(request, context)
    }
  })
}
