/**
 * The terminal app, frame by frame (ink-testing-library, 80x24, no colour): each view, empty
 * states and errors, and keyboard flows (switch view, filter, details, enable with confirmation,
 * a rotated key shown once), with fake actions standing in for the services.
 */
process.env.TZ = 'UTC'

import {render} from 'ink-testing-library'
import {afterEach, describe, expect, it} from 'vitest'

import type {GatewayEvent} from '../../gateway/events.js'
import type {EventHandlers} from '../../services/gateway-events.js'
import type {LogRow} from '../../store/log-query.js'
import type {ViewName} from './model.js'
import {App} from './app.js'
import type {AppActions} from './data.js'
import type {AppAgent, AppData} from './model.js'
import {EMPTY_DATA, isBound} from './model.js'
import {AGENTS, DETAIL, EMPTY, REQUESTS, ROUTES, USAGE} from './frames.fixture.js'

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0)
const HOME = '/home/ada'

function agent(over: Partial<AppAgent>): AppAgent {
  return {
    agentId: 'agt_0000000000000001',
    name: 'laptop',
    type: 'claude_code',
    employee: {id: 'emp_1', name: 'Ada', contact: 'ada@example.com'},
    parentAgentId: null,
    parentAgentName: null,
    childAgentIds: [],
    policyId: 'claude_code_default',
    route: {
      family: 'messages',
      targets: [{provider: 'anthropic'}, {provider: 'sim-messages', model: 'claude-sim'}],
    },
    enabled: true,
    keyId: 'key_1',
    keyPrefix: 'gw-AbCdEf…',
    sourceTool: null,
    configPath: null,
    createdAt: 1,
    lastSeenAt: null,
    ...over,
  }
}

function row(over: Partial<LogRow>): LogRow {
  return {
    id: 1,
    time: NOW - 60_000,
    agentId: 'agt_0000000000000001',
    keyPrefix: 'gw-AbCdEf…',
    policyId: 'claude_code_default',
    entrance: 'messages',
    requestedModel: 'claude',
    provider: 'sim-messages',
    model: 'claude-sim',
    status: 200,
    fallback: false,
    inputTokens: 1200,
    outputTokens: 80,
    cacheReadTokens: 10,
    cacheCreationTokens: 0,
    reasoningTokens: 3,
    latencyMs: 41.2,
    ttfbMs: 9,
    error: null,
    project: null,
    requestId: 'req_1',
    ...over,
  }
}

const circuit = (
  provider: string,
  state: 'open' | 'closed' | 'half-open',
  retryAt: number | null = null,
) => ({
  provider,
  state,
  consecutiveFailures: state === 'open' ? 5 : 0,
  openedAt: null,
  retryAt,
  retryInMs: null,
  lastError: null,
})

const requests = [
  row({
    id: 4,
    time: NOW - 5_000,
    agentId: null,
    keyPrefix: null,
    policyId: null,
    provider: null,
    model: null,
    status: 401,
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    reasoningTokens: 0,
    latencyMs: 0.4,
    ttfbMs: null,
    error: 'refused: revoked key',
    requestId: null,
  }),
  row({
    id: 3,
    time: NOW - 10_000,
    status: 502,
    provider: 'anthropic',
    model: 'claude',
    error: 'upstream 502',
    agentId: 'agt_0000000000000002',
  }),
  row({id: 2, time: NOW - 20_000, fallback: true}),
  row({id: 1, time: NOW - 3_600_000 * 5}),
]

