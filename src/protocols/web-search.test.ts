import {describe, expect, it} from 'vitest'

import {
  decodeClientRequest,
  encodeUpstreamRequest,
  StreamTranslator,
  TranslationError,
  translateResponse,
  translateResponseText,
} from './translate.js'

// What Claude Code 2.1.332 sends for its WebSearch tool (recorded from the real CLI, trimmed):
// a request of its own, the server tool forced, thinking off.
const claudeSearch = {
  model: 'claude-sonnet-4-5',
  max_tokens: 32000,
  system: [
    {
      type: 'text',
      text: 'You run a web search for another Claude model. Search once, then reply with a brief summary.',
    },
  ],
  messages: [
    {
      role: 'user',
      content: [{type: 'text', text: 'Perform a web search for the query: gwctl release notes'}],
    },
  ],
  tools: [{type: 'web_search_20250305', name: 'web_search', max_uses: 8}],
  tool_choice: {type: 'tool', name: 'web_search'},
  thinking: {type: 'disabled'},
  stream: false,
}

// Gemini CLI's google_web_search: Google Search grounding as the only tool.
const geminiSearch = {
  contents: [{role: 'user', parts: [{text: 'gwctl release notes'}]}],
  tools: [{googleSearch: {}}],
}

// Codex: a live web search among its function tools.
const codexRequest = {
  model: 'gpt-5.5',
  input: [{type: 'message', role: 'user', content: [{type: 'input_text', text: 'What changed?'}]}],
  tools: [
    {type: 'function', name: 'shell', parameters: {type: 'object', properties: {cmd: {type: 'string'}}}},
    {type: 'web_search'},
  ],
  stream: false,
}

const encoded = (
  client: ReturnType<typeof decodeClientRequest>,
  upstream: 'chat' | 'responses' | 'messages' | 'gemini',
) => JSON.parse(encodeUpstreamRequest(client, upstream, 'up-model').body.toString())

