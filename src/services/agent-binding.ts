/**
 * Route binding (`gwctl agents enable/disable`): points an installed coding agent's own config at
 * the local gateway with a key of its own, and undoes that exactly.
 *
 * Crash safety, in this order:
 * 1. the state records the intent under the lock: the hash of the original bytes of every file
 *    (first enable only; the bytes go to a 0600 backup beside the state first, fsynced, never into
 *    the state: see binding-originals.ts), and the hash of the bytes about to be written
 *    (`pendingHash`);
 * 2. each config file is replaced atomically (temp + fsync + rename, its mode kept);
 * 3. the state marks the binding `bound` (`writtenHash`).
 * `disable` does the same with the restore target. A `kill -9` anywhere leaves every file either
 * old or new, and the next enable/disable reconciles the state by hashing the files. The key
 * itself is never stored by gwctl: only in the agent's file, and as a hash of that file.
 *
 * Plain option objects in, plain results out: the CLI and a terminal UI render the same data.
 */
import {randomBytes} from 'node:crypto'
import {readFile, rm} from 'node:fs/promises'
import {hostname, userInfo} from 'node:os'
import {join} from 'node:path'

import {GwError, NotFoundError, UsageError} from '../core/errors.js'
import {hashKey, parseKey} from '../gateway/keys.js'
import {runningDaemon} from '../gateway/pidfile.js'
import type {AgentTool} from '../store/history-rows.js'
import {AGENT_TOOLS} from '../agent-tools/agent-homes.js'
import {agentHome} from '../agent-tools/agent-homes.js'
import type {ToolBinder} from '../agent-tools/config/binders.js'
import {
  assertWritable,
  ensureMode,
  hashBytes,
  modeOf,
  readBytes,
  writeAtomic,
} from '../agent-tools/config/file-io.js'
import type {AgentView} from '../gateway/views.js'
import type {DiscoveredAgent} from '../agent-tools/discovery.js'
import {scannedTools} from '../agent-tools/scan-status.js'
import {TOOL_AGENT_TYPE, discoverAgents} from '../agent-tools/discovery.js'
import {homeFile} from '../store/paths.js'
import type {BindingRecord, GatewayState} from '../store/state-schema.js'
import type {Family} from '../store/schema.js'
import {StateStore, withState} from '../store/state.js'
import {backupsDir, originalOf, pruneOriginals, saveOriginal, upgradeOriginal} from './binding-originals.js'
import {autoModeLocal, firstMessagesTarget} from './auto-mode.js'
import {resolvePort} from './gateway.js'
import {issueGatewayKey, listAgents, revokeGatewayKey, withEmployeeDefaults} from './gateway-keys.js'

/** One thing wrong with a binding and the command that fixes it. */
export interface BindingProblem {
  problem: string
  fix: string
}

/** How an agent's config relates to the gateway (`binding` of `agents list --json`). */
export interface BindingStatus {
  state: 'bound' | 'unbound' | 'stale'
  /** The port the config was bound to, and the key id it holds (bound or stale). */
  port?: number
  keyId?: string
  agentId?: string
  /** Files gwctl changed. */
  files?: string[]
  /** The user changed a bound file since gwctl wrote it. */
  modified?: boolean
  /** Why it is stale, each with its fix. */
  problems?: BindingProblem[]
  /** The protocol family it routes through, when the agent's config chooses it (OpenCode). */
  family?: Family
}

export interface EnableOptions {
  /** A discovered name (`claude-code`, `codex`, `gemini-cli`) or an agent's name or id. */
  agent: string
  policyId?: string
  /** Issue a new key and rewrite the config even when the binding is live. */
  rotate?: boolean
  /** Claude Code: also set its `statusLine` to `gwctl statusline` (`replace`: over the user's own). */
  statusline?: {replace?: boolean}
  /** Gateway port to bind to (default: the running gateway's, else the configured one). */
  port?: number
  signal?: AbortSignal
  env?: NodeJS.ProcessEnv
}

export interface EnableResult {
  tool: AgentTool
  agentName: string
  agentId: string
  keyId: string
  keyPrefix: string
  port: number
  baseUrl: string
  files: string[]
  /** `bound` (new), `already-bound` (nothing written), `rebound` (rewritten). */
  outcome: 'bound' | 'already-bound' | 'rebound'
  /** Whether a new key was issued (else the key in the config was reused). */
  keyIssued: boolean
  /**
   * With `statusline`: `gwctl` (its statusLine is gwctl's now) or `user` (the user's own was
   * kept: pass `replace`).
   */
  statusline?: 'gwctl' | 'user'
  /**
   * Claude Code: true when its settings now have auto mode classify locally
   * (`CLAUDE_CODE_AUTO_MODE_SERVER=0`, gwctl's: the policy does not start at Anthropic's API).
   */
  autoModeLocal?: true
}

