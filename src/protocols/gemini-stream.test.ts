import {createServer, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'

import {GoogleGenAI} from '@google/genai'
import {afterEach, describe, expect, it} from 'vitest'

import {BoundedCarry} from './carry.js'
import {geminiCodec} from './gemini.js'
import type {CodecContext, StreamEvent} from './ir.js'

let server: Server | undefined
afterEach(() => server?.close())

/**
 * Serves `body`, or each of `body`'s strings as its own write a few ms apart (as the gateway does).
 * `gate`: awaited before each write after the first, so that a piece reaches the client in a read
 * of its own however loaded the machine is (a fixed pause alone let two pieces meet in one read).
 */
async function serve(
  body: string | string[],
  sse: boolean,
  gate?: () => Promise<void>,
): Promise<GoogleGenAI> {
  server = createServer((_req, res) => {
    res.writeHead(200, {'content-type': sse ? 'text/event-stream' : 'application/json'})
    if (typeof body === 'string') return res.end(body)
    void (async () => {
      for (const [i, piece] of body.entries()) {
        if (i > 0 && gate) await gate()
        res.write(piece)
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      res.end()
    })()
  })
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve))
  const {port} = server.address() as AddressInfo
  return new GoogleGenAI({apiKey: 'k', httpOptions: {baseUrl: `http://127.0.0.1:${port}`}})
}

function encode(events: StreamEvent[], ctx: CodecContext = {}): string {
  const enc = geminiCodec.streamEncoder({...ctx, model: 'gemini-x'})
  return events.map((e) => enc.event(e)).join('')
}

const answer: StreamEvent[] = [
  {type: 'start', id: 'r1', model: 'up'},
  {type: 'block_start', index: 0, block: {type: 'reasoning'}},
  {type: 'reasoning_delta', index: 0, text: 'hmm'},
  {type: 'reasoning_opaque', index: 0, signature: {family: 'messages', value: 'SIG'}},
  {type: 'block_stop', index: 0},
  {type: 'block_start', index: 1, block: {type: 'text'}},
  {type: 'text_delta', index: 1, text: 'Hel'},
  {type: 'text_delta', index: 1, text: 'lo'},
  {type: 'block_stop', index: 1},
  {type: 'block_start', index: 2, block: {type: 'tool_call', id: 'call_1', name: 'read_file'}},
  {type: 'tool_args_delta', index: 2, json: '{"path":"a'},
  {type: 'tool_args_delta', index: 2, json: '.ts"}'},
  {type: 'block_stop', index: 2},
  {type: 'stop', reason: 'tool_use'},
  {type: 'usage', usage: {inputTokens: 50, outputTokens: 12, cacheReadTokens: 10, reasoningTokens: 4}},
  {type: 'end'},
]

describe('gemini stream encoder, read by @google/genai', () => {
  it('gives generateContentStream text, one whole function call and usage', async () => {
    const carry = new BoundedCarry()
    const ai = await serve(encode(answer, {carry}), true)
    const stream = await ai.models.generateContentStream({model: 'gemini-x', contents: 'hi'})
    let text = ''
    const calls: unknown[] = []
    let last: Awaited<ReturnType<typeof stream.next>>['value']
    for await (const chunk of stream) {
      const parts = chunk.candidates?.[0]?.content?.parts ?? []
      text += parts
        .filter((p) => !p.thought && p.text)
        .map((p) => p.text)
        .join('')
      calls.push(...(chunk.functionCalls ?? []))
      last = chunk
    }
    expect(text).toBe('Hello')
    expect(calls).toEqual([{name: 'read_file', args: {path: 'a.ts'}, id: 'call_1'}])
    expect(last?.candidates?.[0]?.finishReason).toBe('STOP')
    expect(last?.usageMetadata).toMatchObject({
      promptTokenCount: 50,
      candidatesTokenCount: 8,
      thoughtsTokenCount: 4,
      cachedContentTokenCount: 10,
    })
    expect(last?.responseId).toBe('r1')
    // the CLI drops thought parts: the Anthropic signature is kept by the call's id
    expect(carry.get('call_1')).toEqual([
      {type: 'reasoning', text: 'hmm', signature: {family: 'messages', value: 'SIG'}},
    ])
  })

  it('writes data-only events, each one JSON object', () => {
    const text = encode(answer)
    expect(text.endsWith('\n\n')).toBe(true)
    for (const event of text.trim().split('\n\n')) {
      expect(event.startsWith('data: ')).toBe(true)
      expect(JSON.parse(event.slice(6))).toMatchObject({modelVersion: 'gemini-x', responseId: 'r1'})
    }
    expect(text).not.toContain('[DONE]')
  })

  const broken: StreamEvent[] = [
    {type: 'start', id: 'r', model: 'm'},
    {type: 'block_start', index: 0, block: {type: 'text'}},
    {type: 'text_delta', index: 0, text: 'Hi'},
    {type: 'error', status: 503, message: 'upstream overloaded'},
  ]
  const read = async (ai: GoogleGenAI, onChunk?: () => void) => {
    let text = ''
    for await (const chunk of await ai.models.generateContentStream({model: 'm', contents: 'hi'})) {
      text += chunk.text
      onChunk?.()
    }
    return text
  }

  it('makes the SDK throw ApiError with the message on an error chunk', async () => {
    const enc = geminiCodec.streamEncoder({model: 'm'})
    // the error chunk is written only once the client has read the text before it
    let read1!: () => void
    const textRead = new Promise<void>((resolve) => (read1 = resolve))
    const ai = await serve(broken.map((e) => enc.event(e)).filter(Boolean), true, () => textRead)
    await expect(read(ai, () => read1())).rejects.toThrow(/upstream overloaded/)
  })

  it('makes the SDK throw when the error chunk arrives in one read with the text before it', async () => {
    const ai = await serve(encode(broken), true)
    await expect(read(ai)).rejects.toThrow()
  })

  it('gives generateContent the non-stream answer', async () => {
    const body = geminiCodec.encodeResponse(
      {
        id: 'r2',
        model: 'up',
        parts: [
          {type: 'text', text: 'Sure.'},
          {type: 'tool_call', id: 'call_9', name: 'ls', arguments: ''},
        ],
        stop: 'tool_use',
        usage: {
          inputTokens: 7,
          outputTokens: 2,
          cacheReadTokens: 0,
          cacheCreationTokens: 0,
          reasoningTokens: 0,
        },
      },
      {},
    )
    const ai = await serve(JSON.stringify(body), false)
    const res = await ai.models.generateContent({model: 'm', contents: 'hi'})
    expect(res.text).toBe('Sure.')
    expect(res.functionCalls).toEqual([{name: 'ls', args: {}, id: 'call_9'}])
    expect(res.usageMetadata?.totalTokenCount).toBe(9)
  })
})