describe('web search requests', () => {
  it("Claude Code's WebSearch goes as each upstream's own search, forced where the family can force it", () => {
    const client = decodeClientRequest('messages', claudeSearch, {})
    const responses = encoded(client, 'responses')
    expect(responses.tools).toEqual([{type: 'web_search'}])
    // a function choice naming web_search with no such function was OpenAI's 400 before
    expect(responses.tool_choice).toBe('required')
    expect(responses.include).toEqual(['web_search_call.action.sources'])

    const gemini = encoded(client, 'gemini')
    expect(gemini.tools).toEqual([{googleSearch: {}}])
    // Gemini cannot force its search, and refuses ANY with no function to call
    expect(gemini.toolConfig).toBeUndefined()

    const messages = encoded(client, 'messages')
    expect(messages.tools).toEqual([{type: 'web_search_20250305', name: 'web_search', max_uses: 8}])
    expect(messages.tool_choice).toEqual({type: 'tool', name: 'web_search'})
    expect(messages.thinking).toBeUndefined()
  })

  it('a search request to a chat upstream is refused with a 400 that says why, not answered from memory', () => {
    for (const client of [
      decodeClientRequest('messages', claudeSearch, {}),
      decodeClientRequest('gemini', geminiSearch, {model: 'gemini-2.5-flash', stream: false}),
    ]) {
      let error: unknown
      try {
        encodeUpstreamRequest(client, 'chat', 'deepseek-chat')
      } catch (e) {
        error = e
      }
      expect(error).toBeInstanceOf(TranslationError)
      expect((error as TranslationError).status).toBe(400)
      expect((error as Error).message).toMatch(
        /^web search cannot be translated to a chat completions upstream/,
      )
    }
  })

  it("Codex's web search beside its functions: kept for Messages, left out for chat and Gemini", () => {
    const client = decodeClientRequest('responses', codexRequest, {})
    const chat = encoded(client, 'chat')
    expect(chat.tools.map((t: any) => t.function.name)).toEqual(['shell'])
    const messages = encoded(client, 'messages')
    expect(messages.tools.map((t: any) => t.type ?? t.name)).toEqual(['shell', 'web_search_20250305'])
    // Gemini 2.5 refuses Google Search beside function declarations
    const gemini = encoded(client, 'gemini')
    expect(gemini.tools).toHaveLength(1)
    expect(gemini.tools[0].functionDeclarations[0].name).toBe('shell')
    // Codex's cached search is not another vendor's live one
    const cached = decodeClientRequest(
      'responses',
      {...codexRequest, tools: [{type: 'web_search', external_web_access: false}]},
      {},
    )
    expect(encoded(cached, 'messages').tools).toBeUndefined()
  })

  it('domain limits and location go where the upstream has a field for them', () => {
    const client = decodeClientRequest(
      'messages',
      {
        ...claudeSearch,
        tools: [
          {
            type: 'web_search_20250305',
            name: 'web_search',
            allowed_domains: ['docs.example.com'],
            user_location: {type: 'approximate', city: 'Lyon', country: 'FR'},
          },
        ],
      },
      {},
    )
    expect(encoded(client, 'responses').tools).toEqual([
      {
        type: 'web_search',
        filters: {allowed_domains: ['docs.example.com']},
        user_location: {type: 'approximate', city: 'Lyon', country: 'FR'},
      },
    ])
    const gemini = decodeClientRequest('gemini', geminiSearch, {model: 'g', stream: false})
    expect(encoded(gemini, 'messages').tools).toEqual([{type: 'web_search_20250305', name: 'web_search'}])
  })

  it("a search of the history (Anthropic's blocks, a Responses item) goes to another vendor as text", () => {
    const client = decodeClientRequest(
      'messages',
      {
        model: 'claude-sonnet-4-5',
        max_tokens: 100,
        messages: [
          {role: 'user', content: 'What is new in gwctl?'},
          {
            role: 'assistant',
            content: [
              {type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {query: 'gwctl news'}},
              {
                type: 'web_search_tool_result',
                tool_use_id: 'srvtoolu_1',
                content: [
                  {
                    type: 'web_search_result',
                    url: 'https://a.example/1',
                    title: 'One',
                    encrypted_content: 'x',
                    page_age: null,
                  },
                ],
              },
              {type: 'text', text: 'Version 2 is out.'},
            ],
          },
          {role: 'user', content: 'Thanks'},
        ],
      },
      {},
    )
    const chat = encoded(client, 'chat')
    expect(chat.messages[1]).toEqual({
      role: 'assistant',
      // a paragraph of its own: chat joins an assistant turn's texts with nothing between
      content: 'Searched the web for "gwctl news":\n- One <https://a.example/1>\n\nVersion 2 is out.',
    })
    const codex = decodeClientRequest(
      'responses',
      {
        model: 'gpt-5.5',
        input: [
          {type: 'message', role: 'user', content: 'news?'},
          {
            type: 'web_search_call',
            id: 'ws_1',
            status: 'completed',
            action: {type: 'search', query: 'gwctl'},
          },
          {type: 'message', role: 'assistant', content: [{type: 'output_text', text: 'None.'}]},
        ],
      },
      {},
    )
    const messages = encoded(codex, 'messages')
    expect(messages.messages[1].content[0]).toEqual({
      type: 'text',
      text: 'Searched the web for "gwctl": no results.\n\n',
    })
  })
})

const responsesAnswer = {
  id: 'resp_1',
  object: 'response',
  status: 'completed',
  model: 'gpt-5.5',
  output: [
    {
      type: 'web_search_call',
      id: 'ws_abc',
      status: 'completed',
      action: {
        type: 'search',
        query: 'gwctl release notes',
        sources: [{type: 'url', url: 'https://a.example/1'}],
      },
    },
    {
      type: 'message',
      id: 'msg_1',
      role: 'assistant',
      status: 'completed',
      content: [
        {
          type: 'output_text',
          text: 'Version 2 is out.',
          annotations: [
            {
              type: 'url_citation',
              url: 'https://a.example/1',
              title: 'Release 2',
              start_index: 0,
              end_index: 17,
            },
            {
              type: 'url_citation',
              url: 'https://b.example/2',
              title: 'Changelog',
              start_index: 0,
              end_index: 17,
            },
          ],
        },
      ],
    },
  ],
  usage: {input_tokens: 100, output_tokens: 20, total_tokens: 120},
}

