/**
 * `gwctl run AGENT -- ARGS`: one run of a coding agent through the running gateway, with no file
 * of the user's touched. The agent's own executable is started with ARGS and with the overrides of
 * `agent-tools/run-overrides.ts` (environment variables and its own command-line overrides), and
 * its standard streams, terminal, signals and exit status pass straight through.
 *
 * Which key a run uses:
 * - an agent whose config `gwctl agents enable` bound runs with the key in that config (issuing
 *   another key for the same agent would revoke it, and break the binding), so its policy is the
 *   binding's; for Claude Code nothing else is possible, as it applies its settings' `env` over
 *   the environment;
 * - otherwise the run key of the agent name (`--agent-name`, default the tool's name), issued on
 *   the first run and kept in `<GWCTL_HOME>/run-keys.json` (0600) for the next ones; `--policy`
 *   naming another policy than the agent's issues a new key bound to it.
 * The key lives only in the child's environment (Codex reads it from a variable its overrides
 * name), never in argv.
 */
import {spawn} from 'node:child_process'
import {accessSync, constants, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {homedir, tmpdir} from 'node:os'
import {delimiter, isAbsolute, join} from 'node:path'

import {ConfigError, GatewayDownError, GwError, NotFoundError, UsageError} from '../core/errors.js'
import {agentHome} from '../agent-tools/agent-homes.js'
import {
  claudeCodeWindowSetting,
  codexWindowSettings,
  geminiCliAssumedWindow,
  geminiCompressionThreshold,
} from '../agent-tools/context-window.js'
import {TOOL_AGENT_TYPE} from '../agent-tools/discovery.js'
import type {RunTool} from '../agent-tools/run-overrides.js'
import {
  AGENT_EXECUTABLE,
  checkGeminiAuth,
  claudeProjectSettings,
  claudeRouteEntries,
  claudeSetsCompactWindow,
  geminiCliModel,
  geminiWindowDefaults,
  runOverrides,
} from '../agent-tools/run-overrides.js'
import {displayPrefix} from '../gateway/keys.js'
import {runningDaemon} from '../gateway/pidfile.js'
import {ensureHome, homeFile} from '../store/paths.js'
import {withRunKeys} from '../store/run-keys.js'
import type {GatewayState} from '../store/state-schema.js'
import {StateStore} from '../store/state.js'
import {employee, liveKeyId, loadBinder} from './agent-binding.js'
import {daemonClient, gatewayAnswers, startGatewayAsLastRan} from './gateway.js'
import {issueGatewayKey} from './gateway-keys.js'
import {autoModeLocal} from './auto-mode.js'

/** The names `gwctl run` takes for each tool (its own name first). */
const RUN_NAMES: Record<string, RunTool> = {
  'claude-code': 'claude-code',
  claude: 'claude-code',
  codex: 'codex',
  'gemini-cli': 'gemini-cli',
  gemini: 'gemini-cli',
}

export interface RunOptions {
  /** claude-code (claude), codex, gemini-cli (gemini). */
  agent: string
  /** The gateway agent the run's requests are logged under (default: the tool's name). */
  agentName?: string
  /** Policy of the run's key. */
  policyId?: string
  /** Start the gateway when it is not running (else exit 6). */
  start?: boolean
  env?: NodeJS.ProcessEnv
  signal?: AbortSignal
  /** The agent's own arguments (Gemini CLI's `-m` chooses the window it assumes). */
  args?: readonly string[]
}

/** What a run starts, and what the user is told about it. */
export interface RunPlan {
  tool: RunTool
  /** The executable, resolved on PATH. */
  executable: string
  /** Arguments put before the user's. */
  args: string[]
  /** The child's whole environment. */
  env: NodeJS.ProcessEnv
  origin: string
  agentName: string
  agentId: string
  keyPrefix: string
  policyId: string
  /** Where the key came from: the bound config, the kept run key, or a key issued now. */
  keySource: 'binding' | 'run-key' | 'issued'
  /** The gateway was started for this run (`--start`): the command that does the same. */
  startedGateway?: string
  /**
   * The context window the run's upstream stated in a refusal (learned by the running gateway),
   * which the run told the agent so that it compacts in time.
   */
  window?: LearnedWindow
  /**
   * A folder of the run's own that the agent reads while it runs (Gemini CLI's system defaults),
   * removed when it ends: no file of the user's is touched.
   */
  runFolder?: string
}

/** A context window the gateway learned for the first target of a run's route. */
export interface LearnedWindow {
  tokens: number
  provider: string
  model: string
  /** How the agent was told it: the variable or the config keys set. */
  told: string
}

/**
 * The context window of the first target of the run's route (the policy's route for the agent's
 * family), when the running gateway learned it from the upstream's refusal of a longer prompt
 * (`GET /api/adaptations`; docs/TRANSLATION.md, "Compacting in time"). Undefined when none is
 * known, the target names no model, or the gateway does not answer in time (the run goes on).
 */
async function learnedWindow(
  port: number,
  state: GatewayState,
  policyId: string,
  family: 'messages' | 'responses' | 'gemini',
): Promise<{tokens: number; provider: string; model: string} | undefined> {
  const target = state.policies.find((p) => p.id === policyId)?.routes[family]?.[0]
  if (!target?.model) return undefined
  try {
    const res = await (
      await daemonClient(port)
    ).request<{
      adaptations?: Array<{provider: string; model: string; window?: {tokens: number; cut?: boolean}}>
    }>('GET', '/api/adaptations', {headersTimeoutMs: 2000})
    const found = res.body.adaptations?.find(
      (a) => a.provider === target.provider && a.model === target.model,
    )
    // (not a window Ollama cut a prompt to: its fix is the server's setting, and once that is
    // raised the window kept here is stale; doctor says so)
    const tokens = found?.window?.cut ? undefined : found?.window?.tokens
    return typeof tokens === 'number' && tokens > 0
      ? {tokens, provider: target.provider, model: target.model}
      : undefined
  } catch {
    return undefined
  }
}

/**
 * What tells the agent a learned window, so that it compacts before the upstream refuses
 * (../agent-tools/context-window.ts): Claude Code's `CLAUDE_CODE_AUTO_COMPACT_WINDOW` (it takes
 * 100 000 to 1 000 000; below, only a renamed model helps, which doctor says), Codex's `model_context_window` and
 * `model_auto_compact_token_limit` as `-c` overrides; Gemini CLI, which assumes 1 048 576 tokens
 * for every model and has no flag or variable for it, `model.compressionThreshold` in a system
 * defaults file of the run's own (`GEMINI_CLI_SYSTEM_DEFAULTS_PATH`, the lowest of its settings:
 * the user's own defaults file copied into it). Nothing where the user set them already
 * (the variable in the environment, or a window in Claude Code's settings files: the user's, the
 * project's, the local one, `autoCompactWindow` as `/autocompact` writes it included; either key
 * in one of Codex's config.toml files: `CODEX_HOME`'s, the system's, the project's; a threshold in
 * any of Gemini CLI's settings files) or the agent assumes no more.
 */
function windowOverrides(
  tool: RunTool,
  tokens: number,
  env: NodeJS.ProcessEnv,
  cwd: string,
  args: readonly string[],
):
  | {set?: Record<string, string>; args?: string[]; defaults?: Record<string, unknown>; told: string}
  | undefined {
  if (tool === 'claude-code') {
    const setting = claudeCodeWindowSetting(tokens)
    // (below 100 000 only a model name of the user's choosing helps: doctor says so)
    if (setting?.variable !== 'CLAUDE_CODE_AUTO_COMPACT_WINDOW') return undefined
    if (env.CLAUDE_CODE_AUTO_COMPACT_WINDOW !== undefined) return undefined
    if ([agentHome(tool, env).configFile, ...claudeProjectSettings(cwd)].some(claudeSetsCompactWindow))
      return undefined
    return {set: {[setting.variable]: String(setting.value)}, told: setting.variable}
  }
  if (tool === 'codex') {
    const files = [
      agentHome(tool, env).configFile,
      '/etc/codex/config.toml',
      join(cwd, '.codex', 'config.toml'),
    ]
    if (files.some((file) => /^\s*model_(context_window|auto_compact_token_limit)\s*=/m.test(textOf(file))))
      return undefined
    const keys = codexWindowSettings(tokens)
    return {
      args: Object.entries(keys).flatMap(([key, value]) => ['-c', `${key}=${value}`]),
      told: 'model_context_window',
    }
  }
  if (tool === 'gemini-cli') {
    const settings = {userFile: agentHome(tool, env).configFile, cwd, env}
    // (a part of the window it assumes for the model it runs: Gemma 4's is a quarter of the rest's)
    const threshold = geminiCompressionThreshold(
      tokens,
      geminiCliAssumedWindow(geminiCliModel(args, settings)),
    )
    if (threshold === undefined) return undefined
    const defaults = geminiWindowDefaults(threshold, settings)
    return defaults && {defaults, told: `model.compressionThreshold ${threshold}`}
  }
  return undefined
}

/** A file's text; empty when it cannot be read (none there: nothing of the user's to keep). */
function textOf(path: string): string {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return ''
  }
}

