#!/usr/bin/env node
// The offline tour (`npm run tour`, after `npm run build`): starts the simulator, runs a few real
// gwctl commands against it with a throw-away GWCTL_HOME and HOME, then stops the simulator and cleans up.
// Other areas add their steps to STEPS; each step is one gwctl command line.
import {spawn, spawnSync} from 'node:child_process'
import {mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {createServer} from 'node:net'
import {tmpdir} from 'node:os'
import {join, resolve} from 'node:path'
import {fileURLToPath} from 'node:url'

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)))
const BIN = join(ROOT, 'bin', 'run.js')
const home = mkdtempSync(join(tmpdir(), 'gwctl-tour-'))
const clip = join(home, 'fox.mp4')
// a three-line batch manifest (Alpha and Beta), for `video batch`
const manifest = join(home, 'clips.jsonl')
writeFileSync(
  manifest,
  [
    {id: 'fox', model: 'Alpha2.6-T2V', prompt: 'a red fox in snow', seconds: 3, size: '1280x720'},
    {id: 'waves', model: 'BetaQ3-Turbo-Text2Video', prompt: 'waves at dusk', resolution: '720P'},
    {id: 'owl', model: 'Alpha2.6-T2V', prompt: 'an owl at night', seconds: 3},
  ]
    .map((task) => JSON.stringify(task))
    .join('\n') + '\n',
)
// The tour's own HOME too: agent discovery and history scans read ~/.claude, ~/.codex and
// ~/.gemini (and their variables), never the real ones of whoever runs the tour.
const userHome = join(home, 'user-home')
mkdirSync(userHome)
const isolated = {
  GWCTL_HOME: home,
  HOME: userHome,
  USERPROFILE: userHome,
  XDG_CONFIG_HOME: '',
  CLAUDE_CONFIG_DIR: '',
  CODEX_HOME: '',
  GEMINI_CLI_HOME: '',
  GEMINI_DATA_DIR: '',
}

/** @param {string} baseUrl */
const STEPS = (baseUrl) => [
  {
    say: 'Point gwctl at the simulator (settings live in GWCTL_HOME, mode 0600).',
    args: ['config', 'set', 'base-url', baseUrl],
  },
  {args: ['config', 'set', 'api-key', 'sim-tour-key']},
  {say: 'The video models and the rules gwctl checks before sending anything.', args: ['video', 'models']},
  {
    say: 'A rule broken locally: exit 2, nothing sent.',
    args: ['video', 'create', '--model', 'BetaQ2-Text2Video', '--prompt', 'a fox', '--duration', '12'],
    expectExit: 2,
  },
  {
    say: 'Create a task, wait for it (the sim finishes in 3 s) and download the video.',
    args: [
      'video',
      'create',
      '--model',
      'Alpha2.6-T2V',
      '--prompt',
      'a red fox in fresh snow',
      '--size',
      '1280x720',
      '--interval',
      '1',
      '--output',
      clip,
    ],
  },
  {
    say: 'A three-line batch manifest: at most 2 tasks at once, every video downloaded.',
    args: [
      'video',
      'batch',
      manifest,
      '--concurrency',
      '2',
      '--interval',
      '1',
      '--output-dir',
      join(home, 'batch'),
    ],
  },
  {say: 'The local journal of created tasks.', args: ['video', 'list']},
  {
    say: 'A Gamma-H3 multimodal task: text plus a first frame, waited for.',
    args: [
      'gamma',
      'generate',
      '--text',
      'the fox jumps into the snow',
      '--first-frame',
      'https://example.com/fox.png',
      '--resolution',
      '768P',
      '--duration',
      '5',
      '--wait',
      '--interval',
      '1',
    ],
  },
  {say: 'Chat models and their simulated providers.', args: ['models']},
  {
    say: 'A streamed chat answer; provider routing picks the cheapest input price.',
    args: ['chat', '--model', 'sim-mini', '--sort', 'input_price', 'Say hello to the tour.'],
  },
]

