/**
 * History bench: generates a Claude Code + Codex CLI + Gemini CLI history of about `--mb` MB
 * (default 1000; 50 with --quick) in a temp HOME, flushes it to disk (`sync`), reads it once
 * (untimed), then times
 *   1. `gwctl usage rescan --json` (full rescan into a fresh logs.db), with its peak RSS, and
 *      `ccusage daily --json --offline` on the same files (ccusage 20.0.24, installed with npm
 *      into a temp folder, never into this repo, or CCUSAGE_BIN), each twice, in the order
 *      gwctl, ccusage, ccusage, gwctl; the ratio is of the two runs' total times,
 *   2. an incremental rescan with nothing changed, and one of 10 000 unchanged files (goal
 *      <= 100 ms).
 * It prints the machine's cores and the reader threads the rescan used (`history.threads`, or
 * GWCTL_HISTORY_THREADS, caps them; the default is every core). Peak RSS and CPU time come from
 * GNU time, else from python3's getrusage, else are left out.
 * Run alone: `node bench/history.js [--mb 200] [--quick] [--realistic]` (`--realistic`: ids and folders
 * of a real log's form and length, see `naming`); `npm run bench` runs it last, as generated.
 */
import {spawnSync} from 'node:child_process'
import {createHash} from 'node:crypto'
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  writeSync,
} from 'node:fs'
import {availableParallelism, loadavg, tmpdir} from 'node:os'
import {join} from 'node:path'

const ROOT = new URL('..', import.meta.url).pathname
const pad = 'x'.repeat(600)

function writeFile(path, lines) {
  mkdirSync(join(path, '..'), {recursive: true})
  const fd = openSync(path, 'w')
  writeSync(fd, lines.join('\n') + '\n')
  closeSync(fd)
}

/**
 * The ids and folders the generated lines carry. Short and ordered by default (`s12`, `/work/p3`,
 * `msg_3_45`: a file's keys are next to each other in key order); `realistic` gives them the form
 * and length of a real log's (a UUID session, `msg_01` + 22 random letters and digits, a 40-byte
 * cwd): random keys, as Claude Code writes them, cost a rescan more a row (inserts all over the
 * key order, longer keys and strings to copy).
 */
function naming(realistic) {
  if (!realistic)
    return {
      session: (f) => `s${f}`,
      message: (f, i) => `msg_${f}_${i}`,
      request: (f, i) => `req_${f}_${i}`,
      cwd: (f) => `/work/p${f % 20}`,
      codexSession: (f) => `cx${f}`,
      codexCwd: (f) => `/work/c${f % 10}`,
      geminiSession: (f) => `g${f}`,
    }
  const letters = (s, n) =>
    createHash('sha256').update(s).digest('base64url').replaceAll('-', 'x').replaceAll('_', 'Q').slice(0, n)
  const hex = (s, n) => createHash('sha256').update(s).digest('hex').slice(0, n)
  const uuid = (s) => {
    const h = hex(s, 32)
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
  }
  return {
    session: (f) => uuid(`s${f}`),
    message: (f, i) => `msg_01${letters(`m${f}_${i}`, 22)}`,
    request: (f, i) => `req_011C${letters(`r${f}_${i}`, 20)}`,
    cwd: (f) => `/Users/developer/code/project-${f % 20}-service`,
    codexSession: (f) => uuid(`cx${f}`),
    codexCwd: (f) => `/Users/developer/code/codex-${f % 10}-service`,
    geminiSession: (f) => uuid(`g${f}`),
  }
}

const day = (i) => new Date(Date.UTC(2025, 7, 1) + (i % 60) * 86_400_000 + (i % 1440) * 60_000).toISOString()

function claudeLines(f, n, names = naming(false)) {
  const out = []
  for (let i = 0; i < n; i++) {
    const ts = day(f * 7 + i)
    if (i % 3 === 0)
      out.push(
        JSON.stringify({
          type: 'user',
          sessionId: names.session(f),
          message: {role: 'user', content: pad},
          timestamp: ts,
        }),
      )
    out.push(
      JSON.stringify({
        parentUuid: null,
        isSidechain: false,
        cwd: names.cwd(f),
        sessionId: names.session(f),
        version: '1.0.85',
        type: 'assistant',
        message: {
          id: names.message(f, i),
          role: 'assistant',
          model: 'claude-sonnet-4-20250514',
          content: [{type: 'text', text: pad}],
          usage: {
            input_tokens: 3,
            cache_creation_input_tokens: 300,
            cache_read_input_tokens: 1000,
            output_tokens: 40,
          },
        },
        requestId: names.request(f, i),
        uuid: `u${i}`,
        timestamp: ts,
      }),
    )
  }
  return out
}

