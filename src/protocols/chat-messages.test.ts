/**
 * Translation between the two families: Claude Code (a Messages client) on an OpenAI-compatible
 * chat upstream (DeepSeek), turn 1 and turn 2, and a chat client on a Messages upstream.
 */
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import {describe, expect, it} from 'vitest'

import {BoundedCarry} from './carry.js'
import {chatCodec} from './chat.js'
import {chatChunk, chatSse, decodeAll, encodeAll, messagesSse, serveOnce} from './cm-test-helpers.js'
import type {Request} from './ir.js'
import {messagesCodec} from './messages.js'

const CLAUDE_SYSTEM = [
  {
    type: 'text',
    text: "You are Claude Code, Anthropic's official CLI for Claude.",
    cache_control: {type: 'ephemeral'},
  },
  {
    type: 'text',
    text: 'You are an interactive CLI tool that helps users with software engineering tasks.',
    cache_control: {type: 'ephemeral'},
  },
]
const CLAUDE_TOOLS = [
  {
    name: 'Read',
    description: 'Reads a file from the local filesystem.',
    input_schema: {type: 'object', properties: {file_path: {type: 'string'}}, required: ['file_path']},
  },
  {
    name: 'Bash',
    description: 'Executes a bash command.',
    input_schema: {type: 'object', properties: {command: {type: 'string'}}, required: ['command']},
  },
]
const turn1 = {
  model: 'claude-sonnet-4-5-20250929',
  max_tokens: 32000,
  stream: true,
  system: CLAUDE_SYSTEM,
  tools: CLAUDE_TOOLS,
  thinking: {type: 'enabled', budget_tokens: 31999},
  metadata: {user_id: 'user_' + 'a'.repeat(64) + '_account__session_5f7e3c1a-1111-2222-3333-444455556666'},
  messages: [
    {
      role: 'user',
      content: [
        {type: 'text', text: '<system-reminder>Context: the repo is a TypeScript CLI.</system-reminder>'},
        {type: 'text', text: 'Read package.json and list the files.', cache_control: {type: 'ephemeral'}},
      ],
    },
  ],
}

const chunk = (delta: Record<string, unknown>, finish: string | null = null): Record<string, unknown> =>
  chatChunk(delta, finish, {id: 'chatcmpl-ds1', model: 'deepseek-reasoner'})

const DEEPSEEK_STREAM = chatSse([
  chunk({role: 'assistant', content: null, reasoning_content: ''}),
  chunk({content: null, reasoning_content: 'I should read package.json'}),
  chunk({content: null, reasoning_content: ' and list the files.'}),
  chunk({
    content: null,
    tool_calls: [{index: 0, id: 'call_00_read', type: 'function', function: {name: 'Read', arguments: ''}}],
  }),
  chunk({tool_calls: [{index: 0, function: {arguments: '{"file_pa'}}]}),
  chunk({tool_calls: [{index: 0, function: {arguments: 'th":"package.json"}'}}]}),
  chunk({
    tool_calls: [
      {index: 1, id: 'call_01_bash', type: 'function', function: {name: 'Bash', arguments: '{"comm'}},
    ],
  }),
  chunk({tool_calls: [{index: 1, function: {arguments: 'and":"ls -la"}'}}]}),
  chunk({}, 'tool_calls'),
  {
    ...chunk({}),
    choices: [],
    usage: {
      prompt_tokens: 1200,
      completion_tokens: 90,
      total_tokens: 1290,
      prompt_cache_hit_tokens: 1000,
      prompt_cache_miss_tokens: 200,
      completion_tokens_details: {reasoning_tokens: 40},
    },
  },
  '[DONE]',
])

