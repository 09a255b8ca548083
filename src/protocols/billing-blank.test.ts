/**
 * Two rules of what a translated request carries, asserted on the bytes sent upstream: Claude
 * Code's attribution line (`x-anthropic-billing-header: ...`, changing every request) leaves the
 * system prompt of a translated route, and a text block of whitespace alone goes like an empty
 * one to Anthropic (which refuses it), in a tool's result too.
 */
import {describe, expect, it} from 'vitest'

import type {Family} from './ir.js'
import {messagesCodec} from './messages.js'
import {decodeClientRequest, encodeUpstreamRequest} from './translate.js'

/** The body sent to an upstream of `upstream` for a client body of `family`. */
const sent = (family: Family, body: Record<string, unknown>, upstream: Family): any =>
  JSON.parse(encodeUpstreamRequest(decodeClientRequest(family, body, {}), upstream, 'up').body.toString())

const billing = (cch: string) =>
  `x-anthropic-billing-header: cc_version=2.1.332.${cch.slice(0, 3)}; cc_entrypoint=cli; cch=${cch};`

/** A Claude Code request: the attribution line as its own first system block. */
const claudeCode = (cch: string) => ({
  model: 'claude-sonnet-4-5',
  max_tokens: 1000,
  system: [
    {type: 'text', text: billing(cch)},
    {type: 'text', text: 'You are Claude Code.', cache_control: {type: 'ephemeral'}},
  ],
  messages: [{role: 'user', content: 'hi'}],
})

describe("Claude Code's attribution line on a translated route", () => {
  it.each([
    ['chat', (b: any) => b.messages[0]],
    ['responses', (b: any) => b.instructions],
    ['gemini', (b: any) => b.systemInstruction],
  ] as const)(
    'is not in the system prompt sent to %s, the same bytes whatever its value',
    (upstream, system) => {
      const one = sent('messages', claudeCode('71fea'), upstream)
      const two = sent('messages', claudeCode('0c3d9'), upstream)
      expect(JSON.stringify(one)).not.toContain('x-anthropic-billing-header')
      expect(JSON.stringify(system(one))).toContain('You are Claude Code.')
      expect(JSON.stringify(system(two))).toBe(JSON.stringify(system(one)))
    },
  )

  it('goes as a leading line of a longer block (and as a string system prompt), the rest kept', () => {
    const block = {
      ...claudeCode('71fea'),
      system: [{type: 'text', text: `${billing('71fea')}\n\nYou are Claude Code.`}],
    }
    expect(sent('messages', block, 'chat').messages[0]).toEqual({
      role: 'system',
      content: 'You are Claude Code.',
    })
    const string = {...claudeCode('71fea'), system: `${billing('71fea')}\nYou are Claude Code.`}
    expect(sent('messages', string, 'chat').messages[0]).toEqual({
      role: 'system',
      content: 'You are Claude Code.',
    })
    const alone = {...claudeCode('71fea'), system: billing('71fea')}
    expect(sent('messages', alone, 'chat').messages[0].role).toBe('user')
  })

  it('is read only at the start of a block: the same words later in the prompt stay', () => {
    const later = {...claudeCode('x'), system: 'Say x-anthropic-billing-header: if asked.'}
    expect(messagesCodec.decodeRequest(later, {}).system).toEqual([
      {type: 'text', text: 'Say x-anthropic-billing-header: if asked.'},
    ])
    // a system prompt without it is the decoder's own array, untouched
    expect(
      messagesCodec.decodeRequest({...claudeCode('x'), system: [{type: 'text', text: 'S'}]}, {}).system,
    ).toEqual([{type: 'text', text: 'S'}])
  })
})

