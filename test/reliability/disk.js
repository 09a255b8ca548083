// Disk trouble: GWCTL_HOME on a small tmpfs (mounted here; needs root, else the part is skipped
// with a note), filled up while the gateway serves. Checks: model traffic keeps flowing, the log
// store's failure is logged once in the daemon log, /health stays 200 with `degraded`,
// `gwctl status` shows it, and the rows stored before the disk filled are still in logs.db.
import {execFileSync} from 'node:child_process'
import {existsSync, mkdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {createRequire} from 'node:module'
import {join} from 'node:path'

import {isolatedGateway, issueKey, sleep} from './lib.js'

const require = createRequire(import.meta.url)

function countRows(home) {
  const Database = require('better-sqlite3')
  const db = new Database(join(home, 'logs.db'), {readonly: true})
  try {
    return db.prepare(`SELECT count(*) AS n FROM logs WHERE entrance = 'chat'`).get().n
  } finally {
    db.close()
  }
}

export async function disk({requests = 100, log = console.log} = {}) {
  const gw = await isolatedGateway('disk')
  const figures = {mounted: false, before: 0, okWhileFull: 0, sentWhileFull: requests}
  try {
    rmSync(join(gw.home, 'user-home'), {recursive: true, force: true})
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', gw.home], {stdio: 'pipe'})
      figures.mounted = true
    } catch (error) {
      figures.skipped = `could not mount a tmpfs (${String(error.stderr ?? error.message).trim()})`
      return figures
    }
    mkdirSync(join(gw.home, 'user-home'))
    const start = await gw.cli(['gateway', 'start', '--sim'])
    if (start.code !== 0) throw new Error(`gateway start failed: ${start.stderr}`)
    const key = await issueKey(gw.base, 'disk-agent')
    const chat = async () => {
      const res = await fetch(`${gw.base}/v1/chat/completions`, {
        method: 'POST',
        headers: {authorization: `Bearer ${key}`, 'content-type': 'application/json'},
        body: JSON.stringify({model: 'sim-mini', messages: [{role: 'user', content: 'disk'}]}),
      })
      await res.text()
      return res.status
    }
    const tryChat = () => chat().catch((error) => error.cause?.code ?? error.message)
    for (let i = 0; i < 20; i++) if ((await chat()) !== 200) throw new Error('a chat failed before the fault')
    await sleep(1_000) // past the log store's batch window
    figures.before = countRows(gw.home)
    // fill the disk
    const filler = join(gw.home, 'filler')
    const block = Buffer.alloc(64 * 1024, 'x')
    try {
      for (let i = 0; i < 1000; i++) writeFileSync(filler, block, {flag: 'a'})
    } catch (error) {
      if (error.code !== 'ENOSPC') throw error
    }
    figures.failuresWhileFull = {}
    for (let i = 0; i < requests; i++) {
      const status = await tryChat()
      if (status === 200) figures.okWhileFull++
      else figures.failuresWhileFull[status] = (figures.failuresWhileFull[status] ?? 0) + 1
    }
    figures.daemonAlive =
      Boolean(gw.pid()) &&
      (await fetch(`${gw.base}/health`).then(
        () => true,
        () => false,
      ))
    if (!figures.daemonAlive) {
      figures.daemonLogTail = readFileSync(join(gw.home, 'gateway.log'), 'utf8')
        .split('\n')
        .slice(-8)
        .join('\n')
      log(figures.daemonLogTail)
      return figures
    }
    await sleep(1_000)
    const health = await fetch(`${gw.base}/health`)
    figures.healthStatus = health.status
    const body = await health.json()
    figures.healthFields = Object.keys(body).join(', ')
    figures.degraded = body.degraded ?? null
    const status = await gw.cli(['status'])
    figures.statusExit = status.code
    figures.statusSays = /Degraded: /.test(status.stderr) && /Running \(degraded\)/.test(status.stdout)
    const daemonLog = join(gw.home, 'gateway.log')
    figures.logLines = existsSync(daemonLog)
      ? readFileSync(daemonLog, 'utf8')
          .split('\n')
          .filter((l) => l.includes('usage rows are being lost')).length
      : 0
    rmSync(filler, {force: true})
    const stop = await gw.cli(['gateway', 'stop'])
    figures.stopExit = stop.code
    figures.after = countRows(gw.home)
    log(`  disk: ${JSON.stringify(figures)}`)
    return figures
  } finally {
    await gw.cleanup(figures.mounted) // a mount point is removed after its umount
    if (figures.mounted) {
      try {
        execFileSync('umount', ['-l', gw.home], {stdio: 'pipe'})
      } catch {
        // already gone
      }
      rmSync(gw.home, {recursive: true, force: true})
    }
  }
}
