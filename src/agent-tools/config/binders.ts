/**
 * What route binding writes into each agent's own config, and how it is taken out again.
 *
 * - Claude Code: `settings.json` `env.ANTHROPIC_BASE_URL` and `env.ANTHROPIC_AUTH_TOKEN`
 *   (Claude Code applies its settings' `env` block to its process), and `env.CLAUDE_CODE_AUTO_MODE_SERVER
 *   = "0"` while its policy does not start at Anthropic's API ({@link withAutoMode}).
 * - Codex: `config.toml` `model_provider = "gwctl"` and a `[model_providers.gwctl]` table with
 *   the gateway's `/v1`, `wire_api = "responses"` and the key as `experimental_bearer_token`
 *   (Codex sends it as `Authorization: Bearer`, no variable to export).
 * - Gemini CLI: `~/.gemini/.env` `GOOGLE_GEMINI_BASE_URL` and `GEMINI_API_KEY`, and
 *   `settings.json` `security.auth.selectedType = "gemini-api-key"` (without it the base URL
 *   selects an auth type the CLI itself refuses).
 * - OpenCode: its config (`opencode.json[c]`) `provider.<id>.options.baseURL` and `.apiKey` for
 *   the provider of its chosen `model` (`<provider>/<model>`), so that model keeps working: the
 *   gateway's `/v1` for `anthropic` (messages), `openai` (responses) and any OpenAI-compatible
 *   provider (chat), `/v1beta` for `google` (gemini). See `opencodeBinding`.
 * - Qwen Code: `settings.json` `env.OPENAI_BASE_URL` (the gateway's `/v1`), `env.OPENAI_API_KEY`
 *   and `security.auth.selectedType = "openai"` (chat completions); its `env` block is applied to
 *   its process, below the real environment and its `.env` files.
 */
import type {AgentHome} from '../agent-homes.js'
import type {AgentTool} from '../../store/history-rows.js'
import type {Family} from '../../store/schema.js'
import {bindCodexConfig, codexTarget, gwctlSectionText, modelProviderLine, parseToml} from './codex-toml.js'
import {setGwctlSection, setModelProviderLine} from './codex-toml.js'
import {getEnvLine, getEnvValue, setEnvLine, setEnvValue} from './dotenv-file.js'
import {
  checkJsonObject,
  getJsonKeys,
  getJsonString,
  getJsonValue,
  hasJsonValue,
  isEmptyJsonObject,
  setJsonValue,
} from './json-settings.js'

/** Where an agent's config sends its model traffic (what gwctl reads back). */
export interface BindingTarget {
  baseUrl?: string
  key?: string
}

/** The route-binding logic of one tool, over whole file texts (null: the file does not exist). */
export interface ToolBinder {
  tool: AgentTool
  /** The files this binding changes. */
  files(home: AgentHome): string[]
  /** Throws exit 3 when a file does not parse (nothing is written then). */
  check(texts: Array<string | null>, paths: string[]): void
  /**
   * The texts that point the agent at `baseUrl` with `key` (and, for Claude Code with
   * `extras.statusline`, its `statusLine` at `gwctl statusline`).
   */
  bind(
    texts: Array<string | null>,
    paths: string[],
    baseUrl: string,
    key: string,
    extras?: BindExtras,
  ): string[]
  /** Where the files point now. */
  target(texts: Array<string | null>): BindingTarget
  /** The family the binding routes through, when the config chooses it (OpenCode). */
  family?(texts: Array<string | null>): Family
  /** Claude Code: its settings' text with auto mode classified locally or not ({@link withAutoMode}). */
  withAutoMode?(text: string, original: string | null, local: boolean): string
  /** Claude Code: whose `statusLine` the settings hold (`gwctl statusline`, the user's, none). */
  statusline?(texts: Array<string | null>): 'gwctl' | 'user' | 'none'
  /**
   * Removes only gwctl's entries from files the user changed since, putting back the values they
   * replaced in `originals`. Returns the new texts and a description of each restored value.
   */
  strip(
    texts: Array<string | null>,
    originals: Array<string | null>,
  ): {texts: Array<string | null>; notes: string[]}
}

