/**
 * Documents (PDFs, text files) through translation: Claude Code's Read of a PDF puts a Messages
 * `document` block in the turn after the tool result, and until now every translated request of
 * that conversation was refused. Each family's form: Messages `document`, chat `file`, Responses
 * `input_file`, Gemini `inlineData`.
 */
import {describe, expect, it} from 'vitest'

import type {Family} from './ir.js'
import {TranslationError} from './ir.js'
import {decodeClientRequest, encodeUpstreamRequest, estimateInputTokens} from './translate.js'

/** A few bytes that stand for a PDF (the codecs never read them). */
const PDF = Buffer.from('%PDF-1.7\n1 0 obj <<>> endobj\n%%EOF\n').toString('base64')

const upstreamBody = (family: Family, body: unknown, up: Family): any => {
  const client = decodeClientRequest(family, body, {})
  return JSON.parse(encodeUpstreamRequest(client, up, 'm').body.toString())
}

/** Claude Code after its Read of a PDF: the call, then its result and the document in one user turn. */
const claudeCodeRead = {
  model: 'claude-sonnet-4-5',
  max_tokens: 1024,
  messages: [
    {role: 'user', content: 'Summarise report.pdf'},
    {
      role: 'assistant',
      content: [{type: 'tool_use', id: 'toolu_1', name: 'Read', input: {file_path: '/w/report.pdf'}}],
    },
    {
      role: 'user',
      content: [
        {type: 'tool_result', tool_use_id: 'toolu_1', content: 'PDF file read: /w/report.pdf (1.2KB)'},
        {type: 'document', source: {type: 'base64', media_type: 'application/pdf', data: PDF}},
      ],
    },
  ],
}

describe('a PDF from Claude Code', () => {
  it('goes to a chat upstream as a file part after the tool message, with its bytes', () => {
    const body = upstreamBody('messages', claudeCodeRead, 'chat')
    expect(body.messages.slice(2)).toEqual([
      {role: 'tool', tool_call_id: 'toolu_1', content: 'PDF file read: /w/report.pdf (1.2KB)'},
      {
        role: 'user',
        content: [
          {type: 'file', file: {filename: 'document.pdf', file_data: `data:application/pdf;base64,${PDF}`}},
        ],
      },
    ])
  })

  it('goes to a Responses upstream as input_file, and to Gemini as inlineData', () => {
    const responses = upstreamBody('messages', claudeCodeRead, 'responses')
    expect(responses.input.at(-1)).toEqual({
      type: 'message',
      role: 'user',
      content: [
        {type: 'input_file', filename: 'document.pdf', file_data: `data:application/pdf;base64,${PDF}`},
      ],
    })
    const gemini = upstreamBody('messages', claudeCodeRead, 'gemini')
    expect(gemini.contents.at(-1).parts).toContainEqual({
      inlineData: {mimeType: 'application/pdf', data: PDF},
    })
  })

  it('keeps its title as the file name, and goes inside a tool output where Responses takes one', () => {
    const body = structuredClone(claudeCodeRead) as any
    body.messages[2].content = [
      {
        type: 'tool_result',
        tool_use_id: 'toolu_1',
        content: [
          {type: 'text', text: 'here it is'},
          {
            type: 'document',
            title: 'Q3 report.pdf',
            source: {type: 'base64', media_type: 'application/pdf', data: PDF},
          },
        ],
      },
    ]
    const chat = upstreamBody('messages', body, 'chat')
    expect(chat.messages.at(-1).content[0].file.filename).toBe('Q3 report.pdf')
    const responses = upstreamBody('messages', body, 'responses')
    expect(responses.input.at(-1)).toEqual({
      type: 'function_call_output',
      call_id: 'toolu_1',
      output: [
        {type: 'input_text', text: 'here it is'},
        {type: 'input_file', filename: 'Q3 report.pdf', file_data: `data:application/pdf;base64,${PDF}`},
      ],
    })
  })

  it('a plain-text document goes as its text; a document by URL to chat is named in a line', () => {
    const text = {
      model: 'c',
      max_tokens: 10,
      messages: [
        {
          role: 'user',
          content: [
            {
              type: 'document',
              title: 'notes',
              source: {type: 'text', media_type: 'text/plain', data: 'line one'},
            },
            {type: 'text', text: 'What does it say?'},
          ],
        },
      ],
    }
    expect(upstreamBody('messages', text, 'chat').messages).toEqual([
      {role: 'user', content: 'notes\n\nline one\n\nWhat does it say?'},
    ])
    const byUrl = {
      model: 'c',
      max_tokens: 10,
      messages: [
        {role: 'user', content: [{type: 'document', source: {type: 'url', url: 'https://x.test/a.pdf'}}]},
      ],
    }
    // chat takes a file only as its bytes: the model is told what was there, and the conversation goes on
    expect(upstreamBody('messages', byUrl, 'chat').messages[0].content).toBe(
      '[application/pdf at https://x.test/a.pdf not attached: chat completions take a file only as its bytes]',
    )
    expect(upstreamBody('messages', byUrl, 'responses').input[0].content).toEqual([
      {type: 'input_file', file_url: 'https://x.test/a.pdf'},
    ])
    const fileId = {
      model: 'c',
      max_tokens: 10,
      messages: [{role: 'user', content: [{type: 'document', source: {type: 'file', file_id: 'file_1'}}]}],
    }
    expect(() => upstreamBody('messages', fileId, 'chat')).toThrow(TranslationError)
    const imageId = {
      model: 'c',
      max_tokens: 10,
      messages: [{role: 'user', content: [{type: 'image', source: {type: 'file', file_id: 'file_1'}}]}],
    }
    expect(() => upstreamBody('messages', imageId, 'chat')).toThrow(
      /image source type "file" cannot be translated/,
    )
    expect(() => upstreamBody('messages', fileId, 'chat')).toThrow(
      /document source type "file" cannot be translated: send/,
    )
  })

  it('counts in the estimate by its size, at least as an image', () => {
    const client = decodeClientRequest('messages', claudeCodeRead, {})
    const without = decodeClientRequest(
      'messages',
      {...claudeCodeRead, messages: claudeCodeRead.messages.slice(0, 2)},
      {},
    )
    const tool = estimateInputTokens(client.request) - estimateInputTokens(without.request)
    expect(tool).toBeGreaterThanOrEqual(1600)
    const big = structuredClone(claudeCodeRead) as any
    big.messages[2].content[1].source.data = Buffer.alloc(320_000).toString('base64')
    const bigTokens = estimateInputTokens(decodeClientRequest('messages', big, {}).request)
    expect(bigTokens - estimateInputTokens(without.request)).toBeGreaterThan(10_000)
  })
})

