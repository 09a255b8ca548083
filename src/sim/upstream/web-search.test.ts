/**
 * Each vendor's own web search, as the simulated upstreams answer it, seen on the wire: the
 * Messages `web_search_*` server tool, the Responses `web_search` tool, Gemini's `googleSearch`;
 * and the refusals of a tool choice that names nothing the request holds.
 */
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {Simulator} from '../server.js'
import {startSim} from '../server.js'
import {simTokens} from '../sse.js'
import {encryptedResult} from './web-search.js'

let sim: Simulator

beforeAll(async () => {
  sim = await startSim({timeScale: 1000})
})
afterAll(async () => {
  await sim.close()
})

type Json = Record<string, any>
type Event = {event?: string; data: any}

const AUTH = {
  authorization: 'Bearer sk-test',
  'x-api-key': 'sk-ant-test',
  'x-goog-api-key': 'g-test',
  'anthropic-version': '2023-06-01',
}

async function post(path: string, body: unknown) {
  const response = await fetch(sim.origin + path, {
    method: 'POST',
    headers: {'content-type': 'application/json', ...AUTH},
    body: JSON.stringify(body),
  })
  const text = await response.text()
  const events: Event[] = []
  if ((response.headers.get('content-type') ?? '').startsWith('text/event-stream'))
    for (const block of text.split('\n\n').filter(Boolean)) {
      const event = /^event: (.*)$/m.exec(block)?.[1]
      const data = /^data: (.*)$/m.exec(block)?.[1] ?? ''
      events.push({...(event ? {event} : {}), data: JSON.parse(data)})
    }
  return {status: response.status, text, events, json: events.length ? undefined : (JSON.parse(text) as Json)}
}

const QUERY = 'vitest snapshot docs'
const TEXT = `Web search results for "${QUERY}". ${QUERY} (result 1) and ${QUERY} (result 2) cover it.`
const url = (n: number, domain = 'example.com') => `https://${domain}/search/vitest-snapshot-docs/${n}`

