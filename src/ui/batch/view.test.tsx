import {renderToString} from 'ink'
import {describe, expect, it} from 'vitest'

import type {BatchTaskView} from '../../services/video-batch.js'
import {BatchView} from './view.js'

const now = 1_000_000
const tasks: BatchTaskView[] = [
  {
    line: 1,
    name: 'fox',
    state: 'completed',
    task_id: 'task_1',
    started_at: now - 9000,
    ended_at: now - 1000,
    output: '/out/fox.mp4',
  },
  {line: 2, name: 'waves', state: 'in_progress', task_id: 'task_2', started_at: now - 65_000},
  {
    line: 3,
    name: 'owl',
    state: 'failed',
    task_id: 'task_3',
    started_at: now - 5000,
    ended_at: now,
    error: 'rejected by the provider',
  },
  {line: 4, name: 'line-4', state: 'pending'},
]

describe('BatchView', () => {
  it('shows totals, running tasks with elapsed time, failures with their reason and finished outputs', () => {
    const text = renderToString(
      <BatchView tasks={tasks} startedAt={now - 70_000} now={now} columns={100} rows={20} />,
      {
        columns: 100,
      },
    )
    const lines = text.split('\n')
    expect(lines[0]).toMatch(/^2\/4 done {2}1 running {2}1 failed/)
    expect(lines[1]).toMatch(/line 2 +waves +in_progress +1m 05s {2}task_2/)
    expect(lines[2]).toMatch(/line 3 +owl +failed .* rejected by the provider/)
    expect(lines[3]).toMatch(/line 1 +fox +completed .* \/out\/fox\.mp4/)
    expect(text).not.toContain('line-4')
  })

  it('stays shorter than the terminal', () => {
    const many: BatchTaskView[] = Array.from({length: 40}, (_, i) => ({
      line: i + 1,
      name: `t${i}`,
      state: 'in_progress',
      started_at: now,
    }))
    const text = renderToString(<BatchView tasks={many} startedAt={now} now={now} columns={80} rows={10} />, {
      columns: 80,
    })
    expect(text.split('\n').length).toBeLessThan(10)
  })
})
