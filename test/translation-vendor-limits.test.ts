/**
 * What one vendor takes and another refuses, through translation, end to end: documents (Claude
 * Code's Read of a PDF, a `document` block in the turn after the tool result, on a chat upstream;
 * a PDF from a Gemini or Responses client on a Messages upstream) and tool names (a Claude Code
 * plugin's MCP tool past OpenAI's 64 characters). The simulator refuses both the way the vendors
 * do (a PDF as an `image_url`, a document that is not a PDF, a name past 64 or with a dot), so a
 * 200 proves the form. The real daemon, the official SDKs.
 */
import Anthropic from '@anthropic-ai/sdk'
import {GoogleGenAI} from '@google/genai'
import OpenAI from 'openai'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {issueKeyOverApi, simPolicy, startSimGatewayWithPolicies, takeSimCalls} from './helpers/gateway.js'

let base = ''
let simOrigin = ''
let stop: () => Promise<void> = async () => {}
const keys = new Map<string, string>()

const PDF = Buffer.from('%PDF-1.7\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n').toString('base64')

beforeAll(async () => {
  const policy = (id: string, provider: string, model: string, families: string[]) =>
    simPolicy(id, Object.fromEntries(families.map((f) => [f, [{provider, model, translate: true}]])))
  ;({base, simOrigin, stop} = await startSimGatewayWithPolicies([
    policy('doc-chat', 'sim-chat', 'sim-mini', ['messages', 'responses', 'gemini']),
    policy('doc-messages', 'sim-messages', 'claude-sonnet-4-5', ['chat', 'responses', 'gemini']),
  ]))
  for (const id of ['doc-chat', 'doc-messages'])
    keys.set(id, await issueKeyOverApi(base, id, 'generic_agent', id))
}, 120_000)

afterAll(() => stop())

/** The bodies the simulator got on `path` since the last call, oldest first. */
const upstreamCalls = (path: RegExp): Promise<Array<Record<string, any>>> => takeSimCalls(simOrigin, path)

