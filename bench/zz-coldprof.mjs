import {mkdtempSync, readdirSync, readFileSync, existsSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {Client} from 'undici'
const {CHAT_BODY, startChild, startGatewayTarget} = await import('./targets.js')
const sim = await startChild('node', ['bench/servers.js', 'sim'])
const dir = mkdtempSync(join(tmpdir(), 'coldprof-'))
process.env.GWCTL_BENCH_DAEMON_ARGS = `--cpu-prof --cpu-prof-dir=${dir} --cpu-prof-interval=200`
const g = await startGatewayTarget(`http://127.0.0.1:${sim.port}`, {translated: false})
const N = Number(process.argv[2] ?? 500)
const client = new Client(g.origin)
const t0 = performance.now()
for (let i = 0; i < N; i++) { const res = await client.request({method: 'POST', path: '/v1/chat/completions', headers: g.headers, body: CHAT_BODY}); await res.body.text() }
console.log(N, 'requests in', (performance.now() - t0).toFixed(0), 'ms')
await client.close()
process.kill(g.pid, 'SIGTERM')
for (let i = 0; i < 100 && readdirSync(dir).length === 0; i++) await new Promise((r) => setTimeout(r, 100))
await new Promise((r) => setTimeout(r, 500))
const prof = JSON.parse(readFileSync(join(dir, readdirSync(dir)[0]), 'utf8'))
const byId = new Map(prof.nodes.map((n) => [n.id, n]))
const self = new Map()
const dt = new Map()
for (let i = 0; i < prof.samples.length; i++) dt.set(prof.samples[i], (dt.get(prof.samples[i]) ?? 0) + (prof.timeDeltas[i] ?? 0))
const byFile = new Map()
for (const [id, us] of dt) {
  const f = byId.get(id).callFrame
  const file = (f.url || '').replace(/^file:\/\/\/work\/main\//, '')
  const key = `${f.functionName || '(anon)'} ${file}:${f.lineNumber + 1}`
  self.set(key, (self.get(key) ?? 0) + us)
  byFile.set(file, (byFile.get(file) ?? 0) + us)
}
for (const [k, v] of [...byFile].sort((a, b) => b[1] - a[1]).slice(0, 14)) console.log((v / N).toFixed(0).padStart(6), 'µs/req', k)
console.log('--')
for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log((v / N).toFixed(0).padStart(6), 'µs/req', k)
process.exit(0)
