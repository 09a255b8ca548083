// Agent-sized request bodies for `bench/xlate.js` (and, `agentChatBody` at the end, a plain chat
// one for the untranslated route of `bench/ab.js`, `profile.js` and `request-body.js`): what Claude Code (Messages), Codex (Responses)
// and Gemini CLI (Gemini) send on a turn deep into a session, in the shapes of PROTOCOLS.md and of
// the captured requests the tests replay: a long system prompt, ~20 tools with real JSON Schemas,
// and every earlier turn (text, thinking with signatures or encrypted reasoning, tool calls and
// their long outputs), with non-ASCII text in it (typographic quotes, accents, CJK, emoji) as a
// real session has. Deterministic: the same size gives the same bytes.

/** A pseudo-random generator with a fixed seed (xorshift32). */
function rng(seed) {
  let x = seed >>> 0 || 1
  return () => {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    return (x >>> 0) / 4294967296
  }
}

const WORDS = (
  'the a file function returns value test build error module import export const let type ' +
  'interface request response stream token cache gateway route provider model agent tool call ' +
  'result schema object array string number boolean config path line column diff patch commit ' +
  'branch merge review change update remove add fix check run read write search replace'
).split(' ')
const FOREIGN = [
  'café',
  'naïve',
  '“quoted”',
  '—',
  'résumé',
  '東京',
  '変更',
  'größe',
  '✓',
  '→',
  '…',
  '🙂',
  'Ελλάδα',
]

/** Prose of about `n` characters, one non-ASCII word in ~25. */
function prose(next, n) {
  let out = ''
  while (out.length < n) {
    const r = next()
    const word =
      r < 0.04 ? FOREIGN[Math.floor(next() * FOREIGN.length)] : WORDS[Math.floor(next() * WORDS.length)]
    out += (out ? (r > 0.93 ? '. ' : r > 0.88 ? ', ' : r > 0.86 ? '\n' : ' ') : '') + word
  }
  return out
}

/** Source-code-like tool output (`cat -n` of a file), about `n` characters. */
function code(next, n) {
  let out = ''
  let line = 1
  while (out.length < n) {
    const indent = '  '.repeat(Math.floor(next() * 4))
    const body =
      next() < 0.5
        ? `const ${WORDS[Math.floor(next() * WORDS.length)]}${line} = await ${WORDS[Math.floor(next() * WORDS.length)]}("${prose(next, 20)}")`
        : `// ${prose(next, 40 + Math.floor(next() * 40))}`
    out += `${String(line).padStart(6)}\t${indent}${body}\n`
    line++
  }
  return out
}

const b64 = (next, n) => {
  const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'
  let out = ''
  for (let i = 0; i < n; i++) out += chars[Math.floor(next() * 64)]
  return out
}

/** ~20 tools as an agent declares them: name, a long description, a JSON Schema. */
function toolDefs(next) {
  const names = [
    'Task',
    'Bash',
    'Glob',
    'Grep',
    'LS',
    'ExitPlanMode',
    'Read',
    'Edit',
    'MultiEdit',
    'Write',
    'NotebookEdit',
    'WebFetch',
    'TodoWrite',
    'WebSearch',
    'BashOutput',
    'KillBash',
    'SlashCommand',
    'mcp__ide__getDiagnostics',
    'mcp__ide__executeCode',
    'ListMcpResources',
  ]
  return names.map((name, i) => {
    const properties = {}
    const count = 2 + (i % 5)
    for (let p = 0; p < count; p++)
      properties[`${WORDS[(i * 7 + p * 3) % WORDS.length]}_${p}`] =
        p % 3 === 0
          ? {type: 'string', description: prose(next, 120)}
          : p % 3 === 1
            ? {type: 'number', description: prose(next, 60)}
            : {
                type: 'array',
                items: {
                  type: 'object',
                  properties: {
                    old_string: {type: 'string'},
                    new_string: {type: 'string'},
                    replace_all: {type: 'boolean', default: false},
                  },
                  required: ['old_string', 'new_string'],
                  additionalProperties: false,
                },
                minItems: 1,
                description: prose(next, 80),
              }
    return {
      name,
      description: prose(next, i % 4 === 0 ? 2400 : 500),
      schema: {
        type: 'object',
        properties,
        required: Object.keys(properties).slice(0, 1),
        additionalProperties: false,
        $schema: 'http://json-schema.org/draft-07/schema#',
      },
    }
  })
}

