import {describe, expect, it} from 'vitest'

import {agentHome} from '../agent-homes.js'
import {binderOf} from './binders.js'
import {bindCodexConfig, codexTarget, parseToml} from './codex-toml.js'
import {getEnvValue, setEnvLine, setEnvValue} from './dotenv-file.js'
import {checkJsonObject, getJsonString, setJsonValue} from './json-settings.js'

const KEY = 'gw-' + 'A'.repeat(46)
const URL = 'http://127.0.0.1:4999'
const env = {HOME: '/home/u'}

describe('JSON settings (jsonc)', () => {
  const text =
    '{\r\n\t// keep me\r\n\t"model": "opus", /* and me */\r\n\t"env": {\r\n\t\t"FOO": "1"\r\n\t}\r\n}\r\n'

  it('sets a nested value touching only its span: comments, tabs and CRLF stay', () => {
    const next = setJsonValue(text, ['env', 'ANTHROPIC_BASE_URL'], URL)
    expect(next).toBe(
      '{\r\n\t// keep me\r\n\t"model": "opus", /* and me */\r\n\t"env": {\r\n\t\t"FOO": "1",\r\n\t\t"ANTHROPIC_BASE_URL": "http://127.0.0.1:4999"\r\n\t}\r\n}\r\n',
    )
    expect(getJsonString(next, ['env', 'ANTHROPIC_BASE_URL'])).toBe(URL)
    expect(setJsonValue(next, ['env', 'ANTHROPIC_BASE_URL'], undefined)).toBe(text)
  })

  it('refuses a broken file with exit 3, the path and the parser message', () => {
    expect(() => checkJsonObject('{"a": 1,,}', '/x/settings.json')).toThrow(
      expect.objectContaining({
        exitCode: 3,
        message: expect.stringMatching(/\/x\/settings.json does not parse: .* line 1/),
      }),
    )
    expect(() => checkJsonObject('[1]', '/x/settings.json')).toThrow(expect.objectContaining({exitCode: 3}))
    expect(() => checkJsonObject('', '/x/settings.json')).not.toThrow()
  })
})

describe('Codex config.toml', () => {
  const toml =
    '# my codex\r\nmodel = "gpt-5"   # pinned\r\nmodel_provider = "openai"\r\n\r\n[analytics]\r\nenabled = false\r\n'

  it('replaces model_provider in place and appends the provider table, CRLF kept', () => {
    const next = bindCodexConfig(toml, '/c/config.toml', URL, KEY)
    expect(next).toBe(
      '# my codex\r\nmodel = "gpt-5"   # pinned\r\nmodel_provider = "gwctl"\r\n\r\n[analytics]\r\nenabled = false\r\n\r\n' +
        '[model_providers.gwctl]\r\nname = "gwctl gateway"\r\nbase_url = "http://127.0.0.1:4999/v1"\r\nwire_api = "responses"\r\n' +
        `experimental_bearer_token = "${KEY}"\r\n`,
    )
    expect(codexTarget(next)).toEqual({baseUrl: URL, key: KEY})
    expect(parseToml(next, 'x')).toMatchObject({model: 'gpt-5', analytics: {enabled: false}})
  })

  it('adds model_provider before the first table and replaces an existing gwctl table', () => {
    const once = bindCodexConfig('model = "m"\n\n[a]\nb = 1\n', '/c', URL, 'gw-old')
    expect(
      once.startsWith('model = "m"\nmodel_provider = "gwctl"\n\n[a]\nb = 1\n\n[model_providers.gwctl]\n'),
    ).toBe(true)
    const twice = bindCodexConfig(once, '/c', 'http://127.0.0.1:5000', KEY)
    expect(twice.match(/\[model_providers\.gwctl\]/g)).toHaveLength(1)
    expect(codexTarget(twice)).toEqual({baseUrl: 'http://127.0.0.1:5000', key: KEY})
  })

  it('strips only its entries after a user edit and restores the replaced model_provider', () => {
    const bound = bindCodexConfig(toml, '/c', URL, KEY) + '\r\n[profiles.x]\r\nmodel = "o3"\r\n'
    const {texts, notes} = binderOf('codex').strip([bound], [toml])
    expect(texts[0]).toBe(toml + '\r\n[profiles.x]\r\nmodel = "o3"\r\n')
    expect(notes).toEqual(['config.toml model_provider = "openai" restored'])
  })

  it('refuses broken TOML with exit 3 and the parser message', () => {
    expect(() => bindCodexConfig('model = \n[x', '/c/config.toml', URL, KEY)).toThrow(
      expect.objectContaining({
        exitCode: 3,
        message: expect.stringContaining('/c/config.toml does not parse'),
      }),
    )
  })

  it('refuses a layout whose edit would change other settings (multi-line array of arrays)', () => {
    // a line inside a top-level array starts with "[": not a table header, but a naive edit thinks so
    const tricky = 'matrix = [\n[1, 2],\n]\n'
    expect(() => bindCodexConfig(tricky, '/c', URL, KEY)).toThrow(
      expect.objectContaining({exitCode: 3, code: 'config_unsupported'}),
    )
  })
})

