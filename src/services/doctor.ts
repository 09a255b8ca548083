/**
 * `gwctl doctor`: a list of independent checks, each with pass/fail, what it found and how to
 * fix it. Later work adds its own checks to {@link DOCTOR_CHECKS} (log database, scan paths).
 */
import {existsSync, readFileSync, readdirSync} from 'node:fs'
import {basename, dirname, join} from 'node:path'

import {
  CLAUDE_CODE_MOST_WINDOW,
  claudeCodeWindowSetting,
  codexWindowSettings,
  GEMINI_CLI_ASSUMED_WINDOW,
  GEMINI_CLI_GEMMA_4_WINDOW,
  geminiCompressionThreshold,
} from '../agent-tools/context-window.js'
import {DEFAULT_PORT, runningDaemon} from '../gateway/pidfile.js'
import {describePortTaken, isPortFree} from '../gateway/port-holder.js'
import {effectiveProviders, platformSettings} from '../gateway/effective-providers.js'
import {policyProblems} from '../gateway/policy.js'
import {routeLabel} from '../gateway/views.js'
import type {OtlpTarget} from '../gateway/telemetry.js'
import {otlpTarget, shownEndpoint} from '../gateway/telemetry.js'
import type {GwError} from '../core/errors.js'
import type {PolicyConfig, ProviderConfig} from '../store/schema.js'
import {FAMILIES} from '../store/schema.js'
import {LogStore, LogWriter} from '../store/log-store.js'
import {fileHasBytes, homeFile, pendingFileOf} from '../store/paths.js'
import {inspectStateFile} from '../store/state.js'
import {upgradeState, validateState} from '../store/state-schema.js'
import {HUNG_HINT, PROBE_TIMEOUT_MS, daemonClient, getGatewayInfo, resolvePort} from './gateway.js'

export interface CheckOutcome {
  ok: boolean
  /** What was found. */
  detail: string
  /** How to fix it (failures). */
  hint?: string
}

export interface DoctorCheck {
  id: string
  title: string
  run(): Promise<CheckOutcome>
}

export interface DoctorResult extends CheckOutcome {
  id: string
  title: string
}

const settingsCheck: DoctorCheck = {
  id: 'settings',
  title: 'Settings file exists and parses',
  async run() {
    const path = homeFile('settings')
    if (!existsSync(path)) {
      // Nothing to parse yet: a fresh install may run on GWCTL_BASE_URL/GWCTL_API_KEY alone.
      const env = ['GWCTL_BASE_URL', 'GWCTL_API_KEY'].filter((name) => process.env[name])
      return {
        ok: true,
        detail:
          env.length > 0
            ? `${path} not created yet (environment variables in use: ${env.join(', ')})`
            : `${path} not created yet (\`gwctl config set\` creates it)`,
      }
    }
    try {
      // an empty file reads as "nothing set", as every command reads it
      const text = readFileSync(path, 'utf8')
      const data = (text.trim() === '' ? {} : JSON.parse(text)) as unknown
      if (!data || typeof data !== 'object' || Array.isArray(data)) throw new Error('not a JSON object')
      return {ok: true, detail: `${path} (${Object.keys(data).length} settings)`}
    } catch (error) {
      return {
        ok: false,
        detail: `${path} does not parse: ${(error as Error).message}`,
        hint: `Fix the JSON by hand, or move it away and set the values again: mv ${path} ${path}.bad`,
      }
    }
  },
}