export interface DisableOptions {
  agent?: string
  all?: boolean
  keepKey?: boolean
  signal?: AbortSignal
  env?: NodeJS.ProcessEnv
}

export interface DisableResult {
  tool: AgentTool
  /** `exact`: every file byte-identical to before; `surgical`: the user changed a file since. */
  restore: 'exact' | 'surgical'
  files: string[]
  /** Files deleted because gwctl had created them. */
  deleted: string[]
  /** Values of the user's that were put back (surgical restore). */
  notes: string[]
  keyRevoked: boolean
}

/**
 * The config editors of `tool` (jsonc-parser, smol-toml): loaded only when a binding exists or is
 * being changed, so `agents list`, `status` and `doctor` without bindings never load them.
 */
export async function loadBinder(tool: AgentTool): Promise<ToolBinder> {
  const {binderOf} = await import('../agent-tools/config/binders.js')
  return binderOf(tool)
}

function baseUrlOf(port: number): string {
  return `http://127.0.0.1:${port}`
}

/** The gateway port a binding should use: the running gateway's, else the configured one. */
export function currentPort(): number {
  return runningDaemon()?.port ?? resolvePort()
}

function toolNames(): string {
  return AGENT_TOOLS.join(', ')
}

/**
 * The tool named by `name`: a discovered name, or the name/id of an agent that holds a key and
 * was bound (or issued) for a tool. Unknown: exit 7 listing the names; not installed: exit 7
 * naming the folder looked for.
 */
export function resolveTool(
  name: string,
  state: GatewayState | undefined,
  env: NodeJS.ProcessEnv = process.env,
): {tool: AgentTool; discovered: DiscoveredAgent} {
  const discovered = discoverAgents(env)
  let tool = AGENT_TOOLS.find((t) => t === name)
  if (!tool && state) {
    const agent = state.agents.find((a) => a.id === name || a.name === name)
    const bound = agent && state.bindings?.find((b) => b.agentId === agent.id)
    const viaSource = AGENT_TOOLS.find((t) => t === agent?.sourceTool)
    tool = (bound?.tool as AgentTool | undefined) ?? viaSource
  }
  if (!tool) {
    const sub = discovered.find((d) => d.parentName && d.name === name)
    if (sub) {
      throw new UsageError(`"${name}" is a sub-agent of ${sub.parentName}: it uses its parent's config.`, {
        code: 'subagent_not_bindable',
        hint: `Enable the parent instead: gwctl agents enable ${sub.parentName}`,
      })
    }
    throw new NotFoundError(`Unknown agent "${name}". Agents gwctl can bind: ${toolNames()}.`, {
      code: 'unknown_agent',
      hint: 'See `gwctl agents list --all` for the agents found on this machine.',
    })
  }
  const main = discovered.find((d) => d.tool === tool && !d.parentName)!
  return {tool, discovered: main}
}

function requireInstalled(d: DiscoveredAgent): void {
  if (d.installed) return
  throw new NotFoundError(
    `${d.name} is not installed for this user: ${d.configDir} does not exist${d.configDirSource === 'default' ? '' : ` (set by ${d.configDirSource})`}.`,
    {
      code: 'agent_not_installed',
      hint: `Install and run ${d.name} once (it creates that folder), or point ${d.configDirSource === 'default' ? 'its home variable' : d.configDirSource} at its config folder.`,
    },
  )
}

async function readTexts(
  paths: string[],
): Promise<{bytes: Array<Buffer | null>; texts: Array<string | null>}> {
  const bytes = await Promise.all(paths.map((p) => readBytes(p)))
  return {bytes, texts: bytes.map((b) => (b === null ? null : b.toString('utf8')))}
}

/** The live key record `value` is, when it belongs to `agentId` (else undefined). */
export function liveKeyId(
  state: GatewayState,
  value: string | undefined,
  agentId?: string,
): string | undefined {
  if (!value) return undefined
  const parsed = parseKey(value)
  if (parsed.kind !== 'valid') return undefined
  const hash = hashKey(state.secret, parsed.key)
  const key = state.keys.find((k) => k.hash === hash)
  if (!key || key.revokedAt !== undefined) return undefined
  if (agentId !== undefined && key.agentId !== agentId) return undefined
  if (!state.agents.some((a) => a.id === key.agentId)) return undefined
  return key.id
}

