/**
 * Shell completion for bash, zsh and fish. `gwctl completion <shell>` prints a small script that
 * holds the command tree (commands, flags, their fixed options) and, on each Tab, runs
 * `gwctl __complete <words…>`: bin/run.js answers that without loading oclif, from the tree and
 * the state file read directly (agent names, policy ids, model names). Nothing here imports more
 * than node:fs and the home folder's paths, so a Tab costs one bare Node start.
 */
import {readFileSync} from 'node:fs'

import {homeFile} from '../store/paths.js'

/**
 * Kinds of values read from the state file, each the domain of the flags and arguments that take
 * it: `agent` every agent holding a key (or that held one), `keyed-agent` the agents whose key is
 * active (`key revoke`), `tool` the coding agents `agents enable` can bind, `bound-tool` those bound
 * now (`agents disable`), `policy` policy ids, `chat-model` the chat models of the gateway's chat
 * providers and routes and the setting `chat.model`. Video and Gamma models are fixed lists in the
 * tree (the catalog), never read here.
 */
export const VALUE_KINDS = ['agent', 'keyed-agent', 'tool', 'bound-tool', 'policy', 'chat-model'] as const
export type ValueKind = (typeof VALUE_KINDS)[number]

/**
 * A flag: 0 a switch, 1 a free value (files), a kind (values from the state), or fixed options.
 * Args: one entry per positional argument, in order, the same way (null: free).
 */
export type FlagSpec = 0 | 1 | ValueKind | string[]
export interface CommandSpec {
  f: Record<string, FlagSpec>
  a: Array<ValueKind | string[] | null>
}
export type CompletionTree = Record<string, CommandSpec>

/** The coding-agent tools `gwctl agents enable` binds. */
export const TOOLS = ['claude-code', 'codex', 'gemini-cli', 'opencode', 'qwen-code']

/** The flag names whose values come from the state, for a command that names no domain of its own. */
export function flagKind(name: string): ValueKind | undefined {
  if (name === 'agent' || name === 'parent-agent-name') return 'agent'
  if (name === 'policy' || name === 'policy-id') return 'policy'
  return undefined
}

/** A name a shell can take as one word: no whitespace, control characters or quotes. */
const plain = (s: unknown): s is string =>
  typeof s === 'string' && s.length > 0 && /^[^\s\p{Cc}'"`\\$]+$/u.test(s)

/** The state file, as the gateway and the CLI share it (GWCTL_HOME, else XDG_CONFIG_HOME/gwctl). */
export function stateFile(env: NodeJS.ProcessEnv = process.env): string {
  return homeFile('state', env)
}

interface StateShape {
  agents?: Array<{id?: unknown; name?: unknown}>
  keys?: Array<{agentId?: unknown; revokedAt?: unknown}>
  policies?: Array<{id?: unknown; routes?: Record<string, Array<{model?: unknown}> | undefined>}>
  providers?: Array<{family?: unknown; models?: Record<string, unknown>}>
  bindings?: Array<{tool?: unknown}>
}

function readJson(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8'))
  } catch {
    return {}
  }
}

/** The names of one kind in the state file, sorted; none when it is missing or unreadable. */
export function completionValues(kind: ValueKind, env: NodeJS.ProcessEnv = process.env): string[] {
  const state = (readJson(stateFile(env)) ?? {}) as StateShape
  const out = new Set<unknown>()
  if (kind === 'agent') for (const a of state.agents ?? []) out.add(a?.name)
  if (kind === 'keyed-agent') {
    const keyed = new Set((state.keys ?? []).filter((k) => k?.revokedAt === undefined).map((k) => k?.agentId))
    for (const a of state.agents ?? []) if (keyed.has(a?.id)) out.add(a?.name)
  }
  if (kind === 'tool') for (const t of TOOLS) out.add(t)
  if (kind === 'bound-tool') for (const b of state.bindings ?? []) out.add(b?.tool)
  if (kind === 'policy') for (const p of state.policies ?? []) out.add(p?.id)
  if (kind === 'chat-model') {
    for (const p of state.providers ?? []) {
      if (p?.family !== 'chat') continue
      for (const [from, to] of Object.entries(p?.models ?? {})) {
        out.add(from)
        out.add(to)
      }
    }
    for (const p of state.policies ?? []) for (const t of p?.routes?.chat ?? []) out.add(t?.model)
    out.add((readJson(homeFile('settings', env)) as Record<string, unknown> | null)?.['chat.model'])
  }
  return [...out].filter(plain).sort()
}

/** Values of a flag or argument spec. `null`: free text (the shell offers files). */
function valuesOf(spec: FlagSpec | ValueKind | string[] | null | undefined, env: NodeJS.ProcessEnv) {
  if (Array.isArray(spec)) return spec
  if (typeof spec === 'string') return completionValues(spec as ValueKind, env)
  return null
}

/**
 * The candidates for the last of `words` (the words after `gwctl`; the last is the word being
 * completed, '' for a new one), one per line for the shell.
 */
export function complete(
  tree: CompletionTree,
  words: string[],
  env: NodeJS.ProcessEnv = process.env,
): string[] {
  const current = words.at(-1) ?? ''
  const before = words.slice(0, -1)
  const ids = Object.keys(tree)
  const path: string[] = []
  const positional: string[] = []
  let valueOf: FlagSpec | null = null
  for (const word of before) {
    const spec = tree[path.join(' ')]
    if (valueOf !== null) {
      valueOf = null
      continue
    }
    if (word.startsWith('-')) {
      const [name, inline] = word.replace(/^-+/, '').split('=', 2)
      const f = spec?.f[name]
      if (f !== undefined && f !== 0 && inline === undefined) valueOf = f
      continue
    }
    const next = [...path, word].join(' ')
    if (positional.length === 0 && ids.some((id) => id === next || id.startsWith(next + ' '))) path.push(word)
    else positional.push(word)
  }
  const id = path.join(' ')
  const spec = tree[id]
  let candidates: string[] = []
  if (valueOf !== null) {
    candidates = valuesOf(valueOf, env) ?? []
  } else if (current.startsWith('-') && spec) {
    candidates = [...Object.keys(spec.f).map((f) => `--${f}`), '--help']
  } else {
    if (positional.length === 0) {
      const subs = new Set<string>()
      for (const other of ids)
        if (other !== id && (id === '' || other.startsWith(id + ' ')))
          subs.add(other.slice(id === '' ? 0 : id.length + 1).split(' ')[0])
      candidates.push(...subs)
    }
    if (spec) candidates.push(...(valuesOf(spec.a[positional.length], env) ?? []))
  }
  return [...new Set(candidates)].filter((c) => c.startsWith(current)).sort()
}

/** `gwctl __complete …` (bin/run.js): the tree comes from the script in GWCTL_COMPLETE_TREE. */
export function main(words: string[], env: NodeJS.ProcessEnv = process.env): string {
  let tree: CompletionTree = {}
  try {
    tree = JSON.parse(env.GWCTL_COMPLETE_TREE ?? '{}') as CompletionTree
  } catch {
    // an old or damaged script: complete values only
  }
  const [first, ...rest] = words
  if (
    first &&
    (VALUE_KINDS as readonly string[]).includes(first) &&
    rest.length === 0 &&
    !env.GWCTL_COMPLETE_TREE
  )
    return completionValues(first as ValueKind, env).join('\n')
  return complete(tree, words, env).join('\n')
}
