/**
 * User settings, kept in `<home>/settings.json` (mode 0600): one flat JSON object of strings, read
 * with one `readFileSync` and written through temp file + fsync + rename. (It was `conf`, whose
 * import alone pulled ajv and a dozen modules into every command that reads the gateway port.)
 *
 * Keys are flat strings (`chat.model` is one key, not a nested object). Every key a user may set
 * is listed in {@link SETTINGS}; unknown keys are refused so typos do not go unnoticed.
 */
import {closeSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, writeSync} from 'node:fs'
import {join} from 'node:path'

import {ConfigError, UsageError} from '../core/errors.js'
import {closest} from '../core/suggest.js'
import {ensureHome} from './paths.js'

export interface SettingSpec {
  description: string
  /** Shown masked unless `--reveal`. */
  secret?: boolean
  /** Environment variable that overrides the stored value. */
  env?: string
  /** Returns an error message when the value is not acceptable. */
  validate?: (value: string) => string | undefined
}

const httpUrl = (value: string): string | undefined => {
  try {
    const url = new URL(value)
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http(s) URL'
    // it is shown in `config list`; the key belongs in the masked setting api-key
    if (url.username || url.password) return 'must not carry credentials (user:password@host); set api-key'
  } catch {
    return 'must be a URL, e.g. https://host/api/v1'
  }
  return undefined
}

/**
 * An API key is one token: a key of only whitespace (or with a space or line break in it, as
 * pasted from a file) is refused here instead of being sent and answered 401.
 */
export const apiKeyRule = (value: string): string | undefined =>
  value.trim() === ''
    ? 'is only whitespace'
    : /\s/.test(value)
      ? 'contains whitespace (a space, tab or line break); an API key is one word'
      : undefined

const positiveInt = (value: string): string | undefined =>
  /^[1-9]\d*$/.test(value) ? undefined : 'must be a positive integer'

const port = (value: string): string | undefined =>
  /^[1-9]\d*$/.test(value) && Number(value) <= 65535 ? undefined : 'must be a port number, 1-65535'

/** An OTLP/HTTP base URL: http(s), no credentials in it (they go to `telemetry.headers`). */
const otlpUrl = (value: string): string | undefined => {
  try {
    const url = new URL(value)
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      return 'must be an http(s) URL, e.g. http://127.0.0.1:4318'
    if (url.username || url.password)
      return 'must not carry credentials (user:password@host); set telemetry.headers'
  } catch {
    return 'must be a URL, e.g. http://127.0.0.1:4318'
  }
  return undefined
}

/** `name=value` pairs separated by commas, as OTEL_EXPORTER_OTLP_HEADERS. */
const otlpHeaders = (value: string): string | undefined => {
  for (const pair of value.split(',')) {
    if (pair.trim() === '') continue
    const eq = pair.indexOf('=')
    if (eq <= 0 || !/^[!#$%&'*+.^_`|~\w-]+$/.test(decodeURIComponentSafe(pair.slice(0, eq).trim())))
      return 'must be name=value pairs separated by commas, e.g. x-api-key=abc,x-team=ml'
  }
  return undefined
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}

/** Every setting gwctl knows. */
export const SETTINGS = {
  'base-url': {
    description: 'Base URL of the remote platform, ending in /api/v1.',
    env: 'GWCTL_BASE_URL',
    validate: httpUrl,
  },
  'api-key': {
    description: 'API key of the remote platform.',
    secret: true,
    env: 'GWCTL_API_KEY',
    validate: apiKeyRule,
  },
  'chat.model': {description: 'Default model of `gwctl chat`.', env: 'GWCTL_CHAT_MODEL'},
  'video.interval': {
    description: 'Default polling interval of video tasks, in seconds.',
    validate: positiveInt,
  },
  'employee.name': {description: 'Default employee name of `gwctl key issue`.'},
  'employee.contact': {description: 'Default employee contact (e-mail) of `gwctl key issue`.'},
  'employee.team': {description: 'Default employee team of `gwctl key issue`.'},
  'employee.role': {description: 'Default employee role of `gwctl key issue`.'},
  'gateway.port': {
    description: 'Port of the local gateway.',
    env: 'GWCTL_GATEWAY_PORT',
    validate: port,
  },
  'logs.retention-days': {description: 'Days the gateway keeps request logs.', validate: positiveInt},
  'history.threads': {
    description: 'Most threads a full history rescan reads with (default: every core, up to 9).',
    env: 'GWCTL_HISTORY_THREADS',
    validate: positiveInt,
  },
  'telemetry.otlp-endpoint': {
    description:
      'OTLP/HTTP collector base URL the gateway exports spans and metrics to (/v1/traces, /v1/metrics are added); unset: no export.',
    env: 'OTEL_EXPORTER_OTLP_ENDPOINT',
    validate: otlpUrl,
  },
  'telemetry.headers': {
    description: 'Headers sent to the OTLP collector, `name=value,name2=value2` (often an API key).',
    secret: true,
    env: 'OTEL_EXPORTER_OTLP_HEADERS',
    validate: otlpHeaders,
  },
  'telemetry.service-name': {
    description: 'service.name of the exported spans and metrics (default gwctl-gateway).',
    env: 'OTEL_SERVICE_NAME',
  },
} satisfies Record<string, SettingSpec>

export type SettingKey = keyof typeof SETTINGS

function didYouMean(key: string): string {
  const near = closest(key, Object.keys(SETTINGS))
  return near ? `Did you mean "${near}"? ` : ''
}

/** Throws a usage error unless `key` is a known setting. */
export function assertSettingKey(key: string): asserts key is SettingKey {
  if (!(key in SETTINGS)) {
    throw new UsageError(`Unknown setting "${key}".`, {
      code: 'unknown_setting',
      hint: `${didYouMean(key)}Known settings: ${Object.keys(SETTINGS).join(', ')}.`,
    })
  }
}

function path(): string {
  return join(ensureHome(), 'settings.json')
}

function unreadable(file: string, error: unknown): ConfigError {
  return new ConfigError(`The settings file in ${file} cannot be read: ${(error as Error).message}`, {
    code: 'settings_unreadable',
    hint: 'Fix or delete settings.json, then run `gwctl config list`.',
    cause: error,
  })
}

/** The stored settings ({} when the file does not exist yet). */
function read(): Record<string, string> {
  const file = path()
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw unreadable(file, error)
    // A read never creates the file (an empty file left behind by reads used to make every later
    // `doctor` fail); `config set` writes it.
    return {}
  }
  let data: unknown
  try {
    data = text.trim() === '' ? {} : JSON.parse(text)
  } catch (error) {
    throw unreadable(file, error)
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data))
    throw unreadable(file, new Error('not a JSON object'))
  return data as Record<string, string>
}

