// Crash: `kill -9` of the daemon during concurrent key issues, policy changes and model traffic,
// again and again. After each kill: the state file parses and validates, and `gateway start`
// succeeds at once. At the end, the latest key answered 200 for each agent still authenticates.
import {join} from 'node:path'
import {pathToFileURL} from 'node:url'

import {alive, isolatedGateway, ROOT, sleep} from './lib.js'

const chat = (base, key) =>
  fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: {authorization: `Bearer ${key}`, 'content-type': 'application/json'},
    body: JSON.stringify({
      model: 'sim-mini',
      stream: true,
      messages: [{role: 'user', content: 'crash loop'}],
    }),
  }).then(async (r) => {
    await r.text()
    return r.status
  })

export async function crash({loops = 50, log = console.log} = {}) {
  const {StateStore} = await import(pathToFileURL(join(ROOT, 'dist', 'store', 'state.js')).href)
  const gw = await isolatedGateway('crash')
  const figures = {
    loops,
    startFailures: 0,
    slowestStartMs: 0,
    stateInvalid: 0,
    keysAnswered200: 0,
    modelRequests200: 0,
    keysChecked: 0,
    keysRejected: 0,
    failures: [],
  }
  /** agent name -> the latest key answered 200 for it */
  const latest = new Map()
  try {
    for (let loop = 0; loop < loops; loop++) {
      const t0 = performance.now()
      const start = await gw.cli(['gateway', 'start', '--sim'])
      const ms = performance.now() - t0
      figures.slowestStartMs = Math.max(figures.slowestStartMs, ms)
      if (start.code !== 0) {
        figures.startFailures++
        figures.failures.push(
          `loop ${loop}: gateway start exited ${start.code}: ${start.stderr.trim().slice(0, 300)}`,
        )
        continue
      }
      const pid = gw.pid()
      const work = []
      // key issues: new agents and re-issues of earlier ones (a rotation within 5 s answers 429)
      for (let i = 0; i < 6; i++) {
        const agentName = `agent-${(loop * 3 + i) % 40}`
        work.push(
          fetch(`${gw.base}/api/keys/issue`, {
            method: 'POST',
            headers: {'content-type': 'application/json'},
            body: JSON.stringify({
              employeeName: 'Crash',
              employeeContact: 'c@x',
              agentName,
              agentType: 'generic_agent',
            }),
          })
            .then(async (r) => {
              if (r.status !== 200) return
              const body = await r.json()
              figures.keysAnswered200++
              latest.set(agentName, body.keyValue)
            })
            .catch(() => undefined),
        )
      }
      // policy changes (the CLI writes the state file under its lock while the daemon runs)
      work.push(gw.cli(['policies', 'route', `pol-${loop % 5}`, '--family', 'chat', '--target', 'sim-chat']))
      // model traffic with keys issued before
      for (const key of [...latest.values()].slice(-8))
        work.push(
          chat(gw.base, key)
            .then((s) => s === 200 && figures.modelRequests200++)
            .catch(() => undefined),
        )
      await sleep(20 + Math.floor(Math.random() * 200))
      if (pid && alive(pid)) process.kill(pid, 'SIGKILL')
      for (let i = 0; i < 100 && pid && alive(pid); i++) await sleep(10)
      await Promise.all(work)
      try {
        await StateStore.open(join(gw.home, 'state.json'))
      } catch (error) {
        figures.stateInvalid++
        figures.failures.push(`loop ${loop}: state does not validate: ${error.message}`)
      }
      if (loop % 10 === 9) log(`  crash: ${loop + 1}/${loops}`)
    }
    const start = await gw.cli(['gateway', 'start', '--sim'])
    if (start.code !== 0) {
      figures.startFailures++
      figures.failures.push(`final start exited ${start.code}: ${start.stderr.trim()}`)
    }
    const state = (await StateStore.open(join(gw.home, 'state.json'))).data
    figures.keysSuperseded = 0
    for (const [agent, key] of latest) {
      figures.keysChecked++
      const status = await chat(gw.base, key).catch((e) => e.message)
      if (status === 200) continue
      // A later issue for the same agent that was stored (rotating this key out) but whose answer
      // the kill cut off is not a lost key: the agent's newest key is one nobody was told.
      const record = state.keys.find((k) => k.prefix === key.slice(0, 9) + '…')
      const agentId = state.agents.find((a) => a.name === agent)?.id
      const newer = state.keys.some(
        (k) =>
          k.agentId === agentId &&
          record &&
          k.createdAt >= record.createdAt &&
          k.id !== record.id &&
          !k.revokedAt,
      )
      if (record?.revokedAt && newer) {
        figures.keysSuperseded++
        continue
      }
      figures.keysRejected++
      figures.failures.push(
        `latest key of ${agent} answered ${status} (${record ? `stored, revoked: ${!!record.revokedAt}` : 'not in the state file'})`,
      )
    }
    return figures
  } finally {
    await gw.cleanup()
  }
}
