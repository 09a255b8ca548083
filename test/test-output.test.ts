/**
 * The test output stays clean (issue 25): the Ink screen tests leave no raw `ESC[?25h` in what
 * vitest prints (test/setup-worker.ts).
 */
import {execa} from 'execa'
import {describe, expect, it} from 'vitest'

import {ROOT} from './helpers/cli.js'

describe('test output', () => {
  it('a run of the Ink screen tests prints no raw cursor escape', async () => {
    const r = await execa('npx', ['vitest', 'run', 'src/ui/screen.test.tsx'], {
      cwd: ROOT,
      all: true,
      reject: false,
      env: {NO_COLOR: '1', CI: undefined},
    })
    expect(r.exitCode, r.all).toBe(0)
    expect(r.all).toContain('passed')
    expect(r.all).not.toContain('\u001b[?25h')
  }, 60_000)
})