function codexLines(f, n, names = naming(false)) {
  const out = [
    JSON.stringify({
      timestamp: day(f),
      type: 'session_meta',
      payload: {id: names.codexSession(f), cwd: names.codexCwd(f)},
    }),
    JSON.stringify({timestamp: day(f), type: 'turn_context', payload: {model: 'gpt-5.2-codex'}}),
  ]
  let total = 0
  for (let i = 0; i < n; i++) {
    total += 1100
    const u = (t) => ({
      input_tokens: t,
      cached_input_tokens: Math.floor(t / 2),
      output_tokens: 100,
      reasoning_output_tokens: 20,
      total_tokens: t + 100,
    })
    out.push(
      JSON.stringify({
        timestamp: day(f + i),
        type: 'response_item',
        payload: {type: 'message', role: 'assistant', content: [{type: 'output_text', text: pad}]},
      }),
    )
    out.push(
      JSON.stringify({
        timestamp: day(f + i),
        type: 'event_msg',
        payload: {type: 'token_count', info: {last_token_usage: u(1000), total_token_usage: u(total)}},
      }),
    )
  }
  return out
}

function geminiLines(f, n, names = naming(false)) {
  const out = [
    JSON.stringify({sessionId: names.geminiSession(f), projectHash: 'h', startTime: day(f), kind: 'main'}),
  ]
  for (let i = 0; i < n; i++) {
    out.push(JSON.stringify({id: `u${i}`, timestamp: day(f + i), type: 'user', content: pad}))
    out.push(
      JSON.stringify({
        id: `m${i}`,
        timestamp: day(f + i),
        type: 'gemini',
        content: pad,
        model: 'gemini-2.5-pro',
        tokens: {input: 1200, output: 80, cached: 1000, thoughts: 40, tool: 0, total: 1320},
      }),
    )
  }
  return out
}

/** Writes about `mb` MB of history under `home` (`realistic`: see `naming`); returns the file count. */
export function generate(home, mb, linesPerFile = 400, realistic = false) {
  const names = naming(realistic)
  const target = mb * 1024 * 1024
  let bytes = 0
  let f = 0
  while (bytes < target) {
    const kind = f % 3
    const lines =
      kind === 0
        ? claudeLines(f, linesPerFile, names)
        : kind === 1
          ? codexLines(f, linesPerFile / 2, names)
          : geminiLines(f, linesPerFile / 2, names)
    const path =
      kind === 0
        ? join(home, '.claude', 'projects', `-work-p${f % 20}`, `s${f}.jsonl`)
        : kind === 1
          ? join(
              home,
              '.codex',
              'sessions',
              '2025',
              '08',
              String((f % 28) + 1).padStart(2, '0'),
              `rollout-2025-08-01T00-00-00-${f}.jsonl`,
            )
          : join(home, '.gemini', 'tmp', `proj${f % 10}`, 'chats', `session-2025-08-01T00-00-${f}.jsonl`)
    writeFile(path, lines)
    bytes += lines.reduce((n, l) => n + l.length + 1, 0)
    f++
  }
  return {files: f, bytes}
}

/**
 * Reads every file under `dir` once (untimed): right after the generator wrote them, the first
 * tool to read the files was 0.4-1.0 s slower than the same tool later in the same run (gwctl
 * first in four full runs, and in runs by hand; with the files read once before, not).
 */
function readAll(dir) {
  const buf = Buffer.allocUnsafe(1 << 20)
  let bytes = 0
  for (const e of readdirSync(dir, {withFileTypes: true, recursive: true})) {
    if (!e.isFile()) continue
    const fd = openSync(join(e.parentPath ?? e.path, e.name), 'r')
    try {
      for (let n; (n = readSync(fd, buf, 0, buf.length, null)) > 0;) bytes += n
    } finally {
      closeSync(fd)
    }
  }
  return bytes
}

