/**
 * Codex's `agent_message` input item (multi-agent v2, the default of gpt-5.6-sol, gpt-5.6-terra and
 * gpt-6*): a parent's task for a sub-agent, or a sub-agent's report to its parent. Decoded as a
 * user turn whose text is `Message from AUTHOR:` and the item's text, so a translated upstream gets
 * the task; OpenAI's ciphertext, which no other vendor reads, and an item without text are refused
 * by name. The item goes to OpenAI itself untouched (not through the codecs).
 */
import {describe, expect, it} from 'vitest'

import {chatCodec} from './chat.js'
import {geminiCodec} from './gemini.js'
import {TranslationError} from './ir.js'
import {messagesCodec} from './messages.js'
import {responsesCodec} from './responses.js'

/** A sub-agent's first request, cut down: its parent was not on OpenAI's API, so the task is plain text. */
const child = (content: unknown[], extra: Record<string, unknown> = {}) => ({
  model: 'gpt-5.6-sol',
  instructions: 'You are Codex.',
  input: [
    {type: 'message', role: 'developer', content: [{type: 'input_text', text: 'You are a sub-agent.'}]},
    {type: 'agent_message', author: '/root', recipient: '/root/worker', content, ...extra},
  ],
  stream: true,
})
const TASK = [
  {type: 'input_text', text: 'Task from /root. Payload:\n'},
  {type: 'encrypted_content', encrypted_content: 'Count the files in src.'},
]
const TEXT = 'Message from /root:\nTask from /root. Payload:\nCount the files in src.'

describe("responses: Codex's agent_message item", () => {
  it('is a user turn: the author, then its input_text and plaintext encrypted_content parts', () => {
    const r = responsesCodec.decodeRequest(child(TASK), {})
    expect(r.system.map((p) => p.text)).toEqual(['You are Codex.', 'You are a sub-agent.'])
    expect(r.messages).toEqual([{role: 'user', parts: [{type: 'text', text: TEXT}]}])
  })

  it('reaches chat, Messages and Gemini upstreams as the user turn', () => {
    const r = responsesCodec.decodeRequest(child(TASK), {})
    expect((chatCodec.encodeRequest(r, 'up', {}) as {messages: unknown[]}).messages).toEqual([
      {role: 'system', content: 'You are Codex.\n\nYou are a sub-agent.'},
      {role: 'user', content: TEXT},
    ])
    // (with the cache breakpoint Messages' last turn gets)
    expect((messagesCodec.encodeRequest(r, 'claude', {}) as {messages: unknown[]}).messages).toMatchObject([
      {role: 'user', content: [{type: 'text', text: TEXT}]},
    ])
    expect((geminiCodec.encodeRequest(r, 'gemini', {}) as {contents: unknown[]}).contents).toEqual([
      {role: 'user', parts: [{text: TEXT}]},
    ])
  })

  it("a sub-agent's report in its parent's history: a user turn after the parent's call, before the next one", () => {
    const r = responsesCodec.decodeRequest(
      {
        input: [
          {type: 'message', role: 'user', content: [{type: 'input_text', text: 'Split the work.'}]},
          {type: 'function_call', call_id: 'c1', name: 'spawn_agent', arguments: '{"message":"count"}'},
          {type: 'function_call_output', call_id: 'c1', output: '{"agent_id":"w1"}'},
          {
            type: 'agent_message',
            author: '/root/worker',
            recipient: '/root',
            content: [{type: 'input_text', text: '42 files.'}],
          },
        ],
      },
      {},
    )
    expect(r.messages.at(-1)).toEqual({
      role: 'user',
      parts: [
        {
          type: 'tool_result',
          callId: 'c1',
          name: 'spawn_agent',
          content: [{type: 'text', text: '{"agent_id":"w1"}'}],
        },
        {type: 'text', text: 'Message from /root/worker:\n42 files.'},
      ],
    })
  })

  it('takes text as a string, and an item without an author as its text alone', () => {
    const r = responsesCodec.decodeRequest({input: [{type: 'agent_message', content: 'Do it.'}]}, {})
    expect(r.messages).toEqual([{role: 'user', parts: [{type: 'text', text: 'Do it.'}]}])
  })

  it("refuses OpenAI's ciphertext by name: another vendor cannot read the task", () => {
    const sealed = child([TASK[0], {type: 'encrypted_content', encrypted_content: 'gAAAAABpZ1x2-opaque=='}])
    expect(() => responsesCodec.decodeRequest(sealed, {})).toThrow(TranslationError)
    expect(() => responsesCodec.decodeRequest(sealed, {})).toThrow(
      /agent_message item .* encrypted by OpenAI, which another vendor cannot read/,
    )
  })

  it('refuses an item with no text rather than send an empty turn', () => {
    for (const content of [[], [{type: 'input_text', text: ''}], [{type: 'encrypted_content'}]])
      expect(() => responsesCodec.decodeRequest(child(content), {})).toThrow(
        /agent_message item .* holds no text/,
      )
  })
})
