// Full rescans of several built checkouts side by side: `node bench/history-ab.js NAME=DIR[=THREADS]
// ...` (e.g. `base=/work/wt-base main=. main9=.=9`). One history is generated (`MB`, default 1000,
// the generator of bench/history.js), flushed and read once; then `ROUNDS` (default 3) rounds, each
// a `gwctl usage rescan --json` of every build in turn into a fresh GWCTL_HOME (THREADS: the
// `history.threads` setting set first) and, with CCUSAGE_BIN, `ccusage daily --json --offline`.
// Prints each run's wall ms, CPU s and peak RSS (/usr/bin/time) and its phases
// (GWCTL_HISTORY_MARKS=1). Interleaved, so that a machine's drift lands on every build alike.
import {spawnSync} from 'node:child_process'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {generate} from './history.js'
const builds = process.argv.slice(2).map((a) => a.split('='))
const dir = mkdtempSync(join(tmpdir(), 'abh-'))
const home = join(dir, 'home')
const t0 = performance.now()
const gen = generate(home, Number(process.env.MB ?? 1000))
console.log(
  'generated',
  gen.files,
  'files',
  Math.round(gen.bytes / 1048576),
  'MB in',
  Math.round(performance.now() - t0),
  'ms',
)
spawnSync('sync')
spawnSync('sh', ['-c', `find ${home} -type f -exec cat {} + > /dev/null`])
const env = {
  ...process.env,
  HOME: home,
  NODE_EXTRA_CA_CERTS: '',
  GWCTL_HISTORY_MARKS: '1',
  CLAUDE_CONFIG_DIR: '',
  CODEX_HOME: '',
  GEMINI_DATA_DIR: '',
  GEMINI_CLI_HOME: '',
  XDG_CONFIG_HOME: '',
}
for (const k of ['CLAUDE_CONFIG_DIR', 'CODEX_HOME', 'GEMINI_DATA_DIR', 'GEMINI_CLI_HOME', 'XDG_CONFIG_HOME'])
  delete env[k]
const run = (cmd, args, extra = {}) => {
  const t = performance.now()
  const r = spawnSync('/usr/bin/time', ['-f', '%M %U %S', cmd, ...args], {
    env: {...env, ...extra},
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  })
  const ms = performance.now() - t
  const lines = r.stderr.trim().split('\n')
  const [rss, u, s] = lines.pop().split(' ').map(Number)
  return {
    ms: Math.round(ms),
    cpu: Math.round((u + s) * 10) / 10,
    rssMb: Math.round(rss / 1024),
    status: r.status,
    marks: lines.filter((l) => l.startsWith('{')).join(' '),
    out: r.stdout.slice(0, 200),
    err: r.status ? r.stderr.slice(0, 400) : '',
  }
}
const rounds = Number(process.env.ROUNDS ?? 3)
for (let round = 0; round < rounds; round++) {
  for (const [name, root, threads] of builds) {
    const gw = mkdtempSync(join(dir, 'gw-'))
    if (threads)
      spawnSync(process.execPath, [join(root, 'bin/run.js'), 'config', 'set', 'history.threads', threads], {
        env: {...env, GWCTL_HOME: gw},
      })
    const r = run(process.execPath, [join(root, 'bin/run.js'), 'usage', 'rescan', '--json'], {GWCTL_HOME: gw})
    console.log(
      round,
      name.padEnd(10),
      r.ms,
      'ms',
      r.cpu,
      'cpu-s',
      r.rssMb,
      'MB',
      r.status ? `FAILED ${r.err}` : '',
      '\n   ',
      r.marks,
    )
    rmSync(gw, {recursive: true, force: true})
  }
  if (process.env.CCUSAGE_BIN) {
    const c = run(process.env.CCUSAGE_BIN, ['daily', '--json', '--offline'])
    console.log(round, 'ccusage   ', c.ms, 'ms', c.cpu, 'cpu-s', c.rssMb, 'MB')
  }
}
rmSync(dir, {recursive: true, force: true})