const geminiAnswer = {
  candidates: [
    {
      content: {role: 'model', parts: [{text: 'Version 2 is out.'}]},
      finishReason: 'STOP',
      index: 0,
      groundingMetadata: {
        webSearchQueries: ['gwctl release notes'],
        groundingChunks: [{web: {uri: 'https://grounding.example/r1', title: 'a.example'}}],
      },
    },
  ],
  usageMetadata: {promptTokenCount: 100, candidatesTokenCount: 20, totalTokenCount: 120},
  modelVersion: 'gemini-2.5-flash',
  responseId: 'g1',
}

const messagesAnswer = {
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5',
  content: [
    {type: 'server_tool_use', id: 'srvtoolu_9', name: 'web_search', input: {query: 'gwctl release notes'}},
    {
      type: 'web_search_tool_result',
      tool_use_id: 'srvtoolu_9',
      content: [
        {
          type: 'web_search_result',
          url: 'https://a.example/1',
          title: 'Release 2',
          encrypted_content: 'e',
          page_age: '2 days ago',
        },
      ],
    },
    {type: 'text', text: 'Version 2 is out.'},
  ],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: {input_tokens: 100, output_tokens: 20, server_tool_use: {web_search_requests: 1}},
}

describe('web search answers', () => {
  const claude = decodeClientRequest('messages', claudeSearch, {})

  it('a Responses search comes to Claude Code as server_tool_use and web_search_tool_result, counted in the usage', () => {
    const {text} = translateResponseText('responses', claude, responsesAnswer, {newId: (p) => `${p}_1`})
    const body = JSON.parse(text)
    expect(body.content).toEqual([
      {
        type: 'server_tool_use',
        id: 'gwx1.search.ws_abc',
        name: 'web_search',
        input: {query: 'gwctl release notes'},
      },
      {
        type: 'web_search_tool_result',
        tool_use_id: 'gwx1.search.ws_abc',
        content: [
          {
            type: 'web_search_result',
            url: 'https://a.example/1',
            title: 'Release 2',
            encrypted_content: 'gwx1.search',
            page_age: null,
          },
          // a page the answer cites that the search's sources did not list
          {
            type: 'web_search_result',
            url: 'https://b.example/2',
            title: 'Changelog',
            encrypted_content: 'gwx1.search',
            page_age: null,
          },
        ],
      },
      {type: 'text', text: 'Version 2 is out.'},
    ])
    expect(body.usage.server_tool_use).toEqual({web_search_requests: 1})
    // the object encoder writes the same bytes
    expect(
      JSON.stringify(translateResponse('responses', claude, responsesAnswer, {newId: (p) => `${p}_1`}).body),
    ).toBe(text)
  })

  it("Gemini's grounding comes to Claude Code as a search, first", () => {
    const body = translateResponse('gemini', claude, geminiAnswer, {newId: (p) => `${p}_1`}).body as any
    expect(body.content.map((b: any) => b.type)).toEqual([
      'server_tool_use',
      'web_search_tool_result',
      'text',
    ])
    expect(body.content[0].input).toEqual({query: 'gwctl release notes'})
    expect(body.content[1].content[0]).toMatchObject({
      url: 'https://grounding.example/r1',
      title: 'a.example',
    })
  })

  it("Anthropic's search comes to Gemini CLI as grounding and to Codex as a web_search_call", () => {
    const gemini = decodeClientRequest('gemini', geminiSearch, {model: 'gemini-2.5-flash', stream: false})
    const g = translateResponse('messages', gemini, messagesAnswer).body as any
    expect(g.candidates[0].groundingMetadata).toEqual({
      webSearchQueries: ['gwctl release notes'],
      groundingChunks: [{web: {uri: 'https://a.example/1', title: 'Release 2'}}],
    })
    expect(g.candidates[0].content.parts).toEqual([{text: 'Version 2 is out.'}])

    const codex = decodeClientRequest('responses', codexRequest, {})
    const r = translateResponse('messages', codex, messagesAnswer, {newId: (p) => `${p}_1`}).body as any
    expect(r.output[0]).toEqual({
      type: 'web_search_call',
      id: 'ws_1',
      status: 'completed',
      action: {
        type: 'search',
        query: 'gwctl release notes',
        sources: [{type: 'url', url: 'https://a.example/1'}],
      },
    })
    expect(r.output[1].content[0].text).toBe('Version 2 is out.')
  })

  it('a failed Anthropic search stays a failure: the error code, no pages', () => {
    const failed = {
      ...messagesAnswer,
      content: [
        messagesAnswer.content[0],
        {
          type: 'web_search_tool_result',
          tool_use_id: 'srvtoolu_9',
          content: {type: 'web_search_tool_result_error', error_code: 'max_uses_exceeded'},
        },
      ],
    }
    const body = translateResponse('messages', decodeClientRequest('responses', codexRequest, {}), failed, {
      newId: (p) => `${p}_1`,
    }).body as any
    expect(body.output[0].status).toBe('failed')
  })
})