/** Dirty page cache waiting for write-back, MB (Linux; undefined elsewhere). */
function dirtyMb() {
  try {
    const kb = /^Dirty:\s+(\d+) kB/m.exec(readFileSync('/proc/meminfo', 'utf8'))?.[1]
    return kb === undefined ? undefined : Math.round(Number(kb) / 1024)
  } catch {
    return undefined
  }
}

/**
 * How a run's peak RSS and CPU time are read: GNU time when installed, else python3's
 * `getrusage(RUSAGE_CHILDREN)` (the 16-core bench machine has python3 and no /usr/bin/time);
 * neither: time only.
 */
const RUSAGE_PY =
  'import resource,subprocess,sys\n' +
  'r=subprocess.run(sys.argv[1:])\n' +
  'u=resource.getrusage(resource.RUSAGE_CHILDREN)\n' +
  'sys.stderr.write("\\n%d %.2f %.2f\\n"%(u.ru_maxrss,u.ru_utime,u.ru_stime))\n' +
  'sys.exit(r.returncode)'
const meter = existsSync('/usr/bin/time')
  ? (cmd, args) => ['/usr/bin/time', ['-f', '%M %U %S', cmd, ...args]]
  : spawnSync('python3', ['-c', '0']).status === 0
    ? (cmd, args) => ['python3', ['-c', RUSAGE_PY, cmd, ...args]]
    : (cmd, args) => [cmd, args]

