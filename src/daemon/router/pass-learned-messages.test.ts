/**
 * What an Anthropic-compatible upstream refused of a Messages request passed through untranslated
 * (Claude Code on Ollama's `/v1/messages`, or on a Claude model its policy maps it to) is learned
 * as a translated request's refusal is, and the request goes again with the rule applied: thinking
 * for a model without it, the thinking form the model takes, a field the server does not know.
 * What the proxy sends upstream, before and after it learned, and what the client gets. A
 * scripted upstream behind the proxy.
 */
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'

import type {ProxyTarget} from './proxy.js'
import {learnedAdaptations} from './proxy.js'
import {judgedMessagesGateway, MESSAGES_STREAM, messagesTarget} from './proxy-fixture.js'

/**
 * How the upstream judges a request: the message of its 400 (in Anthropic's error body), a whole
 * error body of another shape, or nothing (it answers).
 */
let judge: (body: Record<string, unknown>) => string | Record<string, unknown> | undefined = () => undefined
let targets: ProxyTarget[] = []
/** A scripted upstream behind the gateway; `received`: what it received, raw. */
const {
  gateway,
  upstream,
  received,
  start,
  clear,
  close,
  post: claudeCodePost,
} = judgedMessagesGateway(
  // (a refusal in Ollama's Anthropic error body, as Anthropic's: type, error.type, error.message)
  (b) => {
    const message = judge(b)
    return message === undefined
      ? undefined
      : {
          status: 400,
          body:
            typeof message === 'string'
              ? {type: 'error', error: {type: 'invalid_request_error', message}, request_id: 'req_1'}
              : message,
        }
  },
  {route: () => ({targets})},
)

const target = (name: string, model: string): ProxyTarget => messagesTarget(name, model, upstream.origin)

beforeAll(start)

afterEach(() => {
  clear()
  judge = () => undefined
})

afterAll(close)

const CLAUDE_CODE = 'claude-cli/2.1.332 (external, cli)'

const post = (body: unknown, userAgent = CLAUDE_CODE): Promise<Response> =>
  claudeCodePost(body, {'user-agent': userAgent})

const sent = (i: number): Record<string, unknown> =>
  JSON.parse(String(received[i])) as Record<string, unknown>

const BILLING = {type: 'text', text: 'x-anthropic-billing-header: cc_version=2.1.332.0b8; cc_entrypoint=cli;'}
const SYSTEM = [{type: 'text', text: 'You are Claude Code.', cache_control: {type: 'ephemeral'}}]

/** Claude Code 2.1.332's request for a Claude 4.5 model, in its key order. */
const claudeCode = (model: string, extra: Record<string, unknown> = {}) => ({
  model,
  messages: [{role: 'user', content: [{type: 'text', text: 'hi', cache_control: {type: 'ephemeral'}}]}],
  system: [BILLING, ...SYSTEM],
  tools: [{name: 'Bash', input_schema: {type: 'object', properties: {command: {type: 'string'}}}}],
  metadata: {user_id: '{"session_id":"s"}'},
  max_tokens: 32000,
  thinking: {budget_tokens: 31999, type: 'enabled', display: 'omitted'},
  context_management: {edits: [{type: 'clear_thinking_20251015', keep: 'all'}]},
  stream: true,
  ...extra,
})

/** The upstream got two tries: `first` (as the client sent it), then `again`, each to the byte. */
const expectTries = (first: unknown, again: unknown): void => {
  expect(received.map(String)).toEqual([JSON.stringify(first), JSON.stringify(again)])
}

/** The rules `/api/adaptations` lists as learned for `provider`. */
const rulesOf = (provider: string) => learnedAdaptations().find((a) => a.provider === provider)?.rules

/** `body` without `keys`, in its own order (what the upstream gets once a rule is learned). */
const without = (body: Record<string, unknown>, ...keys: string[]): Record<string, unknown> =>
  Object.fromEntries(Object.entries(body).filter(([k]) => !keys.includes(k)))

