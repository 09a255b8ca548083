// Upstream faults: a policy of two providers per protocol (`up-*` first, `alt-*` second), each a
// standalone simulator (`gwctl sim`) of its own, whose queued faults hit that provider only. For each of the
// four protocols, streamed and not: reset before headers, 5xx, 429 with Retry-After, a stall
// past the first-byte timeout and (not streamed) headers then silence fall back to `alt-*` before
// the first byte (504 when no target is left); a stream that ends without its terminal event gets
// the protocol's error event and an error row counted as 5xx (chat and messages: unless the
// answer's stop came before it, then it is whole); a 200 of malformed JSON
// passes as sent and is flagged in its log row; a reset mid-stream ends the stream with an error
// event in the protocol's shape; both providers failing gives 502/503 in the entrance's shape; a
// slow client still gets the whole stream with its usage logged; the breaker of `up-*` opens
// after its threshold and closes after its cooldown.
import {spawn} from 'node:child_process'

import {BIN, freePort, isolatedGateway, issueKey, shapeProblem, sleep} from './lib.js'

const BREAKER = {failureThreshold: 3, cooldownMs: 2_000}
const TIMEOUTS = {connectMs: 1_000, firstByteMs: 1_000, idleMs: 1_000}

const FAMILIES = {
  chat: {
    path: () => '/v1/chat/completions',
    body: (stream, quirk = '') => ({
      model: 'sim-mini' + quirk,
      stream,
      messages: [{role: 'user', content: 'faults'}],
    }),
    end: 'data: [DONE]',
  },
  responses: {
    path: () => '/v1/responses',
    body: (stream, quirk = '') => ({model: 'sim-mini' + quirk, stream, input: 'faults'}),
    end: 'response.completed',
  },
  messages: {
    path: () => '/v1/messages',
    body: (stream, quirk = '') => ({
      model: 'claude-sim' + quirk,
      max_tokens: 64,
      stream,
      messages: [{role: 'user', content: 'faults'}],
    }),
    end: 'message_stop',
  },
  gemini: {
    path: (stream, quirk = '') =>
      stream
        ? `/v1beta/models/gemini-sim${quirk}:streamGenerateContent?alt=sse`
        : `/v1beta/models/gemini-sim${quirk}:generateContent`,
    body: () => ({contents: [{role: 'user', parts: [{text: 'faults'}]}]}),
    end: '"finishReason"',
  },
}

/** Each case: the fault queued for the first try, whether it needs a stream, and what must hold. */
const CASES = [
  {name: 'reset before headers', fault: 'reset', expect: 'fallback'},
  {name: '500', fault: 'status=500', expect: 'fallback'},
  {name: '429 with Retry-After', fault: 'status=429,retry-after=1', expect: 'fallback'},
  {name: 'stall past the first-byte timeout', fault: 'delay=2500', expect: 'fallback'},
  // headers, then silence: nothing reached a plain client (fallback); a stream's headers did (error event)
  {name: 'stall after the headers', fault: 'stall', expect: 'fallback', streamExpect: 'error-event'},
  {
    name: 'stall after the headers, no fallback left',
    fault: 'stall',
    both: true,
    plainOnly: true,
    expect: 'failed',
    status: 504,
  },
  // chat and messages: the answer's stop (a finish_reason, message_delta's stop_reason with the
  // usage) came before; the stream is whole without `[DONE]` or `message_stop`
  {
    name: 'stream without its terminal event',
    quirk: '+no-terminal',
    streamOnly: true,
    expect: 'truncated',
    familyExpect: {chat: 'whole', messages: 'whole'},
  },
  {name: 'malformed JSON in a 200', fault: 'malformed', expect: 'flagged'},
  {name: 'reset mid-stream', fault: 'reset,chunk-delay=20', streamOnly: true, expect: 'error-event'},
  {name: 'both providers fail', fault: 'status=503', both: true, expect: 'failed'},
  {name: 'slow client', fault: null, streamOnly: true, expect: 'slow-client'},
]

async function startSim(port) {
  const child = spawn(process.execPath, [BIN, 'sim', '--port', String(port), '--time-scale', '100000'], {
    stdio: 'ignore',
    env: {...process.env, NODE_EXTRA_CA_CERTS: ''},
  })
  const origin = `http://127.0.0.1:${port}`
  for (let i = 0; i < 100; i++) {
    if (
      await fetch(origin + '/__sim/requests').then(
        () => true,
        () => false,
      )
    )
      return {child, origin}
    await sleep(50)
  }
  child.kill()
  throw new Error('the simulator did not start')
}