function events(text: string): Array<{event?: string; data: any}> {
  return text
    .split('\n\n')
    .filter(Boolean)
    .map((block) => {
      const lines = block.split('\n')
      const ev = lines.find((l) => l.startsWith('event: '))
      const data = lines.find((l) => l.startsWith('data: '))
      return {event: ev?.slice(7), data: JSON.parse((data ?? 'data: null').slice(6))}
    })
}

const responsesStream = (answer: typeof responsesAnswer): string => {
  const e = (type: string, rest: object) => `event: ${type}\ndata: ${JSON.stringify({type, ...rest})}\n\n`
  const search = answer.output[0]
  const message = answer.output[1] as any
  return (
    e('response.created', {
      response: {id: answer.id, model: answer.model, status: 'in_progress', output: []},
    }) +
    e('response.output_item.added', {
      output_index: 0,
      item: {type: 'web_search_call', id: search.id, status: 'in_progress'},
    }) +
    e('response.web_search_call.in_progress', {output_index: 0, item_id: search.id}) +
    e('response.web_search_call.searching', {output_index: 0, item_id: search.id}) +
    e('response.web_search_call.completed', {output_index: 0, item_id: search.id}) +
    e('response.output_item.done', {output_index: 0, item: search}) +
    e('response.output_item.added', {
      output_index: 1,
      item: {...message, status: 'in_progress', content: []},
    }) +
    e('response.content_part.added', {
      output_index: 1,
      content_index: 0,
      item_id: message.id,
      part: {type: 'output_text', text: '', annotations: []},
    }) +
    e('response.output_text.delta', {
      output_index: 1,
      content_index: 0,
      item_id: message.id,
      delta: 'Version 2 is out.',
    }) +
    e('response.output_text.done', {
      output_index: 1,
      content_index: 0,
      item_id: message.id,
      text: 'Version 2 is out.',
    }) +
    e('response.content_part.done', {
      output_index: 1,
      content_index: 0,
      item_id: message.id,
      part: message.content[0],
    }) +
    e('response.output_item.done', {output_index: 1, item: message}) +
    e('response.completed', {response: {...answer}})
  )
}

