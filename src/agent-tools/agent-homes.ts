/**
 * Where each coding agent of this user keeps its configuration and its history, honouring the
 * same environment variables the agents themselves honour (../shared/PROTOCOLS.md A6,
 * ../shared/AGENT-CLIS.md). Pure path arithmetic: nothing here touches the disk, so discovery,
 * route binding, the history scanners and doctor all agree on one answer.
 */
import {existsSync} from 'node:fs'
import {homedir} from 'node:os'
import {join, resolve} from 'node:path'

import type {AgentTool} from '../store/history-rows.js'

/** The stable names of the agent tools gwctl knows. */
export const AGENT_TOOLS = [
  'claude-code',
  'codex',
  'gemini-cli',
  'opencode',
  'qwen-code',
] as const satisfies readonly AgentTool[]
/** Compile-time check: every {@link AgentTool} is in {@link AGENT_TOOLS}. */
const _everyTool: AgentTool extends (typeof AGENT_TOOLS)[number] ? true : never = true

/** A folder an agent tool may use, and where the answer came from (for doctor and errors). */
export interface AgentRoot {
  /** Absolute folder. */
  dir: string
  /** The variable that chose it (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`, ...) or `default`. */
  source: string
}

/** The locations of one agent tool. */
export interface AgentHome {
  tool: AgentTool
  /** Config roots, most important first (Claude Code may have several). */
  roots: AgentRoot[]
  /** The config file that route binding edits (in the first root). */
  configFile: string
  /** Further config files gwctl reads or writes (Gemini CLI's `.env`). */
  extraConfigFiles: string[]
  /** History folders to scan, in precedence order. */
  historyDirs: string[]
}

/** The user's home folder: `$HOME` when set (tests set it), else the OS answer. */
export function userHome(env: NodeJS.ProcessEnv = process.env): string {
  return env.HOME && env.HOME.trim() !== '' ? env.HOME : homedir()
}

function expand(path: string, env: NodeJS.ProcessEnv): string {
  const p = path.trim()
  if (p === '~') return userHome(env)
  if (p.startsWith('~/')) return join(userHome(env), p.slice(2))
  return resolve(p)
}

/**
 * Claude Code: `$CLAUDE_CONFIG_DIR` (a comma list; the first entry is the one Claude Code
 * writes to) or `~/.claude`. History is read, as ccusage does, from `projects/` under every root
 * plus `$XDG_CONFIG_HOME/claude` (default `~/.config/claude`) when no variable is set.
 */