/**
 * A conversation for `bytes` of body: turns of (user prompt | tool results), assistant
 * (reasoning, text, tool calls), each family writing them in its own shape through `emit`.
 */
function conversation(next, bytes, emit) {
  let size = 0
  let turn = 0
  while (size < bytes) {
    const calls = 1 + (turn % 3)
    const ids = Array.from({length: calls}, (_, c) => `${turn}_${c}_${b64(next, 12).replace(/[+/]/g, 'x')}`)
    size += emit({
      turn,
      user: turn === 0 || turn % 4 === 0 ? prose(next, 200 + Math.floor(next() * 600)) : undefined,
      thinking: prose(next, 300 + Math.floor(next() * 900)),
      signature: b64(next, 400 + Math.floor(next() * 400)),
      text: next() < 0.6 ? prose(next, 100 + Math.floor(next() * 300)) : '',
      calls: ids.map((id, c) => ({
        id,
        name: ['Read', 'Grep', 'Bash', 'Edit'][(turn + c) % 4],
        input: {
          file_path: `/work/project/src/${WORDS[(turn + c) % WORDS.length]}.ts`,
          pattern: prose(next, 30),
          limit: 200,
        },
        output:
          c === 0 && turn % 2 === 0
            ? code(next, 1500 + Math.floor(next() * 3000))
            : prose(next, 200 + Math.floor(next() * 800)),
      })),
    })
    turn++
  }
}

/** Claude Code's `POST /v1/messages` body (stream, thinking, system blocks with cache marks). */
export function claudeCodeRequest(bytes, seed = 7) {
  const next = rng(seed)
  const messages = []
  const system = [
    {
      type: 'text',
      text: "You are Claude Code, Anthropic's official CLI for Claude.",
      cache_control: {type: 'ephemeral'},
    },
    {type: 'text', text: prose(next, Math.min(24_000, bytes / 5)), cache_control: {type: 'ephemeral'}},
  ]
  const tools = toolDefs(next).map((t) => ({
    name: t.name,
    description: t.description,
    input_schema: t.schema,
  }))
  const fixed = JSON.stringify({system, tools}).length
  conversation(next, bytes - fixed, (t) => {
    const user = [
      ...(t.turn > 0 ? messages.at(-1).content.splice(0) : []),
      ...(t.user ? [{type: 'text', text: t.user}] : []),
    ]
    if (messages.length) messages.pop()
    messages.push({role: 'user', content: user})
    const assistant = {
      role: 'assistant',
      content: [
        {type: 'thinking', thinking: t.thinking, signature: t.signature},
        ...(t.text ? [{type: 'text', text: t.text}] : []),
        ...t.calls.map((c) => ({type: 'tool_use', id: `toolu_${c.id}`, name: c.name, input: c.input})),
      ],
    }
    const results = {
      role: 'user',
      content: t.calls.map((c) => ({type: 'tool_result', tool_use_id: `toolu_${c.id}`, content: c.output})),
    }
    messages.push(assistant, results)
    return JSON.stringify(assistant).length + JSON.stringify(results).length + (t.user?.length ?? 0)
  })
  const last = messages.at(-1).content
  last.push({type: 'text', text: prose(next, 300), cache_control: {type: 'ephemeral'}})
  return {
    model: 'claude-sonnet-4-5-20250929',
    messages,
    temperature: 1,
    system,
    tools,
    metadata: {user_id: 'user_4f2a_account_9c1e_session_6b0d'},
    max_tokens: 32_000,
    thinking: {type: 'enabled', budget_tokens: 31_999},
    stream: true,
  }
}