describe('web search streams', () => {
  it('a Responses stream with a search becomes the Anthropic events of one, in order, for Claude Code', () => {
    const client = decodeClientRequest('messages', {...claudeSearch, stream: true}, {})
    const t = new StreamTranslator('responses', client, {newId: (p) => `${p}_1`})
    let out = ''
    for (const byte of Buffer.from(responsesStream(responsesAnswer))) out += t.push(Uint8Array.of(byte))
    out += t.end()
    const list = events(out)
    const starts = list.filter((e) => e.event === 'content_block_start').map((e) => e.data)
    // the search at the end, when the citations have given its pages' titles
    expect(starts.map((s) => [s.index, s.content_block.type])).toEqual([
      [0, 'text'],
      [1, 'server_tool_use'],
      [2, 'web_search_tool_result'],
    ])
    expect(starts[1].content_block).toEqual({
      type: 'server_tool_use',
      id: 'gwx1.search.ws_abc',
      name: 'web_search',
      input: {},
    })
    const query = list.find((e) => e.data.delta?.type === 'input_json_delta')!.data
    expect(query).toEqual({
      type: 'content_block_delta',
      index: 1,
      delta: {type: 'input_json_delta', partial_json: '{"query":"gwctl release notes"}'},
    })
    const page = (url: string, title: string) => ({
      type: 'web_search_result',
      url,
      title,
      encrypted_content: 'gwx1.search',
      page_age: null,
    })
    expect(starts[2].content_block.content).toEqual([
      page('https://a.example/1', 'Release 2'),
      // cited by the answer, not listed in the search's sources
      page('https://b.example/2', 'Changelog'),
    ])
    const stops = list.filter((e) => e.event === 'content_block_stop').map((e) => e.data.index)
    expect(stops).toEqual([0, 1, 2])
    const delta = list.find((e) => e.event === 'message_delta')!.data
    expect(delta.usage.server_tool_use).toEqual({web_search_requests: 1})
  })

  it('an Anthropic stream with a search becomes Gemini grounding on the last chunk, and Codex events', () => {
    const e = (type: string, rest: object) => `event: ${type}\ndata: ${JSON.stringify({type, ...rest})}\n\n`
    const stream =
      e('message_start', {
        message: {
          id: 'msg_1',
          type: 'message',
          role: 'assistant',
          model: 'claude',
          content: [],
          usage: {input_tokens: 10, output_tokens: 1},
        },
      }) +
      e('content_block_start', {
        index: 0,
        content_block: {type: 'server_tool_use', id: 'srvtoolu_9', name: 'web_search', input: {}},
      }) +
      e('content_block_delta', {index: 0, delta: {type: 'input_json_delta', partial_json: '{"query":'}}) +
      e('content_block_delta', {index: 0, delta: {type: 'input_json_delta', partial_json: '"gwctl"}'}}) +
      e('content_block_stop', {index: 0}) +
      e('content_block_start', {index: 1, content_block: messagesAnswer.content[1]}) +
      e('content_block_stop', {index: 1}) +
      e('content_block_start', {index: 2, content_block: {type: 'text', text: ''}}) +
      e('content_block_delta', {index: 2, delta: {type: 'text_delta', text: 'Version 2 is out.'}}) +
      e('content_block_stop', {index: 2}) +
      e('message_delta', {delta: {stop_reason: 'end_turn'}, usage: {output_tokens: 20}}) +
      e('message_stop', {})

    const gemini = decodeClientRequest('gemini', geminiSearch, {model: 'gemini-2.5-flash', stream: true})
    const g = new StreamTranslator('messages', gemini, {})
    const gOut = g.push(Buffer.from(stream)) + g.end()
    const chunks = events(gOut).map((c) => c.data)
    expect(chunks.at(-1).candidates[0].groundingMetadata).toEqual({
      webSearchQueries: ['gwctl'],
      groundingChunks: [{web: {uri: 'https://a.example/1', title: 'Release 2'}}],
    })
    expect(chunks.some((c) => c.candidates[0].content.parts[0]?.text === 'Version 2 is out.')).toBe(true)

    const codex = decodeClientRequest('responses', {...codexRequest, stream: true}, {})
    const r = new StreamTranslator('messages', codex, {newId: (p) => `${p}_1`})
    const rEvents = events(r.push(Buffer.from(stream)) + r.end())
    expect(rEvents.map((x) => x.event).slice(2, 7)).toEqual([
      'response.output_item.added',
      'response.web_search_call.in_progress',
      'response.web_search_call.searching',
      'response.web_search_call.completed',
      'response.output_item.done',
    ])
    const done = rEvents.find((x) => x.event === 'response.completed')!.data.response
    expect(done.output[0]).toMatchObject({
      type: 'web_search_call',
      status: 'completed',
      action: {type: 'search', query: 'gwctl', sources: [{type: 'url', url: 'https://a.example/1'}]},
    })
  })

  it('a Gemini stream whose last chunk carries grounding gives Claude Code the search after the text', () => {
    const client = decodeClientRequest('messages', {...claudeSearch, stream: true}, {})
    const t = new StreamTranslator('gemini', client, {})
    const chunk1 = {
      candidates: [{content: {role: 'model', parts: [{text: 'Version 2 '}]}, index: 0}],
      responseId: 'g1',
      modelVersion: 'g',
    }
    const chunk2 = {
      ...geminiAnswer,
      candidates: [{...geminiAnswer.candidates[0], content: {role: 'model', parts: [{text: 'is out.'}]}}],
    }
    const out =
      t.push(Buffer.from(`data: ${JSON.stringify(chunk1)}\r\n\r\ndata: ${JSON.stringify(chunk2)}\r\n\r\n`)) +
      t.end()
    const starts = events(out)
      .filter((e) => e.event === 'content_block_start')
      .map((e) => e.data.content_block.type)
    expect(starts).toEqual(['text', 'server_tool_use', 'web_search_tool_result'])
    expect(t.error).toBeUndefined()
  })

  it('Gemini grounding in pieces (the query in one chunk, the pages in the last) is one search with its pages', () => {
    const client = decodeClientRequest('messages', {...claudeSearch, stream: true}, {})
    const t = new StreamTranslator('gemini', client, {})
    const c1 = {
      candidates: [
        {
          content: {role: 'model', parts: [{text: 'Version 2 '}]},
          index: 0,
          groundingMetadata: {webSearchQueries: ['gwctl']},
        },
      ],
      responseId: 'g1',
      modelVersion: 'g',
    }
    const c2 = {
      candidates: [
        {
          content: {role: 'model', parts: [{text: 'is out.'}]},
          index: 0,
          finishReason: 'STOP',
          groundingMetadata: {groundingChunks: [{web: {uri: 'https://a.example/1', title: 'a.example'}}]},
        },
      ],
      usageMetadata: {promptTokenCount: 5, candidatesTokenCount: 3},
    }
    const out =
      t.push(Buffer.from(`data: ${JSON.stringify(c1)}\n\ndata: ${JSON.stringify(c2)}\n\n`)) + t.end()
    const blocks = events(out)
      .filter((e) => e.event === 'content_block_start')
      .map((e) => e.data.content_block)
    expect(blocks.map((b) => b.type)).toEqual(['text', 'server_tool_use', 'web_search_tool_result'])
    expect(blocks[2].content.map((r: any) => r.url)).toEqual(['https://a.example/1'])
    expect(events(out).find((e) => e.data.delta?.type === 'input_json_delta')!.data.delta.partial_json).toBe(
      '{"query":"gwctl"}',
    )
  })
})