/** Starts `gwctl sim --port 0` and resolves with its base URL and process. */
function startSim() {
  const child = spawn(process.execPath, [BIN, 'sim', '--port', '0', '--task-seconds', '3'], {
    env: {...process.env, ...isolated},
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  return new Promise((resolveStart, reject) => {
    let text = ''
    child.stdout.on('data', (chunk) => {
      text += chunk
      const match = /^base-url: (\S+)$/m.exec(text)
      if (match) resolveStart({child, baseUrl: match[1]})
    })
    child.on('exit', (code) => reject(new Error(`the simulator exited early (code ${code})`)))
  })
}

const bold = process.stdout.isTTY && !process.env.NO_COLOR ? (t) => `\x1b[1m${t}\x1b[0m` : (t) => t

/** Runs one step; with `capture` its stdout is returned instead of shown. */
function run(step) {
  const shown = step.args.map((a) => (/[\s"]/.test(a) ? JSON.stringify(a) : a)).join(' ')
  const envShown = Object.entries(step.showEnv ?? {})
    .map(([k, v]) => `${k}=${v} `)
    .join('')
  console.log(`\n${bold(`$ ${envShown}gwctl ${shown}`)}`)
  const result = spawnSync(process.execPath, [BIN, ...step.args], {
    env: {
      ...process.env,
      ...isolated,
      GWCTL_BASE_URL: '',
      GWCTL_API_KEY: '',
      ...vendorKeysOff,
      ...step.env,
    },
    stdio: ['ignore', step.capture ? 'pipe' : 'inherit', 'inherit'],
    encoding: 'utf8',
  })
  const expected = step.expectExit ?? 0
  if (result.status !== expected) throw new Error(`step exited ${result.status}, expected ${expected}`)
  return result.stdout
}

// The gateway would add routes to real vendors for keys found in the environment: not in a tour.
const vendorKeysOff = {OPENAI_API_KEY: '', ANTHROPIC_API_KEY: '', GEMINI_API_KEY: '', GOOGLE_API_KEY: ''}

/** A loopback port that was free a moment ago (never 4317, so a real gateway is left alone). */
function freePort() {
  return new Promise((resolvePort, reject) => {
    const server = createServer()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const {port} = server.address()
      server.close(() => resolvePort(port))
    })
  })
}

/** The gateway part: start it with its own simulator, issue a key, chat through it, read the log. */
async function gatewayTour() {
  const port = String(await freePort())
  const env = {GWCTL_GATEWAY_PORT: port}
  console.log('\n# The local key gateway, in front of its built-in simulator (never 4317 in the tour).')
  run({args: ['gateway', 'start', '--sim'], env})
  try {
    const issued = run({
      args: [
        'key',
        'issue',
        '--agent-name',
        'tour-agent',
        '--agent-type',
        'generic_agent',
        '--employee-name',
        'Tour',
        '--employee-contact',
        'tour@example.com',
        '--json',
      ],
      env,
      capture: true,
    })
    const {keyValue, agentId} = JSON.parse(issued)
    // The JSON holds the key itself: the tour shows what it read from it, not the document.
    console.log(
      `# (the tour keeps the JSON to itself: agent ${agentId} got a key, shown once; the gateway stores only its HMAC)`,
    )
    console.log(
      '\n# Any OpenAI-compatible client can use it; here gwctl chat itself, pointed at the gateway.',
    )
    run({
      args: ['chat', '--model', 'sim-mini', '--no-stream', 'Hello through the gateway.'],
      env: {...env, GWCTL_BASE_URL: `http://127.0.0.1:${port}/v1`, GWCTL_API_KEY: keyValue},
      showEnv: {GWCTL_BASE_URL: `http://127.0.0.1:${port}/v1`, GWCTL_API_KEY: 'gw-…'},
    })
    console.log(
      '\n# Every request is logged with its tokens; usage pivots by agent, key, provider, model or project.',
    )
    await new Promise((r) => setTimeout(r, 300)) // log rows are written in batches every 100 ms
    run({args: ['logs', '--limit', '5'], env})
    run({args: ['usage', '--pivot', 'agent'], env})
    run({args: ['status'], env})
  } finally {
    run({args: ['gateway', 'stop'], env})
  }
}

let sim
try {
  sim = await startSim()
  console.log(`gwctl tour: simulator at ${sim.baseUrl} (an offline stand-in, not the real service)`)
  for (const step of STEPS(sim.baseUrl)) {
    if (step.say) console.log(`\n# ${step.say}`)
    run(step)
  }
  await gatewayTour()
  console.log('\nTour done. Try `gwctl sim` in one terminal and the commands above in another.')
} catch (error) {
  console.error(`tour failed: ${error.message}`)
  process.exitCode = 1
} finally {
  sim?.child.removeAllListeners('exit')
  sim?.child.kill('SIGINT')
  rmSync(home, {recursive: true, force: true})
}
