/**
 * A system message the client sent after the conversation began (Claude Code 2.1.332's `# Environment`
 * after the first tool result, Codex's developer item, a chat client's later system message): where
 * it stood for OpenAI's Responses API and chat completions (`systemInPlace`), so the system prompt
 * is the same on every turn and the upstream's prompt cache keeps the whole prefix; folded into the
 * system prompt for every other upstream, as before (audit56 #3).
 */
import {describe, expect, it} from 'vitest'

import type {CarryStore, CodecContext, Family, Part} from './ir.js'
import {decodeClientRequest, encodeUpstreamRequest} from './translate.js'

type Body = Record<string, any>

function encode(family: Family, body: unknown, upstream: Family, ctx: CodecContext = {}): Body {
  const client = decodeClientRequest(family, body, {toResponses: family === 'responses'})
  return JSON.parse(encodeUpstreamRequest(client, upstream, 'gpt-5.6-sol', ctx).body.toString()) as Body
}

const BASH = {name: 'Bash', description: 'Run a command.', input_schema: {type: 'object', properties: {}}}
const ENV = '# Environment\nYou have been invoked in the following environment: /work'
const DATE = "Today's date is 2026-07-01."

/** Claude Code 2.1.332's request 1 and request 2: request 2 has `# Environment` after the first tool result. */
function claudeCode(second: boolean): Body {
  const messages: unknown[] = [
    {role: 'user', content: [{type: 'text', text: 'List the files.'}]},
    {role: 'system', content: DATE, output_config: {effort: 'high'}},
  ]
  if (second)
    messages.push(
      {role: 'assistant', content: [{type: 'tool_use', id: 'toolu_1', name: 'Bash', input: {command: 'ls'}}]},
      {role: 'user', content: [{type: 'tool_result', tool_use_id: 'toolu_1', content: 'a.txt'}]},
      {role: 'system', content: [{type: 'text', text: ENV}]},
    )
  return {
    model: 'claude-sonnet-5',
    max_tokens: 1000,
    system: [{type: 'text', text: 'You are Claude Code.'}],
    messages,
    tools: [BASH],
  }
}

const roles = (input: Body[]) => input.map((i) => (i.type === 'message' ? i.role : i.type))

describe('a Messages system message mid-conversation, to a Responses upstream', () => {
  it("OpenAI's: a developer item where it stood, the instructions request 1's", () => {
    const first = encode('messages', claudeCode(false), 'responses', {systemInPlace: true})
    const second = encode('messages', claudeCode(true), 'responses', {systemInPlace: true})
    expect(second.instructions).toBe(first.instructions)
    expect(second.instructions).toBe('You are Claude Code.')
    expect(roles(second.input)).toEqual([
      'user',
      'developer',
      'function_call',
      'function_call_output',
      'developer',
    ])
    expect(second.input[4]).toEqual({
      type: 'message',
      role: 'developer',
      content: [{type: 'input_text', text: ENV}],
    })
    // request 2's input starts with request 1's: the whole prefix is the same bytes
    expect(JSON.stringify(second.input).startsWith(JSON.stringify(first.input).slice(0, -1))).toBe(true)
  })

  it("to a Responses server that is not OpenAI's: the fold, as before", () => {
    const second = encode('messages', claudeCode(true), 'responses')
    expect(second.instructions).toBe(`You are Claude Code.\n\n${DATE}\n\n${ENV}`)
    expect(roles(second.input)).toEqual(['user', 'function_call', 'function_call_output'])
  })

  it('between two user turns (joined as Anthropic reads them): between their parts', () => {
    const body = claudeCode(false)
    body.messages = [
      {role: 'user', content: 'one'},
      {role: 'system', content: ENV},
      {role: 'user', content: 'two'},
    ]
    const sent = encode('messages', body, 'responses', {systemInPlace: true})
    expect(sent.input.map((i: Body) => [i.role, i.content[0].text])).toEqual([
      ['user', 'one'],
      ['developer', ENV],
      ['user', 'two'],
    ])
  })
})

describe('a place found again when the history is paired', () => {
  it('a call without a result: its error result first, the system message after it, before the text', () => {
    const body = claudeCode(false)
    body.messages = [
      {role: 'user', content: 'List the files.'},
      {role: 'assistant', content: [{type: 'tool_use', id: 'toolu_1', name: 'Bash', input: {}}]},
      {role: 'system', content: ENV},
      {role: 'user', content: 'Go on.'},
    ]
    const sent = encode('messages', body, 'responses', {systemInPlace: true})
    expect(roles(sent.input)).toEqual(['user', 'function_call', 'function_call_output', 'developer', 'user'])
  })
})