describe('web search: what a chat or Gemini upstream cannot run, and what is no search', () => {
  it("a page Codex's search opened is a step of the search, not a search of its own", () => {
    const codex = decodeClientRequest(
      'responses',
      {
        model: 'gpt-5.5',
        input: [
          {type: 'message', role: 'user', content: 'news?'},
          {
            type: 'web_search_call',
            id: 'ws_1',
            status: 'completed',
            action: {type: 'open_page', url: 'https://a.example/'},
          },
          {type: 'message', role: 'assistant', content: [{type: 'output_text', text: 'None.'}]},
        ],
      },
      {},
    )
    expect(encoded(codex, 'chat').messages[1]).toEqual({role: 'assistant', content: 'None.'})
  })

  it('the search offered with tool_choice none is no search request: chat answers without it', () => {
    const client = decodeClientRequest('messages', {...claudeSearch, tool_choice: {type: 'none'}}, {})
    expect(encoded(client, 'chat').tools).toBeUndefined()
  })

  it('a forced search beside functions is refused for Gemini, which cannot run the two together', () => {
    const client = decodeClientRequest(
      'messages',
      {...claudeSearch, tools: [...claudeSearch.tools, {name: 'f', input_schema: {type: 'object'}}]},
      {},
    )
    expect(() => encodeUpstreamRequest(client, 'gemini', 'g')).toThrow(
      /forced web search beside function tools/,
    )
    // Responses runs both
    expect(encoded(client, 'responses').tools.map((t: any) => t.type)).toEqual(['function', 'web_search'])
  })

  it("a Responses choice of the search with no live search (Codex's cached one) is the model's own", () => {
    const client = decodeClientRequest(
      'responses',
      {
        ...codexRequest,
        tools: [codexRequest.tools[0], {type: 'web_search', external_web_access: false}],
        tool_choice: {type: 'web_search_preview'},
      },
      {},
    )
    expect(encoded(client, 'messages').tool_choice).toBeUndefined()
  })

  it("OpenAI's search goes with the low effort where the client asked minimal, which OpenAI refuses with it", () => {
    const codex = decodeClientRequest('responses', {...codexRequest, reasoning: {effort: 'minimal'}}, {})
    expect(encoded(codex, 'responses').reasoning.effort).toBe('low')
    const noSearch = decodeClientRequest(
      'responses',
      {...codexRequest, tools: [codexRequest.tools[0]], reasoning: {effort: 'minimal'}},
      {},
    )
    expect(encoded(noSearch, 'responses').reasoning.effort).toBe('minimal')
  })
})

