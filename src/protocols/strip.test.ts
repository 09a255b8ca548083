import {describe, expect, it} from 'vitest'

import {stripWrapped} from './strip.js'

describe('stripWrapped', () => {
  it('drops thinking blocks wrapped for gwctl from a Messages history, and thinking when the loop then lacks it', () => {
    const body: Record<string, any> = {
      thinking: {type: 'enabled', budget_tokens: 2048},
      messages: [
        {role: 'user', content: 'weather?'},
        {
          role: 'assistant',
          content: [
            {type: 'thinking', thinking: 'from a chat upstream', signature: 'gwx1.chat.'},
            {type: 'tool_use', id: 't1', name: 'w', input: {}},
          ],
        },
        {role: 'user', content: [{type: 'tool_result', tool_use_id: 't1', content: 'sunny'}]},
      ],
    }
    expect(stripWrapped('messages', body)).toBe(true)
    expect(body.messages[1].content).toEqual([{type: 'tool_use', id: 't1', name: 'w', input: {}}])
    expect(body.thinking).toBeUndefined()
  })

  it("a search another vendor ran, as the gateway wrote it, goes to Anthropic as text; Anthropic's own stays", () => {
    const own = {
      type: 'web_search_tool_result',
      tool_use_id: 'srvtoolu_a',
      content: [
        {type: 'web_search_result', url: 'https://b/', title: 'B', encrypted_content: 'EqQB', page_age: null},
      ],
    }
    const body: Record<string, any> = {
      messages: [
        {role: 'user', content: 'news?'},
        {
          role: 'assistant',
          content: [
            {type: 'server_tool_use', id: 'gwx1.search.ws_1', name: 'web_search', input: {query: 'gwctl'}},
            {
              type: 'web_search_tool_result',
              tool_use_id: 'gwx1.search.ws_1',
              content: [
                {
                  type: 'web_search_result',
                  url: 'https://a/',
                  title: 'A',
                  encrypted_content: 'gwx1.search',
                  page_age: null,
                },
              ],
            },
            {type: 'server_tool_use', id: 'srvtoolu_a', name: 'web_search', input: {query: 'more'}},
            own,
            {type: 'text', text: 'Version 2.'},
          ],
        },
        {role: 'user', content: 'thanks'},
      ],
    }
    expect(stripWrapped('messages', body)).toBe(true)
    expect(body.messages[1].content).toEqual([
      {type: 'text', text: 'Searched the web for "gwctl":\n- A <https://a/>'},
      {type: 'server_tool_use', id: 'srvtoolu_a', name: 'web_search', input: {query: 'more'}},
      own,
      {type: 'text', text: 'Version 2.'},
    ])
  })

  it("the gateway's failed or empty search, and a call whose result went missing, go as text or not at all", () => {
    const body: Record<string, any> = {
      messages: [
        {role: 'user', content: 'news?'},
        {
          role: 'assistant',
          content: [
            {type: 'server_tool_use', id: 'gwx1.search.a', name: 'web_search', input: {query: 'one'}},
            {
              type: 'web_search_tool_result',
              tool_use_id: 'gwx1.search.a',
              content: {type: 'web_search_tool_result_error', error_code: 'unavailable'},
            },
            {type: 'server_tool_use', id: 'gwx1.search.b', name: 'web_search', input: {query: 'two'}},
            {type: 'web_search_tool_result', tool_use_id: 'gwx1.search.b', content: []},
            {type: 'server_tool_use', id: 'gwx1.search.c', name: 'web_search', input: {query: 'cut'}},
          ],
        },
      ],
    }
    expect(stripWrapped('messages', body)).toBe(true)
    expect(body.messages[1].content).toEqual([
      {type: 'text', text: 'Searched the web for "one": the search failed (unavailable).'},
      {type: 'text', text: 'Searched the web for "two": no results.'},
    ])
  })

  it('keeps Anthropic-signed thinking and the thinking setting', () => {
    const body: Record<string, any> = {
      thinking: {type: 'enabled', budget_tokens: 2048},
      messages: [
        {role: 'user', content: 'hi'},
        {
          role: 'assistant',
          content: [
            {type: 'thinking', thinking: 'own', signature: 'EqQBCgIYAhIM'},
            {type: 'tool_use', id: 't1', name: 'w', input: {}},
          ],
        },
      ],
    }
    expect(stripWrapped('messages', body)).toBe(false)
    expect(body.thinking).toEqual({type: 'enabled', budget_tokens: 2048})
  })

  it('drops wrapped reasoning items of a Responses input and marks wrapped Gemini call signatures to be skipped', () => {
    const responses: Record<string, any> = {
      input: [
        {type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'gwx1.messages.sig'},
        {type: 'reasoning', id: 'rs_2', summary: [], encrypted_content: 'own'},
        {type: 'function_call_output', call_id: 'c', output: 'x'},
      ],
    }
    expect(stripWrapped('responses', responses)).toBe(true)
    expect(responses.input.map((i: any) => i.id ?? i.type)).toEqual(['rs_2', 'function_call_output'])

    const gemini: Record<string, any> = {
      contents: [
        {
          role: 'model',
          parts: [
            {text: '', thought: true, thoughtSignature: 'gwx1.messages.sig'},
            {functionCall: {name: 'w', args: {}}, thoughtSignature: 'gwx1.responses.x'},
            {text: 'done', thoughtSignature: 'gwx1.chat.'},
          ],
        },
      ],
    }
    expect(stripWrapped('gemini', gemini)).toBe(true)
    expect(gemini.contents[0].parts).toEqual([
      {functionCall: {name: 'w', args: {}}, thoughtSignature: 'skip_thought_signature_validator'},
      {text: 'done'},
    ])
    expect(stripWrapped('chat', {messages: []})).toBe(false)
  })

  it("a Gemini chat session's history (one content per streamed chunk): a content left empty goes, one that came empty stays", () => {
    const model = (part: unknown) => ({role: 'model', parts: [part]})
    const body: Record<string, any> = {
      contents: [
        {role: 'user', parts: [{text: 'go'}]},
        model({text: 'Let me think.', thought: true}),
        model({text: '', thought: true, thoughtSignature: 'gwx1.messages.sig'}),
        model({functionCall: {name: 'w', args: {}}, thoughtSignature: 'skip_thought_signature_validator'}),
        {role: 'user', parts: [{functionResponse: {name: 'w', response: {output: 'ok'}}}]},
        // (the session's own record of an empty answer: the client's, as it came)
        {role: 'model', parts: []},
      ],
    }
    expect(stripWrapped('gemini', body)).toBe(true)
    expect(body.contents).toEqual([
      {role: 'user', parts: [{text: 'go'}]},
      model({text: 'Let me think.', thought: true}),
      model({functionCall: {name: 'w', args: {}}, thoughtSignature: 'skip_thought_signature_validator'}),
      {role: 'user', parts: [{functionResponse: {name: 'w', response: {output: 'ok'}}}]},
      {role: 'model', parts: []},
    ])
  })
})
