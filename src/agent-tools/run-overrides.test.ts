import {mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'

import {
  claudeRouteEntries,
  claudeSetsCompactWindow,
  geminiCliModel,
  geminiWindowDefaults,
} from './run-overrides.js'

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

describe("Gemini CLI's settings files, as gwctl run reads them for a window", () => {
  const folder = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'gwctl-gemini-settings-'))
    dirs.push(dir)
    return dir
  }
  const paths = (dir: string) => ({
    userFile: join(dir, 'user.json'),
    cwd: join(dir, 'project'),
    env: {
      GEMINI_CLI_SYSTEM_SETTINGS_PATH: join(dir, 'system.json'),
      GEMINI_CLI_SYSTEM_DEFAULTS_PATH: join(dir, 'defaults.json'),
    },
  })

  it('reads the model it runs as it chooses it: -m, --model, GEMINI_MODEL, then its settings files', () => {
    const dir = folder()
    const at = paths(dir)
    expect(geminiCliModel([], at)).toBeUndefined()
    writeFileSync(join(dir, 'defaults.json'), '{"model": {"name": "from-defaults"}}')
    expect(geminiCliModel([], at)).toBe('from-defaults')
    writeFileSync(join(dir, 'user.json'), '{"model": {"name": "from-user"}}')
    expect(geminiCliModel([], at)).toBe('from-user')
    mkdirSync(join(dir, 'project', '.gemini'), {recursive: true})
    writeFileSync(join(dir, 'project', '.gemini', 'settings.json'), '{"model": {"name": "from-project"}}')
    expect(geminiCliModel([], at)).toBe('from-project')
    writeFileSync(join(dir, 'system.json'), '{"model": {"name": "from-system"}}')
    expect(geminiCliModel([], at)).toBe('from-system')
    expect(geminiCliModel([], {...at, env: {...at.env, GEMINI_MODEL: 'from-env'}})).toBe('from-env')
    expect(geminiCliModel(['-p', 'hi', '-m', 'gemma-4-31b-it'], at)).toBe('gemma-4-31b-it')
    expect(geminiCliModel(['--model=gemma-4-26b-a4b-it'], at)).toBe('gemma-4-26b-a4b-it')
    expect(geminiCliModel(['--model', 'x'], {...at, env: {...at.env, GEMINI_MODEL: 'from-env'}})).toBe('x')
  })

  it('adds the threshold to the system defaults (none: the key alone; theirs: kept beside it)', () => {
    const dir = folder()
    expect(geminiWindowDefaults(0.1, paths(dir))).toEqual({model: {compressionThreshold: 0.1}})
    writeFileSync(join(dir, 'defaults.json'), '{\n  // ours\n  "general": {"vimMode": true}\n}')
    expect(geminiWindowDefaults(0.1, paths(dir))).toEqual({
      general: {vimMode: true},
      model: {compressionThreshold: 0.1},
    })
  })

  it("leaves it to the user's own threshold in any file, and to a defaults file that does not parse", () => {
    for (const file of ['user.json', 'system.json', 'defaults.json']) {
      const dir = folder()
      writeFileSync(join(dir, file), '{"model": {"compressionThreshold": 0.3}}')
      expect(geminiWindowDefaults(0.1, paths(dir))).toBeUndefined()
    }
    const project = folder()
    mkdirSync(join(project, 'project', '.gemini'), {recursive: true})
    writeFileSync(
      join(project, 'project', '.gemini', 'settings.json'),
      '{"model": {"compressionThreshold": 0.3}}',
    )
    expect(geminiWindowDefaults(0.1, paths(project))).toBeUndefined()
    const broken = folder()
    writeFileSync(join(broken, 'defaults.json'), '{"model": ')
    expect(geminiWindowDefaults(0.1, paths(broken))).toBeUndefined()
    // another model setting of the user's is no threshold
    const other = folder()
    writeFileSync(join(other, 'user.json'), '{"model": {"name": "gemini-2.5-pro"}}')
    expect(geminiWindowDefaults(0.1, paths(other))).toEqual({model: {compressionThreshold: 0.1}})
  })
})