const stateCheck: DoctorCheck = {
  id: 'state',
  title: 'Gateway state file is schema-valid and private (0600)',
  async run() {
    const check = inspectStateFile(homeFile('state'))
    if (!check.exists)
      return {
        ok: true,
        detail: `${check.path} not created yet (the first key issue or gateway start creates it)`,
      }
    if (check.problems.length > 0) {
      return {
        ok: false,
        detail: `${check.path} is not valid: ${check.problems.slice(0, 3).join('; ')}`,
        hint: `Restore it from a backup, or move it away to start afresh (every key is then lost): mv ${check.path} ${check.path}.bad`,
      }
    }
    if (check.mode !== 0o600) {
      return {
        ok: false,
        detail: `${check.path} has mode ${check.mode?.toString(8).padStart(4, '0')}; it holds the key secret`,
        hint: `chmod 600 ${check.path}`,
      }
    }
    return {ok: true, detail: `${check.path} (valid, 0600)`}
  },
}

function portForCheck(): number {
  try {
    return resolvePort()
  } catch {
    const env = Number(process.env.GWCTL_GATEWAY_PORT)
    return Number.isInteger(env) && env > 0 ? env : DEFAULT_PORT
  }
}

const portCheck: DoctorCheck = {
  id: 'port',
  title: 'Gateway port is not taken by another process',
  async run() {
    // the running daemon listens where `gateway start --port` put it, not where settings say
    const daemon = runningDaemon()
    const port = daemon?.port || portForCheck()
    if (daemon && daemon.port === port)
      return {ok: true, detail: `port ${port} is the gateway's (pid ${daemon.pid})`}
    if (await isPortFree(port)) return {ok: true, detail: `port ${port} is free`}
    return {
      ok: false,
      detail: describePortTaken(port),
      hint: 'Stop that process, or choose another port: `gwctl config set gateway.port <PORT>` or GWCTL_GATEWAY_PORT.',
    }
  },
}

const logDbCheck: DoctorCheck = {
  id: 'log-db',
  title: 'Request log database passes its integrity check',
  async run() {
    const path = homeFile('logDb')
    // the gateway moves a damaged database aside at start (logs.db.damaged-<time>): said here, so
    // the user knows where the older rows went
    const aside = movedAside(path)
    const note =
      aside.length > 0
        ? `; damaged database${aside.length > 1 ? 's' : ''} moved aside by the gateway: ${aside.join(', ')} (delete when no longer needed)`
        : ''
    if (!existsSync(path))
      return {ok: true, detail: `${path} not created yet (the gateway creates it)${note}`}
    const check = await LogStore.check(path)
    if (check.ok) return {ok: true, detail: `${path} (integrity ok)${note}`}
    return {
      ok: false,
      detail: `${path} is damaged: ${check.problems.slice(0, 3).join('; ')}${note}`,
      hint: `Restart the gateway: it moves the damaged database aside (${path}.damaged-<time>) and starts a new one (model traffic does not need it): gwctl gateway restart`,
    }
  },
}

/**
 * How long the check waits for logs.db's write lock before it calls the database locked (ms): as
 * long as a command's apply waits, past a `usage rescan` swap (about 0.5 s on 1 GB of history).
 */
const PENDING_PROBE_BUSY_MS = 2000

/** "12 s", "5 min", "3 h", "2 d" ago. */
function ago(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000))
  if (s < 120) return `${s} s`
  if (s < 7200) return `${Math.round(s / 60)} min`
  if (s < 172_800) return `${Math.round(s / 3600)} h`
  return `${Math.round(s / 86_400)} d`
}