describe('a document from another client', () => {
  it("a chat client's file part goes to Claude as a document block, its filename as the title", () => {
    const body = upstreamBody(
      'chat',
      {
        model: 'x',
        messages: [
          {
            role: 'user',
            content: [
              {type: 'text', text: 'Summarise'},
              {type: 'file', file: {filename: 'a.pdf', file_data: `data:application/pdf;base64,${PDF}`}},
            ],
          },
        ],
      },
      'messages',
    )
    // the last block of the last user turn: Claude Code's cache breakpoint goes on it
    expect(body.messages[0].content).toContainEqual({
      type: 'document',
      source: {type: 'base64', media_type: 'application/pdf', data: PDF},
      title: 'a.pdf',
      cache_control: {type: 'ephemeral'},
    })
    expect(() =>
      upstreamBody(
        'chat',
        {model: 'x', messages: [{role: 'user', content: [{type: 'file', file: {file_id: 'f'}}]}]},
        'messages',
      ),
    ).toThrow(/file part by file_id cannot be translated/)
  })

  it("Codex's input_file and Gemini CLI's inlineData PDF go to Claude as documents", () => {
    const codex = upstreamBody(
      'responses',
      {
        model: 'x',
        input: [
          {
            type: 'message',
            role: 'user',
            content: [
              {type: 'input_file', filename: 'b.pdf', file_data: `data:application/pdf;base64,${PDF}`},
            ],
          },
        ],
      },
      'messages',
    )
    expect(codex.messages[0].content).toContainEqual({
      type: 'document',
      source: {type: 'base64', media_type: 'application/pdf', data: PDF},
      title: 'b.pdf',
      cache_control: {type: 'ephemeral'},
    })
    const gemini = {
      contents: [
        {role: 'user', parts: [{text: 'Read'}, {inlineData: {mimeType: 'application/pdf', data: PDF}}]},
      ],
    }
    expect(upstreamBody('gemini', gemini, 'messages').messages[0].content).toContainEqual({
      type: 'document',
      source: {type: 'base64', media_type: 'application/pdf', data: PDF},
      cache_control: {type: 'ephemeral'},
    })
    // to chat a file part, not an image_url that OpenAI refuses ("Only image types are supported")
    expect(upstreamBody('gemini', gemini, 'chat').messages[0].content).toContainEqual({
      type: 'file',
      file: {filename: 'document.pdf', file_data: `data:application/pdf;base64,${PDF}`},
    })
  })

  it("Gemini CLI's read_file of a PDF, beside the function response or inside it (Gemini 3), goes to chat and Claude", () => {
    const call = {
      role: 'model',
      parts: [{functionCall: {id: 'c1', name: 'read_file', args: {absolute_path: '/w/r.pdf'}}}],
    }
    const output = {output: 'Binary content provided (1 item(s)).'}
    const beside = {
      contents: [
        {role: 'user', parts: [{text: 'Read /w/r.pdf'}]},
        call,
        {
          role: 'user',
          parts: [
            {functionResponse: {id: 'c1', name: 'read_file', response: output}},
            {inlineData: {mimeType: 'application/pdf', data: PDF}},
          ],
        },
      ],
    }
    const inside = structuredClone(beside) as any
    inside.contents[2].parts = [
      {
        functionResponse: {
          id: 'c1',
          name: 'read_file',
          response: output,
          parts: [{inlineData: {mimeType: 'application/pdf', data: PDF}}],
        },
      },
    ]
    const file = {
      type: 'file',
      file: {filename: 'document.pdf', file_data: `data:application/pdf;base64,${PDF}`},
    }
    for (const body of [beside, inside]) {
      const chat = upstreamBody('gemini', body, 'chat').messages
      expect(chat.at(-2)).toEqual({role: 'tool', tool_call_id: 'c1', content: output.output})
      expect(chat.at(-1)).toEqual({role: 'user', content: [file]})
      const claude = upstreamBody('gemini', body, 'messages').messages.at(-1).content
      const documents = JSON.stringify(claude).match(/"type":"document"/g) ?? []
      expect(documents).toHaveLength(1)
    }
  })

  it('a file chat cannot take (audio) is named in a line instead; a text file keeps its name above its text', () => {
    const audio = {contents: [{role: 'user', parts: [{inlineData: {mimeType: 'audio/wav', data: 'AAAA'}}]}]}
    expect(upstreamBody('gemini', audio, 'chat').messages[0].content).toBe(
      '[audio/wav file not attached: chat completions take PDF and text files only]',
    )
    // read by a tool: the line is the tool's, in its message, not a user turn of its own
    const read = {
      contents: [
        {role: 'user', parts: [{text: 'Read /w/a.wav'}]},
        {role: 'model', parts: [{functionCall: {id: 'c1', name: 'read_file', args: {}}}]},
        {
          role: 'user',
          parts: [
            {
              functionResponse: {
                id: 'c1',
                name: 'read_file',
                response: {output: 'Binary content provided (1 item(s)).'},
              },
            },
            {inlineData: {mimeType: 'audio/wav', data: 'AAAA'}},
          ],
        },
      ],
    }
    expect(upstreamBody('gemini', read, 'chat').messages.slice(-1)).toEqual([
      {
        role: 'tool',
        tool_call_id: 'c1',
        content:
          'Binary content provided (1 item(s)).\n[audio/wav file not attached: chat completions take PDF and text files only]',
      },
    ])
    const notes = Buffer.from('line one').toString('base64')
    const chat = {
      model: 'x',
      messages: [
        {
          role: 'user',
          content: [
            {type: 'text', text: 'Compare'},
            {type: 'file', file: {filename: 'a.txt', file_data: `data:text/plain;base64,${notes}`}},
          ],
        },
      ],
    }
    expect(upstreamBody('chat', chat, 'responses').input[0].content).toEqual([
      {type: 'input_text', text: 'Compare'},
      {type: 'input_text', text: 'a.txt\n\nline one'},
    ])
  })

  it('a file Claude cannot read (audio) is named in a line, not sent as an image Anthropic refuses', () => {
    const gemini = {contents: [{role: 'user', parts: [{inlineData: {mimeType: 'audio/mp3', data: 'AAAA'}}]}]}
    const content = upstreamBody('gemini', gemini, 'messages').messages[0].content
    expect(content).toHaveLength(1)
    expect(content[0]).toMatchObject({
      type: 'text',
      text: '[audio/mp3 file not attached: Anthropic takes PDF and text documents only]',
    })
  })
})
