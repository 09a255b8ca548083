import {readFileSync, statSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {tempHome} from '../../test/helpers/cli.js'
import {
  allStoredSettings,
  getSetting,
  getStoredSetting,
  setSetting,
  settingsPath,
  unsetSetting,
} from './settings.js'

let home: {home: string; cleanup: () => void}
const saved = {home: process.env.GWCTL_HOME, port: process.env.GWCTL_GATEWAY_PORT}

beforeEach(() => {
  home = tempHome()
  process.env.GWCTL_HOME = home.home
  delete process.env.GWCTL_GATEWAY_PORT
})
afterEach(() => {
  process.env.GWCTL_HOME = saved.home
  if (saved.port === undefined) delete process.env.GWCTL_GATEWAY_PORT
  else process.env.GWCTL_GATEWAY_PORT = saved.port
  home.cleanup()
})

describe('settings file', () => {
  it('stores flat keys as one private JSON object, atomically replaced, and removes them', () => {
    expect(getStoredSetting('gateway.port')).toBeUndefined()
    setSetting('gateway.port', '5001')
    setSetting('chat.model', 'sim-mini')
    expect(settingsPath()).toBe(join(home.home, 'settings.json'))
    expect(JSON.parse(readFileSync(settingsPath(), 'utf8'))).toEqual({
      'gateway.port': '5001',
      'chat.model': 'sim-mini',
    })
    expect(statSync(settingsPath()).mode & 0o777).toBe(0o600)
    expect(getSetting('gateway.port')).toBe('5001')
    process.env.GWCTL_GATEWAY_PORT = '6002'
    expect(getSetting('gateway.port')).toBe('6002')
    expect(unsetSetting('gateway.port')).toBe(true)
    expect(unsetSetting('gateway.port')).toBe(false)
    expect(allStoredSettings()).toEqual({'chat.model': 'sim-mini'})
  })

  it('refuses a settings file that is not a JSON object with a config error naming the fix', () => {
    writeFileSync(join(home.home, 'settings.json'), '{"gateway.port": ', {mode: 0o600})
    expect(() => getStoredSetting('gateway.port')).toThrow(
      expect.objectContaining({code: 'settings_unreadable', exitCode: 3}),
    )
    writeFileSync(join(home.home, 'settings.json'), '[1]')
    expect(() => allStoredSettings()).toThrow(/not a JSON object/)
  })
})
