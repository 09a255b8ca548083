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

const TREE: CompletionTree = commandTree([
  {id: 'agents:enable', flags: {policy: {type: 'option'}, json: {type: 'boolean'}}, args: {agent: {}}},
  {id: 'agents:list', flags: {all: {type: 'boolean'}}},
  {id: 'logs', flags: {agent: {type: 'option'}, status: {type: 'option', options: ['2xx', '4xx']}}},
  {id: 'chat', flags: {model: {type: 'option'}, image: {type: 'option'}}},
  {id: 'policies:show', args: {id: {}}},
  {id: 'sim', hidden: true},
])

function home(): NodeJS.ProcessEnv {
  const dir = mkdtempSync(join(tmpdir(), 'gwctl-complete-'))
  writeFileSync(
    join(dir, 'state.json'),
    JSON.stringify({
      agents: [{name: 'laptop'}, {name: 'ci-bot'}, {name: 'evil\u001b[31m'}, {name: 'two words'}],
      policies: [
        {id: 'default', routes: {chat: [{provider: 'p', model: 'gpt-sim'}]}},
        {id: 'claude_code_default', routes: {}},
      ],
      providers: [{name: 'p', models: {'claude-sonnet': 'claude-sim'}}],
    }),
  )
  return {GWCTL_HOME: dir}
}

describe('completion', () => {
  it('completes commands and subcommands, never hidden ones', () => {
    const env = home()
    expect(complete(TREE, [''], env)).toEqual(['agents', 'chat', 'logs', 'policies'])
    expect(complete(TREE, ['agents', ''], env)).toEqual(['enable', 'list'])
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
    expect(complete(TREE, ['agents', 'enable', ''], env)).toEqual([
      'ci-bot',
      'claude-code',
      'codex',
      'gemini-cli',
      'laptop',
      'opencode',
      'qwen-code',
    ])
    expect(complete(TREE, ['agents', 'enable', 'laptop', '--policy', 'cl'], env)).toEqual([
      'claude_code_default',
    ])
    expect(complete(TREE, ['policies', 'show', ''], env)).toEqual(['claude_code_default', 'default'])
    expect(complete(TREE, ['chat', '--model', ''], env)).toEqual(['claude-sim', 'claude-sonnet', 'gpt-sim'])
    // a free value (a file): nothing, so the shell offers files
    expect(complete(TREE, ['chat', '--image', ''], env)).toEqual([])
    expect(completionValues('agent', {GWCTL_HOME: '/nonexistent/gwctl'})).toEqual([])
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