describe('messages: the web_search server tool', () => {
  // Claude Code's WebSearch sub-request
  const body = {
    model: 'claude-x',
    max_tokens: 100,
    tools: [{type: 'web_search_20250305', name: 'web_search', max_uses: 8}],
    tool_choice: {type: 'tool', name: 'web_search'},
    messages: [{role: 'user', content: `Perform a web search for the query: ${QUERY}`}],
  }
  const results = (domain = 'example.com') =>
    [1, 2].map((n) => ({
      type: 'web_search_result',
      url: url(n, domain),
      title: `${QUERY} (result ${n})`,
      encrypted_content: encryptedResult(url(n, domain)),
      page_age: null,
    }))

  it("answers Claude Code's sub-request with the search, its results and a text naming the query", async () => {
    const {status, json} = await post('/v1/messages', body)
    expect(status).toBe(200)
    const id = json?.content[0].id
    expect(id).toMatch(/^srvtoolu_/)
    expect(json?.content).toEqual([
      {type: 'server_tool_use', id, name: 'web_search', input: {query: QUERY}},
      {type: 'web_search_tool_result', tool_use_id: id, content: results()},
      {type: 'text', text: TEXT},
    ])
    expect(Buffer.from(json?.content[1].content[0].encrypted_content, 'base64').toString()).toBe(
      `simweb:${url(1)}`,
    )
    expect(json?.stop_reason).toBe('end_turn')
    expect(json?.usage).toMatchObject({
      output_tokens: simTokens(TEXT),
      server_tool_use: {web_search_requests: 1},
      service_tier: 'standard',
    })
  })

  it("streams Anthropic's sequence: the call with its query in one delta, the results whole, the text", async () => {
    const {events} = await post('/v1/messages', {...body, stream: true})
    expect(
      events.map((e) => [e.event, e.data.index, e.data.content_block?.type ?? e.data.delta?.type]),
    ).toEqual([
      ['message_start', undefined, undefined],
      ['content_block_start', 0, 'server_tool_use'],
      ['ping', undefined, undefined],
      ['content_block_delta', 0, 'input_json_delta'],
      ['content_block_stop', 0, undefined],
      ['content_block_start', 1, 'web_search_tool_result'],
      ['content_block_stop', 1, undefined],
      ['content_block_start', 2, 'text'],
      ['content_block_delta', 2, 'text_delta'],
      ['content_block_delta', 2, 'text_delta'],
      ['content_block_delta', 2, 'text_delta'],
      ['content_block_stop', 2, undefined],
      ['message_delta', undefined, undefined],
      ['message_stop', undefined, undefined],
    ])
    const id = events[1].data.content_block.id
    expect(events[1].data.content_block).toEqual({type: 'server_tool_use', id, name: 'web_search', input: {}})
    expect(events[3].data.delta).toEqual({type: 'input_json_delta', partial_json: `{"query":"${QUERY}"}`})
    expect(events[5].data.content_block).toEqual({
      type: 'web_search_tool_result',
      tool_use_id: id,
      content: results(),
    })
    expect(events[0].data.message.usage.server_tool_use).toBeUndefined()
    expect(events[12].data).toMatchObject({
      delta: {stop_reason: 'end_turn'},
      usage: {output_tokens: simTokens(TEXT), server_tool_use: {web_search_requests: 1}},
    })
  })

  it('the SDK accumulates the stream into the same message', async () => {
    const client = new Anthropic({apiKey: 'sk-ant-test', baseURL: sim.origin, maxRetries: 0})
    const message = await client.messages.stream(body as never).finalMessage()
    expect(message.content).toMatchObject([
      {type: 'server_tool_use', name: 'web_search', input: {query: QUERY}},
      {type: 'web_search_tool_result', content: results()},
      {type: 'text', text: TEXT},
    ])
    expect(message.usage.server_tool_use).toEqual({web_search_requests: 1})
  })

  it('takes the first allowed domain, or example.org when example.com is blocked', async () => {
    const allowed = await post('/v1/messages', {
      ...body,
      tools: [{...body.tools[0], allowed_domains: ['docs.python.org', 'vitest.dev']}],
    })
    expect(allowed.json?.content[1].content.map((r: Json) => r.url)).toEqual([
      url(1, 'docs.python.org'),
      url(2, 'docs.python.org'),
    ])
    const blocked = await post('/v1/messages', {
      ...body,
      tools: [{...body.tools[0], blocked_domains: ['example.com']}],
    })
    expect(blocked.json?.content[1].content).toEqual(results('example.org'))
  })

  it('searches under any, as the only tool, or when asked in words; not under none or another tool forced', async () => {
    const lookup = {name: 'lookup', input_schema: {type: 'object'}}
    const types = async (extra: Json) =>
      (await post('/v1/messages', {...body, ...extra})).json?.content.map((b: Json) => b.type)
    const searched = ['server_tool_use', 'web_search_tool_result', 'text']
    expect(await types({tool_choice: undefined})).toEqual(searched)
    expect(await types({tools: [lookup, ...body.tools], tool_choice: {type: 'any'}})).toEqual(searched)
    expect(
      await types({
        tools: [lookup, ...body.tools],
        tool_choice: undefined,
        messages: [{role: 'user', content: 'please search the web for vitest'}],
      }),
    ).toEqual(searched)
    expect(await types({tools: [lookup, ...body.tools], tool_choice: undefined})).toEqual(['text'])
    expect(await types({tool_choice: {type: 'none'}})).toEqual(['text'])
    expect(
      await types({tools: [lookup, ...body.tools], tool_choice: {type: 'tool', name: 'lookup'}}),
    ).toEqual(['tool_use'])
  })

  it('puts thinking first, and takes its own search back in the history', async () => {
    const thinking = {type: 'enabled', budget_tokens: 1024}
    // not forced: Anthropic refuses thinking with a forced tool choice (the only tool is searched)
    const forced = await post('/v1/messages', {...body, thinking})
    expect([forced.status, forced.json?.error?.message]).toEqual([
      400,
      'Thinking may not be enabled when tool_choice forces tool use.',
    ])
    const one = await post('/v1/messages', {...body, thinking, tool_choice: undefined})
    expect(one.json?.content.map((b: Json) => b.type)).toEqual([
      'thinking',
      'server_tool_use',
      'web_search_tool_result',
      'text',
    ])
    const two = await post('/v1/messages', {
      ...body,
      thinking,
      tool_choice: undefined,
      tools: [{name: 'lookup', input_schema: {type: 'object'}}, ...body.tools],
      messages: [
        ...body.messages,
        {role: 'assistant', content: one.json?.content},
        {role: 'user', content: 'thanks'},
      ],
    })
    expect(two.status).toBe(200)
    expect(two.json?.content.at(-1)).toEqual({type: 'text', text: 'PONG from sim: thanks'})
    expect(two.json?.usage.server_tool_use).toBeUndefined()
  })
})

