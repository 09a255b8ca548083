// The servers the benches measure, shared by bench/run.js and bench/profile.js: the simulator and
// bare pass-through children (bench/servers.js), the gwctl daemon with the bench's state (one
// chat provider, the untranslated and the translated policy, agent keys), and the helpers that
// start and watch them. Every child is killed when the bench process exits.
import {spawn} from 'node:child_process'
import {mkdtempSync, openSync, readFileSync, renameSync, rmSync, writeFileSync} from 'node:fs'
import {createServer as createNetServer} from 'node:net'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {createInterface} from 'node:readline'
import {fileURLToPath} from 'node:url'

export const children = []
process.on('exit', () => children.forEach((c) => c.kill('SIGKILL')))

/** Starts a child that prints `READY <port>`; resolves the port. */
export async function startChild(cmd, args, env = {}) {
  const child = spawn(cmd, args, {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: {...process.env, NODE_EXTRA_CA_CERTS: '', ...env},
  })
  children.push(child)
  const lines = createInterface({input: child.stdout})
  for await (const line of lines) {
    const m = /^READY (\d+)/.exec(line)
    if (m) return {port: Number(m[1]), child}
  }
  throw new Error(`${args.join(' ')} exited before it was ready`)
}

export const CHAT_BODY = JSON.stringify({
  model: 'sim-mini',
  messages: [{role: 'user', content: 'Say hello in five words.'}],
})
export const STREAM_BODY = JSON.stringify({
  model: 'sim-mini',
  stream: true,
  stream_options: {include_usage: true},
  messages: [{role: 'user', content: 'Say hello in five words.'}],
})

/** Resident set size of a process in MB (from /proc; undefined where there is no /proc). */
export function rssMB(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return m ? Number(m[1]) / 1024 : undefined
  } catch {
    return undefined
  }
}
/**
 * The gateway (the daemon `gwctl gateway start` runs, built) in front of the simulator: a temp GWCTL_HOME whose
 * state has one chat provider (the bench's simulator) routed by the default policy, and one agent
 * key. Every request is authenticated, routed, tapped for usage and logged.
 *
 * The state also has a second policy, `translated`, whose `messages` route is the same chat
 * provider with `translate: true`. With `translated` (the default), a second agent key is issued
 * with that policy and checked with one Anthropic Messages request and stream: `.translated` is
 * then the row asked on /v1/messages (bench/run.js starts a daemon of its own for it). When this
 * gwctl does not know `translate` (the state would not validate) or does not answer the
 * translated route, the daemon runs without it and `translatedSkipped` says why. `env`: the
 * daemon's own environment on top (the OTLP export rows of bench/run.js).
 */
export async function startGatewayTarget(simOrigin, {translated = true, env = {}} = {}) {
  const home = mkdtempSync(join(tmpdir(), 'gwctl-bench-'))
  process.on('exit', () => rmSync(home, {recursive: true, force: true}))
  process.env.GWCTL_HOME = home
  const {withState, inspectStateFile} = await import('../dist/store/state.js')
  const statePath = join(home, 'state.json')
  await withState((store) => {
    store.data.providers.push({
      name: 'bench-sim',
      family: 'chat',
      baseUrl: simOrigin,
      credential: {secret: 'sim'},
    })
    store.data.policies.find((p) => p.id === 'default').routes = {chat: [{provider: 'bench-sim'}]}
  }, statePath)
  const translatedSkipped = addTranslatedPolicy(statePath, inspectStateFile)
  const port = await freePort()
  // an empty HOME: the daemon's history scanner finds no agent history (the real home's would
  // make its memory depend on this machine; historyScanRss measures a scan on its own)
  const {child, origin} = await spawnDaemon(home, port, join(home, 'user-home'), env)
  const res = await fetch(`${origin}/api/keys/issue`, {
    method: 'POST',
    headers: {'content-type': 'application/json'},
    body: JSON.stringify({
      employeeName: 'Bench',
      employeeContact: 'bench@example.com',
      agentName: 'bench',
      agentType: 'generic_agent',
    }),
  })
  const {keyValue} = await res.json()
  // Idle: started, one key issued, no model traffic yet; a second after, so start-up garbage settles.
  await new Promise((r) => setTimeout(r, 1000))
  const idleRssMB = rssMB(child.pid)
  const gateway = {
    name: 'gateway',
    origin,
    pid: child.pid,
    idleRssMB,
    headers: {'content-type': 'application/json', authorization: `Bearer ${keyValue}`},
    translatedSkipped,
  }
  if (translated && !translatedSkipped)
    gateway.translated = await startTranslated(origin, child.pid).catch((error) => {
      gateway.translatedSkipped = error.message
      return undefined
    })
  return gateway
}

/**
 * Adds the policy `translated` (the default policy's settings; its `messages` route the bench's
 * chat provider with `translate: true`) to the state file before the daemon starts, when this
 * gwctl's state takes it: the candidate is checked by gwctl's own validation
 * (`inspectStateFile`) and only then put in place, so a gwctl without translation still starts
 * (a target field it does not know makes the whole state invalid). Returns why not, or
 * undefined.
 */