function portOfUrl(url: string | undefined): number | undefined {
  if (!url) return undefined
  try {
    const u = new URL(url)
    if (u.hostname !== '127.0.0.1' && u.hostname !== 'localhost') return undefined
    return Number(u.port || (u.protocol === 'https:' ? 443 : 80))
  } catch {
    return undefined
  }
}

/**
 * The binding state of `tool` from the state and its files as they are now. Stale: the config
 * points at another port or a key that is not live, the gateway is not running, a change was
 * interrupted, or Claude Code's auto mode asks a classifier its route does not answer.
 */
export function bindingStatus(
  tool: AgentTool,
  state: GatewayState,
  texts: Array<string | null>,
  options: {port: number; gatewayRunning: boolean; binder: ToolBinder},
): BindingStatus {
  const record = state.bindings?.find((b) => b.tool === tool)
  if (!record) return {state: 'unbound'}
  const files = record.files.map((f) => f.path)
  const modified = record.files.some(
    (f, i) => f.writtenHash !== null && hashBytes(texts[i]) !== f.writtenHash,
  )
  const problems: BindingProblem[] = []
  const enable = `gwctl agents enable ${tool}`
  if (record.phase !== 'bound') {
    problems.push({
      problem: `an ${record.phase === 'binding' ? 'enable' : 'disable'} was interrupted`,
      fix: record.phase === 'binding' ? enable : `gwctl agents disable ${tool}`,
    })
  } else {
    const target = options.binder.target(texts)
    const port = portOfUrl(target.baseUrl)
    if (port === undefined) {
      problems.push({
        problem: `its config no longer points at the gateway (${target.baseUrl ?? 'no base URL'})`,
        fix: `${enable} (or gwctl agents disable ${tool})`,
      })
    } else if (port !== options.port) {
      problems.push({
        problem: `its config points at port ${port}, the gateway uses ${options.port}`,
        fix: enable,
      })
    }
    if (target.key === undefined || liveKeyId(state, target.key, record.agentId) === undefined) {
      problems.push({
        problem:
          target.key === undefined ? 'its config holds no gateway key' : 'its key was revoked or rotated',
        fix: enable,
      })
    }
    // Claude Code's settings without the local classifier of auto mode, where its route does not
    // start at Anthropic's API (bound before, or the route changed since): its notice would stop it
    const policyId = state.agents.find((a) => a.id === record.agentId)?.policyId
    if (
      options.binder.withAutoMode !== undefined &&
      texts[0] !== null &&
      policyId !== undefined &&
      options.binder.withAutoMode(texts[0], null, true) !== texts[0] &&
      autoModeLocal(state, policyId)
    ) {
      problems.push({
        problem: `auto mode asks Anthropic's classifier, which policy ${policyId}'s first Messages target (${firstMessagesTarget(state, policyId)?.provider}) does not answer`,
        fix: enable,
      })
    }
    if (!options.gatewayRunning) {
      problems.push({
        problem: 'the gateway is not running (the agent gets connection refused)',
        fix: 'gwctl gateway start',
      })
    }
  }
  const family = options.binder.family?.(texts)
  return {
    state: problems.length > 0 ? 'stale' : 'bound',
    ...(family ? {family} : {}),
    port: record.port,
    keyId: record.keyId,
    agentId: record.agentId,
    files,
    modified,
    ...(problems.length > 0 ? {problems} : {}),
  }
}

/** Binding states of every tool from disk (no state written). */
export async function bindingStatuses(
  state: GatewayState,
  options: {port?: number; gatewayRunning?: boolean} = {},
): Promise<Map<AgentTool, BindingStatus>> {
  const port = options.port ?? currentPort()
  const gatewayRunning = options.gatewayRunning ?? runningDaemon() !== undefined
  const result = new Map<AgentTool, BindingStatus>()
  for (const tool of AGENT_TOOLS) {
    const record = state.bindings?.find((b) => b.tool === tool)
    if (!record) {
      result.set(tool, {state: 'unbound'})
      continue
    }
    const {texts} = await readTexts(record.files.map((f) => f.path))
    result.set(
      tool,
      bindingStatus(tool, state, texts, {port, gatewayRunning, binder: await loadBinder(tool)}),
    )
  }
  return result
}

/** Removes the backups of originals that no binding refers to any more (a state write of its own). */
async function pruneUnused(): Promise<void> {
  await withState((store) => pruneOriginals(store.data), homeFile('state'))
}

/**
 * Settles a binding a crash left half-done, by hashing its files: each file is either what gwctl
 * was about to write or what was there before. Changes only the state.
 */
