/**
 * Where each coding agent of this user keeps its configuration and its history, honouring the
 * same environment variables the agents themselves honour (../shared/PROTOCOLS.md A6,
 * ../shared/AGENT-CLIS.md). Pure path arithmetic: nothing here touches the disk, so discovery,
 * route binding, the history scanners and doctor all agree on one answer.
 */
import {homedir} from 'node:os'
import {join, resolve} from 'node:path'

import type {AgentTool} from '../store/history-rows.js'

/** The stable names of the agent tools gwctl knows. */
export const AGENT_TOOLS = ['claude-code', 'codex', 'gemini-cli'] as const satisfies readonly AgentTool[]
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

/** The locations of `tool`. */
export function agentHome(tool: AgentTool, env: NodeJS.ProcessEnv = process.env): AgentHome {
  switch (tool) {
    case 'claude-code':
      return claudeHome(env)
    case 'codex':
      return codexHome(env)
    case 'gemini-cli':
      return geminiHome(env)
  }
}

/** The locations of every known tool, in {@link AGENT_TOOLS} order. */
export function agentHomes(env: NodeJS.ProcessEnv = process.env): AgentHome[] {
  return AGENT_TOOLS.map((t) => agentHome(t, env))
}