/** The tool `name` means, or exit 7 listing the names. */
export function runTool(name: string): RunTool {
  const tool = RUN_NAMES[name]
  if (tool) return tool
  throw new NotFoundError(`Unknown agent "${name}". gwctl run starts: claude-code, codex, gemini-cli.`, {
    code: 'unknown_agent',
    hint: 'For example: gwctl run claude-code -- -p "explain this repo"',
  })
}

/** `name` found on PATH (or a path given with a slash), executable; else undefined. */
export function findExecutable(name: string, env: NodeJS.ProcessEnv): string | undefined {
  const candidates = name.includes('/')
    ? [name]
    : (env.PATH ?? '')
        .split(delimiter)
        .filter((d) => d && isAbsolute(d))
        .map((d) => join(d, name))
  for (const path of candidates) {
    try {
      accessSync(path, constants.X_OK)
      return path
    } catch {
      // not here
    }
  }
  return undefined
}

/**
 * The running gateway's origin; when it is stopped and `start` asks, started as it last ran (the
 * app's `S`: its port and `--sim`); exit 6 when it is down or does not answer.
 */
async function gatewayOrigin(options: RunOptions): Promise<{origin: string; port: number; started?: string}> {
  const running = runningDaemon()
  if (!running) {
    if (!options.start) {
      throw new GatewayDownError('The gateway is not running: a run goes through it.', {
        hint: 'Start it with `gwctl gateway start` (or `--sim` to try it offline), or pass --start.',
      })
    }
    const info = await startGatewayAsLastRan({signal: options.signal})
    return {origin: `http://127.0.0.1:${info.port}`, port: info.port, started: info.plan.command}
  }
  if (!(await gatewayAnswers({signal: options.signal}))) {
    throw new GatewayDownError(`The gateway (pid ${running.pid}) does not answer on port ${running.port}.`, {
      code: 'gateway_unhealthy',
      hint: 'See `gwctl doctor`; `gwctl gateway restart` starts it again.',
    })
  }
  return {origin: `http://127.0.0.1:${running.port}`, port: running.port}
}