export async function reconcileBinding(tool: AgentTool): Promise<void> {
  const removed = await withState(async (store): Promise<boolean> => {
    const bindings = store.data.bindings ?? []
    const record = bindings.find((b) => b.tool === tool)
    if (!record || record.phase === 'bound') return false
    const {bytes} = await readTexts(record.files.map((f) => f.path))
    const hashes = bytes.map((b) => hashBytes(b))
    if (record.phase === 'binding') {
      record.files.forEach((f, i) => {
        if (f.pendingHash !== undefined && hashes[i] === f.pendingHash) f.writtenHash = f.pendingHash
        delete f.pendingHash
      })
      if (record.files.every((f) => f.writtenHash === null)) {
        store.data.bindings = bindings.filter((b) => b !== record) // nothing was written
        return true
      }
    } else {
      const done = record.files.map((f, i) => f.pendingHash !== undefined && hashes[i] === f.pendingHash)
      if (done.every(Boolean)) {
        store.data.bindings = bindings.filter((b) => b !== record)
        return true
      }
      record.files.forEach((f) => delete f.pendingHash)
    }
    record.phase = 'bound'
    record.updatedAt = Math.floor(Date.now() / 1000)
    return false
  }, homeFile('state'))
  if (removed) await pruneUnused()
}

/** The employee of keys gwctl issues for this user's agents: settings, git, else the login. */
export async function employee(): Promise<{employeeName: string; employeeContact: string}> {
  try {
    const filled = await withEmployeeDefaults({agentName: 'x', agentType: 'generic_agent'})
    return {employeeName: filled.employeeName, employeeContact: filled.employeeContact}
  } catch (error) {
    if (!(error instanceof GwError) || error.code !== 'missing_fields') throw error
    const user = userInfo().username
    return {employeeName: user, employeeContact: `${user}@${hostname()}`}
  }
}

const enableTokenPath = (tool: AgentTool): string => join(backupsDir(), `${tool}.enable`)

/**
 * The retry token of `tool`'s enable (`retryToken` of the issue request): the one an interrupted
 * enable left (`<GWCTL_HOME>/bindings/<tool>.enable`, 0600), else a new one, on disk (fsynced)
 * before the key is issued. Removed once the binding is written.
 */
async function enableToken(tool: AgentTool): Promise<string> {
  const path = enableTokenPath(tool)
  const kept = (await readFile(path, 'utf8').catch(() => '')).trim()
  if (/^[0-9a-f]{32}$/.test(kept)) return kept
  const token = randomBytes(16).toString('hex')
  await writeAtomic(path, token, 0o600)
  return token
}

