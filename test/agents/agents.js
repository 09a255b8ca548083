// The agent CLIs of the suite: how to install, configure and run each one against a loopback
// base URL (exactly as ../../../shared/AGENT-CLIS.md describes for the first three, and
// ../../docs/AGENT-CLIS.md for OpenCode and Qwen Code), and where each records the usage of its
// answer.
//
// Usage is compared in the gateway's normalised form (see src/daemon/router/taps/tap.ts):
// `input` = every prompt token including cache reads and writes, `output` = every generated token
// including reasoning, `cacheRead`, `cacheCreation`.
import {existsSync, mkdirSync, writeFileSync} from 'node:fs'
import {createRequire} from 'node:module'
import {basename, join} from 'node:path'

import {findFiles, readJsonl} from './lib.js'

export const PROMPT = 'say hi'
/** `--translate`: the sims call the first tool the CLI sends when the prompt asks for one. */
export const TOOL_PROMPT = 'use a tool'

/** Environment every agent gets: nothing of the caller's, loopback only, no telemetry. */
function baseEnv(home, binDir) {
  return {
    HOME: home,
    PATH: `${binDir}:${process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin'}`,
    LANG: 'C.UTF-8',
    TERM: 'dumb',
    TZ: 'UTC',
    TMPDIR: join(home, 'tmp'),
    // Anything that talks HTTP goes straight to 127.0.0.1, never through a proxy.
    NO_PROXY: '127.0.0.1,localhost',
    no_proxy: '127.0.0.1,localhost',
    DO_NOT_TRACK: '1',
  }
}

/** The history usage of Claude Code: the last assistant line carrying `message.usage`. */
function claudeHistory(home, workdir) {
  const dir = join(home, '.claude', 'projects', workdir.replace(/[^a-zA-Z0-9]/g, '-'))
  const files = findFiles(dir, /\.jsonl$/)
  if (files.length === 0) return {problem: `no history file in ${dir}`}
  const lines = readJsonl(files[0]).filter((l) => l.type === 'assistant' && l.message?.usage)
  const last = lines.at(-1)
  if (!last) return {file: files[0], problem: 'no assistant line with usage'}
  const u = last.message.usage
  return {
    file: files[0],
    text: (last.message.content ?? []).map((b) => b.text ?? '').join(''),
    usage: {
      input: u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens,
      output: u.output_tokens,
      cacheRead: u.cache_read_input_tokens,
      cacheCreation: u.cache_creation_input_tokens,
    },
  }
}

/** The history usage of Codex: the last `event_msg/token_count` of the rollout. */
function codexHistory(home) {
  const dir = join(home, '.codex', 'sessions')
  const files = findFiles(dir, /^rollout-.*\.jsonl$/)
  if (files.length === 0) return {problem: `no rollout file in ${dir}`}
  const lines = readJsonl(files[0])
  const count = lines.filter(
    (l) => l.type === 'event_msg' && l.payload?.type === 'token_count' && l.payload.info,
  )
  const last = count.at(-1)
  if (!last) return {file: files[0], problem: 'no token_count event with usage'}
  const u = last.payload.info.last_token_usage
  const message = lines
    .filter(
      (l) => l.type === 'response_item' && l.payload?.type === 'message' && l.payload.role === 'assistant',
    )
    .at(-1)
  return {
    file: files[0],
    text: (message?.payload.content ?? []).map((c) => c.text ?? '').join(''),
    usage: {
      input: u.input_tokens,
      output: u.output_tokens,
      cacheRead: u.cached_input_tokens,
      cacheCreation: 0,
    },
  }
}

/** The history usage of Gemini CLI: the last `type:"gemini"` record of the session file. */
function geminiHistory(home, workdir) {
  const dir = join(home, '.gemini', 'tmp', basename(workdir), 'chats')
  const files = findFiles(dir, /^session-.*\.jsonl$/)
  if (files.length === 0) return {problem: `no session file in ${dir}`}
  const last = readJsonl(files[0])
    .filter((l) => l.type === 'gemini' && l.tokens)
    .at(-1)
  if (!last) return {file: files[0], problem: 'no gemini record with tokens'}
  const t = last.tokens
  return {
    file: files[0],
    text: typeof last.content === 'string' ? last.content : JSON.stringify(last.content),
    usage: {input: t.input, output: t.output + t.thoughts, cacheRead: t.cached, cacheCreation: 0},
  }
}

/**
 * The history usage of OpenCode: the last `step-finish` part of its SQLite database
 * (`$XDG_DATA_HOME/opencode/opencode.db`). Its `tokens.input` excludes cache reads and writes,
 * `tokens.output` excludes `reasoning`.
 */