/** Writes the settings: temp file (0600 from the first byte) + fsync + rename. */
function write(data: Record<string, string>): void {
  const file = path()
  const temp = `${file}.${process.pid}.tmp`
  try {
    const fd = openSync(temp, 'w', 0o600)
    try {
      writeSync(fd, `${JSON.stringify(data, undefined, '\t')}\n`)
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
    renameSync(temp, file)
  } catch (error) {
    rmSync(temp, {force: true})
    throw new ConfigError(`The settings file ${file} cannot be written: ${(error as Error).message}`, {
      code: 'settings_unwritable',
      hint: `Check the permissions of ${file} and its folder.`,
      cause: error,
    })
  }
}

/** Path of the settings file. */
export function settingsPath(): string {
  return path()
}

/** The stored value of a setting (ignores the environment). */
export function getStoredSetting(key: SettingKey): string | undefined {
  const value = read()[key]
  return typeof value === 'string' ? value : undefined
}

/** The effective value: environment variable first, then the stored value. */
export function getSetting(key: SettingKey): string | undefined {
  const spec: SettingSpec = SETTINGS[key]
  if (spec.env && process.env[spec.env]) return process.env[spec.env]
  return getStoredSetting(key)
}

/**
 * The effective value, checked with the setting's rule wherever it comes from: an environment
 * variable or a hand-edited settings file bypasses `config set`'s check, so a bad value is a
 * configuration error (exit 3) that names where it came from and how to fix it.
 */
export function getCheckedSetting(key: SettingKey): string | undefined {
  const spec: SettingSpec = SETTINGS[key]
  const value = getSetting(key)
  if (value === undefined) return undefined
  const problem = spec.validate?.(value)
  if (!problem) return value
  const fromEnv = settingSource(key) === 'env'
  const where = fromEnv ? `${spec.env}` : `Setting "${key}" in ${settingsPath()}`
  throw new ConfigError(`${fromEnv ? `${where} (setting "${key}")` : where} ${problem}.`, {
    code: `invalid_${key.replace(/[.-]/g, '_')}`,
    hint: fromEnv
      ? `Fix ${spec.env}, or unset it and run \`gwctl config set ${key} <VALUE>\`.`
      : `Run \`gwctl config set ${key} <VALUE>\` (\`gwctl config list\` shows where each value comes from).`,
  })
}

/** Where the effective value comes from. */
export function settingSource(key: SettingKey): 'env' | 'settings' | 'unset' {
  const spec: SettingSpec = SETTINGS[key]
  if (spec.env && process.env[spec.env]) return 'env'
  return getStoredSetting(key) === undefined ? 'unset' : 'settings'
}

/** Validates and stores a setting. */
export function setSetting(key: SettingKey, value: string): void {
  const spec: SettingSpec = SETTINGS[key]
  if (value.trim() === '') {
    // An empty value would read as "not set" everywhere, yet show as stored.
    throw new UsageError(`Setting "${key}" cannot be empty.`, {
      code: 'invalid_setting',
      hint: `To remove it: gwctl config unset ${key}`,
    })
  }
  const problem = spec.validate?.(value)
  if (problem) throw new UsageError(`Setting "${key}" ${problem}.`, {code: 'invalid_setting'})
  write({...read(), [key]: value})
}

/** Removes a stored setting; returns whether it was set. */
export function unsetSetting(key: SettingKey): boolean {
  const data = read()
  if (!(key in data)) return false
  delete data[key]
  write(data)
  return true
}

/** Every stored setting. */
export function allStoredSettings(): Record<string, string> {
  return read()
}
