/**
 * `gwctl providers models NAME`: a provider's own model list, asked of its API with the key the
 * gateway uses for it (each family's path and header), kept 0600 for "did you mean" on a policy
 * target's model; the errors a user meets (no key variable, a refused key, nothing listening, no
 * list) with their exit codes; the key never in the output. A local server on a free port is the
 * provider; the CLI itself, a temp GWCTL_HOME and HOME.
 */
import {readFileSync, statSync} from 'node:fs'
import type {IncomingMessage, Server} from 'node:http'
import {createServer} from 'node:http'
import type {AddressInfo} from 'node:net'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {freePort, json, runCli, tempHome} from './helpers/cli.js'

const KEY = 'sk-test-provider-key-0123456789'
let server: Server
let origin = ''
const seen: Array<{url: string; headers: IncomingMessage['headers']}> = []

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push({url: req.url ?? '', headers: req.headers})
    const url = new URL(req.url ?? '/', 'http://x')
    const auth = req.headers.authorization ?? req.headers['x-api-key'] ?? req.headers['x-goog-api-key']
    const send = (status: number, body: unknown) => {
      res.writeHead(status, {'content-type': 'application/json'})
      res.end(JSON.stringify(body))
    }
    if (url.pathname.startsWith('/none/')) return send(404, {error: 'Not Found'})
    if (!String(auth ?? '').includes(KEY))
      return send(401, {error: {message: `Incorrect API key provided: ${auth}`}})
    if (url.pathname === '/v1/models' && req.headers['anthropic-version']) {
      // Anthropic's list, in two pages
      return url.searchParams.get('after_id')
        ? send(200, {
            data: [{id: 'claude-haiku-4-5', type: 'model'}],
            has_more: false,
            last_id: 'claude-haiku-4-5',
          })
        : send(200, {
            data: [{id: 'claude-sonnet-4-5', type: 'model'}],
            has_more: true,
            last_id: 'claude-sonnet-4-5',
          })
    }
    if (url.pathname === '/v1beta/models')
      return send(200, {models: [{name: 'models/gemini-2.5-pro'}, {name: 'models/gemini-2.5-flash'}]})
    if (url.pathname === '/api/paas/v4/models' || url.pathname === '/v1/models')
      return send(200, {
        object: 'list',
        data: [
          {id: 'glm-4.6', object: 'model'},
          {id: 'glm-4.5-air', object: 'model'},
        ],
      })
    send(404, {error: 'Not Found'})
  })
  server.listen(0, '127.0.0.1')
  await new Promise((resolve) => server.once('listening', resolve))
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}, 30_000)

afterAll(() => {
  server.close()
})

function setup() {
  const {home, cleanup} = tempHome()
  const cli = (args: string[], env: Record<string, string | undefined> = {}) =>
    runCli(args, {home, env: {CORP_KEY: KEY, ...env}})
  return {home, cleanup, cli}
}

