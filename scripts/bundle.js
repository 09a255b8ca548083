#!/usr/bin/env node
// Build step (after tsc, before the validators and the manifest): bundles tsc's output in
// build/js into dist/ with rollup, so a command loads a handful of files instead of 20-40.
//
// Node 20 has no compile cache for ES modules: each file costs 0.5-1 ms to resolve, read, compile,
// link and run (`status --json`: 25 files -> 9, 9.5 ms less in 40 paired runs; bench/README.md,
// "Stop 13"). Rollup keeps every module
// once (one instance of each class and cache in a process) and every dynamic `import()` a
// boundary, so the parts a command loads lazily stay lazy. Three kinds of files:
// - entries, at their own path: the oclif commands and hooks, and every file something outside
//   the bundle names by path (the daemon, the history reader worker and the module that starts
//   it, the completion engine, the modules bench/ and test/ import);
// - two shared chunks, for the modules that many entries load and that load nothing heavy:
//   `dist/chunks/core-*.js` (also loaded by the daemon and the completion engine: node: built-ins
//   only in its whole static closure) and `dist/chunks/cli-*.js` (commands and hooks only:
//   @oclif/core and string-width too, which every command has loaded before its code runs);
// - two chunks of the read commands (`logs`, `usage`): what they import, statically
//   or on their usual path lazily, in `dist/chunks/read-cli-*.js` (what only commands load) and
//   `dist/chunks/read-core-*.js` (what the daemon and the workers load too: built-ins only, like
//   core), so `usage --json` reads 7 files instead of 17 (Node 20 spends about 1 ms on each ES
//   module file: bench/README.md, "CLI start-up, 26 November");
// - rollup's own chunks, in dist/chunks/, for the rest (what lowdb, undici, ink need, ...).
// A module that finds a file by `new URL(relative, import.meta.url)` must sit where tsc put it
// or one folder below dist/ (chunks/ is one folder below dist/ too): ENTRY_PATTERNS keeps the
// deeper ones in place.
import {existsSync, readFileSync, readdirSync, rmSync} from 'node:fs'
import {builtinModules} from 'node:module'
import {dirname, isAbsolute, join, relative, resolve, sep} from 'node:path'
import {fileURLToPath} from 'node:url'
import {rollup} from '@rollup/wasm-node'
import {asciiSource} from './ascii-source.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const FROM = join(ROOT, 'build', 'js')
const TO = join(ROOT, 'dist')

const ENTRY_PATTERNS = [
  /^commands\//,
  /^hooks\//,
  /^completion\/engine\.js$/,
  /^core\/id-collation\.js$/, // bin/run.js
  /^services\/usage-statusline\.js$/, // its CommonJS copy is made from it (bin/gwctl.cjs: `gwctl statusline`)
  /^services\/usage-statusline-db\.js$/, // dist/services/usage-statusline.cjs (bin/gwctl.cjs)
  /^daemon\/main\.js$/, // spawned by `gateway start`; reads ../../package.json
  /^gateway\/keys\.js$/, // bench/micro.js
  /^agent-tools\/history\/stage(-worker)?\.js$/, // the worker thread, started by path from stage.js
  /^sim\/server\.js$/, // bench/servers.js
  /^sim\/upstream\//, // test/agents
  /^store\/(state|log-store)\.js$/, // scripts/gen-validators.js, bench/, test/reliability
  /^store\/log-worker\.js$/, // the log writer thread, started by path from log-store.js
  /^daemon\/events\.js$/, // bench/telemetry.js
  /^daemon\/telemetry\/telemetry\.js$/, // bench/telemetry.js
  /^daemon\/telemetry\/otlp-(thread|worker)\.js$/, // the OTLP export thread, started by path from otlp-thread.js
]

/**
 * How many of the ~65 entries must load a module (statically) for it to go to a shared chunk.
 * Lower puts more into core.js and cli.js than a given command needs: at 3, `status --json` read
 * 199 KB in 7 files where unbundled it read 104 KB in 25, and was no faster; at 15, 105 KB in 11.
 */
