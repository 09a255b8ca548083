#!/usr/bin/env node
// Keep this file tiny: every gwctl invocation pays for what it imports. The `gwctl` command is
// bin/gwctl.cjs, which answers `gwctl statusline` itself and imports this file for the rest.
import {existsSync} from 'node:fs'
import module from 'node:module'
import {homedir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'

module.enableCompileCache?.()

if (process.argv[2] === '__complete') {
  // A Tab in the shell (`gwctl completion`): answered without oclif, from the script's tree and the state file.
  const {main} = await import('../dist/completion/engine.js')
  const text = main(process.argv.slice(3))
  if (text) process.stdout.write(text + '\n')
} else {
  // oclif sorts the command ids with localeCompare on every start: see id-collation.ts.
  const {collateIdsWithoutIcu} = await import('../dist/core/id-collation.js')
  collateIdsWithoutIcu()
  // On load, @oclif/core checks Node against its own `engines` with semver: 48 modules, about a
  // tenth of every command's start-up. gwctl's own `engines` is checked by npm at install. Unset
  // again at once, so the daemon and the agents gwctl starts never inherit it.
  const skipEngineCheck = process.env.OCLIF_DISABLE_ENGINE_WARNING === undefined
  if (skipEngineCheck) process.env.OCLIF_DISABLE_ENGINE_WARNING = '1'
  // gwctl runs its compiled dist/: never oclif's TypeScript lookup, which with NODE_ENV=development
  // or test (common in a developer's shell, and vitest's) loads the TypeScript compiler into every
  // command, +250 ms and +38 MB.
  globalThis.oclif = {...globalThis.oclif, enableAutoTranspile: false}
  const {execute, Plugin} = await import('@oclif/core')
  if (skipEngineCheck) delete process.env.OCLIF_DISABLE_ENGINE_WARNING
  const plugins = await loadPlugins(Plugin)
  // `gwctl` alone on a terminal opens the terminal app (spec 10), whether the gateway runs or not
  // (the app says so and can start it); not on a terminal, oclif prints the help. Decided here, not
  // in an oclif init hook, which every command would load and run (one more ES module file).
  const app =
    process.argv.length === 2 &&
    process.stdout.isTTY &&
    process.stdin.isTTY &&
    !process.env.GWCTL_NO_DASHBOARD
  await execute({
    ...(plugins ? {loadOptions: {root: fileURLToPath(import.meta.url), plugins}} : {dir: import.meta.url}),
    ...(app ? {args: ['open']} : {}),
  })
}

/**
 * gwctl's root plugin and the plugins its package.json names (`oclif.plugins`), loaded as oclif
 * loads them, for oclif to use as they are. Left to oclif, it would match each of the package's
 * dependencies against every name with minimatch on every start (a parse and a regular expression
 * each: about 2 % of a command's start-up) and look for user plugins. Undefined (oclif loads them
 * itself) whenever that could find anything more: a pattern rather than a name, dev plugins, a
 * plugin naming plugins of its own, or a user plugin file (gwctl has no `plugins install`, but a
 * file written by hand is still honoured).
 */
async function loadPlugins(Plugin) {
  try {
    if (process.platform === 'win32') return undefined
    const home = process.env.HOME || homedir()
    const data =
      process.env.GWCTL_DATA_DIR || join(process.env.XDG_DATA_HOME || join(home, '.local', 'share'), 'gwctl')
    if (existsSync(join(data, 'package.json'))) return undefined
    const root = new Plugin({root: fileURLToPath(import.meta.url), isRoot: true})
    await root.load()
    const {plugins = [], devPlugins} = root.pjson.oclif
    if (
      devPlugins ||
      plugins.some((name) => typeof name !== 'string' || /[*?[\]{}!()+@]/.test(name.slice(1)))
    )
      return undefined
    // (oclif loads a named plugin only when it is a dependency)
    const dependencies = root.pjson.dependencies ?? {}
    const children = await Promise.all(
      plugins
        .filter((name) => Object.hasOwn(dependencies, name))
        .map(async (name) => {
          const plugin = new Plugin({name, root: root.root, type: 'core'})
          await plugin.load()
          return plugin
        }),
    )
    if (children.some((p) => p.pjson.oclif.plugins)) return undefined
    return new Map([root, ...children].map((p) => [p.name, p]))
  } catch {
    return undefined // oclif loads them itself, and reports what is wrong
  }
}
