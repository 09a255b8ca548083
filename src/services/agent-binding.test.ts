import {existsSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it, vi} from 'vitest'

import {tempHome} from '../../test/helpers/cli.js'
import {StateStore, withState} from '../store/state.js'
import {disableAgents, enableAgent, listAgentRows, reconcileBinding} from './agent-binding.js'

describe('agent binding service', () => {
  let home: string
  let cleanup: () => void
  let env: NodeJS.ProcessEnv
  const saved = {...process.env}
  beforeEach(() => {
    ;({home, cleanup} = tempHome())
    process.env.GWCTL_HOME = home
    process.env.GWCTL_GATEWAY_PORT = '45999'
    env = {HOME: join(home, 'user')}
    vi.useFakeTimers({toFake: ['Date']})
    vi.setSystemTime(new Date('2026-11-01T00:00:00Z'))
  })
  afterEach(() => {
    vi.useRealTimers()
    process.env = {...saved}
    cleanup()
  })

  const gemini = () => ({
    settings: join(home, 'user', '.gemini', 'settings.json'),
    env: join(home, 'user', '.gemini', '.env'),
  })
  const state = async () => (await StateStore.open(join(home, 'state.json'))).data

  it('settles an enable killed between its two Gemini files, then binds and undoes exactly', async () => {
    mkdirSync(join(home, 'user', '.gemini'), {recursive: true})
    writeFileSync(gemini().env, 'A=1\r\n')
    await enableAgent({agent: 'gemini-cli', env})
    // the kill: settings.json written, .env not yet; the state still says "binding"
    writeFileSync(gemini().env, 'A=1\r\n')
    await withState(
      (store) => {
        const b = store.data.bindings![0]
        b.phase = 'binding'
        for (const f of b.files) {
          f.pendingHash = f.writtenHash!
          f.writtenHash = null
        }
      },
      join(home, 'state.json'),
    )
    await reconcileBinding('gemini-cli')
    const b = (await state()).bindings![0]
    expect(b.phase).toBe('bound')
    expect(b.files.map((f) => f.writtenHash === null)).toEqual([false, true])
    const [row] = await listAgentRows({env})
    expect(row.binding).toMatchObject({
      state: 'stale',
      problems: expect.arrayContaining([
        {problem: 'its config no longer points at the gateway (no base URL)', fix: expect.any(String)},
      ]),
    })

    vi.setSystemTime(new Date('2026-11-01T00:00:10Z')) // past the 5 s issue limit
    const again = await enableAgent({agent: 'gemini-cli', env})
    expect(again).toMatchObject({outcome: 'rebound', keyIssued: true})
    expect(readFileSync(gemini().env, 'utf8')).toMatch(
      /^A=1\r\nGOOGLE_GEMINI_BASE_URL=http:\/\/127\.0\.0\.1:45999\r\nGEMINI_API_KEY=gw-\w+\r\n$/,
    )

    const [off] = await disableAgents({agent: 'gemini-cli', env})
    expect(off).toMatchObject({restore: 'exact', deleted: [gemini().settings], keyRevoked: true})
    expect(readFileSync(gemini().env, 'utf8')).toBe('A=1\r\n')
    expect(existsSync(gemini().settings)).toBe(false)
  })

  it('settles a disable killed after its file was restored, and one killed before', async () => {
    mkdirSync(join(home, 'user', '.claude'), {recursive: true})
    const path = join(home, 'user', '.claude', 'settings.json')
    writeFileSync(path, '{"a": 1}')
    await enableAgent({agent: 'claude-code', env})
    const bound = readFileSync(path, 'utf8')
    const intent = (restoreHash: string) =>
      withState(
        (store) => {
          const b = store.data.bindings![0]
          b.phase = 'unbinding'
          b.files[0].pendingHash = restoreHash
        },
        join(home, 'state.json'),
      )

    // killed before the file was written: still bound, and a new disable restores exactly
    const {createHash} = await import('node:crypto')
    await intent(createHash('sha256').update('{"a": 1}').digest('hex'))
    await reconcileBinding('claude-code')
    expect((await state()).bindings![0].phase).toBe('bound')
    expect(readFileSync(path, 'utf8')).toBe(bound)

    // killed after the file was restored: the state only needs the record gone
    await intent(createHash('sha256').update('{"a": 1}').digest('hex'))
    writeFileSync(path, '{"a": 1}')
    const results = await disableAgents({agent: 'claude-code', env, keepKey: true})
    expect(results).toMatchObject([{tool: 'claude-code', files: []}])
    expect((await state()).bindings).toEqual([])
    expect(readFileSync(path, 'utf8')).toBe('{"a": 1}')
  })

  it('refuses a sub-agent name with the command that binds its parent', async () => {
    mkdirSync(join(home, 'user', '.claude', 'agents'), {recursive: true})
    writeFileSync(join(home, 'user', '.claude', 'agents', 'rev.md'), '---\nname: reviewer\n---\n')
    await expect(enableAgent({agent: 'reviewer', env})).rejects.toMatchObject({
      exitCode: 2,
      hint: 'Enable the parent instead: gwctl agents enable claude-code',
    })
    const rows = await listAgentRows({all: true, env})
    expect(rows.map((r) => [r.name, r.parentAgentName, r.discovered, r.scanned])).toEqual([
      ['claude-code', null, true, false],
      ['reviewer', 'claude-code', true, false],
    ])
    expect(await listAgentRows({env})).toEqual([]) // nothing holds a key, nothing was scanned
  })
})
