import {describe, expect, it} from 'vitest'

import {
  chatBodyWithinToolCap,
  geminiBodyWithinToolCap,
  messagesBodyWithinToolCap,
  toolCapLine,
  toolsWithin,
} from './tool-cap.js'
import {adaptPassedGemini, decodeClientRequest, encodeUpstreamRequest} from './translate.js'

const names = (n: number, prefix = 't') => Array.from({length: n}, (_, i) => `${prefix}${i}`)

describe('toolsWithin', () => {
  it("keeps the client's first tools, those needed and hosted ones, in the client's order", () => {
    expect(toolsWithin(names(3), 3, new Set())).toBeUndefined()
    const cut = toolsWithin(['a', 'b', undefined, 'c', 'd', 'e'], 4, new Set(['e']))!
    // `e` (called) and the hosted tool count first, then `a` and `b`
    expect(cut).toEqual({keep: [true, true, true, false, false, true], leftOut: ['c', 'd']})
    // needed tools past the cap stay (the upstream's refusal is then the client's to see)
    expect(toolsWithin(['a', 'b', 'c'], 1, new Set(['b', 'c']))).toEqual({
      keep: [false, true, true],
      leftOut: ['a'],
    })
  })

  it('names at most 40 left-out tools in the line, the rest counted', () => {
    expect(toolCapLine(['x', 'y'], 128)).toBe(
      "[gwctl: this model takes at most 128 tools, so 2 of the client's tools were not offered and cannot be called in this conversation: x, y]",
    )
    expect(toolCapLine(names(45), 128)).toMatch(/: t0, t1, .*, t39 and 5 more\]$/)
  })
})

describe('a translated request to a model that learned a cap', () => {
  const chatBody = (messages: unknown[], choice?: unknown) => ({
    model: 'm',
    messages,
    tools: names(6).map((name) => ({type: 'function', function: {name, parameters: {type: 'object'}}})),
    ...(choice ? {tool_choice: choice} : {}),
  })
  const history = [
    {role: 'system', content: 'Be brief.'},
    {role: 'user', content: 'go'},
    {
      role: 'assistant',
      content: null,
      tool_calls: [{id: 'c1', type: 'function', function: {name: 't5', arguments: '{}'}}],
    },
    {role: 'tool', tool_call_id: 'c1', content: 'x'},
  ]

  it('to chat: the first tools and the one the history calls, the line at the end of the system prompt', () => {
    const client = decodeClientRequest('chat', chatBody(history), {})
    const out = encodeUpstreamRequest(client, 'chat', 'm', {}, {toolCap: 4})
    const json = JSON.parse(out.body.toString())
    expect(json.tools.map((t: any) => t.function.name)).toEqual(['t0', 't1', 't2', 't5'])
    expect(json.messages[0].content).toBe(`Be brief.\n\n${toolCapLine(['t3', 't4'], 4)}`)
    expect(out.sent.notes).toEqual([
      "left out 2 of 6 tools past the model's limit of 4 (t3, t4): a line in the system prompt says so",
    ])
    // the same bytes on the next request with the same tools
    expect(encodeUpstreamRequest(client, 'chat', 'm', {}, {toolCap: 4}).body.equals(out.body)).toBe(true)
    // a forced tool past the cap stays
    const forced = decodeClientRequest(
      'chat',
      chatBody([{role: 'user', content: 'go'}], {type: 'function', function: {name: 't4'}}),
      {},
    )
    const forcedJson = JSON.parse(
      encodeUpstreamRequest(forced, 'chat', 'm', {}, {toolCap: 3}).body.toString(),
    )
    expect(forcedJson.tools.map((t: any) => t.function.name)).toEqual(['t0', 't1', 't4'])
    // without the rule, or under the cap: every tool, no line, no note
    const plain = encodeUpstreamRequest(client, 'chat', 'm', {}, {toolCap: 6})
    expect(JSON.parse(plain.body.toString()).tools).toHaveLength(6)
    expect(plain.sent.notes).toBeUndefined()
  })

  it('to Gemini and Messages: the declarations cut, the line in systemInstruction and the system blocks', () => {
    const client = decodeClientRequest('chat', chatBody(history), {})
    const gemini = JSON.parse(encodeUpstreamRequest(client, 'gemini', 'g', {}, {toolCap: 3}).body.toString())
    expect(gemini.tools[0].functionDeclarations.map((d: any) => d.name)).toEqual(['t0', 't1', 't5'])
    expect(gemini.systemInstruction.parts.at(-1).text).toBe(toolCapLine(['t2', 't3', 't4'], 3))
    const messages = JSON.parse(
      encodeUpstreamRequest(client, 'messages', 'c', {}, {toolCap: 3}).body.toString(),
    )
    expect(messages.tools.map((t: any) => t.name)).toEqual(['t0', 't1', 't5'])
    expect(JSON.stringify(messages.system)).toContain(toolCapLine(['t2', 't3', 't4'], 3))
  })
})