/** What `agents enable` adds beside the route (Claude Code only). */
export interface BindExtras {
  /** Write Claude Code's `statusLine`; a user's own is kept unless `replace`. */
  statusline?: {replace?: boolean}
  /**
   * Whether Claude Code should classify its auto mode's actions locally (the bound policy's
   * Messages route does not start at Anthropic's API: ../../services/auto-mode.ts), and its
   * settings as they were before binding (a value of the user's own there stands).
   */
  autoMode?: {local: boolean; original: string | null}
}

/** Claude Code's own switch of auto mode to its local classifier (2.1.278), in its settings. */
export const AUTO_MODE_KEYS = ['env', 'CLAUDE_CODE_AUTO_MODE_SERVER']

/**
 * Claude Code's settings `text` with gwctl's `env.CLAUDE_CODE_AUTO_MODE_SERVER: "0"` when `local`,
 * without it when not. Only where the settings before binding (`original`) had no value of their
 * own, and a value other than gwctl's `"0"` set while bound stays: the user's choice either way.
 */
export function withAutoMode(text: string, original: string | null, local: boolean): string {
  if (hasJsonValue(original, AUTO_MODE_KEYS)) return text
  const now = getJsonValue(text, AUTO_MODE_KEYS)
  if (local) return now === undefined ? setJsonValue(text, AUTO_MODE_KEYS, '0') : text
  return now === '0' ? setJsonValue(text, AUTO_MODE_KEYS, undefined) : text
}

/** The command gwctl's `statusLine` runs. */
export const STATUSLINE_COMMAND = 'gwctl statusline'

/** True when `text`'s `statusLine` is the one gwctl writes. */
export function hasGwctlStatusline(text: string | null): boolean {
  const value = getJsonValue(text, ['statusLine']) as {command?: unknown} | undefined
  return typeof value === 'object' && value !== null && value.command === STATUSLINE_COMMAND
}

/** A JSON entry gwctl sets while bound (`value` undefined: removed while bound). */
type JsonEntry = {keys: string[]; value: (baseUrl: string, key: string) => string | undefined}

function applyJson(text: string, entries: JsonEntry[], baseUrl: string, key: string): string {
  let next = text
  for (const e of entries) {
    const value = e.value(baseUrl, key)
    if (value !== undefined || hasJsonValue(next, e.keys)) next = setJsonValue(next, e.keys, value)
  }
  return next
}

function stripJson(
  text: string | null,
  original: string | null,
  entries: JsonEntry[],
  label: string,
  notes: string[],
): string | null {
  if (text === null) return null
  let next = text
  for (const e of entries) {
    const old = getJsonString(original, e.keys)
    if (old !== undefined) {
      next = setJsonValue(next, e.keys, old)
      notes.push(`${label} ${e.keys.join('.')} restored to its previous value`)
    } else if (hasJsonValue(next, e.keys)) {
      next = setJsonValue(next, e.keys, undefined)
    }
    // a parent object gwctl created and that is empty now goes too
    for (let depth = e.keys.length - 1; depth > 0; depth--) {
      const parent = e.keys.slice(0, depth)
      if (!hasJsonValue(original, parent) && isEmptyJsonObject(next, parent))
        next = setJsonValue(next, parent, undefined)
    }
  }
  return next
}

const CLAUDE_ENTRIES: JsonEntry[] = [
  {keys: ['env', 'ANTHROPIC_BASE_URL'], value: (url) => url},
  {keys: ['env', 'ANTHROPIC_AUTH_TOKEN'], value: (_url, key) => key},
  // a vendor key beside the token would be sent as x-api-key: out while bound, back on disable
  {keys: ['env', 'ANTHROPIC_API_KEY'], value: () => undefined},
]

