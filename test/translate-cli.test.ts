/**
 * `gwctl policies route --translate` from the command line: refused without the flag (exit 2, the
 * hint names it), marked and labelled with it, kept by a reorder, shown by `policies show/list`;
 * a mistyped provider is named.
 */
import {afterEach, describe, expect, it} from 'vitest'

import {json, runCli, tempHome} from './helpers/cli.js'

const cleanups: Array<() => void> = []
afterEach(() => {
  for (const c of cleanups.splice(0)) c()
})

describe('policies route --translate', {timeout: 60_000}, () => {
  it('refuses a cross-family target without --translate and marks it with', async () => {
    const t = tempHome()
    cleanups.push(t.cleanup)
    const cli = (args: string[]) => runCli(args, {home: t.home})

    const refused = await cli([
      'policies',
      'route',
      'claude-on-chat',
      '--family',
      'messages',
      '--target',
      'platform:deepseek-v3',
    ])
    expect(refused.exitCode).toBe(2)
    expect(refused.stderr).toContain('messages target "platform" speaks chat, not messages')
    expect(refused.stderr).toContain('--translate')

    const routed = await cli([
      'policies',
      'route',
      'claude-on-chat',
      '--family',
      'messages',
      '--target',
      'platform:deepseek-v3',
      '--target',
      'sim-messages',
      '--translate',
    ])
    expect(routed.exitCode, routed.stderr).toBe(0)
    expect(routed.stdout).toContain('messages -> platform:deepseek-v3 (chat, translated), sim-messages')

    const shown = await cli(['policies', 'show', 'claude-on-chat', '--json'])
    expect(json(shown).routes.messages).toEqual([
      {provider: 'platform', model: 'deepseek-v3', translate: true},
      {provider: 'sim-messages'},
    ])
    const list = await cli(['policies', 'list'])
    expect(list.stdout).toContain('platform:deepseek-v3 (chat, translated)')

    // the platform provider exists once the platform is configured
    expect((await cli(['config', 'set', 'base-url', 'http://127.0.0.1:9/api/v1'])).exitCode).toBe(0)
    const doctor = await cli(['doctor', '--json'])
    const policies = json(doctor).checks.find((c: {id: string}) => c.id === 'policies')
    expect(policies.ok).toBe(true)
    expect(policies.detail).toContain(
      'translated: claude-on-chat/messages -> platform:deepseek-v3 (chat, translated)',
    )

    // routing again without the flag is the spec's default: refused
    const again = await cli([
      'policies',
      'route',
      'claude-on-chat',
      '--family',
      'messages',
      '--target',
      'platform',
    ])
    expect(again.exitCode).toBe(2)
  })

  it('a typo in a provider name names the provider meant', async () => {
    const t = tempHome()
    cleanups.push(t.cleanup)
    const cli = (args: string[]) => runCli(args, {home: t.home})
    expect((await cli(['config', 'set', 'base-url', 'http://127.0.0.1:9/api/v1'])).exitCode).toBe(0)
    const typo = await cli([
      'policies',
      'route',
      'claude-on-chat',
      '--family',
      'messages',
      '--target',
      'platfrom:deepseek-v3',
      '--translate',
    ])
    expect(typo.exitCode).toBe(2)
    expect(typo.stderr).toContain(
      'Error: The policy is not valid: policy claude-on-chat: messages target "platfrom" is not a known provider (did you mean "platform"?)\n',
    )
    // nothing near: the providers there are
    const far = await cli(['policies', 'route', 'p', '--family', 'chat', '--target', 'corp-llm'])
    expect(far.stderr).toContain(
      '"corp-llm" is not a known provider (known: sim-chat, sim-responses, sim-messages, sim-gemini, openai, openai-responses, anthropic, gemini, platform)',
    )
  })
})
