// Soak: mixed streaming and plain model traffic at a steady rate against `gateway start --sim`.
// Checks: RSS growth after warm-up, open file descriptors, every request logged once, and the
// logged token totals equal to the usage the simulator sent (read from each answer).
import {spawn} from 'node:child_process'
import {closeSync, openSync, readFileSync} from 'node:fs'
import {createRequire} from 'node:module'
import {join} from 'node:path'
import {Agent} from 'undici'

import {BIN, isolatedGateway, issueKey, openFds, ROOT, rssBytes, sleep} from './lib.js'

const require = createRequire(join(ROOT, 'package.json'))

export const KINDS = [
  {
    path: '/v1/chat/completions',
    body: {
      model: 'sim-mini',
      stream: true,
      stream_options: {include_usage: true},
      messages: [{role: 'user', content: 'soak'}],
    },
    usage: (text) =>
      lastJson(text, (j) => j.usage && {input: j.usage.prompt_tokens, output: j.usage.completion_tokens}),
  },
  {
    path: '/v1/chat/completions',
    body: {model: 'sim-mini', messages: [{role: 'user', content: 'soak'}]},
    usage: (text) => {
      const j = JSON.parse(text)
      return {input: j.usage.prompt_tokens, output: j.usage.completion_tokens}
    },
  },
  {
    path: '/v1/messages',
    body: {model: 'claude-sim', max_tokens: 64, stream: true, messages: [{role: 'user', content: 'soak'}]},
    usage: (text) => {
      const start = lastJson(text, (j) => j.type === 'message_start' && j.message.usage)
      const delta = lastJson(text, (j) => j.type === 'message_delta' && j.usage)
      // the log store counts every prompt token, cache reads and writes included (taps/tap.ts)
      const input =
        start.input_tokens + (start.cache_read_input_tokens ?? 0) + (start.cache_creation_input_tokens ?? 0)
      return {input, output: delta.output_tokens}
    },
  },
  {
    path: '/v1beta/models/gemini-sim:streamGenerateContent?alt=sse',
    body: {contents: [{role: 'user', parts: [{text: 'soak'}]}]},
    usage: (text) =>
      lastJson(
        text,
        (j) =>
          j.usageMetadata && {
            input: j.usageMetadata.promptTokenCount,
            output: j.usageMetadata.candidatesTokenCount,
          },
      ),
  },
  {
    path: '/v1/responses',
    body: {model: 'sim-mini', stream: true, input: 'soak'},
    usage: (text) =>
      lastJson(
        text,
        (j) =>
          j.type === 'response.completed' && {
            input: j.response.usage.input_tokens,
            output: j.response.usage.output_tokens,
          },
      ),
  },
]

/** The last `data:` JSON of an SSE text for which `pick` returns something. */
function lastJson(text, pick) {
  const lines = text.split('\n').filter((l) => l.startsWith('data:'))
  for (let i = lines.length - 1; i >= 0; i--) {
    try {
      const found = pick(JSON.parse(lines[i].slice(5)))
      if (found) return found
    } catch {
      // [DONE] and the like
    }
  }
  throw new Error('no usage in the answer')
}

/** Requests in flight at most (the rate times a few seconds of latency, with room to spare). */
const MAX_IN_FLIGHT = 512

/**
 * The live heap after each full collection of the daemon, from its `--trace-gc` lines
 * (`[pid:0x..]   81234 ms: Mark-Compact 41.2 (52.0) -> 30.9 (51.5) MB, ...`; times since the
 * daemon started, the load about `loadStartMs` later): the median of those in the 10 % after the
 * warm-up against that of the last 10 %, the lowest after the warm-up and the highest of all.
 */