/** The key of a bound config when the run must use it (see the module comment), else undefined. */
async function boundKey(
  tool: RunTool,
  state: GatewayState,
  options: RunOptions,
  env: NodeJS.ProcessEnv,
  port: number,
): Promise<{value: string; agentId: string} | undefined> {
  const binding = state.bindings?.find((b) => b.tool === tool)
  const claude = tool === 'claude-code'
  // Claude Code's own settings.json may point it elsewhere: its `env` block wins over ours
  if (!binding && !claude) return undefined
  const binder = await loadBinder(tool)
  const paths = binder.files(agentHome(tool, env))
  const texts = paths.map((p) => {
    try {
      return readFileSync(p, 'utf8')
    } catch {
      return null
    }
  })
  let target: {baseUrl?: string; key?: string}
  try {
    target = binder.target(texts)
  } catch {
    target = {}
  }
  if (claude) {
    // settings Claude Code merges over the environment must not send the run elsewhere: the
    // project's files always, the user's unless it is the binding's own
    const files = [...(binding ? [] : [paths[0]]), ...claudeProjectSettings(process.cwd())]
    for (const file of files) {
      const entries = claudeRouteEntries(file)
      if (entries.length === 0) continue
      throw new ConfigError(
        `${file} sets env.${entries.join(' and env.')}, and Claude Code applies its settings over the environment: this run would not go through the gateway.`,
        {
          code: 'agent_config_overrides',
          hint:
            file === paths[0]
              ? 'Take those entries out of its env block, or bind it with `gwctl agents enable claude-code` (its runs then use that binding).'
              : 'Take those entries out of its env block for this project, or run from another folder.',
        },
      )
    }
  }
  if (!binding) return undefined
  const ownName = (options.agentName ?? tool) === tool
  const live = liveKeyId(state, target.key, binding.agentId)
  const pointsHere = target.baseUrl?.replace(/\/v1\/?$/, '') === `http://127.0.0.1:${port}`
  if (!claude && (!ownName || !live)) return undefined // its overrides win over the bound config
  if (claude && (!live || !pointsHere)) {
    throw new ConfigError(
      `claude-code's bound settings.json ${live ? `points at ${target.baseUrl ?? 'no URL'}, not the running gateway` : 'holds a key the gateway no longer accepts'}, and Claude Code applies it over the environment.`,
      {
        code: 'binding_stale',
        hint: 'Repair the binding with `gwctl agents enable claude-code` (or `--rotate`), then run again.',
      },
    )
  }
  if (claude && !ownName) {
    throw new UsageError(
      `claude-code's settings.json is bound to the gateway as agent "${tool}", and Claude Code applies it over the environment: a run cannot use the key of agent "${options.agentName}".`,
      {
        code: 'bound_agent_name',
        hint: 'Run without --agent-name, or `gwctl agents disable claude-code` first.',
      },
    )
  }
  const agent = state.agents.find((a) => a.id === binding.agentId)
  if (options.policyId && agent && options.policyId !== agent.policyId) {
    throw new UsageError(
      `${tool} is bound (gwctl agents enable) with policy ${agent.policyId}: its runs use that binding's key, so they cannot use policy ${options.policyId}.`,
      {
        code: 'bound_policy',
        hint:
          tool === 'claude-code'
            ? `Change the binding's policy: gwctl agents enable claude-code --policy ${options.policyId}`
            : `Run it as another agent: gwctl run ${tool} --agent-name ${tool}-${options.policyId} --policy ${options.policyId} -- ...`,
      },
    )
  }
  return {value: target.key!, agentId: binding.agentId}
}

