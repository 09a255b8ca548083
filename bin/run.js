#!/usr/bin/env node
// Keep this file tiny: every gwctl invocation pays for what it imports.
import module from 'node:module'

module.enableCompileCache?.()

if (process.argv[2] === '__complete') {
  // A Tab in the shell (`gwctl completion`): answered without oclif, from the script's tree and the state file.
  const {main} = await import('../dist/completion/engine.js')
  const text = main(process.argv.slice(3))
  if (text) process.stdout.write(text + '\n')
} else {
  const {execute} = await import('@oclif/core')
  await execute({dir: import.meta.url})
}
