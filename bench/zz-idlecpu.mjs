import {readFileSync, readdirSync} from 'node:fs'
const {startChild, startGatewayTarget} = await import('./targets.js')
const sim = await startChild('node', ['bench/servers.js', 'sim'])
const g = await startGatewayTarget(`http://127.0.0.1:${sim.port}`, {translated: true})
const threads = () => Object.fromEntries(readdirSync(`/proc/${g.pid}/task`).map((t) => { const s = readFileSync(`/proc/${g.pid}/task/${t}/stat`, 'utf8'); const name = /\((.*)\)/.exec(s)[1]; const f = s.split(') ')[1].split(' '); return [t + ' ' + name, (Number(f[11]) + Number(f[12])) * 10] }))
import {Client} from 'undici'
const {CHAT_BODY} = await import('./targets.js')
for (let i = 0; i < 8; i++) {
  const a = threads()
  const client = new Client(g.origin)
  let n = 0
  const t0 = Date.now()
  while (Date.now() - t0 < 1500) { const res = await client.request({method: 'POST', path: '/v1/chat/completions', headers: g.headers, body: CHAT_BODY}); await res.body.text(); n++ }
  await client.close()
  const b = threads()
  console.log(n, 'requests')
  console.log(Object.entries(b).map(([k, v]) => [k, v - (a[k] ?? 0)]).filter(([, v]) => v > 0).map(([k, v]) => `${k}: ${v} ms`).join(', ') || 'idle: no CPU in 3 s')
}
process.kill(g.pid, 'SIGTERM')
process.exit(0)