/** `gwctl agents enable`: binds `options.agent` to the gateway (see the module comment). */
export async function enableAgent(options: EnableOptions): Promise<EnableResult> {
  const env = options.env ?? process.env
  const statePath = homeFile('state')
  let state = (await StateStore.open(statePath)).data
  const {tool, discovered} = resolveTool(options.agent, state, env)
  requireInstalled(discovered)
  if (state.bindings?.some((b) => b.tool === tool && b.phase !== 'bound')) {
    await reconcileBinding(tool)
    state = (await StateStore.open(statePath)).data
  }
  const binder = await loadBinder(tool)
  const paths = binder.files(agentHome(tool, env))
  const {texts} = await readTexts(paths)
  binder.check(texts, paths) // a broken file: exit 3 before any key is issued
  for (const p of paths) await assertWritable(p)

  const port = options.port ?? currentPort()
  const baseUrl = baseUrlOf(port)
  const record = state.bindings?.find((b) => b.tool === tool)
  const status = bindingStatus(tool, state, texts, {port, gatewayRunning: true, binder})
  const agentName = tool
  // --statusline on a bound agent without it (or --replace over the user's) writes again
  const statuslineNow = binder.statusline?.(texts) ?? 'none'
  const statuslineWanted =
    options.statusline !== undefined &&
    statuslineNow !== 'gwctl' &&
    (options.statusline.replace === true || statuslineNow === 'none')
  // Claude Code's auto mode: classified locally while the agent's policy does not start at
  // Anthropic's API (./auto-mode.ts), decided again on each enable (a route changed since)
  // (the settings before binding: a value there is the user's; where gwctl's copy of them cannot
  // be read, the settings as they are, whose value then stands: an enable that would change nothing
  // else is no place to fail on a backup the disable will name)
  // (a file the user edited since gwctl wrote it: its edit is the baseline from this enable on, as
  // the intent below records it, so a value of theirs deleted while bound is no longer theirs)
  const original =
    binder.withAutoMode !== undefined
      ? record
        ? await Promise.all(record.files.map((f) => originalOf(f))).then(
            (backups) => {
              const originals = backups.map((b) => b?.toString('utf8') ?? null)
              const edited = record.files.some(
                (f, i) => f.writtenHash !== null && hashBytes(texts[i]) !== f.writtenHash,
              )
              return edited ? binder.strip(texts, originals).texts[0] : originals[0]
            },
            () => texts[0],
          )
        : texts[0]
      : undefined
  const autoModeFor = (policyId: string | undefined) =>
    original === undefined
      ? undefined
      : {local: policyId !== undefined && autoModeLocal(state, policyId), original}
  const recordPolicy = record ? state.agents.find((a) => a.id === record.agentId)?.policyId : undefined
  const autoModeNow = autoModeFor(recordPolicy)
  const autoModeStale =
    autoModeNow !== undefined &&
    texts[0] !== null &&
    binder.withAutoMode?.(texts[0], autoModeNow.original, autoModeNow.local) !== texts[0]
  if (
    record &&
    status.state === 'bound' &&
    !status.modified &&
    !options.rotate &&
    !options.policyId &&
    !statuslineWanted &&
    !autoModeStale
  ) {
    const key = state.keys.find((k) => k.id === record.keyId)
    return {
      tool,
      agentName,
      agentId: record.agentId,
      keyId: record.keyId,
      keyPrefix: key?.prefix ?? '',
      port,
      baseUrl,
      files: paths,
      outcome: 'already-bound',
      keyIssued: false,
      ...(options.statusline && binder.statusline
        ? {statusline: statuslineNow === 'gwctl' ? ('gwctl' as const) : ('user' as const)}
        : {}),
    }
  }

  // The key: the one already in the config when it is still live for this agent, else a new one.
  const inConfig = binder.target(texts).key
  const reusable =
    !options.rotate && !options.policyId && record ? liveKeyId(state, inConfig, record.agentId) : undefined
  let keyValue: string
  let keyId: string
  let keyPrefix: string
  let agentId: string
  let autoMode = autoModeNow
  if (reusable && inConfig) {
    keyValue = inConfig
    keyId = reusable
    keyPrefix = state.keys.find((k) => k.id === reusable)!.prefix
    agentId = record!.agentId
  } else {
    const policyId = options.policyId ?? recordPolicy
    const request = {
      ...(await employee()),
      agentName,
      agentType: TOOL_AGENT_TYPE[tool],
      sourceTool: tool,
      configPath: paths[0],
      // a new key for the bound agent keeps its policy (a rotation is not a move to the default)
      ...(policyId ? {policyId} : {}),
    }
    // The retry token of this binding: an enable killed after its issue left it on disk, and the
    // gateway lets the retry that sends it again issue at once (the key issued then went to no
    // one). Any other issue for the agent within 5 s (another client, or an enable right after a
    // finished one) is refused by the one-key-per-5-s rule, there to stop two clients rotating
    // each other's key: an enable waits that out instead of exit 2.
    const issueRequest = {...request, retryToken: await enableToken(tool)}
    const issued = await issueGatewayKey(issueRequest, {signal: options.signal, waitOutRateLimit: true})
    keyValue = issued.keyValue
    keyId = issued.keyId
    keyPrefix = issued.keyPrefix
    agentId = issued.agentId
    autoMode = autoModeFor(issued.policyId)
  }

  const next = binder.bind(texts, paths, baseUrl, keyValue, {
    ...(options.statusline && tool === 'claude-code' ? {statusline: options.statusline} : {}),
    ...(autoMode ? {autoMode} : {}),
  })
  const now = Math.floor(Date.now() / 1000)
  // 1. intent, with the hashes of the originals, whose bytes are backed up (and fsynced) before the
  // state refers to them (a user edit since the last write becomes the new baseline)
  await withState(async (store) => {
    const bindings = (store.data.bindings ??= [])
    let rec = bindings.find((b) => b.tool === tool)
    const {bytes} = await readTexts(paths)
    if (!rec) {
      rec = {tool, agentId, keyId, port, phase: 'binding', files: [], createdAt: now, updatedAt: now}
      const modes = await Promise.all(paths.map((p) => modeOf(p)))
      const hashes: string[] = []
      for (const b of bytes) hashes.push(await saveOriginal(b))
      rec.files = paths.map((path, i) => ({
        path,
        originalHash: hashes[i],
        writtenHash: null,
        ...(modes[i] === undefined ? {} : {mode: modes[i]}),
      }))
      bindings.push(rec)
    } else {
      for (const f of rec.files) await upgradeOriginal(f) // a state from before the backups
      if (rec.files.some((f, i) => f.writtenHash !== hashBytes(bytes[i]))) {
        const originals: Array<string | null> = []
        for (const f of rec.files) originals.push((await originalOf(f))?.toString('utf8') ?? null)
        const stripped = binder.strip(
          bytes.map((b) => (b === null ? null : b.toString('utf8'))),
          originals,
        ).texts
        for (const [i, f] of rec.files.entries()) {
          if (f.writtenHash === hashBytes(bytes[i])) continue
          // unchanged by the user since gwctl's original: keep the exact original
          const s = stripped[i]
          if (s === null || s !== originals[i]) f.originalHash = await saveOriginal(s)
        }
      }
    }
    Object.assign(rec, {
      agentId,
      keyId,
      port,
      phase: 'binding',
      updatedAt: now,
    } satisfies Partial<BindingRecord>)
    rec.files.forEach((f, i) => (f.pendingHash = hashBytes(next[i])))
  }, statePath)
  // 2. the files, each atomically; a file that holds the key is readable by this user only while
  // bound (a 0644 settings.json would hand the key to every local user); disable restores its mode
  for (let i = 0; i < paths.length; i++) {
    const holdsKey = next[i].includes(keyValue)
    if (next[i] !== texts[i]) await writeAtomic(paths[i], next[i], holdsKey ? 0o600 : undefined)
    else if (holdsKey) await ensureMode(paths[i], 0o600)
  }
  // 3. done (the backup of a baseline the intent replaced is unused from here on)
  await withState(async (store) => {
    await pruneOriginals(store.data)
    const rec = store.data.bindings?.find((b) => b.tool === tool)
    if (!rec) return
    rec.files.forEach((f) => {
      f.writtenHash = f.pendingHash ?? f.writtenHash
      delete f.pendingHash
    })
    rec.phase = 'bound'
    rec.updatedAt = Math.floor(Date.now() / 1000)
  }, statePath)
  await rm(enableTokenPath(tool), {force: true})
  return {
    tool,
    agentName,
    agentId,
    keyId,
    keyPrefix,
    port,
    baseUrl,
    files: paths,
    outcome: record ? 'rebound' : 'bound',
    keyIssued: !reusable,
    ...(autoMode?.local && binder.withAutoMode?.(next[0], null, false) !== next[0]
      ? {autoModeLocal: true as const}
      : {}),
    ...(options.statusline && binder.statusline
      ? {statusline: binder.statusline(next) === 'gwctl' ? ('gwctl' as const) : ('user' as const)}
      : {}),
  }
}

