// CLI start-up: whole-process timings of gwctl commands against a bare oclif 4 hello command,
// median of interleaved runs (each round runs every command once, in turn, so all of them see
// the same noise). Peak RSS from /usr/bin/time when the machine has it.
//   node bench/cli.js [--runs 15] [--sim-origin http://127.0.0.1:PORT]   (standalone)
//   node bench/cli.js --only statusline [--runs 15] [--gw OTHER/bin/run.js] (the statusline rows,
//     and N overlapping calls; --gw times another checkout's gwctl, e.g. a build of main, as "before")
//   import {cliStartup} from './cli.js'                                  (from bench/run.js)
import {spawn, spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {createServer} from 'node:net'
import {join, resolve} from 'node:path'
import {fileURLToPath} from 'node:url'

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)))

/**
 * A bare oclif 4 project with one `hello` command, in a temp folder, using this repo's
 * @oclif/core (symlinked node_modules) and the same bin/run.js shape as gwctl (compile cache on).
 */
function helloProject() {
  const dir = mkdtempSync(join(tmpdir(), 'gwctl-bench-hello-'))
  process.on('exit', () => rmSync(dir, {recursive: true, force: true}))
  mkdirSync(join(dir, 'bin'))
  mkdirSync(join(dir, 'commands'))
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'))
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({
      name: 'hello',
      version: '1.0.0',
      type: 'module',
      oclif: {bin: 'hello', dirname: 'hello', commands: './commands'},
    }),
  )
  writeFileSync(
    join(dir, 'bin', 'run.js'),
    `import module from 'node:module'\nmodule.enableCompileCache?.()\nconst {execute} = await import('@oclif/core')\nawait execute({dir: import.meta.url})\n`,
  )
  writeFileSync(
    join(dir, 'commands', 'hello.js'),
    `import {Command} from '@oclif/core'\nexport default class Hello extends Command {\n  static description = 'Say hello'\n  async run() {\n    this.log('hello world')\n  }\n}\n`,
  )
  return join(dir, 'bin', 'run.js')
}

/**
 * Fills the bench's GWCTL_HOME the way a user's looks after a week: agents with keys (state.json,
 * written by the real `gwctl key issue` with the daemon stopped) and 20 000 gateway log rows of
 * priced models over the last 7 days (logs.db, written through the log store). So `status` reads
 * and validates a real state file, `logs` names agents, and `usage` prices rows.
 */
export async function populateHome(env, gw) {
  const agents = [
    ['alice-claude', 'claude_code'],
    ['alice-codex', 'codex'],
    ['alice-gemini', 'gemini_cli'],
    ['ci-bot', 'generic_agent'],
  ]
  for (const [name, type] of agents) {
    const r = spawnSync(
      'node',
      [
        gw,
        'key',
        'issue',
        '--agent-name',
        name,
        '--agent-type',
        type,
        '--employee-name',
        'Alice',
        '--employee-contact',
        'alice@example.com',
        '--json',
      ],
      {env, encoding: 'utf8'},
    )
    if (r.status !== 0) throw new Error(`key issue failed: ${r.stderr}`)
  }
  const state = JSON.parse(readFileSync(join(env.GWCTL_HOME, 'state.json'), 'utf8'))
  const {LogStore} = await import('../dist/store/log-store.js')
  const store = await LogStore.open(join(env.GWCTL_HOME, 'logs.db'), {batchSize: 1e9, flushMs: 1e9})
  const models = ['claude-sonnet-4-5', 'gpt-5', 'gemini-2.5-pro', 'claude-haiku-4-5']
  const entrances = ['messages', 'responses', 'gemini', 'chat']
  const now = Date.now()
  const rows = 20_000
  for (let i = 0; i < rows; i++) {
    const agent = state.agents[i % state.agents.length]
    store.append({
      time: now - 7 * 86_400_000 + Math.floor((i / rows) * 7 * 86_400_000),
      agentId: agent.id,
      keyPrefix: state.keys.find((k) => k.agentId === agent.id)?.prefix ?? null,
      policyId: agent.policyId,
      entrance: entrances[i % 4],
      requestedModel: models[i % 4],
      provider: 'platform',
      model: models[i % 4],
      status: i % 50 === 0 ? 502 : 200,
      fallback: false,
      inputTokens: 1000 + (i % 300),
      outputTokens: 200 + (i % 50),
      cacheReadTokens: 5000 + (i % 100),
      cacheCreationTokens: i % 7,
      reasoningTokens: i % 11,
      latencyMs: 300 + (i % 500),
      ttfbMs: 100 + (i % 90),
      error: null,
      project: `/home/alice/project-${i % 5}`,
      requestId: `req_${i}`,
    })
  }
  store.flush()
  store.close()
}

