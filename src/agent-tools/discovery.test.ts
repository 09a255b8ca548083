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