describe('documents through translation', {timeout: 60_000}, () => {
  it("Claude Code's Read of a PDF on a chat upstream: a file part after the tool message, answered", async () => {
    await upstreamCalls(/./)
    const client = new Anthropic({baseURL: base, apiKey: keys.get('doc-chat')!, maxRetries: 0})
    const answer = await client.messages
      .stream({
        model: 'claude-sonnet-4-5',
        max_tokens: 512,
        messages: [
          {role: 'user', content: 'Summarise report.pdf'},
          {
            role: 'assistant',
            content: [{type: 'tool_use', id: 'toolu_01', name: 'Read', input: {file_path: '/w/report.pdf'}}],
          },
          {
            role: 'user',
            content: [
              {type: 'tool_result', tool_use_id: 'toolu_01', content: 'PDF file read: /w/report.pdf'},
              {type: 'document', source: {type: 'base64', media_type: 'application/pdf', data: PDF}},
            ],
          },
        ],
      })
      .finalMessage()
    const text = answer.content.map((b) => (b.type === 'text' ? b.text : '')).join('')
    expect(text).toContain('I received 1 document.')
    const [sent] = await upstreamCalls(/\/chat\/completions$/)
    expect(sent.messages.slice(-2)).toEqual([
      {role: 'tool', tool_call_id: 'toolu_01', content: 'PDF file read: /w/report.pdf'},
      {
        role: 'user',
        content: [
          {type: 'file', file: {filename: 'document.pdf', file_data: `data:application/pdf;base64,${PDF}`}},
        ],
      },
    ])
  })

  it("Gemini CLI's PDF (inlineData) on a chat upstream and on Claude: a file part, a document block", async () => {
    const contents = [
      {
        role: 'user',
        parts: [{text: 'Summarise this.'}, {inlineData: {mimeType: 'application/pdf', data: PDF}}],
      },
    ]
    await upstreamCalls(/./)
    const onChat = new GoogleGenAI({apiKey: keys.get('doc-chat')!, httpOptions: {baseUrl: base}})
    const chatAnswer = await onChat.models.generateContent({model: 'gemini-2.5-flash', contents})
    expect(chatAnswer.text).toContain('I received 1 document.')
    const [toChat] = await upstreamCalls(/\/chat\/completions$/)
    expect(toChat.messages.at(-1).content).toContainEqual({
      type: 'file',
      file: {filename: 'document.pdf', file_data: `data:application/pdf;base64,${PDF}`},
    })
    const onClaude = new GoogleGenAI({apiKey: keys.get('doc-messages')!, httpOptions: {baseUrl: base}})
    const claudeAnswer = await onClaude.models.generateContent({model: 'gemini-2.5-flash', contents})
    expect(claudeAnswer.text).toBeTruthy()
    const [toClaude] = await upstreamCalls(/\/v1\/messages$/)
    expect(toClaude.messages.at(-1).content).toContainEqual(
      expect.objectContaining({
        type: 'document',
        source: {type: 'base64', media_type: 'application/pdf', data: PDF},
      }),
    )
  })

  it("a Responses client's input_file and a chat client's file part on Claude: documents with their names", async () => {
    await upstreamCalls(/./)
    const openai = new OpenAI({baseURL: `${base}/v1`, apiKey: keys.get('doc-messages')!, maxRetries: 0})
    const response = await openai.responses.create({
      model: 'gpt-5',
      store: false,
      input: [
        {
          role: 'user',
          content: [
            {type: 'input_text', text: 'Summarise this.'},
            {type: 'input_file', filename: 'q3.pdf', file_data: `data:application/pdf;base64,${PDF}`},
          ],
        },
      ],
    })
    expect(response.output_text).toBeTruthy()
    const chat = await openai.chat.completions.create({
      model: 'gpt-5',
      messages: [
        {
          role: 'user',
          content: [
            {type: 'text', text: 'Summarise this.'},
            {type: 'file', file: {filename: 'q4.pdf', file_data: `data:application/pdf;base64,${PDF}`}},
          ],
        },
      ],
    })
    expect(chat.choices[0].message.content).toBeTruthy()
    const sent = await upstreamCalls(/\/v1\/messages$/)
    expect(sent.map((b) => b.messages.at(-1).content.find((c: any) => c.type === 'document')?.title)).toEqual(
      ['q3.pdf', 'q4.pdf'],
    )
  })

  it('a file by OpenAI file id is refused with a 400 that says why', async () => {
    const openai = new OpenAI({baseURL: `${base}/v1`, apiKey: keys.get('doc-messages')!, maxRetries: 0})
    const refused = await openai.chat.completions
      .create({
        model: 'gpt-5',
        messages: [{role: 'user', content: [{type: 'file', file: {file_id: 'file-abc'}}]}],
      })
      .then(
        () => undefined,
        (error: unknown) => error as {status: number; message: string},
      )
    expect(refused?.status).toBe(400)
    expect(refused?.message).toContain('file part by file_id cannot be translated')
  })
})

describe('tool names through translation', {timeout: 60_000}, () => {
  const LONG = 'mcp__plugin_chrome-devtools-mcp_chrome-devtools__get_console_message'

  it("a Claude Code plugin's 68-character MCP tool on a chat upstream: called and answered under its own name", async () => {
    await upstreamCalls(/./)
    const client = new Anthropic({baseURL: base, apiKey: keys.get('doc-chat')!, maxRetries: 0})
    const tools = [
      {name: LONG, description: 'console messages', input_schema: {type: 'object' as const, properties: {}}},
      {name: 'Read', description: 'read a file', input_schema: {type: 'object' as const, properties: {}}},
    ]
    const first = await client.messages
      .stream({
        model: 'claude-sonnet-4-5',
        max_tokens: 256,
        tools,
        messages: [{role: 'user', content: 'What did the console say?'}],
      })
      .finalMessage()
    const call = first.content.find((b) => b.type === 'tool_use')
    expect(call).toMatchObject({type: 'tool_use', name: LONG})
    const second = await client.messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 256,
      tools,
      messages: [
        {role: 'user', content: 'What did the console say?'},
        {role: 'assistant', content: first.content},
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: call!.type === 'tool_use' ? call!.id : '',
              content: 'no errors',
            },
          ],
        },
      ],
    })
    expect(second.content.map((b) => (b.type === 'text' ? b.text : '')).join('')).toContain(
      'The tool answered: no errors',
    )
    const sent = await upstreamCalls(/\/chat\/completions$/)
    const upstreamName = sent[0].tools[0].function.name
    expect(upstreamName).toHaveLength(64)
    expect(sent[1].tools[0].function.name).toBe(upstreamName)
    expect(sent[1].messages.find((m: any) => m.tool_calls).tool_calls[0].function.name).toBe(upstreamName)
  })
})
