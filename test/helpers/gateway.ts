/** Helpers of the tests that start a real gateway daemon. */
import {spawn} from 'node:child_process'
import {existsSync, readFileSync} from 'node:fs'
import {join} from 'node:path'

import {afterAll, beforeAll, expect} from 'vitest'

import {processAlive} from '../../src/core/process.js'
import type {Family, PolicyConfig, ProviderConfig} from '../../src/store/schema.js'
import {DEFAULT_BREAKER, DEFAULT_TIMEOUTS} from '../../src/store/schema.js'
import {withState} from '../../src/store/state.js'
import {freePort, runCli, tempHome} from './cli.js'

/** The pid in `<home>/gateway.pid`, if there is one. */
export function daemonPid(home: string): number | undefined {
  const path = join(home, 'gateway.pid')
  if (!existsSync(path)) return undefined
  const pid = Number(readFileSync(path, 'utf8').split('\n')[0])
  return Number.isInteger(pid) && pid > 0 ? pid : undefined
}

export function alive(pid: number): boolean {
  // A daemon that exited but is not reaped yet (its parent, often PID 1 in a container, has not
  // waited for it) is a zombie: dead, as the gateway itself judges it.
  return processAlive(pid)
}

/** Kills the daemon of `home` (if any) and waits until it is gone. */
export async function killDaemon(home: string): Promise<void> {
  const pid = daemonPid(home)
  if (!pid || !alive(pid)) return
  process.kill(pid, 'SIGKILL')
  for (let i = 0; i < 100 && alive(pid); i++) await new Promise((r) => setTimeout(r, 20))
}

/** `gwctl key issue` arguments with the employee given, so neither settings nor git are needed. */
export function keyIssueArgs(
  agentName: string,
  agentType: string,
  employee: {name: string; contact: string} = {name: 'A', contact: 'a@b.c'},
): string[] {
  return [
    'key',
    'issue',
    '--agent-name',
    agentName,
    '--agent-type',
    agentType,
    '--employee-name',
    employee.name,
    '--employee-contact',
    employee.contact,
  ]
}

/**
 * Issues a key through a running daemon's management API (`POST /api/keys/issue`, employee Ada),
 * expects a 200, and returns the key's value.
 */
export async function issueKeyOverApi(
  base: string,
  agentName: string,
  agentType = 'generic_agent',
  policyId?: string,
): Promise<string> {
  const issued = await fetch(`${base}/api/keys/issue`, {
    method: 'POST',
    headers: {'content-type': 'application/json'},
    body: JSON.stringify({
      employeeName: 'Ada',
      employeeContact: 'ada@example.com',
      agentName,
      agentType,
      ...(policyId ? {policyId} : {}),
    }),
  })
  const body = (await issued.json()) as {keyValue: string}
  expect(issued.status, JSON.stringify(body)).toBe(200)
  return body.keyValue
}

/**
 * A gateway on the simulator (`gateway start --sim`) in a temp home on a free port, with
 * `policies` (and `userProviders`) written into its state before it starts (it loads them at start), and the origin
 * of its simulator's chat provider (`sim-chat`), whose `/__sim/requests` shows what upstreams got.
 * `stop()` stops the daemon and removes the home.
 */
export async function startSimGatewayWithPolicies(
  policies: PolicyConfig[],
  userProviders: ProviderConfig[] = [],
): Promise<{home: string; base: string; simOrigin: string; stop: () => Promise<void>}> {
  const {home, cleanup} = tempHome()
  const port = await freePort()
  const previous = process.env.GWCTL_HOME
  process.env.GWCTL_HOME = home
  try {
    await withState(
      (store) => {
        store.data.providers.push(...userProviders)
        store.data.policies.push(...policies)
      },
      join(home, 'state.json'),
    )
  } finally {
    if (previous === undefined) delete process.env.GWCTL_HOME
    else process.env.GWCTL_HOME = previous
  }
  const start = await runCli(['gateway', 'start', '--sim', '--port', String(port)], {
    home,
    env: {GWCTL_GATEWAY_PORT: String(port)},
  })
  expect(start.exitCode, start.stderr).toBe(0)
  const base = `http://127.0.0.1:${port}`
  const providers = (await (await fetch(`${base}/api/providers`)).json()) as {
    providers: Array<{name: string; baseUrl: string}>
  }
  const simOrigin = new URL(providers.providers.find((p) => p.name === 'sim-chat')!.baseUrl).origin
  const stop = async (): Promise<void> => {
    await runCli(['gateway', 'stop'], {home})
    await killDaemon(home)
    cleanup()
  }
  return {home, base, simOrigin, stop}
}