describe('Gemini .env', () => {
  it('replaces the last definition in place (export kept) and appends missing keys', () => {
    const text = '# keys\nexport GEMINI_API_KEY="old" # mine\nOTHER=1'
    let next = setEnvValue(text, 'GEMINI_API_KEY', KEY)
    next = setEnvValue(next, 'GOOGLE_GEMINI_BASE_URL', URL)
    expect(next).toBe(`# keys\nexport GEMINI_API_KEY=${KEY}\nOTHER=1\nGOOGLE_GEMINI_BASE_URL=${URL}\n`)
    expect(getEnvValue(text, 'GEMINI_API_KEY')).toBe('old')
    expect(setEnvLine(next, 'GOOGLE_GEMINI_BASE_URL', undefined)).toBe(
      `# keys\nexport GEMINI_API_KEY=${KEY}\nOTHER=1\n`,
    )
  })

  it('binds .env and settings.json, and strips back to the user values', () => {
    const gemini = binderOf('gemini-cli')
    const paths = gemini.files(agentHome('gemini-cli', env))
    expect(paths).toEqual(['/home/u/.gemini/settings.json', '/home/u/.gemini/.env'])
    const originals = [
      '{"security": {"auth": {"selectedType": "oauth-personal"}}}\n',
      'GEMINI_API_KEY=mine\n',
    ]
    const bound = gemini.bind(originals, paths, URL, KEY)
    expect(gemini.target(bound)).toEqual({baseUrl: URL, key: KEY})
    expect(getJsonString(bound[0], ['security', 'auth', 'selectedType'])).toBe('gemini-api-key')
    const edited = [bound[0], bound[1] + 'MINE=2\n']
    const {texts} = gemini.strip(edited, originals)
    expect(texts).toEqual([originals[0], 'GEMINI_API_KEY=mine\nMINE=2\n'])
  })
})

describe('Claude Code settings.json', () => {
  it('takes a vendor ANTHROPIC_API_KEY out while bound and puts it back on strip', () => {
    const claude = binderOf('claude-code')
    const original = '{"env": {"ANTHROPIC_API_KEY": "sk-ant-mine", "X": "1"}}\n'
    const [bound] = claude.bind([original], ['/s.json'], URL, KEY)
    expect(JSON.parse(bound).env).toEqual({X: '1', ANTHROPIC_BASE_URL: URL, ANTHROPIC_AUTH_TOKEN: KEY})
    const edited = bound.replace('"X": "1"', '"X": "2"')
    const {texts, notes} = claude.strip([edited], [original])
    expect(JSON.parse(texts[0]!).env).toEqual({X: '2', ANTHROPIC_API_KEY: 'sk-ant-mine'})
    expect(notes).toEqual(['settings.json env.ANTHROPIC_API_KEY restored to its previous value'])
  })

  it('creates env in a new file and strips it away again', () => {
    const claude = binderOf('claude-code')
    const [text] = claude.bind([null], ['/s.json'], URL, KEY)
    expect(JSON.parse(text)).toEqual({env: {ANTHROPIC_BASE_URL: URL, ANTHROPIC_AUTH_TOKEN: KEY}})
    const stripped = claude.strip([text.replace('{', '{\n  "mine": true,')], ['{}\n'])
    expect(JSON.parse(stripped.texts[0]!)).toEqual({mine: true})
  })
})
