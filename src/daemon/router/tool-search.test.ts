/**
 * Claude Code's tool search (deferred tools, `tool_reference` blocks) passed through to a Messages
 * server that is not Anthropic's: the deferred tools loaded by the gateway, as on a translated
 * route, for a model that is not Claude's from the first request; learned from a relay's refusal for
 * one that is; the tool-search betas left out with it.
 */
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'

import {withDeferredToolsLoaded} from '../../protocols/deferred-tools.js'
import {loaded as loadedRefs, placeholder, ref, search} from '../../protocols/deferred-tools-fixture.js'
import {forwardHeaders} from './headers.js'
import type {ProxyTarget} from './proxy.js'
import {learnedAdaptations} from './proxy.js'
import {judgedMessagesGateway, messagesTarget} from './proxy-fixture.js'
import {asksToolSearch, refusesDeferredTools, withoutToolSearchBetas} from './tool-search.js'

const OPENROUTER =
  'Deferred custom tools are only supported on Anthropic models and on Anthropic-compatible provider endpoints that implement deferral. Other endpoints cannot call tools omitted from tools[]. Received stealth/ox-alpha.'

describe('refusesDeferredTools', () => {
  it("reads OpenRouter's, Ark's and Kimi's refusals, not another", () => {
    for (const words of [
      JSON.stringify({error: {message: OPENROUTER, code: 400}}),
      '{"error":{"message":"Deferred custom tools are only supported on Anthropic models. Non-Anthropic models cannot call tools omitted from tools[]. Received x-ai/grok-4.6-20260810.","code":400}}',
      "The parameter messages.content.type specified in the request are not valid: invalid value: tool_reference, supported values are: text, thinking, image, 'tool_use' and tool_result.",
      '{"error":{"type":"invalid_request_error","message":"Invalid request Error"},"type":"error"}',
      'tools.3.defer_loading: Extra inputs are not permitted',
    ])
      expect([words, refusesDeferredTools(words)]).toEqual([words, true])
    for (const words of [
      '{"error":{"type":"invalid_request_error","message":"Invalid request: max_tokens too large"},"type":"error"}',
      'tools: too many tools',
      'invalid params',
    ])
      expect([words, refusesDeferredTools(words)]).toEqual([words, false])
  })

  it('takes the tool-search betas out of anthropic-beta, the others kept in order', () => {
    const betas = 'claude-code-20250219,advanced-tool-use-2025-11-20,interleaved-thinking-2025-05-14'
    expect(asksToolSearch(betas)).toBe(true)
    expect(asksToolSearch('claude-code-20250219')).toBe(false)
    expect(asksToolSearch(undefined)).toBe(false)
    expect(withoutToolSearchBetas(betas)).toBe('claude-code-20250219,interleaved-thinking-2025-05-14')
    expect(
      withoutToolSearchBetas('tool-search-tool-2025-10-19, advanced-tool-use-2025-11-20'),
    ).toBeUndefined()
    const provider = messagesTarget('kimi', 'k2.5', 'http://127.0.0.1:1').provider
    const incoming = {'anthropic-beta': betas}
    expect(forwardHeaders(incoming, provider, 'sk', 10)['anthropic-beta']).toBe(betas)
    expect(
      forwardHeaders(incoming, provider, 'sk', 10, false, undefined, undefined, true)['anthropic-beta'],
    ).toBe('claude-code-20250219,interleaved-thinking-2025-05-14')
    expect(
      'anthropic-beta' in
        forwardHeaders(
          {'anthropic-beta': 'advanced-tool-use-2025-11-20'},
          provider,
          'sk',
          10,
          false,
          undefined,
          undefined,
          true,
        ),
    ).toBe(false)
  })
})

let refuse = false
let targets: ProxyTarget[] = []
const {
  gateway,
  upstream,
  received,
  headers,
  start,
  clear,
  close,
  post: claudeCodePost,
} = judgedMessagesGateway(
  (b) => {
    const sent = JSON.stringify(b)
    return refuse && (sent.includes('"defer_loading"') || sent.includes('"tool_reference"'))
      ? {status: 400, body: {error: {message: OPENROUTER, code: 400}}}
      : undefined
  },
  {route: () => ({targets})},
)

beforeAll(start)
afterEach(() => {
  clear()
  refuse = false
})
afterAll(close)

const BETAS = 'claude-code-20250219,advanced-tool-use-2025-11-20,interleaved-thinking-2025-05-14'
const schema = {
  type: 'object',
  properties: {url: {type: 'string'}},
  required: ['url'],
  additionalProperties: false,
}

/**
 * Claude Code 2.1.332's request after its ToolSearch loaded WebFetch (its shape as recorded from the
 * real CLI, cut: ../../protocols/deferred-tools-fixture.ts): ToolSearch and Read shown, WebFetch and
 * the placeholder deferred, the search's result a tool_reference block.
 */
