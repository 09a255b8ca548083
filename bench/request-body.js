// What the gateway's request thread spends on an agent-sized request body before it goes
// upstream, in process: `node bench/request-body.js [--base DIR] [--rounds N] [--kb 64,256]`.
// Per body: the entrance's check and the proxy's reading of it, then the body sent upstream, for
// the body as it came, with a policy's model written into it, and (chat stream that did not ask
// for usage) with `stream_options` added. This build (`GatewayRequest.latin1Json` then the
// facts, `prepare`) against DIR's (a built checkout of main before it: `JSON.parse` of the
// UTF-8 text, then `prepare` with the value), rounds interleaved, median CPU µs a request.
// Build first (`npm run build`: the modules are read from build/js).
import {resolve} from 'node:path'
import {parseArgs} from 'node:util'
import {agentChatBody} from './agent-requests.js'

const {values: opts} = parseArgs({
  options: {
    base: {type: 'string'},
    rounds: {type: 'string', default: '7'},
    kb: {type: 'string', default: '64,256'},
  },
})
const here = resolve(import.meta.dirname, '..')
const branch = await import(`${here}/build/js/daemon/router/request-body.js`)
const base = opts.base
  ? await import(`${resolve(opts.base)}/build/js/daemon/router/request-body.js`)
  : undefined

/** One request as this build reads it: the Latin-1 check, its facts, the body for `model`. */
function branchRequest(body, model) {
  const facts = branch.bodyFacts(JSON.parse(body.toString('latin1')))
  const request = {family: 'chat', method: 'POST', url: '/v1/chat/completions', headers: {}, body, facts}
  return branch.prepare(request).bodyFor(model).length
}
/** The same as main read it before: the UTF-8 parse the entrance kept, handed to `prepare`. */
function baseRequest(body, model) {
  const json = JSON.parse(body.toString('utf8'))
  const request = {family: 'chat', method: 'POST', url: '/v1/chat/completions', headers: {}, body, json}
  return base.prepare(request).bodyFor(model).length
}

const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]
console.log(`request body, CPU µs a request (median of ${opts.rounds} interleaved rounds)`)
console.log(`| body | sent | ${base ? 'base | this build | this / base' : 'this build'} |`)
console.log(`|---|---|${base ? '---|---|---|' : '---|'}`)
for (const kb of opts.kb.split(',').map(Number)) {
  for (const stream of [false, true]) {
    const body = Buffer.from(agentChatBody(kb, {stream}))
    const iterations = Math.max(20, Math.floor(1.5e7 / body.length))
    const cases = [
      ['as it came', 'sim-mini'],
      ['model rewritten', 'glm-4.6'],
    ]
    for (const [label, model] of cases) {
      const rows = {branch: [], base: []}
      for (let r = 0; r < Number(opts.rounds); r++) {
        for (const [name, run] of base
          ? [
              ['branch', branchRequest],
              ['base', baseRequest],
            ]
          : [['branch', branchRequest]]) {
          const t = process.cpuUsage()
          for (let i = 0; i < iterations; i++) run(body, model)
          const used = process.cpuUsage(t)
          rows[name].push((used.user + used.system) / iterations)
        }
      }
      const name = `${(body.length / 1024).toFixed(0)} KB chat${stream ? ' stream (usage added)' : ''}`
      const b = median(rows.branch)
      console.log(
        base
          ? `| ${name} | ${label} | ${median(rows.base).toFixed(0)} | ${b.toFixed(0)} | ${(b / median(rows.base)).toFixed(2)} |`
          : `| ${name} | ${label} | ${b.toFixed(0)} |`,
      )
    }
  }
}