describe('Claude Code on a chat upstream', () => {
  it('turn 1: the Claude Code request becomes a plain chat request', () => {
    const ir = messagesCodec.decodeRequest(turn1, {})
    const body = chatCodec.encodeRequest(ir, 'deepseek-reasoner')
    expect(body).toEqual({
      model: 'deepseek-reasoner',
      messages: [
        {
          role: 'system',
          content:
            "You are Claude Code, Anthropic's official CLI for Claude.\n\nYou are an interactive CLI tool that helps users with software engineering tasks.",
        },
        {
          role: 'user',
          content:
            '<system-reminder>Context: the repo is a TypeScript CLI.</system-reminder>\n\nRead package.json and list the files.',
        },
      ],
      tools: CLAUDE_TOOLS.map((t) => ({
        type: 'function',
        function: {name: t.name, description: t.description, parameters: t.input_schema},
      })),
      max_tokens: 32000,
      reasoning_effort: 'high',
      stream: true,
      stream_options: {include_usage: true},
    })
    expect(JSON.stringify(body)).not.toContain('cache_control')
  })

  it('turn 1 answer: a DeepSeek stream with reasoning and two parallel tool calls reads right in the Anthropic SDK, and turn 2 goes back with reasoning_content and the same ids', async () => {
    const carry = new BoundedCarry()
    const request = messagesCodec.decodeRequest(turn1, {carry})
    const events = decodeAll(chatCodec.streamDecoder({}), DEEPSEEK_STREAM)
    const sse = encodeAll(messagesCodec.streamEncoder({carry, request, model: turn1.model}), events)
    const server = await serveOnce(sse, true)
    try {
      const client = new Anthropic({baseURL: server.url, apiKey: 'k', maxRetries: 0})
      const message = await client.messages
        .stream({model: turn1.model, max_tokens: 32000, messages: [{role: 'user', content: 'Hi'}]})
        .finalMessage()
      expect(message.stop_reason).toBe('tool_use')
      expect(message.content).toEqual([
        {
          type: 'thinking',
          thinking: 'I should read package.json and list the files.',
          signature: 'gwx1.chat.',
        },
        {type: 'tool_use', id: 'call_00_read', name: 'Read', input: {file_path: 'package.json'}},
        {type: 'tool_use', id: 'call_01_bash', name: 'Bash', input: {command: 'ls -la'}},
      ])
      expect(message.usage).toMatchObject({
        input_tokens: 200,
        cache_read_input_tokens: 1000,
        cache_creation_input_tokens: 0,
        output_tokens: 90,
      })

      // Turn 2, as Claude Code sends it: the assistant turn as received, then the tool results.
      const turn2 = {
        ...turn1,
        messages: [
          turn1.messages[0],
          {role: 'assistant', content: message.content},
          {
            role: 'user',
            content: [
              {type: 'tool_result', tool_use_id: 'call_00_read', content: '{"name":"gwctl"}'},
              {
                type: 'tool_result',
                tool_use_id: 'call_01_bash',
                content: [{type: 'text', text: 'package.json\nsrc'}],
                cache_control: {type: 'ephemeral'},
              },
            ],
          },
        ],
      }
      const body = chatCodec.encodeRequest(messagesCodec.decodeRequest(turn2, {carry}), 'deepseek-reasoner')
      const messages = body.messages as Array<Record<string, unknown>>
      expect(messages.slice(2)).toEqual([
        {
          role: 'assistant',
          content: null,
          reasoning_content: 'I should read package.json and list the files.',
          tool_calls: [
            {
              id: 'call_00_read',
              type: 'function',
              function: {name: 'Read', arguments: '{"file_path":"package.json"}'},
            },
            {
              id: 'call_01_bash',
              type: 'function',
              function: {name: 'Bash', arguments: '{"command":"ls -la"}'},
            },
          ],
        },
        {role: 'tool', tool_call_id: 'call_00_read', content: '{"name":"gwctl"}'},
        {role: 'tool', tool_call_id: 'call_01_bash', content: 'package.json\nsrc'},
      ])
    } finally {
      await server.close()
    }
  })

  it('turn 2 without the thinking block (a client that dropped it) gets the reasoning from the carry', () => {
    const carry = new BoundedCarry()
    const request = messagesCodec.decodeRequest(turn1, {carry})
    encodeAll(
      messagesCodec.streamEncoder({carry, request}),
      decodeAll(chatCodec.streamDecoder({}), DEEPSEEK_STREAM),
    )
    const turn2 = {
      ...turn1,
      messages: [
        turn1.messages[0],
        {
          role: 'assistant',
          content: [{type: 'tool_use', id: 'call_00_read', name: 'Read', input: {file_path: 'package.json'}}],
        },
        {role: 'user', content: [{type: 'tool_result', tool_use_id: 'call_00_read', content: 'x'}]},
      ],
    }
    const body = chatCodec.encodeRequest(messagesCodec.decodeRequest(turn2, {carry}), 'deepseek-reasoner')
    expect((body.messages as Array<Record<string, unknown>>)[2].reasoning_content).toBe(
      'I should read package.json and list the files.',
    )
  })
})