/** A request the simulator got: its headers and its body, parsed. */
export interface SimRequest {
  headers: Record<string, string>
  body: Record<string, any>
}

/**
 * The POST requests the simulator at `simOrigin` got on a path matching `path` since the last
 * call (the record is cleared), oldest first: the headers and body of each.
 */
export async function takeSimRequests(simOrigin: string, path: RegExp): Promise<SimRequest[]> {
  const {requests} = (await (await fetch(`${simOrigin}/__sim/requests`)).json()) as {
    requests: Array<{method: string; path: string; headers: Record<string, string>; body: unknown}>
  }
  await fetch(`${simOrigin}/__sim/requests`, {method: 'DELETE'})
  return requests
    .filter((r) => r.method === 'POST' && path.test(r.path))
    .map((r) => ({
      headers: r.headers,
      body: (typeof r.body === 'string' ? JSON.parse(r.body) : r.body) as Record<string, any>,
    }))
}

/** The bodies of the requests {@link takeSimRequests} takes. */
export async function takeSimCalls(simOrigin: string, path: RegExp): Promise<Array<Record<string, any>>> {
  return (await takeSimRequests(simOrigin, path)).map((r) => r.body)
}

/**
 * What the simulator at `simOrigin` answers `body` posted to its Responses endpoint direct (its
 * key, `headers` over that): the status and the error's message, as the upstream's words for the
 * first try of a refused request. The simulator's record is cleared after it.
 */
