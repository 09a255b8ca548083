/**
 * A stand-in for the daemon's `GET /api/usage/statusline`, for the statusline's client: a process
 * whose command line names `daemon/main.js` (as the real one's does), listening on 127.0.0.1, that
 * writes the pid file of `home` and records each request's head to `<home>/statusline-requests.txt`.
 * `mode`: `figures` answers them, `old` answers token sums without figures (a daemon from before
 * them), `silent` accepts and never answers.
 */
import {spawn} from 'node:child_process'
import {existsSync, mkdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

const SCRIPT = `
const {createServer} = require('node:net')
const {appendFileSync, writeFileSync} = require('node:fs')
const {join} = require('node:path')
const home = process.env.GWCTL_HOME
const server = createServer({allowHalfOpen: true}, (socket) => {
  let head = ''
  socket.on('data', (chunk) => {
    head += chunk
    if (!head.includes('\\r\\n\\r\\n')) return
    appendFileSync(join(home, 'statusline-requests.txt'), head.split('\\r\\n')[0] + '\\n')
    if (process.env.MODE === 'silent') return
    const body = process.env.MODE === 'old'
      ? JSON.stringify({source: 'daemon', today: [], session: [], window: null})
      : JSON.stringify({source: 'daemon', today: [], session: [], window: null, figures: JSON.parse(process.env.FIGURES)})
    socket.end('HTTP/1.1 200 OK\\r\\ncontent-type: application/json; charset=utf-8\\r\\ncontent-length: ' +
      Buffer.byteLength(body) + '\\r\\nconnection: close\\r\\n\\r\\n' + body)
  })
})
server.listen(0, '127.0.0.1', () => {
  writeFileSync(join(home, 'gateway.pid'), process.pid + '\\n' + server.address().port + '\\n')
})
`

export interface FakeDaemon {
  pid: number
  port: number
  /** The request lines it received. */
  requests(): string[]
  stop(): void
}

export async function fakeStatuslineDaemon(
  home: string,
  mode: 'figures' | 'old' | 'silent',
  figures: unknown = null,
): Promise<FakeDaemon> {
  const dir = join(home, 'fake', 'daemon')
  mkdirSync(dir, {recursive: true})
  writeFileSync(join(dir, 'main.js'), SCRIPT)
  const pidFile = join(home, 'gateway.pid')
  rmSync(pidFile, {force: true})
  const child = spawn(process.execPath, [join(dir, 'main.js')], {
    env: {...process.env, GWCTL_HOME: home, MODE: mode, FIGURES: JSON.stringify(figures)},
    stdio: 'ignore',
  })
  // the whole file, not its existence: writeFileSync creates it empty first, and a loaded machine
  // can read it between the two (a NaN pid made a test's statusline.json another daemon's)
  const written = () => (existsSync(pidFile) ? /^\d+\n\d+\n$/.exec(readFileSync(pidFile, 'utf8')) : null)
  for (let i = 0; i < 200 && !written(); i++) await new Promise((resolve) => setTimeout(resolve, 25))
  const [pid, port] = readFileSync(pidFile, 'utf8').trim().split(/\s+/).map(Number)
  const log = join(home, 'statusline-requests.txt')
  return {
    pid,
    port,
    requests: () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : []),
    stop: () => child.kill('SIGKILL'),
  }
}
