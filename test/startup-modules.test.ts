// What the read commands load: the files of the bundled build (scripts/bundle.js) and the node:
// built-ins. Structure, not timings: each assertion names a load that once cost milliseconds
// of every call (node:crypto 4-6 ms, ajv's compiler about 40 ms, ICU's collator 8-10 ms).
import {spawnSync} from 'node:child_process'
import {readdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {parseAst} from '@rollup/wasm-node/parseAst'
import {afterEach, describe, expect, it} from 'vitest'

// @ts-expect-error a plain JS script, without types
import {asciiEscape} from '../scripts/ascii-source.js'
import {LogStore} from '../src/store/log-store.js'
import {BIN, ROOT, cliEnv, tempHome} from './helpers/cli.js'
import {logEntry} from './helpers/log-entry.js'
import {fakeStatuslineDaemon} from './helpers/statusline-daemon.js'

/**
 * A preload that lists every file the process loads (ES modules through a resolve hook, which runs
 * on the loader's thread and appends to the file itself; CommonJS through the resolver) and, at
 * exit, every node: built-in.
 */
const PRELOAD = `
import {createRequire, register} from 'node:module'
import {appendFileSync} from 'node:fs'
register('data:text/javascript,' + encodeURIComponent(\`
import {appendFileSync} from 'node:fs'
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context)
  if (r.url.startsWith('file:')) appendFileSync(process.env.MODULES_OUT, r.url + '\\\\n')
  return r
}\`))
const Module = createRequire(import.meta.url)('node:module')
const resolveFilename = Module._resolveFilename
Module._resolveFilename = function (...args) {
  const file = resolveFilename.apply(this, args)
  if (file.startsWith('/')) appendFileSync(process.env.MODULES_OUT, 'file://' + file + '\\n')
  return file
}
process.on('exit', () => {
  for (const m of process.moduleLoadList) if (m.startsWith('NativeModule ')) appendFileSync(process.env.MODULES_OUT, 'node:' + m.slice(13) + '\\n')
})
`

interface Loaded {
  exitCode: number | null
  /** Files under dist/, relative to it. */
  dist: string[]
  /** Files under node_modules/, relative to it. */
  modules: string[]
  /** Files under node_modules/, by package. */
  packages: Set<string>
  builtins: Set<string>
}

describe('what a read command loads', () => {
  const cleanups: Array<() => void> = []
  afterEach(() => {
    while (cleanups.length > 0) cleanups.pop()!()
  })

  function load(home: string, args: string[], extra: Record<string, string | undefined> = {}): Loaded {
    const preload = join(home, 'preload.mjs')
    const out = join(home, 'modules.txt')
    writeFileSync(preload, PRELOAD)
    const r = spawnSync(process.execPath, ['--import', preload, BIN, ...args], {
      env: {...process.env, ...cliEnv(home), MODULES_OUT: out, ...extra} as NodeJS.ProcessEnv,
      encoding: 'utf8',
    })
    const lines = readFileSync(out, 'utf8').split('\n').filter(Boolean)
    const urls = lines.filter((l) => l.startsWith('file:'))
    const builtins = lines.filter((l) => l.startsWith('node:')).map((l) => l.slice(5))
    const files = urls
      .filter((u) => u.startsWith('file://'))
      .map((u) => decodeURIComponent(new URL(u).pathname))
    const under = (folder: string) => [
      ...new Set(
        files
          .filter((f) => f.startsWith(join(ROOT, folder) + '/'))
          .map((f) => f.slice(ROOT.length + folder.length + 2)),
      ),
    ]
    const dist = under('dist')
    const packages = new Set(
      files
        .filter((f) => f.includes('/node_modules/'))
        .map((f) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(f)![1]),
    )
    return {exitCode: r.status, dist, modules: under('node_modules'), packages, builtins: new Set(builtins)}
  }

  function home(): string {
    const {home, cleanup} = tempHome()
    cleanups.push(cleanup)
    return home
  }

  it('status --json on a new state file: the generated validator, not ajv; no crypto, SQLite or Ink', () => {
    const h = home()
    const issue = spawnSync(
      process.execPath,
      [
        BIN,
        'key',
        'issue',
        '--agent-name',
        'a',
        '--agent-type',
        'codex',
        '--employee-name',
        'A',
        '--employee-contact',
        'a@example.com',
      ],
      {env: {...process.env, ...cliEnv(h)} as NodeJS.ProcessEnv, encoding: 'utf8'},
    )
    expect(issue.status, issue.stderr).toBe(0)
    // a state file nobody has checked yet: status validates it
    rmSync(join(h, 'state.json.checked'), {force: true})
    const loaded = load(h, ['status', '--json'])
    expect(loaded.exitCode).toBe(6) // the gateway is stopped
    expect(loaded.packages).toContain('lowdb')
    // the standalone validator needs one small ajv runtime helper, never its compiler
    expect(loaded.dist).toContain('store/state-validator.cjs')
    expect(loaded.modules.filter((m) => m.startsWith('ajv/') && !m.startsWith('ajv/dist/runtime/'))).toEqual(
      [],
    )
    expect(loaded.packages).not.toContain('better-sqlite3')
    expect(loaded.packages).not.toContain('ink')
    expect(loaded.packages).not.toContain('undici')
    expect(loaded.packages).not.toContain('typescript') // vitest's NODE_ENV=test: see bin/run.js
    expect([...loaded.builtins].filter((b) => b.includes('crypto'))).toEqual([])
    // bundled: the command, its chunks and bin/run.js's collation, not 25 modules
    expect(loaded.dist.length, loaded.dist.join(' ')).toBeLessThanOrEqual(11)
  })

  it('logs and usage read SQLite without crypto, ajv or Ink', () => {
    const h = home()
    for (const args of [
      ['logs', '--limit', '5'],
      ['usage', '--json'],
    ]) {
      const loaded = load(h, args)
      expect(loaded.exitCode, args.join(' ')).toBe(0)
      expect(
        [...loaded.builtins].filter((b) => b.includes('crypto')),
        args.join(' '),
      ).toEqual([])
      for (const heavy of ['ajv', 'ink', 'react', 'undici', 'typescript'])
        expect(loaded.packages, args.join(' ')).not.toContain(heavy)
    }
  })

  it('logs and usage over a logs.db with rows: SQLite opened, their modules in the two read chunks', async () => {
    const h = home()
    const store = await LogStore.open(join(h, 'logs.db'))
    for (let i = 0; i < 20; i++)
      store.append(logEntry({time: Date.now() - i * 60_000, requestId: `req_${i}`}))
    store.close()
    for (const args of [
      ['logs', '--limit', '5'],
      ['usage', '--json'],
    ]) {
      rmSync(join(h, 'modules.txt'), {force: true}) // load() appends to it
      const loaded = load(h, args)
      expect(loaded.exitCode, args.join(' ')).toBe(0)
      expect(loaded.packages, args.join(' ')).toContain('better-sqlite3')
      // scripts/bundle.js's read chunks: the command, the shared core and cli chunks, read-core
      // and read-cli, bin/run.js's collation, and for usage the pricer (a chunk
      // of its own: the daemon loads read-core at start, the pricer only at its first scrape);
      // 11 and 17 files before them, 7 and 8 with oclif's init hook (Node 20 spends about 1 ms on
      // each ES module file)
      expect(loaded.dist.filter((f) => f.startsWith('chunks/read-')).length, loaded.dist.join(' ')).toBe(2)
      expect(loaded.dist.length, loaded.dist.join(' ')).toBeLessThanOrEqual(args[0] === 'usage' ? 7 : 6)
    }
  })

  it('statusline is answered without oclif: no @oclif/core, price table, Ink or ajv (no logs.db: no SQLite either)', () => {
    const loaded = load(home(), ['statusline'])
    expect(loaded.exitCode).toBe(0)
    for (const pkg of ['@oclif/core', '@pydantic/genai-prices', 'better-sqlite3', 'ink', 'react', 'ajv'])
      expect(loaded.packages.has(pkg), pkg).toBe(false)
    expect(loaded.dist.some((f) => f.startsWith('commands/'))).toBe(false)
  })

  it('statusline with the gateway running: one small file of dist/ and node: built-ins, no package, not node:http', async () => {
    const h = home()
    const daemon = await fakeStatuslineDaemon(h, 'figures', {
      today: {usd: 1, unpriced: false},
      session: null,
      window: null,
    })
    cleanups.push(() => daemon.stop())
    const loaded = load(h, ['statusline'])
    expect(loaded.exitCode).toBe(0)
    expect(daemon.requests()).toHaveLength(1)
    expect(loaded.dist).toEqual(['services/usage-statusline.cjs'])
    expect(loaded.modules).toEqual([])
    expect(loaded.builtins.has('http')).toBe(false)
    // what the daemon publishes once asked (statusline.json): read, with no socket, no stdin or
    // stdout stream, so not node:net at all
    writeFileSync(
      join(h, 'statusline.json'),
      JSON.stringify({
        v: 1,
        pid: daemon.pid,
        written: Date.now(),
        lines: {
          [`${Math.floor(Date.now() / 86_400_000) * 86_400_000} `]: {
            today: {usd: 2, unpriced: false},
            session: null,
            window: null,
          },
        },
      }),
    )
    const published = load(h, ['statusline'])
    expect(published.exitCode).toBe(0)
    expect(daemon.requests()).toHaveLength(1)
    expect(published.dist).toEqual(['services/usage-statusline.cjs'])
    // the built-ins it loads beyond a bare `node -e 0` (a CommonJS preload: the module hooks of
    // load() load node:net themselves), stdin and stdout pipes as Claude Code gives them
    const pre = join(h, 'builtins.cjs')
    writeFileSync(
      pre,
      `process.on('exit', () => require('node:fs').writeFileSync(process.env.BUILTINS_OUT, process.moduleLoadList.join('\\n')))`,
    )
    const builtins = (args: string[]) => {
      const outFile = join(h, 'builtins.txt')
      const r = spawnSync(process.execPath, ['-r', pre, ...args], {
        env: {...process.env, ...cliEnv(h), BUILTINS_OUT: outFile} as NodeJS.ProcessEnv,
        input: JSON.stringify({session_id: ''}),
        encoding: 'utf8',
      })
      expect(r.status).toBe(0)
      return {stdout: r.stdout, loaded: readFileSync(outFile, 'utf8').split('\n')}
    }
    const bare = new Set(builtins(['-e', '0']).loaded)
    const call = builtins([BIN, 'statusline'])
    expect(call.stdout).toBe('today $2.00 · no active 5h window\n')
    const more = call.loaded.filter((m) => !bare.has(m))
    expect(more.filter((m) => /\b(net|stream|streams\/|tty)\b/.test(m))).toEqual([])
  })
})

describe('the source text the daemon and commands hold', () => {
  // V8 keeps a module's source in the heap while the module lives, one byte a character only when
  // every character is Latin-1: one `≤` in a message doubled the daemon's 256 KB lifecycle chunk.
  // scripts/bundle.js escapes what is past ASCII; the outputs above (`·`) prove the escapes mean
  // the same characters.
  it('every JavaScript file of dist/ is ASCII', () => {
    const files = readdirSync(join(ROOT, 'dist'), {recursive: true, encoding: 'utf8'}).filter((f) =>
      /\.c?js$/.test(f),
    )
    expect(files.length).toBeGreaterThan(50)
    // (the state validator too, which scripts/gen-validators.js writes after the bundles)
    expect(files).toContain(join('store', 'state-validator.cjs'))
    const wide = files.filter((f) => /[\u0080-\uffff]/.test(readFileSync(join(ROOT, 'dist', f), 'utf8')))
    expect(wide).toEqual([])
  })

  it("the build's ASCII pass keeps a generated CommonJS validator's meaning (the state validator's form)", () => {
    // what scripts/gen-validators.js does with ajv's code: a pattern and a message past ASCII
    const code = [
      '"use strict";module.exports = validate;',
      'const pattern = new RegExp("^[a-z≤]+$", "u");',
      'function validate(data) { return pattern.test(data) ? true : "must be ≤ 5 · “short”" }',
    ].join('\n')
    const out = asciiEscape(code, 'state-validator.cjs', parseAst) as string
    expect(out).not.toMatch(/[\u0080-\uffff]/)
    const load = (text: string) => {
      const module = {exports: undefined as unknown}
      new Function('module', text)(module)
      return module.exports as (data: string) => true | string
    }
    for (const data of ['ab≤', 'a1'] as const) expect(load(out)(data)).toEqual(load(code)(data))
    expect(asciiEscape('module.exports = 1', 'ascii.cjs', parseAst)).toBeUndefined()
  })
})