function addTranslatedPolicy(statePath, inspectStateFile) {
  if (typeof inspectStateFile !== 'function')
    return 'this gwctl has no inspectStateFile to check the state with'
  const state = JSON.parse(readFileSync(statePath, 'utf8'))
  const policy = state.policies.find((p) => p.id === 'default')
  state.policies.push({
    ...JSON.parse(JSON.stringify(policy)),
    id: 'translated',
    description: 'bench: Anthropic Messages answered by a chat-completions upstream',
    routes: {messages: [{provider: 'bench-sim', model: 'sim-mini', translate: true}]},
  })
  const candidate = `${statePath}.bench-candidate`
  writeFileSync(candidate, JSON.stringify(state, null, 2), {mode: 0o600})
  const {problems} = inspectStateFile(candidate)
  if (problems.length > 0) {
    rmSync(candidate, {force: true})
    return `this gwctl's state does not take a translating target (${problems.map((m) => m.replace(/\.$/, '')).join('; ')})`
  }
  renameSync(candidate, statePath)
  return undefined
}

/**
 * The translated row on the gateway's daemon: a key with policy `translated` (issued after the
 * idle measurement, which stays "after start and one key issue"), checked with a real Anthropic
 * Messages request and stream before it is a row.
 */
async function startTranslated(origin, pid) {
  const {MESSAGES_BODY, MESSAGES_STREAM_BODY} = await import('./ccr.js')
  const res = await fetch(`${origin}/api/keys/issue`, {
    method: 'POST',
    headers: {'content-type': 'application/json'},
    body: JSON.stringify({
      employeeName: 'Bench',
      employeeContact: 'bench@example.com',
      agentName: 'bench-translated',
      agentType: 'claude_code',
      policyId: 'translated',
    }),
  })
  const issued = await res.json().catch(() => ({}))
  if (res.status !== 200 || !issued.keyValue)
    throw new Error(
      `the key for policy translated was not issued: ${res.status} ${JSON.stringify(issued).slice(0, 200)}`,
    )
  const headers = {
    'content-type': 'application/json',
    'x-api-key': issued.keyValue,
    'anthropic-version': '2023-06-01',
  }
  const answer = await fetch(`${origin}/v1/messages`, {method: 'POST', headers, body: MESSAGES_BODY})
  const text = await answer.text()
  if (answer.status !== 200 || !JSON.parse(text).content?.some((b) => b.type === 'text'))
    throw new Error(
      `the daemon does not translate messages -> chat yet: ${answer.status} ${text.slice(0, 200)}`,
    )
  const stream = await fetch(`${origin}/v1/messages`, {method: 'POST', headers, body: MESSAGES_STREAM_BODY})
  const events = await stream.text()
  if (
    stream.status !== 200 ||
    !events.includes('event: message_start') ||
    !events.includes('event: message_stop')
  )
    throw new Error(`the daemon's translated stream fails: ${stream.status} ${events.slice(0, 200)}`)
  return {
    name: 'gateway (translated: messages -> chat)',
    origin,
    pid,
    optional: true,
    headers,
    path: '/v1/messages',
    body: MESSAGES_BODY,
    streamBody: MESSAGES_STREAM_BODY,
  }
}

/** A free loopback port. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createNetServer()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const {port: p} = server.address()
      server.close(() => resolve(p))
    })
  })
}

/**
 * What `gwctl gateway start` spawns: the daemon's own entry point, without oclif, its stdout
 * appended to `<home>/gateway.log` (a line per request, as for a user); resolves once it answers
 * /health.
 */
export async function spawnDaemon(home, port, userHome, env = {}) {
  // GWCTL_BENCH_DAEMON_ARGS: node options for the daemon only (bench/profile.js: --cpu-prof)
  const nodeArgs = (process.env.GWCTL_BENCH_DAEMON_ARGS ?? '').split(' ').filter(Boolean)
  // this checkout's daemon (bench/ab.js imports each checkout's targets.js: each its own build)
  const main = fileURLToPath(new URL('../dist/daemon/main.js', import.meta.url))
  const child = spawn('node', [...nodeArgs, main, '--port', String(port)], {
    stdio: ['ignore', openSync(join(home, 'gateway.log'), 'a', 0o600), 'inherit'],
    env: {...process.env, GWCTL_HOME: home, HOME: userHome, NODE_EXTRA_CA_CERTS: '', NO_COLOR: '1', ...env},
  })
  children.push(child)
  const origin = `http://127.0.0.1:${port}`
  for (let i = 0; ; i++) {
    const ok = await fetch(`${origin}/health`).then(
      (r) => r.ok,
      () => false,
    )
    if (ok) break
    if (i > 100) throw new Error('the gateway did not start')
    await new Promise((r) => setTimeout(r, 100))
  }
  return {child, origin}
}
