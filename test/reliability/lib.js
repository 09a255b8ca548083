// Shared pieces of the reliability suite: a daemon in its own GWCTL_HOME on a free loopback port,
// the gwctl CLI, /proc readings, and the check of an error body against its entrance's shape.
import {spawn} from 'node:child_process'
import {mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync} from 'node:fs'
import {createServer} from 'node:net'
import {tmpdir} from 'node:os'
import {dirname, join, resolve} from 'node:path'
import {fileURLToPath} from 'node:url'

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
export const BIN = join(ROOT, 'bin', 'gwctl.cjs')

export async function freePort() {
  return new Promise((resolvePort, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const {port} = server.address()
      server.close(() => resolvePort(port))
    })
  })
}

/** A fresh GWCTL_HOME (and HOME inside it) with a free port; `cleanup` kills what is left. */
export async function isolatedGateway(name, {parent = tmpdir()} = {}) {
  const home = mkdtempSync(join(parent, `gwctl-rel-${name}-`))
  mkdirSync(join(home, 'user-home'))
  const port = await freePort()
  const env = {
    ...process.env,
    GWCTL_HOME: home,
    HOME: join(home, 'user-home'),
    GWCTL_GATEWAY_PORT: String(port),
    NO_COLOR: '1',
    TZ: 'UTC',
    NODE_EXTRA_CA_CERTS: '',
    OPENAI_API_KEY: '',
    ANTHROPIC_API_KEY: '',
    GEMINI_API_KEY: '',
    GOOGLE_API_KEY: '',
    GWCTL_BASE_URL: '',
    GWCTL_API_KEY: '',
  }
  for (const k of [
    'NODE_EXTRA_CA_CERTS',
    'OPENAI_API_KEY',
    'ANTHROPIC_API_KEY',
    'GEMINI_API_KEY',
    'GOOGLE_API_KEY',
    'GWCTL_BASE_URL',
    'GWCTL_API_KEY',
  ])
    delete env[k]
  const base = `http://127.0.0.1:${port}`
  const cli = (args, options = {}) => run(process.execPath, [BIN, ...args], {env, ...options})
  return {
    home,
    port,
    env,
    base,
    cli,
    pid: () => daemonPid(home),
    async cleanup(keep = false) {
      const pid = daemonPid(home)
      if (pid && alive(pid)) {
        process.kill(pid, 'SIGKILL')
        for (let i = 0; i < 100 && alive(pid); i++) await sleep(20)
      }
      if (!keep) rmSync(home, {recursive: true, force: true})
    },
  }
}

export function run(cmd, args, {env, input, timeoutMs = 60_000} = {}) {
  return new Promise((resolveRun) => {
    const child = spawn(cmd, args, {env, stdio: ['pipe', 'pipe', 'pipe']})
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      resolveRun({code: code ?? (signal ? 128 : -1), stdout, stderr})
    })
    child.stdin.end(input ?? '')
  })
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

export function daemonPid(home) {
  try {
    const pid = Number(readFileSync(join(home, 'gateway.pid'), 'utf8').split('\n')[0])
    return Number.isInteger(pid) && pid > 0 ? pid : undefined
  } catch {
    return undefined
  }
}

export function alive(pid) {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
    return state !== 'Z' && state !== 'X'
  } catch {
    return true
  }
}

/** Resident set size of a process in bytes (Linux). */
export function rssBytes(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return m ? Number(m[1]) * 1024 : NaN
}

export function openFds(pid) {
  return readdirSync(`/proc/${pid}/fd`).length
}

/** Issues a key over the management API; resolves to the key value. */
export async function issueKey(base, agentName, agentType = 'generic_agent', policyId) {
  const res = await fetch(`${base}/api/keys/issue`, {
    method: 'POST',
    headers: {'content-type': 'application/json'},
    body: JSON.stringify({
      employeeName: 'Rel',
      employeeContact: 'rel@example.com',
      agentName,
      agentType,
      ...(policyId ? {policyId} : {}),
    }),
  })
  if (res.status !== 200) throw new Error(`key issue answered ${res.status}: ${await res.text()}`)
  return (await res.json()).keyValue
}

/** The entrance family whose error shape a path gets (management endpoints use the chat shape). */
export function familyOfPath(path) {
  if (path.startsWith('/v1beta/')) return 'gemini'
  if (path.startsWith('/v1/messages')) return 'messages'
  if (path.startsWith('/v1/responses')) return 'responses'
  return 'chat'
}

/** Null when `body` is an error in the shape of `family`, else what is wrong with it. */
export function shapeProblem(family, status, text) {
  let body
  try {
    body = JSON.parse(text)
  } catch {
    return `not JSON: ${JSON.stringify(text.slice(0, 120))}`
  }
  if (!body || typeof body !== 'object') return 'not an object'
  if (family === 'messages') {
    if (
      body.type !== 'error' ||
      typeof body.error?.type !== 'string' ||
      typeof body.error?.message !== 'string'
    )
      return `not an Anthropic error: ${text.slice(0, 160)}`
    return null
  }
  if (family === 'gemini') {
    if (
      typeof body.error?.message !== 'string' ||
      typeof body.error?.status !== 'string' ||
      body.error?.code !== status
    )
      return `not a Gemini error: ${text.slice(0, 160)}`
    return null
  }
  if (typeof body.error?.message !== 'string' || typeof body.error?.type !== 'string')
    return `not an OpenAI error: ${text.slice(0, 160)}`
  return null
}