function timed(cmd, args, env) {
  const started = performance.now()
  process.stderr.write(`history bench: ${[cmd, ...args].join(' ').slice(-80)}\n`)
  const [bin, argv] = meter(cmd, args)
  const r = spawnSync(bin, argv, {
    env: Object.fromEntries(
      Object.entries({...process.env, NODE_EXTRA_CA_CERTS: undefined, ...env}).filter(
        ([, v]) => v !== undefined,
      ),
    ),
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  })
  const ms = performance.now() - started
  const [rssKb, user, sys] = (r.stderr.trim().split('\n').pop() ?? '').trim().split(' ').map(Number)
  // GWCTL_HISTORY_MARKS=1: the rescan's phases (its stderr, less the meter's last line) on ours
  if (process.env.GWCTL_HISTORY_MARKS && r.status === 0)
    process.stderr.write(r.stderr.trim().split('\n').slice(0, -1).join('\n') + '\n')
  if (r.status !== 0)
    throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stderr.slice(0, 500)}`)
  return {
    ms,
    rssMb: Number.isFinite(rssKb) ? rssKb / 1024 : undefined,
    cpuS: Math.round((user + sys) * 10) / 10,
    stdout: r.stdout,
  }
}

/**
 * The ccusage binary to compare with: CCUSAGE_BIN, else ccusage 20.0.24 installed with npm into
 * a temp folder (never into this repo); undefined when that fails (offline).
 */
function ccusageBin(dir) {
  if (process.env.CCUSAGE_BIN) return process.env.CCUSAGE_BIN
  const prefix = join(dir, 'ccusage')
  mkdirSync(prefix, {recursive: true})
  const r = spawnSync(
    'npm',
    ['install', '--prefix', prefix, '--no-save', '--no-audit', '--no-fund', 'ccusage@20.0.24'],
    // no stdin, and never more than a minute (an unreachable or hanging registry: compared without)
    {encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000},
  )
  return r.status === 0 ? join(prefix, 'node_modules', '.bin', 'ccusage') : undefined
}

export async function runHistoryBench({mb = 1000, realistic = false} = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'gwctl-bench-history-'))
  const home = join(dir, 'user-home')
  const env = {
    HOME: home,
    GWCTL_HOME: join(dir, 'gw'),
    XDG_CONFIG_HOME: undefined,
    CLAUDE_CONFIG_DIR: undefined,
    CODEX_HOME: undefined,
    GEMINI_DATA_DIR: undefined,
    GEMINI_CLI_HOME: undefined,
  }
  const results = {cores: availableParallelism()}
  try {
    const g0 = performance.now()
    const gen = generate(home, mb, 400, realistic)
    results.generated = {
      realistic,
      files: gen.files,
      mb: Math.round(gen.bytes / 1048576),
      seconds: Math.round((performance.now() - g0) / 100) / 10,
    }
    // The generator's 1 GB is still being written back to disk for half a minute: that I/O and
    // the kernel's flusher threads would land on whichever tool runs first. Flushed first, then
    // each tool runs twice, in the order gwctl, ccusage, ccusage, gwctl.
    const ccusage = ccusageBin(dir)
    spawnSync('sync')
    results.dirtyMbAfterSync = dirtyMb()
    const w0 = performance.now()
    readAll(home)
    results.warmReadMs = Math.round(performance.now() - w0)
    const rescan = (n) =>
      timed(process.execPath, [join(ROOT, 'bin', 'run.js'), 'usage', 'rescan', '--json'], {
        ...env,
        GWCTL_HOME: join(dir, `gw${n}`),
      })
    const ccusageRun = () => timed(ccusage, ['daily', '--json', '--offline'], env)
    const full = rescan(1)
    const stats = JSON.parse(full.stdout)
    results.gwctlRescan = {
      ms: Math.round(full.ms),
      scanMs: stats.durationMs,
      // reader threads (the command's own and its workers) on this machine's cores
      readers: stats.readers,
      cores: availableParallelism(),
      files: stats.files,
      lines: stats.lines,
      rows: stats.rows,
      rssMb: Math.round(full.rssMb),
      cpuS: full.cpuS,
    }
    const again = timed(
      process.execPath,
      [join(ROOT, 'bin', 'run.js'), 'usage', 'rescan', '--incremental', '--json'],
      {...env, GWCTL_HOME: join(dir, 'gw1')},
    )
    results.gwctlNoChange = {
      ms: Math.round(again.ms),
      scanMs: JSON.parse(again.stdout).durationMs,
      files: gen.files,
    }
    if (ccusage) {
      const c = [ccusageRun(), ccusageRun()]
      const second = rescan(2)
      results.gwctlRescan.runsMs = [full, second].map((r) => Math.round(r.ms))
      results.gwctlRescan.runsCpuS = [full, second].map((r) => r.cpuS)
      results.ccusage = {
        runsMs: c.map((r) => Math.round(r.ms)),
        runsCpuS: c.map((r) => r.cpuS),
        rssMb: Math.round(Math.max(...c.map((r) => r.rssMb))),
      }
      // > 1: gwctl is faster (total time of the two runs each)
      results.ratio = Math.round(((c[0].ms + c[1].ms) / (full.ms + second.ms)) * 100) / 100
    } else results.ccusage = 'skipped: could not install ccusage@20.0.24 (set CCUSAGE_BIN)'
  } finally {
    rmSync(dir, {recursive: true, force: true})
  }
  // 10 000 small unchanged files: the incremental scan only stats them.
  const dir2 = mkdtempSync(join(tmpdir(), 'gwctl-bench-history-'))
  try {
    const home2 = join(dir2, 'user-home')
    for (let f = 0; f < 10_000; f++)
      writeFile(join(home2, '.claude', 'projects', `-p${f % 100}`, `s${f}.jsonl`), claudeLines(f, 1))
    const env2 = {
      HOME: home2,
      GWCTL_HOME: join(dir2, 'gw'),
      XDG_CONFIG_HOME: undefined,
      CLAUDE_CONFIG_DIR: '',
    }
    timed(process.execPath, [join(ROOT, 'bin', 'run.js'), 'usage', 'rescan', '--json'], env2)
    const again = timed(
      process.execPath,
      [join(ROOT, 'bin', 'run.js'), 'usage', 'rescan', '--incremental', '--json'],
      env2,
    )
    results.noChange10k = {scanMs: JSON.parse(again.stdout).durationMs, commandMs: Math.round(again.ms)}
    results.loadAverage = loadavg().map((n) => Math.round(n * 100) / 100)
  } finally {
    rmSync(dir2, {recursive: true, force: true})
  }
  return results
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const i = process.argv.indexOf('--mb')
  const mb = i > 0 ? Number(process.argv[i + 1]) : process.argv.includes('--quick') ? 50 : 1000
  runHistoryBench({mb, realistic: process.argv.includes('--realistic')}).then((r) =>
    console.log(JSON.stringify(r, null, 2)),
  )
}
