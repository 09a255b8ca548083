import {renderToString} from 'ink'
import {describe, expect, it} from 'vitest'

import type {DashboardData} from '../../services/dashboard.js'
import {dashboardText} from '../../cli/dashboard-text.js'
import {DashboardView} from './view.js'

const data: DashboardData = {
  gateway: {pid: 4242, port: 43123, uptime_s: 3725, version: '0.1.0'},
  routes: [
    {
      policyId: 'claude_code_default',
      family: 'messages',
      agents: 2,
      targets: [
        {
          provider: 'anthropic',
          circuit: {
            provider: 'anthropic',
            state: 'open',
            consecutiveFailures: 5,
            openedAt: 1,
            retryAt: 2,
            retryInMs: 1000,
            lastError: 'x',
          },
        },
        {provider: 'sim-messages', model: 'claude-sim', circuit: null},
      ],
    },
  ],
  recent_requests: [
    {
      id: 7,
      time: Date.UTC(2026, 10, 22, 10, 20, 30),
      agentId: 'agt_laptop',
      keyPrefix: 'gw-x…',
      policyId: 'claude_code_default',
      entrance: 'messages',
      requestedModel: 'claude',
      provider: 'sim-messages',
      model: 'claude-sim',
      status: 200,
      fallback: true,
      inputTokens: 120,
      outputTokens: 8,
      cacheReadTokens: 0,
      cacheCreationTokens: 0,
      reasoningTokens: 0,
      latencyMs: 41.2,
      ttfbMs: 9,
      error: null,
      project: null,
      requestId: null,
    },
  ],
  recent_usage: [
    {
      key: 'claude-sim',
      requests: 1234,
      errors: 0,
      fallbacks: 1,
      inputTokens: 1_500_000,
      outputTokens: 8,
      cacheReadTokens: 0,
      cacheCreationTokens: 0,
      reasoningTokens: 0,
    },
  ],
}

function frame(props: Parameters<typeof DashboardView>[0]): string[] {
  return renderToString(<DashboardView columns={120} {...props} />, {columns: 120})
    .split('\n')
    .map((l) => l.trimEnd())
}

describe('DashboardView', () => {
  it('draws the gateway, routes with breaker state, requests and usage', () => {
    const lines = frame({data})
    expect(lines[0]).toBe(
      'gwctl dashboard  gateway running on 127.0.0.1:43123 · pid 4242 · up 1h 02m 05s · v0.1.0',
    )
    expect(lines).toContain('Routes')
    expect(lines.find((l) => l.startsWith('claude_code_default/messages'))).toMatch(
      /2 agents\s+anthropic \[open\] → sim-messages:claude-sim \[closed\]$/,
    )
    expect(lines.find((l) => l.startsWith('10:20:30'))).toMatch(
      /^10:20:30 agt_laptop\s+sim-messages\/claude-sim\s+200 fb\s+120\/8\s+41ms$/,
    )
    expect(lines.find((l) => l.startsWith('claude-sim'))).toMatch(/1,234 req\s+1,500,000 in\s+8 out$/)
    expect(lines.at(-1)).toBe('refreshes every second · q or Ctrl-C quits')
  })

  it('shows control characters of requested models as \\xHH, never as escape sequences', () => {
    const model = 'x\u001b]0;owned\u0007\u001b[2J'
    const lines = frame({
      data: {
        ...data,
        recent_requests: [{...data.recent_requests[0], model}],
        recent_usage: [{...data.recent_usage[0], key: model}],
      },
    })
    const text = lines.join('\n')
    expect(text).not.toContain('\u001b]')
    expect(text).not.toContain('\u001b[2J')
    expect(text).toContain('sim-messages/x\\x1b]0;owned')
    expect(text).toContain('x\\x1b]0;owned\\x07\\x1b[2J')
  })

  it('says when the gateway went away, and shows empty sections', () => {
    const lines = frame({data: null, error: 'The gateway is not running.'})
    expect(lines[0]).toBe('gwctl dashboard  gateway: The gateway is not running.')
    expect(lines.filter((l) => l === ' (none)')).toHaveLength(3)
  })
})

describe('dashboardText', () => {
  it('is the same content as plain text', () => {
    const text = dashboardText(data)
    expect(text).toContain('Gateway: running on 127.0.0.1:43123 (pid 4242, up 1h 02m 05s, v0.1.0)')
    expect(text).toMatch(
      /claude_code_default\/messages\s+2\s+anthropic \(open\), sim-messages:claude-sim \(closed\)/,
    )
    expect(text).toMatch(/claude-sim\s+1,234\s+1,500,000\s+8\s+0/)
  })
})

