/**
 * Web search through translation. Claude Code's WebSearch tool makes a request of its own with
 * Anthropic's `web_search` server tool forced; Gemini CLI's sends Google Search grounding as its
 * only tool; Codex offers OpenAI's `web_search` beside its functions. Through every peer the
 * search is dropped on the way to another vendor: Claude Code shows "Did 0 searches" and its model
 * takes the upstream's answer from memory for results (claude-code-router #811, CLIProxyAPI #364,
 * CC Switch #5363). Here each goes as the upstream's own search, and its records come back in the
 * client's shape; a chat completions upstream, which has no search, is refused with a 400 that
 * says so, or passed over for a later target that has one. The real daemon, the simulator's
 * vendor searches, the official SDKs.
 */
import Anthropic from '@anthropic-ai/sdk'
import {GoogleGenAI} from '@google/genai'
import OpenAI from 'openai'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {DEFAULT_BREAKER, DEFAULT_TIMEOUTS} from '../src/store/schema.js'
import {
  issueKeyOverApi,
  projectLogRows,
  startSimGatewayWithPolicies,
  takeSimCalls,
} from './helpers/gateway.js'

let base = ''
let simOrigin = ''
let stop: () => Promise<void> = async () => {}
const keys = new Map<string, string>()

const POLICIES: Record<string, Array<{provider: string; model: string}>> = {
  // chat first: the search goes to the Responses target after it
  'chat-then-responses': [
    {provider: 'sim-chat', model: 'sim-mini'},
    {provider: 'sim-responses', model: 'sim-mini'},
  ],
  'chat-only': [{provider: 'sim-chat', model: 'sim-mini'}],
  // the same with fallbacks off: only the first target may answer
  'no-fallbacks': [
    {provider: 'sim-chat', model: 'sim-mini'},
    {provider: 'sim-responses', model: 'sim-mini'},
  ],
  gemini: [{provider: 'sim-gemini', model: 'sim-mini'}],
  // the simulator's Gemini takes Google Search beside functions from a gemini-3 model only
  gemini3: [{provider: 'sim-gemini', model: 'gemini-3-pro-preview'}],
  gemini25: [{provider: 'sim-gemini', model: 'gemini-2.5-flash'}],
  'odd-blocks': [{provider: 'sim-chat', model: 'sim-mini'}],
  messages: [{provider: 'sim-messages', model: 'sim-mini'}],
  responses: [{provider: 'sim-responses', model: 'sim-mini'}],
}

beforeAll(async () => {
  ;({base, simOrigin, stop} = await startSimGatewayWithPolicies(
    Object.entries(POLICIES).map(([id, targets]) => ({
      id: `ws-${id}`,
      routes: Object.fromEntries(
        ['messages', 'responses', 'gemini'].map((f) => [
          f,
          targets.filter((t) => !t.provider.endsWith(f)).map((t) => ({...t, translate: true})),
        ]),
      ),
      fallbacks: id !== 'no-fallbacks',
      breaker: DEFAULT_BREAKER,
      timeouts: DEFAULT_TIMEOUTS,
    })),
  ))
  for (const id of Object.keys(POLICIES))
    keys.set(id, await issueKeyOverApi(base, `ws-${id}`, 'generic_agent', `ws-${id}`))
}, 120_000)

afterAll(() => stop())

/**
 * What Claude Code 2.1.332 sends for WebSearch (recorded from the real CLI; it asks 32 000 tokens,
 * streamed: the SDK refuses that many without a stream).
 */
const claudeSearch = {
  model: 'claude-sonnet-4-5',
  max_tokens: 16000,
  system:
    'You run a web search for another Claude model. Search once, then reply with a brief summary of the results.',
  messages: [{role: 'user' as const, content: 'Perform a web search for the query: gwctl release notes'}],
  tools: [{type: 'web_search_20250305' as const, name: 'web_search' as const, max_uses: 8}],
  tool_choice: {type: 'tool' as const, name: 'web_search'},
  thinking: {type: 'disabled' as const},
}