export function liveHeap(log, warmUpMs, runMs, loadStartMs) {
  const marks = []
  for (const m of log.matchAll(/ (\d+) ms: Mark-Compact(?: \(reduce\))? [\d.]+ \([\d.]+\) -> ([\d.]+) \(/g))
    marks.push({at: Number(m[1]), mb: Number(m[2])})
  if (marks.length === 0) return {heapMarks: 0}
  const t0 = loadStartMs
  const after = marks.filter((x) => x.at - t0 >= warmUpMs)
  const median = (xs) => {
    const sorted = xs.map((x) => x.mb).sort((a, b) => a - b)
    return sorted.length ? sorted[Math.floor(sorted.length / 2)] : NaN
  }
  const end = marks[marks.length - 1].at
  const early = median(after.filter((x) => x.at - t0 < warmUpMs + runMs / 10))
  const late = median(after.filter((x) => x.at >= end - runMs / 10))
  return {
    heapMarks: marks.length,
    heapEarlyMiB: early,
    heapLateMiB: late,
    heapGrowthPct: ((late - early) / early) * 100,
    heapMinMiB: Math.min(...after.map((x) => x.mb)),
    heapMaxMiB: Math.max(...marks.map((x) => x.mb)),
  }
}

export async function soak({seconds = 600, rate = 200, log = console.log} = {}) {
  const gw = await isolatedGateway('soak')
  const dispatcher = new Agent({connections: 64})
  const figures = {
    seconds,
    rate,
    sent: 0,
    ok: 0,
    failed: 0,
    notSent: 0,
    usageUnreadable: 0,
    sentInput: 0,
    sentOutput: 0,
    errors: {},
  }
  try {
    // The daemon in the foreground (`gateway run`, the detached daemon's own code) under
    // `node --trace-gc` (not allowed in NODE_OPTIONS): it logs the heap after each garbage
    // collection; the size after a full (mark-compact) one is what is still reachable, the leak
    // signal that RSS, swinging with the collector's rhythm and V8's heap sizing, only hints at.
    const daemonStart = Date.now()
    const daemonLog = openSync(join(gw.home, 'soak-daemon.log'), 'w')
    const daemon = spawn(process.execPath, ['--trace-gc', BIN, 'gateway', 'run', '--sim'], {
      env: gw.env,
      stdio: ['ignore', daemonLog, daemonLog],
    })
    closeSync(daemonLog)
    const start = {code: 1, stderr: 'no /health within 30 s'}
    for (let waited = 0; waited < 30_000 && daemon.exitCode === null; waited += 200) {
      try {
        if ((await fetch(`${gw.base}/health`)).status === 200) {
          start.code = 0
          break
        }
      } catch {
        // not listening yet
      }
      await sleep(200)
    }
    if (start.code !== 0) throw new Error(`gateway start failed: ${start.stderr}`)
    const pid = gw.pid()
    const key = await issueKey(gw.base, 'soak-agent')
    const headers = {
      authorization: `Bearer ${key}`,
      'x-goog-api-key': key,
      'x-api-key': key,
      'content-type': 'application/json',
    }
    // Descriptors with no traffic: compared with the same after the run, once the client has
    // closed its connections and the keep-alive pools have let theirs go. Under load the count
    // follows the concurrency (a client socket, and a pooled upstream socket on both ends when the
    // simulator runs in the daemon), so only idle counts say whether one leaked.
    figures.fdsIdleBefore = openFds(pid)
    const one = async (kind) => {
      figures.sent++
      try {
        const res = await fetch(gw.base + kind.path, {
          method: 'POST',
          headers,
          body: JSON.stringify(kind.body),
          dispatcher,
        })
        const text = await res.text()
        if (res.status !== 200) {
          figures.failed++
          figures.errors[res.status] = (figures.errors[res.status] ?? 0) + 1
          return
        }
        figures.ok++
        try {
          const usage = kind.usage(text)
          figures.sentInput += usage.input
          figures.sentOutput += usage.output
        } catch {
          figures.usageUnreadable++
        }
      } catch (error) {
        figures.failed++
        const code = error.cause?.code ?? error.message
        figures.errors[code] = (figures.errors[code] ?? 0) + 1
      }
    }
    const inflight = new Set()
    const t0 = Date.now()
    // V8 sizes its heap to the traffic over the first minutes (RSS climbs, then swings around a
    // level with each major GC): the first 20 % of the run is warm-up, then growth is measured
    // from the next 10 % to the last 10 %, where a leak would still show as a steady climb.
    const warmUpMs = Math.max(5_000, seconds * 200)
    let baseline
    let samples = 0
    // RSS every 5 s: one reading swings by tens of MiB with the garbage collector's rhythm, so
    // growth compares medians: of the readings in the 10 % after warm-up, and of the last 10 %
    const rss = []
    let nextSample = t0
    let next = t0
    let i = 0
    while (Date.now() - t0 < seconds * 1000) {
      const now = Date.now()
      while (next <= now) {
        next += 1000 / rate
        // A client that cannot keep the rate (a loaded machine) must not queue without bound: a
        // run of 26 November queued tens of thousands in its own pool, grew to 2.6 GB and stalled
        // long enough to write on connections the gateway had closed as idle. Requests due while
        // this many are in flight are not sent (counted), and the achieved rate says so.
        if (inflight.size >= MAX_IN_FLIGHT) {
          figures.notSent++
          continue
        }
        const p = one(KINDS[i++ % KINDS.length]).finally(() => inflight.delete(p))
        inflight.add(p)
      }
      if (!baseline && now - t0 >= warmUpMs) {
        baseline = {rss: rssBytes(pid), fds: openFds(pid)}
        log(
          `  soak: baseline after warm-up: RSS ${(baseline.rss / 2 ** 20).toFixed(1)} MiB, ${baseline.fds} fds`,
        )
      }
      if (now >= nextSample) {
        rss.push({at: now - t0, bytes: rssBytes(pid)})
        nextSample += 5_000
      }
      if (++samples % 2000 === 0)
        log(
          `  soak: ${Math.round((now - t0) / 1000)} s, ${figures.sent} sent, RSS ${(rssBytes(pid) / 2 ** 20).toFixed(1)} MiB, ${openFds(pid)} fds`,
        )
      await sleep(Math.max(1, next - Date.now()))
    }
    await Promise.all(inflight)
    figures.elapsedS = (Date.now() - t0) / 1000
    figures.achievedRate = figures.sent / figures.elapsedS
    await sleep(500)
    const end = {rss: rssBytes(pid), fds: openFds(pid)}
    baseline ??= end
    const median = (xs) => {
      const sorted = xs.map((x) => x.bytes).sort((a, b) => a - b)
      return sorted.length ? sorted[Math.floor(sorted.length / 2)] : end.rss
    }
    const runMs = seconds * 1000
    const early = median(rss.filter((x) => x.at >= warmUpMs && x.at < warmUpMs + runMs / 10))
    const late = median(rss.filter((x) => x.at >= runMs * 0.9))
    figures.rssSamples = rss.length
    figures.rssBaselineMiB = early / 2 ** 20
    figures.rssEndMiB = late / 2 ** 20
    figures.rssGrowthPct = ((late - early) / early) * 100
    figures.rssMaxMiB = Math.max(...rss.map((x) => x.bytes)) / 2 ** 20
    figures.fdsBaseline = baseline.fds
    figures.fdsEnd = end.fds
    await dispatcher.close()
    // idle again: the upstream pool and the simulator keep idle connections for 30 s
    for (let waited = 0; waited < 45_000; waited += 250) {
      figures.fdsIdleAfter = openFds(pid)
      if (figures.fdsIdleAfter <= figures.fdsIdleBefore) break
      await sleep(250)
    }
    Object.assign(
      figures,
      liveHeap(readFileSync(join(gw.home, 'soak-daemon.log'), 'utf8'), warmUpMs, runMs, t0 - daemonStart),
    )
    // a graceful stop writes the queued rows; then count them
    const stop = await gw.cli(['gateway', 'stop'])
    if (stop.code !== 0) throw new Error(`gateway stop failed: ${stop.stderr}`)
    if (daemon.exitCode === null) await new Promise((resolve) => daemon.once('exit', resolve))
    const Database = require('better-sqlite3')
    const db = new Database(join(gw.home, 'logs.db'), {readonly: true})
    const row = db
      .prepare(
        `SELECT count(*) AS n, count(DISTINCT request_id) AS ids, sum(status = 200) AS ok, sum(input_tokens) AS input, sum(output_tokens) AS output
         FROM logs WHERE entrance != 'models' AND key_prefix IS NOT NULL AND agent_id IS NOT NULL`,
      )
      .get()
    db.close()
    figures.loggedRows = row.n
    figures.loggedDistinctRequestIds = row.ids
    figures.logged200 = row.ok
    figures.loggedInput = row.input
    figures.loggedOutput = row.output
    return figures
  } finally {
    await gw.cleanup()
  }
}