describe('a Messages request passed through, refused for what a translated one is adapted for', () => {
  it("Ollama's model without thinking: sent again without thinking, and from then on; the attribution block out both times", async () => {
    targets = [target('ollama', 'llama3.1:8b')]
    judge = (b) =>
      (b.thinking as {type?: string} | undefined)?.type === 'enabled'
        ? '"llama3.1:8b" does not support thinking'
        : undefined
    const body = claudeCode('claude-sonnet-4-5')
    const first = await post(body)
    expect(first.status).toBe(200)
    expect(await first.text()).toBe(MESSAGES_STREAM)
    // the first try as it came, less the attribution block (Ollama is not Anthropic's API)
    const asCame = {...body, model: 'llama3.1:8b', system: SYSTEM}
    // the second without thinking, every other field in the client's order and spelling
    expectTries(asCame, without(asCame, 'thinking'))
    expect((await gateway.settled(1))[0].error).toBe(
      'ollama refused thinking (a model without it): sent again without thinking',
    )
    expect(rulesOf('ollama')).toEqual(['sent without thinking'])

    // the next turn: one try, without it, the same bytes turn after turn (the prefix cache)
    received.length = 0
    const next = claudeCode('claude-sonnet-4-5', {
      system: [{...BILLING, text: BILLING.text.replace('0b8', '9f3')}, ...SYSTEM],
    })
    expect((await post(next)).status).toBe(200)
    expect(received).toHaveLength(1)
    expect(String(received[0])).toBe(JSON.stringify(without(asCame, 'thinking')))
    expect((await gateway.settled(2))[1].error).toBeNull()
  })

  it('an effort read as a thinking level by a model without thinking: sent again without output_config.effort', async () => {
    targets = [target('ollama', 'qwen2.5-coder:7b')]
    judge = (b) =>
      (b.output_config as {effort?: string} | undefined)?.effort !== undefined
        ? '"qwen2.5-coder:7b" does not support thinking'
        : undefined
    const body = {
      model: 'qwen2.5-coder:7b',
      max_tokens: 16000,
      messages: [{role: 'user', content: 'hi'}],
      thinking: {type: 'adaptive'},
      output_config: {effort: 'high'},
    }
    const answer = await post(body, 'opencode/1.18.33')
    expect(answer.status).toBe(200)
    expect(await answer.json()).toMatchObject({content: [{type: 'text', text: 'done'}]})
    expect(received).toHaveLength(2)
    expect(String(received[1])).toBe(JSON.stringify(without(body, 'output_config')))
  })

  it('a Claude model that takes only adaptive thinking (a policy maps Claude Code to Opus 4.7): sent as adaptive with the budget as an effort', async () => {
    targets = [target('anthropic-relay', 'claude-opus-4-7')]
    judge = (b) =>
      (b.thinking as {type?: string} | undefined)?.type === 'enabled'
        ? '"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.'
        : undefined
    const body = claudeCode('claude-sonnet-4-5', {stream: false})
    const answer = await post(body)
    expect(answer.status).toBe(200)
    expect(received).toHaveLength(2)
    const retried = sent(1)
    expect(retried.thinking).toEqual({type: 'adaptive', display: 'omitted'})
    expect(retried.output_config).toEqual({effort: 'high'})
    expect(without(retried, 'thinking', 'output_config')).toEqual(
      without({...body, model: 'claude-opus-4-7', system: SYSTEM}, 'thinking'),
    )
    expect((await gateway.settled(1))[0].error).toBe(
      'anthropic-relay refused thinking.type enabled: sent again as adaptive thinking with output_config.effort',
    )
  })

  it("a model that refuses adaptive thinking: sent as enabled with the effort's budget under max_tokens", async () => {
    targets = [target('anthropic-relay', 'claude-sonnet-4-5')]
    judge = (b) =>
      (b.thinking as {type?: string} | undefined)?.type === 'adaptive'
        ? 'adaptive thinking is not supported on this model'
        : undefined
    const body = {
      model: 'claude-sonnet-4-5',
      max_tokens: 8000,
      messages: [{role: 'user', content: 'hi'}],
      thinking: {type: 'adaptive'},
      output_config: {effort: 'xhigh'},
    }
    expect((await post(body)).status).toBe(200)
    expect(received).toHaveLength(2)
    expect(sent(1)).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 8000,
      messages: [{role: 'user', content: 'hi'}],
      thinking: {type: 'enabled', budget_tokens: 7999},
    })
  })

  it("a server that does not know Claude Code's context_management: sent again without it", async () => {
    targets = [target('relay', 'glm-4.6')]
    judge = (b) =>
      b.context_management !== undefined ? 'context_management: Extra inputs are not permitted' : undefined
    const body = claudeCode('glm-4.6', {stream: false})
    expect((await post(body)).status).toBe(200)
    expect(received).toHaveLength(2)
    expect(String(received[1])).toBe(JSON.stringify(without({...body, system: SYSTEM}, 'context_management')))
  })

  it('a refusal that teaches nothing reaches the client as it came, after one try', async () => {
    targets = [target('ollama2', 'llama3.2')]
    judge = () => 'messages: roles must alternate'
    const answer = await post({model: 'llama3.2', max_tokens: 100, messages: [{role: 'user', content: 'hi'}]})
    expect(answer.status).toBe(400)
    expect(await answer.json()).toMatchObject({error: {message: 'messages: roles must alternate'}})
    expect(received).toHaveLength(1)
    // a model without thinking that was sent none: nothing to drop, nothing learned
    received.length = 0
    judge = () => '"llama3.2" does not support thinking'
    expect((await post({model: 'llama3.2', max_tokens: 100, messages: []})).status).toBe(400)
    expect(received).toHaveLength(1)
    expect(learnedAdaptations().find((a) => a.provider === 'ollama2')).toBeUndefined()
  })

  /** DeepSeek's error body, OpenAI's shape on its Anthropic endpoint too. */
  const deepseek = (message: string) => ({
    error: {message, type: 'invalid_request_error', param: null, code: 'invalid_request_error'},
  })

  it("Claude Code's sub-agent on DeepSeek's Anthropic endpoint: the effort beside thinking disabled learned away, the main agent's kept", async () => {
    targets = [target('deepseek-effort', 'deepseek-v4-pro')]
    judge = (b) =>
      (b.thinking as {type?: string} | undefined)?.type === 'disabled' &&
      (b.output_config as {effort?: string} | undefined)?.effort !== undefined
        ? deepseek('thinking options type cannot be disabled when reasoning_effort is set')
        : undefined
    const subAgent = claudeCode('deepseek-v4-pro', {
      thinking: {type: 'disabled'},
      output_config: {effort: 'max'},
    })
    const answer = await post(subAgent)
    expect(answer.status).toBe(200)
    expect(await answer.text()).toBe(MESSAGES_STREAM)
    const asCame = {...subAgent, system: SYSTEM}
    expectTries(asCame, without(asCame, 'output_config'))
    expect((await gateway.settled(1))[0].error).toBe(
      'deepseek-effort refused output_config.effort beside thinking.type disabled: sent again without the effort (requests that turn thinking off, from now on)',
    )
    expect(rulesOf('deepseek-effort')).toEqual([
      'output_config.effort left out where thinking.type is disabled (refused together)',
    ])

    // the main agent's next turn thinks: its effort goes as it came, one try
    received.length = 0
    const main = claudeCode('deepseek-v4-pro', {thinking: {type: 'adaptive'}, output_config: {effort: 'max'}})
    expect((await post(main)).status).toBe(200)
    expect(received.map(String)).toEqual([JSON.stringify({...main, system: SYSTEM})])
    // the next sub-agent: one try, without the effort
    received.length = 0
    expect((await post(subAgent)).status).toBe(200)
    expect(received.map(String)).toEqual([JSON.stringify(without(asCame, 'output_config'))])
  })

  it("Claude Code's WebSearch on DeepSeek's Anthropic endpoint: a forced tool_choice refused in thinking mode, sent again with thinking disabled, the choice kept", async () => {
    targets = [target('deepseek-choice', 'deepseek-v4-pro')]
    // DeepSeek's Anthropic endpoint thinks unless told not to, and takes the forced call without
    judge = (b) =>
      (b.tool_choice as {type?: string} | undefined)?.type === 'tool' &&
      (b.thinking as {type?: string} | undefined)?.type !== 'disabled'
        ? deepseek('deepseek-reasoner does not support this tool_choice')
        : undefined
    const search = claudeCode('deepseek-v4-pro', {
      messages: [
        {role: 'user', content: [{type: 'text', text: 'Perform a web search for the query: gwctl'}]},
      ],
      tools: [{name: 'web_search', input_schema: {type: 'object'}}],
      tool_choice: {type: 'tool', name: 'web_search'},
      output_config: {effort: 'max'},
    })
    const answer = await post(search)
    expect(answer.status).toBe(200)
    const asCame = {...search, system: SYSTEM}
    // thinking off, the effort gone with it (DeepSeek refuses the two together), the choice kept
    expectTries(asCame, {...without(asCame, 'output_config'), thinking: {type: 'disabled'}})
    expect((await gateway.settled(1))[0].error).toBe(
      'deepseek-choice refused a forced tool_choice in thinking mode: sent again with thinking.type disabled (and no output_config.effort), the forced choice kept',
    )
    // the next forced request goes so at once; one that forces nothing as it came
    received.length = 0
    gateway.results.length = 0
    expect((await post(search)).status).toBe(200)
    const main = claudeCode('deepseek-v4-pro')
    expect((await post(main)).status).toBe(200)
    expect(received.map(String)).toEqual([
      JSON.stringify({...without(asCame, 'output_config'), thinking: {type: 'disabled'}}),
      JSON.stringify({...main, system: SYSTEM}),
    ])
  })

  it('a forced tool_choice still refused with thinking off: sent as auto with the call asked for', async () => {
    targets = [target('deepseek-choice-always', 'deepseek-v4-pro')]
    judge = (b) =>
      (b.tool_choice as {type?: string} | undefined)?.type === 'tool'
        ? deepseek('deepseek-reasoner does not support this tool_choice')
        : undefined
    const search = claudeCode('deepseek-v4-pro', {
      messages: [
        {role: 'user', content: [{type: 'text', text: 'Perform a web search for the query: gwctl'}]},
      ],
      tools: [{name: 'web_search', input_schema: {type: 'object'}}],
      tool_choice: {type: 'tool', name: 'web_search'},
    })
    const answer = await post(search)
    expect(answer.status).toBe(200)
    expect(received).toHaveLength(3)
    const asCame = {...search, system: SYSTEM}
    expect(String(received[0])).toBe(JSON.stringify(asCame))
    expect(JSON.parse(String(received[1])).thinking).toEqual({type: 'disabled'})
    expect(String(received[2])).toBe(
      JSON.stringify({
        ...asCame,
        messages: [
          {
            role: 'user',
            content: [
              {type: 'text', text: 'Perform a web search for the query: gwctl'},
              {type: 'text', text: 'In this answer, call the tool web_search.'},
            ],
          },
        ],
        tool_choice: {type: 'auto'},
      }),
    )
    expect((await gateway.settled(1))[0].error).toBe(
      'deepseek-choice-always refused a forced tool_choice in thinking mode: sent again with thinking.type disabled (and no output_config.effort), the forced choice kept; deepseek-choice-always refused a forced tool_choice: sent again with tool_choice auto, the call asked for at the end of the prompt',
    )
  })

  /** A history whose second turn called Bash, kept with no thinking block (and `extra` turns' blocks). */
  const toolLoop = (first: Record<string, unknown>[] = []) => [
    {role: 'user', content: [{type: 'text', text: 'list the files'}]},
    {
      role: 'assistant',
      content: [...first, {type: 'tool_use', id: 'toolu_1', name: 'Bash', input: {command: 'ls'}}],
    },
    {role: 'user', content: [{type: 'tool_result', tool_use_id: 'toolu_1', content: 'a.txt'}]},
  ]
  const lacksThinking = (b: Record<string, unknown>): boolean =>
    (b.thinking as {type?: string} | undefined)?.type !== 'disabled' &&
    (b.messages as Array<{role: string; content: Array<{type: string}>}>).some(
      (m) =>
        m.role === 'assistant' &&
        m.content.some((c) => c.type === 'tool_use') &&
        !m.content.some((c) => c.type === 'thinking'),
    )

  it("DeepSeek's Anthropic endpoint: a tool call turn without thinking refused, sent again with an empty thinking block at its head, and from then on", async () => {
    targets = [target('deepseek-history', 'deepseek-v4-pro')]
    judge = (b) =>
      lacksThinking(b)
        ? deepseek('The `content[].thinking` in the thinking mode must be passed back to the API.')
        : undefined
    const body = claudeCode('deepseek-v4-pro', {
      messages: toolLoop(),
      thinking: {type: 'adaptive'},
      output_config: {effort: 'high'},
    })
    const answer = await post(body)
    expect(answer.status).toBe(200)
    expect(await answer.text()).toBe(MESSAGES_STREAM)
    const asCame = {...body, system: SYSTEM}
    const placeheld = {
      ...asCame,
      messages: toolLoop([{type: 'thinking', thinking: '', signature: ''}]),
    }
    // thinking kept on, its effort kept, every other byte as the client sent it
    expectTries(asCame, placeheld)
    expect((await gateway.settled(1))[0].error).toBe(
      'deepseek-history refused an assistant tool call turn without a thinking block: sent again with an empty one at the head of each such turn (from now on)',
    )
    expect(rulesOf('deepseek-history')).toEqual([
      'an empty thinking block at the head of each assistant tool call turn without one (refused)',
    ])
    // the next turn: one try; a turn with its own thinking, and a request with none to fix, as they came
    received.length = 0
    expect((await post(body)).status).toBe(200)
    const thought = claudeCode('deepseek-v4-pro', {
      messages: toolLoop([{type: 'thinking', thinking: 'ls it', signature: 'c2ln'}]),
    })
    expect((await post(thought)).status).toBe(200)
    const plain = claudeCode('deepseek-v4-pro')
    expect((await post(plain)).status).toBe(200)
    expect(received.map(String)).toEqual([
      JSON.stringify(placeheld),
      JSON.stringify({...thought, system: SYSTEM}),
      JSON.stringify({...plain, system: SYSTEM}),
    ])
  })

  it("Kimi's Anthropic endpoint: the same refused in its words, sent again with thinking off (no effort, no clear_thinking edit)", async () => {
    targets = [target('kimi-history', 'kimi-k2.6')]
    judge = (b) =>
      lacksThinking(b)
        ? 'thinking is enabled but reasoning_content is missing in assistant tool call message at index 1'
        : undefined
    const body = claudeCode('kimi-k2.6', {
      messages: toolLoop(),
      thinking: {type: 'adaptive'},
      output_config: {effort: 'high'},
    })
    const answer = await post(body)
    expect(answer.status).toBe(200)
    const asCame = {...body, system: SYSTEM}
    expectTries(asCame, {
      ...without(asCame, 'context_management', 'output_config'),
      thinking: {type: 'disabled'},
    })
    expect(rulesOf('kimi-history')).toEqual([
      'thinking turned off for a history with an assistant tool call turn without thinking (refused)',
    ])
    // a history whose tool turns all think keeps thinking on, one try
    received.length = 0
    const thought = claudeCode('kimi-k2.6', {
      messages: toolLoop([{type: 'thinking', thinking: 'ls it', signature: 'c2ln'}]),
    })
    expect((await post(thought)).status).toBe(200)
    expect(received.map(String)).toEqual([JSON.stringify({...thought, system: SYSTEM})])
  })

  it("Claude Code's auto-mode classifier call without thinking: sent with thinking disabled (its effort out), one try", async () => {
    targets = [target('deepseek-classifier', 'deepseek-v4-pro')]
    const classifier = {
      model: 'claude-sonnet-4-5',
      max_tokens: 64,
      temperature: 0,
      system: [
        BILLING,
        {type: 'text', text: 'You are a security monitor for autonomous AI coding agents. Decide.'},
      ],
      messages: [{role: 'user', content: '<transcript>Bash: rm -rf build</transcript>'}],
      stop_sequences: ['</block>'],
      output_config: {effort: 'high'},
    }
    const answer = await post(classifier)
    expect(answer.status).toBe(200)
    expect(received).toHaveLength(1)
    expect(sent(0)).toEqual({
      ...without(classifier, 'output_config'),
      model: 'deepseek-v4-pro',
      system: [classifier.system[1]],
      thinking: {type: 'disabled'},
    })
    // the same words in a streamed request's transcript (Claude Code's main agent): as it came
    received.length = 0
    const main = claudeCode('deepseek-v4-pro', {
      messages: [{role: 'user', content: 'You are a security monitor for autonomous AI coding agents'}],
    })
    expect((await post(main)).status).toBe(200)
    expect(received.map(String)).toEqual([JSON.stringify({...main, system: SYSTEM})])
  })
})
