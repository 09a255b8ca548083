// The opt-in agent-CLI suite (`npm run test:agents`, not part of CI): the real, unmodified Claude
// Code, Codex, Gemini CLI, OpenCode and Qwen Code CLIs each complete one prompt through the
// gateway in front of the simulator, with their own gateway key, all on 127.0.0.1
// (docs/AGENT-CLIS.md for the last two).
//
//   npm run test:agents                    through the gateway (`gwctl gateway start --sim`)
//   npm run test:agents -- --direct        each CLI straight against `gwctl sim` (no gateway)
//   npm run test:agents -- --bind          `gwctl agents enable <agent>` writes each CLI's own config
//                                          (no URL or key in its environment); after
//                                          `gwctl agents disable` the same command must not reach the gateway
//   npm run test:agents -- --run           `gwctl run <agent> -- <args>` for each CLI: its config files
//                                          hash the same before, after, and after a run killed with -9;
//                                          a failing CLI's exit code comes back unchanged
//   npm run test:agents -- --translate     each CLI through translation to each of the other three
//                                          families (a `policies route --translate` policy per run, 9
//                                          runs): a tool call and its second turn must come back
//   npm run test:agents -- --translate --to chat   only these upstream families (comma-separated);
//                                          an agent of a family named runs there too, untranslated
//   npm run test:agents -- --translate --to chat --quirk deepseek-json
//                                          the upstream models with simulator quirks (docs/SIMULATOR.md):
//                                          a refusal the gateway learned and sent again past is no problem
//   npm run test:agents -- --translate --resume   after that first prompt the same CLI is resumed
//                                          (claude --continue, codex exec resume --last, gemini --resume
//                                          latest, opencode run --continue, qwen --continue) in the same
//                                          home and folder, through the same route, with a second prompt
//                                          that makes a tool call too: it must answer, every new row is 200,
//                                          no "Retry attempts exhausted"; to Messages every request for
//                                          JSON (Gemini CLI's router calls) goes as a forced json_answer
//                                          call, to Responses Gemini CLI's and Qwen Code's derived
//                                          prompt_cache_keys are the same after the resume (audit56)
//   npm run test:agents -- --translate --compact   Claude Code (2.1.332) compacts its session after
//                                          the first prompt (and the resumed one, with --resume):
//                                          `claude -p /compact --continue` through the same route (--to
//                                          narrows). Its summary request ("Respond with TEXT ONLY", its
//                                          tools still offered) must reach the upstream, be answered in
//                                          text, and become the session's compact boundary; every new
//                                          row is 200 (audit56: through chat it failed, "summarization
//                                          produced empty response", the sim calling a tool)
//   npm run test:agents -- --pdf           Claude Code and Gemini CLI read a PDF (their file-reading tool)
//   npm run test:agents -- --pdf --quirk text-only   the same on a model that takes no files (DeepSeek)
//                                          through translation to chat: it must reach the upstream as a
//                                          `file` part
//   npm run test:agents -- --tool-search   Claude Code loads a deferred tool (its ToolSearch answers with a
//                                          `tool_reference`, Claude Code 2.1.3xx) through translation to
//                                          each other family (--to narrows): the upstream gets the tool and
//                                          its definition, never the placeholder Claude Code always defers;
//                                          Codex (0.171, gpt-5.5) searches the tools of an MCP server
//                                          (test/agents/mcp-server.js) with its client-run `tool_search`
//                                          through translation to each other family: the upstream calls
//                                          the search, gets the tools it loaded, calls one, and the MCP
//                                          server runs it (--only narrows)
//   npm run test:agents -- --namespace     Codex calls a tool of its `multi_agent_v1` namespace (its
//                                          sub-agent tools, Codex 0.17x) through translation to each other
//                                          family: the call must come back with its namespace, which Codex
//                                          needs to run it
//   npm run test:agents -- --subagent      Codex (gpt-6.2-sol, multi-agent v2) spawns a sub-agent with
//                                          its collaboration spawn_agent, then waits for it, through
//                                          translation to chat and Messages and to a Responses server on
//                                          this machine (a second `gwctl sim`: the plain path; --to narrows
//                                          or names others): the child's task (an `agent_message` item)
//                                          and its report reach the upstream as user turns
//   npm run test:agents -- --lite          Codex on gpt-6.2-sol, a model of its catalog marked
//                                          `use_responses_lite` (Codex 0.144+): its tools come in an
//                                          `additional_tools` input item, not `tools`; through
//                                          translation to each other family (--to narrows) the
//                                          upstream must get them, and Codex must run the call of
//                                          its `exec` (namespace `functions`) and send the second turn;
//                                          `--to responses` passes the Lite request through as Codex
//                                          sent it (with --quirk lite-azure or not-lite: refused once,
//                                          then sent with its tools in `tools`)
//   npm run test:agents -- --web-search    each CLI's web search through translation (Claude Code to
//                                          Responses, Gemini and chat, Gemini CLI to Responses and
//                                          Messages, Codex to Messages; --to narrows): the upstream
//                                          gets it as its own search and the results reach the CLI;
//                                          to chat it is a 400 that says why
//   npm run test:agents -- --only codex    one or more agents (comma-separated: claude, codex,
//                                          gemini, opencode, qwen)
//   npm run test:agents -- --latest        each CLI at its newest version on npm instead of the
//                                          version this suite pins (what users get tomorrow)
//   npm run test:agents -- --version claude=2.1.332,codex=0.171.0
//                                          these versions instead of the pinned ones; a version
//                                          other than the pinned one installs into .cache/<agent>@<version>
//   npm run test:agents -- --keep          keep the temp folders (homes, histories, gateway log)
//   npm run test:agents -- --verbose       print every CLI's stdout and stderr, not only a failing one's
//   npm run test:agents -- --strace        also trace every connect() of each CLI (needs strace): loopback only, no DNS
//
// It installs the CLIs once into test/agents/.cache/<agent> with plain `npm install`, builds gwctl
// when dist/ is missing, and per agent checks: exit 0, the simulator's answer in the output, the
// history file where the CLI keeps it with the usage the simulator sent, and (through the
// gateway) the gateway's log row for the agent with the same tokens.
import {spawn} from 'node:child_process'
import {createHash} from 'node:crypto'
import {existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {basename, dirname, join, resolve} from 'node:path'
import {createInterface} from 'node:readline'
import {setTimeout as sleep} from 'node:timers/promises'
import {fileURLToPath, pathToFileURL} from 'node:url'

import {AGENTS, PROMPT, TOOL_PROMPT} from './agents.js'
import {diff, freePort, getJson, onePagePdf, readJsonl, run, tail} from './lib.js'

const HERE = dirname(fileURLToPath(import.meta.url))
// GWCTL_AGENTS_ROOT: run another checkout's build (e.g. a branch under test) with this suite.
const ROOT = resolve(process.env.GWCTL_AGENTS_ROOT ?? resolve(HERE, '../..'))
const CACHE = join(HERE, '.cache')
const BIN = join(ROOT, 'bin', 'gwctl.cjs')

const argv = process.argv.slice(2)
if (argv.includes('--help') || argv.includes('-h')) {
  console.log(
    'usage: npm run test:agents [-- --direct | --bind | --run | --translate [--to chat,responses,messages,gemini] [--quirk q1,q2] [--model messages=claude-opus-4-8] [--reasoning] [--effort xhigh] [--resume] [--compact] | --pdf | --overflow | --tool-search | --namespace | --subagent | --lite | --web-search] [--only claude,codex,gemini,opencode,qwen] [--latest | --version claude=X,codex=Y] [--keep] [--verbose] [--strace]',
  )
  process.exit(0)
}
const DIRECT = argv.includes('--direct')
const BIND = argv.includes('--bind') && !DIRECT
const RUN = argv.includes('--run') && !DIRECT && !BIND
// --pdf: Claude Code and Gemini CLI read a PDF through translation to chat (Claude Code's Read
// tool's document block, Gemini CLI's read_file inlineData)
const PDF = argv.includes('--pdf')
// --overflow: Claude Code reads a file past a chat model's context window (the sim's `context-8k`):
// the gateway must say "prompt is too long: N tokens > 8192 maximum", which Claude Code compacts on;
// with `--quirk dashscope-context` (lmstudio-, minimax-, vllm-, xinference-) the upstream refuses in
// that vendor's words instead; with `stream-errors` too, inside a 200 stream as LM Studio does
const OVERFLOW = argv.includes('--overflow')
// --tool-search: Claude Code's ToolSearch loads WebFetch (a deferred tool) through translation (the
// sim's `tool-search` quirk calls ToolSearch with the prompt's `select:WebFetch`); Codex's
// `tool_search` loads the tools of the suite's MCP server, deferred (the quirk calls tool_search with
// the prompt's `search:github`, then the loaded tool its `tool:NAME` names)
const TOOL_SEARCH = argv.includes('--tool-search')
/** --tool-search: the prompt of each CLI. */
const TOOL_SEARCH_PROMPT = {
  claude: 'Load the WebFetch tool with ToolSearch (select:WebFetch), then say what you loaded.',
  codex:
    'Find the open gwctl issues: load the GitHub tools (search:github), then call tool:mcp__github__search_issues and say what it found.',
}
/** --tool-search: the MCP tool Codex's search loads and the upstream then calls. */
const MCP_TOOL = 'mcp__github__search_issues'
/** --tool-search: what a call of test/agents/mcp-server.js answers (its CALL_ANSWER). */
const MCP_ANSWER = 'gwctl-suite-mcp answered'
/** --tool-search: the official MCP SDK the suite's MCP server is made with, installed into .cache. */
const MCP_SDK = {pkg: '@modelcontextprotocol/sdk', version: '1.32.2'}
// --namespace: Codex's close_agent of its multi_agent_v1 namespace through translation to chat
// (the sim's `named-tool` quirk calls the tool the prompt names)
const NAMESPACE = argv.includes('--namespace')
const NAMESPACED_TOOL = 'multi_agent_v1__close_agent'
// --lite: Codex on a model of its own catalog marked `use_responses_lite` (gpt-6.2-sol), which sends
// its tools in an `additional_tools` input item instead of `tools`, through translation: the
// upstream must get them, and the call (its `exec` of the `functions` namespace) must run
const LITE = argv.includes('--lite')
const LITE_TOOL = 'functions__exec'
// --subagent: Codex (multi-agent v2, the default of gpt-6.2-sol) spawns a sub-agent with its
// collaboration namespace's spawn_agent (the sim's `named-tool` quirk calls it with arguments of its
// schema); the child's request carries its task in an `agent_message` item
const SUBAGENT = argv.includes('--subagent')
const SUBAGENT_TOOL = 'collaboration__spawn_agent'
const SUBAGENT_PROMPT = `Count the files in this folder and say how many. tool:${SUBAGENT_TOOL} tool:collaboration__wait_agent`
/**
 * --subagent: the upstream families: translated to chat and Messages, and a Responses server that is
 * not OpenAI's (a second `gwctl sim` added as a provider on 127.0.0.1), which gets Codex's request on
 * the plain path (its tools as functions, its `agent_message` items as user messages); `--to`
 * names others (gemini).
 */
const SUBAGENT_TO = ['chat', 'messages', 'responses']
/** --subagent: the plain-path provider's name, and the variable its key is read from. */
const PLAIN_SIM = {name: 'suite-plain-sim', keyEnv: 'GWCTL_SUITE_PLAIN_SIM_KEY'}
/** --subagent: the origin of the plain path's own `gwctl sim` (set once it listens). */
let plainSimOrigin
// --web-search: each CLI's own web search through translation (the sim's `named-tool` quirk calls
// Claude Code's WebSearch and Gemini CLI's google_web_search; Codex's prompt says "search the web")
const WEB_SEARCH = argv.includes('--web-search')
/** --web-search: the upstream families of each CLI's runs (chat: the search must be refused). */
const WEB_SEARCH_TO = {
  claude: ['responses', 'gemini', 'chat'],
  gemini: ['responses', 'messages'],
  // Gemini: a Gemini 3 model, which takes Google Search beside functions (below)
  codex: ['messages', 'gemini'],
}
/** --web-search: the prompt of each CLI (the sim calls the tool named; Codex's words make it search). */
const WEB_SEARCH_PROMPT = {
  claude: 'Find the gwctl release notes with tool:WebSearch and say what it found.',
  gemini: 'Find the gwctl release notes with tool:google_web_search and say what it found.',
  codex: 'Search the web for the gwctl release notes and say what you found.',
}
/** --web-search: the tools each CLI gets (Codex: its own set, with web_search = "live"). */
const WEB_SEARCH_TOOL = {claude: ['WebSearch'], gemini: ['google_web_search']}
// --resume (with --translate): after the first prompt the same CLI is resumed, in the same home and
// work folder and through the same route, with a second prompt that makes a tool call too (what
// showed gaps only a session's second prompt has: audit56)
const RESUME = argv.includes('--resume')
/** --resume: the second prompt (the sims call a tool on "use a tool"). */
const RESUME_PROMPT = 'use a tool again'
/** --resume: each CLI's command line that resumes its latest session with `prompt` (`args`: prepare()'s). */
const RESUME_ARGS = {
  claude: (args) => [...args, '--continue'],
  codex: (args, prompt) => ['exec', 'resume', '--last', '--skip-git-repo-check', prompt],
  gemini: (args) => ['--resume', 'latest', ...args],
  opencode: (args, prompt) => ['run', '--continue', prompt],
  qwen: (args) => ['--continue', ...args],
}
// --compact (with --translate): Claude Code's `/compact` of the session after its first prompt (and
// the resumed one), through the same route
const COMPACT = argv.includes('--compact')
/** --compact: the words that open Claude Code's summary request (2.1.332). */
const COMPACT_WORDS = 'Respond with TEXT ONLY. Do NOT call any tools.'
/**
 * --resume: the CLIs whose requests name no session, whose cache key on a Responses upstream the
 * gateway derives from the conversation (src/protocols/cache-key.ts): it must hold across the resume.
 */
const NO_SESSION_ID = new Set(['gemini', 'qwen'])
const TRANSLATE =
  (argv.includes('--translate') ||
    PDF ||
    OVERFLOW ||
    TOOL_SEARCH ||
    NAMESPACE ||
    LITE ||
    SUBAGENT ||
    WEB_SEARCH) &&
  !DIRECT &&
  !BIND &&
  !RUN
// --reasoning: Codex asks for reasoning and its summary (it sends none for a model it does not know);
// --effort xhigh: at that effort (its `model_reasoning_effort`; implies --reasoning), as a user with
// `xhigh` in their config does (`--quirk ollama-effort`: refused once, then the nearest taken)
const effortAt = argv.indexOf('--effort')
const EFFORT = effortAt >= 0 ? String(argv[effortAt + 1] ?? '') : undefined
const REASONING = argv.includes('--reasoning') || EFFORT !== undefined
const KEEP = argv.includes('--keep')
const VERBOSE = argv.includes('--verbose')
const STRACE = argv.includes('--strace')
const onlyAt = argv.indexOf('--only')
const toAt = argv.indexOf('--to')
const quirkAt = argv.indexOf('--quirk')
/** The emoji the sim's `split-surrogate` quirk streams with its surrogate pair split. */
const SPLIT_EMOJI = '\u{1F600}'
const QUIRKS = [
  ...(quirkAt >= 0
    ? String(argv[quirkAt + 1] ?? '')
        .split(',')
        .filter(Boolean)
    : []),
  // the sim's tool call reads the path the prompt names (docs/SIMULATOR.md)
  ...(PDF || OVERFLOW ? ['read-path'] : []),
  ...(OVERFLOW ? ['context-8k'] : []),
  ...(TOOL_SEARCH ? ['tool-search'] : []),
  ...(NAMESPACE || WEB_SEARCH || SUBAGENT ? ['named-tool'] : []),
]
const TO =
  PDF || OVERFLOW
    ? new Set(['chat'])
    : toAt >= 0
      ? new Set(String(argv[toAt + 1] ?? '').split(','))
      : undefined
const ONLY = PDF
  ? new Set(['claude', 'gemini'])
  : OVERFLOW
    ? new Set(['claude'])
    : NAMESPACE || LITE || SUBAGENT
      ? new Set(['codex'])
      : WEB_SEARCH || TOOL_SEARCH
        ? new Set(
            (TOOL_SEARCH ? ['claude', 'codex'] : Object.keys(WEB_SEARCH_TO)).filter(
              (n) =>
                onlyAt < 0 ||
                String(argv[onlyAt + 1])
                  .split(',')
                  .includes(n),
            ),
          )
        : onlyAt >= 0
          ? new Set(String(argv[onlyAt + 1] ?? '').split(','))
          : COMPACT
            ? new Set(['claude'])
            : undefined
if (
  (RESUME || COMPACT) &&
  (!argv.includes('--translate') ||
    PDF ||
    OVERFLOW ||
    TOOL_SEARCH ||
    NAMESPACE ||
    LITE ||
    SUBAGENT ||
    WEB_SEARCH ||
    DIRECT ||
    BIND ||
    RUN)
) {
  console.error(
    '--resume and --compact go with --translate alone (and --to, --only, --quirk, --model, --reasoning, --effort)',
  )
  process.exit(2)
}
const agents = AGENTS.filter((a) => !ONLY || ONLY.has(a.name))
if (agents.length === 0) {
  console.error(`--only names none of: ${AGENTS.map((a) => a.name).join(', ')}`)
  process.exit(2)
}
// --version NAME=V,... and --latest: other versions of the CLIs than the pinned ones
const LATEST = argv.includes('--latest')
const versionAt = argv.indexOf('--version')
const VERSIONS = new Map()
if (versionAt >= 0)
  for (const pair of String(argv[versionAt + 1] ?? '')
    .split(',')
    .filter(Boolean)) {
    const m = /^([a-z]+)=([\w.+-]+)$/.exec(pair)
    if (!m || !AGENTS.some((a) => a.name === m[1])) {
      console.error(
        `--version takes NAME=VERSION pairs, NAME one of ${AGENTS.map((a) => a.name).join(', ')}: ${pair}`,
      )
      process.exit(2)
    }
    VERSIONS.set(m[1], m[2])
  }

const children = []
process.on('exit', () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL')
})