export async function simResponsesRefusal(
  simOrigin: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<[status: number, message: string]> {
  const res = await fetch(`${simOrigin}/v1/responses`, {
    method: 'POST',
    headers: {'content-type': 'application/json', authorization: 'Bearer sim-key', ...headers},
    body: JSON.stringify(body),
  })
  const answer = [res.status, ((await res.json()) as {error: {message: string}}).error.message] as [
    number,
    string,
  ]
  await fetch(`${simOrigin}/__sim/requests`, {method: 'DELETE'})
  return answer
}

/** A policy `id` of `routes` (family -> its targets), with fallbacks and the default breaker and timeouts. */
export const simPolicy = (id: string, routes: Record<string, unknown>): PolicyConfig =>
  ({id, routes, fallbacks: true, breaker: DEFAULT_BREAKER, timeouts: DEFAULT_TIMEOUTS}) as PolicyConfig

/**
 * A gateway on the simulator ({@link startSimGatewayWithPolicies}) with a policy of each of
 * `routes` (id -> its routes, {@link simPolicy}; the policy's id `PREFIX-ID` given a prefix) and a
 * key of each, issued over the API to an agent named as the policy, whose project it is (its type
 * `agentType`, or the one it gives an id): the set-up of the end-to-end files of a route each.
 * `keys` by the ids of `routes`.
 */
export async function startKeyedPolicies(
  routes: Record<string, Record<string, unknown>>,
  options: {prefix?: string; agentType?: string | ((id: string) => string)} = {},
): Promise<{
  home: string
  base: string
  simOrigin: string
  stop: () => Promise<void>
  keys: Map<string, string>
}> {
  const {prefix, agentType = 'generic_agent'} = options
  const policyId = (id: string) => (prefix ? `${prefix}-${id}` : id)
  const started = await startSimGatewayWithPolicies(
    Object.entries(routes).map(([id, policyRoutes]) => simPolicy(policyId(id), policyRoutes)),
  )
  const keys = new Map<string, string>()
  for (const id of Object.keys(routes)) {
    const type = typeof agentType === 'function' ? agentType(id) : agentType
    keys.set(id, await issueKeyOverApi(started.base, policyId(id), type, policyId(id)))
  }
  return {...started, keys}
}

/**
 * A gateway in front of the simulator with a policy `PREFIX-ID` for each of `models` (id -> the
 * upstream model of `provider`, or a `[provider, model]` of its own) whose `families` routes
 * (without them: every entrance but the provider's own family, the simulator's providers being
 * named for theirs) translate to it, and a key of each (a generic agent whose project is the
 * policy's id): the set-up of the translation end-to-end files.
 */
export async function startTranslatedRoutes(
  models: Record<string, string | [provider: string, model: string]>,
  options: {prefix: string; provider?: string; families?: Family[]},
): Promise<{base: string; simOrigin: string; stop: () => Promise<void>; keys: Map<string, string>}> {
  const {base, simOrigin, stop, keys} = await startKeyedPolicies(
    Object.fromEntries(
      Object.entries(models).map(([id, given]) => {
        const [provider, model] = typeof given === 'string' ? [options.provider!, given] : given
        const families =
          options.families ??
          (['messages', 'responses', 'chat', 'gemini'] as const).filter((f) => !provider.endsWith(f))
        return [id, Object.fromEntries(families.map((f) => [f, [{provider, model, translate: true}]]))]
      }),
    ),
    {prefix: options.prefix},
  )
  return {base, simOrigin, stop, keys}
}

/** What {@link translatedRoutes} starts for a file: read in its tests (its `beforeAll` sets it). */
export interface TranslatedRoutes {
  /** The gateway's origin. */
  readonly base: string
  /** The simulator's origin, for {@link takeSimCalls}. */
  readonly simOrigin: string
  /** Each model id's key. */
  readonly keys: Map<string, string>
  /** The log rows of model id `id`'s policy (its project), `count` of them ({@link projectLogRows}). */
  rows: (id: string, count?: number) => ReturnType<typeof projectLogRows>
  /** The bodies the simulator got on a path matching `path` since the last call ({@link takeSimCalls}). */
  calls: (path: RegExp) => ReturnType<typeof takeSimCalls>
}

/**
 * {@link startTranslatedRoutes} started before a file's tests (`beforeAll`, 120 s) and stopped after
 * them (`afterAll`): called at a test file's top, the set-up of the translation and pass-through
 * end-to-end files. What it started is read through the object returned, once the tests run.
 */
export function translatedRoutes(
  models: Parameters<typeof startTranslatedRoutes>[0],
  options: Parameters<typeof startTranslatedRoutes>[1],
): TranslatedRoutes {
  let started: Awaited<ReturnType<typeof startTranslatedRoutes>> | undefined
  beforeAll(async () => {
    started = await startTranslatedRoutes(models, options)
  }, 120_000)
  afterAll(() => started?.stop())
  const get = () => {
    if (!started) throw new Error('the gateway is not started: read it in a test')
    return started
  }
  return {
    get base() {
      return get().base
    },
    get simOrigin() {
      return get().simOrigin
    },
    get keys() {
      return get().keys
    },
    rows: (id, count = 1) => projectLogRows(get().base, `${options.prefix}-${id}`, count),
    calls: (path) => takeSimCalls(get().simOrigin, path),
  }
}

/** What {@link startGeminiRoutes} started. */
export interface GeminiRoutes {
  base: string
  home: string
  simOrigin: string
  stop: () => Promise<void>
  keys: Map<string, string>
  chatCalls: () => Promise<Array<Record<string, any>>>
  geminiCalls: () => Promise<Array<Record<string, any>>>
}

/**
 * The set-up of the Gemini translation files (translation-gemini-learned, -fields): a gateway in
 * front of the simulator with a policy `PREFIX-ID` for each of `routes` whose Messages, Responses
 * and chat entrances translate to its provider and model (each test its own model: what is learned
 * is kept per provider and model), a policy `PREFIX-passed` whose chat entrance passes through to
 * `passed` (a chat client on a chat upstream: opencode, qwen-code), a key of each (a generic agent
 * whose project is the policy's id; `passed` under the id `passed`), and the simulator's chat and
 * Gemini calls since the last look ({@link takeSimCalls}).
 */
export async function startGeminiRoutes(
  prefix: string,
  routes: Record<string, {provider: string; model: string}>,
  passed: {provider: string; model: string},
): Promise<GeminiRoutes> {
  const {base, home, simOrigin, stop} = await startSimGatewayWithPolicies([
    ...Object.entries(routes).map(([id, {provider, model}]) =>
      simPolicy(
        `${prefix}-${id}`,
        Object.fromEntries(
          ['messages', 'responses', 'chat'].map((f) => [f, [{provider, model, translate: true}]]),
        ),
      ),
    ),
    simPolicy(`${prefix}-passed`, {chat: [passed]}),
  ])
  const keys = new Map<string, string>()
  for (const id of [...Object.keys(routes), 'passed'])
    keys.set(id, await issueKeyOverApi(base, `${prefix}-${id}`, 'generic_agent', `${prefix}-${id}`))
  return {
    base,
    home,
    simOrigin,
    stop,
    keys,
    chatCalls: () => takeSimCalls(simOrigin, /\/chat\/completions$/),
    geminiCalls: () => takeSimCalls(simOrigin, /:(?:streamGenerateContent|generateContent)$/),
  }
}

/**
 * The log rows of the agent whose project is `project` (its keys' project), oldest first, once
 * there are `count` of them (a row is written just after its answer): from the gateway at `base`.
 */
export async function projectLogRows(
  base: string,
  project: string,
  count = 1,
): Promise<Array<{status: number; error: string | null} & Record<string, any>>> {
  let rows: Array<{project: string; status: number; error: string | null; id: number} & Record<string, any>> =
    []
  for (let i = 0; i < 100; i++) {
    const body = (await (await fetch(`${base}/api/logs?limit=50`)).json()) as {logs: typeof rows}
    rows = body.logs.filter((r) => r.project === project).sort((a, b) => a.id - b.id)
    if (rows.length >= count) break
    await new Promise((r) => setTimeout(r, 20))
  }
  return rows
}

/**
 * A child process that holds `BEGIN IMMEDIATE` on the database at `path` (what `gwctl usage
 * rescan`'s swap, or a sqlite3 shell in a write transaction, does) until `release()`; `kill()`
 * (for a cleanup) ends it at once.
 */
export async function holdWriteLock(path: string): Promise<{release: () => Promise<void>; kill: () => void}> {
  const child = spawn(
    process.execPath,
    [
      '-e',
      `const db = new (require('better-sqlite3'))(${JSON.stringify(path)}); db.pragma('busy_timeout = 5000');
       db.exec('BEGIN IMMEDIATE'); process.stdout.write('locked\\n');
       process.stdin.resume(); process.stdin.on('end', () => { db.exec('COMMIT'); db.close(); process.exit(0) })`,
    ],
    {stdio: ['pipe', 'pipe', 'inherit']},
  )
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('locked')) resolve()
    })
    child.once('exit', (code) => reject(new Error(`the lock holder exited with ${code}`)))
  })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  return {
    release: async () => {
      child.stdin.end()
      await exited
    },
    kill: () => {
      if (child.exitCode === null) child.kill('SIGKILL')
    },
  }
}

/**
 * A gateway on the simulator (`gateway start --sim`) in a temp home on a free port, with a key
 * issued to `agentName` over its API; the home and the daemon go in `cleanups` (the caller runs
 * them after the test). `env` pins the port for the CLI calls the test makes.
 */
export async function startSimGateway(
  cleanups: Array<() => Promise<void> | void>,
  agentName: string,
): Promise<{home: string; port: number; env: Record<string, string>; base: string; keyValue: string}> {
  const t = tempHome()
  cleanups.push(t.cleanup, () => killDaemon(t.home))
  const port = await freePort()
  const env = {GWCTL_GATEWAY_PORT: String(port)}
  const start = await runCli(['gateway', 'start', '--sim', '--port', String(port)], {home: t.home, env})
  expect(start.exitCode, start.stderr).toBe(0)
  const base = `http://127.0.0.1:${port}`
  return {home: t.home, port, env, base, keyValue: await issueKeyOverApi(base, agentName)}
}