const DATA: AppData = {
  gateway: {pid: 42, port: 43123, uptime_s: 3725, version: '0.1.0'},
  agents: [
    agent({}),
    agent({
      agentId: 'agt_0000000000000002',
      name: 'reviewer',
      type: 'claude_subagent',
      parentAgentId: 'agt_0000000000000001',
      parentAgentName: 'laptop',
      enabled: false,
      route: {family: 'messages', targets: []},
    }),
    agent({
      agentId: 'agt_0000000000000003',
      name: 'claude-code',
      keyPrefix: 'gw-CcCcCc…',
      tool: 'claude-code',
      sourceTool: 'claude-code',
      binding: {state: 'bound', files: [`${HOME}/.claude/settings.json`]},
      keyed: true,
    }),
    agent({
      agentId: '(not keyed) codex',
      name: 'codex',
      type: 'codex',
      policyId: '-',
      keyId: null,
      keyPrefix: null,
      enabled: false,
      route: {family: 'responses', targets: []},
      tool: 'codex',
      binding: {state: 'unbound'},
      keyed: false,
    }),
  ],
  policies: [
    {
      id: 'default',
      routes: {},
      fallbacks: true,
      breaker: {failureThreshold: 5, cooldownMs: 30_000},
      timeouts: {} as never,
    },
    {
      id: 'claude_code_default',
      routes: {},
      fallbacks: true,
      breaker: {failureThreshold: 5, cooldownMs: 30_000},
      timeouts: {} as never,
    },
  ],
  routes: [
    {
      policyId: 'claude_code_default',
      family: 'messages',
      agents: 2,
      targets: [
        {provider: 'anthropic', circuit: circuit('anthropic', 'open', NOW + 12_000)},
        {provider: 'sim-messages', model: 'claude-sim', circuit: circuit('sim-messages', 'closed')},
      ],
    },
    {policyId: 'default', family: 'chat', agents: 0, targets: [{provider: 'sim-chat', circuit: null}]},
  ],
  requests,
  history: [...requests].reverse(),
  usage: {
    agent: [
      {
        key: 'agt_0000000000000001',
        requests: 2,
        errors: 0,
        fallbacks: 1,
        inputTokens: 2400,
        outputTokens: 160,
        cacheReadTokens: 20,
        cacheCreationTokens: 0,
        reasoningTokens: 6,
        costUSD: 0.0246,
        unpricedModels: [],
      },
      {
        key: 'agt_0000000000000002',
        requests: 1,
        errors: 1,
        fallbacks: 0,
        inputTokens: 1200,
        outputTokens: 80,
        cacheReadTokens: 10,
        cacheCreationTokens: 0,
        reasoningTokens: 3,
        costUSD: null,
        unpricedModels: ['claude'],
      },
    ],
    model: [
      {
        key: 'claude-sim',
        requests: 2,
        errors: 0,
        fallbacks: 1,
        inputTokens: 2400,
        outputTokens: 160,
        cacheReadTokens: 20,
        cacheCreationTokens: 0,
        reasoningTokens: 6,
        cost: 0.0123,
      },
    ],
  },
  loadedAt: NOW,
}

interface Fake extends AppActions {
  calls: string[]
  handlers?: EventHandlers
}

function fakeActions(data: AppData = DATA, over: Partial<AppActions> = {}): Fake {
  const fake: Fake = {
    calls: [],
    async load() {
      fake.calls.push('load')
      return data
    },
    async rotateKey(a) {
      fake.calls.push(`rotate ${a.name}`)
      return isBound(a)
        ? {text: `${a.name} has a new key gw-ROTATED…, written into ${a.binding!.files!.join(', ')}.`}
        : {
            text: `${a.name} has a new key (shown once; copy it now, no file holds it):`,
            key: 'gw-NEWKEY0123456789',
          }
    },
    async setPolicy(a, p) {
      fake.calls.push(`policy ${a.name} ${p}`)
      return {text: `${a.name} now uses policy ${p} and has a new key:`, key: 'gw-POLICYKEY'}
    },
    async setBinding(a, bound) {
      fake.calls.push(`${bound ? 'enable' : 'disable'} ${a.name}`)
      return `${a.name} ${bound ? 'enabled' : 'disabled'}.`
    },
    async reorder(p, f, t) {
      fake.calls.push(`reorder ${p}/${f} ${t.join(',')}`)
      return 'saved; gateway restarted'
    },
    async startGateway() {
      fake.calls.push('start')
      return 'started'
    },
    subscribe(handlers, signal) {
      fake.handlers = handlers
      return new Promise((resolve) => signal.addEventListener('abort', () => resolve()))
    },
    ...over,
  }
  return fake
}

const mounted: Array<() => void> = []
afterEach(() => {
  for (const u of mounted.splice(0)) u()
})

