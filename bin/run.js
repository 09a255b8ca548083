#!/usr/bin/env node
// Keep this file tiny: every gwctl invocation pays for what it imports.
import module from 'node:module'

module.enableCompileCache?.()

if (process.argv[2] === '__complete') {
  // A Tab in the shell (`gwctl completion`): answered without oclif, from the script's tree and the state file.
  const {main} = await import('../dist/completion/engine.js')
  const text = main(process.argv.slice(3))
  if (text) process.stdout.write(text + '\n')
} else if (process.argv[2] === 'statusline' && process.argv.length === 3) {
  // Claude Code's statusLine command, run after every message: answered without oclif by one
  // small file that imports node: built-ins only, from the daemon's memory (one loopback request),
  // or from logs.db when no daemon answers (src/services/usage-statusline.ts).
  const {main} = await import('../dist/services/usage-statusline.js')
  process.stdout.write((await main()) + '\n')
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
  const {execute} = await import('@oclif/core')
  if (skipEngineCheck) delete process.env.OCLIF_DISABLE_ENGINE_WARNING
  await execute({dir: import.meta.url})
}
