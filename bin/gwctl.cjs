#!/usr/bin/env node
// The `gwctl` command (package.json "bin"). A CommonJS file: Node starts one faster than an ES
// module, and `gwctl statusline` (Claude Code's statusLine command, run after every message) is
// answered from here by requiring one CommonJS file (dist/services/usage-statusline.cjs: node:
// built-ins, one loopback request to the daemon), so a call costs about one bare Node start.
// Everything else is bin/run.js, an ES module (oclif, the completion engine).
'use strict'

if (process.argv[2] === 'statusline' && process.argv.length === 3) {
  require('../dist/services/usage-statusline.cjs')
    .main()
    .then((line) => {
      // written to fd 1 directly: `process.stdout` on a pipe (as Claude Code reads it) is a
      // net.Socket, and loading node:net's streams costs more than the rest of the call
      try {
        require('node:fs').writeSync(1, line + '\n')
      } catch {
        process.stdout.write(line + '\n') // EAGAIN: a non-blocking pipe that is full
      }
    })
} else {
  import('./run.js').catch((error) => {
    process.stderr.write(`gwctl: ${error.stack ?? error}\n`)
    process.exitCode = 1
  })
}