function freePort() {
  return new Promise((done, fail) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const {port} = server.address()
      server.close(() => done(port))
    })
    server.on('error', fail)
  })
}

function median(samples) {
  const s = [...samples].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]
}

const TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined

/** One whole-process run: wall ms (and peak RSS in MiB when /usr/bin/time exists). */
function runOnce(args, env, input) {
  const t0 = performance.now()
  const r = TIME
    ? spawnSync(TIME, ['-f', '__RSS %M', 'node', ...args], {env, encoding: 'utf8', input})
    : spawnSync('node', args, {env, encoding: 'utf8', input})
  const ms = performance.now() - t0
  const m = /__RSS (\d+)/.exec(r.stderr ?? '')
  return {ms, rssMiB: m ? Number(m[1]) / 1024 : undefined, status: r.status}
}

/**
 * Times the baseline and each gwctl command `runs` times, interleaved. `simOrigin` is a running
 * simulator (for `video models`). Returns rows {name, medianMs, rssMiB, ratio, status}.
 */
export async function cliStartup({runs = 15, simOrigin, only, gwctl} = {}) {
  const home = mkdtempSync(join(tmpdir(), 'gwctl-bench-cli-'))
  process.on('exit', () => rmSync(home, {recursive: true, force: true}))
  const env = {
    ...process.env,
    NODE_EXTRA_CA_CERTS: '',
    NO_COLOR: '1',
    GWCTL_HOME: home,
    HOME: join(home, 'user-home'),
    ...(simOrigin ? {GWCTL_BASE_URL: `${simOrigin}/api/v1`, GWCTL_API_KEY: 'sim'} : {}),
  }
  const hello = helloProject()
  const gw = gwctl ? resolve(gwctl) : join(ROOT, 'bin', 'run.js')
  await populateHome(env, gw)
  const read = [
    ['status --quiet', ['status', '--quiet']],
    ['status --json', ['status', '--json']],
    ['logs --limit 5', ['logs', '--limit', '5']],
    ['usage --json', ['usage', '--json']],
  ]
  // what Claude Code pipes to its statusLine command after each message
  const statuslineInput = JSON.stringify({
    session_id: 'bench-session',
    transcript_path: join(home, 'user-home', '.claude', 'projects', 'x', 'bench-session.jsonl'),
    model: {id: 'claude-sonnet-4-5', display_name: 'Sonnet 4.5'},
    cost: {total_cost_usd: 0.12},
  })
  const all = [
    {name: 'bare oclif 4 hello', args: [hello, 'hello']},
    // `gwctl statusline` is answered by bin/run.js without oclif: its target is 1.2x a bare Node
    {name: 'node -e 0', args: ['-e', '0']},
    {name: 'gwctl statusline', args: [gw, 'statusline'], input: statuslineInput, when: 'stopped'},
    {
      name: 'gwctl statusline (gateway running)',
      args: [gw, 'statusline'],
      input: statuslineInput,
      when: 'running',
      // Claude Code calls it after every message: timed as a call after the first, whose answer
      // loads the daemon's memory from logs.db once (an untimed call just before)
      warm: true,
    },
    {name: 'gwctl --version', args: [gw, '--version']},
    ...read.map(([name, args]) => ({name: `gwctl ${name}`, args: [gw, ...args], when: 'stopped'})),
    ...read.map(([name, args]) => ({
      name: `gwctl ${name} (gateway running)`,
      args: [gw, ...args],
      when: 'running',
    })),
    ...(simOrigin ? [{name: 'gwctl video models --json', args: [gw, 'video', 'models', '--json']}] : []),
  ]
  const cmds =
    only === 'statusline'
      ? all.filter((c, i) => i === 0 || c.name === 'node -e 0' || c.args[1] === 'statusline')
      : all
  // Each round runs every command once, in turn, the gateway stopped for some and running for
  // the others (started and stopped once per round, outside the timings).
  const samples = cmds.map(() => ({ms: [], rss: [], status: undefined}))
  const gatewayPort = String(await freePort())
  const gateway = (verb) => {
    const r = spawnSync('node', [gw, 'gateway', verb, ...(verb === 'start' ? ['--port', gatewayPort] : [])], {
      env,
      encoding: 'utf8',
    })
    if (r.status !== 0) throw new Error(`gateway ${verb} failed: ${r.stderr}`)
  }
  const round = (record) => {
    for (const when of [undefined, 'stopped', 'running']) {
      if (when === 'running') gateway('start')
      for (const [i, c] of cmds.entries()) {
        if (c.when !== when) continue
        if (c.warm) runOnce(c.args, env, c.input)
        const r = runOnce(c.args, env, c.input)
        if (!record) continue
        samples[i].ms.push(r.ms)
        if (r.rssMiB !== undefined) samples[i].rss.push(r.rssMiB)
        samples[i].status = r.status
      }
      if (when === 'running') gateway('stop')
    }
  }
  // Warm-up: the OS file cache for every command.
  round(false)
  for (let r = 0; r < runs; r++) round(true)
  // N statusline calls at once (Claude Code renders it in every open session), stopped and running
  const overlap = {stopped: [], running: [], bareNode: []}
  if (only === 'statusline')
    for (let r = 0; r < Math.max(3, Math.ceil(runs / 3)); r++) {
      overlap.bareNode.push(await overlapping(['-e', '0'], env, statuslineInput))
      overlap.stopped.push(await overlapping([gw, 'statusline'], env, statuslineInput))
      gateway('start')
      await overlapping([gw, 'statusline'], env, statuslineInput) // the daemon's first answer loads its memory
      overlap.running.push(await overlapping([gw, 'statusline'], env, statuslineInput, daemonPid(env)))
      gateway('stop')
    }
  const base = median(samples[0].ms)
  const bareNode = median(samples[cmds.findIndex((c) => c.name === 'node -e 0')].ms)
  const overlapRows =
    only === 'statusline'
      ? [
          ['node -e 0', overlap.bareNode],
          ['gwctl statusline', overlap.stopped],
          ['gwctl statusline (gateway running)', overlap.running],
        ].map(([name, runs]) => ({
          name: `${OVERLAP}x ${name}, overlapping`,
          medianMs: median(runs.map((r) => r.wallMs)),
          cpuMs: median(runs.map((r) => r.cpuMs)),
          daemonCpuMs: runs[0].daemonCpuMs === undefined ? undefined : median(runs.map((r) => r.daemonCpuMs)),
          vsNode: median(runs.map((r) => r.cpuMs)) / median(overlap.bareNode.map((r) => r.cpuMs)),
          ratio: Number.NaN,
          status: runs.at(-1).status,
          overlap: true,
        }))
      : []
  return [
    ...cmds.map((c, i) => ({
      name: c.name,
      medianMs: median(samples[i].ms),
      rssMiB: samples[i].rss.length > 0 ? Math.max(...samples[i].rss) : undefined,
      ratio: median(samples[i].ms) / base,
      // the statusline rows against a bare Node start (target: 1.2x or less)
      ...(c.args[1] === 'statusline' ? {vsNode: median(samples[i].ms) / bareNode} : {}),
      status: samples[i].status,
    })),
    ...overlapRows,
  ]
}

