/**
 * A rotation is not a move: `agents enable TOOL --rotate` (what the app's `r` does for a bound
 * agent) keeps the agent's policy, where it used to put it back on its kind's default policy.
 */
import {mkdirSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'

import {json, runCli, tempHome} from './helpers/cli.js'

const cleanups: Array<() => void> = []
afterEach(() => {
  for (const c of cleanups.splice(0)) c()
})

describe('agents enable --rotate', () => {
  it("keeps the bound agent's policy", async () => {
    const t = tempHome()
    cleanups.push(t.cleanup)
    const cli = (args: string[]) => runCli(args, {home: t.home})
    mkdirSync(join(t.home, 'user-home', '.claude'), {recursive: true})
    writeFileSync(join(t.home, 'user-home', '.claude', 'settings.json'), '{}\n')
    const moved = await cli(['agents', 'enable', 'claude-code', '--policy', 'default', '--json'])
    expect(moved.exitCode, moved.stderr).toBe(0)
    const policyOf = async () =>
      (json(await cli(['agents', 'list', '--json'])).agents as Array<{tool: string; policyId: string}>).find(
        (a) => a.tool === 'claude-code',
      )?.policyId
    expect(await policyOf()).toBe('default')
    const rotated = await cli(['agents', 'enable', 'claude-code', '--rotate', '--json'])
    expect(rotated.exitCode, rotated.stderr).toBe(0)
    expect(json(rotated)).toMatchObject({outcome: 'rebound', keyIssued: true})
    expect(await policyOf()).toBe('default')
  }, 60_000)
})