/** What binding an agent would write, for a confirmation before `enableAgent`. */
export interface BindingPlan {
  tool: AgentTool
  /** The files it writes (those of a bound agent: the ones it wrote). */
  files: string[]
  baseUrl: string
}

/** The files and base URL `enableAgent({agent})` would write; nothing is written. */
export async function bindingPlan(agent: string, env: NodeJS.ProcessEnv = process.env): Promise<BindingPlan> {
  const state = (await StateStore.open(homeFile('state'))).data
  const {tool} = resolveTool(agent, state, env)
  const record = state.bindings?.find((b) => b.tool === tool)
  const files = record
    ? record.files.map((f) => f.path)
    : (await loadBinder(tool)).files(agentHome(tool, env))
  return {tool, files, baseUrl: baseUrlOf(currentPort())}
}

export interface RotateOptions {
  agentId: string
  /** Move the agent to this policy (a new key too); default: keep its policy. */
  policyId?: string
  signal?: AbortSignal
  env?: NodeJS.ProcessEnv
}

/** A rotation through the agent's binding (its config holds the new key), or of its key alone. */
export type RotateResult =
  | {via: 'binding'; agentName: string; policyId: string; enable: EnableResult}
  | {via: 'key'; agentName: string; policyId: string; keyValue: string; keyPrefix: string}

/**
 * A new key for an agent, or a move to another policy (which re-issues its key), that keeps its
 * binding true. An agent whose own config is bound to the gateway goes through `enableAgent`: its
 * config gets the new key, as `gwctl agents enable TOOL --rotate` (or `--policy`) does, and the
 * agent goes on working. Any other agent gets its key re-issued as `gwctl key issue` would; the
 * caller shows the new key once (no file holds it).
 */