describe('messages: quirk pause-turn', () => {
  const body = {
    model: 'claude-x+pause-turn',
    max_tokens: 100,
    tools: [{type: 'web_search_20250305', name: 'web_search'}],
    messages: [{role: 'user', content: `${QUERY}, 3 searches`}],
  }
  const q = `${QUERY}, 3 searches`

  it('pauses after each search until the turn holds the searches asked for, then ends it with the text', async () => {
    const thinking = {type: 'enabled', budget_tokens: 1024}
    const one = await post('/v1/messages', {...body, thinking})
    expect(one.status).toBe(200)
    expect(one.json?.stop_reason).toBe('pause_turn')
    expect(one.json?.content.map((b: Json) => b.type)).toEqual([
      'thinking',
      'server_tool_use',
      'web_search_tool_result',
    ])
    expect(one.json?.content[1].input).toEqual({query: q})
    expect(one.json?.usage).toMatchObject({server_tool_use: {web_search_requests: 1}})
    expect(one.json?.usage.output_tokens).toBeGreaterThan(simTokens(q))
    // the continuation: the paused content back as the last assistant message (its thinking too)
    let turn: Json[] = one.json?.content
    const two = await post('/v1/messages', {
      ...body,
      thinking,
      messages: [...body.messages, {role: 'assistant', content: turn}],
    })
    expect(two.json?.stop_reason).toBe('pause_turn')
    expect(two.json?.content.map((b: Json) => b.type)).toEqual(['server_tool_use', 'web_search_tool_result'])
    expect(two.json?.content[0].input).toEqual({query: `${q} (search 2)`})
    expect(two.json?.usage.output_tokens).toBe(simTokens(`${q} (search 2)`))
    turn = [...turn, ...(two.json?.content as Json[])]
    const three = await post('/v1/messages', {
      ...body,
      thinking,
      messages: [...body.messages, {role: 'assistant', content: turn}],
    })
    expect(three.json?.stop_reason).toBe('pause_turn')
    turn = [...turn, ...(three.json?.content as Json[])]
    const four = await post('/v1/messages', {
      ...body,
      thinking,
      messages: [...body.messages, {role: 'assistant', content: turn}],
    })
    expect(four.json?.stop_reason).toBe('end_turn')
    const text = `Web search results for "${q}". ${q} (result 1) and ${q} (result 2) cover it.`
    expect(four.json?.content).toEqual([{type: 'text', text}])
    expect(four.json?.usage.output_tokens).toBe(simTokens(text))
    expect(four.json?.usage.server_tool_use).toBeUndefined()
  })

  it('streams the paused answer: the search blocks, then message_delta with pause_turn', async () => {
    const {events} = await post('/v1/messages', {...body, stream: true})
    expect(
      events.filter((e) => e.event === 'content_block_start').map((e) => e.data.content_block.type),
    ).toEqual(['server_tool_use', 'web_search_tool_result'])
    const delta = events.find((e) => e.event === 'message_delta')!
    expect(delta.data.delta.stop_reason).toBe('pause_turn')
    expect(delta.data.usage.server_tool_use).toEqual({web_search_requests: 1})
    expect(events.at(-1)?.event).toBe('message_stop')
  })

  it('refuses a continuation whose search blocks are not its own as it sent them', async () => {
    const one = await post('/v1/messages', body)
    const [call, result] = one.json?.content as Json[]
    const forged = {
      ...result,
      content: [{...result.content[0], encrypted_content: 'Zm9yZ2Vk'}, result.content[1]],
    }
    const bad = await post('/v1/messages', {
      ...body,
      messages: [...body.messages, {role: 'assistant', content: [call, forged]}],
    })
    expect(bad.status).toBe(400)
    expect(bad.json?.error.message).toBe(
      'messages.1.content.1.content.0.encrypted_content: Invalid encrypted content for web_search_result',
    )
    const orphan = await post('/v1/messages', {
      ...body,
      messages: [...body.messages, {role: 'assistant', content: [result]}],
    })
    expect(orphan.status).toBe(400)
    expect(orphan.json?.error.message).toContain('does not contain a matching server_tool_use')
  })

  it('without the quirk, or without a search, answers as before', async () => {
    const plain = await post('/v1/messages', {...body, model: 'claude-x'})
    expect(plain.json?.stop_reason).toBe('end_turn')
    const words = await post('/v1/messages', {
      ...body,
      tools: [{name: 'lookup', input_schema: {type: 'object'}}],
    })
    expect(words.json?.stop_reason).toBe('end_turn')
    expect(words.json?.content.map((b: Json) => b.type)).toEqual(['text'])
  })
})

