// Portkey's open-source AI gateway as a peer row of the gateway bench: installed by the bench
// itself into a cache folder outside the repo (never a dependency of gwctl), started on a free
// loopback port and pointed at the bench's simulator as an OpenAI-compatible custom host.
//
// @hono/node-server is pinned below 1.14: with newer versions every Portkey stream on Node 20
// answers `{"status":"failure","message":"Something went wrong"}` (TypeError: immutable, when
// Portkey adds headers to a fetch Response; Portkey-AI/gateway#1389). Non-stream requests work
// either way.
import {execFileSync, spawn} from 'node:child_process'
import {existsSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import {createServer} from 'node:net'
import {homedir} from 'node:os'
import {join} from 'node:path'

export const PORTKEY_VERSION = '1.15.2'
const HONO_NODE_SERVER = '1.13.8'

function cacheDir() {
  return join(
    process.env.XDG_CACHE_HOME || join(homedir(), '.cache'),
    'gwctl-bench',
    `portkey-${PORTKEY_VERSION}`,
  )
}

function installed(dir) {
  try {
    const pkg = JSON.parse(readFileSync(join(dir, 'node_modules/@portkey-ai/gateway/package.json'), 'utf8'))
    return pkg.version === PORTKEY_VERSION
  } catch {
    return false
  }
}

/** Installs Portkey into the cache folder when it is not there yet; returns its server script. */
function install() {
  const dir = cacheDir()
  if (!installed(dir)) {
    mkdirSync(dir, {recursive: true})
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({
        name: 'gwctl-bench-portkey',
        private: true,
        dependencies: {'@portkey-ai/gateway': PORTKEY_VERSION, '@hono/node-server': HONO_NODE_SERVER},
        overrides: {'@hono/node-server': HONO_NODE_SERVER},
      }),
    )
    console.error(`· installing @portkey-ai/gateway@${PORTKEY_VERSION} into ${dir}`)
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts'], {
      cwd: dir,
      stdio: ['ignore', 'ignore', 'inherit'],
      timeout: 300_000,
    })
  }
  return join(dir, 'node_modules/@portkey-ai/gateway/build/start-server.js')
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
 * Starts Portkey in front of `simOrigin`; resolves a bench target, or rejects with the reason
 * (offline, install failed, did not answer) so the bench goes on without the row.
 */
export async function startPortkeyTarget(simOrigin, children) {
  const script = install()
  if (!existsSync(script)) throw new Error(`${script} is missing after the install`)
  const port = await freePort()
  const child = spawn('node', [script, `--port=${port}`, '--headless'], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {...process.env, NODE_EXTRA_CA_CERTS: ''},
  })
  children.push(child)
  const origin = `http://127.0.0.1:${port}`
  const headers = {
    'content-type': 'application/json',
    authorization: 'Bearer sim',
    'x-portkey-provider': 'openai',
    'x-portkey-custom-host': `${simOrigin}/v1`,
  }
  const body = JSON.stringify({model: 'sim-mini', messages: [{role: 'user', content: 'hi'}]})
  for (let i = 0; ; i++) {
    const status = await fetch(`${origin}/v1/chat/completions`, {method: 'POST', headers, body}).then(
      async (r) => (await r.arrayBuffer(), r.status),
      () => 0,
    )
    if (status === 200) break
    if (status !== 0 || i > 150) throw new Error(`Portkey did not answer 200 (last status ${status})`)
    await new Promise((r) => setTimeout(r, 100))
  }
  // streams must work too, or its first-byte column would measure an error answer
  const stream = await fetch(`${origin}/v1/chat/completions`, {
    method: 'POST',
    headers,
    body: JSON.stringify({model: 'sim-mini', stream: true, messages: [{role: 'user', content: 'hi'}]}),
  })
  const text = await stream.text()
  if (stream.status !== 200 || !text.startsWith('data:'))
    throw new Error(`Portkey streams fail: ${text.slice(0, 120)}`)
  return {name: `Portkey ${PORTKEY_VERSION} (peer)`, origin, pid: child.pid, headers}
}