const SHARED_MIN_ENTRIES = 15
const BUILTIN = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`)])
/** What every command has loaded before its own code runs: oclif, and string-width by our output. */
const CLI_FREE = new Set([...BUILTIN, '@oclif/core', 'string-width'])
/**
 * The read commands whose imports go to the read chunks (see readChunks). Not `status`: it needs
 * 15 KB of them, and loading the chunks' 95 KB cost it 3-12 ms of CPU in paired runs.
 */
const READ_ENTRIES = ['commands/logs', 'commands/usage/index']
/** What they import lazily on their usual path (no filter, the gateway stopped or running). */
const READ_LAZY = ['store/sqlite', 'store/log-query', 'store/usage-query', 'services/usage-rescan']
/**
 * Never in the read chunks: the pricer, which the daemon loads at its first scrape of /metrics
 * (docs/TELEMETRY.md: nothing of it before), while read-core is loaded by the daemon at start.
 */
const READ_NEVER = new Set(['services/usage-cost'])
const isCliEntry = (id) => /^(commands|hooks)\//.test(name(id))

function walk(dir) {
  return readdirSync(dir, {withFileTypes: true}).flatMap((e) =>
    e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith('.js') ? [join(dir, e.name)] : [],
  )
}

const name = (file) => relative(FROM, file).split(sep).join('/')
const input = Object.fromEntries(
  walk(FROM)
    .filter((file) => ENTRY_PATTERNS.some((p) => p.test(name(file))))
    .map((file) => [name(file).replace(/\.js$/, ''), file]),
)

/**
 * The shared chunk of each module that has one: `core` when entries other than commands load it
 * too (the daemon, the completion engine: then its whole static closure may import node:
 * built-ins only), `cli` when only commands and hooks do (oclif and string-width allowed).
 */
function sharedChunks(getModuleInfo, ids) {
  // whether a module's whole static closure imports only `allowed` packages (no entry inside it)
  const closureWithin = (allowed) => {
    const memo = new Map()
    const within = (id, seen) => {
      if (seen.has(id)) return true
      seen.add(id)
      const info = getModuleInfo(id)
      return (
        info !== null &&
        !info.isEntry &&
        info.importedIds.every((dep) =>
          getModuleInfo(dep)?.isExternal ? allowed.has(dep) : within(dep, seen),
        )
      )
    }
    return (id) => {
      if (!memo.has(id)) memo.set(id, within(id, new Set()))
      return memo.get(id)
    }
  }
  const builtinOnly = closureWithin(BUILTIN)
  const cliOnly = closureWithin(CLI_FREE)
  const users = new Map()
  for (const entry of ids.filter((id) => getModuleInfo(id)?.isEntry)) {
    const seen = new Set()
    const stack = [entry]
    // what the daemon (or another entry outside the CLI) may load later counts as its too, so
    // nothing it imports lazily lands in the cli chunk, which would bring oclif into it
    const edges = (info) =>
      isCliEntry(entry) ? info.importedIds : [...info.importedIds, ...info.dynamicallyImportedIds]
    while (stack.length > 0) {
      const info = getModuleInfo(stack.pop())
      for (const dep of info ? edges(info) : []) {
        if (seen.has(dep) || getModuleInfo(dep)?.isExternal) continue
        seen.add(dep)
        users.set(dep, [...(users.get(dep) ?? []), entry])
        stack.push(dep)
      }
    }
  }
  const chunks = new Map()
  for (const [id, entries] of users) {
    if (entries.length < SHARED_MIN_ENTRIES) continue
    if (entries.every(isCliEntry) ? cliOnly(id) : builtinOnly(id)) {
      chunks.set(id, entries.every(isCliEntry) && !builtinOnly(id) ? 'cli' : 'core')
    }
  }
  for (const [id, chunk] of readChunks(getModuleInfo, ids, chunks, users, builtinOnly, cliOnly))
    chunks.set(id, chunk)
  return chunks
}

/**
 * The chunks of the read commands: the static imports of `gwctl logs` and `usage` and
 * of what they load lazily on their usual path ({@link READ_ENTRIES}, {@link READ_LAZY}), in two
 * files instead of one per module. `read-core` gets those that something outside the commands
 * loads too (the daemon): node: built-ins and the core chunk only in their static closure, like
 * the core chunk. `read-cli` gets those only commands load (oclif and string-width allowed).
 * A module goes to one only when its whole static closure does (or is in a shared chunk): rollup
 * adds a manual chunk's unassigned imports to that chunk.
 */
function readChunks(getModuleInfo, ids, chunks, users, builtinOnly, cliOnly) {
  const byName = new Map(ids.map((id) => [name(id).replace(/\.js$/, ''), id]))
  const memo = new Map()
  /** 'read-cli', 'read-core', or false; `core` when only read-core (or shared core) may hold it */
  const chunkOf = (id, core) => {
    const key = `${core}:${id}`
    if (memo.has(key)) return memo.get(key)
    memo.set(key, core ? 'read-core' : 'read-cli') // an import circle: decided by the rest of it
    const info = getModuleInfo(id)
    let chunk = false
    if (info !== null && !info.isEntry && !READ_NEVER.has(name(id).replace(/\.js$/, ''))) {
      if (chunks.has(id)) chunk = !core || chunks.get(id) === 'core' ? chunks.get(id) : false
      else {
        const cliOnlyUsers = !core && (users.get(id) ?? []).every(isCliEntry)
        const deps = (c) => info.importedIds.every((dep) => getModuleInfo(dep)?.isExternal || chunkOf(dep, c))
        if (cliOnlyUsers ? cliOnly(id) && deps(false) : builtinOnly(id) && deps(true))
          chunk = cliOnlyUsers ? 'read-cli' : 'read-core'
      }
    }
    memo.set(key, chunk)
    return chunk
  }
  const read = new Map()
  const stack = [...READ_ENTRIES, ...READ_LAZY].map((n) => {
    if (!byName.has(n)) throw new Error(`scripts/bundle.js: ${n} (READ_ENTRIES or READ_LAZY) is not a module`)
    return byName.get(n)
  })
  const seen = new Set()
  while (stack.length > 0) {
    const id = stack.pop()
    const info = getModuleInfo(id)
    if (!info || info.isExternal || seen.has(id) || chunks.has(id)) continue
    seen.add(id)
    if (!info.isEntry) {
      const chunk = chunkOf(id, false)
      if (!chunk) continue
      read.set(id, chunk)
    }
    for (const dep of info.importedIds) if (!getModuleInfo(dep)?.isEntry) stack.push(dep)
  }
  return read
}

let chunks
const bundle = await rollup({
  input,
  external: (id) => !id.startsWith('.') && !isAbsolute(id) && !id.startsWith('\0'),
  preserveEntrySignatures: 'exports-only',
  onwarn(warning, warn) {
    if (warning.code === 'CIRCULAR_DEPENDENCY') return
    warn(warning)
    if (warning.code !== 'EMPTY_BUNDLE') process.exitCode = 1
  },
})
rmSync(TO, {recursive: true, force: true})
const {output} = await bundle.write({
  dir: TO,
  format: 'es',
  entryFileNames: '[name].js',
  chunkFileNames: 'chunks/[name]-[hash].js',
  manualChunks(id, {getModuleInfo, getModuleIds}) {
    chunks ??= sharedChunks(getModuleInfo, [...getModuleIds()])
    return chunks.get(id)
  },
  generatedCode: 'es2015',
  plugins: [asciiSource],
})
await bundle.close()
// `gwctl statusline` (bin/gwctl.cjs) also gets a CommonJS copy of its module: Node starts a
// CommonJS entry that requires CommonJS faster than an ES one (an empty ES entry alone costs
// 1.16-1.21x `node -e 0`, a CommonJS one 1.01-1.08x; bench/README.md), and the statusline's
// target is 1.2x. The module imports node: built-ins only (its logs.db part stays an ES module,
// loaded by `import()` only without a daemon), and its `createRequire(import.meta.url)` is
// CommonJS's own `require` here.
const statusline = await rollup({
  input: join(FROM, 'services', 'usage-statusline.js'),
  external: (id) => BUILTIN.has(id) || id.startsWith('.'),
  onwarn(warning, warn) {
    warn(warning)
    process.exitCode = 1
  },
})
const CREATE_REQUIRE = /\bnode_module\.createRequire\([^;]*\);/
await statusline.write({
  file: join(TO, 'services', 'usage-statusline.cjs'),
  format: 'cjs',
  generatedCode: 'es2015',
  plugins: [
    asciiSource,
    {
      name: 'commonjs-require',
      renderChunk(code) {
        if (!CREATE_REQUIRE.test(code))
          throw new Error('usage-statusline: its createRequire call was not found')
        return code
          .replace(CREATE_REQUIRE, 'require;')
          .replace(/^(?:var|const) node_module = require\('node:module'\);\n/m, '')
      },
    },
  ],
})
await statusline.close()
for (const m of readFileSync(join(TO, 'services', 'usage-statusline.cjs'), 'utf8').matchAll(
  /import\('(\.[^']+)'\)/g,
)) {
  if (!existsSync(join(TO, 'services', m[1]))) {
    console.error(`dist/services/usage-statusline.cjs imports ${m[1]}, which is not in dist/services/`)
    process.exitCode = 1
  }
}
const files = walk(TO).length
// Every file a bundled module names relative to itself must be there (or be made by the build's
// next step): a module moved into dist/chunks/ from two folders down would miss it silently.
const GENERATED = new Set([join(TO, 'store', 'state-validator.cjs')])
const RELATIVE =
  /new URL\((['"])([^'":]+)\1, import\.meta\.url\)|require(?:\$\d+)?\((['"])(\.\.?\/[^'"]+)\3\)/g
for (const file of walk(TO)) {
  for (const m of readFileSync(file, 'utf8').matchAll(RELATIVE)) {
    const target = resolve(dirname(file), m[2] ?? m[4])
    if (!existsSync(target) && !GENERATED.has(target)) {
      console.error(
        `${relative(ROOT, file)} names ${m[2] ?? m[4]}, which is not at ${relative(ROOT, target)}`,
      )
      process.exitCode = 1
    }
  }
}
// The daemon and the completion engine never load oclif or Ink, however lazily.
const byName = new Map(output.map((o) => [o.fileName, o]))
for (const start of ['daemon/main.js', 'completion/engine.js', 'agent-tools/history/stage-worker.js']) {
  const seen = new Set([start])
  const stack = [start]
  while (stack.length > 0) {
    const chunk = byName.get(stack.pop())
    for (const dep of [...(chunk?.imports ?? []), ...(chunk?.dynamicImports ?? [])]) {
      if (['@oclif/core', 'ink', 'react'].some((pkg) => dep === pkg || dep.startsWith(`${pkg}/`))) {
        console.error(`${start} can load ${dep} (through ${chunk.fileName})`)
        process.exitCode = 1
      }
      if (seen.has(dep) || !byName.has(dep)) continue
      seen.add(dep)
      stack.push(dep)
    }
  }
}
const count = (chunk) => [...(chunks?.values() ?? [])].filter((c) => c === chunk).length
console.log(
  `bundled ${Object.keys(input).length} entries, ${count('core')} modules into core, ${count('cli')} into cli, ${count('read-core')} into read-core and ${count('read-cli')} into read-cli: ${files} files in dist/`,
)