export function claudeHome(env: NodeJS.ProcessEnv = process.env): AgentHome {
  const list = (env.CLAUDE_CONFIG_DIR ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
  const roots: AgentRoot[] =
    list.length > 0
      ? list.map((d) => ({dir: expand(d, env), source: 'CLAUDE_CONFIG_DIR'}))
      : [
          {dir: join(userHome(env), '.claude'), source: 'default'},
          {
            dir: join(
              env.XDG_CONFIG_HOME ? expand(env.XDG_CONFIG_HOME, env) : join(userHome(env), '.config'),
              'claude',
            ),
            source: env.XDG_CONFIG_HOME ? 'XDG_CONFIG_HOME' : 'default',
          },
        ]
  const unique = roots.filter((r, i) => roots.findIndex((o) => o.dir === r.dir) === i)
  return {
    tool: 'claude-code',
    roots: unique,
    configFile: join(unique[0].dir, 'settings.json'),
    extraConfigFiles: [],
    historyDirs: unique.map((r) => join(r.dir, 'projects')),
  }
}

/** Codex CLI: `$CODEX_HOME` or `~/.codex`; `sessions/` wins over `archived_sessions/`. */
export function codexHome(env: NodeJS.ProcessEnv = process.env): AgentHome {
  const root: AgentRoot = env.CODEX_HOME?.trim()
    ? {dir: expand(env.CODEX_HOME, env), source: 'CODEX_HOME'}
    : {dir: join(userHome(env), '.codex'), source: 'default'}
  return {
    tool: 'codex',
    roots: [root],
    configFile: join(root.dir, 'config.toml'),
    extraConfigFiles: [],
    historyDirs: [join(root.dir, 'sessions'), join(root.dir, 'archived_sessions')],
  }
}

/**
 * Gemini CLI: `$GEMINI_CLI_HOME/.gemini` when set (the CLI's own override of the home folder),
 * else `~/.gemini`; history under `tmp/`, or `$GEMINI_DATA_DIR` as ccusage reads it.
 */
export function geminiHome(env: NodeJS.ProcessEnv = process.env): AgentHome {
  const base = env.GEMINI_CLI_HOME?.trim() ? expand(env.GEMINI_CLI_HOME, env) : userHome(env)
  const root: AgentRoot = {
    dir: join(base, '.gemini'),
    source: env.GEMINI_CLI_HOME?.trim() ? 'GEMINI_CLI_HOME' : 'default',
  }
  const history = env.GEMINI_DATA_DIR?.trim() ? expand(env.GEMINI_DATA_DIR, env) : join(root.dir, 'tmp')
  return {
    tool: 'gemini-cli',
    roots: [root],
    configFile: join(root.dir, 'settings.json'),
    extraConfigFiles: [join(root.dir, '.env')],
    historyDirs: [history],
  }
}

/** `$XDG_<name>_HOME` when set (relative values are ignored, as xdg-basedir does not), else `~/<fallback>`. */
function xdg(
  env: NodeJS.ProcessEnv,
  name: 'CONFIG' | 'DATA',
  fallback: string,
): {dir: string; source: string} {
  const value = env[`XDG_${name}_HOME`]?.trim()
  return value
    ? {dir: expand(value, env), source: `XDG_${name}_HOME`}
    : {dir: join(userHome(env), fallback), source: 'default'}
}

/** OpenCode's global config files, in the order it loads them (a later one overrides). */
export const OPENCODE_CONFIG_FILES = ['config.json', 'opencode.json', 'opencode.jsonc'] as const

/**
 * OpenCode (`opencode-ai`, 1.18.33): its `global` module sets `config = $XDG_CONFIG_HOME/opencode`
 * and `data = $XDG_DATA_HOME/opencode` (xdg-basedir: `~/.config`, `~/.local/share`). Config:
 * `Config.loadGlobal` reads `config.json`, `opencode.json`, `opencode.jsonc` there, in that order,
 * then the file `$OPENCODE_CONFIG` names; binding edits the last of these that exists (the one
 * whose values win), else creates `opencode.json`. History: the SQLite database
 * `data/opencode.db` (`Database.path()`; `opencode-<channel>.db` for a non-release channel; an
 * `$OPENCODE_DB` outside `data` is not read), and the JSON files of the
 * versions before the database, `data/storage/message/<session>/<message>.json` (what ccusage
 * reads).
 */
export function opencodeHome(env: NodeJS.ProcessEnv = process.env): AgentHome {
  const config = xdg(env, 'CONFIG', '.config')
  const data = xdg(env, 'DATA', join('.local', 'share'))
  const root: AgentRoot = {dir: join(config.dir, 'opencode'), source: config.source}
  const custom = env.OPENCODE_CONFIG?.trim() ? expand(env.OPENCODE_CONFIG, env) : undefined
  const existing = OPENCODE_CONFIG_FILES.map((f) => join(root.dir, f)).filter((f) => existsSync(f))
  const configFile = custom ?? existing.at(-1) ?? join(root.dir, 'opencode.json')
  const dataDir = join(data.dir, 'opencode')
  return {
    tool: 'opencode',
    // the data folder counts too: `opencode run` with OPENCODE_CONFIG_CONTENT needs no config folder
    roots: [root, {dir: dataDir, source: data.source}],
    configFile,
    extraConfigFiles: [],
    historyDirs: [dataDir, join(dataDir, 'storage', 'message')],
  }
}

/**
 * Qwen Code (`@qwen-code/qwen-code`, 0.24.4; a fork of Gemini CLI): `Storage.getGlobalQwenDir()` is
 * `$QWEN_HOME` (`~` expanded, relative to the working folder) or `~/.qwen`; settings in
 * `settings.json` there (`getGlobalSettingsPath`), which may hold an `env` block and comments.
 * History: `Storage.getRuntimeBaseDir()` (`$QWEN_RUNTIME_DIR`, else the global dir) +
 * `projects/<sanitizeCwd(project root)>/chats/<sessionId>.jsonl` (`getProjectDir`; every
 * character but `[a-zA-Z0-9]` becomes `-`). The setting `advanced.runtimeOutputDir` can move it
 * as well; gwctl reads the variable only.
 */
export function qwenHome(env: NodeJS.ProcessEnv = process.env): AgentHome {
  const root: AgentRoot = env.QWEN_HOME?.trim()
    ? {dir: expand(env.QWEN_HOME, env), source: 'QWEN_HOME'}
    : {dir: join(userHome(env), '.qwen'), source: 'default'}
  const runtime = env.QWEN_RUNTIME_DIR?.trim() ? expand(env.QWEN_RUNTIME_DIR, env) : root.dir
  return {
    tool: 'qwen-code',
    roots: [root],
    configFile: join(root.dir, 'settings.json'),
    extraConfigFiles: [],
    historyDirs: [join(runtime, 'projects')],
  }
}

/** The locations of `tool`. */
export function agentHome(tool: AgentTool, env: NodeJS.ProcessEnv = process.env): AgentHome {
  switch (tool) {
    case 'claude-code':
      return claudeHome(env)
    case 'codex':
      return codexHome(env)
    case 'gemini-cli':
      return geminiHome(env)
    case 'opencode':
      return opencodeHome(env)
    case 'qwen-code':
      return qwenHome(env)
  }
}

/** The locations of every known tool, in {@link AGENT_TOOLS} order. */
export function agentHomes(env: NodeJS.ProcessEnv = process.env): AgentHome[] {
  return AGENT_TOOLS.map((t) => agentHome(t, env))
}
