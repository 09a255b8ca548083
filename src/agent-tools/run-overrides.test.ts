import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'

import {claudeRouteEntries, claudeSetsCompactWindow} from './run-overrides.js'

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, {recursive: true, force: true})
})
const settings = (text: string): string => {
  const dir = mkdtempSync(join(tmpdir(), 'gwctl-claude-settings-'))
  dirs.push(dir)
  const path = join(dir, 'settings.json')
  writeFileSync(path, text)
  return path
}

describe("Claude Code's settings files, as gwctl run reads them", () => {
  it('finds a compact window the user chose: the variable in env, autoCompactWindow at the top or under a model', () => {
    expect(claudeSetsCompactWindow(settings('{"env": {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "150000"}}'))).toBe(
      true,
    )
    expect(claudeSetsCompactWindow(settings('{\n  // mine\n  "autoCompactWindow": 150000\n}'))).toBe(true)
    expect(claudeSetsCompactWindow(settings('{"models": {"opus": {"autoCompactWindow": 150000}}}'))).toBe(
      true,
    )
    // a key commented out, a value that only mentions it, no file, a file that does not parse
    expect(
      claudeSetsCompactWindow(settings('{\n  // "autoCompactWindow": 150000\n  "model": "opus"\n}')),
    ).toBe(false)
    expect(claudeSetsCompactWindow(settings('{"note": "autoCompactWindow: later"}'))).toBe(false)
    expect(claudeSetsCompactWindow(join(tmpdir(), 'gwctl-no-such-dir', 'settings.json'))).toBe(false)
    expect(claudeSetsCompactWindow(settings('{"autoCompactWindow": '))).toBe(false)
  })

  it('names the routing variables an env block sets, as before', () => {
    const path = settings('{\n  // mine\n  "env": {"ANTHROPIC_BASE_URL": "http://x", "OTHER": "1"}\n}')
    expect(claudeRouteEntries(path)).toEqual(['ANTHROPIC_BASE_URL'])
    expect(claudeRouteEntries(settings('{"model": "opus"}'))).toEqual([])
  })
})
