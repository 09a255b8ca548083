/**
 * Claude Code's newer body fields (`diagnostics`, `fallbacks`, `fallback_credit_token`, `speed`,
 * its tools' `eager_input_streaming`, any it adds next) refused by a strict host fronting Claude
 * (Bedrock, Vertex AI, a LiteLLM or Copilot relay: "diagnostics: Extra inputs are not permitted",
 * 9router #3875; "tools.0.custom.eager_input_streaming: ...", yuegongzi/copilot-api #11), and an
 * input item's member refused by a Responses server ("Unknown parameter: 'input[2].status'.",
 * zyycn/codex-proxy-rs #194): what is learned from the words, and the bytes sent from then on.
 */
import {describe, expect, it} from 'vitest'

import type {SentRequest} from '../../protocols/translate.js'
import {
  decodeClientRequest,
  encodeUpstreamRequest,
  sentOfPassedMessages,
  sentOfPassedResponses,
} from '../../protocols/translate.js'
import {describeAdaptation, onlyMoreCuts, rewritesMessagesBody, UpstreamAdaptations} from './adaptations.js'
import {withoutItemMembers, withoutTopFields} from './top-fields.js'

/** Anthropic's error body, as Bedrock and the relays pass it on. */
const anthropic = (message: string) =>
  JSON.stringify({type: 'error', error: {type: 'invalid_request_error', message}})

/** Claude Code 2.1.3xx's body, cut down: its newer fields and a tool with per-tool streaming. */
const claudeCode = {
  model: 'claude-opus-4-8',
  max_tokens: 32000,
  stream: true,
  thinking: {type: 'adaptive'},
  output_config: {effort: 'high'},
  diagnostics: {cache: true},
  fallbacks: [{model: 'claude-sonnet-4-6'}],
  fallback_credit_token: 'fct_1',
  speed: 'fast',
  context_management: {edits: [{type: 'clear_thinking_20251015', keep: 'all'}]},
  system: [{type: 'text', text: 'You are Claude Code.'}],
  tools: [
    {name: 'Bash', description: 'Run', input_schema: {type: 'object'}, eager_input_streaming: true},
    {type: 'web_search_20250305', name: 'web_search', max_uses: 5},
  ],
  messages: [{role: 'user', content: 'hi'}],
}
const passed = (body: Record<string, unknown> = claudeCode): SentRequest => sentOfPassedMessages(body)

/** Claude Code's optional newer fields (its tools' `eager_input_streaming` aside) and its context editing. */
const NEWER = ['diagnostics', 'fallbacks', 'fallback_credit_token', 'speed', 'context_management']

/** {@link claudeCode} with only `keep` of {@link NEWER} and its tools' `eager_input_streaming`. */
function only(...keep: string[]): Record<string, unknown> {
  const body: Record<string, unknown> = {...claudeCode}
  for (const f of NEWER) if (!keep.includes(f)) delete body[f]
  if (!keep.includes('eager_input_streaming'))
    body.tools = claudeCode.tools.map((t) => {
      const {eager_input_streaming: _, ...rest} = t as Record<string, unknown>
      return rest
    })
  return body
}

/** `diagnostics` refused in each host's words for a field its closed schema does not list. */
const DIAGNOSTICS_REFUSED = [
  anthropic('diagnostics: Extra inputs are not permitted'),
  // Bedrock's words behind a relay
  JSON.stringify({
    message: 'The model returned the following errors: diagnostics: Extra inputs are not permitted',
  }),
  // LiteLLM's wrapping
  JSON.stringify({
    error: {
      message: '{"message":"diagnostics: Extra inputs are not permitted"}. Received Model Group=claude',
      type: 'None',
    },
  }),
  // pydantic's plain text
  '1 validation error for MessagesRequest\ndiagnostics\n  Extra inputs are not permitted [type=extra_forbidden]',
  // Bedrock's older words
  anthropic('Malformed input request: #: extraneous key [diagnostics] is not permitted, please reformat'),
  // OpenAI's, serde's and zod's words for a field they do not know
  anthropic("Unknown parameter: 'diagnostics'."),
  anthropic('unknown field `diagnostics`, expected one of `model`, `messages`'),
  anthropic("Unrecognized key(s) in object: 'diagnostics'"),
  // FastAPI's list
  JSON.stringify({
    detail: [{type: 'extra_forbidden', loc: ['body', 'diagnostics'], msg: 'Extra inputs'}],
  }),
]