const calls = (path: RegExp) => takeSimCalls(simOrigin, path)

describe('web search through translation', {timeout: 60_000}, () => {
  it("Claude Code's WebSearch on a chat-first route: the chat target passed over, the Responses one searches", async () => {
    await calls(/./)
    const client = new Anthropic({baseURL: base, apiKey: keys.get('chat-then-responses')!, maxRetries: 0})
    for (const stream of [false, true]) {
      const message = stream
        ? await client.messages.stream(claudeSearch).finalMessage()
        : await client.messages.create(claudeSearch)
      // (a stream gives the search after the text: OpenAI names its pages' titles only in the citations)
      const call = message.content.find((b) => b.type === 'server_tool_use')!
      const result = message.content.find((b) => b.type === 'web_search_tool_result')!
      const rest = message.content.filter((b) => b.type === 'text')
      expect(call).toMatchObject({
        type: 'server_tool_use',
        name: 'web_search',
        input: {query: 'gwctl release notes'},
      })
      expect(result.type).toBe('web_search_tool_result')
      const pages = (result as Anthropic.WebSearchToolResultBlock).content as Anthropic.WebSearchResultBlock[]
      expect(pages.length).toBeGreaterThan(0)
      expect(pages[0].url).toMatch(/^https:\/\/example\.com\//)
      // OpenAI names a page's title only in the answer's citations, after the search: kept in a stream too
      expect(pages[0].title).toBe('gwctl release notes (result 1)')
      expect((result as Anthropic.WebSearchToolResultBlock).tool_use_id).toBe(
        (call as Anthropic.ServerToolUseBlock).id,
      )
      expect(rest.some((b) => b.type === 'text' && b.text.includes('gwctl release notes'))).toBe(true)
      expect(message.usage.server_tool_use?.web_search_requests).toBe(1)
    }
    // nothing went to the chat simulator; the Responses one was asked its own search, forced
    const all = await calls(/\/chat\/completions$|\/responses$/)
    expect(all.filter((c) => Array.isArray(c.messages))).toHaveLength(0)
    const asked = all.filter((c) => c.input !== undefined)
    expect(asked).toHaveLength(2)
    expect(asked[0].tools).toEqual([{type: 'web_search'}])
    expect(asked[0].tool_choice).toBe('required')
    expect(asked[0].include).toContain('web_search_call.action.sources')
    const rows = await projectLogRows(base, 'ws-chat-then-responses', 2)
    expect(rows.map((r) => [r.status, r.provider])).toEqual([
      [200, 'sim-responses'],
      [200, 'sim-responses'],
    ])
  })

  it('a search on a route with only chat completions: a 400 that says why, and nothing sent', async () => {
    await calls(/./)
    const client = new Anthropic({baseURL: base, apiKey: keys.get('chat-only')!, maxRetries: 0})
    const error = await client.messages.create(claudeSearch).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(Anthropic.BadRequestError)
    expect((error as Error).message).toContain(
      'web search cannot be translated to a chat completions upstream: it has no web search tool',
    )
    expect(await calls(/\/chat\/completions$/)).toHaveLength(0)
    const [row] = await projectLogRows(base, 'ws-chat-only', 1)
    expect(row.status).toBe(400)
  })

  it('with fallbacks off the later target is not tried: the chat refusal, and nothing sent', async () => {
    await calls(/./)
    const client = new Anthropic({baseURL: base, apiKey: keys.get('no-fallbacks')!, maxRetries: 0})
    const error = await client.messages.create(claudeSearch).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(Anthropic.BadRequestError)
    expect((error as Error).message).toContain(
      'web search cannot be translated to a chat completions upstream',
    )
    expect(await calls(/\/chat\/completions$|\/responses$/)).toHaveLength(0)
  })

  it("Claude Code's WebSearch on a Gemini model: Google Search grounding, as a search", async () => {
    await calls(/./)
    const client = new Anthropic({baseURL: base, apiKey: keys.get('gemini')!, maxRetries: 0})
    const message = await client.messages.stream(claudeSearch).finalMessage()
    expect(message.content.map((b) => b.type)).toContain('web_search_tool_result')
    const result = message.content.find(
      (b) => b.type === 'web_search_tool_result',
    ) as Anthropic.WebSearchToolResultBlock
    expect((result.content as Anthropic.WebSearchResultBlock[])[0].url).toMatch(/^https:\/\//)
    const [asked] = await calls(/:streamGenerateContent$|:generateContent$/)
    expect(asked.tools).toEqual([{googleSearch: {}}])
    expect(asked.toolConfig).toBeUndefined()
  })

  it("Gemini CLI's google_web_search on a Claude model: grounding with the pages Anthropic's search found", async () => {
    await calls(/./)
    const ai = new GoogleGenAI({apiKey: keys.get('messages')!, httpOptions: {baseUrl: base}})
    const answer = await ai.models.generateContent({
      model: 'gemini-2.5-flash',
      contents: [{role: 'user', parts: [{text: 'gwctl release notes'}]}],
      config: {tools: [{googleSearch: {}}]},
    })
    const grounding = answer.candidates?.[0]?.groundingMetadata
    expect(grounding?.webSearchQueries).toEqual(['gwctl release notes'])
    expect(grounding?.groundingChunks?.[0]?.web?.uri).toMatch(/^https:\/\/example\.com\//)
    const [asked] = await calls(/\/messages$/)
    expect(asked.tools).toEqual([{type: 'web_search_20250305', name: 'web_search'}])
  })

  it("Codex's live web search on a Claude model: a web_search_call item before the answer", async () => {
    await calls(/./)
    const openai = new OpenAI({baseURL: `${base}/v1`, apiKey: keys.get('messages')!, maxRetries: 0})
    const answer = await openai.responses.create({
      model: 'gpt-5.5',
      input: 'search the web for gwctl release notes',
      tools: [
        {type: 'function', name: 'shell', parameters: {type: 'object', properties: {}}, strict: false},
        {type: 'web_search'},
      ],
    })
    const search = answer.output.find(
      (o) => o.type === 'web_search_call',
    ) as OpenAI.Responses.ResponseFunctionWebSearch
    expect(search.status).toBe('completed')
    expect((search.action as {query?: string}).query).toContain('gwctl release notes')
    expect(answer.output_text).toContain('gwctl release notes')
    const [asked] = await calls(/\/messages$/)
    expect(asked.tools.map((t: {type?: string; name: string}) => t.type ?? t.name)).toEqual([
      'shell',
      'web_search_20250305',
    ])
  })
  it("Codex's search beside its functions on a Gemini 3 model: Google Search beside them, the search a web_search_call", async () => {
    await calls(/./)
    const openai = new OpenAI({baseURL: `${base}/v1`, apiKey: keys.get('gemini3')!, maxRetries: 0})
    const codex = {
      model: 'gpt-5.5',
      input: 'search the web for gwctl release notes',
      tools: [
        {
          type: 'function' as const,
          name: 'shell',
          parameters: {type: 'object', properties: {}},
          strict: false,
        },
        {type: 'web_search' as const},
      ],
    }
    for (const stream of [false, true]) {
      const answer = stream
        ? await openai.responses.stream(codex).finalResponse()
        : await openai.responses.create(codex)
      const search = answer.output.find(
        (o) => o.type === 'web_search_call',
      ) as OpenAI.Responses.ResponseFunctionWebSearch
      expect(search?.status).toBe('completed')
      expect((search.action as {query?: string}).query).toContain('gwctl release notes')
      expect(answer.output_text).toContain('gwctl release notes')
    }
    const asked = await calls(/:streamGenerateContent$|:generateContent$/)
    expect(asked).toHaveLength(2)
    expect(asked[0].tools).toEqual([
      {functionDeclarations: [expect.objectContaining({name: 'shell'})], googleSearch: {}},
    ])
    expect(asked[0].toolConfig).toEqual({includeServerSideToolInvocations: true})
    // on Gemini 2.5, which refuses the two together, the search is left out as before
    const openai25 = new OpenAI({baseURL: `${base}/v1`, apiKey: keys.get('gemini25')!, maxRetries: 0})
    const plain = await openai25.responses.create(codex)
    expect(plain.output.some((o) => o.type === 'web_search_call')).toBe(false)
    const [asked25] = await calls(/:generateContent$/)
    expect(asked25.tools).toEqual([{functionDeclarations: [expect.objectContaining({name: 'shell'})]}])
  })

  it("a function named web_search beside Codex's search on a Claude model: renamed there, web_search to Codex", async () => {
    await calls(/./)
    const openai = new OpenAI({baseURL: `${base}/v1`, apiKey: keys.get('messages')!, maxRetries: 0})
    const codex = {
      model: 'gpt-5.5',
      input: 'please use a tool',
      tools: [
        {
          type: 'function' as const,
          name: 'web_search',
          parameters: {type: 'object', properties: {q: {type: 'string'}}},
          strict: false,
        },
        {type: 'web_search' as const},
      ],
    }
    for (const stream of [false, true]) {
      const answer = stream
        ? await openai.responses.stream(codex).finalResponse()
        : await openai.responses.create(codex)
      const call = answer.output.find(
        (o) => o.type === 'function_call',
      ) as OpenAI.Responses.ResponseFunctionToolCall
      expect(call?.name).toBe('web_search')
    }
    const asked = await calls(/\/messages$/)
    expect(asked).toHaveLength(2)
    const names = asked[0].tools.map((t: {name: string}) => t.name)
    expect(names[0]).toMatch(/^web_search_[0-9a-f]{8}$/)
    expect(names[1]).toBe('web_search')
    expect(asked[1].tools).toEqual(asked[0].tools)
  })

  it("Claude Code's tool result with a search_result and a block no other vendor has, on a chat model: both read as text, the row says what was left out", async () => {
    await calls(/./)
    const client = new Anthropic({baseURL: base, apiKey: keys.get('odd-blocks')!, maxRetries: 0})
    const content = [
      {
        type: 'search_result',
        source: 'https://docs.example.com/gwctl',
        title: 'gwctl docs',
        content: [{type: 'text', text: 'gwctl fronts model traffic.'}],
        citations: {enabled: true},
      },
      {type: 'chart', data: [1, 2, 3]},
    ]
    const message = await client.messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 256,
      tools: [{name: 'kb', input_schema: {type: 'object'}}],
      messages: [
        {role: 'user', content: 'what is gwctl?'},
        {role: 'assistant', content: [{type: 'tool_use', id: 'toolu_1', name: 'kb', input: {}}]},
        {
          role: 'user',
          content: [{type: 'tool_result', tool_use_id: 'toolu_1', content: content as never}],
        },
      ],
    })
    expect(message.stop_reason).toBe('end_turn')
    const [asked] = await calls(/\/chat\/completions$/)
    const tool = asked.messages.find((m: {role: string}) => m.role === 'tool')
    expect(tool.content).toContain(
      'Search result "gwctl docs" <https://docs.example.com/gwctl>:\ngwctl fronts model traffic.',
    )
    expect(tool.content).toContain(
      '[The tool\'s result held a block of type "chart", left out: it cannot be sent to this model]',
    )
    const [row] = await projectLogRows(base, 'ws-odd-blocks', 1)
    expect(row.status).toBe(200)
    expect(row.error).toContain('left out chart blocks: a line in place of each')
  })
})