const logPendingCheck: DoctorCheck = {
  id: 'log-pending',
  title: 'Every request the gateway logged is in logs.db (none wait in logs.pending)',
  async run() {
    const path = homeFile('logDb')
    const side = pendingFileOf(path)
    if (!fileHasBytes(side)) return {ok: true, detail: 'no rows wait'}
    const pending = LogWriter.pending(path)
    const torn =
      pending.torn > 0
        ? `; ${pending.torn} line${pending.torn === 1 ? '' : 's'} that do not parse (a write cut off by a crash or a full disk) will be dropped`
        : ''
    if (pending.rows === 0)
      return {
        ok: true,
        detail: `no rows wait (${side} holds only rows already in logs.db; the next apply empties it)${torn}`,
      }
    const oldest =
      pending.oldestMs === null
        ? ''
        : `, the oldest from ${new Date(pending.oldestMs).toISOString()} (${ago(Date.now() - pending.oldestMs)} ago)`
    const what = `${pending.rows} row${pending.rows === 1 ? '' : 's'} of answered requests wait${pending.rows === 1 ? 's' : ''} in ${side}${oldest}${pending.committedKnown ? '' : ' (logs.db could not be read: some may be in it already)'}`
    const daemon = runningDaemon()
    const blocked = existsSync(path) ? LogWriter.probeWrite(path, PENDING_PROBE_BUSY_MS) : undefined
    if (!blocked)
      return {
        ok: true,
        detail: daemon
          ? `${what}; the running gateway (pid ${daemon.pid}) applies them to logs.db within 50 ms${torn}`
          : `${what}; the gateway is stopped: the next \`gwctl logs\` or \`gwctl usage\` applies them to logs.db (so does \`gwctl gateway start\`)${torn}`,
      }
    const why = blocked.busy
      ? `${path} is locked by another process`
      : `${path} cannot be written (${blocked.message})`
    return {
      ok: false,
      detail: `${what}: ${why}, so \`gwctl logs\`, \`gwctl usage\` and budgets do not count them yet${torn}`,
      hint: blocked.busy
        ? `End the process that holds ${path} in a write transaction (a sqlite3 shell, Datasette, a script; \`fuser ${path}\` names the processes that have it open). ${daemon ? 'The running gateway applies the rows within 50 ms of the release' : 'The next `gwctl logs` or `gwctl usage` then applies the rows (so does `gwctl gateway start`)'}; nothing is lost meanwhile.`
        : `Make ${path} writable again (\`ls -l ${path}\`; a read-only mount or another owner), then run \`gwctl logs\` or \`gwctl gateway start\` to apply the rows; nothing is lost meanwhile.`,
    }
  },
}

const policiesCheck: DoctorCheck = {
  id: 'policies',
  title: 'Policies route only to known providers of the same protocol family (or marked for translation)',
  async run() {
    const path = homeFile('state')
    if (!existsSync(path)) return {ok: true, detail: 'no state file yet (seeded policies have no targets)'}
    let data: {policies: PolicyConfig[]; providers: ProviderConfig[]}
    try {
      data = upgradeState(JSON.parse(readFileSync(path, 'utf8'))) as typeof data
    } catch {
      return {ok: true, detail: 'skipped: the state file does not parse (see the state check)'}
    }
    if (validateState(data).length > 0)
      return {ok: true, detail: 'skipped: the state file is not valid (see the state check)'}
    // The simulator's providers exist whenever the gateway runs with --sim.
    let platform
    try {
      platform = platformSettings()
    } catch {
      platform = undefined
    }
    const providers = effectiveProviders(data, {platform, simOrigin: 'http://127.0.0.1:1'})
    const problems = data.policies.flatMap((p) => policyProblems(p, providers))
    if (problems.length === 0) {
      const translated = data.policies.flatMap((p) =>
        FAMILIES.filter((f) => (p.routes[f] ?? []).some((t) => t.translate)).map((f) =>
          routeLabel(p.id, {family: f, targets: (p.routes[f] ?? []).filter((t) => t.translate)}, providers),
        ),
      )
      // a responses provider's --plain-tools other than the default (Codex's tool shapes)
      const plain = providers
        .filter((p) => p.plainTools && p.plainTools !== 'auto')
        .map((p) => `${p.name} ${p.plainTools}`)
      return {
        ok: true,
        detail: `${data.policies.length} policies, ${providers.length} providers known${translated.length > 0 ? `; translated: ${translated.join('; ')}` : ''}${plain.length > 0 ? `; plain tools: ${plain.join(', ')}` : ''}`,
      }
    }
    return {
      ok: false,
      detail:
        problems.slice(0, 5).join('; ') + (problems.length > 5 ? ` (+${problems.length - 5} more)` : ''),
      hint: 'Point each route at providers of its own family (`gwctl providers list`, `gwctl policies ...`), or mark a cross-family target for translation (`gwctl policies route POLICY --family F --target P --translate`), then `gwctl gateway restart`. An unmarked cross-family target is refused with 400 at request time.',
    }
  },
}