describe("Codex's developer item mid-conversation", () => {
  const codex = {
    model: 'gpt-5.6-sol',
    instructions: 'You are Codex.',
    input: [
      {
        type: 'message',
        role: 'developer',
        content: [{type: 'input_text', text: 'Sandbox: workspace-write.'}],
      },
      {type: 'message', role: 'user', content: [{type: 'input_text', text: 'List the files.'}]},
      {type: 'function_call', call_id: 'c1', name: 'exec', arguments: '{}'},
      {type: 'message', role: 'developer', content: [{type: 'input_text', text: 'PostToolUse: 2 files.'}]},
      {type: 'function_call_output', call_id: 'c1', output: 'a b'},
      {type: 'message', role: 'developer', content: [{type: 'input_text', text: 'Approval: never.'}]},
    ],
    tools: [{type: 'function', name: 'exec', parameters: {type: 'object', properties: {}}}],
  }

  it("to OpenAI's Responses (its tools plain or not): each where it stood; the first, before any turn, in the instructions", () => {
    const sent = encode('responses', codex, 'responses', {systemInPlace: true})
    expect(sent.instructions).toBe('You are Codex.\n\nSandbox: workspace-write.')
    expect(
      sent.input.map((i: Body) => (i.role === 'developer' ? i.content[0].text : (i.role ?? i.type))),
    ).toEqual(['user', 'function_call', 'PostToolUse: 2 files.', 'function_call_output', 'Approval: never.'])
  })

  it("to OpenAI's chat completions: a system message where it stood, after the call's tool message", () => {
    const sent = encode('responses', codex, 'chat', {systemInPlace: true, openAiApi: true})
    expect(sent.messages.map((m: Body) => [m.role, m.role === 'system' ? m.content : undefined])).toEqual([
      ['system', 'You are Codex.\n\nSandbox: workspace-write.'],
      ['user', undefined],
      ['assistant', undefined],
      ['tool', undefined],
      ['system', 'PostToolUse: 2 files.'],
      ['system', 'Approval: never.'],
    ])
  })

  it('to another chat server and to Gemini: the fold, as before', () => {
    const chat = encode('responses', codex, 'chat')
    expect(chat.messages.map((m: Body) => m.role)).toEqual(['system', 'user', 'assistant', 'tool'])
    expect(chat.messages[0].content).toBe(
      'You are Codex.\n\nSandbox: workspace-write.\n\nPostToolUse: 2 files.\n\nApproval: never.',
    )
    const gemini = encode('responses', codex, 'gemini')
    expect(gemini.systemInstruction.parts.map((p: Body) => p.text)).toEqual([
      'You are Codex.',
      'Sandbox: workspace-write.',
      'PostToolUse: 2 files.',
      'Approval: never.',
    ])
  })
})

describe("a chat client's later system message", () => {
  const chat = (late: boolean) => ({
    model: 'gpt-5.6-sol',
    messages: [
      {role: 'system', content: 'You are a helper.'},
      {role: 'user', content: 'Hi.'},
      {role: 'assistant', content: 'Hello.'},
      ...(late ? [{role: 'system', content: 'The user is on a phone now.'}] : []),
      {role: 'user', content: 'Again.'},
    ],
  })

  it("to OpenAI's Responses: a developer item where it stood, the instructions the first system message", () => {
    const sent = encode('chat', chat(true), 'responses', {systemInPlace: true})
    expect(sent.instructions).toBe(
      encode('chat', chat(false), 'responses', {systemInPlace: true}).instructions,
    )
    expect(roles(sent.input)).toEqual(['user', 'assistant', 'developer', 'user'])
    expect(sent.input[2].content).toEqual([{type: 'input_text', text: 'The user is on a phone now.'}])
  })

  it('to Messages and to Gemini: the fold, as before', () => {
    const messages = encode('chat', chat(true), 'messages')
    expect(messages.system.map((b: Body) => b.text)).toEqual([
      'You are a helper.',
      'The user is on a phone now.',
    ])
    expect(messages.messages.map((m: Body) => m.role)).toEqual(['user', 'assistant', 'user'])
    const gemini = encode('chat', chat(true), 'gemini')
    expect(gemini.systemInstruction.parts.map((p: Body) => p.text)).toEqual([
      'You are a helper.',
      'The user is on a phone now.',
    ])
  })
})

