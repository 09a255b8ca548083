#!/usr/bin/env node
// Keep this file tiny: every gwctl invocation pays for what it imports.
import module from 'node:module'

module.enableCompileCache?.()

const {execute} = await import('@oclif/core')
await execute({dir: import.meta.url})
