import {Client} from 'undici'
const {CHAT_BODY, startChild, startGatewayTarget} = await import('./targets.js')
const sim = await startChild('node', ['bench/servers.js', 'sim'])
const simOrigin = `http://127.0.0.1:${sim.port}`
const g = await startGatewayTarget(simOrigin, {translated: true})
const rows = {
  direct: {origin: simOrigin, path: '/v1/chat/completions', headers: {'content-type': 'application/json', authorization: 'Bearer sim'}, body: CHAT_BODY},
  untranslated: {origin: g.origin, path: '/v1/chat/completions', headers: g.headers, body: CHAT_BODY},
  translated: {origin: g.translated.origin, path: g.translated.path, headers: g.translated.headers, body: g.translated.body},
}
import {readFileSync} from 'node:fs'
const cpu = (pid) => { const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' '); return (Number(f[11]) + Number(f[12])) * 10 }
const cpuMs = {}
import autocannon from 'autocannon'
if (process.argv[3] === 'warm') for (const t of Object.values(rows)) await autocannon({url: t.origin + t.path, method: 'POST', headers: t.headers, body: t.body, connections: 64, duration: 3})
const samples = Object.fromEntries(Object.keys(rows).map((k) => [k, []]))
const N = Number(process.argv[2] ?? 400)
for (let part = 0; part < 6; part++)
  for (const [name, t] of Object.entries(rows)) {
    const client = new Client(t.origin, {keepAliveTimeout: 30_000})
    const c0 = cpu(g.pid)
    for (let i = 0; i < N + 30; i++) {
      const t0 = performance.now()
      const res = await client.request({method: 'POST', path: t.path, headers: t.headers, body: t.body})
      await res.body.text()
      if (i >= 30) samples[name].push(performance.now() - t0)
    }
    await client.close()
    cpuMs[name] = (cpuMs[name] ?? 0) + cpu(g.pid) - c0
  }
const med = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]
const d = med(samples.direct)
for (const k of Object.keys(rows)) console.log(k.padEnd(13), med(samples[k]).toFixed(3), 'ms, added', (med(samples[k]) - d).toFixed(3), 'daemon cpu µs/req', (cpuMs[k] * 1000 / samples[k].length).toFixed(0))
process.kill(g.pid, 'SIGTERM')
process.exit(0)
