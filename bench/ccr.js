// claude-code-router (CCR) as a peer row of the gateway bench: the translated path's peer. Claude
// Code speaks Anthropic Messages (`POST /v1/messages`); CCR answers it from an OpenAI-compatible
// chat-completions upstream, as gwctl does for a policy target with `translate: true`.
//
// Installed by the bench itself into a cache folder outside the repo (never a dependency of
// gwctl), configured in a temp HOME and started on a free loopback port in front of the bench's
// simulator. What its package (dist/cli.js, README.md) shows:
// - config: `~/.claude-code-router/config.json` (os.homedir(), so HOME decides); `HOST`, `PORT`
//   (`SERVICE_PORT` in the environment wins over `PORT`), `APIKEY` (checked on `x-api-key` or
//   `Authorization: Bearer`; without it the host is forced to 127.0.0.1 and no key is asked),
//   `LOG` (default true: pino at `debug` into `~/.claude-code-router/logs/`), `Providers` (an
//   `api_base_url` that is the full chat-completions URL), `Router.default` ("provider,model").
// - `ccr start` (dist/cli.js start) runs the server in the foreground, in that very process, and
//   writes its pid to `~/.claude-code-router/.claude-code-router.pid`; `ccr stop` SIGTERMs that
//   pid (the server then closes gracefully, a second or more). `ccr code` / `ccr ui` spawn a
//   detached `cli.js start` instead; the bench never uses them.
// - it keeps a reference-count file in os.tmpdir(), so TMPDIR points into the temp HOME too.
import {execFileSync, spawn} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {createServer} from 'node:net'
import {homedir, tmpdir} from 'node:os'
import {join} from 'node:path'

export const CCR_VERSION = '2.0.0'
const PACKAGE = '@musistudio/claude-code-router'
/** The key the bench's client presents to CCR (its `APIKEY`), as gwctl's agents present theirs. */
const CCR_KEY = 'bench-ccr'

/** Anthropic Messages bodies: the translated gateway row and the CCR row send the same. */
export const MESSAGES_BODY = JSON.stringify({
  model: 'claude-sonnet-4-5',
  max_tokens: 64,
  messages: [{role: 'user', content: 'Say hello in five words.'}],
})
export const MESSAGES_STREAM_BODY = JSON.stringify({
  model: 'claude-sonnet-4-5',
  max_tokens: 64,
  stream: true,
  messages: [{role: 'user', content: 'Say hello in five words.'}],
})

function cacheDir() {
  return join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'gwctl-bench', `ccr-${CCR_VERSION}`)
}

function installed(dir) {
  try {
    const pkg = JSON.parse(readFileSync(join(dir, 'node_modules', PACKAGE, 'package.json'), 'utf8'))
    return pkg.version === CCR_VERSION
  } catch {
    return false
  }
}

/** Installs CCR into the cache folder when it is not there yet; returns its CLI script. */
function install() {
  const dir = cacheDir()
  if (!installed(dir)) {
    mkdirSync(dir, {recursive: true})
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({name: 'gwctl-bench-ccr', private: true, dependencies: {[PACKAGE]: CCR_VERSION}}),
    )
    console.error(`· installing ${PACKAGE}@${CCR_VERSION} into ${dir}`)
    // the package is one bundled file (dist/cli.js) with no dependencies
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts'], {
      cwd: dir,
      stdio: ['ignore', 'ignore', 'inherit'],
      timeout: 300_000,
    })
    if (!installed(dir)) throw new Error(`npm install did not leave ${PACKAGE}@${CCR_VERSION} in ${dir}`)
  }
  return join(dir, 'node_modules', PACKAGE, 'dist/cli.js')
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const {port} = server.address()
      server.close(() => resolve(port))
    })
  })
}

/**
 * Starts CCR in front of `simOrigin`'s chat completions; resolves a bench target for
 * `POST /v1/messages`, or rejects with the reason (offline, install failed, did not answer) so the
 * bench goes on without the row.
 */