describe('responses: the web_search tool', () => {
  const body = {model: 'gpt-x', input: QUERY, tools: [{type: 'web_search'}]}
  const CITED = `Web search results for "${QUERY}". ${QUERY} (result 1) ([example.com](${url(1)})) and ${QUERY} (result 2) ([example.com](${url(2)})) cover it.`
  const annotations = (text: string, domain = 'example.com') =>
    [1, 2].map((n) => {
      const link = `([${domain}](${url(n, domain)}))`
      return {
        type: 'url_citation',
        start_index: text.indexOf(link),
        end_index: text.indexOf(link) + link.length,
        title: `${QUERY} (result ${n})`,
        url: url(n, domain),
      }
    })

  it('answers the search call and a message citing its results inline, with url_citation annotations', async () => {
    const {status, json} = await post('/v1/responses', body)
    expect(status).toBe(200)
    const [call, message] = json?.output as Json[]
    expect(call).toEqual({
      type: 'web_search_call',
      id: expect.stringMatching(/^ws_/),
      status: 'completed',
      action: {type: 'search', query: QUERY},
    })
    expect(message).toMatchObject({
      type: 'message',
      role: 'assistant',
      status: 'completed',
      content: [{type: 'output_text', text: CITED, annotations: annotations(CITED)}],
    })
    const [first] = message.content[0].annotations
    expect(CITED.slice(first.start_index, first.end_index)).toBe(`([example.com](${url(1)}))`)
    expect(json?.usage.output_tokens).toBe(simTokens(CITED))
  })

  it('gives the sources only when include asks for them; takes the first allowed domain', async () => {
    const {json} = await post('/v1/responses', {
      ...body,
      tools: [
        {
          type: 'web_search',
          filters: {allowed_domains: ['vitest.dev']},
          user_location: {type: 'approximate'},
        },
      ],
      include: ['web_search_call.action.sources'],
    })
    expect(json?.output[0].action).toEqual({
      type: 'search',
      query: QUERY,
      sources: [1, 2].map((n) => ({type: 'url', url: url(n, 'vitest.dev')})),
    })
    const text = json?.output[1].content[0].text
    expect(json?.output[1].content[0].annotations).toEqual(annotations(text, 'vitest.dev'))
  })

  it("streams OpenAI's events: the call's three states, then the message with its annotations", async () => {
    const {events} = await post('/v1/responses', {...body, stream: true})
    expect(events.map((e) => e.event)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.web_search_call.in_progress',
      'response.web_search_call.searching',
      'response.web_search_call.completed',
      'response.output_item.done',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.annotation.added',
      'response.output_text.annotation.added',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ])
    expect(events.map((e) => e.data.sequence_number)).toEqual(events.map((_, i) => i))
    const id = events[6].data.item.id
    expect(events[2].data).toEqual({
      type: 'response.output_item.added',
      output_index: 0,
      item: {type: 'web_search_call', id, status: 'in_progress'},
      sequence_number: 2,
    })
    for (const e of events.slice(3, 6)) expect(e.data).toMatchObject({output_index: 0, item_id: id})
    expect(events[6].data.item).toEqual({
      type: 'web_search_call',
      id,
      status: 'completed',
      action: {type: 'search', query: QUERY},
    })
    const itemId = events[7].data.item.id
    expect(events.slice(12, 14).map((e) => e.data)).toEqual(
      annotations(CITED).map((annotation, i) => ({
        type: 'response.output_text.annotation.added',
        item_id: itemId,
        output_index: 1,
        content_index: 0,
        annotation_index: i,
        annotation,
        sequence_number: 12 + i,
      })),
    )
    expect(events[14].data).toMatchObject({text: CITED})
    expect(events[15].data.part).toEqual({type: 'output_text', text: CITED, annotations: annotations(CITED)})
    expect(events[16].data.item.content[0].annotations).toEqual(annotations(CITED))
    expect(events[17].data.response.output.map((i: Json) => i.type)).toEqual(['web_search_call', 'message'])
  })

  it('the SDK accumulates the stream into the same output', async () => {
    const client = new OpenAI({apiKey: 'sk-test', baseURL: sim.origin + '/v1', maxRetries: 0})
    const stream = client.responses.stream({...body, tools: [{type: 'web_search_preview'}]} as never)
    const final = await stream.finalResponse()
    expect(final.output_text).toBe(CITED)
    expect(final.output[0]).toMatchObject({type: 'web_search_call', action: {type: 'search', query: QUERY}})
  })

  it('searches under required or a choice naming it, as the only tool, or asked in words; not under none or a function forced', async () => {
    const lookup = {type: 'function', name: 'lookup', parameters: {type: 'object'}}
    const types = async (extra: Json) =>
      (await post('/v1/responses', {...body, ...extra})).json?.output.map((i: Json) => i.type)
    const searched = ['web_search_call', 'message']
    const both = [lookup, {type: 'web_search_preview'}]
    expect(await types({tools: both, tool_choice: 'required'})).toEqual(searched)
    expect(await types({tools: both, tool_choice: {type: 'web_search_preview'}})).toEqual(searched)
    expect(await types({tools: both, input: 'Search the web for vitest'})).toEqual(searched)
    expect(await types({tools: both})).toEqual(['message'])
    expect(await types({tool_choice: 'none'})).toEqual(['message'])
    expect(await types({tools: both, tool_choice: {type: 'function', name: 'lookup'}})).toEqual([
      'function_call',
    ])
  })
})

