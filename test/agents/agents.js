// The three agent CLIs of the suite: how to install, configure and run each one against a
// loopback base URL (exactly as ../../../shared/AGENT-CLIS.md describes), and where each records
// the usage of its answer.
//
// Usage is compared in the gateway's normalised form (see src/daemon/router/taps/tap.ts):
// `input` = every prompt token including cache reads and writes, `output` = every generated token
// including reasoning, `cacheRead`, `cacheCreation`.
import {mkdirSync, writeFileSync} from 'node:fs'
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
    title: 'claude -p',
    pkg: '@anthropic-ai/claude-code',
    version: '2.1.197',
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
        // tools: only the read-only Glob, allowed without asking (bypassPermissions is refused as root)
        args: [
          '-p',
          prompt,
          '--output-format',
          'json',
          ...(tools ? ['--tools', 'Glob', '--allowedTools', 'Glob'] : []),
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
    version: '0.169.0',
    bin: 'codex',
    agentType: 'codex',
    family: 'responses',
    prepare({home, binDir, origin, key, bind, prompt = PROMPT, tools = false}) {
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
          'model = "gw-model"',
          'check_for_update_on_startup = false',
          ...provider,
          '[analytics]',
          'enabled = false',
          '[features]',
          'plugins = false',
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
]