const ANTHROPIC_SIGNED_STREAM = messagesSse([
  {
    type: 'message_start',
    message: {
      id: 'msg_01A',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: 50,
        cache_creation_input_tokens: 300,
        cache_read_input_tokens: 0,
        output_tokens: 1,
      },
    },
  },
  {type: 'content_block_start', index: 0, content_block: {type: 'thinking', thinking: '', signature: ''}},
  {type: 'ping'},
  {type: 'content_block_delta', index: 0, delta: {type: 'thinking_delta', thinking: 'Need the weather.'}},
  {type: 'content_block_delta', index: 0, delta: {type: 'signature_delta', signature: 'EqQBCkgSIGSIG=='}},
  {type: 'content_block_stop', index: 0},
  {
    type: 'content_block_start',
    index: 1,
    content_block: {type: 'tool_use', id: 'toolu_01W', name: 'weather', input: {}},
  },
  {type: 'content_block_delta', index: 1, delta: {type: 'input_json_delta', partial_json: '{"city": "Pa'}},
  {type: 'content_block_delta', index: 1, delta: {type: 'input_json_delta', partial_json: 'ris"}'}},
  {type: 'content_block_stop', index: 1},
  {
    type: 'message_delta',
    delta: {stop_reason: 'tool_use', stop_sequence: null},
    usage: {
      input_tokens: 50,
      cache_creation_input_tokens: 300,
      cache_read_input_tokens: 0,
      output_tokens: 42,
    },
  },
  {type: 'message_stop'},
])

describe('a chat client on a Messages upstream', () => {
  const chatTurn1 = {
    model: 'claude-sonnet-4-5',
    stream: true,
    stream_options: {include_usage: true},
    reasoning_effort: 'medium',
    messages: [
      {role: 'system', content: 'Be brief.'},
      {role: 'user', content: 'Weather in Paris?'},
    ],
    tools: [
      {
        type: 'function',
        function: {name: 'weather', parameters: {type: 'object', properties: {city: {type: 'string'}}}},
      },
    ],
  }

  it('turn 1 asks for thinking with cache breakpoints, the signed answer reaches the openai SDK, and turn 2 sends the signature back through the carry', async () => {
    const carry = new BoundedCarry()
    const request: Request = chatCodec.decodeRequest(chatTurn1, {carry})
    const up = messagesCodec.encodeRequest(request, 'claude-sonnet-4-5')
    expect(up.thinking).toEqual({type: 'enabled', budget_tokens: 10000})
    // (the chat client set no limit: Claude Code's own default)
    expect(up.max_tokens).toBe(32000)
    expect(up.system).toEqual([{type: 'text', text: 'Be brief.', cache_control: {type: 'ephemeral'}}])
    expect(up.messages).toEqual([
      {
        role: 'user',
        content: [{type: 'text', text: 'Weather in Paris?', cache_control: {type: 'ephemeral'}}],
      },
    ])

    const events = decodeAll(messagesCodec.streamDecoder({}), ANTHROPIC_SIGNED_STREAM)
    const sse = encodeAll(chatCodec.streamEncoder({carry, request, includeUsage: true}), events)
    const server = await serveOnce(sse, true)
    try {
      const client = new OpenAI({baseURL: server.url + '/v1', apiKey: 'k', maxRetries: 0})
      const completion = await client.chat.completions
        .stream({
          model: 'claude-sonnet-4-5',
          messages: [{role: 'user', content: 'x'}],
          stream_options: {include_usage: true},
        })
        .finalChatCompletion()
      const m = completion.choices[0].message
      expect(completion.choices[0].finish_reason).toBe('tool_calls')
      expect(m.tool_calls?.[0]).toMatchObject({
        id: 'toolu_01W',
        function: {name: 'weather', arguments: '{"city": "Paris"}'},
      })
      expect(completion.usage).toMatchObject({prompt_tokens: 350, completion_tokens: 42})

      const chatTurn2 = {
        ...chatTurn1,
        messages: [
          ...chatTurn1.messages,
          {role: 'assistant', content: null, tool_calls: m.tool_calls},
          {role: 'tool', tool_call_id: 'toolu_01W', content: 'Sunny, 21C'},
        ],
      }
      const up2 = messagesCodec.encodeRequest(
        chatCodec.decodeRequest(chatTurn2, {carry}),
        'claude-sonnet-4-5',
      )
      expect(up2.thinking).toEqual({type: 'enabled', budget_tokens: 10000})
      expect((up2.messages as unknown[]).slice(1)).toEqual([
        {
          role: 'assistant',
          content: [
            {type: 'thinking', thinking: 'Need the weather.', signature: 'EqQBCkgSIGSIG=='},
            {type: 'tool_use', id: 'toolu_01W', name: 'weather', input: {city: 'Paris'}},
          ],
        },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'toolu_01W',
              content: [{type: 'text', text: 'Sunny, 21C'}],
              cache_control: {type: 'ephemeral'},
            },
          ],
        },
      ])

      // Without the carry (a restarted gateway) the request degrades to no thinking, never a 400.
      const lost = messagesCodec.encodeRequest(chatCodec.decodeRequest(chatTurn2, {}), 'claude-sonnet-4-5')
      expect(lost.thinking).toBeUndefined()
      expect(JSON.stringify(lost.messages)).not.toContain('thinking')
    } finally {
      await server.close()
    }
  })
})

