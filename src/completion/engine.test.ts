/**
 * Completion answers from a tree and a state file in a temp GWCTL_HOME: commands, flags, fixed
 * options, and agent names, policy ids and model names read from the state.
 */
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import type {CompletionTree} from './engine.js'
import {complete, completionValues, main} from './engine.js'
import {commandTree, completionScript} from './scripts.js'

const TREE: CompletionTree = commandTree(
  [
    {id: 'agents:enable', flags: {policy: {type: 'option'}, json: {type: 'boolean'}}, args: {agent: {}}},
    {id: 'agents:disable', args: {agent: {}}},
    {id: 'agents:remove', args: {agent: {}}},
    {id: 'agents:list', flags: {all: {type: 'boolean'}}},
    {id: 'key:revoke', args: {target: {}}},
    {id: 'video:create', flags: {model: {type: 'option'}}},
    {id: 'providers:add', flags: {model: {type: 'option'}}},
    {id: 'logs', flags: {agent: {type: 'option'}, status: {type: 'option', options: ['2xx', '4xx']}}},
    {id: 'chat', flags: {model: {type: 'option'}, image: {type: 'option'}}},
    {id: 'policies:show', args: {id: {}}},
    {id: 'sim', hidden: true},
  ],
  {'video:create --model': ['Alpha2.6-T2V', 'Beta-Q3-T2V']},
)

function home(): NodeJS.ProcessEnv {
  const dir = mkdtempSync(join(tmpdir(), 'gwctl-complete-'))
  writeFileSync(
    join(dir, 'state.json'),
    JSON.stringify({
      agents: [
        {id: 'agt_1', name: 'laptop'},
        {id: 'agt_2', name: 'ci-bot'},
        {id: 'agt_3', name: 'evil\u001b[31m'},
        {id: 'agt_4', name: 'two words'},
      ],
      keys: [{agentId: 'agt_1', revokedAt: 1}, {agentId: 'agt_2'}],
      policies: [
        {id: 'default', routes: {chat: [{provider: 'p', model: 'gpt-sim'}]}},
        {id: 'claude_code_default', routes: {messages: [{provider: 'a', model: 'claude-sim'}]}},
      ],
      providers: [
        {name: 'p', family: 'chat', models: {'my-mini': 'sim-mini'}},
        {name: 'a', family: 'messages', models: {'claude-sonnet': 'claude-sim'}},
      ],
      bindings: [{tool: 'codex'}],
    }),
  )
  writeFileSync(join(dir, 'settings.json'), JSON.stringify({'chat.model': 'sim-pro'}))
  return {GWCTL_HOME: dir}
}

describe('completion', () => {
  it('completes commands and subcommands, never hidden ones', () => {
    const env = home()
    expect(complete(TREE, [''], env)).toEqual([
      'agents',
      'chat',
      'key',
      'logs',
      'policies',
      'providers',
      'video',
    ])
    expect(complete(TREE, ['agents', ''], env)).toEqual(['disable', 'enable', 'list', 'remove'])
    expect(complete(TREE, ['ag'], env)).toEqual(['agents'])
  })

  it('completes flags, and fixed options after a flag', () => {
    const env = home()
    expect(complete(TREE, ['logs', '--'], env)).toEqual(['--agent', '--help', '--status'])
    expect(complete(TREE, ['logs', '--status', ''], env)).toEqual(['2xx', '4xx'])
  })

  it('completes agent names, policy ids and model names from the state file; unsafe names are left out', () => {
    const env = home()
    expect(complete(TREE, ['logs', '--agent', ''], env)).toEqual(['ci-bot', 'laptop'])
    expect(complete(TREE, ['agents', 'enable', 'laptop', '--policy', 'cl'], env)).toEqual([
      'claude_code_default',
    ])
    expect(complete(TREE, ['policies', 'show', ''], env)).toEqual(['claude_code_default', 'default'])
    // a free value (a file): nothing, so the shell offers files
    expect(complete(TREE, ['chat', '--image', ''], env)).toEqual([])
    expect(completionValues('agent', {GWCTL_HOME: '/nonexistent/gwctl'})).toEqual([])
  })

  it('each flag and argument completes from its own domain (issue 25, item 6)', () => {
    const env = home()
    // video models for video, never a chat model
    expect(complete(TREE, ['video', 'create', '--model', ''], env)).toEqual(['Alpha2.6-T2V', 'Beta-Q3-T2V'])
    // chat models for chat: chat providers and routes, the chat.model setting; not messages models
    expect(complete(TREE, ['chat', '--model', ''], env)).toEqual([
      'gpt-sim',
      'my-mini',
      'sim-mini',
      'sim-pro',
    ])
    // the tools agents enable can bind, not every agent name (laptop would exit 7)
    expect(complete(TREE, ['agents', 'enable', ''], env)).toEqual([
      'claude-code',
      'codex',
      'gemini-cli',
      'opencode',
      'qwen-code',
    ])
    // only the bound ones for disable
    expect(complete(TREE, ['agents', 'disable', ''], env)).toEqual(['codex'])
    // agents holding a live key for key revoke (laptop's key is revoked)
    expect(complete(TREE, ['key', 'revoke', ''], env)).toEqual(['ci-bot'])
    // every agent for agents remove
    expect(complete(TREE, ['agents', 'remove', ''], env)).toEqual(['ci-bot', 'laptop'])
    // a FROM=TO mapping is free text
    expect(complete(TREE, ['providers', 'add', '--model', ''], env)).toEqual([])
  })

  it('main reads the tree from GWCTL_COMPLETE_TREE, as the scripts pass it', () => {
    const env = {...home(), GWCTL_COMPLETE_TREE: JSON.stringify(TREE)}
    expect(main(['logs', '--agent', 'l'], env)).toBe('laptop')
    expect(main(['policy'], {...env, GWCTL_COMPLETE_TREE: undefined})).toBe('claude_code_default\ndefault')
  })

  it.each(['bash', 'zsh', 'fish'] as const)(
    'the %s script holds the tree and calls gwctl __complete',
    (shell) => {
      const script = completionScript(shell, TREE)
      expect(script).toContain('gwctl __complete')
      expect(script).toContain(JSON.stringify(TREE).slice(0, 40))
    },
  )
})