/** How many calls {@link overlapping} starts at once. */
const OVERLAP = 20

/** CPU ms (user + system) a process has used, from /proc (Linux; undefined elsewhere). */
function processCpuMs(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100 // utime, stime in USER_HZ (100)
  } catch {
    return undefined
  }
}

function daemonPid(env) {
  return Number(readFileSync(join(env.GWCTL_HOME, 'gateway.pid'), 'utf8').split(/\s+/)[0])
}

/**
 * {@link OVERLAP} runs of `node args` started at once, under one shell that waits for them all:
 * wall ms until the last ends, their CPU ms together (the shell's children, from /usr/bin/time),
 * and the daemon's CPU ms meanwhile when `pid` is its pid.
 */
function overlapping(args, env, input, pid) {
  const quoted = ['node', ...args].map((a) => `'${a.replaceAll("'", `'\\''`)}'`).join(' ')
  const script = `for i in $(seq ${OVERLAP}); do printf '%s' "$INPUT" | ${quoted} >/dev/null & done; wait`
  const before = pid === undefined ? undefined : processCpuMs(pid)
  const t0 = performance.now()
  return new Promise((done) => {
    const child = spawn(TIME ?? 'sh', [...(TIME ? ['-f', '__CPU %U %S', 'sh'] : []), '-c', script], {
      env: {...env, INPUT: input},
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    let stderr = ''
    child.stderr.on('data', (d) => (stderr += d))
    child.on('close', (status) => {
      const wallMs = performance.now() - t0
      const m = /__CPU ([\d.]+) ([\d.]+)/.exec(stderr)
      const after = pid === undefined ? undefined : processCpuMs(pid)
      done({
        wallMs,
        cpuMs: m ? (Number(m[1]) + Number(m[2])) * 1000 : Number.NaN,
        daemonCpuMs: before === undefined || after === undefined ? undefined : after - before,
        status,
      })
    })
  })
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const i = process.argv.indexOf('--runs')
  const j = process.argv.indexOf('--sim-origin')
  const k = process.argv.indexOf('--only')
  const g = process.argv.indexOf('--gw')
  const rows = await cliStartup({
    runs: i > 0 ? Number(process.argv[i + 1]) : 15,
    simOrigin: j > 0 ? process.argv[j + 1] : undefined,
    only: k > 0 ? process.argv[k + 1] : undefined,
    gwctl: g > 0 ? process.argv[g + 1] : undefined,
  })
  console.log('| command | median ms | peak RSS MiB | x hello | x node -e 0 | exit |')
  console.log('|---|---|---|---|---|---|')
  for (const r of rows.filter((r) => !r.overlap))
    console.log(
      `| ${r.name} | ${r.medianMs.toFixed(0)} | ${r.rssMiB?.toFixed(0) ?? '-'} | ${r.ratio.toFixed(2)} | ${r.vsNode?.toFixed(2) ?? ''} | ${r.status} |`,
    )
  const overlaps = rows.filter((r) => r.overlap)
  if (overlaps.length > 0) {
    console.log(
      '\n| overlapping calls | wall ms (all done) | CPU ms of the calls | x node -e 0 CPU | daemon CPU ms |',
    )
    console.log('|---|---|---|---|---|')
    for (const r of overlaps)
      console.log(
        `| ${r.name} | ${r.medianMs.toFixed(0)} | ${r.cpuMs.toFixed(0)} | ${r.vsNode.toFixed(2)} | ${r.daemonCpuMs?.toFixed(0) ?? ''} |`,
      )
  }
}
