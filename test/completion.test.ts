/**
 * Shell completion end to end: `gwctl completion bash` is sourced in a real bash, and its
 * function, called as bash calls it on Tab, runs the real `gwctl __complete` against a temp
 * GWCTL_HOME holding an agent issued with `gwctl key issue`.
 */
import {execFileSync, spawnSync} from 'node:child_process'
import {mkdirSync, symlinkSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {afterEach, describe, expect, it} from 'vitest'

import {BIN, cliEnv, runCli, tempHome} from './helpers/cli.js'

const hasBash = spawnSync('bash', ['--version']).status === 0
const cleanups: Array<() => void> = []
afterEach(() => {
  for (const c of cleanups.splice(0)) c()
})

describe.skipIf(!hasBash)('gwctl completion', () => {
  it('bash completes commands, flags, agent names and policy ids through gwctl __complete', async () => {
    const {home, cleanup} = tempHome()
    cleanups.push(cleanup)
    const issued = await runCli(
      [
        'key',
        'issue',
        '--agent-name',
        'laptop',
        '--agent-type',
        'claude_code',
        '--employee-name',
        'Ada',
        '--employee-contact',
        'ada@example.com',
      ],
      {home},
    )
    expect(issued.exitCode).toBe(0)
    const script = await runCli(['completion', 'bash'], {home})
    expect(script.exitCode).toBe(0)
    expect(script.stdout).toContain('gwctl __complete')
    expect(script.stdout).toContain('complete -o default -F _gwctl_complete gwctl')
    const bin = join(home, 'bin')
    mkdirSync(bin)
    symlinkSync(BIN, join(bin, 'gwctl'))
    writeFileSync(join(home, 'completion.bash'), script.stdout)
    const env = {...process.env, ...cliEnv(home), PATH: `${bin}:${process.env.PATH}`} as Record<
      string,
      string
    >
    for (const [k, v] of Object.entries(cliEnv(home))) if (v === undefined) delete env[k]
    const tab = (...words: string[]) =>
      execFileSync(
        'bash',
        [
          '-c',
          'source "$1"; shift; COMP_WORDS=(gwctl "$@"); COMP_CWORD=$#; _gwctl_complete; printf "%s\\n" "${COMPREPLY[@]}"',
          'tab',
          join(home, 'completion.bash'),
          ...words,
        ],
        {env, encoding: 'utf8'},
      )
        .split('\n')
        .filter(Boolean)
    expect(tab('age')).toEqual(['agents'])
    expect(tab('agents', '')).toEqual(['disable', 'enable', 'list', 'remove'])
    expect(tab('logs', '--sta')).toEqual(['--status'])
    expect(tab('logs', '--status', '')).toEqual(['2xx', '4xx', '5xx', 'fallback'])
    expect(tab('logs', '--agent', '')).toEqual(['laptop'])
    expect(tab('policies', 'show', '')).toEqual(['claude_code_default', 'default'])
    expect(tab('agents', 'enable', '')).toEqual([
      'claude-code',
      'codex',
      'gemini-cli',
      'opencode',
      'qwen-code',
    ])
    expect(tab('agents', 'enable', 'l')).toEqual([])
    expect(tab('key', 'revoke', '')).toEqual(['laptop'])
    // the video models of the catalog, none of the chat models
    const video = tab('video', 'create', '--model', '')
    expect(video).toHaveLength(14)
    expect(video).toContain('Alpha2.6-T2V')
    expect(video.every((m) => /^(Alpha|Beta)/.test(m))).toBe(true)
  })

  it.each(['zsh', 'fish'])('prints a %s script that calls gwctl __complete', async (shell) => {
    const {home, cleanup} = tempHome()
    cleanups.push(cleanup)
    const r = await runCli(['completion', shell], {home})
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toContain('gwctl __complete')
    expect(r.stdout).toContain(
      shell === 'zsh' ? 'compdef _gwctl_complete gwctl' : "complete -c gwctl -a '(_gwctl_complete)'",
    )
  })

  it('rejects an unknown shell with exit 2', async () => {
    const {home, cleanup} = tempHome()
    cleanups.push(cleanup)
    const r = await runCli(['completion', 'tcsh'], {home})
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toMatch(/bash, zsh, fish/)
  })
})