describe('bodies passed through', () => {
  it('chat: the first tools and those the history calls; the line after the first system message', () => {
    const body = {
      model: 'm',
      messages: [
        {role: 'user', content: 'go'},
        {
          role: 'assistant',
          tool_calls: [{id: 'c1', type: 'function', function: {name: 't4', arguments: '{}'}}],
        },
      ],
      tools: names(5).map((name) => ({type: 'function', function: {name}})),
    }
    const before = JSON.stringify(body)
    const capped = chatBodyWithinToolCap(body, 3)!
    expect(JSON.stringify(body)).toBe(before)
    expect((capped.body.tools as any[]).map((t) => t.function.name)).toEqual(['t0', 't1', 't4'])
    expect((capped.body.messages as any[])[0]).toEqual({
      role: 'system',
      content: toolCapLine(['t2', 't3'], 3),
    })
    expect(chatBodyWithinToolCap(body, 5)).toBeUndefined()
  })

  it("Messages: a server tool stays and counts; the line is a last system block after Claude Code's marks", () => {
    const system = [{type: 'text', text: 'You are Claude Code.', cache_control: {type: 'ephemeral'}}]
    const body = {
      model: 'kimi',
      system,
      messages: [
        {role: 'user', content: 'go'},
        {role: 'assistant', content: [{type: 'tool_use', id: 'u1', name: 'mcp__z', input: {}}]},
      ],
      tools: [
        {name: 'Bash', input_schema: {}},
        {type: 'web_search_20250305', name: 'web_search'},
        {name: 'mcp__a', input_schema: {}},
        {name: 'mcp__b', input_schema: {}},
        {name: 'mcp__z', input_schema: {}},
      ],
    }
    const capped = messagesBodyWithinToolCap(body, 3)!
    expect((capped.body.tools as any[]).map((t) => t.name)).toEqual(['Bash', 'web_search', 'mcp__z'])
    expect(capped.body.system).toEqual([
      ...system,
      {type: 'text', text: toolCapLine(['mcp__a', 'mcp__b'], 3)},
    ])
  })

  it('Gemini: declarations across entries, a forced name kept, an emptied entry gone, the line in systemInstruction', () => {
    const decl = (name: string) => ({name, parametersJsonSchema: {type: 'object'}})
    const body = {
      contents: [{role: 'user', parts: [{text: 'go'}]}],
      systemInstruction: {parts: [{text: 'You are Gemini CLI.'}]},
      tools: [
        {functionDeclarations: [decl('read_file'), decl('shell')]},
        {functionDeclarations: [decl('mcp_a'), decl('mcp_b')]},
        {functionDeclarations: [decl('mcp_c')]},
        {googleSearch: {}},
      ],
      toolConfig: {functionCallingConfig: {mode: 'ANY', allowedFunctionNames: ['mcp_b']}},
    }
    const capped = geminiBodyWithinToolCap(body, 3)!
    expect(capped.body.tools).toEqual([
      {functionDeclarations: [decl('read_file'), decl('shell')]},
      {functionDeclarations: [decl('mcp_b')]},
      {googleSearch: {}},
    ])
    expect(capped.body.systemInstruction).toEqual({
      parts: [{text: 'You are Gemini CLI.'}, {text: toolCapLine(['mcp_a', 'mcp_c'], 3)}],
    })
    const notes: string[] = []
    const bytes = adaptPassedGemini(body, {toolCap: 3}, notes)
    expect(JSON.parse(bytes.toString())).toEqual(capped.body)
    expect(notes).toEqual([
      "left out 2 of 5 tools past the model's limit of 3 (mcp_a, mcp_c): a line in the system prompt says so",
    ])
    // under the cap: the body as it came
    expect(JSON.parse(adaptPassedGemini(body, {toolCap: 5}).toString())).toEqual(body)
  })
})