describe("Claude Code on Claude through a chat upstream (OpenRouter's anthropic/..., a relay's claude-...)", () => {
  it('its cache marks go on the content parts they mark, as those servers take them', () => {
    const ir = messagesCodec.decodeRequest(turn1, {})
    const body = chatCodec.encodeRequest(ir, 'anthropic/claude-sonnet-4.5') as {messages: any[]}
    expect(body.messages[0]).toEqual({
      role: 'system',
      content: [
        {
          type: 'text',
          text: "You are Claude Code, Anthropic's official CLI for Claude.\n\nYou are an interactive CLI tool that helps users with software engineering tasks.",
          cache_control: {type: 'ephemeral'},
        },
      ],
    })
    // another server's model: no marks, the strings as before
    expect(JSON.stringify(chatCodec.encodeRequest(ir, 'deepseek-chat'))).not.toContain('cache_control')
    // refused once, learned: none
    expect(
      JSON.stringify(chatCodec.encodeRequest(ir, 'claude-sonnet-4-5', {noCacheMarks: true})),
    ).not.toContain('cache_control')
  })

  it("a client without marks (Codex, Gemini CLI) gets Claude Code's own: the system prompt and the last two user turns, a tool result's included", () => {
    const ir: Request = {
      model: 'm',
      system: [{type: 'text', text: 'sys'}],
      tools: [],
      stream: false,
      messages: [
        {role: 'user', parts: [{type: 'text', text: 'one'}]},
        {role: 'assistant', parts: [{type: 'tool_call', id: 'c1', name: 'f', arguments: '{}'}]},
        {role: 'user', parts: [{type: 'tool_result', callId: 'c1', content: [{type: 'text', text: 'out'}]}]},
        {role: 'assistant', parts: [{type: 'text', text: 'done'}]},
        {role: 'user', parts: [{type: 'text', text: 'two'}]},
      ],
    }
    const body = chatCodec.encodeRequest(ir, 'claude-opus-4-8') as {messages: any[]}
    expect(
      body.messages.map((m) => [m.role, Array.isArray(m.content) ? m.content.at(-1).cache_control : 'plain']),
    ).toEqual([
      ['system', {type: 'ephemeral'}],
      ['user', 'plain'],
      ['assistant', 'plain'],
      ['tool', {type: 'ephemeral'}],
      ['assistant', 'plain'],
      ['user', {type: 'ephemeral'}],
    ])
  })
})