describe('responses: a tool_choice naming a function the tools do not hold', () => {
  const lookup = {type: 'function', name: 'lookup', parameters: {type: 'object'}}

  it("is refused with OpenAI's 400", async () => {
    for (const tools of [[lookup], [{type: 'web_search'}], undefined]) {
      const {status, json} = await post('/v1/responses', {
        model: 'gpt-x',
        input: 'x',
        tools,
        tool_choice: {type: 'function', name: 'missing'},
      })
      expect(status).toBe(400)
      expect(json).toEqual({
        error: {
          message: "Tool choice 'function' not found in 'tools' parameter.",
          type: 'invalid_request_error',
          param: 'tool_choice',
          code: null,
        },
      })
    }
  })

  it("takes a function of the tools, or of a namespace's tools (Codex's multi_agent_v1)", async () => {
    const named = await post('/v1/responses', {
      model: 'gpt-x',
      input: 'x',
      tools: [lookup],
      tool_choice: {type: 'function', name: 'lookup'},
    })
    expect(named.status).toBe(200)
    const namespace = await post('/v1/responses', {
      model: 'gpt-x',
      input: 'x',
      tools: [{type: 'namespace', name: 'multi_agent_v1', tools: [{...lookup, name: 'close_agent'}]}],
      tool_choice: {type: 'function', name: 'close_agent', namespace: 'multi_agent_v1'},
    })
    expect(namespace.status).toBe(200)
  })
})