describe('gemini stream encoder: text chunks written as text', () => {
  it('writes text and thought chunks as JSON.stringify writes their objects, escapes included', () => {
    const texts = ['say "hi"\n', 'é \u2028 😀', '</script>']
    const out = encode([
      {type: 'start', id: 'r"1', model: 'gemini-x'},
      {type: 'block_start', index: 0, block: {type: 'reasoning'}},
      {type: 'reasoning_delta', index: 0, text: texts[0]},
      {type: 'block_stop', index: 0},
      {type: 'block_start', index: 1, block: {type: 'text'}},
      {type: 'text_delta', index: 1, text: texts[1]},
      {type: 'text_delta', index: 1, text: texts[2]},
    ])
    const chunk = (part: Record<string, unknown>): string =>
      `data: ${JSON.stringify({
        candidates: [{content: {role: 'model', parts: [part]}, index: 0}],
        modelVersion: 'gemini-x',
        responseId: 'r"1',
      })}\n\n`
    expect(out).toBe(
      chunk({text: texts[0], thought: true}) + chunk({text: texts[1]}) + chunk({text: texts[2]}),
    )
  })
})

describe("a call another vendor made, in a Gemini client's answer", () => {
  const SKIP = 'skip_thought_signature_validator'
  const calls = (signed?: boolean): StreamEvent[] => [
    {type: 'start', id: 'r1', model: 'gpt-x'},
    {
      type: 'block_start',
      index: 0,
      block: {
        type: 'tool_call',
        id: 'call_1',
        name: 'list_directory',
        ...(signed && {signature: {family: 'chat', value: 'OWN'}}),
      },
    },
    {type: 'tool_args_delta', index: 0, json: '{"dir_path":"."}'},
    {type: 'block_stop', index: 0},
    {type: 'block_start', index: 1, block: {type: 'tool_call', id: 'call_2', name: 'read_file'}},
    {type: 'tool_args_delta', index: 1, json: '{"path":"a"}'},
    {type: 'block_stop', index: 1},
    {type: 'stop', reason: 'tool_use'},
    {type: 'end'},
  ]
  const partsOf = (sse: string): unknown[] =>
    sse
      .split('\n\n')
      .filter((e) => e.startsWith('data: '))
      .flatMap((e) => JSON.parse(e.slice(6)).candidates[0].content?.parts ?? [])
  const signatures = (parts: unknown[]): unknown[] =>
    (parts as Array<{functionCall?: unknown; thoughtSignature?: unknown}>)
      .filter((p) => p.functionCall)
      .map((p) => p.thoughtSignature)

  it("streamed: the answer's first call gets Google's skip value (Gemini 3 takes the turn), the next none", () => {
    const parts = partsOf(encode(calls()))
    expect(signatures(parts)).toEqual([SKIP, undefined])
    // the same bytes for the same answer (the history Gemini CLI sends back does not change)
    expect(encode(calls())).toBe(encode(calls()))
    // a call with a signature of its own keeps it
    expect(signatures(partsOf(encode(calls(true))))).toEqual(['gwx1.chat.OWN', undefined])
  })

  it('whole: the same, and the skip value read back is no signature for another vendor', () => {
    const answer = geminiCodec.encodeResponse({
      id: 'r',
      model: 'gpt-x',
      parts: [
        {type: 'text', text: 'Looking.'},
        {type: 'tool_call', id: 'call_1', name: 'list_directory', arguments: '{}'},
        {type: 'tool_call', id: 'call_2', name: 'read_file', arguments: '{}'},
      ],
      stop: 'tool_use',
      usage: {
        inputTokens: 1,
        outputTokens: 1,
        cacheReadTokens: 0,
        cacheCreationTokens: 0,
        reasoningTokens: 0,
      },
    }) as {candidates: Array<{content: {parts: unknown[]}}>}
    const parts = answer.candidates[0].content.parts
    expect(signatures(parts)).toEqual([SKIP, undefined])
    const request = geminiCodec.decodeRequest(
      {
        contents: [
          {role: 'user', parts: [{text: 'look'}]},
          {role: 'model', parts},
        ],
      },
      {model: 'g'},
    )
    const [call] = request.messages.flatMap((m) => m.parts).filter((p) => p.type === 'tool_call')
    expect(call).toEqual({type: 'tool_call', id: 'call_1', name: 'list_directory', arguments: '{}'})
  })
})
