import {mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import Database from 'better-sqlite3'
import {afterEach, describe, expect, it} from 'vitest'

import {discoverAgents} from './discovery.js'
import {scannedTools} from './scan-status.js'

const dirs: string[] = []
function fixtureHome(): string {
  const d = mkdtempSync(join(tmpdir(), 'gwctl-discovery-'))
  dirs.push(d)
  return d
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, {recursive: true, force: true})
})

describe('discoverAgents', () => {
  it('finds installed tools, their history and Claude sub-agents without running anything', () => {
    const home = fixtureHome()
    mkdirSync(join(home, '.claude', 'projects'), {recursive: true})
    mkdirSync(join(home, '.claude', 'agents'), {recursive: true})
    writeFileSync(
      join(home, '.claude', 'agents', 'reviewer.md'),
      '---\nname: code-reviewer\ndescription: x\n---\nbody\n',
    )
    writeFileSync(join(home, '.claude', 'agents', 'plain.md'), 'no front matter\n')
    mkdirSync(join(home, '.gemini'), {recursive: true})
    const agents = discoverAgents({HOME: home})
    expect(agents.map((a) => [a.name, a.installed, a.parentName ?? null])).toEqual([
      ['claude-code', true, null],
      ['plain', true, 'claude-code'],
      ['code-reviewer', true, 'claude-code'],
      ['codex', false, null],
      ['gemini-cli', true, null],
      ['opencode', false, null],
      ['qwen-code', false, null],
    ])
    expect(agents[0]).toMatchObject({
      agentType: 'claude_code',
      family: 'messages',
      configPath: join(home, '.claude', 'settings.json'),
      historyPath: join(home, '.claude', 'projects'),
      historyExists: true,
    })
    expect(agents[2]).toMatchObject({agentType: 'claude_code_subagent', family: 'messages'})
    expect(agents[4]).toMatchObject({
      family: 'gemini',
      historyExists: false,
      historyPath: join(home, '.gemini', 'tmp'),
    })
  })

  it('honours CLAUDE_CONFIG_DIR (comma list), CODEX_HOME and GEMINI_CLI_HOME', () => {
    const home = fixtureHome()
    const second = join(home, 'claude-b')
    mkdirSync(join(second, 'projects'), {recursive: true})
    mkdirSync(join(home, 'cx', 'archived_sessions'), {recursive: true})
    mkdirSync(join(home, 'gh', '.gemini'), {recursive: true})
    const agents = discoverAgents({
      HOME: join(home, 'nowhere'),
      CLAUDE_CONFIG_DIR: `${join(home, 'claude-a')},${second}`,
      CODEX_HOME: join(home, 'cx'),
      GEMINI_CLI_HOME: join(home, 'gh'),
    })
    const byName = Object.fromEntries(agents.map((a) => [a.name, a]))
    expect(byName['claude-code']).toMatchObject({
      installed: true,
      configDir: join(home, 'claude-a'),
      configDirSource: 'CLAUDE_CONFIG_DIR',
      configPath: join(home, 'claude-a', 'settings.json'),
      historyPath: join(second, 'projects'),
    })
    expect(byName.codex).toMatchObject({installed: true, historyPath: join(home, 'cx', 'archived_sessions')})
    expect(byName['gemini-cli']).toMatchObject({installed: true, configDirSource: 'GEMINI_CLI_HOME'})
  })
})

describe('OpenCode and Qwen Code', () => {
  it('reads OpenCode where it does: XDG folders, its last config file, the family of its chosen model', () => {
    const home = fixtureHome()
    const config = join(home, 'cfg', 'opencode')
    mkdirSync(config, {recursive: true})
    writeFileSync(join(config, 'config.json'), '{}')
    writeFileSync(join(config, 'opencode.jsonc'), '{\n  // mine\n  "model": "openai/gpt-5"\n}\n')
    mkdirSync(join(home, 'data', 'opencode'), {recursive: true})
    const env = {HOME: home, XDG_CONFIG_HOME: join(home, 'cfg'), XDG_DATA_HOME: join(home, 'data')}
    const oc = discoverAgents(env).find((a) => a.name === 'opencode')
    expect(oc).toMatchObject({
      installed: true,
      agentType: 'opencode',
      family: 'responses',
      configDir: config,
      configDirSource: 'XDG_CONFIG_HOME',
      // opencode.jsonc is loaded last: its values win, so binding edits it
      configPath: join(config, 'opencode.jsonc'),
      historyPath: join(home, 'data', 'opencode'),
      historyExists: true,
    })
    // OPENCODE_CONFIG names the file loaded after the global ones
    const custom = discoverAgents({...env, OPENCODE_CONFIG: join(home, 'my.json')}).find(
      (a) => a.name === 'opencode',
    )
    expect(custom?.configPath).toBe(join(home, 'my.json'))
    expect(custom?.family).toBe('messages') // no model there: OpenCode's anthropic default
    // defaults: ~/.config/opencode/opencode.json, ~/.local/share/opencode
    const bare = discoverAgents({HOME: join(home, 'none')}).find((a) => a.name === 'opencode')
    expect(bare).toMatchObject({
      installed: false,
      configPath: join(home, 'none', '.config', 'opencode', 'opencode.json'),
      historyPath: join(home, 'none', '.local', 'share', 'opencode'),
    })
  })

  it('reads Qwen Code from QWEN_HOME, its history from QWEN_RUNTIME_DIR', () => {
    const home = fixtureHome()
    mkdirSync(join(home, 'q'), {recursive: true})
    mkdirSync(join(home, 'rt', 'projects'), {recursive: true})
    const qwen = discoverAgents({
      HOME: home,
      QWEN_HOME: join(home, 'q'),
      QWEN_RUNTIME_DIR: join(home, 'rt'),
    }).find((a) => a.name === 'qwen-code')
    expect(qwen).toMatchObject({
      installed: true,
      agentType: 'qwen_code',
      family: 'chat',
      configDirSource: 'QWEN_HOME',
      configPath: join(home, 'q', 'settings.json'),
      historyPath: join(home, 'rt', 'projects'),
      historyExists: true,
    })
    const plain = discoverAgents({HOME: home}).find((a) => a.name === 'qwen-code')
    expect(plain).toMatchObject({installed: false, configPath: join(home, '.qwen', 'settings.json')})
  })
})

describe('scannedTools (the history_files contract)', () => {
  it('is empty without a database or a table, and lists the tools with rows', async () => {
    const home = fixtureHome()
    const db = join(home, 'logs.db')
    expect([...(await scannedTools(db))]).toEqual([])
    const conn = new Database(db)
    conn.exec('CREATE TABLE other (x)')
    expect([...(await scannedTools(db))]).toEqual([])
    conn.exec(
      "CREATE TABLE history_files (path TEXT, tool TEXT); INSERT INTO history_files VALUES ('a', 'codex'), ('b', 'codex')",
    )
    conn.close()
    expect([...(await scannedTools(db))]).toEqual(['codex'])
  })
})
