// The translation code alone, in process: `node bench/xlate.js [--base DIR] [--rounds N]
// [--iterations N] [--only NAME]` (build first; DIR: another checkout, built). The simulator's own
// answers (started in this process, this checkout's build) to the bench's requests are translated
// by each build's `dist` modules in one process, rounds interleaved, and the CPU time of each
// (`process.cpuUsage`) is printed per request: the median of the rounds, and the range. Rows: a
// request encoded for its upstream, a JSON answer, and a stream (all of it in one upstream read,
// as the simulator's answer reaches the daemon), for the messages, responses and gemini entrances
// on a chat upstream and the chat entrance on a messages upstream; the `obfuscation` row is a chat
// stream whose every chunk carries OpenAI's random-length padding (sim quirk `obfuscation`).
//
// Agent rows (`agent`): the request of an agent deep into a session (`bench/agent-requests.js`:
// Claude Code, Codex and Gemini CLI bodies of ~60 KB and ~250 KB with non-ASCII text), timed as
// the daemon's request thread does it: the body's bytes parsed (`JSON.parse` of its UTF-8), decoded
// into the IR, encoded for the upstream and written as the upstream body's bytes. Each such row
// first checks that every build sends the upstream the same bytes (exit 1 if not).
// `--phases`: for the agent rows, the time of each step on each build (parse, decode, encode,
// bytes).
import {readdirSync} from 'node:fs'
import {resolve} from 'node:path'
import {parseArgs} from 'node:util'

const {values: opts} = parseArgs({
  options: {
    base: {type: 'string'},
    rounds: {type: 'string', default: '11'},
    iterations: {type: 'string', default: '3000'},
    only: {type: 'string'},
    phases: {type: 'boolean', default: false},
  },
})

const here = resolve(import.meta.dirname, '..')
const roots = opts.base ? {base: resolve(opts.base), branch: here} : {branch: here}
async function load(root) {
  const chunk = readdirSync(`${root}/dist/chunks`).find((f) => /^translate-[\w-]+\.js$/.test(f))
  const module = await import(`${root}/dist/chunks/${chunk}`)
  // the chunk exports the module's names, or (when another lazily loaded module shares it) the
  // module's namespace among its exports
  if (module.decodeClientRequest) return module
  return Object.values(module).find((v) => typeof v?.decodeClientRequest === 'function')
}
const builds = Object.fromEntries(
  await Promise.all(Object.entries(roots).map(async ([name, root]) => [name, await load(root)])),
)

const {startSim} = await import(`${here}/dist/sim/server.js`)
const sim = await startSim({port: 0, timeScale: 1_000_000, taskSeconds: 1})
const auth = {authorization: 'Bearer sim', 'x-api-key': 'sim', 'anthropic-version': '2023-06-01'}
async function answer(path, body, headers = {}) {
  const res = await fetch(sim.origin + path, {
    method: 'POST',
    headers: {'content-type': 'application/json', ...auth, ...headers},
    body: JSON.stringify(body),
  })
  const text = await res.text()
  if (res.status !== 200) throw new Error(`sim ${path}: ${res.status} ${text.slice(0, 200)}`)
  return text
}

const prompt = 'Say hello in five words.'
const clients = {
  messages: {model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{role: 'user', content: prompt}]},
  responses: {model: 'gpt-5', max_output_tokens: 64, input: prompt},
  gemini: {contents: [{role: 'user', parts: [{text: prompt}]}], generationConfig: {maxOutputTokens: 64}},
  chat: {model: 'sim-mini', max_tokens: 64, messages: [{role: 'user', content: prompt}]},
}
const chatUp = (stream, extra = {}) =>
  answer('/v1/chat/completions', {
    model: 'sim-mini',
    max_tokens: 64,
    messages: [{role: 'user', content: prompt}],
    ...(stream ? {stream: true, stream_options: {include_usage: true}} : {}),
    ...extra,
  })
const messagesUp = (stream) =>
  answer('/v1/messages', {
    model: 'claude-sonnet-4-5',
    max_tokens: 64,
    messages: [{role: 'user', content: prompt}],
    ...(stream ? {stream: true} : {}),
  })
const answers = {
  chatJson: await chatUp(false),
  chatStream: await chatUp(true),
  chatObfuscated: await chatUp(true, {model: 'sim-mini+obfuscation'}),
  messagesJson: await messagesUp(false),
  messagesStream: await messagesUp(true),
}
await sim.close()