export async function upstreamFaults({log = console.log, only} = {}) {
  const sim = await startSim(await freePort())
  const simAlt = await startSim(await freePort())
  const gw = await isolatedGateway('upstream')
  const outcomes = []
  let breakerChecks = []
  try {
    for (const family of Object.keys(FAMILIES))
      for (const name of [`up-${family}`, `alt-${family}`]) {
        const added = await gw.cli(
          [
            'providers',
            'add',
            name,
            '--family',
            family,
            '--base-url',
            (name.startsWith('up-') ? sim : simAlt).origin,
            '--api-key-stdin',
          ],
          {input: 'sim-upstream-key-0123456789\n'},
        )
        if (added.code !== 0) throw new Error(`providers add ${name}: ${added.stderr}`)
      }
    // The cases run with a breaker that never opens (each case's fault must reach `up-*`, the
    // first try); the breaker is checked afterwards with its real threshold, after a restart.
    const setPolicy = async (breaker) => {
      const policy = {
        routes: Object.fromEntries(
          Object.keys(FAMILIES).map((f) => [f, [{provider: `up-${f}`}, {provider: `alt-${f}`}]]),
        ),
        fallbacks: true,
        breaker,
        timeouts: TIMEOUTS,
      }
      const set = await gw.cli(['policies', 'set', 'faults', '--file', '-'], {input: JSON.stringify(policy)})
      if (set.code !== 0) throw new Error(`policies set: ${set.stderr}`)
    }
    await setPolicy({failureThreshold: 1_000_000, cooldownMs: 0})
    const start = await gw.cli(['gateway', 'start'])
    if (start.code !== 0) throw new Error(`gateway start: ${start.stderr}`)
    const key = await issueKey(gw.base, 'fault-agent', 'generic_agent', 'faults')
    const headers = {
      authorization: `Bearer ${key}`,
      'x-api-key': key,
      'x-goog-api-key': key,
      'content-type': 'application/json',
    }
    const queue = (fault, path, target = sim) =>
      fetch(target.origin + '/__sim/faults', {
        method: 'POST',
        headers: {'content-type': 'application/json'},
        body: JSON.stringify({fault: `${fault},path=${path.split('?')[0]}`}),
      })
    const lastRow = async () => {
      await sleep(40) // the log batch window is 10 ms
      const res = await fetch(gw.base + '/api/logs?limit=1')
      const body = await res.json()
      return (body.logs ?? body)[0]
    }

    for (const [family, spec] of Object.entries(FAMILIES))
      for (const stream of [false, true])
        for (const c of CASES) {
          if (c.streamOnly && !stream) continue
          if (c.plainOnly && stream) continue
          const expect = c.familyExpect?.[family] || (stream && c.streamExpect) || c.expect
          if (only && !only(family, stream, c.name)) continue
          const path = spec.path(stream, c.quirk)
          for (const s of [sim, simAlt]) await fetch(s.origin + '/__sim/faults', {method: 'DELETE'})
          if (c.fault) await queue(c.fault, path)
          if (c.fault && c.both) await queue(c.fault, path, simAlt)
          const t0 = performance.now()
          const res = await fetch(gw.base + path, {
            method: 'POST',
            headers,
            body: JSON.stringify(spec.body(stream, c.quirk)),
          })
          let text = ''
          if (expect === 'slow-client') {
            const reader = res.body.getReader()
            const decoder = new globalThis.TextDecoder()
            const first = await reader.read()
            text += decoder.decode(first.value ?? new Uint8Array(), {stream: true})
            await sleep(TIMEOUTS.idleMs + 500) // longer than the upstream idle timeout
            for (let r = await reader.read(); !r.done; r = await reader.read())
              text += decoder.decode(r.value, {stream: true})
          } else text = await res.text()
          const ms = performance.now() - t0
          const row = await lastRow()
          const o = {family, stream, case: c.name, status: res.status, ms: Math.round(ms), problems: []}
          const problem = (p) => o.problems.push(p)
          if (expect === 'fallback' || expect === 'slow-client') {
            if (res.status !== 200) problem(`status ${res.status}`)
            if (stream && !text.includes(spec.end)) problem('stream not complete')
            if (expect === 'fallback' && (row?.provider !== `alt-${family}` || !row?.fallback))
              problem(`log row provider ${row?.provider}, fallback ${row?.fallback}`)
            if (!(row?.inputTokens > 0 && row?.outputTokens > 0)) problem('no usage logged')
            const expectedError = expect === 'fallback' ? /^fell back after: up-/ : /^$/
            if (!expectedError.test(row?.error ?? '')) problem(`log row error: ${row?.error}`)
          } else if (expect === 'flagged') {
            if (res.status !== 200) problem(`status ${res.status}`)
            if (!/malformed JSON/.test(row?.error ?? '')) problem(`log row not flagged: ${row?.error}`)
          } else if (expect === 'error-event') {
            if (res.status !== 200) problem(`status ${res.status}`)
            if (!/"error"/.test(text.slice(-600))) problem(`no error event at the end: ${text.slice(-200)}`)
            if (
              !/stream broke after the first byte|stream sent its headers, then nothing/.test(
                row?.error ?? '',
              )
            )
              problem(`log row: ${row?.error}`)
          } else if (expect === 'whole') {
            // no error event appended, the row an answer with its usage
            if (res.status !== 200) problem(`status ${res.status}`)
            if (/"error"/.test(text.slice(-600))) problem(`an error event at the end: ${text.slice(-200)}`)
            if (row?.error) problem(`log row: ${row.error}`)
            if (row?.broken) problem('log row marked broken')
            if (!(row?.inputTokens > 0 && row?.outputTokens > 0)) problem('no usage logged')
          } else if (expect === 'truncated') {
            // the client got 200, then the protocol's error event; the row an error, counted as 5xx
            if (res.status !== 200) problem(`status ${res.status}`)
            if (!/"error"/.test(text.slice(-600))) problem(`no error event at the end: ${text.slice(-200)}`)
            if (!/stream ended without its terminal event/.test(row?.error ?? ''))
              problem(`log row: ${row?.error}`)
            if (row?.broken !== true) problem('log row not marked broken')
            const fives = await (await fetch(gw.base + '/api/logs?limit=1&status=5xx')).json()
            if ((fives.logs ?? fives)[0]?.id !== row?.id) problem('the row is not listed by --status 5xx')
          } else if (expect === 'failed') {
            if (c.status ? res.status !== c.status : res.status !== 502 && res.status !== 503)
              problem(`status ${res.status}`)
            const shape = shapeProblem(family, res.status, text)
            if (shape) problem(shape)
          }
          outcomes.push(o)
          if (o.problems.length)
            log(`  upstream: ${family} ${stream ? 'stream' : 'plain'} ${c.name}: ${o.problems.join('; ')}`)
        }

    if (only) return {outcomes, breaker: {}} // a subset of the cases, for debugging one
    // the breaker of up-chat: opens after its threshold of failures, half-open after the cooldown,
    // closed after a good trial
    await fetch(sim.origin + '/__sim/faults', {method: 'DELETE'})
    await setPolicy(BREAKER)
    const restart = await gw.cli(['gateway', 'restart'])
    if (restart.code !== 0) throw new Error(`gateway restart: ${restart.stderr}`)
    const circuit = async (name) => {
      const body = await (await fetch(gw.base + '/api/providers')).json()
      const p = (body.providers ?? body).find((x) => x.name === name)
      return p?.circuit?.state ?? p?.circuit ?? p?.state
    }
    await queue(`status=500,times=${BREAKER.failureThreshold}`, '/v1/chat/completions')
    for (let i = 0; i < BREAKER.failureThreshold; i++)
      await fetch(gw.base + '/v1/chat/completions', {
        method: 'POST',
        headers,
        body: JSON.stringify(FAMILIES.chat.body(false)),
      }).then((r) => r.text())
    const opened = await circuit('up-chat')
    const skipped = await fetch(gw.base + '/v1/chat/completions', {
      method: 'POST',
      headers,
      body: JSON.stringify(FAMILIES.chat.body(false)),
    })
    await skipped.text()
    const skippedRow = await lastRow()
    await sleep(BREAKER.cooldownMs + 200)
    const halfOpen = await circuit('up-chat')
    const trial = await fetch(gw.base + '/v1/chat/completions', {
      method: 'POST',
      headers,
      body: JSON.stringify(FAMILIES.chat.body(false)),
    })
    await trial.text()
    const trialRow = await lastRow()
    const closed = await circuit('up-chat')
    breakerChecks = {
      opened,
      skippedProvider: skippedRow?.provider,
      halfOpen,
      trialProvider: trialRow?.provider,
      closed,
      trialStatus: trial.status,
    }
    await gw.cli(['gateway', 'stop'])
    return {outcomes, breaker: breakerChecks}
  } finally {
    sim.child.kill()
    simAlt.child.kill()
    await gw.cleanup()
  }
}