describe('a place before an empty turn, the history paired (review65 F1)', () => {
  const text = (i: Body) =>
    i.type === 'message'
      ? `${i.role} ${i.content.map((c: Body) => c.text).join('')}`
      : `${i.type} ${i.call_id}`

  it("a chat client's system message before an empty assistant turn: still before the next turn", () => {
    const body = {
      model: 'gpt-5.6-sol',
      messages: [
        {role: 'system', content: 'TOP'},
        {role: 'user', content: 'a'},
        {role: 'system', content: 'S'},
        {role: 'assistant', content: ''},
        {role: 'user', content: 'b'},
        {
          role: 'assistant',
          content: null,
          tool_calls: [{id: 'c1', type: 'function', function: {name: 'exec', arguments: '{}'}}],
        },
        {role: 'user', content: 'c'},
      ],
      tools: [{type: 'function', function: {name: 'exec', parameters: {type: 'object', properties: {}}}}],
    }
    const sent = encode('chat', body, 'responses', {systemInPlace: true})
    expect(sent.instructions).toBe('TOP')
    expect(sent.input.map(text)).toEqual([
      'user a',
      'developer S',
      'user b',
      'function_call c1',
      'function_call_output c1',
      'user c',
    ])
    const chat = encode('chat', body, 'chat', {systemInPlace: true, openAiApi: true})
    expect(chat.messages.map((m: Body) => m.role)).toEqual([
      'system',
      'user',
      'system',
      'user',
      'assistant',
      'tool',
      'user',
    ])
  })

  it('a Messages system message before an assistant turn of no blocks: still before the next turn', () => {
    const body = claudeCode(false)
    body.messages = [
      {role: 'user', content: 'a'},
      {role: 'system', content: ENV},
      {role: 'assistant', content: []},
      {role: 'user', content: 'b'},
      {role: 'assistant', content: [{type: 'tool_use', id: 'toolu_1', name: 'Bash', input: {}}]},
      {role: 'user', content: 'c'},
    ]
    const sent = encode('messages', body, 'responses', {systemInPlace: true})
    expect(sent.input.map(text)).toEqual([
      'user a',
      `developer ${ENV}`,
      'user b',
      'function_call toolu_1',
      'function_call_output toolu_1',
      'user c',
    ])
  })
})

describe("a Codex developer item inside an assistant run whose call's reasoning is carried (review65 F2)", () => {
  it('stays right before the call, after the reasoning put back before it', () => {
    const kept = new Map<string, Part[]>([
      [
        'c1',
        [
          {
            type: 'reasoning',
            text: 'Reading the tree.',
            encrypted: {
              family: 'responses',
              value: JSON.stringify({id: 'rs_1', encrypted_content: 'gAAAA1'}),
            },
          },
        ],
      ],
    ])
    const carry: CarryStore = {get: (k) => kept.get(k), set: (k, parts) => void kept.set(k, parts)}
    const body = {
      model: 'gpt-5.6-sol',
      instructions: 'You are Codex.',
      input: [
        {type: 'message', role: 'user', content: [{type: 'input_text', text: 'List the files.'}]},
        {type: 'message', role: 'assistant', content: [{type: 'output_text', text: 'Looking.'}]},
        {type: 'message', role: 'developer', content: [{type: 'input_text', text: 'PreToolUse: allowed.'}]},
        {type: 'function_call', call_id: 'c1', name: 'exec', arguments: '{}'},
        {type: 'function_call_output', call_id: 'c1', output: 'a b'},
      ],
      tools: [{type: 'function', name: 'exec', parameters: {type: 'object', properties: {}}}],
    }
    const client = decodeClientRequest('responses', body, {toResponses: true, carry})
    const sent = JSON.parse(
      encodeUpstreamRequest(client, 'responses', 'gpt-5.6-sol', {systemInPlace: true}).body.toString(),
    ) as Body
    expect(
      sent.input.map((i: Body) => (i.role === 'developer' ? i.content[0].text : (i.role ?? i.type))),
    ).toEqual([
      'user',
      'assistant',
      'reasoning',
      'PreToolUse: allowed.',
      'function_call',
      'function_call_output',
    ])
    expect(sent.input[2].encrypted_content).toBe('gAAAA1')
  })
})