describe('gemini: the googleSearch tool', () => {
  const path = (method = 'generateContent') => `/v1beta/models/gemini-2.5-flash:${method}`
  // Gemini CLI's web search: the query alone, Google Search the only tool
  const body = {contents: [{role: 'user', parts: [{text: QUERY}]}], tools: [{googleSearch: {}}]}
  const claim = `${QUERY} (result 1) and ${QUERY} (result 2) cover it.`
  const grounding = {
    searchEntryPoint: {renderedContent: `<div class="sim-search">${QUERY}</div>`},
    groundingChunks: [1, 2].map((n) => ({web: {uri: url(n), title: `${QUERY} (result ${n})`}})),
    groundingSupports: [
      {
        segment: {startIndex: TEXT.length - claim.length, endIndex: TEXT.length, text: claim},
        groundingChunkIndices: [0, 1],
      },
    ],
    webSearchQueries: [QUERY],
  }

  it('answers the text with groundingMetadata on the candidate', async () => {
    for (const tools of [[{googleSearch: {}}], [{google_search: {}}]]) {
      const {status, json} = await post(path(), {...body, tools})
      expect(status).toBe(200)
      expect(json?.candidates).toEqual([
        {
          content: {role: 'model', parts: [{text: TEXT}]},
          index: 0,
          finishReason: 'STOP',
          groundingMetadata: grounding,
        },
      ])
      expect(json?.usageMetadata.candidatesTokenCount).toBe(simTokens(TEXT))
    }
    const segment = grounding.groundingSupports[0].segment
    expect(TEXT.slice(segment.startIndex, segment.endIndex)).toBe(segment.text)
  })

  it('counts the segment in bytes of UTF-8, as Gemini does', async () => {
    const query = 'café prices'
    const {json} = await post(path(), {...body, contents: [{role: 'user', parts: [{text: query}]}]})
    const text: string = json?.candidates[0].content.parts[0].text
    const {segment} = json!.candidates[0].groundingMetadata.groundingSupports[0]
    const bytes = Buffer.from(text)
    expect(segment.endIndex).toBe(bytes.length)
    expect(bytes.subarray(segment.startIndex, segment.endIndex).toString()).toBe(segment.text)
    expect(segment.startIndex).toBe(text.indexOf(segment.text) + 1)
  })

  it('streams the text; the last chunk carries finishReason, groundingMetadata and usage', async () => {
    const {events} = await post(path('streamGenerateContent?alt=sse'), body)
    expect(events.length).toBeGreaterThan(1)
    expect(events.map((e) => e.data.candidates[0].content.parts[0].text).join('')).toBe(TEXT)
    for (const e of events.slice(0, -1)) {
      expect(e.data.candidates[0].groundingMetadata).toBeUndefined()
      expect(e.data.candidates[0].finishReason).toBeUndefined()
    }
    expect(events.at(-1)?.data).toMatchObject({
      candidates: [{finishReason: 'STOP', groundingMetadata: grounding}],
      usageMetadata: {candidatesTokenCount: simTokens(TEXT)},
    })
  })

  it.each([
    // [model, the flag, Gemini's refusal]
    ['gemini-2.5-flash', false, 'Tool use with function calling is unsupported'],
    ['gemini-2.5-flash', true, 'Tool call context circulation is not enabled for models/gemini-2.5-flash'],
    ['sim-mini', false, 'Tool use with function calling is unsupported'],
    [
      'gemini-3-flash-preview',
      false,
      'Please enable tool_config.include_server_side_tool_invocations to use Built-in tools with Function calling.',
    ],
  ])('refuses search beside functions to %s (flag %s) as Gemini does', async (model, shown, message) => {
    const {status, json} = await post(`/v1beta/models/${model}:generateContent`, {
      contents: [{role: 'user', parts: [{text: 'use a tool'}]}],
      tools: [{googleSearch: {}, functionDeclarations: [{name: 'lookup'}]}],
      ...(shown ? {toolConfig: {includeServerSideToolInvocations: true}} : {}),
    })
    expect(status).toBe(400)
    expect(json?.error.message).toBe(message)
  })

  it('Gemini 3 with the flag: calls a function, or searches when asked, the search shown as toolCall and toolResponse', async () => {
    const gemini3 = '/v1beta/models/gemini-3-pro-preview:generateContent'
    const ask = (text: string) =>
      post(gemini3, {
        contents: [{role: 'user', parts: [{text}]}],
        tools: [{functionDeclarations: [{name: 'lookup'}]}, {googleSearch: {}}],
        toolConfig: {includeServerSideToolInvocations: true},
      })
    const functions = await ask('use a tool')
    expect(functions.json?.candidates[0].content.parts).toMatchObject([
      {functionCall: {name: 'lookup', args: {query: 'use a tool'}}},
    ])
    expect(functions.json?.candidates[0].groundingMetadata).toBeUndefined()
    const searched = await ask('search the web for gwctl')
    const parts = searched.json?.candidates[0].content.parts
    expect(parts.map((p: Record<string, unknown>) => Object.keys(p)[0])).toEqual([
      'toolCall',
      'toolResponse',
      'text',
    ])
    expect(searched.json?.candidates[0].groundingMetadata.webSearchQueries).toEqual([
      'search the web for gwctl',
    ])
  })

  it('answers without grounding when there is no search tool', async () => {
    const plain = await post(path(), {contents: body.contents})
    expect(plain.json?.candidates[0]).toEqual({
      content: {role: 'model', parts: [{text: `PONG from sim: ${QUERY}`}]},
      index: 0,
      finishReason: 'STOP',
    })
  })
})

