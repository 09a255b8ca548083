import {render} from 'ink-testing-library'
import {describe, expect, it} from 'vitest'

import type {BudgetView} from '../../../gateway/budgets.js'
import {EMPTY_DATA} from '../model.js'
import {UsageView} from './usage.js'

const NOW = Date.parse('2026-11-26T19:30:00Z')

const budget: BudgetView = {
  id: 'bgt_0a1b2c3d',
  scope: 'agent',
  target: 'agt_1',
  name: 'codex',
  period: 'daily',
  unit: 'usd',
  limit: 5,
  spent: 4.2,
  reserved: 0,
  percent: 84,
  state: 'warning',
  periodStart: Date.parse('2026-11-26T00:00:00Z'),
  resetAt: Date.parse('2026-11-27T00:00:00Z'),
  onExceed: 'fallback:openai:gpt-4o-mini',
  unpricedModels: [],
  source: 'gateway',
}

describe('the usage view shows the budgets', () => {
  it('one line each: scope, period, spent / limit, percent and when it resets', () => {
    const r = render(
      <UsageView
        data={{...EMPTY_DATA, budgets: [budget], loadedAt: NOW}}
        width={100}
        height={20}
        selected={0}
        now={NOW}
        color={false}
        pivot="agent"
      />,
    )
    const lines = (r.lastFrame() ?? '').split('\n').map((l) => l.trimEnd())
    expect(lines).toContain(
      ' budget agent codex daily: $4.20 / $5.00 (84%), resets 2026-11-27 00:00 UTC (in 4h 30m)',
    )
    r.unmount()
  })

  it('no budgets: no budget line', () => {
    const r = render(
      <UsageView
        data={{...EMPTY_DATA, loadedAt: NOW}}
        width={100}
        height={20}
        selected={0}
        now={NOW}
        color={false}
        pivot="agent"
      />,
    )
    expect(r.lastFrame()).not.toContain('budget')
    r.unmount()
  })
})