describe("a strict host's refusal of a Messages body's fields", () => {
  it('a top-level field in any of its words: learned away, described, cut out of the bytes', () => {
    const words = DIAGNOSTICS_REFUSED
    for (const text of words) {
      const a = new UpstreamAdaptations()
      expect(a.learn('bedrock', 'claude', text, passed(only('diagnostics')), 400), text).toBe(
        "refused diagnostics: sent again without it, and from now on without Claude Code's other newer fields",
      )
      // (the host's schema is the same for the next body: a later `/fast` turn's `speed` costs no refusal)
      expect(a.get('bedrock', 'claude'), text).toEqual({
        drop: ['diagnostics', 'fallbacks', 'fallback_credit_token', 'speed'],
        toolMembers: ['eager_input_streaming'],
      })
    }
    // any other field: only the one named
    const other = passed({...only(), metadata: {user_id: 'u'}, service_tier: 'auto'})
    const a = new UpstreamAdaptations()
    expect(a.learn('z', 'm', anthropic('metadata: Extra inputs are not permitted'), other)).toBe(
      'refused metadata: sent again without it',
    )
    // the next refusal, of the next field: kept beside it
    expect(
      a.learn('z', 'm', anthropic('service_tier: Extra inputs are not permitted'), {
        ...other,
        adaptedWith: a.get('z', 'm'),
      }),
    ).toBe('refused service_tier: sent again without it')
    expect(describeAdaptation(a.get('z', 'm')!)).toEqual(['sent without metadata, service_tier'])
    // cut out of the bytes, no parse
    expect(rewritesMessagesBody(a.get('z', 'm'))).toBe(false)
    const bytes = Buffer.from('{"model":"m","metadata":{"user_id":"u"},"service_tier":"auto","messages":[]}')
    expect(String(withoutTopFields(bytes, a.get('z', 'm')!.drop!))).toBe('{"model":"m","messages":[]}')
  })

  it("a tool's member, named by its place: cut out of every tool", () => {
    const a = new UpstreamAdaptations()
    const refused = anthropic('tools.0.custom.eager_input_streaming: Extra inputs are not permitted')
    const eager = passed(only('eager_input_streaming'))
    expect(a.learn('copilot', 'claude', refused, eager)).toBe(
      "refused its tools' eager_input_streaming: sent again without it, and from now on without Claude Code's other newer fields",
    )
    expect(a.get('copilot', 'claude')).toEqual({
      drop: ['diagnostics', 'fallbacks', 'fallback_credit_token', 'speed'],
      toolMembers: ['eager_input_streaming'],
    })
    // Bedrock's older words, by the tool's JSON pointer; a relay's prefix before Anthropic's
    for (const words of [
      'Malformed input request: #/tools/1: extraneous key [eager_input_streaming] is not permitted',
      'upstream error: tools.3.eager_input_streaming: Extra inputs are not permitted',
    ])
      expect(new UpstreamAdaptations().learn('b', 'm', anthropic(words), eager), words).toBe(
        "refused its tools' eager_input_streaming: sent again without it, and from now on without Claude Code's other newer fields",
      )
    expect(describeAdaptation(a.get('copilot', 'claude')!)).toEqual([
      'sent without diagnostics, fallbacks, fallback_credit_token, speed',
      'tools sent without eager_input_streaming (refused)',
    ])
    const tools =
      '{"model":"m","tools":[{"name":"a","eager_input_streaming":true,"input_schema":{}},{"name":"b", "eager_input_streaming" : true}],"x":{"eager_input_streaming":1}}'
    expect(String(withoutItemMembers(Buffer.from(tools), 'tools', ['eager_input_streaming']))).toBe(
      '{"model":"m","tools":[{"name":"a","input_schema":{}},{"name":"b"}],"x":{"eager_input_streaming":1}}',
    )
    // none held: nothing scanned, nothing changed
    expect(
      withoutItemMembers(Buffer.from('{"tools":[{"name":"a"}]}'), 'tools', ['eager_input_streaming']),
    ).toBe(undefined)
  })

  it('learns nothing of a field the request needs, one it did not send, a place inside another, or a translated request', () => {
    const a = new UpstreamAdaptations()
    for (const message of [
      'model: Extra inputs are not permitted',
      'max_tokens: Extra inputs are not permitted',
      'tools.0.custom.name: Extra inputs are not permitted',
      // the tool search's own rule (./tool-search.ts), and the cache's marks
      'tools.0.custom.defer_loading: Extra inputs are not permitted',
      'tools.0.custom.cache_control: Extra inputs are not permitted',
      // not sent
      'service_tier: Extra inputs are not permitted',
      'tools.0.custom.input_examples: Extra inputs are not permitted',
      // inside the conversation
      'messages.1.content.0.thinking.cache_control: Extra inputs are not permitted',
      // one it may go without beside one it may not: the client's to see
      'diagnostics: Extra inputs are not permitted\nsystem: Extra inputs are not permitted',
    ])
      expect(a.learn('p', 'm', anthropic(message), passed()), message).toBeUndefined()
    // a translated request (`stream` unsaid): Claude Code's fields are not its own
    const {stream: _, ...translated} = passed()
    expect(
      a.learn('p', 'm', anthropic('diagnostics: Extra inputs are not permitted'), translated),
    ).toBeUndefined()
    expect(a.list()).toEqual([])
  })

  it("learns nothing from a field's words inside the client's own text that a validator echoes", () => {
    const echoes = [
      // pydantic's words for a content refused, its `input_value` the user's text
      anthropic(
        "messages.1.content: Input should be a valid list [type=list_type, input_value='my log: context_management: Extra inputs are not permitted', input_type=str]",
      ),
      '1 validation error for MessagesRequest\nmessages.1.content\n  Input should be a valid list [type=list_type, input_value="paste: speed: Extra inputs are not permitted", input_type=str]',
      // FastAPI's list: the refused content as its `input`
      JSON.stringify({
        detail: [
          {
            type: 'string_type',
            loc: ['body', 'messages', 1, 'content'],
            msg: 'Input should be a valid string',
            input: [{type: 'text', text: 'why do I get diagnostics: Extra inputs are not permitted'}],
          },
        ],
      }),
      // the same quoted in a relay's message
      anthropic(
        'upstream: {"detail":[{"type":"string_type","msg":"Input should be a valid string","input":"fallbacks: Extra inputs are not permitted"}]}',
      ),
    ]
    const a = new UpstreamAdaptations()
    for (const text of echoes) expect(a.learn('vllm', 'm', text, passed(), 400), text).toBeUndefined()
    expect(a.list()).toEqual([])
    // pydantic's own refusal of a field, its `input_value` the field's value: learned
    expect(
      new UpstreamAdaptations().learn(
        'p',
        'm',
        "2 validation errors for MessagesRequest\ndiagnostics\n  Extra inputs are not permitted [type=extra_forbidden, input_value={'cache': 'speed: Extra inputs are not permitted'}, input_type=dict]\nfallbacks\n  Extra inputs are not permitted [type=extra_forbidden, input_value=[], input_type=list]",
        passed(only('diagnostics', 'fallbacks')),
      ),
    ).toBe(
      "refused diagnostics, fallbacks: sent again without them, and from now on without Claude Code's other newer fields",
    )
  })

  it("learns nothing from the echo of a user message that says a field is refused, in any validator's shape", () => {
    // the user's own message (a pasted log), as each validator echoes it while refusing something
    // else: only the place a validator names teaches, never text inside what it quotes
    const said =
      "diagnostics: Extra inputs are not permitted; unknown field `speed`; Unrecognized key(s) in object: 'fallbacks'"
    const pasted =
      "look at this log:\ndiagnostics: Extra inputs are not permitted\nx' at 'y\nUnknown parameter: 'speed'."
    const echoes = [
      // pydantic's repr with a quote in it, so that its own `', input_type=` is inside the echo too
      `1 validation error for MessagesRequest\nmessages.1.content\n  Input should be a valid list [type=list_type, input_value="it's', input_type=str] ${said}", input_type=str]`,
      anthropic(
        `messages.1.content: Input should be a valid list [type=list_type, input_value='x\\', input_type=str] ${said.replace(/'/g, "\\'")}', input_type=str]`,
      ),
      // FastAPI's list as Python writes it (vLLM's and SGLang's message)
      JSON.stringify({
        object: 'error',
        message: `[{'type': 'list_type', 'loc': ('body', 'messages', 1, 'content'), 'msg': 'Input should be a valid list', 'input': "${said}"}]`,
      }),
      // serde's Debug string of the value refused
      anthropic(
        `messages[1].content: invalid type: string "${said.replace(/"/g, '\\"')}", expected a sequence at line 1 column 90`,
      ),
      // AWS's validation of Bedrock's envelope
      anthropic(
        `1 validation error detected: Value '${said}' at 'messages.1.member.content' failed to satisfy constraint: Member must have length less than or equal to 100000`,
      ),
      // zod's enum, its value received
      anthropic(`messages.1.role: Invalid enum value. Expected 'user' | 'assistant', received '${said}'`),
      // AWS and zod write the text as it came, line breaks and all: a pasted log's lines are the
      // client's to the echo's last close in the whole message
      anthropic(
        `1 validation error detected: Value '${pasted}' at 'messages.1.member.content' failed to satisfy constraint: Member must have length less than or equal to 10`,
      ),
      anthropic(`messages.1.role: Invalid enum value. Expected 'user' | 'assistant', received '${pasted}'`),
    ]
    for (const text of echoes) {
      const a = new UpstreamAdaptations()
      expect(a.learn('relay', 'm', text, passed(), 400), text).toBeUndefined()
      expect(a.list(), text).toEqual([])
    }
    // a Responses body passed through the same: serde's and zod's echoes teach Codex's body nothing
    const codex = sentOfPassedResponses({model: 'gpt-5.5', input: 'hi', stream: true, speed: 'fast'})
    for (const text of [
      echoes[3],
      echoes[5],
      anthropic("input.0.content: Unrecognized key(s) in object: 'speed'"),
    ])
      expect(new UpstreamAdaptations().learn('relay', 'm', text, codex, 400), text).toBeUndefined()
  })

  it('reads an error body of any size in one pass: a pasted log of 100,000 lines, each opening an echo it does not close', () => {
    // each line opens pydantic's echo and none closes it on its line: each is cut to its line's
    // end, its close looked for on that line only (a search back to the message's start for each
    // line held the daemon's one thread for minutes)
    const lines = Array.from({length: 100_000}, (_, i) =>
      i === 1 ? 'input_value=speed: Extra inputs are not permitted' : 'input_value=x',
    )
    const message = `${lines.length + 1} validation errors for MessagesRequest\n${lines.join('\n')}\ndiagnostics\n  Extra inputs are not permitted [type=extra_forbidden, input_value={}, input_type=dict]`
    // read to its end (diagnostics refused), nothing read inside an echo (speed is the user's text)
    expect(
      new UpstreamAdaptations().learn('relay', 'm', message, passed(only('diagnostics', 'speed')), 400),
    ).toBe(
      "refused diagnostics: sent again without it, and without speed (Claude Code's other newer field; the rest from now on too)",
    )
  })

  it("reads a name in a validator's words for a field it does not know at the path it wrote, before the words or after them", () => {
    const speed =
      "refused speed: sent again without it, and from now on without Claude Code's other newer fields"
    const eager =
      "refused its tools' eager_input_streaming: sent again without it, and from now on without Claude Code's other newer fields"
    for (const [message, body, note] of [
      // a place inside the conversation: not the top-level field of that name (zod 3's path before
      // its words, zod 4's prettifyError on the line after, zod-validation-error's after them)
      ["messages.1.content.0: Unrecognized key(s) in object: 'speed'", passed(), undefined],
      ['✖ Unrecognized key: "speed"\n  → at messages[1].content[0]', passed(), undefined],
      ['Validation error: Unrecognized key: "speed" at "messages[1].content[0]"', passed(), undefined],
      ['Validation error: Unrecognized key(s) in object: \'speed\' at "messages[1]"', passed(), undefined],
      // ...while a tool's path names a tool's member
      [
        "tools.0: Unrecognized key(s) in object: 'eager_input_streaming'",
        passed(only('eager_input_streaming')),
        eager,
      ],
      [
        '✖ Unrecognized key: "eager_input_streaming"\n  → at tools[0]',
        passed(only('eager_input_streaming')),
        eager,
      ],
      [
        'Validation error: Unrecognized key(s) in object: \'eager_input_streaming\' at "tools[1]"',
        passed(only('eager_input_streaming')),
        eager,
      ],
      // no path: the top level (zod 4's issue without its line, the next issue's own below it)
      ['✖ Unrecognized key: "speed"\n✖ Invalid input\n  → at messages[1].role', passed(only('speed')), speed],
      [
        '✖ Unrecognized key: "speed"\n✖ Unrecognized key: "eager_input_streaming"\n  → at tools[0]',
        passed(only('speed', 'eager_input_streaming')),
        "refused speed, its tools' eager_input_streaming: sent again without them, and from now on without Claude Code's other newer fields",
      ],
      // ...and a prefix that is no field of the request is no place
      ['litellm.BadRequestError: Unknown parameter: speed', passed(only('speed')), speed],
    ] as const)
      expect(new UpstreamAdaptations().learn('relay', 'm', anthropic(message), body, 400), message).toBe(note)
  })

  it("one of Claude Code's newer fields refused in a closed schema's words: the others it carries go in the same retry, those it does not are learned with them", () => {
    const all = "its tools' eager_input_streaming"
    const words = DIAGNOSTICS_REFUSED
    for (const text of words) {
      const a = new UpstreamAdaptations()
      expect(a.learn('bedrock', 'claude', text, passed(), 400), text).toBe(
        `refused diagnostics: sent again without it, and without fallbacks, fallback_credit_token, speed, ${all} (Claude Code's other newer fields)`,
      )
      // context editing kept: Bedrock and Vertex AI take it with its beta
      expect(a.get('bedrock', 'claude'), text).toEqual({
        drop: ['diagnostics', 'fallbacks', 'fallback_credit_token', 'speed'],
        toolMembers: ['eager_input_streaming'],
      })
    }
    // a tool's member first; only those the body carries
    const b = new UpstreamAdaptations()
    expect(
      b.learn(
        'copilot',
        'claude',
        anthropic('tools.0.custom.eager_input_streaming: Extra inputs are not permitted'),
        passed(only('eager_input_streaming', 'speed', 'context_management')),
      ),
    ).toBe(
      "refused its tools' eager_input_streaming: sent again without it, and without speed (Claude Code's other newer field; the rest from now on too)",
    )
    expect(b.get('copilot', 'claude')).toEqual({
      drop: ['diagnostics', 'fallbacks', 'fallback_credit_token', 'speed'],
      toolMembers: ['eager_input_streaming'],
    })
    // context editing refused: a host that does not know it knows none of the newer ones
    const c = new UpstreamAdaptations()
    expect(
      c.learn('litellm', 'claude', anthropic('context_management: Extra inputs are not permitted'), passed()),
    ).toBe(
      `refused context_management: sent again without it, and without diagnostics, fallbacks, fallback_credit_token, speed, ${all} (Claude Code's other newer fields)`,
    )
    // not a closed schema's words ("Unsupported parameter": a host that knows the field, a model
    // without it), nor a server tool's refusal (Anthropic's own API refuses it there): that one only
    for (const [text, note] of [
      ['Unsupported parameter: speed', 'refused speed: sent again without it'],
      [
        'tools.1.web_search_20250305.eager_input_streaming: Extra inputs are not permitted',
        "refused its tools' eager_input_streaming: sent again without it",
      ],
    ])
      expect(new UpstreamAdaptations().learn('p', 'm', anthropic(text), passed()), text).toBe(note)
    // a field the answer needs beside: nothing learned, none of them
    expect(
      new UpstreamAdaptations().learn(
        'p',
        'm',
        anthropic('diagnostics: Extra inputs are not permitted\nsystem: Extra inputs are not permitted'),
        passed(),
      ),
    ).toBeUndefined()
  })

  it("learns no tool member from a place inside a tool's schema", () => {
    const body = {
      ...claudeCode,
      tools: [{name: 'Bash', input_schema: {type: 'object', strict: true}, strict: true}],
    }
    const a = new UpstreamAdaptations()
    expect(
      a.learn(
        'p',
        'm',
        anthropic('tools.0.input_schema.strict: Extra inputs are not permitted'),
        passed(body),
      ),
    ).toBeUndefined()
    // a tool's tag between: Anthropic's `custom`, a server tool's dated type
    for (const place of ['tools.0.custom.strict', 'tools.0.web_search_20250305.strict', 'tools.0.strict'])
      expect(
        new UpstreamAdaptations().learn(
          'p',
          'm',
          anthropic(`${place}: Extra inputs are not permitted`),
          passed(body),
        ),
        place,
      ).toBe("refused its tools' strict: sent again without it")
  })

  it('a beta learned away takes the fields that need it, in the same retry', () => {
    const unexpected = (value: string) =>
      anthropic(
        `Unexpected value(s) \`${value}\` for the \`anthropic-beta\` header. Please consult our documentation at docs.anthropic.com or try again without the header.`,
      )
    const a = new UpstreamAdaptations()
    const betas = 'claude-code-20250219,fast-mode-2026-02-01,server-side-fallback-2026-06-01'
    expect(a.learn('vertex', 'claude', unexpected('fast-mode-2026-02-01'), {...passed(), betas})).toBe(
      'refused anthropic-beta fast-mode-2026-02-01: sent again without it and without speed (a field of that beta)',
    )
    expect(a.get('vertex', 'claude')).toEqual({refusedBetas: ['fast-mode-2026-02-01'], drop: ['speed']})
    // Bedrock's words name none: every beta's fields go with the header
    const b = new UpstreamAdaptations()
    expect(
      b.learn('bedrock', 'claude', anthropic('invalid beta flag'), {
        ...passed(),
        betas: `${betas},context-management-2025-06-27,cache-diagnosis-2026-04-07`,
      }),
    ).toBe(
      'refused its anthropic-beta values (invalid beta flag, none named): sent again without the header and without context_management, diagnostics, fallbacks, fallback_credit_token, speed (fields of those betas)',
    )
    // a beta whose field the body did not send: the header alone
    const c = new UpstreamAdaptations()
    c.learn('v', 'm', unexpected('fast-mode-2026-02-01'), {...passed({model: 'm', messages: []}), betas})
    expect(c.get('v', 'm')).toEqual({refusedBetas: ['fast-mode-2026-02-01']})
  })
})