describe('gemini: a function calling config with nothing to apply to', () => {
  const path = '/v1beta/models/gemini-2.5-flash:generateContent'
  const contents = [{role: 'user', parts: [{text: 'x'}]}]
  const refusal = (message: string) => ({error: {code: 400, message, status: 'INVALID_ARGUMENT'}})

  it("is refused with Gemini's 400 when no function is declared (any mode)", async () => {
    for (const mode of ['ANY', 'AUTO'])
      for (const tools of [[{googleSearch: {}}], undefined]) {
        const {status, json} = await post(path, {
          contents,
          tools,
          toolConfig: {
            functionCallingConfig: {mode, allowedFunctionNames: mode === 'ANY' ? ['web_search'] : undefined},
          },
        })
        expect(status).toBe(400)
        expect(json).toEqual(refusal('Function calling config is set without function_declarations.'))
      }
  })

  it('is refused when ANY allows a name no declaration has', async () => {
    const {status, json} = await post(path, {
      contents,
      tools: [{functionDeclarations: [{name: 'lookup'}]}],
      toolConfig: {functionCallingConfig: {mode: 'ANY', allowedFunctionNames: ['missing']}},
    })
    expect(status).toBe(400)
    expect(json).toEqual(
      refusal('allowed_function_names contains a function name not in function declarations: missing'),
    )
  })

  it('takes a declared name, and Google Search alone with includeServerSideToolInvocations (Gemini 3)', async () => {
    const declared = await post(path, {
      contents,
      tools: [{functionDeclarations: [{name: 'lookup'}]}],
      toolConfig: {functionCallingConfig: {mode: 'ANY', allowedFunctionNames: ['lookup']}},
    })
    expect(declared.status).toBe(200)
    expect(declared.json?.candidates[0].content.parts[0].functionCall.name).toBe('lookup')
    const server = await post(path, {
      contents,
      tools: [{googleSearch: {}}],
      toolConfig: {functionCallingConfig: {mode: 'AUTO'}, includeServerSideToolInvocations: true},
    })
    expect(server.status).toBe(200)
    expect(server.json?.candidates[0].groundingMetadata.webSearchQueries).toEqual(['x'])
  })
})