describe('gwctl providers models', {timeout: 60_000}, () => {
  it("asks a chat provider's /models with its key, lists and keeps the names (0600), then reads them kept", async () => {
    const {home, cleanup, cli} = setup()
    try {
      const add = await cli([
        'providers',
        'add',
        'corp',
        '--family',
        'chat',
        '--base-url',
        `${origin}/api/paas/v4`,
        '--api-key-env',
        'CORP_KEY',
      ])
      expect(add.exitCode, add.stderr).toBe(0)
      seen.length = 0
      const first = await cli(['providers', 'models', 'corp'])
      expect(first.exitCode, first.stderr).toBe(0)
      expect(first.stdout).toBe('glm-4.5-air\nglm-4.6\n')
      expect(first.stderr).toMatch(
        /^corp \(chat, http:\/\/127\.0\.0\.1:\d+\/api\/paas\/v4\): 2 models, listed now\n$/,
      )
      // the path joined as the gateway joins a request's (a versioned base), the key as Bearer
      expect(seen).toHaveLength(1)
      expect(seen[0].url).toBe('/api/paas/v4/models')
      expect(seen[0].headers.authorization).toBe(`Bearer ${KEY}`)
      const file = join(home, 'provider-models.json')
      expect(statSync(file).mode & 0o777).toBe(0o600)
      expect(readFileSync(file, 'utf8')).not.toContain(KEY)
      // kept: no request, the same names, said so; --json and --quiet
      const kept = await cli(['providers', 'models', 'corp', '--json'])
      expect(seen).toHaveLength(1)
      expect(json(kept)).toMatchObject({
        provider: 'corp',
        family: 'chat',
        models: ['glm-4.5-air', 'glm-4.6'],
        source: 'cache',
      })
      const quiet = await cli(['providers', 'models', 'corp', '--quiet'])
      expect([quiet.stdout, quiet.stderr]).toEqual(['glm-4.5-air\nglm-4.6\n', ''])
      // --refresh asks again
      await cli(['providers', 'models', 'corp', '--refresh'])
      expect(seen).toHaveLength(2)
      // "did you mean" now knows the provider's own names
      const typo = await cli([
        'policies',
        'route',
        'team',
        '--family',
        'messages',
        '--target',
        'corp:glm-4.5-ari',
        '--translate',
      ])
      expect(typo.exitCode, typo.stderr).toBe(0)
      expect(typo.stderr).toContain(
        'corp:glm-4.5-ari: corp lists no model "glm-4.5-ari"; did you mean "glm-4.5-air"?',
      )
      // another version of a listed one (a model newer than the list): no guess
      const newer = await cli([
        'policies',
        'route',
        'team2',
        '--family',
        'messages',
        '--target',
        'corp:glm-4.7',
        '--translate',
      ])
      expect(newer.exitCode, newer.stderr).toBe(0)
      expect(newer.stderr).not.toContain('did you mean')
    } finally {
      cleanup()
    }
  })

  it("each family's list: Anthropic's (x-api-key, paged) and Google's (x-goog-api-key, models/ taken off)", async () => {
    const {cleanup, cli} = setup()
    try {
      await cli([
        'providers',
        'add',
        'claude',
        '--family',
        'messages',
        '--base-url',
        origin,
        '--api-key-env',
        'CORP_KEY',
      ])
      await cli([
        'providers',
        'add',
        'google',
        '--family',
        'gemini',
        '--base-url',
        origin,
        '--api-key-env',
        'CORP_KEY',
      ])
      seen.length = 0
      const claude = await cli(['providers', 'models', 'claude', '--quiet'])
      expect(claude.stdout).toBe('claude-haiku-4-5\nclaude-sonnet-4-5\n')
      expect(seen.map((s) => [s.url, s.headers['x-api-key'], s.headers['anthropic-version']])).toEqual([
        ['/v1/models?limit=1000', KEY, '2023-06-01'],
        ['/v1/models?limit=1000&after_id=claude-sonnet-4-5', KEY, '2023-06-01'],
      ])
      seen.length = 0
      const google = await cli(['providers', 'models', 'google', '--quiet'])
      expect(google.stdout).toBe('gemini-2.5-flash\ngemini-2.5-pro\n')
      expect(seen[0].url).toBe('/v1beta/models?pageSize=1000')
      expect(seen[0].headers['x-goog-api-key']).toBe(KEY)
    } finally {
      cleanup()
    }
  })

  it('the simulator lists its own; errors name what to fix, with their exit codes, never the key', async () => {
    const {cleanup, cli} = setup()
    try {
      const simText = await cli(['providers', 'models', 'sim-chat'])
      expect([simText.stdout, simText.stderr]).toEqual([
        'sim-mini\nsim-pro\nsim-reasoner\n',
        "sim-chat (chat, the simulator): 3 models, the simulator's list\n",
      ])
      const sim = await cli(['providers', 'models', 'sim-chat', '--json'])
      expect(sim.exitCode, sim.stderr).toBe(0)
      expect(json(sim)).toMatchObject({models: ['sim-mini', 'sim-pro', 'sim-reasoner'], source: 'simulator'})

      const unknown = await cli(['providers', 'models', 'nope'])
      expect(unknown.exitCode).toBe(7)
      expect(unknown.stderr).toContain('No provider "nope".')

      await cli([
        'providers',
        'add',
        'corp',
        '--family',
        'chat',
        '--base-url',
        `${origin}/v1`,
        '--api-key-env',
        'CORP_KEY',
      ])
      const unset = await cli(['providers', 'models', 'corp'], {CORP_KEY: undefined})
      expect(unset.exitCode).toBe(3)
      expect(unset.stderr).toContain("CORP_KEY is not set: corp's key is read from it.")

      const refused = await cli(['providers', 'models', 'corp', '--json'], {
        CORP_KEY: 'sk-wrong-key-000000000',
      })
      expect(refused.exitCode).toBe(4)
      expect(json(refused).error).toMatchObject({code: 'provider_auth', status: 401})
      expect(refused.stdout + refused.stderr).not.toContain('sk-wrong-key')

      await cli([
        'providers',
        'add',
        'bare',
        '--family',
        'chat',
        '--base-url',
        `${origin}/none`,
        '--api-key-env',
        'CORP_KEY',
      ])
      const none = await cli(['providers', 'models', 'bare'])
      expect(none.exitCode).toBe(5)
      expect(none.stderr).toContain('bare has no model list at')

      const port = await freePort()
      await cli([
        'providers',
        'add',
        'down',
        '--family',
        'chat',
        '--base-url',
        `http://127.0.0.1:${port}/v1`,
        '--api-key-env',
        'CORP_KEY',
      ])
      const down = await cli(['providers', 'models', 'down'])
      expect(down.exitCode).toBe(5)
      expect(down.stderr).toContain(
        `down: http://127.0.0.1:${port}/v1/models could not be reached: ECONNREFUSED.`,
      )
      for (const r of [unset, refused, none, down]) expect(r.stdout + r.stderr).not.toContain(KEY)
    } finally {
      cleanup()
    }
  })
})
