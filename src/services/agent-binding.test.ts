import {existsSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it, vi} from 'vitest'

import {tempHome} from '../../test/helpers/cli.js'
import {StateStore, withState} from '../store/state.js'
import {disableAgents, enableAgent, listAgentRows, reconcileBinding} from './agent-binding.js'
import {routePolicy} from './policies.js'

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
  // (the gateway is not running here: that problem is every binding's)
  const autoModeProblems = (rows: Array<{binding: {problems?: Array<{problem: string}>}}>) =>
    (rows[0].binding.problems ?? []).filter((p) => p.problem.startsWith('auto mode'))

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

  it("writes Claude Code's local auto-mode classifier while its route does not start at Anthropic's API, decides again on enable, undoes exactly", async () => {
    mkdirSync(join(home, 'user', '.claude'), {recursive: true})
    const path = join(home, 'user', '.claude', 'settings.json')
    writeFileSync(path, '{"a": 1}')
    const deepseek = {
      name: 'ds',
      family: 'messages' as const,
      baseUrl: 'https://api.deepseek.com/anthropic',
      credential: {secret: 'k'},
    }
    await withState((store) => void store.data.providers.push(deepseek), join(home, 'state.json'))
    const policy = 'claude_code_default'
    expect((await routePolicy(policy, 'messages', ['ds:deepseek-v4-flash'])).warnings).toEqual([])
    const bound = await enableAgent({agent: 'claude-code', env})
    expect(bound.autoModeLocal).toBe(true)
    expect((await state()).agents.find((a) => a.id === bound.agentId)?.policyId).toBe(policy)
    const settings = () => JSON.parse(readFileSync(path, 'utf8')) as {env: Record<string, string>}
    expect(settings().env.CLAUDE_CODE_AUTO_MODE_SERVER).toBe('0')
    expect(autoModeProblems(await listAgentRows({env}))).toEqual([])
    expect(await enableAgent({agent: 'claude-code', env})).toMatchObject({outcome: 'already-bound'})

    // the route moves to Anthropic's API: said, and the next enable takes gwctl's switch out
    const toAnthropic = await routePolicy(policy, 'messages', ['anthropic'])
    expect(toAnthropic.warnings).toEqual([
      `claude-code is bound with policy ${policy}, whose Messages route now starts at Anthropic's API: run \`gwctl agents enable claude-code\` so that its auto mode asks Anthropic's classifier again.`,
    ])
    expect(await enableAgent({agent: 'claude-code', env})).toMatchObject({
      outcome: 'rebound',
      keyIssued: false,
    })
    expect(settings().env).not.toHaveProperty('CLAUDE_CODE_AUTO_MODE_SERVER')
    expect(settings().env.ANTHROPIC_AUTH_TOKEN).toMatch(/^gw-/)

    // and back (translated this time): the binding is stale until enable writes it again
    const back = await routePolicy(policy, 'messages', ['ds'])
    expect(back.warnings).toEqual([expect.stringContaining('no longer starts at Anthropic')])
    const [row] = await listAgentRows({env})
    expect(row.binding.state).toBe('stale')
    expect(autoModeProblems([row])).toEqual([
      {
        problem: `auto mode asks Anthropic's classifier, which policy ${policy}'s first Messages target (ds) does not answer`,
        fix: 'gwctl agents enable claude-code',
      },
    ])
    expect(await enableAgent({agent: 'claude-code', env})).toMatchObject({
      outcome: 'rebound',
      keyIssued: false,
    })
    expect(settings().env.CLAUDE_CODE_AUTO_MODE_SERVER).toBe('0')
    expect(autoModeProblems(await listAgentRows({env}))).toEqual([])

    // gwctl's copy of the settings before binding gone: an enable that changes nothing still answers
    const {backupsDir} = await import('./binding-originals.js')
    const {renameSync} = await import('node:fs')
    renameSync(backupsDir(), `${backupsDir()}.away`)
    expect(await enableAgent({agent: 'claude-code', env})).toMatchObject({outcome: 'already-bound'})
    renameSync(`${backupsDir()}.away`, backupsDir())

    const [off] = await disableAgents({agent: 'claude-code', env})
    expect(off).toMatchObject({restore: 'exact'})
    expect(readFileSync(path, 'utf8')).toBe('{"a": 1}')
  })

  it("keeps the user's own auto-mode setting, from before binding or set while bound", async () => {
    mkdirSync(join(home, 'user', '.claude'), {recursive: true})
    const path = join(home, 'user', '.claude', 'settings.json')
    const mine = '{\n  "env": {"CLAUDE_CODE_AUTO_MODE_SERVER": "1"}\n}\n'
    writeFileSync(path, mine)
    await withState(
      (store) =>
        void store.data.providers.push({
          name: 'glm',
          family: 'messages',
          baseUrl: 'https://open.bigmodel.cn/api/anthropic',
          credential: {secret: 'k'},
        }),
      join(home, 'state.json'),
    )
    await routePolicy('claude_code_default', 'messages', ['glm'])
    expect(await enableAgent({agent: 'claude-code', env})).not.toHaveProperty('autoModeLocal')
    const settings = () => JSON.parse(readFileSync(path, 'utf8')) as {env: Record<string, string>}
    expect(settings().env.CLAUDE_CODE_AUTO_MODE_SERVER).toBe('1')
    expect(autoModeProblems(await listAgentRows({env}))).toEqual([])
    expect((await disableAgents({agent: 'claude-code', env}))[0]).toMatchObject({restore: 'exact'})
    expect(readFileSync(path, 'utf8')).toBe(mine)

    // no value before binding; "1" set by the user while bound stays through enable and disable
    writeFileSync(path, '{"a": 1}')
    vi.setSystemTime(new Date('2026-11-01T00:00:10Z'))
    await enableAgent({agent: 'claude-code', env})
    expect(settings().env.CLAUDE_CODE_AUTO_MODE_SERVER).toBe('0')
    const edited = JSON.parse(readFileSync(path, 'utf8')) as {env: Record<string, string>}
    edited.env.CLAUDE_CODE_AUTO_MODE_SERVER = '1'
    writeFileSync(path, JSON.stringify(edited))
    expect(await enableAgent({agent: 'claude-code', env})).toMatchObject({outcome: 'rebound'})
    expect(settings().env.CLAUDE_CODE_AUTO_MODE_SERVER).toBe('1')
    await disableAgents({agent: 'claude-code', env})
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({a: 1, env: {CLAUDE_CODE_AUTO_MODE_SERVER: '1'}})

    // the user's own value deleted while bound: no longer theirs, and one enable writes gwctl's
    vi.setSystemTime(new Date('2026-11-01T00:00:20Z'))
    await enableAgent({agent: 'claude-code', env})
    expect(settings().env.CLAUDE_CODE_AUTO_MODE_SERVER).toBe('1')
    const deleted = JSON.parse(readFileSync(path, 'utf8')) as {env: Record<string, string>}
    delete deleted.env.CLAUDE_CODE_AUTO_MODE_SERVER
    writeFileSync(path, JSON.stringify(deleted))
    expect(await enableAgent({agent: 'claude-code', env})).toMatchObject({
      outcome: 'rebound',
      autoModeLocal: true,
    })
    expect(settings().env.CLAUDE_CODE_AUTO_MODE_SERVER).toBe('0')
    expect(await enableAgent({agent: 'claude-code', env})).toMatchObject({outcome: 'already-bound'})
    await disableAgents({agent: 'claude-code', env})
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({a: 1, env: {}})
  })
})