export async function startCcrTarget(simOrigin, children) {
  const script = install()
  if (!existsSync(script)) throw new Error(`${script} is missing after the install`)
  const home = mkdtempSync(join(tmpdir(), 'gwctl-bench-ccr-'))
  process.on('exit', () => rmSync(home, {recursive: true, force: true}))
  const configDir = join(home, '.claude-code-router')
  mkdirSync(configDir, {recursive: true})
  mkdirSync(join(home, 'tmp'))
  const port = await freePort()
  writeFileSync(
    join(configDir, 'config.json'),
    JSON.stringify(
      {
        HOST: '127.0.0.1',
        PORT: port,
        APIKEY: CCR_KEY,
        // its default is pino at debug level into ~/.claude-code-router/logs/, a file write per
        // request; off, so the row measures its translation and forwarding (kind to the peer)
        LOG: false,
        API_TIMEOUT_MS: 60_000,
        Providers: [
          {
            name: 'bench-sim',
            api_base_url: `${simOrigin}/v1/chat/completions`,
            api_key: 'sim',
            models: ['sim-mini'],
          },
        ],
        Router: {default: 'bench-sim,sim-mini'},
      },
      null,
      2,
    ),
  )
  const env = {
    ...process.env,
    HOME: home,
    TMPDIR: join(home, 'tmp'),
    SERVICE_PORT: String(port),
    NODE_EXTRA_CA_CERTS: '',
  }
  // loopback only: no proxy of the machine's in between
  for (const k of Object.keys(env)) if (/^(https?|all|no)_proxy$/i.test(k)) delete env[k]
  let stderr = ''
  // `ccr start` in the foreground: this child is the server (no detached grandchild)
  const child = spawn('node', [script, 'start'], {cwd: home, stdio: ['ignore', 'ignore', 'pipe'], env})
  children.push(child)
  child.stderr.on('data', (d) => {
    if (stderr.length < 4000) stderr += d
  })
  let exited
  child.once('exit', (code, signal) => (exited = `exited (${signal ?? code})`))
  const origin = `http://127.0.0.1:${port}`
  const headers = {
    'content-type': 'application/json',
    'x-api-key': CCR_KEY,
    'anthropic-version': '2023-06-01',
  }
  for (let i = 0; ; i++) {
    const answer = await fetch(`${origin}/v1/messages`, {method: 'POST', headers, body: MESSAGES_BODY}).then(
      async (r) => ({status: r.status, text: await r.text()}),
      () => ({status: 0, text: ''}),
    )
    if (answer.status === 200) {
      if (!JSON.parse(answer.text).content?.[0]?.text)
        throw new Error(`claude-code-router answered 200 without a text block: ${answer.text.slice(0, 160)}`)
      break
    }
    if (exited) throw new Error(`claude-code-router ${exited}: ${stderr.trim().slice(-300)}`)
    if (answer.status !== 0 || i > 150)
      throw new Error(
        `claude-code-router did not answer 200 (last: ${answer.status} ${answer.text.slice(0, 160)})`,
      )
    await new Promise((r) => setTimeout(r, 100))
  }
  // streams must work too, or its first-byte column would measure an error answer
  const stream = await fetch(`${origin}/v1/messages`, {method: 'POST', headers, body: MESSAGES_STREAM_BODY})
  const text = await stream.text()
  if (
    stream.status !== 200 ||
    !text.includes('event: message_start') ||
    !text.includes('event: message_stop')
  )
    throw new Error(`claude-code-router streams fail: ${stream.status} ${text.slice(0, 160)}`)
  // the process that serves: the one CCR itself records (`ccr stop` signals it); with
  // `cli.js start` in the foreground it is the child itself
  const recorded = Number(readFileSync(join(configDir, '.claude-code-router.pid'), 'utf8').trim())
  return {
    name: 'claude-code-router (peer, messages -> chat)',
    origin,
    pid: Number.isInteger(recorded) && recorded > 0 ? recorded : child.pid,
    headers,
    path: '/v1/messages',
    body: MESSAGES_BODY,
    streamBody: MESSAGES_STREAM_BODY,
  }
}