describe('routes without a targets list', () => {
  it('reads the targets from the route label, and breaker states under other names', () => {
    const lines = frame({
      data: {
        ...data,
        routes: [
          {route: 'team/chat -> corp, openai:gpt-5', policyId: 'team', family: 'chat', agents: 1},
          {policyId: 'p', family: 'gemini', targets: [{provider: 'g', breaker: {state: 'open'}}]},
          {route: 'q/messages -> (no provider)', agents: 0},
        ],
      },
    })
    expect(lines.find((l) => l.startsWith('team/chat'))).toMatch(/corp \[closed\] → openai:gpt-5 \[closed\]$/)
    expect(lines.find((l) => l.startsWith('p/gemini'))).toMatch(/g \[open\]$/)
    expect(lines.find((l) => l.startsWith('q/messages'))).toMatch(/0 agents\s+\(no provider\)$/)
  })
})

describe('at 80x24', () => {
  const busy: DashboardData = {
    ...data,
    routes: ['default', 'claude_code_default', 'codex_default', 'gemini_cli_default', 'team-red'].flatMap(
      (policyId) =>
        ['chat', 'messages'].map((family) => ({
          policyId,
          family,
          agents: 1,
          targets: [
            {provider: 'anthropic', model: 'claude-sonnet-4-5-20250929', circuit: null},
            {provider: 'sim-messages', model: 'claude-sim', circuit: null},
          ],
        })),
    ),
    recent_requests: Array.from({length: 10}, (_, i) => ({
      ...data.recent_requests[0],
      id: 100 - i,
      time: Date.UTC(2026, 10, 22, 10, 20, 30 - i),
      agentName: 'a-rather-long-agent-name',
      model: i === 1 ? 'claude-sonnet-4-5-20250929-with-a-long-suffix' : 'claude-sim',
      status: i === 2 ? 502 : 200,
      error: i === 2 ? 'upstream 502: the provider answered Bad Gateway' : null,
      fallback: false,
    })),
    recent_usage: Array.from({length: 6}, (_, i) => ({...data.recent_usage[0], key: `model-${i}`})),
  }

  it('fits: no line wider than 80, one line shorter than the terminal, sections say what they hold', () => {
    const lines = renderToString(<DashboardView data={busy} columns={80} rows={24} />, {columns: 80})
      .split('\n')
      .map((l) => l.trimEnd())
    expect(lines).toEqual([
      'gwctl dashboard  gateway running on 127.0.0.1:43123 · up 1h 02m 05s · v0.1.0',
      '',
      'Routes (5 of 10)',
      'default/chat                 1 agents anthropic:claude-sonnet-4-5-20250929 [clo…',
      'default/messages             1 agents anthropic:claude-sonnet-4-5-20250929 [clo…',
      'claude_code_default/chat     1 agents anthropic:claude-sonnet-4-5-20250929 [clo…',
      'claude_code_default/messages 1 agents anthropic:claude-sonnet-4-5-20250929 [clo…',
      'codex_default/chat           1 agents anthropic:claude-sonnet-4-5-20250929 [clo…',
      '',
      'Recent requests (5 of 8)',
      '10:20:30 a-rather-long-age… sim-messages/claude-sim               200 120/8 41ms',
      '10:20:29 a-rather-long-age… sim-messages/claude-sonnet-4-5-20250… 200 120/8 41ms',
      '10:20:28 a-rather-long-age… sim-messages/claude-sim               502 120/8 41ms',
      '10:20:27 a-rather-long-age… sim-messages/claude-sim               200 120/8 41ms',
      '10:20:26 a-rather-long-age… sim-messages/claude-sim               200 120/8 41ms',
      '',
      'Usage by model (4 of 6)',
      'model-0 1,234 req 1,500,000 in 8 out',
      'model-1 1,234 req 1,500,000 in 8 out',
      'model-2 1,234 req 1,500,000 in 8 out',
      'model-3 1,234 req 1,500,000 in 8 out',
      '',
      'refreshes every second · q or Ctrl-C quits',
    ])
    expect(lines).toHaveLength(23)
  })

  it('at 60 columns cuts the widest cells first, and shows an error column only where there is room', () => {
    const lines = renderToString(<DashboardView data={busy} columns={60} rows={24} />, {columns: 60})
      .split('\n')
      .map((l) => l.trimEnd())
    const requests = lines.slice(
      lines.indexOf('Recent requests (5 of 8)') + 1,
      lines.indexOf('Recent requests (5 of 8)') + 4,
    )
    expect(requests).toEqual([
      '10:20:30 a-rather-long-ag… sim-messages/clau… 200 120/8 41ms',
      '10:20:29 a-rather-long-ag… sim-messages/clau… 200 120/8 41ms',
      '10:20:28 a-rather-long-ag… sim-messages/clau… 502 120/8 41ms',
    ])
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(60)
  })
})

describe('an error column where there is room', () => {
  it('shows the error of a failed request beside it on a wide terminal', () => {
    const failed = {...data.recent_requests[0], status: 502, error: 'upstream 502', fallback: false}
    const lines = renderToString(
      <DashboardView data={{...data, recent_requests: [failed]}} columns={100} rows={24} />,
      {columns: 100},
    ).split('\n')
    expect(lines.find((l) => l.startsWith('10:20:30'))!.trimEnd()).toBe(
      '10:20:30 agt_laptop sim-messages/claude-sim 502 120/8 41ms upstream 502',
    )
  })
})