const credentialsCheck: DoctorCheck = {
  id: 'credentials',
  title: "Routed providers' key variables are set where the gateway reads them",
  async run() {
    const {listProviders} = await import('./providers.js')
    let list
    try {
      list = await listProviders()
    } catch {
      return {ok: true, detail: 'skipped: the providers cannot be listed (see the state and gateway checks)'}
    }
    // the running gateway says what its own environment lacks; a stopped one starts with this shell's
    const running = list.source === 'gateway'
    const unset = list.providers.filter(
      (p) =>
        p.policies.length > 0 &&
        p.credential !== undefined &&
        'env' in p.credential &&
        (running ? p.credentialUnset === true : !process.env[p.credential.env]),
    )
    if (unset.length === 0) return {ok: true, detail: 'every routed provider with a key variable has it'}
    const where = running
      ? "the running gateway's environment"
      : 'this shell, which `gwctl gateway start` passes on'
    const names = unset.map(
      (p) =>
        `${p.name} (${(p.credential as {env: string}).env}, ${p.policies.length === 1 ? 'policy' : 'policies'} ${p.policies.join(', ')})`,
    )
    const variable = (unset[0].credential as {env: string}).env
    return {
      ok: false,
      detail: `not set in ${where}: ${names.join('; ')}: each request routed to ${unset.length === 1 ? 'it' : 'them'} fails (502)`,
      hint: `The gateway reads a key variable from its own environment, the one it was started from: \`export ${variable}=...\`, then \`gwctl gateway ${running ? 'restart' : 'start'}\` in that shell.`,
    }
  },
}

const gatewayCheck: DoctorCheck = {
  id: 'gateway',
  title: 'A running gateway answers',
  async run() {
    const daemon = runningDaemon()
    if (!daemon) return {ok: true, detail: 'not running (`gwctl gateway start` starts it)'}
    const info = await getGatewayInfo({port: daemon.port})
    if (info.state === 'Running')
      return {ok: true, detail: `pid ${daemon.pid} answers on port ${daemon.port} (${info.version ?? '?'})`}
    return {
      ok: false,
      detail: `pid ${daemon.pid} is alive but did not answer on port ${daemon.port} within ${PROBE_TIMEOUT_MS / 1000} s (hung)`,
      hint: HUNG_HINT,
    }
  },
}

const scanPathsCheck: DoctorCheck = {
  id: 'scan-paths',
  title: "Coding agents' config and history folders are readable (or not installed)",
  async run() {
    const {agentHomes} = await import('../agent-tools/agent-homes.js')
    const {pathReadable} = await import('../agent-tools/discovery.js')
    const found: string[] = []
    const unreadable: string[] = []
    for (const home of agentHomes()) {
      const roots = home.roots.filter((r) => existsSync(r.dir))
      if (roots.length === 0) {
        found.push(`${home.tool}: not installed (looked for ${home.roots.map((r) => r.dir).join(', ')})`)
        continue
      }
      const paths = [...roots.map((r) => r.dir), ...home.historyDirs.filter((d) => existsSync(d))]
      const bad = paths.filter((p) => !pathReadable(p))
      unreadable.push(...bad)
      const history = home.historyDirs.filter((d) => existsSync(d))
      found.push(
        `${home.tool}: ${roots.map((r) => r.dir).join(', ')}${history.length > 0 ? `, history ${history.join(', ')}` : ', no history yet'}${bad.length > 0 ? ' (not readable)' : ''}`,
      )
    }
    if (unreadable.length > 0) {
      return {
        ok: false,
        detail: found.join('; '),
        hint: `gwctl cannot read ${unreadable.join(', ')}: check the owner and mode (ls -ld <folder>).`,
      }
    }
    return {ok: true, detail: found.join('; ')}
  },
}

