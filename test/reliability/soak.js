// Soak: mixed streaming and plain model traffic at a steady rate against `gateway start --sim`.
// Checks: RSS growth after warm-up, open file descriptors, every request logged once, and the
// logged token totals equal to the usage the simulator sent (read from each answer).
import {createRequire} from 'node:module'
import {join} from 'node:path'
import {Agent} from 'undici'

import {isolatedGateway, issueKey, openFds, ROOT, rssBytes, sleep} from './lib.js'

const require = createRequire(join(ROOT, 'package.json'))

const KINDS = [
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

export async function soak({seconds = 600, rate = 200, log = console.log} = {}) {
  const gw = await isolatedGateway('soak')
  const dispatcher = new Agent({connections: 64})
  const figures = {
    seconds,
    rate,
    sent: 0,
    ok: 0,
    failed: 0,
    usageUnreadable: 0,
    sentInput: 0,
    sentOutput: 0,
    errors: {},
  }
  try {
    const start = await gw.cli(['gateway', 'start', '--sim'])
    if (start.code !== 0) throw new Error(`gateway start failed: ${start.stderr}`)
    const pid = gw.pid()
    const key = await issueKey(gw.base, 'soak-agent')
    const headers = {
      authorization: `Bearer ${key}`,
      'x-goog-api-key': key,
      'x-api-key': key,
      'content-type': 'application/json',
    }
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
    const warmUpMs = Math.max(5_000, seconds * 100) // 10 % of the run
    let baseline
    let samples = 0
    // RSS every tenth of the run: a curve that flattens is warm-up, one that keeps rising a leak
    const sampleEveryMs = Math.max(1_000, seconds * 100)
    let nextSample = t0 + sampleEveryMs
    figures.rssTrajectoryMiB = []
    let next = t0
    let i = 0
    while (Date.now() - t0 < seconds * 1000) {
      const now = Date.now()
      while (next <= now) {
        const p = one(KINDS[i++ % KINDS.length]).finally(() => inflight.delete(p))
        inflight.add(p)
        next += 1000 / rate
      }
      if (!baseline && now - t0 >= warmUpMs) {
        baseline = {rss: rssBytes(pid), fds: openFds(pid)}
        log(
          `  soak: baseline after warm-up: RSS ${(baseline.rss / 2 ** 20).toFixed(1)} MiB, ${baseline.fds} fds`,
        )
      }
      if (now >= nextSample) {
        nextSample += sampleEveryMs
        figures.rssTrajectoryMiB.push(Math.round(rssBytes(pid) / 2 ** 20))
      }
      if (++samples % 2000 === 0) log(`  soak: ${Math.round((now - t0) / 1000)} s, ${figures.sent} sent`)
      await sleep(Math.max(1, next - Date.now()))
    }
    await Promise.all(inflight)
    figures.elapsedS = (Date.now() - t0) / 1000
    figures.achievedRate = figures.sent / figures.elapsedS
    await sleep(500)
    const end = {rss: rssBytes(pid), fds: openFds(pid)}
    baseline ??= end
    figures.rssBaselineMiB = baseline.rss / 2 ** 20
    figures.rssEndMiB = end.rss / 2 ** 20
    figures.rssGrowthPct = ((end.rss - baseline.rss) / baseline.rss) * 100
    figures.fdsBaseline = baseline.fds
    figures.fdsEnd = end.fds
    await dispatcher.close()
    // a graceful stop writes the queued rows; then count them
    const stop = await gw.cli(['gateway', 'stop'])
    if (stop.code !== 0) throw new Error(`gateway stop failed: ${stop.stderr}`)
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
