/**
 * How each coding agent is pointed at the gateway for one process only (`gwctl run`): its own
 * environment variables and command-line overrides, never a file of the user's. What each agent
 * honours, and over what:
 *
 * - Claude Code: `ANTHROPIC_BASE_URL` and `ANTHROPIC_AUTH_TOKEN` (sent as `Authorization:
 *   Bearer`). The user's `ANTHROPIC_API_KEY` is left out of the child's environment: with both,
 *   Claude Code would ask which to use, and a vendor key has no business on the gateway. Claude
 *   Code applies its settings' `env` block over the environment, so a settings.json bound by
 *   `gwctl agents enable` keeps its own URL and key (the run then uses that binding's key).
 * - Codex: `-c` overrides, which win over config.toml: `model_provider` set to a provider table
 *   of its own (`model_providers.gwctl_run`: the gateway's `/v1`, `wire_api = "responses"`, the
 *   key read from `env_key`, a variable only the child has). The key never appears in argv (which
 *   every local user can read in `ps`).
 * - Gemini CLI: `GOOGLE_GEMINI_BASE_URL` and `GEMINI_API_KEY` (the environment wins over its
 *   `.env` files). It takes its auth type from settings only (`security.auth.selectedType`), and
 *   with a base URL but no such setting it picks the type "gateway", which it then refuses
 *   (exit 41, AGENT-CLIS.md). Its system settings could override the user's, but it reads them
 *   only from root-owned files. So a run needs the user's or the workspace's settings to select
 *   "gemini-api-key" (as `gwctl agents enable gemini-cli` does); otherwise it is refused with
 *   what to change, rather than sent to Google's servers with the user's own login.
 *   (gemini-cli `config/settings.ts` loadSettings, `config/auth.ts` getAuthTypeFromEnv and
 *   validateAuthMethod, `validateNonInteractiveAuth.ts`, `config/environment.ts` loadEnvironment.)
 */
import {readFileSync} from 'node:fs'
import {dirname, join, resolve} from 'node:path'

import {ConfigError} from '../core/errors.js'

/** The variable that carries the gateway key to Codex (named by `env_key`). */
export const CODEX_KEY_VARIABLE = 'GWCTL_GATEWAY_KEY'
/** The provider id of a run in Codex's overrides (bindings use `gwctl`). */
export const CODEX_RUN_PROVIDER = 'gwctl_run'

/** The agents `gwctl run` starts. */
export type RunTool = 'claude-code' | 'codex' | 'gemini-cli'

/** The executable each agent installs (found on PATH). */
export const AGENT_EXECUTABLE: Record<RunTool, string> = {
  'claude-code': 'claude',
  codex: 'codex',
  'gemini-cli': 'gemini',
}

export interface RunOverrides {
  /** Variables to set in the child's environment. */
  set: Record<string, string>
  /** Variables to remove from it. */
  unset: string[]
  /** Arguments put before the user's. */
  args: string[]
}

export interface OverrideInput {
  /** The gateway's origin, `http://127.0.0.1:PORT`. */
  origin: string
  key: string
  /** Gemini CLI: its user settings file, and the folder it runs in (the workspace settings). */
  geminiSettings?: {userFile: string; cwd: string; home: string}
}

/** JSON with `//` and block comments removed (Gemini's settings allow them), strings kept. */
function stripJsonComments(text: string): string {
  return text.replace(/("(?:[^"\\]|\\.)*")|\/\/[^\n]*|\/\*[\s\S]*?\*\//g, (m, str?: string) => str ?? '')
}

/** `security.auth.selectedType` of a Gemini settings file (undefined: none, or no file). */
function selectedType(path: string): string | undefined {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch {
    return undefined
  }
  try {
    const settings = JSON.parse(stripJsonComments(text)) as {security?: {auth?: {selectedType?: unknown}}}
    const type = settings?.security?.auth?.selectedType
    return typeof type === 'string' ? type : undefined
  } catch {
    return undefined // Gemini CLI itself reports a settings file that does not parse
  }
}

/**
 * Refuses (exit 3) a Gemini CLI whose settings do not select API-key auth: the workspace's
 * `.gemini/settings.json` (not when the folder is the home) wins over the user's.
 */