const bindingsCheck: DoctorCheck = {
  id: 'bindings',
  title: 'Agent bindings point at the current gateway port with a live key',
  async run() {
    const path = homeFile('state')
    if (!existsSync(path)) return {ok: true, detail: 'no agent is bound (`gwctl agents enable <agent>`)'}
    const {StateStore} = await import('../store/state.js')
    let state
    try {
      state = (await StateStore.open(path)).data
    } catch {
      return {ok: true, detail: 'skipped: the state file is not valid (see the state check)'}
    }
    if (!state.bindings?.length)
      return {ok: true, detail: 'no agent is bound (`gwctl agents enable <agent>`)'}
    const {bindingStatuses} = await import('./agent-binding.js')
    // the running gateway's port wins over the configured one (it may run with --port)
    const port = runningDaemon()?.port ?? portForCheck()
    const statuses = await bindingStatuses(state, {port})
    const stale = [...statuses].filter(([, s]) => s.state === 'stale')
    const bound = [...statuses].filter(([, s]) => s.state === 'bound').map(([t]) => t)
    if (stale.length === 0) return {ok: true, detail: `bound: ${bound.join(', ')} (port ${port})`}
    const problems = stale.map(
      ([tool, s]) => `${tool}: ${(s.problems ?? []).map((p) => p.problem).join('; ')}`,
    )
    const fixes = [...new Set(stale.flatMap(([, s]) => (s.problems ?? []).map((p) => `\`${p.fix}\``)))]
    return {
      ok: false,
      detail: `stale binding${stale.length > 1 ? 's' : ''}: ${problems.join(' | ')}`,
      hint: `Fix with ${fixes.join(', ')}; or undo a binding with \`gwctl agents disable <agent>\`. A stopped gateway leaves bindings in place, so bound agents fail fast with "connection refused".`,
    }
  },
}

/** How long the doctor waits for the collector's answer. */
const OTLP_PROBE_MS = 5000

/**
 * Sends an empty OTLP/HTTP trace export (`{}`, a valid ExportTraceServiceRequest with no spans) with
 * the configured headers: a receiver answers 2xx. Undefined when it does, else what went wrong.
 */
async function probeOtlp(target: OtlpTarget): Promise<string | undefined> {
  try {
    const res = await fetch(target.tracesUrl, {
      method: 'POST',
      headers: {...target.headers, 'content-type': 'application/json'},
      body: '{}',
      signal: AbortSignal.timeout(OTLP_PROBE_MS),
    })
    await res.arrayBuffer().catch(() => undefined)
    if (res.ok) return undefined
    return `${shownEndpoint(target.tracesUrl)} answered HTTP ${res.status}${res.status === 401 || res.status === 403 ? ' (check telemetry.headers)' : res.status === 404 ? ' (not an OTLP/HTTP receiver at this path)' : ''}`
  } catch (error) {
    const e = error as Error & {cause?: {code?: string; message?: string}}
    const why =
      e.name === 'TimeoutError'
        ? `no answer within ${OTLP_PROBE_MS / 1000} s`
        : (e.cause?.code ?? e.cause?.message ?? e.message)
    return `${shownEndpoint(target.tracesUrl)} cannot be reached: ${why}`
  }
}