describe('whitespace-only text to a Messages upstream', () => {
  const chatBody = (messages: unknown[]) => ({model: 'm', messages})
  const call = {id: 'c1', type: 'function', function: {name: 'ls', arguments: '{}'}}

  it.each([
    [
      'an assistant "\\n\\n" beside a tool call: the call alone',
      [
        {role: 'user', content: 'list'},
        {role: 'assistant', content: '\n\n', tool_calls: [call]},
        {role: 'tool', tool_call_id: 'c1', content: 'a.txt'},
      ],
      [
        {role: 'user', content: [{type: 'text', text: 'list'}]},
        {role: 'assistant', content: [{type: 'tool_use', id: 'c1', name: 'ls', input: {}}]},
        {
          role: 'user',
          content: [{type: 'tool_result', tool_use_id: 'c1', content: [{type: 'text', text: 'a.txt'}]}],
        },
      ],
    ],
    [
      'an assistant turn of "\\n\\n" alone: gone, the user turns around it merged',
      [
        {role: 'user', content: 'one'},
        {role: 'assistant', content: '\n\n'},
        {role: 'user', content: 'two'},
      ],
      [
        {
          role: 'user',
          content: [
            {type: 'text', text: 'one'},
            {type: 'text', text: 'two'},
          ],
        },
      ],
    ],
    [
      'a user " " between two answers: gone, the answers merged',
      [
        {role: 'user', content: 'one'},
        {role: 'assistant', content: 'A'},
        {
          role: 'user',
          content: [
            {type: 'text', text: ' '},
            {type: 'text', text: '\t'},
          ],
        },
        {role: 'assistant', content: 'B'},
        {role: 'user', content: 'two'},
      ],
      [
        {role: 'user', content: [{type: 'text', text: 'one'}]},
        {
          role: 'assistant',
          content: [
            {type: 'text', text: 'A'},
            {type: 'text', text: 'B'},
          ],
        },
        {role: 'user', content: [{type: 'text', text: 'two'}]},
      ],
    ],
  ])('%s', (_, messages, expected) => {
    const body = sent('chat', chatBody(messages), 'messages')
    // (the last user turn's cache mark is the encoder's, not this rule's)
    const turns = JSON.parse(
      JSON.stringify(body.messages).replaceAll(',"cache_control":{"type":"ephemeral"}', ''),
    )
    expect(turns).toEqual(expected)
  })

  it('drops a blank system prompt, and no cache mark goes on one', () => {
    const body = sent(
      'chat',
      chatBody([
        {role: 'system', content: '  \n'},
        {role: 'user', content: 'hi'},
      ]),
      'messages',
    )
    expect(body.system).toBeUndefined()
    const kept = sent(
      'responses',
      {
        model: 'm',
        instructions: 'Be brief.',
        input: [
          {role: 'developer', content: ' '},
          {role: 'user', content: 'hi'},
        ],
      },
      'messages',
    )
    expect(kept.system).toEqual([{type: 'text', text: 'Be brief.', cache_control: {type: 'ephemeral'}}])
  })

  it("a tool's result of whitespace alone (a command that printed a newline): a result without content", () => {
    for (const output of ['\n', ' \t ', [{type: 'text', text: '\n'}]]) {
      const body = sent(
        'chat',
        chatBody([
          {role: 'user', content: 'run it'},
          {role: 'assistant', content: null, tool_calls: [call]},
          {role: 'tool', tool_call_id: 'c1', content: output},
        ]),
        'messages',
      )
      expect(body.messages.at(-1).content).toEqual([
        {type: 'tool_result', tool_use_id: 'c1', cache_control: {type: 'ephemeral'}},
      ])
    }
    // Codex's output of a blank line, beside an image: the image alone
    const withImage = sent(
      'responses',
      {
        model: 'm',
        input: [
          {role: 'user', content: 'look'},
          {type: 'function_call', call_id: 'c1', name: 'view', arguments: '{}'},
          {
            type: 'function_call_output',
            call_id: 'c1',
            output: [
              {type: 'input_text', text: ' '},
              {type: 'input_image', image_url: 'https://example.test/a.png'},
            ],
          },
        ],
      },
      'messages',
    )
    expect(withImage.messages.at(-1).content[0].content).toEqual([
      {type: 'image', source: {type: 'url', url: 'https://example.test/a.png'}},
    ])
  })

  it('keeps text with any character that is not a space as it came', () => {
    const body = sent('chat', chatBody([{role: 'user', content: '  .\n'}]), 'messages')
    expect(body.messages[0].content[0].text).toBe('  .\n')
  })
})