export async function rotateAgentKey(options: RotateOptions): Promise<RotateResult> {
  const state = (await StateStore.open(homeFile('state'))).data
  const record = state.bindings?.find((b) => b.agentId === options.agentId)
  const agent = (await listAgents({signal: options.signal})).find((a) => a.agentId === options.agentId)
  if (!agent) {
    throw new NotFoundError(`Unknown agent "${options.agentId}".`, {
      code: 'unknown_agent',
      hint: 'See `gwctl agents list` for the agents that hold keys.',
    })
  }
  const policyId = options.policyId ?? agent.policyId
  if (record) {
    const enable = await enableAgent({
      agent: record.tool,
      rotate: true,
      policyId,
      signal: options.signal,
      env: options.env,
    })
    return {via: 'binding', agentName: agent.name, policyId, enable}
  }
  const issued = await issueGatewayKey(
    {
      agentName: agent.name,
      agentType: agent.type,
      policyId,
      ...(agent.parentAgentId ? {parentAgentId: agent.parentAgentId} : {}),
      ...(agent.sourceTool ? {sourceTool: agent.sourceTool} : {}),
      ...(agent.configPath ? {configPath: agent.configPath} : {}),
      ...(agent.employee ? {employeeName: agent.employee.name, employeeContact: agent.employee.contact} : {}),
    },
    {signal: options.signal},
  )
  return {via: 'key', agentName: agent.name, policyId, keyValue: issued.keyValue, keyPrefix: issued.keyPrefix}
}

/** `gwctl agents disable`: undoes the binding of one tool, or of every bound tool (`all`). */
export async function disableAgents(options: DisableOptions): Promise<DisableResult[]> {
  const env = options.env ?? process.env
  const state = (await StateStore.open(homeFile('state'))).data
  let tools: AgentTool[]
  if (options.all) {
    tools = (state.bindings ?? []).map((b) => b.tool as AgentTool)
  } else {
    if (!options.agent) throw new UsageError('Name an agent, or pass --all.', {code: 'missing_agent'})
    const {tool} = resolveTool(options.agent, state, env)
    if (!state.bindings?.some((b) => b.tool === tool)) {
      throw new NotFoundError(`${tool} is not bound to the gateway: nothing to undo.`, {
        code: 'not_bound',
        hint: 'See `gwctl agents list --all` for the binding of each agent.',
      })
    }
    tools = [tool]
  }
  const results: DisableResult[] = []
  for (const tool of tools) results.push(await disableOne(tool, options))
  return results
}

async function disableOne(tool: AgentTool, options: DisableOptions): Promise<DisableResult> {
  const statePath = homeFile('state')
  await reconcileBinding(tool)
  let record = (await StateStore.open(statePath)).data.bindings?.find((b) => b.tool === tool)
  if (!record) {
    // an interrupted disable had finished its files: only the state was left to settle
    return {tool, restore: 'exact', files: [], deleted: [], notes: [], keyRevoked: false}
  }
  const binder = await loadBinder(tool)
  const paths = record.files.map((f) => f.path)
  const {bytes, texts} = await readTexts(paths)
  for (const p of paths) if (bytes[paths.indexOf(p)] !== null) await assertWritable(p)
  const originals: Array<Buffer | null> = []
  for (const f of record.files) originals.push(await originalOf(f))
  const untouched = record.files.map((f, i) => f.writtenHash === hashBytes(bytes[i]))
  let stripped: Array<string | null> = texts
  let notes: string[] = []
  if (!untouched.every(Boolean)) {
    binder.check(
      texts.map((t, i) => (untouched[i] ? null : t)),
      paths,
    )
    const s = binder.strip(
      texts,
      originals.map((o) => (o === null ? null : o.toString('utf8'))),
    )
    stripped = s.texts
    notes = s.notes
  }
  const targets: Array<Buffer | string | null> = record.files.map((_, i) =>
    untouched[i] ? originals[i] : texts[i] === null ? null : stripped[i],
  )
  // 1. intent
  await withState((store) => {
    const rec = store.data.bindings?.find((b) => b.tool === tool)
    if (!rec) return
    rec.phase = 'unbinding'
    rec.files.forEach((f, i) => (f.pendingHash = hashBytes(targets[i])))
    rec.updatedAt = Math.floor(Date.now() / 1000)
  }, statePath)
  // 2. the files
  const deleted: string[] = []
  for (let i = 0; i < paths.length; i++) {
    const target = targets[i]
    if (target === null && bytes[i] !== null) deleted.push(paths[i])
    const mode = record.files[i].mode
    if (hashBytes(target) !== hashBytes(bytes[i])) await writeAtomic(paths[i], target, mode)
    else if (target !== null && mode !== undefined) await ensureMode(paths[i], mode)
  }
  // 3. done
  await withState((store) => {
    store.data.bindings = (store.data.bindings ?? []).filter((b) => b.tool !== tool)
  }, statePath)
  await pruneUnused()
  record = record as BindingRecord
  let keyRevoked = false
  if (!options.keepKey) {
    await revokeGatewayKey(record.keyId, {signal: options.signal})
    keyRevoked = true
  }
  return {
    tool,
    restore: untouched.every(Boolean) ? 'exact' : 'surgical',
    files: paths,
    deleted,
    notes,
    keyRevoked,
  }
}