const telemetryCheck: DoctorCheck = {
  id: 'telemetry',
  title: 'OpenTelemetry export reaches its collector',
  async run() {
    let target: OtlpTarget | undefined
    try {
      target = otlpTarget()
    } catch (error) {
      return {ok: false, detail: (error as GwError).message, hint: (error as GwError).hint}
    }
    if (!target)
      return {
        ok: true,
        detail: 'export off (set telemetry.otlp-endpoint to export); Prometheus metrics at /metrics',
      }
    const problems: string[] = []
    const found: string[] = []
    // what the running gateway counted
    const info = runningDaemon() ? await getGatewayInfo().catch(() => undefined) : undefined
    const otlp = info?.daemon?.telemetry?.otlp
    if (otlp && otlp.state !== 'off') {
      const counts = `${otlp.exported} spans sent, ${otlp.queued} queued, ${otlp.dropped} spans dropped`
      if (otlp.state === 'failing') problems.push(`the gateway's exports fail (${otlp.lastError}); ${counts}`)
      else found.push(`the gateway exports: ${counts}`)
    } else if (info?.daemon) {
      found.push('the running gateway was started before the endpoint was set: restart it to export')
    }
    const unreachable = await probeOtlp(target)
    if (unreachable) problems.push(unreachable)
    else found.push(`${shownEndpoint(target.tracesUrl)} answers OTLP`)
    if (problems.length > 0)
      return {
        ok: false,
        detail: [...problems, ...found].join('; '),
        hint: `Start the collector at ${target.endpoint}, or fix telemetry.otlp-endpoint (\`gwctl config set telemetry.otlp-endpoint <URL>\`) and telemetry.headers; spans wait in a bounded queue meanwhile, the oldest dropped.`,
      }
    return {ok: true, detail: found.join('; ')}
  },
}

/** One upstream model's learned refusals, as `GET /api/adaptations` lists them. */
interface LearnedView {
  provider: string
  model: string
  learnedAt: number
  rules: string[]
  window?: {tokens: number; entrance: string; cut?: boolean}
}

/**
 * How to have the agent behind a learned window compact before the upstream refuses (docs/
 * TRANSLATION.md, "Compacting in time"): Claude Code (a Messages entrance) assumes up to 1 000 000 tokens (2.1.3xx; 200 000 before);
 * Codex (a Responses entrance) takes the window and the usage that starts its compaction from its
 * config.toml (`model_context_window`, `model_auto_compact_token_limit`: 90 % of it here);
 * Gemini CLI (a Gemini entrance) assumes 1 048 576 tokens for every model and compresses at the
 * part of it its settings' `model.compressionThreshold` says (80 % of the window here).
 * Undefined when there is nothing to do.
 */
export function windowAdvice(
  window: {tokens: number; entrance: string; cut?: boolean} | undefined,
): string | undefined {
  if (!window) return undefined
  const {tokens, entrance} = window
  // Ollama cut a longer prompt to its context without a word (daemon/router/ollama-cut.ts): the
  // fix is the server's setting; an agent that compacted to a window this small would lose as much
  if (window.cut)
    return `raise OLLAMA_CONTEXT_LENGTH where Ollama runs (64000 or more for an agent: Claude Code's first request alone is 12,000 to 25,000 tokens) or num_ctx in the model's Modelfile, and restart it`
  const assumes = `Claude Code assumes up to ${CLAUDE_CODE_MOST_WINDOW.toLocaleString('en-US')}`
  if (entrance === 'messages') {
    const setting = claudeCodeWindowSetting(tokens)
    if (!setting) return undefined
    return setting.variable === 'CLAUDE_CODE_AUTO_COMPACT_WINDOW'
      ? `${assumes}: set CLAUDE_CODE_AUTO_COMPACT_WINDOW=${tokens} in its environment (or its settings.json env; \`gwctl run claude-code\` sets it) so that it compacts in time`
      : `${assumes}: run it with a model name that does not start with claude- and CLAUDE_CODE_MAX_CONTEXT_TOKENS=${tokens} so that it compacts in time`
  }
  if (entrance === 'responses') {
    const keys = codexWindowSettings(tokens)
    return `for Codex, set model_context_window = ${keys.model_context_window} and model_auto_compact_token_limit = ${keys.model_auto_compact_token_limit} in ~/.codex/config.toml (\`gwctl run codex\` sets them) so that it compacts in time`
  }
  if (entrance === 'gemini') {
    const threshold = geminiCompressionThreshold(tokens)
    if (threshold === undefined) return undefined
    // (the part is of the window it assumes: a quarter of it for its two Gemma 4 models)
    const gemma = geminiCompressionThreshold(tokens, GEMINI_CLI_GEMMA_4_WINDOW)
    const forGemma =
      gemma !== undefined
        ? ` (${gemma} when it runs gemma-4-31b-it or gemma-4-26b-a4b-it, for which it assumes ${GEMINI_CLI_GEMMA_4_WINDOW.toLocaleString('en-US')})`
        : ''
    return `Gemini CLI assumes ${GEMINI_CLI_ASSUMED_WINDOW.toLocaleString('en-US')} tokens for every model but Gemma 4 and compresses at half of it: set "model": {"compressionThreshold": ${threshold}}${forGemma} in ~/.gemini/settings.json (\`gwctl run gemini-cli\` sets it) so that it compresses in time`
  }
  return undefined
}