/** Codex's `POST /v1/responses` body (instructions, reasoning items with encrypted_content). */
export function codexRequest(bytes, seed = 11) {
  const next = rng(seed)
  const instructions = prose(next, Math.min(24_000, bytes / 5))
  const tools = [
    ...toolDefs(next)
      .slice(0, 16)
      .map((t) => ({
        type: 'function',
        name: t.name,
        description: t.description,
        strict: false,
        parameters: t.schema,
      })),
    {
      type: 'custom',
      name: 'apply_patch',
      description: prose(next, 1500),
      format: {
        type: 'grammar',
        syntax: 'lark',
        definition: 'start: begin_patch hunk+ end_patch\n' + prose(next, 600),
      },
    },
    {type: 'web_search'},
  ]
  const input = [
    {type: 'message', role: 'developer', content: [{type: 'input_text', text: prose(next, 1200)}]},
    {
      type: 'message',
      role: 'user',
      content: [
        {type: 'input_text', text: `<environment_context>\n${prose(next, 600)}\n</environment_context>`},
      ],
    },
  ]
  const fixed = JSON.stringify({instructions, tools, input}).length
  conversation(next, bytes - fixed, (t) => {
    const items = []
    if (t.user) items.push({type: 'message', role: 'user', content: [{type: 'input_text', text: t.user}]})
    items.push({
      type: 'reasoning',
      id: `rs_${t.signature.slice(0, 40).replace(/[+/]/g, 'x')}`,
      summary: [{type: 'summary_text', text: t.thinking}],
      encrypted_content: `gAAAAA${t.signature}${t.signature}`,
    })
    if (t.text)
      items.push({type: 'message', role: 'assistant', content: [{type: 'output_text', text: t.text}]})
    for (const c of t.calls)
      items.push({
        type: 'function_call',
        name: 'shell',
        arguments: JSON.stringify({
          command: ['bash', '-lc', `rg -n "${c.input.pattern}"`],
          workdir: '/work/project',
        }),
        call_id: `call_${c.id}`,
      })
    for (const c of t.calls)
      items.push({
        type: 'function_call_output',
        call_id: `call_${c.id}`,
        output: JSON.stringify({output: c.output, metadata: {exit_code: 0, duration_seconds: 0.1}}),
      })
    input.push(...items)
    return JSON.stringify(items).length
  })
  input.push({type: 'message', role: 'user', content: [{type: 'input_text', text: prose(next, 300)}]})
  return {
    model: 'gpt-5-codex',
    instructions,
    input,
    tools,
    tool_choice: 'auto',
    parallel_tool_calls: false,
    reasoning: {effort: 'medium', summary: 'auto'},
    store: false,
    stream: true,
    include: ['reasoning.encrypted_content'],
    prompt_cache_key: '0199a8e2-5b1c-7d33-9f0e-4c2b1a6d8e71',
    text: {verbosity: 'medium'},
  }
}

/** Gemini CLI's `streamGenerateContent` body (systemInstruction, functionCall/Response parts). */
export function geminiCliRequest(bytes, seed = 13) {
  const next = rng(seed)
  const systemInstruction = {role: 'user', parts: [{text: prose(next, Math.min(24_000, bytes / 5))}]}
  const tools = [
    {
      functionDeclarations: toolDefs(next).map((t) => ({
        name: t.name,
        description: t.description,
        parametersJsonSchema: t.schema,
      })),
    },
  ]
  const contents = [{role: 'user', parts: [{text: `This is the Gemini CLI. ${prose(next, 800)}`}]}]
  const fixed = JSON.stringify({systemInstruction, tools, contents}).length
  conversation(next, bytes - fixed, (t) => {
    const items = []
    if (t.user) items.push({role: 'user', parts: [{text: t.user}]})
    items.push({
      role: 'model',
      parts: [
        ...(t.text ? [{text: t.text}] : []),
        ...t.calls.map((c, i) => ({
          functionCall: {name: c.name.toLowerCase(), args: c.input},
          ...(i === 0 ? {thoughtSignature: t.signature} : {}),
        })),
      ],
    })
    items.push({
      role: 'user',
      parts: t.calls.map((c) => ({
        functionResponse: {name: c.name.toLowerCase(), response: {output: c.output}},
      })),
    })
    contents.push(...items)
    return JSON.stringify(items).length
  })
  contents.push({role: 'user', parts: [{text: prose(next, 300)}]})
  return {
    contents,
    systemInstruction,
    tools,
    generationConfig: {
      temperature: 0,
      topP: 1,
      thinkingConfig: {includeThoughts: true, thinkingBudget: 8192},
    },
  }
}