function opencodeHistory(home) {
  const file = join(home, '.local', 'share', 'opencode', 'opencode.db')
  if (!existsSync(file)) return {problem: `no database ${file}`}
  const Database = createRequire(import.meta.url)('better-sqlite3')
  const db = new Database(file, {readonly: true})
  try {
    const step = db
      .prepare(`SELECT data FROM part WHERE data LIKE '%"step-finish"%' ORDER BY time_created DESC LIMIT 1`)
      .get()
    if (!step) return {file, problem: 'no step-finish part'}
    const t = JSON.parse(step.data).tokens
    const text = db
      .prepare(`SELECT data FROM part WHERE data LIKE '%"type":"text"%' ORDER BY time_created DESC LIMIT 1`)
      .get()
    return {
      file,
      text: text ? JSON.parse(text.data).text : '',
      usage: {
        input: t.input + t.cache.read + t.cache.write,
        output: t.output + t.reasoning,
        cacheRead: t.cache.read,
        cacheCreation: t.cache.write,
      },
    }
  } finally {
    db.close()
  }
}

/** The history usage of Qwen Code: the last `qwen-code.api_response` telemetry record of the chat. */
function qwenHistory(home, workdir) {
  const dir = join(home, '.qwen', 'projects', workdir.replace(/[^a-zA-Z0-9]/g, '-'), 'chats')
  const files = findFiles(dir, /\.jsonl$/)
  if (files.length === 0) return {problem: `no chat file in ${dir}`}
  const lines = readJsonl(files[0])
  const last = lines
    .filter(
      (l) => l.type === 'system' && l.systemPayload?.uiEvent?.['event.name'] === 'qwen-code.api_response',
    )
    .at(-1)
  if (!last) return {file: files[0], problem: 'no api_response record'}
  const e = last.systemPayload.uiEvent
  const answer = lines.filter((l) => l.type === 'assistant').at(-1)
  return {
    file: files[0],
    text: (answer?.message?.parts ?? []).map((p) => p.text ?? '').join(''),
    usage: {
      input: e.input_token_count,
      output: e.output_token_count,
      cacheRead: e.cached_content_token_count,
      cacheCreation: 0,
    },
  }
}

/**
 * Each agent: npm package and version (AGENT-CLIS.md), gateway agent type and entrance family,
 * `prepare()` writing its config and returning its command line, `history()` reading what it
 * recorded, `isMainCall()` telling the model call whose usage its history records, `isModelCall()`
 * every model call (each one gets a gateway log row), and `simUsage()`
 * computing what the simulator answered to a recorded request (the sim is deterministic).
 */