/** One row of `gwctl agents list`: an agent holding a key, a discovered agent, or both. */
export interface AgentRow extends Omit<AgentView, 'agentId' | 'createdAt'> {
  /** Null for a discovered agent that holds no key. */
  agentId: string | null
  createdAt: number | null
  /** The tool it is (or belongs to), when known. */
  tool: AgentTool | null
  /** Found on this machine by discovery. */
  discovered: boolean
  /** Its history is in the log database (the history scanners ran over it). */
  scanned: boolean
  historyPath: string | null
  historyExists: boolean
  binding: BindingStatus
}

export interface ListAgentRowsOptions {
  /** Only agents whose route is bound (their traffic goes through the gateway). */
  enabled?: boolean
  /** Also discovered agents that are not enabled, or whose history is not scanned yet. */
  all?: boolean
  signal?: AbortSignal
  env?: NodeJS.ProcessEnv
}

/**
 * The agents of `gwctl agents list`: those holding keys (from the running gateway, else the
 * state file) merged with the agents discovered on this machine; a discovered agent that holds
 * a key is one row. Default: key holders and discovered agents whose history was scanned.
 */
export async function listAgentRows(options: ListAgentRowsOptions = {}): Promise<AgentRow[]> {
  const env = options.env ?? process.env
  const [views, store, scanned] = await Promise.all([
    listAgents({signal: options.signal}),
    StateStore.open(homeFile('state')),
    scannedTools(),
  ])
  const state = store.data
  const statuses = await bindingStatuses(state)
  const discovered = discoverAgents(env).filter((d) => d.installed)
  const boundAgent = new Map((state.bindings ?? []).map((b) => [b.agentId, b.tool as AgentTool]))

  const matchOf = (v: AgentView): DiscoveredAgent | undefined => {
    const tool = boundAgent.get(v.agentId)
    if (tool) return discovered.find((d) => d.tool === tool && !d.parentName)
    return discovered.find((d) => d.name === v.name && d.agentType === v.type)
  }
  const used = new Set<DiscoveredAgent>()
  const rows: AgentRow[] = views.map((v) => {
    const d = matchOf(v)
    if (d) used.add(d)
    const tool = d?.tool ?? boundAgent.get(v.agentId) ?? AGENT_TOOLS.find((t) => t === v.sourceTool) ?? null
    const binding =
      tool && !d?.parentName && statuses.get(tool)?.agentId === v.agentId
        ? statuses.get(tool)!
        : {state: 'unbound' as const}
    return {
      ...v,
      configPath: v.configPath ?? d?.configPath ?? null,
      tool,
      discovered: d !== undefined,
      scanned: tool !== null && scanned.has(tool),
      historyPath: d?.historyPath ?? null,
      historyExists: d?.historyExists ?? false,
      binding,
    }
  })
  const idOfTool = new Map(rows.filter((r) => r.tool && !r.parentAgentId).map((r) => [r.tool!, r.agentId]))
  for (const d of discovered) {
    if (used.has(d)) continue
    const targets: AgentView['route']['targets'] = []
    rows.push({
      agentId: null,
      name: d.name,
      type: d.agentType,
      employee: null,
      parentAgentId: d.parentName ? (idOfTool.get(d.tool) ?? null) : null,
      parentAgentName: d.parentName ?? null,
      childAgentIds: [],
      policyId: '-',
      route: {family: d.family, targets},
      enabled: false,
      keyId: null,
      keyPrefix: null,
      sourceTool: d.tool,
      configPath: d.configPath,
      createdAt: null,
      lastSeenAt: null,
      tool: d.tool,
      discovered: true,
      scanned: scanned.has(d.tool),
      historyPath: d.historyPath,
      historyExists: d.historyExists,
      binding: d.parentName ? {state: 'unbound'} : (statuses.get(d.tool) ?? {state: 'unbound'}),
    })
  }
  if (options.enabled) return rows.filter((r) => r.enabled)
  if (options.all) return rows
  return rows.filter((r) => r.agentId !== null || (r.scanned && !r.parentAgentName))
}