/** The run key of `agentName`: kept, or issued now (with `policyId` when it names another). */
async function runKey(
  tool: RunTool,
  agentName: string,
  options: RunOptions,
): Promise<{value: string; agentId: string; issued: boolean}> {
  return withRunKeys(async (keys) => {
    // the state as the daemon last wrote it (a key issued by another run a moment ago included)
    const state = (await StateStore.open(homeFile('state'))).data
    const kept = keys[agentName]
    const live = kept && liveKeyId(state, kept.value, kept.agentId)
    const agent = kept && state.agents.find((a) => a.id === kept.agentId)
    if (kept && live && agent && (!options.policyId || options.policyId === agent.policyId))
      return {value: kept.value, agentId: kept.agentId, issued: false}
    const request = {
      ...(await employee()),
      agentName,
      agentType: TOOL_AGENT_TYPE[tool],
      sourceTool: tool,
      ...(options.policyId ? {policyId: options.policyId} : {}),
    }
    // a key issued for this agent less than 5 s ago (a run killed right after its issue): wait
    const issued = await issueGatewayKey(request, {signal: options.signal, waitOutRateLimit: true})
    keys[agentName] = {
      value: issued.keyValue,
      agentId: issued.agentId,
      issuedAt: Math.floor(Date.now() / 1000),
    }
    return {value: issued.keyValue, agentId: issued.agentId, issued: true}
  })
}