function mount(options: {data?: AppData | null; view?: ViewName; actions?: Fake} = {}) {
  const actions = options.actions ?? fakeActions(options.data ?? DATA)
  const r = render(
    <App
      actions={actions}
      initial={options.data === null ? undefined : (options.data ?? DATA)}
      initialView={options.view}
      color={false}
      columns={80}
      rows={24}
      now={() => NOW}
      home={HOME}
    />,
  )
  mounted.push(() => r.unmount())
  const frame = () =>
    (r.lastFrame() ?? '')
      // eslint-disable-next-line no-control-regex
      .replace(/\x1b\[[0-9;?]*[a-zA-Z]/g, '')
      .split('\n')
      .map((l) => l.trimEnd())
      .join('\n')
  const press = async (...keys: string[]) => {
    for (const k of keys) {
      r.stdin.write(k)
      await tick()
    }
  }
  return {...r, frame, press, actions}
}

const tick = (ms = 30) => new Promise((resolve) => setTimeout(resolve, ms))

/** The lines of a frame between the tab bar and the hint bar that are not blank. */
const body = (frame: string) =>
  frame
    .split('\n')
    .slice(3, -1)
    .filter((l) => l.trim() !== '')

describe('views at 80x24', () => {
  it.each([
    ['Agents', AGENTS],
    ['Routes', ROUTES],
    ['Requests', REQUESTS],
    ['Usage', USAGE],
  ] as const)('%s is exactly its frame', async (view, expected) => {
    const app = mount({view})
    await tick()
    expect(app.frame()).toBe(expected)
    expect(app.frame().split('\n')).toHaveLength(24)
    for (const line of app.frame().split('\n')) expect(line.length).toBeLessThanOrEqual(80)
  })

  it('says the gateway is stopped and what to do when there is nothing yet', async () => {
    const app = mount({data: {...EMPTY_DATA, loadedAt: NOW}})
    await tick()
    expect(app.frame()).toBe(EMPTY)
    await app.press('3')
    expect(body(app.frame())).toEqual([' No requests yet.', ' They appear here as agents call the gateway.'])
    await app.press('2')
    expect(body(app.frame())[0]).toBe(' No routes: no policy has a target.')
    await app.press('4')
    expect(body(app.frame())).toContain(' No usage yet: requests through the gateway are counted here.')
  })

  it('uses the width at 140x40: columns sized to their content, nothing cut, no stretched column', async () => {
    const generic = agent({
      agentId: 'agt_0000000000000009',
      name: 'ci-bot',
      type: 'generic_agent',
      policyId: 'claude_code_default',
      route: {family: 'responses', targets: [{provider: 'sim-responses'}]},
    })
    const data: AppData = {
      ...DATA,
      agents: [...DATA.agents, generic],
      routes: [
        ...DATA.routes,
        {
          policyId: 'claude_code_default',
          family: 'responses',
          agents: 1,
          targets: [{provider: 'sim-responses', circuit: null}],
        },
      ],
    }
    const r = render(
      <App
        actions={fakeActions(data)}
        initial={data}
        color={false}
        columns={140}
        rows={40}
        now={() => NOW}
      />,
    )
    mounted.push(() => r.unmount())
    await tick()
    const lines = () =>
      r
        .lastFrame()!
        .split('\n')
        .map((l) => l.trimEnd())
    expect(lines().slice(3, 9)).toEqual([
      ' NAME        KIND            BINDING POLICY              TODAY ROUTE',
      '›laptop      claude_code     -       claude_code_default  2.6k anthropic→sim-messages',
      ' reviewer    claude_subagent -       claude_code_default  1.3k (none)',
      ' claude-code claude_code     bound   claude_code_default     0 anthropic→sim-messages',
      ' codex       codex           unbound -                       0 (none)',
      ' ci-bot      generic_agent   -       claude_code_default     0 sim-responses',
    ])
    r.stdin.write('2')
    await tick(150)
    expect(lines()[6]).toBe(' claude_code_default/responses      1 sim-responses [closed]')
    r.stdin.write('3')
    await tick(150)
    expect(lines().slice(3, 8)).toEqual([
      ' TIME     AGENT    PROVIDER/MODEL          STATUS  TOKENS LATENCY ERROR',
      '›11:59:55 -        refused: revoked key       401     0/0     0ms',
      ' 11:59:50 reviewer anthropic/claude           502 1.2k/80    41ms upstream 502',
      ' 11:59:40 laptop   sim-messages/claude-sim 200 fb 1.2k/80    41ms',
      ' 07:00:00 laptop   sim-messages/claude-sim    200 1.2k/80    41ms',
    ])
    for (const line of r.lastFrame()!.split('\n')) expect(line.length).toBeLessThanOrEqual(140)
  })

  it('escapes control characters in names and models', async () => {
    const evil = 'x\u001b]0;owned\u0007'
    const app = mount({
      view: 'Requests',
      data: {...DATA, agents: [agent({name: evil})], requests: [row({model: evil})]},
    })
    await tick()
    expect(app.lastFrame()).not.toContain('\u001b]0')
    expect(app.frame()).toContain('x\\x1b]0;owned')
  })
})

describe('keyboard', () => {
  it('Tab, Shift-Tab and number keys switch views; q quits', async () => {
    const app = mount()
    await tick()
    await app.press('\t')
    expect(app.frame().split('\n')[1]).toBe(' 1 Agents [2 Routes] 3 Requests  4 Usage  5 Windows')
    await app.press('4')
    expect(app.frame().split('\n')[1]).toBe(' 1 Agents  2 Routes  3 Requests [4 Usage] 5 Windows')
    await app.press('\t')
    expect(app.frame().split('\n')[1]).toBe(' 1 Agents  2 Routes  3 Requests  4 Usage [5 Windows]')
    await app.press('\t')
    expect(app.frame().split('\n')[1]).toBe('[1 Agents] 2 Routes  3 Requests  4 Usage  5 Windows')
    await app.press('\u001b[Z') // Shift-Tab
    expect(app.frame().split('\n')[1]).toBe(' 1 Agents  2 Routes  3 Requests  4 Usage [5 Windows]')
  })

  it('offers only the actions that apply to the selected agent, and says why a key does nothing', async () => {
    const actions = fakeActions()
    const app = mount({actions})
    await tick()
    const hint = () => app.frame().split('\n').at(-1)
    // laptop only holds a key: no binding to change
    expect(hint()).toBe('r rotate key · p policy · Tab view · ? help · q quit')
    await app.press('e')
    expect(hint()).toBe('laptop only holds a key: gwctl binds only the coding agents it finds here.')
    await app.press('j') // reviewer: a sub-agent
    await app.press('d')
    expect(hint()).toBe("reviewer is a sub-agent: it uses laptop's config.")
    await app.press('j') // claude-code: bound
    expect(hint()).toBe('d unbind · r rotate key · p policy · Tab view · ? help · q quit')
    expect(body(app.frame()).at(-1)).toBe(' config bound to the gateway: ~/.claude/settings.json')
    await app.press('j') // codex: found, not bound, no key
    expect(hint()).toBe('e bind · Tab view · ? help · q quit')
    await app.press('r')
    expect(hint()).toBe('codex holds no key yet: e binds it, with a key of its own.')
    expect(actions.calls).toEqual([])
  })

  it('binds a found agent only after a confirmation that names the files it writes', async () => {
    const actions = fakeActions(DATA, {
      bindingPlan: async () => ({files: [`${HOME}/.codex/config.toml`], baseUrl: 'http://127.0.0.1:43123'}),
    })
    const app = mount({actions})
    await tick()
    await app.press('j', 'j', 'j', 'e')
    await tick()
    expect(body(app.frame())).toEqual([
      '┌──────────────────────────────────────────────────────────────────────────────┐',
      '│ Confirm                                                                      │',
      '│ Bind codex to the gateway (gwctl agents enable codex)? gwctl writes          │',
      '│ ~/.codex/config.toml to point it at http://127.0.0.1:43123 with a key of its │',
      '│ own; d (agents disable) puts the file back exactly.                          │',
      '│ y yes · n no                                                                 │',
      '└──────────────────────────────────────────────────────────────────────────────┘',
    ])
    await app.press('n')
    expect(actions.calls).not.toContain('enable codex')
    await app.press('e')
    await tick()
    await app.press('y')
    await tick()
    expect(actions.calls).toContain('enable codex')
    expect(actions.calls.at(-1)).toBe('load') // the view reloads after the action
    expect(app.frame().split('\n').at(-1)).toBe('codex enabled.')
  })

  it("shows an action's error in a box, and the app goes on", async () => {
    const actions = fakeActions(DATA, {
      setBinding: async () => {
        throw new Error('Cannot disable claude-code: its settings file is read-only.')
      },
    })
    const app = mount({actions})
    await tick()
    await app.press('j', 'j', 'd')
    expect(body(app.frame())).toContain(
      '│ Unbind claude-code (gwctl agents disable claude-code)? gwctl restores        │',
    )
    await app.press('y')
    await tick()
    expect(body(app.frame())).toContain(
      '│ Cannot disable claude-code: its settings file is read-only.                  │',
    )
    await app.press('\r', 'k', 'k')
    expect(app.frame()).toBe(AGENTS)
  })

  it('rotates a bound agent through its binding: the confirmation names the file that gets the key', async () => {
    const actions = fakeActions()
    const app = mount({actions})
    await tick()
    await app.press('j', 'j', 'r')
    expect(body(app.frame())).toEqual([
      '┌──────────────────────────────────────────────────────────────────────────────┐',
      '│ Confirm                                                                      │',
      '│ Rotate the key of claude-code (gwctl agents enable claude-code --rotate)?    │',
      '│ gwctl writes the new key into ~/.claude/settings.json; the old key stops     │',
      '│ working now.                                                                 │',
      '│ y yes · n no                                                                 │',
      '└──────────────────────────────────────────────────────────────────────────────┘',
    ])
    await app.press('y')
    await tick()
    expect(actions.calls).toContain('rotate claude-code')
    // the key went into the file: nothing to copy, no key on screen
    expect(body(app.frame())).toEqual([
      '┌──────────────────────────────────────────────────────────────────────────────┐',
      '│ Done                                                                         │',
      '│ claude-code has a new key gw-ROTATED…, written into                          │',
      '│ /home/ada/.claude/settings.json.                                             │',
      '│ Enter or Esc closes                                                          │',
      '└──────────────────────────────────────────────────────────────────────────────┘',
    ])
  })

  it('moves a bound agent to another policy through its binding, saying what changes on disk', async () => {
    const actions = fakeActions()
    const app = mount({actions})
    await tick()
    await app.press('j', 'j', 'p', '\u001b[A', '\r')
    expect(body(app.frame()).slice(2, 5)).toEqual([
      '│ Move claude-code to policy default (gwctl agents enable claude-code --policy │',
      '│ default)? It gets a new key, which gwctl writes into                         │',
      '│ ~/.claude/settings.json; the old key stops working now.                      │',
    ])
    await app.press('y')
    await tick()
    expect(actions.calls).toContain('policy claude-code default')
  })

  it('S starts a stopped gateway as it last ran, and says how before it does', async () => {
    const actions = fakeActions(DATA, {
      startPlan: () => ({command: 'gwctl gateway start --sim', sim: true, port: 43123, last: true}),
    })
    const app = mount({actions})
    await tick()
    actions.handlers!.onDown!('The gateway stopped.')
    await tick()
    await app.press('S')
    expect(body(app.frame()).slice(2, 4)).toEqual([
      '│ Start the gateway as it last ran: gwctl gateway start --sim (port 43123, the │',
      '│ offline simulator as upstream)?                                              │',
    ])
    await app.press('y')
    await tick()
    expect(actions.calls).toContain('start')
  })

  it('shows a rotated key once, in a box the user dismisses', async () => {
    const actions = fakeActions()
    const app = mount({actions})
    await tick()
    await app.press('r', 'y')
    await tick()
    expect(actions.calls).toContain('rotate laptop')
    expect(body(app.frame())).toContain(
      '║ gw-NEWKEY0123456789                                                          ║',
    )
    await app.press('\r')
    expect(app.frame()).not.toContain('gw-NEWKEY0123456789')
    expect(app.frame()).toBe(AGENTS)
  })

  it('changes the policy from a picker, after confirmation', async () => {
    const actions = fakeActions()
    const app = mount({actions})
    await tick()
    await app.press('p')
    expect(body(app.frame())).toContain(
      '│ › claude_code_default (current)                                              │',
    )
    await app.press('\u001b[A', '\r', 'y')
    await tick()
    expect(actions.calls).toContain('policy laptop default')
    expect(app.frame()).toContain('gw-POLICYKEY')
  })

  it('reorders a route and applies it with gateway restart semantics', async () => {
    const actions = fakeActions()
    const app = mount({view: 'Routes', actions})
    await tick()
    await app.press('\r', '+')
    expect(body(app.frame()).slice(-2)).toEqual([
      ' 1. sim-messages:claude-sim closed           0%     41ms',
      '›2. anthropic               open 12s       100%     41ms',
    ])
    await app.press('a')
    expect(app.frame()).toContain('restart the gateway (gateway restart: in-flight')
    await app.press('y')
    await tick()
    expect(actions.calls).toContain('reorder claude_code_default/messages sim-messages:claude-sim,anthropic')
  })

  it('filters requests with /, and Enter opens one', async () => {
    const app = mount({view: 'Requests'})
    await tick()
    await app.press('/', 'f', 'a', 'l', 'l', 'b', 'a', 'c', 'k', '\r')
    expect(body(app.frame())).toEqual([
      ' TIME     AGENT  PROVIDER/MODEL          STATUS  TOKENS LATENCY',
      '›11:59:40 laptop sim-messages/claude-sim 200 fb 1.2k/80    41ms',
    ])
    await app.press('/', 'r', 'e', 'v', '\r')
    expect(app.frame().split('\n')[1]).toBe(
      ' 1 Agents  2 Routes [3 Requests] 4 Usage  5 Windows   filter: rev',
    )
    await app.press('\r')
    expect(app.frame().split('\n').slice(2)).toEqual(DETAIL.split('\n').slice(2))
    await app.press('\u001b')
    await tick()
    await app.press('/', '\u001b') // Esc clears the filter
    expect(body(app.frame())).toHaveLength(5)
  })

  it('groups usage by model with ←/→, with cost when the usage service has it', async () => {
    const app = mount({view: 'Usage'})
    await tick()
    await app.press('\u001b[C')
    expect(body(app.frame()).slice(0, 3)).toEqual([
      ' by  agent [model] provider  tool  day  project  key  · gateway, 28 days',
      ' MODEL      REQUESTS INPUT OUTPUT CACHED    COST',
      '›claude-sim        2  2.4k    160     20 $0.0123',
    ])
  })
})

describe("agents' cost today", () => {
  it('shows the selected agent’s cost today from the pricer, unpriced (never $0) without a price', async () => {
    const actions = fakeActions(DATA, {cost: (e) => (e.provider === 'sim-messages' ? 0.01 : null)})
    const app = mount({actions})
    await tick()
    expect(body(app.frame())[6]).toBe(' parent - · children - · last request 20s ago · today $0.0200')
    await app.press('j')
    expect(body(app.frame())[6]).toBe(' parent laptop · children - · last request 10s ago · today unpriced')
  })
})

describe('usage by key', () => {
  it("names each key's agent beside its prefix", async () => {
    const usage = {
      key: [{...DATA.usage.agent![0], key: 'gw-AbCdEf…', costUSD: 0.25, unpricedModels: []}],
    }
    const agents = DATA.agents.map((a) => (a.name === 'reviewer' ? {...a, keyPrefix: 'gw-ZyXwVu…'} : a))
    const app = mount({view: 'Usage', data: {...DATA, agents, usage}})
    await tick()
    await app.press('\u001b[D')
    expect(body(app.frame())[2]).toBe('›gw-AbCdEf… (laptop)        2  2.4k    160     20 $0.2500')
  })
})

describe('usage sources', () => {
  it('s switches the source (gateway, history, all) through the usage service; history ignores gateway requests', async () => {
    const history = {
      agent: [
        {
          key: 'agt_0000000000000001',
          requests: 7,
          errors: 0,
          fallbacks: 0,
          inputTokens: 9000,
          outputTokens: 900,
          cacheReadTokens: 0,
          cacheCreationTokens: 0,
          reasoningTokens: 0,
          costUSD: 1.5,
          unpricedModels: [],
        },
      ],
    }
    const actions = fakeActions(DATA, {
      loadUsage: async (_signal, source) => {
        actions.calls.push(`usage ${source}`)
        return source === 'history' ? history : DATA.usage
      },
    })
    const app = mount({view: 'Usage', actions})
    await tick()
    await app.press('s')
    expect(body(app.frame()).slice(0, 3)).toEqual([
      ' by [agent] model  provider  tool  day  project  key  · history, 28 days',
      ' AGENT  REQUESTS INPUT OUTPUT CACHED  COST',
      '›laptop        7  9.0k    900      0 $1.50',
    ])
    actions.handlers!.onEvent({type: 'request', entry: {...row({}), time: NOW - 1000}})
    await tick()
    expect(body(app.frame())[2]).toBe('›laptop        7  9.0k    900      0 $1.50')
    await app.press('s')
    expect(body(app.frame())[0]).toBe(' by [agent] model  provider  tool  day  project  key  · all, 28 days')
    expect(actions.calls).toEqual(['usage history', 'usage all'])
  })
})

describe('live', () => {
  it('draws a finished request at the top as its event arrives, and a breaker change', async () => {
    const actions = fakeActions()
    const app = mount({view: 'Requests', actions})
    await tick()
    const event: GatewayEvent = {
      type: 'request',
      entry: {...row({}), time: NOW - 1000, agentId: 'agt_0000000000000002', model: 'live-model'},
    }
    actions.handlers!.onEvent(event)
    await tick()
    expect(body(app.frame())[1]).toBe('›11:59:59 reviewer sim-messages/live-model    200 1.2k/80    41ms')
    actions.handlers!.onEvent({type: 'breaker', provider: 'anthropic', state: 'half-open', retryAt: null})
    await app.press('2')
    expect(body(app.frame())[1]).toContain('anthropic [half-open] → sim-messages:claud…')
  })

  it('applies a request event to the open view only: one new row, usage and cost added, no reload', async () => {
    const actions = fakeActions(DATA, {cost: (e) => (e.model === 'claude-sim' ? 0.5 : null)})
    const app = mount({view: 'Usage', actions})
    await tick()
    await app.press('\u001b[C')
    const before = app.frame().split('\n')
    actions.handlers!.onEvent({type: 'request', entry: {...row({}), time: NOW - 1000}})
    await tick()
    const after = app.frame().split('\n')
    const changed = after.map((l, i) => (l === before[i] ? null : i)).filter((i) => i !== null)
    // the model's row (requests, tokens, cost), and the sparkline's last hour
    expect(changed).toEqual([5, 7])
    expect(after[5]).toBe('›claude-sim        3  3.6k    240     30 $0.5123')
    expect(after[7]).toMatch(/^ tokens\/hour, 24h .*█ +max 3\.8k$/)
    // a model without a price: a new row, unpriced (never $0)
    actions.handlers!.onEvent({type: 'request', entry: {...row({}), time: NOW - 500, model: 'mystery'}})
    await tick()
    expect(body(app.frame())[3]).toBe(' mystery           1  1.2k     80     10 unpriced')
    expect(actions.calls.filter((c) => c === 'load')).toEqual([])
  })

  it('counts a live request under its agent’s tool, not its entrance: OpenCode and Qwen Code', async () => {
    const usageRow = (key: string, requests: number) => ({
      key,
      requests,
      errors: 0,
      fallbacks: 0,
      inputTokens: 1000 * requests,
      outputTokens: 10 * requests,
      cacheReadTokens: 0,
      cacheCreationTokens: 0,
      reasoningTokens: 0,
      costUSD: null,
      unpricedModels: [],
    })
    const data: AppData = {
      ...DATA,
      agents: [
        ...DATA.agents,
        // bound OpenCode speaks messages (its provider's family); Qwen Code, by its kind only, chat
        agent({agentId: 'agt_opencode', name: 'oc', type: 'opencode', tool: 'opencode'}),
        agent({agentId: 'agt_qwen', name: 'qw', type: 'qwen_code_subagent', tool: null, sourceTool: null}),
      ],
      usage: {
        ...DATA.usage,
        tool: [usageRow('claude-code', 5), usageRow('opencode', 4)],
      },
    }
    const app = mount({view: 'Usage', data})
    await tick()
    for (let i = 0; i < 3; i++) await app.press('\u001b[C')
    expect(body(app.frame()).slice(0, 4)).toEqual([
      ' by  agent  model  provider [tool] day  project  key  · gateway, 28 days',
      ' TOOL        REQUESTS INPUT OUTPUT CACHED',
      '›claude-code        5  5.0k     50      0',
      ' opencode           4  4.0k     40      0',
    ])
    const live = {...row({}), time: NOW - 1000, cacheReadTokens: 0}
    app.actions.handlers!.onEvent({
      type: 'request',
      entry: {...live, agentId: 'agt_opencode', entrance: 'messages'},
    })
    app.actions.handlers!.onEvent({
      type: 'request',
      entry: {...live, agentId: 'agt_opencode', entrance: 'messages'},
    })
    app.actions.handlers!.onEvent({type: 'request', entry: {...live, agentId: 'agt_qwen', entrance: 'chat'}})
    await tick()
    expect(body(app.frame()).slice(2, 5)).toEqual([
      '›opencode           6  6.4k    200      0',
      ' claude-code        5  5.0k     50      0',
      ' qwen-code          1  1.2k     80      0',
    ])
  })

  it('keeps live usage rows in the usage service’s order: a row that grows past another moves up', async () => {
    const app = mount({view: 'Usage'})
    await tick()
    expect(
      body(app.frame())
        .slice(2, 4)
        .map((l) => l.slice(1, 9)),
    ).toEqual(['laptop  ', 'reviewer'])
    const live = {...row({}), agentId: 'agt_0000000000000002', time: NOW - 1000}
    app.actions.handlers!.onEvent({type: 'request', entry: live})
    app.actions.handlers!.onEvent({type: 'request', entry: {...live, time: NOW - 900}})
    await tick()
    expect(body(app.frame()).slice(2, 4)).toEqual([
      '›reviewer        3  3.6k    240     30 unpriced',
      ' laptop          2  2.4k    160     20  $0.0246',
    ])
  })

  it('reloads only the agents on an agent event, only the usage on a usage event', async () => {
    const renamed = DATA.agents.map((a, i) => (i === 0 ? {...a, name: 'desk'} : a))
    const actions = fakeActions(DATA, {
      loadAgents: async () => {
        actions.calls.push('agents')
        return renamed
      },
      loadUsage: async () => {
        actions.calls.push('usage')
        return {agent: [], model: []}
      },
    })
    const app = mount({actions})
    await tick()
    actions.handlers!.onEvent({type: 'agent', agentId: 'agt_0000000000000001', change: 'rotated'})
    await tick()
    expect(body(app.frame())[1]).toMatch(/^›desk /)
    actions.handlers!.onEvent({type: 'usage', rows: 3})
    await app.press('4')
    expect(body(app.frame())).toContain(' No usage yet: requests through the gateway are counted here.')
    expect(actions.calls).toEqual(['agents', 'usage'])
  })

  it('reloads everything when the stream (re)connects after a gateway restart', async () => {
    const actions = fakeActions()
    const app = mount({actions})
    await tick()
    actions.handlers!.onDown!('The gateway stopped.')
    await tick()
    expect(app.frame().split('\n')[0]).toBe('gwctl ○ gateway stopped · S starts it')
    actions.handlers!.onUp!({pid: 2, port: 43123, version: '0.1.0'})
    await tick()
    expect(actions.calls).toEqual(['load'])
    expect(app.frame().split('\n')[0]).toMatch(/^gwctl ● running 127\.0\.0\.1:43123/)
  })

  it('shows "gateway stopped" while the stream is down and comes back when it reconnects', async () => {
    const actions = fakeActions()
    const app = mount({actions})
    await tick()
    actions.handlers!.onDown!('The gateway stopped.')
    await tick()
    expect(app.frame().split('\n')[0]).toBe('gwctl ○ gateway stopped · S starts it')
    actions.handlers!.onUp!({pid: 1, port: 43123, version: '0.1.0'})
    await tick()
    expect(app.frame().split('\n')[0]).toBe('gwctl ● running 127.0.0.1:43123 · up 1h 02m 05s · v0.1.0')
  })
})
