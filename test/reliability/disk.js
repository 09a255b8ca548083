// Disk trouble: the daemon's GWCTL_HOME on a small tmpfs of its own, which is then filled up or
// remounted read-only while model traffic flows, and given back. Checks: every request answered
// 200 throughout, /health 200 with a `degraded` reason during the fault and without it after,
// `gwctl status` saying so, the failure logged once, and every row stored before the fault still
// there afterwards. Needs root and `mount` (a VM or container as root); otherwise skipped, said so.
import {execFileSync} from 'node:child_process'
import {closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync} from 'node:fs'
import {createRequire} from 'node:module'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {isolatedGateway, issueKey, ROOT, sleep} from './lib.js'
import {KINDS} from './soak.js'

const require = createRequire(join(ROOT, 'package.json'))

function mountTmpfs(megabytes) {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return undefined
  const dir = mkdtempSync(join(tmpdir(), 'gwctl-rel-disk-'))
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${megabytes}m,mode=0700`, 'tmpfs', dir], {
      stdio: 'ignore',
    })
    return dir
  } catch {
    rmSync(dir, {recursive: true, force: true})
    return undefined
  }
}

function fill(path) {
  const fd = openSync(path, 'w')
  const chunk = Buffer.alloc(64 * 1024)
  try {
    for (;;) writeSync(fd, chunk)
  } catch (error) {
    if (error.code !== 'ENOSPC') throw error
  } finally {
    closeSync(fd)
  }
}

function storedRequestIds(home) {
  const Database = require('better-sqlite3')
  const db = new Database(join(home, 'logs.db'), {readonly: true, fileMustExist: true})
  try {
    return new Set(db.prepare("SELECT request_id AS id FROM logs WHERE entrance != 'models'").pluck().all())
  } finally {
    db.close()
  }
}

export async function diskTrouble({requests = 60, log = console.log} = {}) {
  const results = []
  for (const fault of ['full', 'read-only']) {
    const dir = mountTmpfs(16)
    if (!dir) return {skipped: 'this machine does not let this user mount a tmpfs (needs root)', results}
    const gw = await isolatedGateway('disk', {parent: dir})
    let bound = false
    const r = {fault, before: 0, during: 0, after: 0, failed: 0, statuses: {}}
    try {
      log(`  disk: ${fault}`)
      const start = await gw.cli(['gateway', 'start', '--sim'])
      if (start.code !== 0) throw new Error(`gateway start failed: ${start.stderr}`)
      const key = await issueKey(gw.base, 'disk-agent')
      const headers = {authorization: `Bearer ${key}`, 'x-goog-api-key': key, 'x-api-key': key}
      let i = 0
      const send = async (n, phase) => {
        for (let k = 0; k < n; k++) {
          const kind = KINDS[i++ % KINDS.length]
          const res = await fetch(gw.base + kind.path, {
            method: 'POST',
            headers: {...headers, 'content-type': 'application/json'},
            body: JSON.stringify(kind.body),
          }).catch((error) => ({status: error.cause?.code ?? 'failed', text: async () => ''}))
          await res.text()
          if (res.status === 200) r[phase]++
          else {
            r.failed++
            r.statuses[res.status] = (r.statuses[res.status] ?? 0) + 1
          }
        }
      }
      await send(requests / 3, 'before')
      await sleep(300)
      const stored = storedRequestIds(gw.home)
      r.storedBefore = stored.size

      // read-only: a bind mount of the folder onto itself, remounted read-only (a plain remount is
      // refused while the daemon holds files open for writing). Files opened before keep writing;
      // every new file (the state's temp file + rename, a new lock) gets EROFS.
      if (fault === 'full') fill(join(dir, 'filler'))
      else {
        execFileSync('mount', ['--bind', dir, dir], {stdio: 'ignore'})
        bound = true
        execFileSync('mount', ['-o', 'remount,bind,ro', dir], {stdio: 'ignore'})
      }
      await send(requests / 3, 'during')
      // a key rotation cannot be saved: refused, and the key in use keeps working
      const rotation = await fetch(gw.base + '/api/keys/issue', {
        method: 'POST',
        headers: {'content-type': 'application/json'},
        body: JSON.stringify({
          agentName: 'disk-agent',
          agentType: 'generic_agent',
          employeeName: 'Reliability',
          employeeContact: 'rel@example.com',
        }),
      })
      r.rotationStatus = rotation.status
      r.rotationMessage = (await rotation.json()).error?.message ?? ''
      await send(3, 'during')
      await sleep(300)
      const health = await fetch(gw.base + '/health')
      r.healthStatus = health.status
      r.degraded = (await health.json()).degraded ?? null
      const status = await gw.cli(['status'])
      r.statusSaysDegraded = status.code === 0 && /\(degraded\)/.test(status.stdout)

      if (fault === 'full') rmSync(join(dir, 'filler'))
      else {
        execFileSync('umount', [dir], {stdio: 'ignore'}) // the read-only bind
        bound = false
      }
      await send(requests / 3, 'after')
      await sleep(300)
      // the log store clears at its next batch, the state at its next save (retried every 5 s)
      for (let waited = 0; waited < 12_000; waited += 500) {
        r.degradedAfter = (await (await fetch(gw.base + '/health')).json()).degraded ?? null
        if (r.degradedAfter === null) break
        await sleep(500)
      }
      const stop = await gw.cli(['gateway', 'stop'])
      r.stopped = stop.code === 0
      const now = storedRequestIds(gw.home)
      r.lostStored = [...stored].filter((id) => !now.has(id)).length
      r.storedAfter = now.size
      const daemonLog = readFileSync(join(gw.home, 'gateway.log'), 'utf8')
      const failures = daemonLog.split('\n').filter((l) => / error: (log store|state): /.test(l))
      r.failureLines = failures.length
      r.failureSources = new Set(failures.map((l) => / error: (log store|state): /.exec(l)[1])).size
      r.lostLogLinesNoted = /daemon log lines were lost/.test(daemonLog)
      r.recoveryLogged = /(log store|state): writing again/.test(daemonLog)
    } finally {
      if (bound) execFileSync('umount', [dir], {stdio: 'ignore'})
      await gw.cleanup()
      execFileSync('umount', ['-l', dir], {stdio: 'ignore'})
      rmSync(dir, {recursive: true, force: true})
    }
    results.push(r)
  }
  return {results}
}