/** Everything a run starts with, checked before anything starts. */
export async function prepareRun(options: RunOptions): Promise<RunPlan> {
  const env = options.env ?? process.env
  const tool = runTool(options.agent)
  const name = AGENT_EXECUTABLE[tool]
  const executable = findExecutable(name, env)
  if (!executable) {
    throw new NotFoundError(`${name} (${tool}) is not on PATH.`, {
      code: 'agent_not_installed',
      hint: `Install it, or put the folder that holds ${name} on PATH.`,
    })
  }
  if (options.agentName !== undefined && !/^[\w.@-]{1,64}$/.test(options.agentName)) {
    throw new UsageError(
      `--agent-name "${options.agentName}" is not a name: use 1-64 letters, digits, dots, dashes, underscores or @.`,
      {code: 'invalid_agent_name'},
    )
  }
  // Gemini CLI's auth type comes from its settings: refused before a key is issued
  const geminiSettings =
    tool === 'gemini-cli'
      ? {userFile: agentHome(tool, env).configFile, cwd: process.cwd(), home: env.HOME ?? homedir()}
      : undefined
  if (geminiSettings) checkGeminiAuth(geminiSettings)
  ensureHome()
  const {origin, port, started} = await gatewayOrigin(options)
  const state = (await StateStore.open(homeFile('state'))).data
  if (options.policyId && !state.policies.some((p) => p.id === options.policyId)) {
    throw new NotFoundError(`No policy "${options.policyId}".`, {
      code: 'policy_not_found',
      hint: `Policies: ${state.policies.map((p) => p.id).join(', ')} (gwctl policies list).`,
    })
  }
  const agentName = options.agentName ?? tool
  const bound = await boundKey(tool, state, options, env, port)
  const key = bound ? {...bound, issued: false} : await runKey(tool, agentName, options)
  const after = (await StateStore.open(homeFile('state'))).data
  const agent = after.agents.find((a) => a.id === key.agentId)
  const overrides = runOverrides(tool, {origin, key: key.value})
  const childEnv: NodeJS.ProcessEnv = {...env}
  for (const name of overrides.unset) delete childEnv[name]
  Object.assign(childEnv, overrides.set)
  const policyId = agent?.policyId ?? options.policyId ?? ''
  const family = tool === 'claude-code' ? 'messages' : tool === 'codex' ? 'responses' : 'gemini'
  const learned = await learnedWindow(port, after, policyId, family)
  const told = learned
    ? windowOverrides(tool, learned.tokens, env, process.cwd(), options.args ?? [])
    : undefined
  if (told?.set) Object.assign(childEnv, told.set)
  // Claude Code's auto mode asks Anthropic's API to classify its actions (`safeguards`), which no
  // other server answers: on a route whose first target is not Anthropic's API it is told not to
  // ask, so that it classifies locally from the start without its blocking notice (the user's own
  // setting stands; ../daemon/router/safeguards.ts)
  if (
    tool === 'claude-code' &&
    env.CLAUDE_CODE_AUTO_MODE_SERVER === undefined &&
    autoModeLocal(after, policyId)
  )
    childEnv.CLAUDE_CODE_AUTO_MODE_SERVER = '0'
  // (its tool search is left on: the gateway loads the deferred tools for a server that does not,
  // ../daemon/router/tool-search.ts, and Anthropic's API keeps the benefit; ENABLE_TOOL_SEARCH=false
  // would lose it on every route)
  // (written last: nothing after it throws before the agent starts, and runAgent removes it)
  let runFolder: string | undefined
  if (told?.defaults) {
    runFolder = mkdtempSync(join(tmpdir(), 'gwctl-run-'))
    const file = join(runFolder, 'system-defaults.json')
    writeFileSync(file, `${JSON.stringify(told.defaults, null, 2)}\n`, {mode: 0o600})
    childEnv.GEMINI_CLI_SYSTEM_DEFAULTS_PATH = file
  }
  return {
    tool,
    executable,
    args: told?.args ? [...overrides.args, ...told.args] : overrides.args,
    env: childEnv,
    origin,
    agentName: agent?.name ?? agentName,
    agentId: key.agentId,
    keyPrefix: displayPrefix(key.value),
    policyId,
    keySource: bound ? 'binding' : key.issued ? 'issued' : 'run-key',
    ...(started ? {startedGateway: started} : {}),
    ...(learned && told ? {window: {...learned, told: told.told}} : {}),
    ...(runFolder ? {runFolder} : {}),
  }
}

/** How the agent ended. */
export interface RunExit {
  code: number | null
  signal: NodeJS.Signals | null
}

/**
 * Starts the agent with the plan and the user's arguments and waits for it. Its standard streams
 * are this process's (a terminal stays a terminal). Signals: a terminal's Ctrl-C, Ctrl-\ and
 * hang-up reach the agent from the terminal itself (one process group), so they are only
 * forwarded when stdin is not a terminal; SIGTERM is always forwarded. This process stays alive
 * until the agent exits, whatever it receives.
 */
export function runAgent(plan: RunPlan, args: string[]): Promise<RunExit> {
  return new Promise((resolve, reject) => {
    const child = spawn(plan.executable, [...plan.args, ...args], {stdio: 'inherit', env: plan.env})
    const fromTerminal = new Set<NodeJS.Signals>(process.stdin.isTTY ? ['SIGINT', 'SIGQUIT', 'SIGHUP'] : [])
    const handlers = new Map<NodeJS.Signals, () => void>()
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGQUIT', 'SIGHUP'] as NodeJS.Signals[]) {
      const handler = (): void => {
        if (!fromTerminal.has(signal) && child.exitCode === null && child.signalCode === null) {
          try {
            child.kill(signal)
          } catch {
            // gone already
          }
        }
      }
      handlers.set(signal, handler)
      process.on(signal, handler)
    }
    const done = (): void => {
      for (const [signal, handler] of handlers) process.off(signal, handler)
      if (plan.runFolder) rmSync(plan.runFolder, {recursive: true, force: true})
    }
    child.once('error', (error) => {
      done()
      reject(
        new GwError('agent_start_failed', `${plan.executable} could not be started: ${error.message}`, 1, {
          hint: 'Check that it is executable and runs on its own.',
        }),
      )
    })
    child.once('exit', (code, signal) => {
      done()
      resolve({code, signal})
    })
  })
}