const adaptationsCheck: DoctorCheck = {
  id: 'translation',
  title: 'What upstreams were found to refuse or to hold (learned since the gateway started)',
  async run() {
    const daemon = runningDaemon()
    if (!daemon) return {ok: true, detail: 'the gateway is not running'}
    let learned: LearnedView[]
    try {
      const res = await (
        await daemonClient(daemon.port)
      ).request<{adaptations?: LearnedView[]}>('GET', '/api/adaptations', {
        headersTimeoutMs: PROBE_TIMEOUT_MS,
      })
      learned = res.body.adaptations ?? []
    } catch (error) {
      // an older daemon, or one that did not answer (the gateway check says which)
      return {ok: true, detail: `not known: ${(error as Error).message}`}
    }
    if (learned.length === 0) return {ok: true, detail: 'nothing refused yet'}
    return {
      ok: true,
      detail: learned
        .map((a) => {
          const advice = windowAdvice(a.window)
          return `${a.provider} ${a.model} (${ago(Date.now() - a.learnedAt)} ago): ${a.rules.join('; ')}${advice ? ` (${advice})` : ''}`
        })
        .join(' | '),
    }
  },
}

/** Every check, in the order printed. Append new checks here. */
export const DOCTOR_CHECKS: DoctorCheck[] = [
  settingsCheck,
  stateCheck,
  portCheck,
  gatewayCheck,
  logDbCheck,
  logPendingCheck,
  policiesCheck,
  credentialsCheck,
  scanPathsCheck,
  bindingsCheck,
  telemetryCheck,
  adaptationsCheck,
]

/**
 * Runs every check (one failing check never stops the others). `healthy` says the same as `ok`,
 * under the name `gwctl status --json` gives its verdict: a script reads one field of either.
 */
export async function runDoctor(
  checks: readonly DoctorCheck[] = DOCTOR_CHECKS,
): Promise<{ok: boolean; healthy: boolean; checks: DoctorResult[]}> {
  const results: DoctorResult[] = []
  for (const check of checks) {
    let outcome: CheckOutcome
    try {
      outcome = await check.run()
    } catch (error) {
      outcome = {ok: false, detail: `the check failed: ${(error as Error).message}`}
    }
    results.push({id: check.id, title: check.title, ...outcome})
  }
  const ok = results.every((r) => r.ok)
  return {ok, healthy: ok, checks: results}
}

/** The files `logs.db.damaged-<time>` beside the log database, oldest first. */
function movedAside(path: string): string[] {
  try {
    const prefix = `${basename(path)}.damaged-`
    return readdirSync(dirname(path))
      .filter((name) => name.startsWith(prefix) && !/-(wal|shm)$/.test(name))
      .sort()
      .map((name) => join(dirname(path), name))
  } catch {
    return []
  }
}