/** One request's translation, as the daemon does it, for a build's module `t`. */
const rows = []
for (const [entrance, upstream] of [
  ['messages', 'chat'],
  ['responses', 'chat'],
  ['gemini', 'chat'],
  ['chat', 'messages'],
]) {
  const body = clients[entrance]
  const model = entrance === 'gemini' ? 'gemini-2.5-pro' : null
  const decode = (t, stream) =>
    t.decodeClientRequest(
      entrance,
      JSON.parse(JSON.stringify({...body, ...(stream && entrance !== 'gemini' ? {stream: true} : {})})),
      {
        model,
        stream,
      },
    )
  const text = JSON.stringify(body)
  rows.push({
    name: `${entrance} <- ${upstream}: request`,
    run: (t) =>
      t.encodeUpstreamRequest(
        t.decodeClientRequest(entrance, JSON.parse(text), {model, stream: false}),
        upstream,
        'm',
      ),
  })
  if (entrance === 'messages') {
    // an agent's request: Claude Code sends its ~20 tools, each with a description, every turn
    const tools = Array.from({length: 20}, (_, i) => ({
      name: `tool_${i}`,
      description: `What tool ${i} does, in a sentence or two.`,
      input_schema: {type: 'object', properties: {path: {type: 'string'}}, required: ['path']},
    }))
    const agent = JSON.stringify({...body, system: 'You are an agent.', tools})
    rows.push({
      name: `${entrance} <- ${upstream}: request, 20 tools`,
      run: (t) =>
        t.encodeUpstreamRequest(
          t.decodeClientRequest(entrance, JSON.parse(agent), {model, stream: false}),
          upstream,
          'm',
        ),
    })
  }
  const json = upstream === 'chat' ? answers.chatJson : answers.messagesJson
  rows.push({
    name: `${entrance} <- ${upstream}: JSON answer`,
    client: (t) => decode(t, false),
    run: (t, client) => t.translateResponseText(upstream, client, JSON.parse(json)).text.length,
  })
  const streams =
    upstream === 'chat'
      ? [
          ['stream', answers.chatStream],
          ...(entrance === 'messages' ? [['stream, obfuscation', answers.chatObfuscated]] : []),
        ]
      : [['stream', answers.messagesStream]]
  for (const [label, sse] of streams) {
    const bytes = Buffer.from(sse)
    rows.push({
      name: `${entrance} <- ${upstream}: ${label}`,
      client: (t) => decode(t, true),
      run: (t, client) => {
        const translator = new t.StreamTranslator(upstream, client)
        let n = 0
        translator.onFirstOutput = (s) => (n += s.length)
        n += translator.push(bytes).length
        n += translator.end().length
        if (translator.error) throw new Error(`${entrance} <- ${upstream}: ${translator.error.message}`)
        return n
      },
    })
  }
}

// ---- agent-sized requests ----
const {chatAgentStream, claudeCodeRequest, codexRequest, geminiCliRequest} =
  await import('./agent-requests.js')
const chatOf = (t, body) =>
  // a chat client's agent request: the Claude Code one as a chat upstream would get it
  JSON.parse(
    t.encodeUpstreamRequest(t.decodeClientRequest('messages', body, {}), 'chat', 'm').body.toString(),
  )