describe("Claude Code's fields translated", () => {
  it('are not part of the request a translation encodes, for any upstream (they are its own, not the IR)', () => {
    const client = decodeClientRequest('messages', claudeCode, {})
    for (const upstream of ['messages', 'chat', 'responses', 'gemini'] as const) {
      const out = String(encodeUpstreamRequest(client, upstream, 'm').body)
      for (const field of [
        'diagnostics',
        'fallbacks',
        'fallback_credit_token',
        'speed',
        'eager_input_streaming',
      ])
        expect(out, `${upstream} ${field}`).not.toContain(`"${field}"`)
    }
  })
})

describe("a Responses server's refusal of an input item's member", () => {
  const body = {
    model: 'gpt-5.5',
    input: [
      {type: 'message', role: 'user', content: 'hi'},
      {type: 'reasoning', id: 'rs_1', summary: [], status: 'completed'},
      {type: 'function_call', call_id: 'c1', name: 'exec', arguments: '{}', status: 'completed'},
      {type: 'web_search_call', id: 'ws_1', status: 'completed', action: {type: 'search'}},
      {type: 'local_shell_call', id: 'ls_1', call_id: 'c2', action: {type: 'exec'}, status: 'completed'},
    ],
    stream: true,
  }
  const openai = (param: string) =>
    JSON.stringify({
      error: {
        message: `Unknown parameter: '${param}'.`,
        type: 'invalid_request_error',
        param,
        code: 'unknown_parameter',
      },
    })

  it("learned by its place, for the refused item's type: cut out of that type's items only, described", () => {
    const a = new UpstreamAdaptations()
    expect(a.learn('codex', 'gpt-5.5', openai('input[2].status'), sentOfPassedResponses(body))).toBe(
      'refused status on its function_call input items: sent again without it',
    )
    expect(a.get('codex', 'gpt-5.5')).toEqual({inputMembers: {function_call: ['status']}})
    // the next type's refusal, kept beside it
    expect(
      a.learn(
        'codex',
        'gpt-5.5',
        openai('input[1].status'),
        sentOfPassedResponses(body, a.get('codex', 'gpt-5.5')),
      ),
    ).toBe('refused status on its reasoning input items: sent again without it')
    expect(describeAdaptation(a.get('codex', 'gpt-5.5')!)).toEqual([
      'function_call input items sent without status (refused)',
      'reasoning input items sent without status (refused)',
    ])
    // pydantic's words
    expect(
      new UpstreamAdaptations().learn(
        'p',
        'm',
        anthropic('input.1.status: Extra inputs are not permitted'),
        sentOfPassedResponses(body),
      ),
    ).toBe('refused status on its reasoning input items: sent again without it')
    // the bytes: cut from the items of the types learned, a web search's and a shell call's kept
    const text = JSON.stringify(body)
    const cut = withoutItemMembers(Buffer.from(text), 'input', a.get('codex', 'gpt-5.5')!.inputMembers!)
    expect(JSON.parse(String(cut))).toEqual({
      ...body,
      input: body.input.map((item) => {
        if (item.type !== 'reasoning' && item.type !== 'function_call') return item
        const {status: _, ...rest} = item
        return rest
      }),
    })
  })

  it('learns nothing of a member the item needs or its type requires, one the item was not sent with, of another place, or of a value refused', () => {
    const a = new UpstreamAdaptations()
    expect(a.learn('p', 'm', openai('input[0].content'), sentOfPassedResponses(body))).toBeUndefined()
    expect(a.learn('p', 'm', openai('input[1].type'), sentOfPassedResponses(body))).toBeUndefined()
    // a web search's and a local shell call's status: their schema requires it
    expect(a.learn('p', 'm', openai('input[3].status'), sentOfPassedResponses(body))).toBeUndefined()
    expect(a.learn('p', 'm', openai('input[4].status'), sentOfPassedResponses(body))).toBeUndefined()
    // not sent: the user message has no status, there is no sixth item
    expect(a.learn('p', 'm', openai('input[0].status'), sentOfPassedResponses(body))).toBeUndefined()
    expect(a.learn('p', 'm', openai('input[5].status'), sentOfPassedResponses(body))).toBeUndefined()
    expect(a.learn('p', 'm', openai('input[1].phase'), sentOfPassedResponses(body))).toBeUndefined()
    // the words inside an item's own text, echoed
    expect(
      a.learn(
        'p',
        'm',
        "input.0.content: Input should be a valid list [type=list_type, input_value='input.2.status: Extra inputs are not permitted', input_type=str]",
        sentOfPassedResponses(body),
      ),
    ).toBeUndefined()
    expect(
      a.learn('p', 'm', openai('input[0].content[0].status'), sentOfPassedResponses(body)),
    ).toBeUndefined()
    expect(
      a.learn(
        'p',
        'm',
        JSON.stringify({
          error: {message: "Invalid value: 'done'.", param: 'input[1].status', code: 'invalid_value'},
        }),
        sentOfPassedResponses(body),
      ),
    ).toBeUndefined()
    expect(a.list()).toEqual([])
  })
})