/**
 * What an OpenAI-compatible chat upstream streams back for an agent's turn, in OpenAI's shape
 * (every chunk with its `obfuscation` padding): a role chunk, ~`texts` text deltas (non-ASCII
 * among them), a tool call whose ~`args` argument deltas write a file, the finish chunk, the usage
 * chunk and `[DONE]`; as the upstream reads that carry it, of about `read` bytes each.
 */
export function chatAgentStream({texts = 150, args = 120, read = 4096, seed = 17} = {}) {
  const next = rng(seed)
  const base = (delta, finish = null) => ({
    id: 'chatcmpl-CAgent0123456789',
    object: 'chat.completion.chunk',
    created: 1764150000,
    model: 'gpt-5-2025-08-07',
    service_tier: 'default',
    system_fingerprint: null,
    choices: [{index: 0, delta, logprobs: null, finish_reason: finish}],
    usage: null,
    obfuscation: b64(next, 1 + Math.floor(next() * 24)).replace(/[+/]/g, 'x'),
  })
  const chunks = [base({role: 'assistant', content: '', refusal: null})]
  for (let i = 0; i < texts; i++) chunks.push(base({content: prose(next, 3 + Math.floor(next() * 14))}))
  chunks.push(
    base({
      tool_calls: [
        {index: 0, id: 'call_Agent0123456789', type: 'function', function: {name: 'Write', arguments: ''}},
      ],
    }),
  )
  const file = JSON.stringify({file_path: '/work/project/src/gateway.ts', content: code(next, args * 24)})
  const step = Math.ceil(file.length / args)
  for (let at = 0; at < file.length; at += step)
    chunks.push(base({tool_calls: [{index: 0, function: {arguments: file.slice(at, at + step)}}]}))
  chunks.push(base({}, 'tool_calls'))
  const usage = {
    ...base({}),
    choices: [],
    usage: {
      prompt_tokens: 61234,
      completion_tokens: 1432,
      total_tokens: 62666,
      prompt_tokens_details: {cached_tokens: 58880, audio_tokens: 0},
      completion_tokens_details: {
        reasoning_tokens: 256,
        audio_tokens: 0,
        accepted_prediction_tokens: 0,
        rejected_prediction_tokens: 0,
      },
    },
  }
  chunks.push(usage)
  const text = chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join('') + 'data: [DONE]\n\n'
  const bytes = Buffer.from(text)
  const reads = []
  for (let at = 0; at < bytes.length; at += read) reads.push(bytes.subarray(at, at + read))
  return reads
}

/**
 * A chat request the size of a coding agent's (`kb` KB of JSON): a long system prompt, 20 tools
 * with schemas, and earlier turns of tool calls and results whose text has non-ASCII characters
 * (an em dash, accents, an emoji: real tool output has them, and one such byte makes a UTF-8
 * parse decode the whole body into a two-byte string), escaped quotes and line feeds. With
 * `stream`, a stream that does not ask for usage (the gateway adds `stream_options`). Sent to the
 * simulator, it answers as to any chat request.
 */
export function agentChatBody(kb = 64, {stream = false} = {}) {
  const prose = 'The file — naïve café 🎉 — has "quoted" text,\na C:\\path and\ttabs. '
  const tools = Array.from({length: 20}, (_, i) => ({
    type: 'function',
    function: {
      name: `tool_${i}`,
      description: prose.repeat(6),
      parameters: {
        type: 'object',
        properties: {path: {type: 'string', description: 'An absolute path.'}, limit: {type: 'number'}},
        required: ['path'],
      },
    },
  }))
  const messages = [{role: 'system', content: prose.repeat(120)}]
  const body = {model: 'sim-mini', messages, tools, ...(stream ? {stream: true} : {})}
  for (let turn = 0; Buffer.byteLength(JSON.stringify(body)) < kb * 1024; turn++) {
    messages.push({role: 'user', content: prose.repeat(3)})
    messages.push({
      role: 'assistant',
      content: null,
      tool_calls: [
        {id: `call_${turn}`, type: 'function', function: {name: 'tool_1', arguments: '{"path":"/a/b"}'}},
      ],
    })
    messages.push({role: 'tool', tool_call_id: `call_${turn}`, content: prose.repeat(20)})
  }
  messages.push({role: 'user', content: 'Say hello in five words.'})
  return JSON.stringify(body)
}