describe('web search beside functions to a Gemini upstream, by the model sent', () => {
  const forced = {
    ...claudeSearch,
    tools: [...claudeSearch.tools, {name: 'f', input_schema: {type: 'object'}}],
  }
  const asSent = (client: ReturnType<typeof decodeClientRequest>, model: string) =>
    JSON.parse(encodeUpstreamRequest(client, 'gemini', model).body.toString())

  it.each([
    // [model, Google Search beside the functions]
    ['gemini-3-pro-preview', true],
    ['gemini-3.1-flash-lite-preview', true],
    ['models/gemini-3-flash-preview', true],
    ['gemini-2.5-flash', false],
    ['gemini-2.5-pro', false],
    // Google's -latest aliases name Gemini 3 in late 2026; a proxy's own name says nothing of the
    // model: as Gemini 2.5
    ['gemini-flash-latest', true],
    ['google/gemini-3-flash-preview', true],
    ['my-gemini-3', false],
  ])("Codex's search beside its functions to %s: beside them %s", (model, beside) => {
    const body = asSent(decodeClientRequest('responses', codexRequest, {}), model)
    expect(body.tools[0].functionDeclarations.map((d: any) => d.name)).toEqual(['shell'])
    if (beside) {
      // in the one tool, as Google's example, the server's invocations shown (Gemini 3 asks it)
      expect(body.tools).toEqual([{functionDeclarations: expect.any(Array), googleSearch: {}}])
      expect(body.toolConfig).toEqual({includeServerSideToolInvocations: true})
    } else {
      expect(body.tools).toHaveLength(1)
      expect(body.tools[0].googleSearch).toBeUndefined()
      expect(body.toolConfig).toBeUndefined()
    }
  })

  it('a forced function goes without the search (no function choice beside the flag); auto (the default) is not sent beside it', () => {
    const client = decodeClientRequest('responses', {...codexRequest, tool_choice: 'required'}, {})
    const forcedFn = asSent(client, 'gemini-3-pro-preview')
    expect(forcedFn.toolConfig).toEqual({functionCallingConfig: {mode: 'ANY'}})
    expect(forcedFn.tools).toEqual([{functionDeclarations: [expect.objectContaining({name: 'shell'})]}])
    // Codex's own choice is auto: with the search's invocations included, only the flag
    const auto = decodeClientRequest('responses', {...codexRequest, tool_choice: 'auto'}, {})
    expect(asSent(auto, 'gemini-3-pro-preview').toolConfig).toEqual({includeServerSideToolInvocations: true})
    // without the search, auto goes as before
    expect(asSent(auto, 'gemini-2.5-flash').toolConfig).toEqual({functionCallingConfig: {mode: 'AUTO'}})
  })

  it('a forced search beside functions: refused for every Gemini (none can force its search; a later target may)', () => {
    const client = decodeClientRequest('messages', forced, {})
    for (const model of ['gemini-2.5-flash', 'gemini-3-pro-preview'])
      expect(() => asSent(client, model)).toThrow(/forced web search beside function tools/)
  })

  it("a search request alone is Google Search alone on every model (Gemini CLI's, Claude Code's)", () => {
    for (const model of ['gemini-3-pro-preview', 'gemini-2.5-flash'])
      expect(asSent(decodeClientRequest('messages', claudeSearch, {}), model)).toMatchObject({
        tools: [{googleSearch: {}}],
      })
  })

  it("Gemini 3's answer with the search shown (toolCall, toolResponse) comes to Claude Code as the search and the text", () => {
    const client = decodeClientRequest('messages', {...forced, tool_choice: {type: 'auto'}}, {})
    const answer = translateResponse(
      'gemini',
      client,
      {
        candidates: [
          {
            content: {
              role: 'model',
              parts: [
                {
                  toolCall: {toolType: 'GOOGLE_SEARCH_WEB', args: {queries: ['gwctl']}, id: 't1'},
                  thoughtSignature: 'c2ln',
                },
                {toolResponse: {toolType: 'GOOGLE_SEARCH_WEB', response: {}, id: 't1'}},
                {text: 'gwctl is a gateway.'},
              ],
            },
            finishReason: 'STOP',
            groundingMetadata: {
              webSearchQueries: ['gwctl'],
              groundingChunks: [{web: {uri: 'https://example.com/gwctl', title: 'example.com'}}],
            },
          },
        ],
        usageMetadata: {promptTokenCount: 10, candidatesTokenCount: 5},
        modelVersion: 'gemini-3-pro-preview',
      },
      {newId: (p) => `${p}_1`},
    )
    expect((answer.body.content as any[]).map((b) => b.type)).toEqual([
      'server_tool_use',
      'web_search_tool_result',
      'text',
    ])
  })
})