const emptyCarry = () => new Map()
// the body's parse as the daemon does it: a build with `parseClientBody` parses it there (the fast
// UTF-8 decode), an older one as the entrance did, `JSON.parse(body.toString('utf8'))`
const parse = (t, buf) => (t.parseClientBody ? t.parseClientBody(buf) : JSON.parse(buf.toString('utf8')))
const agentRows = []
for (const kb of [60, 250]) {
  const bytes = kb * 1024
  const bodies = {
    messages: claudeCodeRequest(bytes),
    responses: codexRequest(bytes),
    gemini: geminiCliRequest(bytes),
  }
  bodies.chat = chatOf(builds.branch, bodies.messages)
  const directions = [
    ['messages', 'chat'],
    ['responses', 'chat'],
    ['gemini', 'chat'],
    ...(kb === 250
      ? [
          ['messages', 'responses'],
          ['messages', 'gemini'],
          ['responses', 'messages'],
          ['gemini', 'messages'],
          ['chat', 'messages'],
        ]
      : []),
  ]
  for (const [entrance, upstream] of directions) {
    const buf = Buffer.from(JSON.stringify(bodies[entrance]))
    const model = entrance === 'gemini' ? 'gemini-2.5-pro' : null
    const decode = (t, json) =>
      t.decodeClientRequest(entrance, json, {model, stream: true, carry: emptyCarry()})
    agentRows.push({
      name: `${entrance} -> ${upstream}: agent request ${Math.round(buf.length / 1024)} KB`,
      iterations: (n) => Math.max(8, Math.round((n * 4000) / buf.length)),
      run: (t) => t.encodeUpstreamRequest(decode(t, parse(t, buf)), upstream, 'm').body,
      phases: {
        parse: (t) => parse(t, buf),
        decode: (t, json) => decode(t, json),
        encode: (t, client) => t.CODECS[upstream].encodeRequest(client.request, 'm', {}),
        bytes: (t, body) => (t.upstreamBytes ? t.upstreamBytes(body) : Buffer.from(JSON.stringify(body))),
      },
    })
  }
}
for (const row of agentRows) {
  if (opts.only && !row.name.includes(opts.only)) continue
  const outs = Object.entries(builds).map(([n, t]) => [n, row.run(t)])
  for (const [n, out] of outs.slice(1))
    if (!out.equals(outs[0][1])) {
      console.error(
        `${row.name}: ${n} sends other bytes than ${outs[0][0]} (${out.length} / ${outs[0][1].length})`,
      )
      process.exitCode = 1
    }
}
rows.push(...agentRows)
// an agent's turn streamed back: ~280 OpenAI-shaped chunks in 4 KB reads, to a Messages client
{
  const reads = chatAgentStream()
  const size = reads.reduce((n, r) => n + r.length, 0)
  const body = {...claudeCodeRequest(60 * 1024), stream: true}
  rows.push({
    name: `messages <- chat: agent answer stream ${Math.round(size / 1024)} KB`,
    iterations: (n) => Math.max(20, Math.round(n / 10)),
    client: (t) => t.decodeClientRequest('messages', JSON.parse(JSON.stringify(body)), {stream: true}),
    run: (t, client) => {
      const translator = new t.StreamTranslator('chat', client)
      let n = 0
      translator.onFirstOutput = (s) => (n += s.length)
      for (const read of reads) n += translator.push(read).length
      n += translator.end().length
      if (translator.error) throw new Error(`agent answer stream: ${translator.error.message}`)
      return n
    },
  })
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const names = Object.keys(builds)
console.log(
  `${opts.iterations} requests a round (agent rows: fewer, ~${opts.iterations * 4} KB of body a round), ${opts.rounds} rounds, µs of CPU a request: median (range)` +
    (names.length > 1 ? `; ${names.join(' / ')}` : ''),
)
for (const row of rows) {
  if (opts.only && !row.name.includes(opts.only)) continue
  const times = Object.fromEntries(names.map((n) => [n, []]))
  const clients = Object.fromEntries(names.map((n) => [n, row.client?.(builds[n])]))
  const iterations = row.iterations ? row.iterations(Number(opts.iterations)) : Number(opts.iterations)
  let sink = 0
  for (const n of names) for (let i = 0; i < iterations; i++) sink += row.run(builds[n], clients[n]) ? 1 : 0
  for (let r = 0; r < Number(opts.rounds); r++)
    for (const n of r % 2 ? [...names].reverse() : names) {
      const before = process.cpuUsage()
      for (let i = 0; i < iterations; i++) sink += row.run(builds[n], clients[n]) ? 1 : 0
      const used = process.cpuUsage(before)
      times[n].push((used.user + used.system) / iterations)
    }
  const cells = names.map((n) => {
    const t = times[n]
    return `${median(t).toFixed(2)} (${Math.min(...t).toFixed(1)}-${Math.max(...t).toFixed(1)})`
  })
  const ratio = names.length > 1 ? `  ${(median(times.branch) / median(times.base)).toFixed(2)}` : ''
  console.log(`${row.name.padEnd(42)} ${cells.join('  ')}${ratio}${sink < 0 ? '' : ''}`)
  if (opts.phases && row.phases) {
    // each step alone, the median of the rounds, on each build (its input made once)
    const steps = Object.keys(row.phases)
    const cellsOf = names.map((n) => {
      const t = builds[n]
      const inputs = [undefined]
      for (const step of steps) inputs.push(row.phases[step](t, inputs.at(-1)))
      return steps.map((step, k) => {
        const xs = []
        for (let r = 0; r < Number(opts.rounds); r++) {
          const before = process.cpuUsage()
          for (let i = 0; i < iterations; i++) sink += row.phases[step](t, inputs[k]) ? 1 : 0
          const used = process.cpuUsage(before)
          xs.push((used.user + used.system) / iterations)
        }
        return `${step} ${median(xs).toFixed(0)}`
      })
    })
    for (const [i, n] of names.entries()) console.log(`    ${n}: ${cellsOf[i].join(', ')}`)
  }
}
process.exit(process.exitCode ?? 0)