const log = (line) => console.log(line)

/** Builds gwctl when dist/ is missing (the suite runs the built CLI). */
async function ensureBuilt() {
  if (existsSync(join(ROOT, 'dist', 'commands')) && existsSync(join(ROOT, 'oclif.manifest.json'))) return
  log('building gwctl (npm run build) ...')
  const result = await run('npm', ['run', 'build'], {cwd: ROOT, env: process.env, timeoutMs: 300_000})
  if (result.code !== 0) throw new Error(`npm run build failed:\n${tail(result.stdout + result.stderr)}`)
}

/**
 * The version of each agent this run uses: `--version`'s, npm's newest with `--latest`, else the
 * pinned one. Sets `agent.pinned` to the pinned version when another is used.
 */
async function chooseVersions() {
  for (const agent of agents) {
    let version = VERSIONS.get(agent.name)
    if (!version && LATEST) {
      const result = await run('npm', ['view', agent.pkg, 'version'], {
        cwd: ROOT,
        env: process.env,
        timeoutMs: 60_000,
      })
      version = result.stdout.trim()
      if (result.code !== 0 || !/^[\w.+-]+$/.test(version))
        throw new Error(`npm view ${agent.pkg} version failed:\n${tail(result.stderr || result.stdout)}`)
    }
    if (version && version !== agent.version) {
      agent.pinned = agent.version
      agent.version = version
    }
  }
}

/**
 * Installs an agent CLI into test/agents/.cache/<name> (the pinned version) or
 * .cache/<name>@<version> (another) unless that version is there already.
 */
async function ensureInstalled(agent) {
  const dir = join(CACHE, agent.pinned ? `${agent.name}@${agent.version}` : agent.name)
  const manifest = join(dir, 'node_modules', ...agent.pkg.split('/'), 'package.json')
  if (existsSync(manifest) && JSON.parse(readFileSync(manifest, 'utf8')).version === agent.version)
    return join(dir, 'node_modules', '.bin')
  mkdirSync(dir, {recursive: true})
  if (!existsSync(join(dir, 'package.json'))) writeFileSync(join(dir, 'package.json'), '{"private":true}\n')
  log(`installing ${agent.pkg}@${agent.version} into ${dir} ...`)
  const result = await run('npm', ['install', '--no-audit', '--no-fund', `${agent.pkg}@${agent.version}`], {
    cwd: dir,
    env: process.env,
    timeoutMs: 600_000,
  })
  if (result.code !== 0) throw new Error(`npm install ${agent.pkg} failed:\n${tail(result.stderr)}`)
  return join(dir, 'node_modules', '.bin')
}

/**
 * `--tool-search`: installs the official MCP SDK (MCP_SDK, pinned) into test/agents/.cache/mcp-sdk
 * unless it is there, as the CLIs are (it is no dependency of gwctl); resolves that folder, which
 * test/agents/mcp-server.js loads the SDK from.
 */
async function ensureMcpSdk() {
  const dir = join(CACHE, 'mcp-sdk')
  const manifest = join(dir, 'node_modules', ...MCP_SDK.pkg.split('/'), 'package.json')
  if (existsSync(manifest) && JSON.parse(readFileSync(manifest, 'utf8')).version === MCP_SDK.version)
    return dir
  mkdirSync(dir, {recursive: true})
  if (!existsSync(join(dir, 'package.json'))) writeFileSync(join(dir, 'package.json'), '{"private":true}\n')
  log(`installing ${MCP_SDK.pkg}@${MCP_SDK.version} into ${dir} ...`)
  const result = await run(
    'npm',
    ['install', '--no-audit', '--no-fund', '--prefix', dir, `${MCP_SDK.pkg}@${MCP_SDK.version}`],
    {cwd: dir, env: process.env, timeoutMs: 300_000},
  )
  if (result.code !== 0) throw new Error(`npm install ${MCP_SDK.pkg} failed:\n${tail(result.stderr)}`)
  return dir
}

/** Runs the built gwctl with an isolated home; resolves the parsed --json output. */
async function gwctl(args, env) {
  const result = await run(process.execPath, [BIN, ...args], {cwd: ROOT, env, timeoutMs: 60_000})
  if (result.code !== 0)
    throw new Error(`gwctl ${args.join(' ')} exited ${result.code}:\n${tail(result.stderr || result.stdout)}`)
  return args.includes('--json') ? JSON.parse(result.stdout) : result.stdout
}