export function checkGeminiAuth(settings: {userFile: string; cwd: string; home: string}): void {
  const workspaceFile = join(settings.cwd, '.gemini', 'settings.json')
  const inHome = resolve(settings.cwd) === resolve(settings.home)
  const workspace = inHome ? undefined : selectedType(workspaceFile)
  const type = workspace ?? selectedType(settings.userFile)
  if (type === 'gemini-api-key') return
  const file = workspace !== undefined ? workspaceFile : settings.userFile
  throw new ConfigError(
    `Gemini CLI takes its auth type from its settings only, and ${type === undefined ? `${settings.userFile} selects none` : `${file} selects "${type}"`}: a run cannot point it at the gateway without changing that file.`,
    {
      code: 'agent_auth_setting',
      hint: `Bind it with \`gwctl agents enable gemini-cli\` (undone exactly by \`agents disable\`), or set security.auth.selectedType to "gemini-api-key" in ${file}.`,
    },
  )
}

/** Gemini CLI's system settings file (0.61.0 `getSystemSettingsPath`), which ranks over all others. */
function geminiSystemSettingsPath(env: NodeJS.ProcessEnv): string {
  if (env.GEMINI_CLI_SYSTEM_SETTINGS_PATH) return env.GEMINI_CLI_SYSTEM_SETTINGS_PATH
  if (process.platform === 'darwin') return '/Library/Application Support/GeminiCli/settings.json'
  if (process.platform === 'win32') return 'C:\\ProgramData\\gemini-cli\\settings.json'
  return '/etc/gemini-cli/settings.json'
}

/**
 * Gemini CLI's system defaults file (`GEMINI_CLI_SYSTEM_DEFAULTS_PATH`, else `system-defaults.json`
 * beside the system settings): the lowest of its settings, under the user's and the project's.
 */
export function geminiSystemDefaultsPath(env: NodeJS.ProcessEnv): string {
  return (
    env.GEMINI_CLI_SYSTEM_DEFAULTS_PATH ||
    join(dirname(geminiSystemSettingsPath(env)), 'system-defaults.json')
  )
}

/** A Gemini CLI settings file: null when there is none, undefined when it is no JSON object. */
function geminiSettingsFile(path: string): Record<string, unknown> | null | undefined {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch {
    return null
  }
  try {
    const settings: unknown = JSON.parse(stripJsonComments(text))
    return settings && typeof settings === 'object' && !Array.isArray(settings)
      ? (settings as Record<string, unknown>)
      : undefined
  } catch {
    return undefined
  }
}

/**
 * The model Gemini CLI runs with, as it chooses it: its `-m`/`--model` argument, else
 * `GEMINI_MODEL`, else `model.name` in its settings (the system's over the project's over the
 * user's over the system defaults'); undefined when none names one (its default).
 */
export function geminiCliModel(
  args: readonly string[],
  settings: {userFile: string; cwd: string; env: NodeJS.ProcessEnv},
): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if ((arg === '-m' || arg === '--model') && i + 1 < args.length) return args[i + 1]
    if (arg.startsWith('--model=')) return arg.slice('--model='.length)
  }
  if (settings.env.GEMINI_MODEL) return settings.env.GEMINI_MODEL
  for (const path of [
    geminiSystemSettingsPath(settings.env),
    join(settings.cwd, '.gemini', 'settings.json'),
    settings.userFile,
    geminiSystemDefaultsPath(settings.env),
  ]) {
    const model = geminiSettingsFile(path)?.model as Record<string, unknown> | undefined
    if (model && typeof model === 'object' && typeof model.name === 'string') return model.name
  }
  return undefined
}

/**
 * The system defaults Gemini CLI runs with when it is to compress at `threshold`
 * (`model.compressionThreshold`): the user's own defaults file with that key added, or that key
 * alone. Undefined when a settings file chooses a threshold already (the user's, the project's
 * `.gemini/settings.json`, the system's, the defaults'), or the defaults file there does not parse
 * (Gemini CLI reports it; a run does not put it aside).
 */