export const AGENTS = [
  {
    name: 'claude',
    tool: 'claude-code',
    /** Its tool that reads a file (`--pdf`). */
    readTool: 'Read',
    title: 'claude -p',
    pkg: '@anthropic-ai/claude-code',
    version: '2.1.332',
    bin: 'claude',
    agentType: 'claude_code',
    family: 'messages',
    recordsCacheWrites: true,
    prepare({home, binDir, origin, key, bind, prompt = PROMPT, tools = false}) {
      // bind: `gwctl agents enable claude-code` writes the URL and key into settings.json
      mkdirSync(join(home, '.claude'), {recursive: true})
      return {
        env: {
          ...baseEnv(home, binDir),
          ...(bind ? {} : {ANTHROPIC_BASE_URL: origin, ANTHROPIC_AUTH_TOKEN: key}),
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
          DISABLE_TELEMETRY: '1',
          DISABLE_AUTOUPDATER: '1',
        },
        // tools: the read-only Glob, allowed without asking (bypassPermissions is refused as root),
        // and the Agent tool of the default set: with it Claude Code sends its agent types as a
        // mid-conversation system message, which translation must carry (the sim calls the first
        // tool, Agent, with string arguments: its error result is the second turn)
        args: [
          '-p',
          prompt,
          '--output-format',
          'json',
          // a list: those tools only, each allowed (`--pdf`: Read)
          ...(Array.isArray(tools)
            ? ['--tools', tools.join(','), '--allowedTools', tools.join(',')]
            : tools
              ? ['--tools', 'Glob,Agent', '--allowedTools', 'Glob']
              : []),
        ],
      }
    },
    /** The answer as printed: the `result` of the JSON line. */
    answerOf(stdout) {
      try {
        return JSON.parse(stdout.trim().split('\n').at(-1)).result ?? ''
      } catch {
        return stdout
      }
    },
    history: ({home, workdir}) => claudeHistory(home, workdir),
    isMainCall: (path) => path === '/v1/messages',
    isModelCall: (path) => path === '/v1/messages',
    simUsage(sim, body) {
      const answer = sim.messages.messagesAnswer(body)
      const u = sim.messages.messagesUsage(answer)
      return {
        text: answer.text,
        usage: {
          input: u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens,
          output: u.output_tokens,
          cacheRead: u.cache_read_input_tokens,
          cacheCreation: u.cache_creation_input_tokens,
        },
      }
    },
  },
  {
    name: 'codex',
    tool: 'codex',
    title: 'codex exec',
    pkg: '@openai/codex',
    version: '0.171.0',
    bin: 'codex',
    agentType: 'codex',
    family: 'responses',
    prepare({
      home,
      binDir,
      origin,
      key,
      bind,
      prompt = PROMPT,
      tools = false,
      webSearch = false,
      reasoning,
      lite = false,
      mcp,
    }) {
      mkdirSync(join(home, '.codex'), {recursive: true})
      // bind: `gwctl agents enable codex` adds model_provider and [model_providers.gwctl]
      const provider = bind
        ? []
        : [
            'model_provider = "gw"',
            '[model_providers.gw]',
            'name = "Gateway"',
            `base_url = "${origin}/v1"`,
            'env_key = "GW_KEY"',
            'wire_api = "responses"',
          ]
      writeFileSync(
        join(home, '.codex', 'config.toml'),
        [
          // lite (`--lite`): a model of Codex's own catalog with `use_responses_lite`, for which
          // Codex sends its tools in an `additional_tools` input item, never in `tools`
          // mcp (`--tool-search`): gpt-5.5, a model of Codex's catalog marked `supports_search_tool`,
          // for which Codex defers its MCP tools behind its client-run `tool_search` (on a model it
          // does not know, gw-model, it offers them at once as the namespace `mcp__<server>`)
          lite ? 'model = "gpt-6.2-sol"' : mcp ? 'model = "gpt-5.5"' : 'model = "gw-model"',
          'check_for_update_on_startup = false',
          // webSearch (`--web-search`): the live search tool among its tools
          ...(webSearch ? ['web_search = "live"'] : []),
          // reasoning (`--reasoning`): an effort and a summary, which Codex sends for a model it
          // does not know only when told the model takes them
          ...(reasoning
            ? [
                // (`reasoning`: the effort, `high` unless --effort names another)
                `model_reasoning_effort = "${reasoning === true ? 'high' : reasoning}"`,
                'model_reasoning_summary = "detailed"',
                'model_supports_reasoning_summaries = true',
              ]
            : []),
          ...provider,
          '[analytics]',
          'enabled = false',
          '[features]',
          'plugins = false',
          // mcp: one stdio MCP server (test/agents/mcp-server.js)
          ...(mcp
            ? [
                `[mcp_servers.${mcp.name}]`,
                `command = ${JSON.stringify(mcp.command)}`,
                `args = [${mcp.args.map((a) => JSON.stringify(a)).join(', ')}]`,
                // its tools approved: `codex exec` (approval policy never) fails a call that asks
                // ("MCP tool call requires approval, but approval policy is never")
                'default_tools_approval_mode = "approve"',
              ]
            : []),
          '',
        ].join('\n'),
      )
      return {
        env: {...baseEnv(home, binDir), ...(bind ? {} : {GW_KEY: key})},
        // tools: `codex exec` never asks; its commands run in the read-only sandbox
        args: ['exec', '--skip-git-repo-check', ...(tools ? ['--sandbox', 'read-only'] : []), prompt],
      }
    },
    answerOf: (stdout) => stdout,
    history: ({home}) => codexHistory(home),
    isMainCall: (path) => path === '/v1/responses',
    isModelCall: (path) => path === '/v1/responses',
    simUsage(sim, body) {
      const answer = sim.responses.responsesAnswer(body)
      const u = sim.responses.responsesUsage(answer)
      return {
        text: answer.text,
        usage: {
          input: u.input_tokens,
          output: u.output_tokens,
          cacheRead: u.input_tokens_details.cached_tokens,
          cacheCreation: 0,
        },
      }
    },
  },
  {
    name: 'gemini',
    tool: 'gemini-cli',
    readTool: 'read_file',
    title: 'gemini -p',
    pkg: '@google/gemini-cli',
    version: '0.61.0',
    bin: 'gemini',
    agentType: 'gemini_cli',
    family: 'gemini',
    prepare({home, binDir, origin, key, bind, run, prompt = PROMPT, tools = false}) {
      mkdirSync(join(home, '.gemini'), {recursive: true})
      // bind: `gwctl agents enable gemini-cli` writes .env and security.auth.selectedType
      writeFileSync(
        join(home, '.gemini', 'settings.json'),
        JSON.stringify({
          // `gwctl run` needs API-key auth selected already (it changes no file); `agents enable` writes it
          ...(bind && !run ? {} : {security: {auth: {selectedType: 'gemini-api-key'}}}),
          privacy: {usageStatisticsEnabled: false},
          // a list: those tools only (`--pdf`: read_file)
          ...(Array.isArray(tools) ? {tools: {core: tools}} : {}),
        }),
      )
      return {
        env: {
          ...baseEnv(home, binDir),
          ...(bind ? {} : {GOOGLE_GEMINI_BASE_URL: origin, GEMINI_API_KEY: key}),
          GEMINI_CLI_TRUST_WORKSPACE: 'true',
        },
        // tools: run them without asking (the temp work folder is all they can see)
        args: ['-p', prompt, ...(tools ? ['--yolo'] : [])],
      }
    },
    answerOf: (stdout) => stdout,
    history: ({home, workdir}) => geminiHistory(home, workdir),
    isMainCall: (path) => /:streamGenerateContent$/.test(path),
    // --translate: a gateway row of a main call (not the router's classifier on a lite model)
    isMainRow: (row) => !/-lite\b/.test(row.model ?? ''),
    // Also the model router's JSON-mode classifier call (`:generateContent`).
    isModelCall: (path) => /:(stream)?[gG]enerateContent$/.test(path),
    simUsage(sim, body) {
      const answer = sim.gemini.geminiAnswer(body)
      const u = sim.gemini.geminiUsage(answer)
      return {
        text: answer.text,
        usage: {
          input: u.promptTokenCount,
          output: u.candidatesTokenCount + u.thoughtsTokenCount,
          cacheRead: u.cachedContentTokenCount,
          cacheCreation: 0,
        },
      }
    },
  },
  {
    name: 'opencode',
    tool: 'opencode',
    title: 'opencode run',
    pkg: 'opencode-ai',
    version: '1.18.33',
    bin: 'opencode',
    agentType: 'opencode',
    // bound through the provider of its chosen model: anthropic here (messages)
    family: 'messages',
    recordsCacheWrites: true,
    // OpenCode's title call (its small model) is a request it does not record
    recordsEveryCall: false,
    // `opencode run` quotes a message argument that holds a space
    answer: `PONG from sim: "${PROMPT}"`,
    prepare({home, binDir, origin, key, bind, prompt = PROMPT}) {
      mkdirSync(join(home, '.config', 'opencode'), {recursive: true})
      // the user's own config: a chosen model and a comment; bind: `gwctl agents enable opencode`
      // adds provider.anthropic.options.baseURL and .apiKey
      const provider = bind
        ? ''
        : `,\n  "provider": {"anthropic": {"options": {"baseURL": "${origin}/v1", "apiKey": "${key}"}}}`
      writeFileSync(
        join(home, '.config', 'opencode', 'opencode.json'),
        `{\n  // my OpenCode\n  "$schema": "https://opencode.ai/config.json",\n  "autoupdate": false,\n  "share": "disabled",\n  "model": "anthropic/claude-sonnet-4-5"${provider}\n}\n`,
      )
      return {
        env: {
          ...baseEnv(home, binDir),
          // no models.dev catalogue download; its background npm install of @opencode-ai/plugin
          // into the config folder fails at once instead of reaching the registry
          OPENCODE_DISABLE_MODELS_FETCH: '1',
          OPENCODE_DISABLE_AUTOUPDATE: '1',
          npm_config_offline: 'true',
        },
        args: ['run', prompt],
      }
    },
    answerOf: (stdout) => stdout,
    history: ({home}) => opencodeHistory(home),
    isMainCall: (path) => path === '/v1/messages',
    isModelCall: (path) => path === '/v1/messages',
  },
  {
    name: 'qwen',
    tool: 'qwen-code',
    title: 'qwen -p',
    pkg: '@qwen-code/qwen-code',
    version: '0.24.4',
    bin: 'qwen',
    agentType: 'qwen_code',
    family: 'chat',
    // the chat sim calls the first tool it is offered: Qwen Code runs it and sends the result back
    answer: 'The tool answered',
    prepare({home, binDir, origin, key, bind, prompt = PROMPT}) {
      mkdirSync(join(home, '.qwen'), {recursive: true})
      // bind: `gwctl agents enable qwen-code` writes env.OPENAI_BASE_URL, env.OPENAI_API_KEY and
      // security.auth.selectedType = "openai" into settings.json
      writeFileSync(
        join(home, '.qwen', 'settings.json'),
        `{\n  // my Qwen Code settings\n  "model": {"name": "gw-model"},\n  "privacy": {"usageStatisticsEnabled": false}${bind ? '' : ',\n  "security": {"auth": {"selectedType": "openai"}}'}\n}\n`,
      )
      return {
        env: {
          ...baseEnv(home, binDir),
          ...(bind ? {} : {OPENAI_BASE_URL: `${origin}/v1`, OPENAI_API_KEY: key}),
        },
        args: ['-p', prompt],
      }
    },
    answerOf: (stdout) => stdout,
    history: ({home, workdir}) => qwenHistory(home, workdir),
    isMainCall: (path) => path === '/v1/chat/completions',
    isModelCall: (path) => path === '/v1/chat/completions',
  },
]
