/** Settings as users see them: effective value, where it comes from, secrets masked. */
import type {SettingKey, SettingSpec} from '../store/settings.js'
import {SETTINGS, getSetting, settingSource} from '../store/settings.js'
import {maskSecret} from '../core/output.js'

export interface SettingView {
  key: SettingKey
  value: string | null
  source: 'env' | 'settings' | 'unset'
  env?: string
  description: string
}

/** One setting for display; a secret is masked unless `reveal`. */
export function viewSetting(key: SettingKey, reveal = false): SettingView {
  const spec: SettingSpec = SETTINGS[key]
  const raw = getSetting(key)
  const value = raw === undefined ? null : spec.secret && !reveal ? maskSecret(raw) : raw
  return {key, value, source: settingSource(key), env: spec.env, description: spec.description}
}

/** Every known setting for display. */
export function viewSettings(reveal = false): SettingView[] {
  return (Object.keys(SETTINGS) as SettingKey[]).map((key) => viewSetting(key, reveal))
}
