// Storage: logs.db and GWCTL_HOME under what users and machines do to them, at a larger scale than
// test/gateway-outside-reader.test.ts and test/home-faults.test.ts.
//   outside reader: loops of {gateway start --sim, model requests while another process (`sqlite3`,
//     else Node with better-sqlite3) reads logs.db in a loop, one `usage rescan`, kill -9 shortly
//     after the last answer}; after each: no deleted -wal/-shm held by the daemon, integrity_check
//     ok, and a row for every answered request.
//   damaged database: random bytes over the header, and over one page in the middle; then `logs` /
//     `usage` exit codes, `gateway start` moves it aside and serves, /health says degraded.
//   read-only home: a read-only bind mount of GWCTL_HOME (root and `mount`; else skipped, said
//     so); every command that must write exits 3.
import {execFile, execFileSync, spawnSync} from 'node:child_process'
import {randomBytes} from 'node:crypto'
import {closeSync, mkdirSync, openSync, readdirSync, readlinkSync, statSync, writeSync} from 'node:fs'
import {createRequire} from 'node:module'
import {join} from 'node:path'
import {pathToFileURL} from 'node:url'

import {alive, isolatedGateway, issueKey, ROOT, sleep} from './lib.js'

const require = createRequire(join(ROOT, 'package.json'))
const hasSqlite3 = spawnSync('sqlite3', ['-version']).status === 0
export const READER = hasSqlite3 ? 'sqlite3' : 'node + better-sqlite3'

/** One outside read of the log table, in its own process; a busy or locked answer is fine. */
function outsideRead(db) {
  const [cmd, args] = hasSqlite3
    ? ['sqlite3', [db, 'select count(*) from logs']]
    : [
        process.execPath,
        [
          '-e',
          `const D=require('better-sqlite3');const d=new D(process.argv[1]);d.prepare('select count(*) from logs').get();d.close()`,
          db,
        ],
      ]
  return new Promise((resolve) => {
    execFile(cmd, args, {timeout: 10_000, cwd: ROOT}, () => resolve())
  })
}

/** The daemon's open descriptors of logs.db files that were deleted under it. */
function deletedDbFiles(pid) {
  const out = []
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    let target
    try {
      target = readlinkSync(`/proc/${pid}/fd/${fd}`)
    } catch {
      continue
    }
    if (target.includes('logs.db') && target.endsWith('(deleted)')) out.push(target)
  }
  return out
}

function inspect(path) {
  const Database = require('better-sqlite3')
  const db = new Database(path)
  try {
    return {
      integrity: db.pragma('integrity_check', {simple: true}),
      rows: db.prepare("SELECT count(*) FROM logs WHERE entrance = 'chat' AND status = 200").pluck().get(),
    }
  } finally {
    db.close()
  }
}

const chat = (base, key, i) =>
  fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: {authorization: `Bearer ${key}`, 'content-type': 'application/json'},
    body: JSON.stringify({model: 'sim-mini', messages: [{role: 'user', content: `storage ${i}`}]}),
  })
    .then(async (r) => {
      await r.text()
      return r.status
    })
    .catch((error) => error.cause?.code ?? 'failed')