const claudeBinder: ToolBinder = {
  tool: 'claude-code',
  files: (home) => [home.configFile],
  check(texts, paths) {
    if (texts[0] !== null) checkJsonObject(texts[0], paths[0])
  },
  bind(texts, paths, baseUrl, key, extras) {
    this.check(texts, paths)
    let text = applyJson(texts[0] ?? '', CLAUDE_ENTRIES, baseUrl, key)
    if (extras?.autoMode) text = withAutoMode(text, extras.autoMode.original, extras.autoMode.local)
    // the user's own statusLine stays unless --replace (the original keeps it for disable)
    if (extras?.statusline && (extras.statusline.replace || !hasJsonValue(text, ['statusLine'])))
      text = setJsonValue(text, ['statusLine'], {type: 'command', command: STATUSLINE_COMMAND, padding: 0})
    return [text]
  },
  withAutoMode,
  statusline(texts) {
    return hasGwctlStatusline(texts[0]) ? 'gwctl' : hasJsonValue(texts[0], ['statusLine']) ? 'user' : 'none'
  },
  target(texts) {
    return {
      baseUrl: getJsonString(texts[0], ['env', 'ANTHROPIC_BASE_URL']),
      key: getJsonString(texts[0], ['env', 'ANTHROPIC_AUTH_TOKEN']),
    }
  },
  strip(texts, originals) {
    const notes: string[] = []
    // gwctl's auto-mode switch goes first (stripJson then removes an `env` it left empty)
    const own = texts[0] === null ? null : withAutoMode(texts[0], originals[0], false)
    let text = stripJson(own, originals[0], CLAUDE_ENTRIES, 'settings.json', notes)
    // gwctl's statusLine goes; the user's from before comes back (an object: not a JsonEntry)
    if (text !== null && hasGwctlStatusline(text)) {
      const old = hasGwctlStatusline(originals[0]) ? undefined : getJsonValue(originals[0], ['statusLine'])
      text = setJsonValue(text, ['statusLine'], old)
      if (old !== undefined) notes.push('settings.json statusLine restored to its previous value')
    }
    return {texts: [text], notes}
  },
}

