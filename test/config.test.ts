import {statSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'

import {json, runCli, tempHome} from './helpers/cli.js'

describe('gwctl config', () => {
  let cleanup: () => void = () => {}
  afterEach(() => cleanup())

  it('stores settings in a 0600 file and masks the API key unless --reveal', async () => {
    const t = tempHome()
    cleanup = t.cleanup
    const set = await runCli(['config', 'set', 'api-key', 'sk-secret-value-123'], {home: t.home})
    expect(set.exitCode).toBe(0)
    expect(set.stdout).not.toContain('sk-secret-value-123')
    expect(statSync(join(t.home, 'settings.json')).mode & 0o777).toBe(0o600)

    const get = await runCli(['config', 'get', 'api-key'], {home: t.home})
    expect(get.stdout.trim()).toBe('sk-s…****')
    const reveal = await runCli(['config', 'get', 'api-key', '--reveal'], {home: t.home})
    expect(reveal.stdout.trim()).toBe('sk-secret-value-123')

    const list = json(await runCli(['config', 'list', '--json'], {home: t.home}))
    const apiKey = list.settings.find((s: {key: string}) => s.key === 'api-key')
    expect(apiKey).toMatchObject({value: 'sk-s…****', source: 'settings'})
    expect(JSON.stringify(list)).not.toContain('sk-secret-value-123')
  })

  it('lets the environment override the settings file', async () => {
    const t = tempHome()
    cleanup = t.cleanup
    await runCli(['config', 'set', 'base-url', 'http://127.0.0.1:1/api/v1'], {home: t.home})
    const r = await runCli(['config', 'get', 'base-url', '--json'], {
      home: t.home,
      env: {GWCTL_BASE_URL: 'http://127.0.0.1:2/api/v1'},
    })
    expect(json(r)).toMatchObject({value: 'http://127.0.0.1:2/api/v1', source: 'env'})
  })

  it('refuses unknown keys and bad values with exit 2, and unset keys with exit 7', async () => {
    const t = tempHome()
    cleanup = t.cleanup
    const unknown = await runCli(['config', 'set', 'colour', 'red', '--json'], {home: t.home})
    expect(unknown.exitCode).toBe(2)
    expect(json(unknown).error.code).toBe('unknown_setting')
    const bad = await runCli(['config', 'set', 'base-url', 'ftp://x'], {home: t.home})
    expect(bad.exitCode).toBe(2)
    expect(bad.stderr).toContain('must be an http(s) URL')
    const userinfo = await runCli(['config', 'set', 'base-url', 'https://u:sk-in-url@h/api/v1'], {
      home: t.home,
    })
    expect(userinfo.exitCode).toBe(2)
    expect(userinfo.stderr).toContain('must not carry credentials')
    expect(userinfo.stdout + userinfo.stderr).not.toContain('sk-in-url')
    const missing = await runCli(['config', 'get', 'base-url'], {home: t.home})
    expect(missing.exitCode).toBe(7)
    const removed = await runCli(['config', 'unset', 'base-url', '--json'], {home: t.home})
    expect(json(removed)).toEqual({key: 'base-url', removed: false})
  })
})
