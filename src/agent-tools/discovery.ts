/**
 * The coding agents installed for this user, found without running them: a tool is installed
 * when its config folder exists (see agent-homes for the folders and the variables honoured).
 * Claude Code's sub-agents (`<root>/agents/*.md`) are listed as its children.
 */
import {existsSync, readdirSync, readFileSync, statSync} from 'node:fs'
import {basename, join} from 'node:path'

import {AGENT_KINDS} from '../gateway/agent-kinds.js'
import type {Family} from '../store/schema.js'
import type {AgentHome} from './agent-homes.js'
import type {AgentTool} from '../store/history-rows.js'
import {agentHomes} from './agent-homes.js'

/** The agent type (gateway agent kind) of each tool's main session. */
export const TOOL_AGENT_TYPE: Record<AgentTool, string> = {
  'claude-code': 'claude_code',
  codex: 'codex',
  'gemini-cli': 'gemini_cli',
  opencode: 'opencode',
  'qwen-code': 'qwen_code',
}

/**
 * The family OpenCode speaks: its chosen model's provider's (`model: "<provider>/..."` of its
 * config; the one binding routes through, see `opencodeBinding` in config/binders.ts). Read with a
 * regular expression, not a JSONC parser: discovery runs on every `agents list`.
 */
function opencodeFamily(configFile: string): Family {
  let text = ''
  try {
    text = readFileSync(configFile, 'utf8')
  } catch {
    // no config: OpenCode's default provider
  }
  const provider = /^\s*"model"\s*:\s*"([^"/]+)\//m.exec(text)?.[1] ?? 'anthropic'
  return provider === 'anthropic'
    ? 'messages'
    : provider === 'openai'
      ? 'responses'
      : provider === 'google'
        ? 'gemini'
        : 'chat'
}

/** One agent found on this machine. */
export interface DiscoveredAgent {
  /** Stable name: the tool's (`claude-code`, `codex`, `gemini-cli`) or a sub-agent's. */
  name: string
  tool: AgentTool
  /** Gateway agent kind (`claude_code`, `claude_code_subagent`, ...). */
  agentType: string
  /** Entrance family it speaks. */
  family: Family
  /** Its config folder exists. */
  installed: boolean
  /** The folder looked for (the first config root) and the variable that chose it. */
  configDir: string
  configDirSource: string
  /** The config file route binding edits. */
  configPath: string
  /** The first history folder that exists, else the first one looked for. */
  historyPath: string
  historyExists: boolean
  /** Sub-agents: the name of the parent (`claude-code`). */
  parentName?: string
  /** Sub-agents: the definition file. */
  definitionPath?: string
}

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}

function familyOf(type: string): Family {
  return AGENT_KINDS.find((k) => k.type === type)?.family ?? 'chat'
}

/** The `name:` of a sub-agent definition's front matter, else the file name. */
function subagentName(file: string): string {
  try {
    const text = readFileSync(file, 'utf8')
    const front = /^---\r?\n([\s\S]*?)\r?\n---/.exec(text)?.[1]
    const name = front && /^name:\s*["']?([^"'\r\n]+?)["']?\s*$/m.exec(front)?.[1]
    if (name) return name.trim()
  } catch {
    // unreadable: the file name still names it
  }
  return basename(file, '.md')
}

function discoverTool(home: AgentHome): DiscoveredAgent[] {
  const root = home.roots[0]
  const installed = home.roots.some((r) => isDir(r.dir))
  const history = home.historyDirs.find((d) => isDir(d))
  const type = TOOL_AGENT_TYPE[home.tool]
  const main: DiscoveredAgent = {
    name: home.tool,
    tool: home.tool,
    agentType: type,
    family: home.tool === 'opencode' ? opencodeFamily(home.configFile) : familyOf(type),
    installed,
    configDir: root.dir,
    configDirSource: root.source,
    configPath: home.configFile,
    historyPath: history ?? home.historyDirs[0],
    historyExists: history !== undefined,
  }
  const result = [main]
  if (home.tool !== 'claude-code') return result
  const seen = new Set<string>()
  for (const r of home.roots) {
    const dir = join(r.dir, 'agents')
    if (!isDir(dir)) continue
    for (const file of readdirSync(dir).sort()) {
      if (!file.endsWith('.md')) continue
      const path = join(dir, file)
      const name = subagentName(path)
      if (seen.has(name)) continue
      seen.add(name)
      result.push({
        ...main,
        name,
        agentType: 'claude_code_subagent',
        family: familyOf('claude_code_subagent'),
        parentName: home.tool,
        definitionPath: path,
      })
    }
  }
  return result
}

/**
 * Every known tool with whether it is installed, and the sub-agents of installed ones. Reads
 * only folder listings and sub-agent front matter; never runs an agent.
 */
export function discoverAgents(env: NodeJS.ProcessEnv = process.env): DiscoveredAgent[] {
  return agentHomes(env).flatMap(discoverTool)
}

/** Whether a path exists and can be listed/read (doctor's scan-path check). */
export function pathReadable(path: string): boolean {
  try {
    if (!existsSync(path)) return false
    if (statSync(path).isDirectory()) readdirSync(path)
    else readFileSync(path, {flag: 'r'}).subarray(0, 0)
    return true
  } catch {
    return false
  }
}