const codexBinder: ToolBinder = {
  tool: 'codex',
  files: (home) => [home.configFile],
  check(texts, paths) {
    if (texts[0] !== null) parseToml(texts[0], paths[0])
  },
  bind(texts, paths, baseUrl, key) {
    return [bindCodexConfig(texts[0], paths[0], baseUrl, key)]
  },
  target(texts) {
    return codexTarget(texts[0])
  },
  strip(texts, originals) {
    const notes: string[] = []
    if (texts[0] === null) return {texts: [null], notes}
    let next = texts[0]
    const oldLine = modelProviderLine(originals[0])
    const line = modelProviderLine(next)
    if (line !== undefined && /=\s*["']gwctl["']/.test(line)) {
      next = setModelProviderLine(next, oldLine)
      if (oldLine !== undefined) notes.push(`config.toml ${oldLine.trim()} restored`)
    }
    next = setGwctlSection(next, gwctlSectionText(originals[0]))
    return {texts: [next], notes}
  },
}

const GEMINI_ENV_KEYS = ['GOOGLE_GEMINI_BASE_URL', 'GEMINI_API_KEY'] as const
const GEMINI_SETTINGS: JsonEntry[] = [
  {keys: ['security', 'auth', 'selectedType'], value: () => 'gemini-api-key'},
]

const geminiBinder: ToolBinder = {
  tool: 'gemini-cli',
  // settings.json first, .env second
  files: (home) => [home.configFile, home.extraConfigFiles[0]],
  check(texts, paths) {
    if (texts[0] !== null) checkJsonObject(texts[0], paths[0])
  },
  bind(texts, paths, baseUrl, key) {
    this.check(texts, paths)
    const settings = applyJson(texts[0] ?? '', GEMINI_SETTINGS, baseUrl, key)
    let env = texts[1] ?? ''
    env = setEnvValue(env, 'GOOGLE_GEMINI_BASE_URL', baseUrl)
    env = setEnvValue(env, 'GEMINI_API_KEY', key)
    return [settings, env]
  },
  target(texts) {
    return {
      baseUrl: getEnvValue(texts[1], 'GOOGLE_GEMINI_BASE_URL'),
      key: getEnvValue(texts[1], 'GEMINI_API_KEY'),
    }
  },
  strip(texts, originals) {
    const notes: string[] = []
    const settings = stripJson(texts[0], originals[0], GEMINI_SETTINGS, 'settings.json', notes)
    let env = texts[1]
    if (env !== null) {
      for (const k of GEMINI_ENV_KEYS) {
        const old = getEnvLine(originals[1], k)
        env = setEnvLine(env, k, old)
        if (old !== undefined) notes.push(`.env ${k} restored to its previous value`)
      }
    }
    return {texts: [settings, env], notes}
  },
}

/** The family and the base-URL path OpenCode's provider `id` speaks through the gateway. */
export function opencodeBinding(providerId: string): {family: Family; path: string} {
  switch (providerId) {
    case 'anthropic':
      return {family: 'messages', path: '/v1'}
    case 'openai':
      return {family: 'responses', path: '/v1'}
    case 'google':
      return {family: 'gemini', path: '/v1beta'}
    default:
      return {family: 'chat', path: '/v1'}
  }
}

/** The provider of OpenCode's chosen model (`model` = `<provider>/<model>`), `anthropic` when unset. */
export function opencodeProviderOf(text: string | null): string {
  const model = getJsonString(text, ['model'])
  const slash = model?.indexOf('/') ?? -1
  return model && slash > 0 ? model.slice(0, slash) : 'anthropic'
}

const opencodeEntries = (provider: string): JsonEntry[] => [
  {
    keys: ['provider', provider, 'options', 'baseURL'],
    value: (url) => url + opencodeBinding(provider).path,
  },
  {keys: ['provider', provider, 'options', 'apiKey'], value: (_url, key) => key},
]

/** The providers whose options point at a loopback gateway (what `strip` takes out). */
function opencodeBoundProviders(text: string | null): string[] {
  const providers = getJsonKeys(text, ['provider'])
  return providers.filter((p) =>
    /^http:\/\/127\.0\.0\.1:\d+\/v1(beta)?$/.test(
      getJsonString(text, ['provider', p, 'options', 'baseURL']) ?? '',
    ),
  )
}

const opencodeBinder: ToolBinder = {
  tool: 'opencode',
  files: (home) => [home.configFile],
  check(texts, paths) {
    if (texts[0] !== null) checkJsonObject(texts[0], paths[0])
  },
  bind(texts, paths, baseUrl, key) {
    this.check(texts, paths)
    const provider = opencodeProviderOf(texts[0])
    return [applyJson(texts[0] ?? '', opencodeEntries(provider), baseUrl, key)]
  },
  family: (texts) => opencodeBinding(opencodeProviderOf(texts[0])).family,
  target(texts) {
    const provider = opencodeProviderOf(texts[0])
    const url = getJsonString(texts[0], ['provider', provider, 'options', 'baseURL'])
    return {baseUrl: url, key: getJsonString(texts[0], ['provider', provider, 'options', 'apiKey'])}
  },
  strip(texts, originals) {
    const notes: string[] = []
    let next = texts[0]
    for (const provider of opencodeBoundProviders(next))
      next = stripJson(next, originals[0], opencodeEntries(provider), 'config', notes)
    return {texts: [next], notes}
  },
}

const QWEN_ENTRIES: JsonEntry[] = [
  {keys: ['security', 'auth', 'selectedType'], value: () => 'openai'},
  {keys: ['env', 'OPENAI_BASE_URL'], value: (url) => `${url}/v1`},
  {keys: ['env', 'OPENAI_API_KEY'], value: (_url, key) => key},
]

const qwenBinder: ToolBinder = {
  tool: 'qwen-code',
  files: (home) => [home.configFile],
  check(texts, paths) {
    if (texts[0] !== null) checkJsonObject(texts[0], paths[0])
  },
  bind(texts, paths, baseUrl, key) {
    this.check(texts, paths)
    return [applyJson(texts[0] ?? '', QWEN_ENTRIES, baseUrl, key)]
  },
  target(texts) {
    return {
      baseUrl: getJsonString(texts[0], ['env', 'OPENAI_BASE_URL']),
      key: getJsonString(texts[0], ['env', 'OPENAI_API_KEY']),
    }
  },
  strip(texts, originals) {
    const notes: string[] = []
    return {texts: [stripJson(texts[0], originals[0], QWEN_ENTRIES, 'settings.json', notes)], notes}
  },
}

/** The binder of `tool`. */
export function binderOf(tool: AgentTool): ToolBinder {
  switch (tool) {
    case 'claude-code':
      return claudeBinder
    case 'codex':
      return codexBinder
    case 'gemini-cli':
      return geminiBinder
    case 'opencode':
      return opencodeBinder
    case 'qwen-code':
      return qwenBinder
  }
}