const claudeCode = (model: string, text = 'fetch example.com') =>
  JSON.stringify({
    model,
    messages: [
      {role: 'user', content: [{type: 'text', text}]},
      search('toolu_1', 'select:WebFetch'),
      loadedRefs('toolu_1', [ref('WebFetch')]),
    ],
    system: [{type: 'text', text: 'You are Claude Code.', cache_control: {type: 'ephemeral'}}],
    tools: [
      {name: 'ToolSearch', description: 'Searches the deferred tools.', input_schema: schema},
      {name: 'Read', description: 'Reads a file.', input_schema: schema},
      {name: 'WebFetch', description: 'Fetches a page.', input_schema: schema, defer_loading: true},
      placeholder,
    ],
    metadata: {user_id: 'user_abc_account__session_1'},
    max_tokens: 32000,
    stream: false,
  })
/** The same request with its tool search done by the gateway. */
const loaded = (body: string) => {
  const sent = JSON.parse(body) as {tools: unknown[]; messages: Array<{content: unknown[]}>}
  const [toolSearch, read, webFetch] = sent.tools as Array<Record<string, unknown>>
  const {defer_loading: _, ...shown} = webFetch
  sent.tools = [toolSearch, read, shown]
  sent.messages[2].content[0] = {
    type: 'tool_result',
    tool_use_id: 'toolu_1',
    content: [
      {
        type: 'text',
        text: `<functions>\n<function>${JSON.stringify({description: 'Fetches a page.', name: 'WebFetch', parameters: schema})}</function>\n</functions>`,
      },
    ],
  }
  return JSON.stringify(sent)
}

const post = (body: string): Promise<Response> => claudeCodePost(body, {'anthropic-beta': BETAS})

describe("Claude Code's tool search passed through", () => {
  it('the rewrite is the one the proxy sends', () => {
    expect(String(withDeferredToolsLoaded(Buffer.from(claudeCode('m'))))).toBe(loaded(claudeCode('m')))
  })

  it("to a model that is not Claude's (Kimi's coding endpoint, OpenRouter with another model): loaded by the gateway from the first request, without the tool-search beta", async () => {
    targets = [messagesTarget('kimi-coding', 'kimi-for-coding', upstream.origin)]
    expect((await post(claudeCode('claude-sonnet-4-5'))).status).toBe(200)
    expect(received.map(String)).toEqual([loaded(claudeCode('kimi-for-coding'))])
    expect(headers[0]['anthropic-beta']).toBe('claude-code-20250219,interleaved-thinking-2025-05-14')
    expect(gateway.results.map((r) => r.error)).toEqual([null])
  })

  it('a request without tool search goes as it came, its betas too', async () => {
    targets = [messagesTarget('kimi-coding', 'kimi-for-coding', upstream.origin)]
    const plain = JSON.stringify({
      model: 'kimi-for-coding',
      messages: [{role: 'user', content: 'hi'}],
      tools: [{name: 'Read', description: 'Reads a file.', input_schema: schema}],
      max_tokens: 32000,
      stream: false,
    })
    expect((await post(plain)).status).toBe(200)
    expect(received.map(String)).toEqual([plain])
    expect(headers[0]['anthropic-beta']).toBe(BETAS)
  })

  it("to a relay in front of Claude: as it came; refused in OpenRouter's words, learned and sent again at once loaded, later requests so from the first try", async () => {
    targets = [messagesTarget('relay', 'claude-sonnet-4-5', upstream.origin)]
    expect((await post(claudeCode('claude-sonnet-4-5'))).status).toBe(200)
    expect(received.map(String)).toEqual([claudeCode('claude-sonnet-4-5')])
    expect(headers[0]['anthropic-beta']).toBe(BETAS)
    received.length = 0
    headers.length = 0
    targets = [messagesTarget('openrouter', 'claude-sonnet-4-5', upstream.origin)]
    refuse = true
    expect((await post(claudeCode('claude-sonnet-4-5'))).status).toBe(200)
    expect(received.map(String)).toEqual([
      claudeCode('claude-sonnet-4-5'),
      loaded(claudeCode('claude-sonnet-4-5')),
    ])
    expect(headers.map((h) => h['anthropic-beta'])).toEqual([
      BETAS,
      'claude-code-20250219,interleaved-thinking-2025-05-14',
    ])
    expect(gateway.results.at(-1)?.error).toBe(
      "openrouter refused Claude Code's tool search (deferred tools, tool_reference blocks): sent again with the referenced tools loaded, the others left out, each reference as its definition",
    )
    expect(learnedAdaptations().find((a) => a.provider === 'openrouter')?.rules).toEqual([
      "Claude Code's tool search done by the gateway: deferred tools loaded when referenced, the others left out, each tool_reference as the tool's definition (refused)",
    ])
    received.length = 0
    headers.length = 0
    expect((await post(claudeCode('claude-sonnet-4-5', 'again'))).status).toBe(200)
    expect(received.map(String)).toEqual([loaded(claudeCode('claude-sonnet-4-5', 'again'))])
    expect(headers[0]['anthropic-beta']).toBe('claude-code-20250219,interleaved-thinking-2025-05-14')
  })
})