describe('a retry that only cuts more names out of the bytes', () => {
  it('is told apart from any other learning (not counted against the cap)', () => {
    expect(onlyMoreCuts(undefined, {drop: ['speed']})).toBe(true)
    expect(
      onlyMoreCuts(
        {drop: ['speed'], thinking: 'enabled'},
        {drop: ['speed', 'diagnostics'], thinking: 'enabled'},
      ),
    ).toBe(true)
    expect(onlyMoreCuts({toolMembers: ['a']}, {toolMembers: ['a', 'b']})).toBe(true)
    expect(onlyMoreCuts(undefined, {inputMembers: {reasoning: ['status']}})).toBe(true)
    // another rule, a part of a field (its own value rule), something forgotten
    expect(onlyMoreCuts(undefined, {drop: ['speed'], noBetas: true})).toBe(false)
    expect(onlyMoreCuts(undefined, {drop: ['reasoning.effort']})).toBe(false)
    expect(onlyMoreCuts({drop: ['speed']}, {drop: ['diagnostics']})).toBe(false)
    expect(onlyMoreCuts({inputMembers: {reasoning: ['status']}}, {inputMembers: {message: ['status']}})).toBe(
      false,
    )
    expect(onlyMoreCuts({drop: ['speed']}, undefined)).toBe(false)
  })
})