describe("Gemini CLI's web_fetch (Google's URL context) on a translated route", () => {
  // what Gemini CLI 0.61's `web-fetch` alias sends: the prompt, the URL context tool alone
  const webFetch = {
    contents: [
      {
        role: 'user',
        parts: [
          {
            text: "Follow the user's instructions to process the authorized URLs.\n\n<authorized_urls>\nhttps://example.com/changelog\n</authorized_urls>\n",
          },
        ],
      },
    ],
    generationConfig: {temperature: 0},
    tools: [{urlContext: {}}],
  }

  it('is refused for every other family with a 400 that says why (Gemini CLI then fetches the page itself)', () => {
    const client = decodeClientRequest('gemini', webFetch, {model: 'gemini-3-flash-preview', stream: false})
    for (const [upstream, name] of [
      ['chat', 'a chat completions'],
      ['responses', 'a Responses'],
      ['messages', 'a Messages'],
    ] as const) {
      let error: unknown
      try {
        encodeUpstreamRequest(client, upstream, 'm')
      } catch (e) {
        error = e
      }
      expect(error).toBeInstanceOf(TranslationError)
      expect((error as TranslationError).status).toBe(400)
      expect((error as Error).message).toBe(
        `Gemini's URL context tool cannot be translated to ${name} upstream: it has no tool that reads a web page, and its model would answer from memory as though it had read it. Gemini CLI fetches the page itself after this refusal; route this agent to a Gemini provider to have the model read it`,
      )
    }
  })

  it('beside function declarations it is only left out; the fallback without it goes through', () => {
    const withFunctions = {
      ...webFetch,
      tools: [
        {urlContext: {}},
        {functionDeclarations: [{name: 'read_file', parametersJsonSchema: {type: 'object'}}]},
      ],
    }
    const client = decodeClientRequest('gemini', withFunctions, {model: 'g', stream: false})
    expect(encoded(client, 'chat').tools.map((t: any) => t.function.name)).toEqual(['read_file'])
    const fallback = decodeClientRequest(
      'gemini',
      {...webFetch, tools: undefined},
      {model: 'g', stream: false},
    )
    expect(encoded(fallback, 'messages').tools).toBeUndefined()
  })
})