/** Starts `gwctl sim` on a free port; resolves its origin. */
async function startSim(env) {
  const port = await freePort()
  const child = spawn(process.execPath, [BIN, 'sim', '--port', String(port)], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  children.push(child)
  let stderr = ''
  child.stderr.on('data', (d) => (stderr += d))
  for await (const line of createInterface({input: child.stdout})) {
    const m = /^base-url: (http:\/\/127\.0\.0\.1:\d+)/.exec(line)
    if (m) return m[1]
  }
  throw new Error(`gwctl sim exited before it listened:\n${tail(stderr)}`)
}

/** The simulator's deterministic answer functions, from the build. */
async function simModules() {
  const load = (name) => import(pathToFileURL(join(ROOT, 'dist', 'sim', 'upstream', `${name}.js`)).href)
  return {messages: await load('messages'), responses: await load('responses'), gemini: await load('gemini')}
}

/** The rows of `GET /api/logs` whatever the envelope; undefined when the route is missing. */
async function gatewayLogs(origin, agentId) {
  const {status, body} = await getJson(`${origin}/api/logs?agent_id=${encodeURIComponent(agentId)}&limit=50`)
  if (status === 404) return undefined
  if (status !== 200)
    throw new Error(`GET /api/logs answered ${status}: ${JSON.stringify(body).slice(0, 300)}`)
  const rows = Array.isArray(body) ? body : (body.logs ?? body.items ?? body.rows ?? body.data ?? [])
  const pick = (row, ...names) => names.map((n) => row[n]).find((v) => v !== undefined)
  return rows.map((row) => ({
    id: pick(row, 'id'),
    requestId: pick(row, 'requestId', 'request_id'),
    upstreamFamily: pick(row, 'upstreamFamily', 'upstream_family'),
    error: pick(row, 'error'),
    upstreamModel: pick(row, 'model'),
    agentId: pick(row, 'agentId', 'agent_id'),
    entrance: pick(row, 'entrance'),
    status: pick(row, 'status'),
    model: pick(row, 'requestedModel', 'requested_model', 'model'),
    usage: {
      input: pick(row, 'inputTokens', 'input_tokens'),
      output: pick(row, 'outputTokens', 'output_tokens'),
      cacheRead: pick(row, 'cacheReadTokens', 'cache_read_tokens'),
      cacheCreation: pick(row, 'cacheCreationTokens', 'cache_creation_tokens'),
    },
  }))
}

/** The inet `connect()` calls of an strace log: off-loopback addresses and DNS (port 53) ones. */
function connectsOf(traceFile) {
  const remote = []
  let dns = 0
  let count = 0
  const text = existsSync(traceFile) ? readFileSync(traceFile, 'utf8') : ''
  for (const line of text.split('\n')) {
    if (!line.includes('connect(') || !/AF_INET6?\b/.test(line)) continue
    count++
    const port = Number(/sin6?_port=htons\((\d+)\)/.exec(line)?.[1])
    const address =
      /inet_addr\("([^"]+)"\)/.exec(line)?.[1] ?? /inet_pton\(AF_INET6, "([^"]+)"/.exec(line)?.[1] ?? '?'
    if (port === 53) dns++
    if (!/^(127\.|::1$|::ffff:127\.)/.test(address)) remote.push(`${address}:${port}`)
  }
  return {remote, dns, count}
}

const fmtUsage = (u) =>
  u ? `in ${u.input} (cache read ${u.cacheRead}, write ${u.cacheCreation}) out ${u.output}` : 'none'

/** Runs one agent and checks what it did. Resolves `{ok, lines}`. */
async function runAgent(agent, setup) {
  const {tmp, origin, binDir, key, sim, simOrigin, bind} = setup
  let {agentId} = setup
  const home = join(tmp, `${agent.name}-home`)
  const workdir = join(tmp, `${agent.name}-work`)
  mkdirSync(join(home, 'tmp'), {recursive: true})
  mkdirSync(workdir, {recursive: true})
  if (simOrigin) await fetch(`${simOrigin}/__sim/requests`, {method: 'DELETE'})

  const {env, args} = setup.prepared ?? agent.prepare({home, binDir, origin, key, bind})
  // `--run`: the CLI started by `gwctl run <tool> --` (setup.exec), not directly
  const command = ['timeout', '120', ...(setup.exec ?? [join(binDir, agent.bin)]), ...args]
  const traceFile = join(tmp, `${agent.name}.strace`)
  if (STRACE) command.unshift('strace', '-f', '-qq', '-e', 'trace=connect', '-o', traceFile)
  const result = await run(command[0], command.slice(1), {cwd: workdir, env})
  const problems = []
  const notes = []
  if (result.code !== 0) problems.push(`exit ${result.code}${result.code === 124 ? ' (timed out)' : ''}`)
  if (STRACE) {
    const {remote, dns, count} = connectsOf(traceFile)
    notes.push(`strace: ${count} inet connect() call(s), ${remote.length} off loopback, ${dns} to port 53`)
    if (remote.length > 0) problems.push(`connected off loopback: ${[...new Set(remote)].join(', ')}`)
    if (dns > 0) problems.push(`made ${dns} DNS connection(s)`)
  }

  // What the simulator answered (when its request record can be read).
  let expected
  let simCalls = []
  if (simOrigin) {
    const {body} = await getJson(`${simOrigin}/__sim/requests`)
    const requests = body.requests ?? []
    // (an agent without simUsage: its history is checked against the gateway's rows instead)
    simCalls = requests
      .filter((r) => r.method === 'POST' && agent.isModelCall(r.path))
      .map((r) => ({path: r.path, ...(agent.simUsage ? agent.simUsage(sim, r.body) : {})}))
    notes.push(`sim saw ${requests.map((r) => `${r.method} ${r.path}`).join(', ') || 'no request'}`)
    const main = simCalls.filter((c) => agent.isMainCall(c.path)).at(-1)
    if (!main) problems.push('the simulator got no model call')
    else if (main.usage) expected = main
  }

  const answer = agent.answerOf(result.stdout)
  const history = agent.history({home, workdir})
  const wanted = expected?.text ?? history.text
  const pong = agent.answer ?? `PONG from sim: ${PROMPT}`
  if (!answer.includes(pong))
    problems.push(`the output has no "${pong}": ${JSON.stringify(answer.slice(0, 200))}`)
  else if (wanted && !answer.includes(wanted))
    problems.push(`the output lacks the answer ${JSON.stringify(wanted)}`)

  if (history.problem) problems.push(`history: ${history.problem}`)
  else {
    notes.push(`history ${history.file.slice(tmp.length + 1)}: ${fmtUsage(history.usage)}`)
    if (expected) problems.push(...diff('history usage', history.usage, expected.usage))
  }

  // `--run`: the agent is known once the run issued its key
  if (typeof agentId === 'function') setup.agentId = agentId = await agentId()
  if (agentId) {
    // Rows are written in batches off the response path: wait briefly for every call's row.
    let rows = await gatewayLogs(origin, agentId)
    for (let i = 0; i < 20 && rows && rows.length < Math.max(1, simCalls.length); i++) {
      await sleep(100)
      rows = await gatewayLogs(origin, agentId)
    }
    if (rows === undefined)
      notes.push('gateway log: SKIPPED (GET /api/logs is 404: the daemon routing wiring has not landed)')
    else {
      notes.push(
        `gateway log: ${rows.length} row(s) for ${agentId}: ${rows.map((r) => `${r.entrance} ${r.status} ${fmtUsage(r.usage)}`).join('; ')}`,
      )
      const ok = rows.filter((r) => r.status === 200 && r.entrance === agent.family)
      const matches = (want) => ok.some((r) => diff('', r.usage, want).length === 0)
      // Every model call the simulator answered (else the one the history records) has its row.
      const wanted =
        simCalls.length > 0 && agent.simUsage ? simCalls.map((c) => c.usage) : [history.usage].filter(Boolean)
      if (ok.length === 0) problems.push(`gateway log: no 200 ${agent.family} row for ${agentId}`)
      for (const want of wanted)
        if (!matches(want)) problems.push(`gateway log: no 200 row with the usage ${fmtUsage(want)}`)
    }
  }
  return {ok: problems.length === 0, ms: result.ms, problems, notes, result}
}

/**
 * Runs `gwctl usage rescan` on the CLI's HOME, then `gwctl usage reconcile --json` for its tool:
 * every request the CLI recorded must be matched, with no token difference. Gemini CLI records no
 * response id, so its requests match by time and model (`matchedByTime`), and it never records
 * its utility calls (the model router's classifier on a lite model): a gateway-only request of a
 * model the history does not hold is that, and is reported; one of a recorded model fails.
 */
async function reconcileCheck(agent, env) {
  await gwctl(['usage', 'rescan', '--tool', agent.tool, '--json'], env)
  const rec = await gwctl(['usage', 'reconcile', '--since', '1d', '--tool', agent.tool, '--json'], env)
  const matched = rec.days.reduce((n, d) => n + d.matched, 0)
  const byTime = rec.days.reduce((n, d) => n + (d.matchedByTime ?? 0), 0)
  const fmt = (list) => list.map((q) => `${q.requestId ?? '(no id)'} (${q.model ?? 'no model'})`).join(', ')
  let onlyGateway = rec.onlyGateway
  if (agent.tool === 'gemini-cli' || agent.recordsEveryCall === false) {
    const {rows} = await gwctl(
      ['usage', '--source', 'history', '--tool', agent.tool, '--pivot', 'model', '--since', '1d', '--json'],
      env,
    )
    const recorded = new Set(rows.map((r) => r.key))
    const utility = onlyGateway.filter((q) => !recorded.has(q.model))
    if (utility.length > 0)
      log(`    gateway-only utility calls (${agent.title} never records them): ${fmt(utility)}`)
    onlyGateway = onlyGateway.filter((q) => recorded.has(q.model))
  }
  if (byTime > 0) log(`    matched ${matched} request(s), ${byTime} of them by time and model`)
  return [
    matched === 0 ? 'no request matched' : undefined,
    rec.onlyHistory.length > 0 ? `only in the history: ${fmt(rec.onlyHistory)}` : undefined,
    onlyGateway.length > 0 ? `only in the gateway log: ${fmt(onlyGateway)}` : undefined,
    rec.differences.length > 0 ? `token differences: ${JSON.stringify(rec.differences)}` : undefined,
  ]
    .filter(Boolean)
    .map((f) => `reconcile: ${f}`)
}

/**
 * `--bind`: the CLI gets only HOME and its no-telemetry settings; `gwctl agents enable` (run with
 * the same HOME) writes the gateway URL and the agent's key into its own config. The request
 * must reach the gateway and be logged for the agent named after the tool. After
 * `gwctl agents disable`, the same command must not reach the gateway.
 */
async function bindAgent(agent, {tmp, origin, bins, sim, simOrigin, gwEnv}) {
  const home = join(tmp, `${agent.name}-home`)
  mkdirSync(join(home, 'tmp'), {recursive: true})
  const prepared = agent.prepare({home, binDir: bins[agent.name], bind: true})
  const leaked = Object.keys(prepared.env).filter((k) =>
    /^(ANTHROPIC_|GOOGLE_|GEMINI_API|GW_KEY|OPENAI_)/.test(k),
  )
  const env = {...gwEnv, HOME: home}
  const enabled = await gwctl(['agents', 'enable', agent.tool, '--json'], env)
  const setup = {tmp, origin, binDir: bins[agent.name], agentId: enabled.agentId, sim, simOrigin, prepared}
  const r = await runAgent(agent, setup)
  if (leaked.length > 0) r.problems.push(`the CLI's environment has ${leaked.join(', ')}`)
  const {body} = await getJson(`${origin}/api/agents`)
  const row = (body.agents ?? []).find((a) => a.agentId === enabled.agentId)
  if (row?.name !== agent.tool)
    r.problems.push(`the gateway's agent is named ${row?.name}, not ${agent.tool}`)
  if (row?.lastSeenAt == null) r.problems.push(`the gateway never saw ${agent.tool}`)
  log(
    `${r.problems.length === 0 ? 'PASS' : 'FAIL'} ${agent.name.padEnd(8)} enable: ${(r.ms / 1000).toFixed(1)} s`,
  )
  for (const note of r.notes) log(`    ${note}`)
  for (const problem of r.problems) log(`    ! ${problem}`)
  if (r.problems.length > 0 || VERBOSE)
    log(`    stdout:\n${tail(r.result.stdout)}\n    stderr:\n${tail(r.result.stderr)}`)

  // The CLI's own history reconciles with the gateway log: every request matched, no token difference.
  const recProblems = await reconcileCheck(agent, env)
  log(`${recProblems.length === 0 ? 'PASS' : 'FAIL'} ${agent.name.padEnd(8)} reconcile`)
  for (const problem of recProblems) log(`    ! ${problem}`)
  r.problems.push(...recProblems)

  // disable: the same command no longer reaches the gateway
  await gwctl(['agents', 'disable', agent.tool], env)
  const before = (await gatewayLogs(origin, enabled.agentId))?.length ?? 0
  const workdir = join(tmp, `${agent.name}-work`)
  const command = ['timeout', '60', join(bins[agent.name], agent.bin), ...prepared.args]
  const after = await run(command[0], command.slice(1), {cwd: workdir, env: prepared.env})
  await sleep(500)
  const rows = (await gatewayLogs(origin, enabled.agentId))?.length ?? 0
  const offProblems = []
  if (rows !== before) offProblems.push(`after disable the gateway logged ${rows - before} more request(s)`)
  if (after.stdout.includes(agent.answer ?? `PONG from sim: ${PROMPT}`))
    offProblems.push('after disable it still got the answer')
  log(
    `${offProblems.length === 0 ? 'PASS' : 'FAIL'} ${agent.name.padEnd(8)} disable: exit ${after.code}, gateway rows ${before} -> ${rows}`,
  )
  for (const problem of offProblems) log(`    ! ${problem}`)
  const problems = [...r.problems, ...offProblems]
  return {agent: agent.name, ok: problems.length === 0, seconds: Math.round(r.ms / 100) / 10, problems}
}

/** The files `agents enable` would change, per CLI (a run must leave them byte for byte). */
const CONFIG_FILES = {
  claude: ['.claude/settings.json'],
  codex: ['.codex/config.toml'],
  gemini: ['.gemini/settings.json', '.gemini/.env'],
}

/**
 * `--run`: `gwctl run <tool> -- <args>` starts the CLI with only HOME and its no-telemetry settings
 * of its own: gwctl points it at the gateway by environment and command-line overrides. The
 * request must reach the gateway under the agent named after the tool, the history must reconcile,
 * the CLI's config files must hash the same before and after (and after a run killed with -9),
 * and a CLI that fails must fail with its own exit code.
 */
async function runMode(agent, {tmp, origin, bins, sim, simOrigin, gwEnv}) {
  const home = join(tmp, `${agent.name}-home`)
  const workdir = join(tmp, `${agent.name}-work`)
  mkdirSync(join(home, 'tmp'), {recursive: true})
  mkdirSync(workdir, {recursive: true})
  const prepared = agent.prepare({home, binDir: bins[agent.name], bind: true, run: true})
  const env = {
    ...prepared.env,
    GWCTL_HOME: gwEnv.GWCTL_HOME,
    GWCTL_GATEWAY_PORT: gwEnv.GWCTL_GATEWAY_PORT,
    NO_COLOR: '1',
    NODE_EXTRA_CA_CERTS: '',
  }
  const files = CONFIG_FILES[agent.name].map((rel) => join(home, rel))
  const hashes = () =>
    files.map((f) => (existsSync(f) ? createHash('sha256').update(readFileSync(f)).digest('hex') : 'absent'))
  const before = hashes()
  const exec = [process.execPath, BIN, 'run', agent.tool, '--']
  const agentId = async () => {
    const {agents: list} = await gwctl(['agents', 'list', '--json'], {...gwEnv, HOME: home})
    return list.find((a) => a.name === agent.tool)?.agentId
  }
  const r = await runAgent(agent, {
    tmp,
    origin,
    binDir: bins[agent.name],
    agentId,
    sim,
    simOrigin,
    prepared: {env, args: prepared.args},
    exec,
  })
  if (String(hashes()) !== String(before)) r.problems.push('a config file changed during the run')
  if (!/gwctl: .* through the gateway at /.test(r.result.stderr))
    r.problems.push("gwctl's line about the run is missing from stderr")
  log(
    `${r.problems.length === 0 ? 'PASS' : 'FAIL'} ${agent.name.padEnd(8)} run: ${(r.ms / 1000).toFixed(1)} s`,
  )
  for (const note of r.notes) log(`    ${note}`)
  for (const problem of r.problems) log(`    ! ${problem}`)
  if (r.problems.length > 0 || VERBOSE)
    log(`    stdout:\n${tail(r.result.stdout)}\n    stderr:\n${tail(r.result.stderr)}`)
  const recProblems = await reconcileCheck(agent, {...gwEnv, HOME: home})
  log(`${recProblems.length === 0 ? 'PASS' : 'FAIL'} ${agent.name.padEnd(8)} reconcile`)
  for (const problem of recProblems) log(`    ! ${problem}`)

  // killed with -9 a moment into the run: nothing of the user's was written, so nothing is torn
  const extra = []
  const child = spawn('timeout', ['60', ...exec, ...prepared.args], {
    cwd: workdir,
    env,
    stdio: 'ignore',
    detached: true,
  })
  await sleep(700)
  try {
    process.kill(-child.pid, 'SIGKILL')
  } catch {
    // it ended already
  }
  await sleep(300)
  if (String(hashes()) !== String(before)) extra.push('a config file changed after a run killed with -9')
  // a failing CLI: the same exit code through gwctl as on its own
  const bad = [...prepared.args, '--no-such-flag-for-gwctl-suite']
  const own = await run(join(bins[agent.name], agent.bin), bad, {cwd: workdir, env, timeoutMs: 60_000})
  const through = await run(process.execPath, [...exec.slice(1), ...bad], {
    cwd: workdir,
    env,
    timeoutMs: 60_000,
  })
  if (own.code === 0) extra.push(`${agent.bin} exited 0 on an unknown flag: no failing run to compare`)
  else if (through.code !== own.code)
    extra.push(`a failing run exited ${through.code} through gwctl, ${own.code} on its own`)
  log(
    `${extra.length === 0 ? 'PASS' : 'FAIL'} ${agent.name.padEnd(8)} run killed -9: files unchanged; failing run: exit ${through.code} (on its own ${own.code})`,
  )
  for (const problem of extra) log(`    ! ${problem}`)
  const problems = [...r.problems, ...recProblems, ...extra]
  return {agent: agent.name, ok: problems.length === 0, seconds: Math.round(r.ms / 100) / 10, problems}
}

/**
 * A Responses request's tools as OpenAI reads them: `tools`, and those of Codex's `additional_tools`
 * input item (its Lite request, passed through to a Responses upstream as Codex sent it).
 */
const responsesTools = (b) => [
  ...(b.tools ?? []),
  ...(Array.isArray(b.input) ? b.input : []).flatMap((i) =>
    i.type === 'additional_tools' && Array.isArray(i.tools) ? i.tools : [],
  ),
]

/**
 * `--translate`: the upstream model of each target family, and what a model call, a second turn
 * (a request ending with a tool result) and the reasoning it must carry back look like in it.
 */
const UPSTREAMS = {
  chat: {
    model: 'sim-reasoner',
    isModelCall: (path) => /\/chat\/completions$/.test(path),
    isTurn2: (b) => b.messages?.at(-1)?.role === 'tool',
    hasTools: (b) => Array.isArray(b.tools) && b.tools.length > 0,
    // DeepSeek style: thinking is on for a `reasoner` model unless the request turns it off
    asksReasoning: (b) => /reasoner/.test(b.model ?? '') && b.enable_thinking !== false,
    // DeepSeek's field, or Cerebras's and OpenRouter's (each goes back in the one it came in)
    carriesReasoning: (b) =>
      (b.messages ?? []).some(
        (m) => m.role === 'assistant' && m.tool_calls && (m.reasoning_content || m.reasoning),
      ),
    toolNames: (b) => (b.tools ?? []).map((t) => t.function?.name),
    resultTexts: (b) => (b.messages ?? []).filter((m) => m.role === 'tool').map((m) => textOf(m.content)),
    // no search of its own: anything search-like (a tool other than a function, OpenAI's search
    // models' `web_search_options`, Claude Code's sub-request words) must never reach it
    searchTools: (b) => [
      ...(b.tools ?? []).filter((t) => t.type !== 'function'),
      ...(b.web_search_options === undefined ? [] : [{web_search_options: b.web_search_options}]),
      ...(JSON.stringify(b.messages ?? []).includes('Perform a web search for the query')
        ? [{words: 'Perform a web search for the query'}]
        : []),
    ],
  },
  responses: {
    model: 'gpt-5',
    isModelCall: (path) => /\/responses$/.test(path),
    isTurn2: (b) => Array.isArray(b.input) && /_call_output$/.test(b.input.at(-1)?.type ?? ''),
    hasTools: (b) => responsesTools(b).length > 0,
    asksReasoning: (b) => b.reasoning != null,
    carriesReasoning: (b) =>
      (Array.isArray(b.input) ? b.input : []).some((i) => i.type === 'reasoning' && i.encrypted_content),
    // functions and custom tools, a namespace's as `namespace__name` (as translation names them)
    toolNames: (b) =>
      responsesTools(b).flatMap((t) =>
        t.type === 'namespace'
          ? (t.tools ?? [])
              .filter((f) => f.type === 'function' || f.type === 'custom')
              .map((f) => `${t.name}__${f.name}`)
          : t.type === 'function' || t.type === 'custom'
            ? [t.name]
            : [],
      ),
    searchTools: (b) => (b.tools ?? []).filter((t) => /^web_search/.test(t.type ?? '')),
    resultTexts: (b) =>
      (Array.isArray(b.input) ? b.input : [])
        .filter((i) => /_call_output$/.test(i.type ?? ''))
        .map((i) => textOf(i.output)),
  },
  messages: {
    model: 'claude-sonnet-4-6',
    isModelCall: (path) => /\/messages$/.test(path),
    isTurn2: (b) => (b.messages?.at(-1)?.content ?? []).some?.((c) => c.type === 'tool_result') ?? false,
    hasTools: (b) => Array.isArray(b.tools) && b.tools.length > 0,
    asksReasoning: (b) => b.thinking != null && b.thinking.type !== 'disabled',
    carriesReasoning: (b) =>
      (b.messages ?? []).some(
        (m) =>
          m.role === 'assistant' &&
          Array.isArray(m.content) &&
          m.content.some((c) => c.type === 'thinking' || c.type === 'redacted_thinking'),
      ),
    toolNames: (b) => (b.tools ?? []).filter((t) => !t.type || t.type === 'custom').map((t) => t.name),
    searchTools: (b) => (b.tools ?? []).filter((t) => /^web_search_/.test(t.type ?? '')),
    resultTexts: (b) =>
      (b.messages ?? []).flatMap((m) =>
        Array.isArray(m.content)
          ? m.content.filter((c) => c.type === 'tool_result').map((c) => textOf(c.content))
          : [],
      ),
  },
  gemini: {
    model: 'gemini-2.5-flash',
    isModelCall: (path) => /:(stream)?[gG]enerateContent$/.test(path),
    isTurn2: (b) => (b.contents?.at(-1)?.parts ?? []).some((p) => p.functionResponse),
    hasTools: (b) => (b.tools ?? []).some((t) => (t.functionDeclarations ?? []).length > 0),
    asksReasoning: (b) => {
      const budget = b.generationConfig?.thinkingConfig?.thinkingBudget
      return b.generationConfig?.thinkingConfig != null && budget !== 0
    },
    carriesReasoning: (b) =>
      (b.contents ?? []).some((c) => (c.parts ?? []).some((p) => p.functionCall && p.thoughtSignature)),
    toolNames: (b) => (b.tools ?? []).flatMap((t) => (t.functionDeclarations ?? []).map((d) => d.name)),
    searchTools: (b) => (b.tools ?? []).filter((t) => t.googleSearch || t.google_search),
    resultTexts: (b) =>
      (b.contents ?? []).flatMap((c) =>
        (c.parts ?? []).filter((p) => p.functionResponse).map((p) => textOf(p.functionResponse.response)),
      ),
  },
}
// --web-search: Codex's live search beside its functions reaches Gemini 3 only (Gemini 2.5 refuses
// the two together), so the Gemini upstream is a Gemini 3 model there
if (WEB_SEARCH) UPSTREAMS.gemini.model = 'gemini-3-flash-preview'
// --model FAMILY=NAME,...: the simulator's model of an upstream family (e.g. messages=claude-opus-4-8,
// which takes adaptive thinking only and no temperature, as Anthropic's Opus 4.7 on do)
const modelAt = argv.indexOf('--model')
if (modelAt >= 0)
  for (const pair of String(argv[modelAt + 1] ?? '')
    .split(',')
    .filter(Boolean)) {
    const [family, name] = pair.split('=')
    if (!UPSTREAMS[family] || !name) {
      console.error(`--model takes FAMILY=NAME with FAMILY one of ${Object.keys(UPSTREAMS).join(', ')}`)
      process.exit(2)
    }
    UPSTREAMS[family].model = name
  }

/** A tool result's text in any family's shape: a string, text parts, or a JSON value. */
function textOf(content) {
  if (typeof content === 'string') return content
  if (Array.isArray(content))
    return content.map((c) => (typeof c === 'string' ? c : (c?.text ?? ''))).join('')
  if (content && typeof content === 'object') {
    const inner = content.output ?? content.content ?? content.result
    return typeof inner === 'string' ? inner : JSON.stringify(content)
  }
  return ''
}
const FAMILY_NAMES = Object.keys(UPSTREAMS).filter((f) => !TO || TO.has(f))
/**
 * The upstream families an agent runs through translation to (`--web-search`: its own list); its
 * own family too when `--to` names it (passed through untranslated, with the quirks: qwen-code on
 * a chat server with `--to chat --quirk gemini-schema`), except Codex's `--tool-search`: a
 * Responses upstream runs Codex's search items itself, which the simulator does not.
 */
const upstreamsOf = (agent) =>
  WEB_SEARCH
    ? WEB_SEARCH_TO[agent.name].filter((f) => FAMILY_NAMES.includes(f))
    : SUBAGENT
      ? TO
        ? FAMILY_NAMES
        : SUBAGENT_TO
      : FAMILY_NAMES.filter(
          (f) => f !== agent.family || (TO?.has(f) && !(TOOL_SEARCH && agent.name === 'codex')),
        )
const runsOf = (list) => list.reduce((n, a) => n + upstreamsOf(a).length, 0)
const translatePolicy = (agent, up) => `suite-${agent.name}-to-${up}`
/** A log row's note for usage the upstream did not report (quirk `no-usage`), estimated. */
const ESTIMATED = /^usage estimated \(chars\/4\): \S+ reported no (?:input|output|input and output) tokens$/
/** --web-search: the gateway's words refusing a search for a chat completions upstream. */
const CHAT_SEARCH_REFUSAL = /web search cannot be translated to a chat completions upstream/
/** --web-search: the simulator's two results of one search in a text (docs/SIMULATOR.md), else []. */
function searchLinks(text) {
  const slug = /https:\/\/example\.com\/search\/([a-z0-9-]+)\/1\b/.exec(String(text))?.[1]
  const links = [1, 2].map((n) => `https://example.com/search/${slug}/${n}`)
  return slug && links.every((l) => String(text).includes(l)) ? links : []
}

/**
 * One `--overflow` run: Claude Code on a chat model with a window of 8 192 tokens reads a file
 * of about 20 000. The upstream refuses the turn with the file in DeepSeek's words; the gateway
 * must tell Claude Code "prompt is too long: N tokens > 8192 maximum", and Claude Code must act on
 * it: compact the conversation (its summarization request) instead of stopping at an unknown 400.
 */
/** --overflow: the upstream's refusal of a prompt past its window, in each vendor's words the sim has. */
const OVERFLOW_WORDS =
  /maximum context length is 8192|Range of input length should be|context length of only 8192|context window exceeds limit|decoder prompt \(length \d+\) is longer|Context size has been exceeded|Current length is \d+ while limit is 8192|context length only supports 8192 tokens/

async function overflowRun(agent, up, {tmp, origin, binDir, key, agentId, simOrigin}) {
  const home = join(tmp, `${agent.name}-overflow-home`)
  const workdir = join(tmp, `${agent.name}-overflow-work`)
  mkdirSync(join(home, 'tmp'), {recursive: true})
  mkdirSync(workdir, {recursive: true})
  const bigPath = join(workdir, 'big.txt')
  writeFileSync(
    bigPath,
    Array.from({length: 1500}, (_, i) => `line ${i}: the quick brown fox jumps over the lazy dog`).join('\n'),
  )
  const smallPath = join(workdir, 'small.txt')
  writeFileSync(smallPath, 'a short file\n')
  await fetch(`${simOrigin}/__sim/requests`, {method: 'DELETE'})
  // a first exchange (a short file read), then the conversation goes on (`--continue`) with the
  // long file: a conversation of several rounds, which is what compaction summarises
  const claude = async (prompt, more = []) => {
    const {env, args} = agent.prepare({home, binDir, origin, key, prompt, tools: [agent.readTool]})
    const command = ['timeout', '240', join(binDir, agent.bin), ...args, ...more]
    return run(command[0], command.slice(1), {cwd: workdir, env, timeoutMs: 250_000})
  }
  const first = await claude(`Read ${smallPath} and summarise it.`)
  const result = await claude(`Read ${bigPath} and summarise it.`, ['--continue'])
  result.ms += first.ms
  const problems = []
  const notes = [
    `claude exited ${first.code}, then ${result.code}: ${agent.answerOf(result.stdout).slice(0, 120)}`,
  ]
  const {body} = await getJson(`${simOrigin}/__sim/requests`)
  if (KEEP)
    writeFileSync(join(tmp, `${agent.name}-overflow-sim-requests.json`), JSON.stringify(body, null, 2))
  const calls = (body.requests ?? []).filter((r) => r.method === 'POST' && UPSTREAMS[up].isModelCall(r.path))
  const summarising = calls.filter((r) => JSON.stringify(r.body).includes('create a detailed summary'))
  let rows = (await gatewayLogs(origin, agentId)) ?? []
  for (let i = 0; i < 20 && rows.length < calls.length; i++) {
    await sleep(100)
    rows = (await gatewayLogs(origin, agentId)) ?? []
  }
  rows.sort((a, b) => a.id - b.id)
  // DeepSeek's words, or another vendor's where a quirk asks for them (`--quirk minimax-context`)
  // (a 400, or the 200 stream whose error event said it: `--quirk lmstudio-fit-context,stream-errors`)
  const refused = rows.filter(
    (r) => (r.status === 400 || r.status === 200) && OVERFLOW_WORDS.test(r.error ?? ''),
  )
  notes.push(
    `sim (${up}) saw ${calls.length} model call(s), ${summarising.length} of them Claude Code's summarization (compaction)`,
    `gateway log: ${rows.map((r) => `${r.status}${r.error ? ` (${r.error.slice(0, 90)}…)` : ''}`).join('; ')}`,
  )
  if (refused.length === 0) problems.push('the upstream never refused a prompt past its window (the premise)')
  else if (summarising.length === 0)
    problems.push('Claude Code did not compact after the gateway said "prompt is too long"')
  // the window the refusal stated is kept, for doctor to say how to have Claude Code compact in time
  const {body: learned} = await getJson(`${origin}/api/adaptations`)
  const windows = (learned.adaptations ?? []).filter((a) => a.window)
  notes.push(
    `windows kept: ${windows.map((a) => `${a.provider} ${a.model} ${a.window.tokens} (${a.window.entrance})`).join('; ') || 'none'}`,
  )
  // (MiniMax's and LM Studio's MLX engine's words state no window: none to keep)
  if (
    refused.length > 0 &&
    !QUIRKS.includes('minimax-context') &&
    !QUIRKS.includes('lmstudio-mlx-context') &&
    !windows.some((a) => a.window.tokens === 8192 && a.window.entrance === 'messages')
  )
    problems.push("the gateway did not keep the window of 8 192 tokens the upstream's refusal stated")
  return {ok: problems.length === 0, ms: result.ms, problems, notes, result}
}

/** --subagent: the words of the task the sim's spawn_agent call gives the child (the prompt's). */
const SUBAGENT_TASK = 'Count the files in this folder and say how many.'

/**
 * --subagent: the text parts of an upstream request's user turns, each on its own: chat's and
 * Messages' user messages, Responses' user messages (input_text parts), Gemini's user contents.
 */
function userTexts(up, body) {
  const texts = (content) =>
    typeof content === 'string'
      ? [content]
      : (Array.isArray(content) ? content : [])
          .filter((c) => typeof c.text === 'string' && (c.type ?? 'text') !== 'thinking')
          .map((c) => c.text)
  if (up === 'responses')
    return (Array.isArray(body.input) ? body.input : [])
      .filter((i) => (i.type ?? 'message') === 'message' && i.role === 'user')
      .flatMap((i) => texts(i.content))
  if (up === 'gemini')
    return (body.contents ?? []).filter((c) => c.role === 'user').flatMap((c) => texts(c.parts))
  return (body.messages ?? []).filter((m) => m.role === 'user').flatMap((m) => texts(m.content))
}

/**
 * --subagent: what the upstream saw of the sub-agent: spawn_agent's result (Codex's answer to the
 * call), the child's task as a user turn, wait_agent's result, the child's report to the parent,
 * and how many requests still held an `agent_message` item (none may: another vendor, or a
 * Responses server that is not OpenAI's, cannot read it).
 */
function subagentTurns(up, calls) {
  const fam = UPSTREAMS[up]
  const results = calls.flatMap((r) => fam.resultTexts(r.body))
  const texts = calls.flatMap((r) => userTexts(up, r.body))
  return {
    spawned: results.find((t) => /task_name/.test(t)),
    task: texts.find((t) => /^Message from \/root:\n/.test(t) && t.includes(SUBAGENT_TASK)),
    waited: results.some((t) => /Wait completed|timed_out/.test(t)),
    report: texts.find((t) => /^Message from \/root\/\w+:\n/.test(t)),
    items: calls.filter((r) => JSON.stringify(r.body).includes('"type":"agent_message"')).length,
  }
}

/**
 * The problems of a `--translate` run's gateway log rows: each one 200 with no note (but one a
 * quirk of the run is testing), from the agent's entrance, and translated to `up` (none when `up`
 * is the agent's own family, passed through).
 */
function rowProblems(agent, up, rows) {
  const problems = []
  for (const r of rows) {
    // with --quirk, a refusal the gateway learned and sent again past is what is being tested, with
    // `no-usage` the estimate of the usage the upstream did not report (every row has it), and with
    // `pause-turn` the continuation of a paused turn
    const notes = r.error ? r.error.split('; ') : []
    const estimated = notes.some((n) => ESTIMATED.test(n))
    const tested = (n) =>
      (QUIRKS.length > 0 && /^\S+ refused .*: sent again/.test(n)) ||
      (QUIRKS.includes('no-usage') && ESTIMATED.test(n)) ||
      // `pause-turn`: the gateway continued the paused turn (its note, the row's usage every call's)
      (QUIRKS.includes('pause-turn') &&
        /^\S+ paused the turn \(pause_turn\): continued \d+ times?$/.test(n)) ||
      // `think-open-in-prompt`: the gateway learned the model's template from its first answer
      (QUIRKS.includes('think-open-in-prompt') &&
        /^\S+: the answer closed a <\/think> it never opened/.test(n)) ||
      // `no-finish-reason`, `vendor-finish`, `broken-finish` on a chat client's pass-through: the
      // gateway learned to write OpenAI's finish in this provider's streams
      (QUIRKS.some((q) => ['no-finish-reason', 'vendor-finish', 'broken-finish'].includes(q)) &&
        /streamed (?:no finish_reason|finish_reason \S+), which AI SDK clients/.test(n)) ||
      // `single-quote-args`, `trailing-comma-args`, `fenced-args`, `python-literal-args`,
      // `parameter-args`: the call's arguments repaired
      (QUIRKS.some(
        (q) => /-args$/.test(q) && q !== 'cut-args' && q !== 'empty-args' && q !== 'object-args',
      ) &&
        /^\S+: repaired (?:a tool call's|\d+ tool calls') arguments/.test(n))
    if (r.status !== 200 || !notes.every(tested))
      problems.push(`gateway log: row ${r.id} is ${r.status} ${r.error ?? ''}`)
    if (QUIRKS.includes('no-usage') && r.status === 200 && !estimated)
      problems.push(`gateway log: row ${r.id} has no estimate of the usage the upstream did not report`)
    if (r.entrance !== agent.family) problems.push(`gateway log: row ${r.id} entrance ${r.entrance}`)
    // (a row passed through untranslated names no upstream family: its entrance's is the upstream's)
    const wantFamily = up === agent.family ? null : up
    if (r.upstreamFamily !== wantFamily)
      problems.push(`gateway log: row ${r.id} upstream_family ${r.upstreamFamily}, want ${wantFamily}`)
  }
  return problems
}

/**
 * One `--translate` run: the CLI on a policy whose route for its family is `sim-<up>:<model>`
 * with `translate: true`. The prompt makes the sim call the CLI's first tool; the CLI runs it and
 * sends the result back, and the upstream must get that second turn (with the reasoning of the
 * first when it asked for reasoning) and answer it ("The tool answered: ...").
 */
async function translateRun(agent, up, {tmp, origin, binDir, key, agentId, simOrigin: gatewaySim, mcpSdk}) {
  // --subagent's Responses run: the plain path's own simulator got the requests
  const simOrigin = SUBAGENT && up === 'responses' ? plainSimOrigin : gatewaySim
  const home = join(tmp, `${agent.name}-to-${up}-home`)
  const workdir = join(tmp, `${agent.name}-to-${up}-work`)
  mkdirSync(join(home, 'tmp'), {recursive: true})
  mkdirSync(workdir, {recursive: true})
  writeFileSync(join(workdir, 'notes.txt'), 'a file for the tool to find\n')
  const pdfPath = join(workdir, 'report.pdf')
  const pdf = PDF ? onePagePdf('Quarterly revenue rose 12 percent.') : undefined
  // --tool-search: Codex's MCP tools, deferred behind its tool_search
  const mcpTools = TOOL_SEARCH && agent.name === 'codex'
  const mcpLog = join(tmp, `${agent.name}-to-${up}-mcp-calls.jsonl`)
  if (pdf) writeFileSync(pdfPath, pdf)
  await fetch(`${simOrigin}/__sim/requests`, {method: 'DELETE'})

  const {env, args} = agent.prepare({
    home,
    binDir,
    origin,
    key,
    prompt: pdf
      ? `Read ${pdfPath} and summarise it.`
      : TOOL_SEARCH
        ? TOOL_SEARCH_PROMPT[agent.name]
        : NAMESPACE
          ? `Close the sub-agent a1 with tool:${NAMESPACED_TOOL} and say what it answered.`
          : SUBAGENT
            ? SUBAGENT_PROMPT
            : WEB_SEARCH
              ? WEB_SEARCH_PROMPT[agent.name]
              : TOOL_PROMPT,
    // --tool-search: Claude Code's own tool set (ToolSearch and its deferred tools come with it);
    // --web-search: Claude Code's WebSearch and Gemini CLI's google_web_search only
    tools: pdf ? [agent.readTool] : WEB_SEARCH ? (WEB_SEARCH_TOOL[agent.name] ?? true) : !TOOL_SEARCH,
    webSearch: WEB_SEARCH,
    reasoning: REASONING && (EFFORT ?? 'high'),
    lite: LITE || SUBAGENT,
    // --tool-search: Codex gets the suite's MCP server, each call of it logged to mcpLog
    mcp: mcpTools
      ? {name: 'github', command: process.execPath, args: [join(HERE, 'mcp-server.js'), mcpSdk, mcpLog]}
      : undefined,
  })
  // --web-search: Claude Code 2.1.3xx defers WebSearch behind ToolSearch; off, it is an ordinary tool
  if (WEB_SEARCH && agent.name === 'claude') env.ENABLE_TOOL_SEARCH = 'false'
  // --quirk split-surrogate: Codex logs each SSE event its serde_json refused (a lone surrogate:
  // "lone leading surrogate in hex escape") at debug level, then drops it
  if (QUIRKS.includes('split-surrogate') && agent.name === 'codex') env.RUST_LOG = 'codex_api::sse=debug'
  // 240 s: Gemini CLI retries its JSON-mode router call (with backoff, about 90 s) when the
  // chat and messages sims answer it with plain text (they have no JSON-schema mode)
  const command = ['timeout', '240', join(binDir, agent.bin), ...args]
  const result = await run(command[0], command.slice(1), {cwd: workdir, env, timeoutMs: 250_000})
  const problems = []
  const notes = []
  if (result.code !== 0) problems.push(`exit ${result.code}${result.code === 124 ? ' (timed out)' : ''}`)

  // What the upstream got: a first turn with the CLI's tools, then the second turn with the result.
  const fam = UPSTREAMS[up]
  const {body} = await getJson(`${simOrigin}/__sim/requests`)
  if (KEEP)
    writeFileSync(join(tmp, `${agent.name}-to-${up}-sim-requests.json`), JSON.stringify(body, null, 2))
  const calls = (body.requests ?? []).filter((r) => r.method === 'POST' && fam.isModelCall(r.path))
  // --resume: the requests of the first prompt (the resumed one's come after them)
  const firstCount = (body.requests ?? []).length
  // --pdf: the second turn is the tool result with the PDF after it, as a chat `file` part
  const fileData = pdf ? `data:application/pdf;base64,${pdf.toString('base64')}` : undefined
  const withPdf = (b) =>
    (b.messages ?? []).some(
      (m) =>
        m.role === 'user' &&
        Array.isArray(m.content) &&
        m.content.some((c) => c.type === 'file' && c.file?.file_data === fileData),
    )
  // --pdf --quirk text-only: the model takes no files (DeepSeek): the PDF is refused once (by the
  // first CLI; the next finds it learned for the same model), then goes as the line that says
  // what was there, and the model answers that
  const textOnly = pdf && QUIRKS.includes('text-only')
  const LINE = '[application/pdf file not attached:'
  const lined = (b) => JSON.stringify(b).includes(LINE)
  // --tool-search: the second turn holds ToolSearch's result, the loaded tool's definition, followed
  // by Claude Code's "Tool loaded." (so the tool message is not the last); Codex's, the result of
  // its tool_search as translation writes it, the names of the tools the search loaded
  const searched = (b) =>
    fam.resultTexts(b).some((t) => t.startsWith(mcpTools ? 'Tools loaded, now callable:' : '<functions>'))
  // --web-search: a request with the upstream's own search tool (the CLI's search sub-request);
  // the second turn's tool result holds the search's two links (to chat: the gateway's refusal).
  // Codex's search runs on the upstream's side within its one turn: there is no second turn.
  const searchCall = (b) => WEB_SEARCH && fam.searchTools(b).length > 0
  const searchOnly = WEB_SEARCH && agent.name === 'codex'
  const webTurn2 =
    up === 'chat'
      ? (b) => fam.resultTexts(b).some((t) => CHAT_SEARCH_REFUSAL.test(t))
      : (b) => fam.resultTexts(b).some((t) => searchLinks(t).length > 0)
  const isTurn2 = pdf
    ? (b) => withPdf(b) || (textOnly && lined(b))
    : TOOL_SEARCH
      ? searched
      : WEB_SEARCH
        ? webTurn2
        : fam.isTurn2
  const mark = (b) =>
    searchCall(b)
      ? ' [search]'
      : isTurn2(b)
        ? pdf
          ? ' [tool result and the PDF as a file part]'
          : WEB_SEARCH
            ? up === 'chat'
              ? " [tool result: the search's refusal]"
              : " [tool result with the search's links]"
            : ' [tool result]'
        : ''
  notes.push(`sim (${up}) saw ${calls.map((r) => `${r.path}${mark(r.body)}`).join(', ') || 'no model call'}`)
  // a Messages model's thinking, as the gateway asked it (adaptive on Opus 4.7 on: --model)
  if (up === 'messages') {
    const forms = [...new Set(calls.map((r) => r.body.thinking?.type ?? 'none'))]
    notes.push(`the ${fam.model} upstream's thinking: ${forms.join(', ')}`)
  }
  const turn2At = searchOnly ? -1 : calls.findIndex((r) => isTurn2(r.body))
  if (calls.length === 0) problems.push(`the ${up} upstream got no model call`)
  else if (searchOnly) notes.push('one turn: the search ran on the upstream within it')
  else if (turn2At < 0)
    problems.push(
      WEB_SEARCH
        ? up === 'chat'
          ? "the chat upstream never got a second turn with the search's refusal as the tool result"
          : `the ${up} upstream never got a second turn whose tool result holds the search's example.com links`
        : mcpTools
          ? `the ${up} upstream never got a second turn with tool_search's result (the tools it loaded)`
          : `the ${up} upstream never got a second turn with the tool result`,
    )
  else {
    const turn1 = calls.slice(0, turn2At).findLast((r) => fam.hasTools(r.body) && !searchCall(r.body))
    const turn2 = calls[turn2At]
    if (!turn1) problems.push(`no first turn with tools before the second turn`)
    else if (QUIRKS.includes('reasoning-not-back') && up === 'chat') {
      // Cerebras writes `reasoning` and refuses `reasoning_content` back: the second turn carries
      // the reasoning in the field it came in, and never went with the other one
      const sent = calls.filter((r) => fam.isTurn2(r.body))
      const wrong = sent.some((r) => (r.body.messages ?? []).some((m) => m.reasoning_content !== undefined))
      const carried = (sent.at(-1).body.messages ?? []).some(
        (m) => m.role === 'assistant' && m.tool_calls && m.reasoning,
      )
      notes.push(
        `the upstream writes reasoning as \`reasoning\`; turn 2 ${carried ? 'carries it back there' : 'lacks it'}`,
      )
      if (wrong) problems.push('a second turn carried reasoning_content to an upstream that refuses it')
      if (!carried) problems.push(`the second turn lost the first turn's reasoning (${up})`)
    } else if (QUIRKS.includes('mistral-thinking') && up === 'chat') {
      // Mistral's thinking chunks are read as reasoning, and never sent back (a fallback chat server
      // may refuse them; Mistral takes a history without them): turn 2 holds none of them
      const sent = calls.filter((r) => fam.isTurn2(r.body))
      const back = sent.some((r) =>
        (r.body.messages ?? []).some(
          (m) =>
            m.reasoning_content !== undefined ||
            (Array.isArray(m.content) && m.content.some((c) => c.type === 'thinking')),
        ),
      )
      notes.push(`Mistral's thinking chunks; turn 2 ${back ? 'sends them back' : 'goes without them'}`)
      if (back) problems.push("a second turn sent Mistral's thinking back")
    } else if (QUIRKS.includes('think-open-in-prompt') && up === 'chat') {
      // the reasoning came before a lone </think> (the template opened the tag): it goes back in
      // the tags, as the content of the assistant message with the tool call
      const carried = (turn2.body.messages ?? []).some(
        (m) => m.role === 'assistant' && m.tool_calls && textOf(m.content).includes('</think>'),
      )
      notes.push(
        `the template opens <think> in the prompt; turn 2 ${carried ? 'carries the reasoning back in the tags' : 'lacks it'}`,
      )
      // (the model's first answer teaches the gateway: streamed, its reasoning reached the client
      // as text before the tag came, and goes back so; every later answer is read as reasoning)
      if (!carried && calls[0] === turn1)
        notes.push(
          "turn 1 was the model's first answer: its reasoning reached the client as text, and taught the gateway",
        )
      else if (!carried) problems.push(`the second turn lost the first turn's reasoning (${up})`)
    } else if (fam.asksReasoning(turn1.body)) {
      const carried = fam.carriesReasoning(turn2.body)
      notes.push(`turn 1 asked for reasoning; turn 2 ${carried ? 'carries it back' : 'lacks it'}`)
      if (!carried) problems.push(`the second turn lost the first turn's reasoning (${up})`)
    } else notes.push('turn 1 asked for no reasoning')
  }

  if (TOOL_SEARCH && mcpTools && calls.length > 0) {
    // turn 1 offers the search, never the MCP tools it defers; turn 2 (after the search's output)
    // the tools it loaded, as the upstream family's own tools, and the upstream calls one; turn 3
    // carries what the MCP server answered
    const names = fam.toolNames
    const first = names(calls[0].body)
    notes.push(`turn 1 tools: ${first.join(', ')}`)
    if (!first.includes('tool_search')) problems.push('turn 1 did not offer tool_search')
    const early = first.filter((n) => n.startsWith('mcp__'))
    if (early.length > 0)
      problems.push(`turn 1 offered the MCP tool(s) ${early.join(', ')}: Codex did not defer them`)
    if (turn2At >= 0) {
      const second = calls[turn2At].body
      const loaded = fam.resultTexts(second).find((t) => t.startsWith('Tools loaded, now callable:'))
      notes.push(`the search's result upstream: ${JSON.stringify(String(loaded).slice(0, 200))}`)
      notes.push(
        `turn 2 adds ${
          names(second)
            .filter((n) => !first.includes(n))
            .join(', ') || 'nothing'
        }`,
      )
      if (!names(second).includes(MCP_TOOL)) problems.push(`turn 2 did not offer the loaded ${MCP_TOOL}`)
      const turn3 = calls.find((r) => fam.resultTexts(r.body).some((t) => t.includes(MCP_ANSWER)))
      if (!turn3) problems.push(`no turn carried the MCP server's answer to the ${up} upstream`)
    }
    const mcpCalls = existsSync(mcpLog) ? readJsonl(mcpLog) : []
    notes.push(
      `the MCP server ran: ${mcpCalls.map((c) => `${c.name} ${JSON.stringify(c.arguments)}`).join(', ') || 'nothing'}`,
    )
    if (!mcpCalls.some((c) => `mcp__github__${c.name}` === MCP_TOOL))
      problems.push(`the MCP server got no tools/call of ${MCP_TOOL}`)
    // the upstream's call of the search came back as Codex's own tool_search_call item, which it ran
    const history = agent.history({home, workdir})
    const payloads = history.file
      ? readJsonl(history.file)
          .filter((l) => l.type === 'response_item')
          .map((l) => l.payload ?? {})
      : []
    const items = payloads.map((p) => p.type)
    const call = payloads.find((p) => p.type === 'tool_search_call')
    notes.push(
      `rollout items: ${[...new Set(items)].join(', ')}; the search's arguments ${JSON.stringify(call?.arguments)}`,
    )
    for (const type of ['tool_search_call', 'tool_search_output'])
      if (!items.includes(type)) problems.push(`Codex's rollout has no ${type} item`)
    // (an object, as the upstream's call of the function `tool_search` had it: the prompt's search:)
    if (call && call.arguments?.query !== 'github')
      problems.push(`the search ran with ${JSON.stringify(call.arguments)}, not {"query":"github"}`)
    if (!agent.answerOf(result.stdout).includes(MCP_ANSWER))
      problems.push(`Codex's output lacks the MCP server's answer "${MCP_ANSWER}"`)
  }

  if (TOOL_SEARCH && !mcpTools && turn2At >= 0) {
    const names = fam.toolNames
    const first = names(calls[0].body)
    const second = calls[turn2At].body
    const result = {content: fam.resultTexts(second).find((t) => t.startsWith('<functions>'))}
    notes.push(
      `turn 1 tools: ${first.join(', ')}; turn 2 adds ${
        names(second)
          .filter((n) => !first.includes(n))
          .join(', ') || 'nothing'
      }`,
    )
    if (!first.includes('ToolSearch')) problems.push('turn 1 did not offer ToolSearch')
    for (const name of ['WebFetch', 'DeferredToolPlaceholder'])
      if (first.includes(name)) problems.push(`turn 1 offered the deferred tool ${name}`)
    if (names(second).at(-1) !== 'WebFetch')
      problems.push('turn 2 does not end its tools with the loaded WebFetch')
    if (names(second).includes('DeferredToolPlaceholder')) problems.push('turn 2 offered the placeholder')
    if (!/<function>\{"description":"[^]*","name":"WebFetch","parameters":\{/.test(String(result?.content)))
      problems.push(
        `ToolSearch's result is not WebFetch's definition: ${String(result?.content).slice(0, 120)}`,
      )
  }

  if (NAMESPACE && turn2At >= 0) {
    // the upstream had the namespace's tools as functions and called one; Codex ran it (its
    // "unsupported call: ..." when the call came back without the namespace)
    const names = fam.toolNames(calls[0].body)
    const output = fam.resultTexts(calls[turn2At].body).at(-1)
    notes.push(
      `the namespace's tools upstream: ${names.filter((n) => n.startsWith('multi_agent_v1__')).join(', ')}`,
    )
    notes.push(`Codex answered the call: ${JSON.stringify(String(output).slice(0, 100))}`)
    if (!names.includes(NAMESPACED_TOOL)) problems.push(`turn 1 did not offer ${NAMESPACED_TOOL}`)
    if (/unsupported call/.test(String(output))) problems.push(`Codex did not run the call: ${output}`)
  }

  if (SUBAGENT && calls.length > 0) {
    // the parent called spawn_agent with arguments Codex took (its answer names the child's task),
    // the child's request carried its task (Codex's `agent_message` item) as a user turn, and the
    // parent got the child's final answer, again as a user turn (after its wait_agent, or at once)
    const sub = subagentTurns(up, calls)
    notes.push(
      `spawn_agent answered: ${JSON.stringify(String(sub.spawned ?? 'no answer').slice(0, 100))}`,
      `the child's task upstream: ${JSON.stringify(String(sub.task ?? 'none').slice(0, 160))}`,
      `the child's report to the parent: ${JSON.stringify(String(sub.report ?? 'none').slice(0, 120))}`,
      // a child that finished before the parent's next turn has its report in that turn: no wait
      sub.waited ? 'the parent waited for it (wait_agent)' : "the report came with the parent's next turn",
    )
    if (!/"task_name":"\/root\/\w+"/.test(String(sub.spawned)))
      problems.push(`Codex did not spawn the sub-agent: ${String(sub.spawned).slice(0, 200)}`)
    if (!sub.task)
      problems.push(
        `no request carried the child's task as a user ${up === 'responses' ? 'message' : 'turn'} ("Message from /root: … ${SUBAGENT_TASK}")`,
      )
    if (!sub.report) problems.push("the child's final answer did not reach the parent as a user turn")
    if (sub.items > 0)
      problems.push(`${sub.items} request(s) reached the upstream with an agent_message item`)
  }

  if (LITE && calls.length > 0) {
    // Codex sent no `tools`: the upstream had the item's tools as functions, called the first
    // (exec), and Codex ran it (its "unsupported call: ..." when the call came back wrong). With
    // `--to responses --quirk plain-tools` the first call went as Codex sent it and was refused:
    // the call the upstream took is the first that offered functions.
    const names = fam.toolNames((calls.find((c) => fam.toolNames(c.body).length > 0) ?? calls[0]).body)
    notes.push(`the Lite tools upstream: ${names.join(', ') || 'none'}`)
    if (!names.includes(LITE_TOOL)) problems.push(`turn 1 did not offer ${LITE_TOOL}`)
    if (turn2At >= 0) {
      const output = fam.resultTexts(calls[turn2At].body).at(-1)
      // (a Responses upstream's call of the custom `exec` is answered with a custom_tool_call_output)
      const kind = up === 'responses' ? ` (${calls[turn2At].body.input.at(-1)?.type})` : ''
      notes.push(`Codex answered the call${kind}: ${JSON.stringify(String(output).slice(0, 160))}`)
      if (/unsupported (call|custom tool)/i.test(String(output)))
        problems.push(`Codex did not run the call: ${output}`)
    }
  }

  if (WEB_SEARCH && calls.length > 0) {
    const searches = calls.filter((r) => searchCall(r.body))
    const choice = (b) => JSON.stringify(b.tool_choice ?? b.toolConfig ?? null)
    if (searchOnly) {
      // Codex offers its live search beside its functions: the upstream's own search beside them
      const turn = calls[0].body
      notes.push(
        `Codex's turn upstream: ${fam.toolNames(turn).length} function(s) and ${JSON.stringify(fam.searchTools(turn).map((t) => (up === 'gemini' ? {googleSearch: t.googleSearch} : t)))}, tool_choice ${choice(turn)}`,
      )
      const own = up === 'gemini' ? 'googleSearch' : 'web_search_20250305'
      if (!fam.searchTools(turn).some((t) => (up === 'gemini' ? t.googleSearch : t.type === own)))
        problems.push(`Codex's turn did not reach the upstream with ${own} among its tools`)
      if (fam.toolNames(turn).length === 0) problems.push("Codex's functions did not go beside the search")
      // what Codex shows of the web_search_call item it got back, and what its rollout keeps
      const shown = result.stderr.split('\n').filter((l) => /^web search:/.test(l))
      notes.push(`Codex showed: ${shown.map((l) => JSON.stringify(l)).join(', ') || 'no "web search:" line'}`)
      if (!shown.some((l) => l.includes('gwctl release notes')))
        problems.push('Codex showed no "web search: <query>" line (the web_search_call item)')
      const history = agent.history({home, workdir})
      const item = history.file
        ? readJsonl(history.file).find(
            (l) => l.type === 'response_item' && l.payload?.type === 'web_search_call',
          )?.payload
        : undefined
      notes.push(
        `rollout: ${item ? `web_search_call ${JSON.stringify(item.action)}` : 'no web_search_call item'}`,
      )
      if (!item) problems.push("Codex's rollout has no web_search_call item")
    } else {
      const tool = WEB_SEARCH_TOOL[agent.name][0]
      // turn 1: the first main-loop call (not Gemini CLI's router call, forced JSON on Messages)
      const first = calls.find((r) => !searchCall(r.body) && fam.toolNames(r.body).includes(tool))?.body
      const offered = first ? fam.toolNames(first) : []
      notes.push(`turn 1 tools: ${offered.join(', ') || 'none'}`)
      if (!first) problems.push(`no turn offered ${tool}`)
      // Claude Code 2.1.3xx defers WebSearch; ENABLE_TOOL_SEARCH=false must make it an ordinary tool
      if (offered.includes('ToolSearch')) problems.push(`turn 1 offered ToolSearch: ${tool} was deferred`)
      if (up === 'chat') {
        // the gateway refuses the sub-request (its 400 row, below): nothing of it reaches chat
        if (searches.length > 0)
          problems.push(
            `something search-like reached the chat upstream: ${JSON.stringify(fam.searchTools(searches[0].body))}`,
          )
      } else if (searches.length === 0)
        problems.push(`no request reached the ${up} upstream with its own search tool`)
      else {
        const b = searches[0].body
        notes.push(
          `the search upstream: tools ${JSON.stringify(b.tools)}, tool_choice ${choice(b)}${b.include ? `, include ${JSON.stringify(b.include)}` : ''}`,
        )
        const fns = fam.toolNames(b)
        if (fns.length > 0) problems.push(`the search sub-request carried function(s) too: ${fns.join(', ')}`)
        if (up === 'responses') {
          // forced when the client forced it ("required"); Claude Code 2.1.332 sends `auto`
          if (!b.tools.every((t) => t.type === 'web_search'))
            problems.push(
              `the search went with tools ${JSON.stringify(b.tools)}, not [{"type":"web_search"}]`,
            )
          if (![undefined, 'auto', 'required'].includes(b.tool_choice))
            problems.push(`the search went with tool_choice ${choice(b)}`)
        } else if (up === 'gemini') {
          if (JSON.stringify(b.tools) !== '[{"googleSearch":{}}]')
            problems.push(`the search went with tools ${JSON.stringify(b.tools)}, not [{"googleSearch":{}}]`)
          if (b.toolConfig?.functionCallingConfig)
            problems.push(`the search went with a function calling config: ${choice(b)}`)
        } else if (up === 'messages' && !b.tools.some((t) => t.type === 'web_search_20250305'))
          problems.push(`the search went with tools ${JSON.stringify(b.tools)}, no web_search_20250305`)
      }
      if (turn2At >= 0) {
        const held = fam
          .resultTexts(calls[turn2At].body)
          .find((t) => (up === 'chat' ? CHAT_SEARCH_REFUSAL.test(t) : searchLinks(t).length > 0))
        notes.push(`the tool result upstream: ${JSON.stringify(String(held).slice(0, 160))}…`)
        if (up !== 'chat') notes.push(`it holds ${searchLinks(held).join(' and ')}`)
      }
    }
  }

  const answer = agent.answerOf(result.stdout)
  // --web-search: Codex prints the search answer's text (the sim's names the query); --subagent:
  // the sim's answer to the child's report, which it echoes, when the report came as the last turn
  // (always on the plain Responses path; translated, when the child finished before the parent's
  // wait_agent result came back), else its answer to that tool result
  const wantAnswers = searchOnly
    ? ['Web search results for "']
    : SUBAGENT && up === 'responses'
      ? ['PONG from sim: Message from /root/']
      : SUBAGENT
        ? ['The tool answered', 'PONG from sim: Message from /root/']
        : ['The tool answered']
  if (!wantAnswers.some((want) => answer.includes(want)))
    problems.push(
      `the output has no "${wantAnswers.join('" or "')}": ${JSON.stringify(answer.slice(0, 200))}`,
    )
  if (QUIRKS.includes('split-surrogate') && up === 'chat' && agent.family !== 'chat') {
    // the sim split an emoji's surrogate pair across two chunks of its text, reasoning and tool
    // arguments: the CLI must have got it whole, in events it could read
    notes.push(`the answer ends ${JSON.stringify(answer.trimEnd().slice(-12))}`)
    if (!answer.includes(SPLIT_EMOJI)) problems.push(`the output lacks the emoji ${SPLIT_EMOJI} whole`)
    if (answer.includes('\ufffd')) problems.push('the output has U+FFFD where the emoji was')
    const refused = `${result.stdout}\n${result.stderr}`.match(/Failed to parse SSE event.*/g) ?? []
    if (agent.name === 'codex') notes.push(`Codex refused ${refused.length} SSE event(s)`)
    if (refused.length > 0) problems.push(`Codex refused ${refused.length} SSE event(s): ${refused[0]}`)
  }
  if (textOnly) {
    const refused = calls.some((r) => withPdf(r.body))
    const asLine = calls.some((r) => lined(r.body))
    notes.push(
      `the PDF ${refused ? 'was refused as a file part, then ' : 'was known refused, so '}${asLine ? 'went as a line in its place' : 'never went as a line'}`,
    )
    if (!asLine) problems.push('the refused PDF did not go as a line in its place')
    if (!answer.includes(LINE)) problems.push(`the answer does not say the PDF was not attached`)
  } else if (pdf && !answer.includes('I received 1 document'))
    problems.push(`the upstream did not read the PDF: ${JSON.stringify(answer.slice(0, 200))}`)

  // The gateway's rows: every call logged as translated to `up`, 200, no error.
  let rows = (await gatewayLogs(origin, agentId)) ?? []
  for (let i = 0; i < 20 && rows.length < Math.max(2, calls.length); i++) {
    await sleep(100)
    rows = (await gatewayLogs(origin, agentId)) ?? []
  }
  rows.sort((a, b) => a.id - b.id)
  notes.push(
    `gateway log: ${rows.length} row(s): ${rows.map((r) => `${r.entrance}->${r.upstreamFamily} ${r.status}${r.error ? ` (${r.error})` : ''} ${r.model}->${r.upstreamModel} ${fmtUsage(r.usage)}`).join('; ')}`,
  )
  const least = searchOnly ? 1 : 2
  if (rows.length < least)
    problems.push(`gateway log: ${rows.length} row(s) for ${agentId}, want at least ${least}`)
  // --web-search to chat: the search sub-request's rows are the gateway's 400 that says why
  const refusal = (r) =>
    WEB_SEARCH && up === 'chat' && r.status === 400 && CHAT_SEARCH_REFUSAL.test(r.error ?? '')
  if (WEB_SEARCH && up === 'chat') {
    const refused = rows.filter(refusal)
    notes.push(`gateway log: the search refused in ${refused.length} row(s) (400)`)
    if (refused.length === 0)
      problems.push(
        'gateway log: no 400 row saying web search cannot be translated to a chat completions upstream',
      )
  }
  problems.push(
    ...rowProblems(
      agent,
      up,
      rows.filter((r) => !refusal(r)),
    ),
  )

  // The history records what the CLI was told, the translated usage: the gateway's row of the
  // same request (the last main call) must hold exactly that.
  const history = agent.history({home, workdir})
  if (history.problem) problems.push(`history: ${history.problem}`)
  else {
    notes.push(`history ${history.file.slice(tmp.length + 1)}: ${fmtUsage(history.usage)}`)
    const main = rows.filter((r) => agent.isMainRow?.(r) ?? true).at(-1)
    if (!main) problems.push('gateway log: no row of the main call to compare the history with')
    else {
      // Responses and Gemini have no field for cache writes: their CLIs record none, the row keeps them
      // a turn the gateway continued after a pause (`pause-turn`): the CLI was told the last call's
      // prompt, the row holds every call's (what they were billed), so only the output must agree
      const continued = /paused the turn \(pause_turn\): continued/.test(main.error ?? '')
      const prompt = new Set(['input', 'cacheRead', 'cacheCreation'])
      const want = Object.fromEntries(
        Object.entries(main.usage).filter(
          ([k]) => (agent.recordsCacheWrites || k !== 'cacheCreation') && !(continued && prompt.has(k)),
        ),
      )
      const told = continued
        ? Object.fromEntries(Object.entries(history.usage).filter(([k]) => !prompt.has(k)))
        : history.usage
      if (continued)
        notes.push("a continued turn: the CLI's prompt counts are the last call's, the row's every call's")
      problems.push(...diff(`history usage vs gateway row ${main.id}`, told, want))
    }
  }
  if (!RESUME && !COMPACT) return {ok: problems.length === 0, ms: result.ms, problems, notes, result}
  // --resume, then --compact: each later run's problems, notes and output after the first's
  const later = []
  if (RESUME) {
    const resumed = await resumeRun(agent, up, {
      home,
      workdir,
      origin,
      binDir,
      key,
      agentId,
      simOrigin,
      firstCount,
      firstRows: rows,
      first: result,
    })
    later.push({title: `resumed (${RESUME_PROMPT})`, ...resumed})
  }
  // (Claude Code's alone: the other CLIs compact on their own, past a token limit)
  if (COMPACT && agent.name === 'claude')
    later.push({
      title: 'compacted (/compact)',
      ...(await compactRun(agent, up, {home, workdir, origin, binDir, key, agentId, simOrigin})),
    })
  for (const l of later) {
    problems.push(...l.problems)
    notes.push(...l.notes)
  }
  const all = (name) =>
    [result[name], ...later.map((l) => `--- ${l.title} ---\n${l.result[name]}`)].join('\n')
  return {
    ok: problems.length === 0,
    ms: result.ms + later.reduce((n, l) => n + l.result.ms, 0),
    problems,
    notes,
    result: {stdout: all('stdout'), stderr: all('stderr')},
  }
}

/**
 * `--compact`: Claude Code's `/compact` of the session (`claude -p /compact --continue`, in its home
 * and work folder, through the same route). It must exit 0 without "Error during compaction" (what
 * an empty summary gives: "summarization produced empty response"); the upstream must get the
 * summary request (COMPACT_WORDS in the request it sent); the session's
 * history must hold the compact boundary; every new gateway row passes {@link rowProblems}.
 */
async function compactRun(agent, up, ctx) {
  const {home, workdir, origin, binDir, key, agentId, simOrigin} = ctx
  const problems = []
  const notes = []
  const fam = UPSTREAMS[up]
  const seenCount = ((await getJson(`${simOrigin}/__sim/requests`)).body.requests ?? []).length
  const seenRows = new Set(((await gatewayLogs(origin, agentId)) ?? []).map((r) => r.id))
  const {env, args} = agent.prepare({home, binDir, origin, key, prompt: '/compact', tools: true})
  const compactArgs = [...args, '--continue']
  const command = ['timeout', '240', join(binDir, agent.bin), ...compactArgs]
  const result = await run(command[0], command.slice(1), {cwd: workdir, env, timeoutMs: 250_000})
  notes.push(`compacted: ${agent.bin} ${compactArgs.join(' ')} (${(result.ms / 1000).toFixed(1)} s)`)
  if (result.code !== 0)
    problems.push(`compacted: exit ${result.code}${result.code === 124 ? ' (timed out)' : ''}`)
  const answer = agent.answerOf(result.stdout)
  if (/Error during compaction/.test(answer))
    problems.push(`compacted: Claude Code said ${JSON.stringify(answer)}`)

  // the summary request as the upstream got it, and the sim's answer to it
  const {body} = await getJson(`${simOrigin}/__sim/requests`)
  const calls = (body.requests ?? [])
    .slice(seenCount)
    .filter((r) => r.method === 'POST' && fam.isModelCall(r.path))
  if (KEEP)
    writeFileSync(
      join(dirname(home), `${agent.name}-to-${up}-compacted-sim-requests.json`),
      JSON.stringify({requests: calls}, null, 2),
    )
  const summary = calls.find((r) => JSON.stringify(r.body).includes(COMPACT_WORDS))
  notes.push(`compacted: sim (${up}) saw ${calls.length} model call(s)`)
  if (!summary) problems.push(`compacted: no request to the ${up} upstream holds "${COMPACT_WORDS}"`)
  else
    notes.push(
      `compacted: the summary request ${fam.hasTools(summary.body) ? 'offered tools' : 'offered no tool'}`,
    )
  const history = agent.history({home, workdir})
  const boundary =
    history.file !== undefined &&
    readJsonl(history.file).some((l) => l.type === 'system' && l.subtype === 'compact_boundary')
  if (!boundary) problems.push('compacted: the session history holds no compact boundary')

  // the new rows: the summary request logged, 200, translated to `up`
  const fresh = async () => ((await gatewayLogs(origin, agentId)) ?? []).filter((r) => !seenRows.has(r.id))
  let rows = await fresh()
  for (let i = 0; i < 20 && rows.length < calls.length; i++) {
    await sleep(100)
    rows = await fresh()
  }
  rows.sort((a, b) => a.id - b.id)
  notes.push(
    `compacted: gateway log: ${rows.length} new row(s): ${rows.map((r) => `${r.status}${r.error ? ` (${r.error})` : ''} ${r.model}->${r.upstreamModel}`).join('; ')}`,
  )
  if (rows.length === 0) problems.push('compacted: gateway log: no new row')
  problems.push(...rowProblems(agent, up, rows).map((p) => `compacted: ${p}`))
  return {problems, notes, result}
}

/** A Messages request's system prompt as one text. */
const systemText = (b) => (typeof b.system === 'string' ? b.system : textOf(b.system ?? []))
/** A Messages request that asks for JSON: the gateway's JSON instruction in its system prompt. */
const asksJson = (b) => systemText(b).includes('Respond with one JSON object only')
/** A Messages request with the forced `json_answer` call. */
const forcedJson = (b) => b.tool_choice?.type === 'tool' && b.tool_choice.name === 'json_answer'
/** Gemini CLI's model-router call on a Messages upstream: no tools, or `json_answer` alone. */
const routerCall = (b) =>
  !Array.isArray(b.tools) ||
  b.tools.length === 0 ||
  (b.tools.length === 1 && b.tools[0].name === 'json_answer')

/**
 * `--resume`: the CLI of a `--translate` run resumed (RESUME_ARGS) in its home and work folder with
 * RESUME_PROMPT, through the same route. The second run must exit 0 and print the sim's answer to
 * the tool result; the upstream gets a turn with tools and one with the result; every new gateway
 * row passes {@link rowProblems}; no "Retry attempts exhausted" (Gemini CLI's JSON calls giving up).
 * On a Messages upstream every request of both prompts that asked for JSON (the gateway's JSON
 * instruction; for Gemini CLI each router call too: no tools, or json_answer alone) carries the
 * forced json_answer; on a Responses upstream a CLI that names no session (NO_SESSION_ID) keeps its
 * prompt_cache_keys: the second prompt's are the first's, and every request has one.
 */
async function resumeRun(agent, up, ctx) {
  const {home, workdir, origin, binDir, key, agentId, simOrigin, firstCount, firstRows, first} = ctx
  const problems = []
  const notes = []
  const fam = UPSTREAMS[up]
  const {env, args} = agent.prepare({
    home,
    binDir,
    origin,
    key,
    prompt: RESUME_PROMPT,
    tools: true,
    reasoning: REASONING && (EFFORT ?? 'high'),
  })
  const resumeArgs = RESUME_ARGS[agent.name](args, RESUME_PROMPT)
  const command = ['timeout', '240', join(binDir, agent.bin), ...resumeArgs]
  const result = await run(command[0], command.slice(1), {cwd: workdir, env, timeoutMs: 250_000})
  notes.push(`resumed: ${agent.bin} ${resumeArgs.join(' ')} (${(result.ms / 1000).toFixed(1)} s)`)
  if (result.code !== 0)
    problems.push(`resumed: exit ${result.code}${result.code === 124 ? ' (timed out)' : ''}`)
  const answer = agent.answerOf(result.stdout)
  if (!answer.includes('The tool answered'))
    problems.push(`resumed: the output has no "The tool answered": ${JSON.stringify(answer.slice(0, 200))}`)
  for (const [which, r] of [
    ['first', first],
    ['resumed', result],
  ])
    if (/Retry attempts exhausted/.test(`${r.stdout}\n${r.stderr}`))
      problems.push(`${which}: the CLI said "Retry attempts exhausted" (a call it retried until it gave up)`)

  // the upstream's requests of each prompt
  const {body} = await getJson(`${simOrigin}/__sim/requests`)
  const model = (r) => r.method === 'POST' && fam.isModelCall(r.path)
  const before = (body.requests ?? []).slice(0, firstCount).filter(model)
  const after = (body.requests ?? []).slice(firstCount).filter(model)
  if (KEEP)
    writeFileSync(
      join(dirname(home), `${agent.name}-to-${up}-resumed-sim-requests.json`),
      JSON.stringify({requests: (body.requests ?? []).slice(firstCount)}, null, 2),
    )
  notes.push(
    `resumed: sim (${up}) saw ${after.map((r) => `${r.path}${fam.isTurn2(r.body) ? ' [tool result]' : ''}`).join(', ') || 'no model call'}`,
    `upstream calls: ${before.length} for the first prompt, ${after.length} for the resumed one`,
  )
  const turn2At = after.findIndex((r) => fam.isTurn2(r.body))
  if (after.length === 0) problems.push(`resumed: the ${up} upstream got no model call`)
  else if (turn2At < 0)
    problems.push(`resumed: the ${up} upstream never got a second turn with the tool result`)
  else if (!after.slice(0, turn2At).some((r) => fam.hasTools(r.body)))
    problems.push('resumed: no turn with tools before the second turn')

  if (up === 'messages') {
    // every request for JSON goes as a forced json_answer call (a Messages upstream has no JSON mode)
    const json = (r) => asksJson(r.body) || (agent.name === 'gemini' && routerCall(r.body))
    const count = (list) => {
      const asked = list.filter(json)
      return `${asked.length} (${asked.filter((r) => forcedJson(r.body)).length} forced json_answer)`
    }
    notes.push(
      `requests for JSON: ${count(before)} for the first prompt, ${count(after)} for the resumed one`,
    )
    for (const [which, list] of [
      ['first', before],
      ['resumed', after],
    ])
      for (const r of list.filter((c) => json(c) && !forcedJson(c.body)))
        problems.push(
          `${which}: a request for JSON went without the forced json_answer: tools ${JSON.stringify((r.body.tools ?? []).map((t) => t.name ?? t.type))}, tool_choice ${JSON.stringify(r.body.tool_choice ?? null)}, thinking ${JSON.stringify(r.body.thinking ?? null)}`,
        )
  }

  if (up === 'responses') {
    // the prompt_cache_key of each request, with how many requests carried it
    const keysOf = (list) => {
      const seen = new Map()
      for (const r of list) {
        const k = r.body.prompt_cache_key ?? 'none'
        seen.set(k, (seen.get(k) ?? 0) + 1)
      }
      return seen
    }
    const show = (m) => [...m].map(([k, n]) => `${k} x${n}`).join(', ') || 'no request'
    const k1 = keysOf(before)
    const k2 = keysOf(after)
    notes.push(`prompt_cache_key: first prompt ${show(k1)}; resumed ${show(k2)}`)
    if (NO_SESSION_ID.has(agent.name)) {
      if (k1.has('none') || k2.has('none')) problems.push('a request went without a prompt_cache_key')
      const fresh = [...k2.keys()].filter((k) => !k1.has(k))
      if (fresh.length > 0)
        problems.push(
          `the resumed prompt's prompt_cache_key ${fresh.join(', ')} is new (the first prompt's: ${[...k1.keys()].join(', ')})`,
        )
    }
  }

  // the new rows: every call of the resumed prompt logged, 200, translated to `up`
  const seen = new Set(firstRows.map((r) => r.id))
  const fresh = async () => ((await gatewayLogs(origin, agentId)) ?? []).filter((r) => !seen.has(r.id))
  let rows = await fresh()
  for (let i = 0; i < 20 && rows.length < Math.max(2, after.length); i++) {
    await sleep(100)
    rows = await fresh()
  }
  rows.sort((a, b) => a.id - b.id)
  notes.push(
    `resumed: gateway log: ${rows.length} new row(s): ${rows.map((r) => `${r.status}${r.error ? ` (${r.error})` : ''} ${r.model}->${r.upstreamModel}`).join('; ')}`,
  )
  if (rows.length < 2) problems.push(`resumed: gateway log: ${rows.length} new row(s), want at least 2`)
  // (Gemini CLI's router call names the calls of its history `<tool>__<id>`, its main calls `<id>`:
  // the carry finds them under either, so its turns keep their reasoning to chat too)
  problems.push(...rowProblems(agent, up, rows).map((p) => `resumed: ${p}`))
  const history = agent.history({home, workdir})
  if (!history.problem) notes.push(`resumed: history ${basename(history.file)}: ${fmtUsage(history.usage)}`)
  return {problems, notes, result}
}

async function main() {
  await ensureBuilt()
  const bins = {}
  await chooseVersions()
  for (const agent of agents) bins[agent.name] = await ensureInstalled(agent)
  // --tool-search: Codex's MCP server is made with the official SDK, installed like the CLIs
  const mcpSdk = TOOL_SEARCH && agents.some((a) => a.name === 'codex') ? await ensureMcpSdk() : undefined
  const others = agents.filter((a) => a.pinned)
  if (others.length)
    log(`versions: ${others.map((a) => `${a.name} ${a.version} (pinned ${a.pinned})`).join(', ')}`)
  const sim = await simModules()

  const tmp = mkdtempSync(join(tmpdir(), 'gwctl-agents-'))
  const gwHome = join(tmp, 'gwctl-home')
  mkdirSync(gwHome)
  const gwEnv = {
    PATH: process.env.PATH,
    HOME: join(tmp, 'gwctl-user'),
    GWCTL_HOME: gwHome,
    NO_COLOR: '1',
    TZ: 'UTC',
    NODE_EXTRA_CA_CERTS: '',
  }
  mkdirSync(gwEnv.HOME)
  let origin
  let simOrigin
  let gatewayStarted = false
  const outcome = []
  // agents a mode does not cover (`gwctl run` starts Claude Code, Codex and Gemini CLI only): not
  // failures
  let skipped = 0
  try {
    if (DIRECT) {
      origin = simOrigin = await startSim(gwEnv)
      log(`mode: direct (each CLI -> gwctl sim at ${origin}); temp ${tmp}`)
    } else {
      if (SUBAGENT && agents.some((a) => upstreamsOf(a).includes('responses'))) {
        // --subagent: a Responses server on this machine that is not the gateway's own simulator
        // (which stands for OpenAI's API): a second `gwctl sim`, added as a provider before the
        // policy that routes to it
        plainSimOrigin = await startSim(gwEnv)
        gwEnv[PLAIN_SIM.keyEnv] = 'sim-key'
        await gwctl(
          [
            'providers',
            'add',
            PLAIN_SIM.name,
            '--family',
            'responses',
            '--base-url',
            `${plainSimOrigin}/v1`,
            '--api-key-env',
            PLAIN_SIM.keyEnv,
            '--json',
          ],
          gwEnv,
        )
      }
      if (TRANSLATE)
        // one policy per run, written before the gateway starts (it loads policies at start)
        for (const agent of agents)
          for (const up of upstreamsOf(agent))
            await gwctl(
              [
                'policies',
                'route',
                translatePolicy(agent, up),
                '--family',
                agent.family,
                '--target',
                `${SUBAGENT && up === 'responses' ? PLAIN_SIM.name : `sim-${up}`}:${[UPSTREAMS[up].model, ...QUIRKS].join('+')}`,
                '--translate',
                '--json',
              ],
              gwEnv,
            )
      gwEnv.GWCTL_GATEWAY_PORT = String(await freePort())
      const info = await gwctl(['gateway', 'start', '--sim', '--json'], gwEnv)
      gatewayStarted = true
      origin = info.url ?? `http://127.0.0.1:${gwEnv.GWCTL_GATEWAY_PORT}`
      simOrigin = info.daemon?.simOrigin ?? undefined
      log(
        `mode: ${TRANSLATE ? 'translate' : RUN ? 'run (gwctl run <tool> -- ...)' : 'gateway'} (each CLI -> gwctl gateway at ${origin} -> simulator${simOrigin ? ` at ${simOrigin}` : ''}); temp ${tmp}`,
      )
    }
    if (TRANSLATE) {
      // the sim's origin as the gateway routes to it (provider sim-<family>'s baseUrl)
      const {body} = await getJson(`${origin}/api/providers`)
      simOrigin = (body.providers ?? []).find((p) => p.name === 'sim-chat')?.baseUrl ?? simOrigin
      if (!simOrigin) throw new Error('no sim-chat provider in GET /api/providers')
    }
    for (const agent of agents) {
      if (TRANSLATE) {
        for (const up of upstreamsOf(agent)) {
          const policy = translatePolicy(agent, up)
          const issued = await gwctl(
            [
              'key',
              'issue',
              '--agent-name',
              `suite-${agent.name}-to-${up}`,
              '--agent-type',
              agent.agentType,
              '--policy-id',
              policy,
              '--employee-name',
              'Agent suite',
              '--employee-contact',
              'agents@localhost',
              '--json',
            ],
            gwEnv,
          )
          const r = await (OVERFLOW ? overflowRun : translateRun)(agent, up, {
            tmp,
            origin,
            binDir: bins[agent.name],
            key: issued.keyValue,
            agentId: issued.agentId,
            simOrigin,
            mcpSdk,
          })
          const label = `${agent.family} -> ${up}`
          outcome.push({
            agent: agent.name,
            run: label,
            ok: r.ok,
            seconds: Math.round(r.ms / 100) / 10,
            problems: r.problems,
          })
          log(
            `${r.ok ? 'PASS' : 'FAIL'} ${agent.name.padEnd(8)} ${label.padEnd(22)} ${(r.ms / 1000).toFixed(1)} s`,
          )
          for (const note of r.notes) log(`    ${note}`)
          for (const problem of r.problems) log(`    ! ${problem}`)
          if (!r.ok || VERBOSE) {
            log(`    stdout:\n${tail(r.result.stdout)}`)
            log(`    stderr:\n${tail(r.result.stderr)}`)
          }
        }
        continue
      }
      if (BIND) {
        outcome.push(await bindAgent(agent, {tmp, origin, bins, sim, simOrigin, gwEnv}))
        continue
      }
      if (RUN) {
        if (!CONFIG_FILES[agent.name]) {
          log(`SKIP ${agent.name.padEnd(8)} run: gwctl run does not start ${agent.name}`)
          skipped++
          continue
        }
        outcome.push(await runMode(agent, {tmp, origin, bins, sim, simOrigin, gwEnv}))
        continue
      }
      let key = 'sim-key'
      let agentId
      if (!DIRECT) {
        const issued = await gwctl(
          [
            'key',
            'issue',
            '--agent-name',
            `suite-${agent.name}`,
            '--agent-type',
            agent.agentType,
            '--employee-name',
            'Agent suite',
            '--employee-contact',
            'agents@localhost',
            '--json',
          ],
          gwEnv,
        )
        key = issued.keyValue
        agentId = issued.agentId
      }
      const r = await runAgent(agent, {tmp, origin, binDir: bins[agent.name], key, agentId, sim, simOrigin})
      outcome.push({agent: agent.name, ok: r.ok, seconds: Math.round(r.ms / 100) / 10, problems: r.problems})
      log(
        `${r.ok ? 'PASS' : 'FAIL'} ${agent.name.padEnd(8)} ${agent.title.padEnd(11)} ${(r.ms / 1000).toFixed(1)} s`,
      )
      for (const note of r.notes) log(`    ${note}`)
      for (const problem of r.problems) log(`    ! ${problem}`)
      if (!r.ok || VERBOSE) {
        log(`    stdout:\n${tail(r.result.stdout)}`)
        log(`    stderr:\n${tail(r.result.stderr)}`)
      }
    }
  } finally {
    if (gatewayStarted)
      await gwctl(['gateway', 'stop'], gwEnv).catch((e) => log(`gateway stop: ${e.message}`))
    for (const child of children) child.kill('SIGTERM')
    if (KEEP || outcome.some((o) => !o.ok)) log(`kept ${tmp}`)
    else rmSync(tmp, {recursive: true, force: true})
  }
  const passed = outcome.filter((o) => o.ok).length
  const failed = (TRANSLATE ? runsOf(agents) : agents.length) - passed - skipped
  if (TRANSLATE) {
    log('')
    log(
      `${'agent'.padEnd(10)}${'entrance -> upstream'.padEnd(24)}${'result'.padEnd(8)}${'time'.padStart(7)}  first problem`,
    )
    for (const o of outcome)
      log(
        `${o.agent.padEnd(10)}${o.run.padEnd(24)}${(o.ok ? 'PASS' : 'FAIL').padEnd(8)}${`${o.seconds} s`.padStart(7)}  ${o.problems[0] ?? ''}`,
      )
  }
  mkdirSync(CACHE, {recursive: true})
  writeFileSync(
    join(CACHE, `last-result${DIRECT ? '-direct' : BIND ? '-bind' : TRANSLATE ? '-translate' : ''}.json`),
    JSON.stringify(
      {
        at: new Date().toISOString(),
        mode: DIRECT ? 'direct' : BIND ? 'bind' : TRANSLATE ? 'translate' : 'gateway',
        versions: Object.fromEntries(agents.map((a) => [a.name, a.version])),
        outcome,
      },
      null,
      2,
    ) + '\n',
  )
  log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`)
  process.exitCode = failed === 0 ? 0 : 1
}

main().catch((error) => {
  console.error(`agent suite: ${error.message}`)
  console.log(`0 passed, ${TRANSLATE ? runsOf(agents) : agents.length} failed`)
  process.exitCode = 1
})
