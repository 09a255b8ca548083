// In-process micro benchmarks of the gateway's hot data structures (run by bench/run.js):
// key lookup at 10 and 100 000 keys, the log store at 2 000 req/s, a usage pivot over 1 000 000 rows.
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {monitorEventLoopDelay} from 'node:perf_hooks'

const {KeyIndex, generateKey, hashKey, displayPrefix} = await import('../dist/gateway/keys.js')
const {LogStore} = await import('../dist/store/log-store.js')

function median(samples) {
  const s = [...samples].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]
}

function keyIndexOf(n) {
  const secret = 'a'.repeat(64)
  const keys = []
  const state = {version: 1, secret, employees: [], agents: [], keys: [], policies: [], providers: []}
  for (let i = 0; i < n; i++) {
    const key = generateKey()
    keys.push(key)
    state.agents.push({
      id: `agt_${i}`,
      name: `a${i}`,
      type: 'generic_agent',
      employeeId: 'e',
      policyId: 'default',
      createdAt: 0,
      updatedAt: 0,
    })
    state.keys.push({
      id: `key_${i}`,
      agentId: `agt_${i}`,
      hash: hashKey(secret, key),
      prefix: displayPrefix(key),
      createdAt: 0,
    })
  }
  // The same number of distinct probe keys at every size (10, spread over the index), so that the
  // comparison measures the index, not how many probe strings stay in the CPU cache.
  return {
    index: new KeyIndex(state),
    probe: Array.from({length: 10}, (_, i) => keys[Math.floor((i * n) / 10)]),
  }
}

/**
 * Nanoseconds per verify. `cold`: the index's memory of verified keys is emptied before each call
 * (bench only: it reaches into the private map), so every verify hashes the key and looks the hash
 * up, as for a key's first request; warm: the remembered path of an agent's next requests.
 */
function verifyRound({index, probe}, cold) {
  const remembered = index.verified
  const t0 = process.hrtime.bigint()
  for (let i = 0; i < 20_000; i++) {
    if (cold) remembered.clear()
    if (!index.verify(probe[i % probe.length]).ok) throw new Error('lookup failed')
  }
  return Number(process.hrtime.bigint() - t0) / 20_000
}

/**
 * Nanoseconds per verify() of a valid key with `small` and with `large` keys in the index. Rounds
 * alternate between the two so that machine noise hits both alike.
 */
export function keyLookup(small, large) {
  const a = keyIndexOf(small)
  const b = keyIndexOf(large)
  const ra = []
  const rb = []
  const warm = []
  for (let r = 0; r < 11; r++) {
    ra.push(verifyRound(a, true))
    rb.push(verifyRound(b, true))
    warm.push(verifyRound(b, false))
  }
  return {small: median(ra), large: median(rb), remembered: median(warm)}
}

function entry(i, time) {
  return {
    time,
    agentId: `agt_${i % 50}`,
    keyPrefix: `gw-k${i % 50}…`,
    policyId: i % 3 ? 'default' : 'claude_code_default',
    entrance: ['chat', 'responses', 'messages', 'gemini'][i % 4],
    requestedModel: `model-${i % 8}`,
    provider: `provider-${i % 5}`,
    model: `model-${i % 8}`,
    status: i % 40 === 0 ? 502 : 200,
    fallback: i % 25 === 0,
    inputTokens: 1000 + (i % 300),
    outputTokens: 200 + (i % 50),
    cacheReadTokens: i % 100,
    cacheCreationTokens: i % 7,
    reasoningTokens: i % 11,
    latencyMs: 300 + (i % 500),
    ttfbMs: 100 + (i % 90),
    error: null,
    project: `project-${i % 12}`,
    requestId: `req_${i}`,
  }
}

/** Appends at 2 000 rows/s for `seconds`; reports the event-loop delay the batched writes cause. */
export async function logStoreRate(seconds = 5, perSecond = 2000) {
  const dir = mkdtempSync(join(tmpdir(), 'gwctl-bench-'))
  const store = await LogStore.open(join(dir, 'logs.db'))
  const delay = monitorEventLoopDelay({resolution: 1})
  delay.enable()
  let i = 0
  const t0 = Date.now()
  let maxPending = 0
  let committed = 0
  await new Promise((resolve) => {
    // Paced by the clock, not by the timer: each tick appends the rows due since the start, so a
    // late tick (timers drift, the store's own writes run on this loop) does not lower the
    // offered rate. What the store keeps up with is what it committed by the end, without the
    // final flush.
    const timer = setInterval(() => {
      const elapsed = Date.now() - t0
      const due = Math.min(Math.floor((elapsed * perSecond) / 1000), seconds * perSecond)
      while (i < due) store.append(entry(i++, Date.now()))
      maxPending = Math.max(maxPending, store.pending)
      if (elapsed >= seconds * 1000) {
        clearInterval(timer)
        committed = i - store.pending
        resolve()
      }
    }, 10)
  })
  const elapsed = (Date.now() - t0) / 1000
  store.flush()
  delay.disable()
  const written = store.queryLogs({limit: 1})[0]?.id ?? 0
  store.close()
  rmSync(dir, {recursive: true, force: true})
  if (written !== i) throw new Error(`log store: ${i} rows appended, ${written} written`)
  return {
    rate: committed / elapsed,
    offered: i / elapsed,
    written,
    p99DelayMs: delay.percentile(99) / 1e6,
    maxDelayMs: delay.max / 1e6,
    maxPending,
  }
}

/** Fills 1 000 000 rows over the last 7 days, then times each usage pivot (median of 5). */
export async function pivot(rows = 1_000_000) {
  const dir = mkdtempSync(join(tmpdir(), 'gwctl-bench-'))
  const store = await LogStore.open(join(dir, 'logs.db'), {batchSize: 1e9, flushMs: 1e9})
  const now = Date.now()
  const span = 7 * 24 * 3600 * 1000
  for (let i = 0; i < rows; i++) {
    store.append(entry(i, now - span + Math.floor((i / rows) * span)))
    if (i % 50_000 === 49_999) store.flush()
  }
  store.flush()
  const since = Math.floor((now - span) / 1000)
  const results = {}
  for (const p of ['agent', 'key', 'provider', 'model', 'project']) {
    const samples = []
    for (let r = 0; r < 5; r++) {
      const t0 = performance.now()
      const out = store.usage({pivot: p, since})
      samples.push(performance.now() - t0)
      if (out.length === 0) throw new Error('empty pivot')
    }
    results[p] = median(samples)
  }
  // A window that starts mid-hour reads raw rows for the partial hour.
  const t0 = performance.now()
  store.usage({pivot: 'model', since: Math.floor((now - span / 2) / 1000) + 1234})
  results['model, since mid-hour'] = performance.now() - t0
  store.close()
  rmSync(dir, {recursive: true, force: true})
  return results
}
