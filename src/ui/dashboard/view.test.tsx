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
  return renderToString(<DashboardView {...props} />, {columns: 120})
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