export function geminiWindowDefaults(
  threshold: number,
  settings: {userFile: string; cwd: string; env: NodeJS.ProcessEnv},
): Record<string, unknown> | undefined {
  const defaults = geminiSettingsFile(geminiSystemDefaultsPath(settings.env))
  if (defaults === undefined) return undefined
  const files = [
    settings.userFile,
    join(settings.cwd, '.gemini', 'settings.json'),
    geminiSystemSettingsPath(settings.env),
  ].map(geminiSettingsFile)
  const chooses = (file: Record<string, unknown> | null | undefined): boolean => {
    const model = file?.model as Record<string, unknown> | undefined
    return !!model && typeof model === 'object' && model.compressionThreshold !== undefined
  }
  if ([...files, defaults].some(chooses)) return undefined
  const model = defaults?.model && typeof defaults.model === 'object' ? defaults.model : {}
  return {...defaults, model: {...model, compressionThreshold: threshold}}
}

/** The variables of Claude Code's settings `env` that would send a run elsewhere. */
const CLAUDE_ROUTE_VARIABLES = ['ANTHROPIC_BASE_URL', 'ANTHROPIC_AUTH_TOKEN', 'ANTHROPIC_API_KEY']

/**
 * The Claude Code settings files of a run in `cwd` besides the user's (`<home>/settings.json`):
 * the project's `.claude/settings.json` and `.claude/settings.local.json`, which Claude Code
 * merges over the user's, `env` included.
 */
export function claudeProjectSettings(cwd: string): string[] {
  return [join(cwd, '.claude', 'settings.json'), join(cwd, '.claude', 'settings.local.json')]
}

/** A Claude Code settings file, parsed; undefined when there is none or it does not parse. */
function claudeSettings(path: string): Record<string, unknown> | undefined {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch {
    return undefined
  }
  try {
    const settings: unknown = JSON.parse(stripJsonComments(text))
    return settings && typeof settings === 'object' ? (settings as Record<string, unknown>) : undefined
  } catch {
    return undefined // Claude Code reports a settings file that does not parse itself
  }
}

/** Which of Claude Code's routing variables the settings file at `path` sets in its `env`. */
export function claudeRouteEntries(path: string): string[] {
  const env = claudeSettings(path)?.env as Record<string, unknown> | undefined
  return env && typeof env === 'object' ? CLAUDE_ROUTE_VARIABLES.filter((v) => env[v] !== undefined) : []
}

/**
 * Whether the settings file at `path` chooses the window Claude Code compacts to: the variable
 * `CLAUDE_CODE_AUTO_COMPACT_WINDOW` in its `env`, or `autoCompactWindow` (which `/autocompact`
 * writes), at the top or under a model.
 */
export function claudeSetsCompactWindow(path: string): boolean {
  const settings = claudeSettings(path)
  if (!settings) return false
  const env = settings.env as Record<string, unknown> | undefined
  if (env && typeof env === 'object' && env.CLAUDE_CODE_AUTO_COMPACT_WINDOW !== undefined) return true
  const holds = (value: unknown, depth: number): boolean =>
    !!value &&
    typeof value === 'object' &&
    depth < 4 &&
    Object.entries(value).some(([key, inner]) => key === 'autoCompactWindow' || holds(inner, depth + 1))
  return holds(settings, 0)
}

/** The overrides that route `tool` through the gateway at `origin` with `key`. */
export function runOverrides(tool: RunTool, input: OverrideInput): RunOverrides {
  const {origin, key} = input
  switch (tool) {
    case 'claude-code':
      return {
        set: {ANTHROPIC_BASE_URL: origin, ANTHROPIC_AUTH_TOKEN: key},
        unset: ['ANTHROPIC_API_KEY'],
        args: [],
      }
    case 'codex': {
      const p = `model_providers.${CODEX_RUN_PROVIDER}`
      return {
        set: {[CODEX_KEY_VARIABLE]: key},
        unset: [],
        args: [
          '-c',
          `model_provider="${CODEX_RUN_PROVIDER}"`,
          '-c',
          `${p}.name="gwctl run"`,
          '-c',
          `${p}.base_url="${origin}/v1"`,
          '-c',
          `${p}.env_key="${CODEX_KEY_VARIABLE}"`,
          '-c',
          `${p}.wire_api="responses"`,
        ],
      }
    }
    case 'gemini-cli':
      if (input.geminiSettings) checkGeminiAuth(input.geminiSettings)
      return {set: {GOOGLE_GEMINI_BASE_URL: origin, GEMINI_API_KEY: key}, unset: [], args: []}
  }
}