async function outsideReader({loops, requests, log}) {
  const gw = await isolatedGateway('reader')
  const dbPath = join(gw.home, 'logs.db')
  const f = {loops, requests, answered: 0, written: 0, reads: 0, rescans: 0, failures: []}
  let key
  let rowsBefore = 0
  try {
    for (let loop = 0; loop < loops; loop++) {
      const start = await gw.cli(['gateway', 'start', '--sim'])
      if (start.code !== 0) {
        f.failures.push(
          `loop ${loop}: gateway start exited ${start.code}: ${start.stderr.trim().slice(0, 200)}`,
        )
        continue
      }
      key ??= await issueKey(gw.base, 'storage-reader')
      const pid = gw.pid()
      let reading = true
      const reader = (async () => {
        while (reading) {
          await outsideRead(dbPath)
          f.reads++
        }
      })()
      let answered = 0
      let next = 0
      const statuses = {}
      const worker = async () => {
        while (next < requests) {
          const i = next++
          if (i === Math.floor(requests / 2)) {
            const rescan = await gw.cli(['usage', 'rescan', '--json'])
            if (rescan.code === 0) f.rescans++
            else f.failures.push(`loop ${loop}: usage rescan exited ${rescan.code}: ${rescan.stderr.trim()}`)
          }
          const s = await chat(gw.base, key, i)
          if (s === 200) answered++
          else statuses[s] = (statuses[s] ?? 0) + 1
        }
      }
      await Promise.all([worker(), worker(), worker(), worker()])
      if (Object.keys(statuses).length) f.failures.push(`loop ${loop}: not 200: ${JSON.stringify(statuses)}`)
      const held = pid ? deletedDbFiles(pid) : []
      if (held.length) f.failures.push(`loop ${loop}: daemon holds deleted ${held.join(', ')}`)
      await sleep(50)
      if (pid && alive(pid)) process.kill(pid, 'SIGKILL')
      for (let i = 0; i < 250 && pid && alive(pid); i++) await sleep(20)
      reading = false
      await reader
      const {integrity, rows} = inspect(dbPath)
      f.answered += answered
      f.written += rows - rowsBefore
      if (integrity !== 'ok') f.failures.push(`loop ${loop}: integrity_check: ${integrity}`)
      if (rows - rowsBefore !== answered)
        f.failures.push(`loop ${loop}: ${answered} answered 200, ${rows - rowsBefore} rows written`)
      rowsBefore = rows
      log(`  storage: reader loop ${loop + 1}/${loops}: ${answered} answered, ${rows} rows in all`)
    }
    return f
  } finally {
    await gw.cleanup()
  }
}

function logEntry(i) {
  return {
    time: Date.now() - 3_600_000 + i,
    agentId: `agt_${i % 7}`,
    keyPrefix: 'gw-abc…',
    policyId: 'default',
    entrance: 'chat',
    requestedModel: 'sim-mini',
    provider: 'sim',
    model: 'sim-mini',
    status: 200,
    fallback: false,
    inputTokens: 10,
    outputTokens: 20,
    cacheReadTokens: 0,
    cacheCreationTokens: 0,
    reasoningTokens: 0,
    latencyMs: 5,
    ttfbMs: 2,
    error: null,
    project: `project ${i} ${'x'.repeat(200)}`,
    requestId: `req_${i}`,
  }
}

/** Damaged databases moved aside (`logs.db.damaged-<time>`, not their -wal/-shm). */
const movedAside = (home) => readdirSync(home).filter((n) => /^logs\.db\.damaged-[\dTZ-]+Z$/.test(n)).length

function overwrite(path, offset, bytes) {
  const fd = openSync(path, 'r+')
  try {
    writeSync(fd, bytes, 0, bytes.length, offset)
  } finally {
    closeSync(fd)
  }
}

async function damaged({rows, requests, log}) {
  const {LogStore} = await import(pathToFileURL(join(ROOT, 'dist', 'store', 'log-store.js')).href)
  const results = []
  // 'middle page, large': every file counts as over the start-up check's size limit, so the start
  // only takes a quick look; the full check after the start must find it, and a restart move it
  for (const damage of ['header', 'middle page', 'middle page, large']) {
    log(`  storage: damaged ${damage}`)
    const gw = await isolatedGateway('damaged')
    const path = join(gw.home, 'logs.db')
    const r = {damage, rows, served: 0, statuses: {}}
    try {
      const store = await LogStore.open(path)
      for (let i = 0; i < rows; i++) store.append(logEntry(i))
      store.flush()
      store.close()
      r.pages = statSync(path).size / 4096
      if (damage === 'header') overwrite(path, 0, randomBytes(100))
      else overwrite(path, Math.floor(r.pages / 2) * 4096, randomBytes(4096))
      r.logsBefore = (await gw.cli(['logs'])).code
      r.usageBefore = (await gw.cli(['usage'])).code
      const large = damage.endsWith('large')
      const env = large ? {env: {...gw.env, GWCTL_LOGDB_START_CHECK_MB: '0'}} : {}
      let start = await gw.cli(['gateway', 'start', '--sim'], env)
      if (large && start.code === 0) {
        r.movedAtStart = movedAside(gw.home)
        const t0 = Date.now()
        for (; Date.now() - t0 < 15_000; await sleep(100)) {
          const degraded = (await (await fetch(`${gw.base}/health`)).json()).degraded
          if (/log database: it is damaged/.test(degraded ?? '')) {
            r.foundAfterStartMs = Date.now() - t0
            break
          }
        }
        start = await gw.cli(['gateway', 'restart'], env)
      }
      r.start = start.code
      r.movedAside = movedAside(gw.home)
      if (start.code === 0) {
        const health = await fetch(`${gw.base}/health`)
        r.healthStatus = health.status
        r.degraded = (await health.json()).degraded ?? null
        const key = await issueKey(gw.base, 'storage-damaged')
        for (let i = 0; i < requests; i++) {
          const s = await chat(gw.base, key, i)
          if (s === 200) r.served++
          else r.statuses[s] = (r.statuses[s] ?? 0) + 1
        }
        await sleep(300)
        r.logsAfter = (await gw.cli(['logs'])).code
        r.usageAfter = (await gw.cli(['usage'])).code
        r.stop = (await gw.cli(['gateway', 'stop'])).code
        r.written = inspect(path).rows
      }
    } finally {
      await gw.cleanup()
    }
    results.push(r)
  }
  return results
}

function canMount() {
  if (process.platform !== 'linux') return 'not Linux: no bind mounts'
  if (process.getuid?.() !== 0) return 'not root: a read-only bind mount needs root'
  return null
}

const keyIssue = (agent) => [
  'key',
  'issue',
  '--agent-name',
  agent,
  '--agent-type',
  'codex',
  '--employee-name',
  'A',
  '--employee-contact',
  'a@b.c',
]

export const WRITING = (port) => [
  ['gateway', 'start'],
  ['gateway', 'run', '--port', String(port)],
  ['logs'],
  ['usage'],
  ['usage', 'rescan'],
  keyIssue('ro-b'),
  ['providers', 'add', 'p1', '--family', 'chat', '--base-url', 'http://127.0.0.1:9/v1'],
  ['config', 'set', 'chat.model', 'x'],
]

async function readOnlyHome({log}) {
  const why = canMount()
  if (why) return {skipped: why}
  const gw = await isolatedGateway('rohome')
  let bound = false
  try {
    mkdirSync(gw.home, {recursive: true})
    const issue = await gw.cli(keyIssue('ro-a'))
    if (issue.code !== 0) throw new Error(`key issue exited ${issue.code}: ${issue.stderr}`)
    if ((await gw.cli(['gateway', 'start', '--sim'])).code !== 0) throw new Error('gateway start failed')
    if ((await gw.cli(['gateway', 'stop'])).code !== 0) throw new Error('gateway stop failed')
    try {
      execFileSync('mount', ['--bind', gw.home, gw.home], {stdio: 'ignore'})
      bound = true
      execFileSync('mount', ['-o', 'remount,ro,bind', gw.home], {stdio: 'ignore'})
    } catch (error) {
      return {skipped: `a read-only bind mount could not be made here: ${error.message.split('\n')[0]}`}
    }
    log('  storage: read-only home')
    const commands = []
    for (const args of WRITING(gw.port)) {
      const r = await gw.cli(args, {timeoutMs: 20_000})
      commands.push({
        command: args.slice(0, 2).join(' '),
        code: r.code,
        bug: /This is a bug/.test(r.stderr),
        says: /read-only|EROFS|cannot be opened/.test(r.stderr),
      })
    }
    return {commands}
  } finally {
    if (bound) execFileSync('umount', ['-l', gw.home], {stdio: 'ignore'})
    await gw.cleanup()
  }
}

export async function storage({loops = 10, requests = 200, log = console.log} = {}) {
  const reader = await outsideReader({loops, requests, log})
  const damage = await damaged({rows: 3000, requests: 20, log})
  const readOnly = await readOnlyHome({log})
  return {reader, damage, readOnly}
}
