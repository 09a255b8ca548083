/**
 * An upstream's unusual or failing stream, translated to each client family and read by that
 * family's official SDK (openai, @anthropic-ai/sdk, @google/genai): a stream cut short or an error
 * event of the upstream's is an error the SDK throws, never a normal stop; a stop for the token
 * limit or a filter is the client's own stop reason for it.
 */
import type {Server} from 'node:http'
import {createServer} from 'node:http'
import type {AddressInfo} from 'node:net'
import Anthropic from '@anthropic-ai/sdk'
import {GoogleGenAI} from '@google/genai'
import OpenAI from 'openai'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {Family} from './ir.js'
import {decodeClientRequest, StreamTranslator} from './translate.js'

const FAMILIES: Family[] = ['chat', 'responses', 'messages', 'gemini']

/** How a case's stream must end for the client. */
type Outcome = {error: RegExp} | {stop: 'end' | 'tool_use' | 'max_tokens' | 'content_filter'}

interface Case {
  name: string
  upstream: Family
  /** The upstream's bytes, as they came. */
  body: string
  expect: Outcome
  /** Text the client must have been given before the end (a stream cut short keeps what came). */
  text?: string
}

const data = (payload: unknown): string => `data: ${JSON.stringify(payload)}\n\n`
const named = (payload: {type: string}): string => `event: ${payload.type}\n${data(payload)}`

// --- chat upstream -------------------------------------------------------------------------
const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra = {}) =>
  data({
    id: 'chatcmpl-up',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'up-model',
    choices: [{index: 0, delta, finish_reason: finish}],
    ...extra,
  })
const chatText = chunk({role: 'assistant', content: ''}) + chunk({content: 'Hel'}) + chunk({content: 'lo'})
const chatUsage = {prompt_tokens: 7, completion_tokens: 3, total_tokens: 10}
const chatCall =
  chunk({role: 'assistant', content: null}) +
  chunk({tool_calls: [{index: 0, id: 'call_1', type: 'function', function: {name: 'f', arguments: ''}}]}) +
  chunk({tool_calls: [{index: 0, function: {arguments: '{"pa'}}]})

// --- messages upstream ---------------------------------------------------------------------
const messageStart = named({
  type: 'message_start',
  message: {
    id: 'msg_up',
    type: 'message',
    role: 'assistant',
    model: 'claude-up',
    content: [],
    stop_reason: null,
    usage: {input_tokens: 7, output_tokens: 1},
  },
} as {type: string})
const messagesText =
  messageStart +
  named({type: 'content_block_start', index: 0, content_block: {type: 'text', text: ''}} as {type: string}) +
  named({type: 'content_block_delta', index: 0, delta: {type: 'text_delta', text: 'Hello'}} as {type: string})
const messagesStop = (reason: string): string =>
  named({type: 'content_block_stop', index: 0} as {type: string}) +
  named({
    type: 'message_delta',
    delta: {stop_reason: reason, stop_sequence: null},
    usage: {output_tokens: 3},
  } as {type: string})
const messageStop = named({type: 'message_stop'})

// --- responses upstream --------------------------------------------------------------------
const response = (status: string, extra = {}) => ({
  id: 'resp_up',
  object: 'response',
  model: 'up-model',
  status,
  output: [],
  ...extra,
})
const responsesText =
  named({type: 'response.created', response: response('in_progress')} as {type: string}) +
  named({
    type: 'response.output_item.added',
    output_index: 0,
    item: {type: 'message', id: 'msg_1', role: 'assistant', status: 'in_progress', content: []},
  } as {type: string}) +
  named({
    type: 'response.content_part.added',
    output_index: 0,
    content_index: 0,
    part: {type: 'output_text', text: ''},
  } as {type: string}) +
  named({type: 'response.output_text.delta', output_index: 0, content_index: 0, delta: 'Hello'} as {
    type: string
  })
const responsesUsage = {input_tokens: 7, output_tokens: 3, total_tokens: 10}
const responsesEnd = (type: string, status: string, extra = {}): string =>
  named({type, response: response(status, {usage: responsesUsage, ...extra})} as {type: string})

// --- gemini upstream -----------------------------------------------------------------------
const geminiChunk = (candidate: Record<string, unknown> | undefined, extra = {}) =>
  data({
    ...(candidate ? {candidates: [{index: 0, ...candidate}]} : {}),
    modelVersion: 'gemini-up',
    responseId: 'resp-up',
    ...extra,
  })
const geminiText = geminiChunk({content: {role: 'model', parts: [{text: 'Hello'}]}})
const geminiUsage = {usageMetadata: {promptTokenCount: 7, candidatesTokenCount: 3, totalTokenCount: 10}}
const geminiFinish = (reason: string): string =>
  geminiChunk({content: {role: 'model', parts: []}, finishReason: reason}, geminiUsage)

const CASES: Case[] = [
  // chat
  {
    name: 'text, then the connection closes',
    text: 'Hello',
    upstream: 'chat',
    body: chatText,
    expect: {error: /\[DONE\]/},
  },
  {
    name: 'mid tool-call arguments, then the connection closes',
    upstream: 'chat',
    body: chatCall,
    expect: {error: /\[DONE\]/},
  },
  {name: 'nothing at all', upstream: 'chat', body: '', expect: {error: /\[DONE\]/}},
  {
    name: 'a finish_reason, no usage, [DONE]',
    upstream: 'chat',
    body: chatText + chunk({}, 'stop') + 'data: [DONE]\n\n',
    expect: {stop: 'end'},
    text: 'Hello',
  },
  {
    name: 'a finish_reason, then a usage-only chunk with empty choices',
    upstream: 'chat',
    body:
      chatText +
      chunk({}, 'stop') +
      data({id: 'chatcmpl-up', object: 'chat.completion.chunk', choices: [], usage: chatUsage}) +
      'data: [DONE]\n\n',
    expect: {stop: 'end'},
    text: 'Hello',
  },
  {
    // servers that leave [DONE] out (bifrost #6784): the finish says the answer is whole
    name: 'a finish_reason, then the connection closes without [DONE]',
    upstream: 'chat',
    body: chatText + chunk({}, 'stop'),
    expect: {stop: 'end'},
    text: 'Hello',
  },
  {
    name: 'an error chunk after some text (DeepSeek, vLLM)',
    text: 'Hello',
    upstream: 'chat',
    body: chatText + data({error: {message: 'upstream exploded', type: 'server_error', code: 500}}),
    expect: {error: /upstream exploded/},
  },
  {
    name: "OpenRouter's mid-stream error (error beside finish_reason error)",
    text: 'Hello',
    upstream: 'chat',
    body:
      chatText +
      chunk({content: ''}, 'error', {error: {code: 502, message: 'Provider disconnected unexpectedly'}}),
    expect: {error: /Provider disconnected/},
  },
  {
    name: "Azure's first chunk with empty choices, OpenRouter's keep-alive comments",
    upstream: 'chat',
    body:
      data({id: '', object: '', created: 0, model: '', choices: [], prompt_filter_results: []}) +
      ': OPENROUTER PROCESSING\n\n' +
      chatText +
      ': OPENROUTER PROCESSING\n\n' +
      chunk({}, 'stop', {usage: chatUsage}) +
      'data: [DONE]\n\n',
    expect: {stop: 'end'},
    text: 'Hello',
  },
  {
    name: 'a tool call, finish_reason tool_calls',
    upstream: 'chat',
    body:
      chatCall +
      chunk({tool_calls: [{index: 0, function: {arguments: 'th":"x"}'}}]}) +
      chunk({}, 'tool_calls') +
      'data: [DONE]\n\n',
    expect: {stop: 'tool_use'},
  },
  {
    name: 'finish_reason length',
    upstream: 'chat',
    body: chatText + chunk({}, 'length', {usage: chatUsage}) + 'data: [DONE]\n\n',
    expect: {stop: 'max_tokens'},
  },
  {
    name: 'finish_reason content_filter',
    upstream: 'chat',
    body: chatText + chunk({}, 'content_filter', {usage: chatUsage}) + 'data: [DONE]\n\n',
    expect: {stop: 'content_filter'},
  },
  {
    name: "DeepSeek's finish_reason insufficient_system_resource",
    text: 'Hello',
    upstream: 'chat',
    body: chatText + chunk({}, 'insufficient_system_resource', {usage: chatUsage}) + 'data: [DONE]\n\n',
    expect: {error: /insufficient_system_resource/},
  },
  {
    name: "vLLM's finish_reason abort",
    text: 'Hello',
    upstream: 'chat',
    body: chatText + chunk({}, 'abort') + 'data: [DONE]\n\n',
    expect: {error: /abort/},
  },
  {
    name: 'finish_reason error without an error object',
    upstream: 'chat',
    body: chatText + chunk({}, 'error') + 'data: [DONE]\n\n',
    expect: {error: /error/},
  },

  // messages
  {
    name: 'text, then the connection closes',
    text: 'Hello',
    upstream: 'messages',
    body: messagesText,
    expect: {error: /message_stop/},
  },
  {
    name: 'mid tool-call arguments, then the connection closes',
    upstream: 'messages',
    body:
      messageStart +
      named({
        type: 'content_block_start',
        index: 0,
        content_block: {type: 'tool_use', id: 'toolu_1', name: 'f', input: {}},
      } as {type: string}) +
      named({
        type: 'content_block_delta',
        index: 0,
        delta: {type: 'input_json_delta', partial_json: '{"pa'},
      } as {type: string}),
    expect: {error: /message_stop/},
  },
  {name: 'nothing at all', upstream: 'messages', body: '', expect: {error: /message_stop/}},
  {
    name: 'an overloaded_error event after message_start',
    text: 'Hello',
    upstream: 'messages',
    body:
      messagesText +
      named({type: 'error', error: {type: 'overloaded_error', message: 'Overloaded'}} as {
        type: string
      }),
    expect: {error: /Overloaded/},
  },
  {
    name: 'an overloaded_error event before anything',
    upstream: 'messages',
    body: named({type: 'error', error: {type: 'overloaded_error', message: 'Overloaded'}} as {type: string}),
    expect: {error: /Overloaded/},
  },
  {
    // a relay that drops message_stop: message_delta said the stop and the usage
    name: 'a stop_reason, then the connection closes without message_stop',
    upstream: 'messages',
    body: messagesText + messagesStop('end_turn'),
    expect: {stop: 'end'},
    text: 'Hello',
  },
  {
    name: 'text, then the connection closes before its stop_reason',
    upstream: 'messages',
    body: messagesText,
    expect: {error: /message_stop/},
  },
  {
    name: 'stop_reason max_tokens',
    upstream: 'messages',
    body: messagesText + messagesStop('max_tokens') + messageStop,
    expect: {stop: 'max_tokens'},
    text: 'Hello',
  },
  {
    name: 'stop_reason model_context_window_exceeded',
    upstream: 'messages',
    body: messagesText + messagesStop('model_context_window_exceeded') + messageStop,
    expect: {stop: 'max_tokens'},
  },
  {
    name: 'stop_reason refusal (the streaming classifier stopped the answer)',
    upstream: 'messages',
    body: messagesText + messagesStop('refusal') + messageStop,
    expect: {stop: 'content_filter'},
  },

  // responses
  {
    name: 'text, then the connection closes',
    text: 'Hello',
    upstream: 'responses',
    body: responsesText,
    expect: {error: /response\.completed/},
  },
  {
    name: 'mid tool-call arguments, then the connection closes',
    upstream: 'responses',
    body:
      named({type: 'response.created', response: response('in_progress')} as {type: string}) +
      named({
        type: 'response.output_item.added',
        output_index: 0,
        item: {type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'f', arguments: ''},
      } as {type: string}) +
      named({type: 'response.function_call_arguments.delta', output_index: 0, delta: '{"pa'} as {
        type: string
      }),
    expect: {error: /response\.completed/},
  },
  {name: 'nothing at all', upstream: 'responses', body: '', expect: {error: /response\.completed/}},
  {
    name: 'response.failed after some text',
    text: 'Hello',
    upstream: 'responses',
    body:
      responsesText +
      named({
        type: 'response.failed',
        response: response('failed', {error: {code: 'server_error', message: 'The model failed'}}),
      } as {type: string}),
    expect: {error: /The model failed/},
  },
  {
    name: 'an error event after some text',
    text: 'Hello',
    upstream: 'responses',
    body:
      responsesText +
      named({type: 'error', code: 'server_error', message: 'Something broke', param: null} as {
        type: string
      }),
    expect: {error: /Something broke/},
  },
  {
    name: 'response.incomplete for max_output_tokens',
    upstream: 'responses',
    body:
      responsesText +
      responsesEnd('response.incomplete', 'incomplete', {
        incomplete_details: {reason: 'max_output_tokens'},
      }),
    expect: {stop: 'max_tokens'},
    text: 'Hello',
  },
  {
    name: 'response.incomplete for content_filter',
    upstream: 'responses',
    body:
      responsesText +
      responsesEnd('response.incomplete', 'incomplete', {incomplete_details: {reason: 'content_filter'}}),
    expect: {stop: 'content_filter'},
  },
  {
    name: 'response.completed without usage',
    upstream: 'responses',
    body:
      responsesText + named({type: 'response.completed', response: response('completed')} as {type: string}),
    expect: {stop: 'end'},
    text: 'Hello',
  },

  // gemini
  {
    name: 'text, then the connection closes',
    text: 'Hello',
    upstream: 'gemini',
    body: geminiText,
    expect: {error: /finishReason/},
  },
  {name: 'nothing at all', upstream: 'gemini', body: '', expect: {error: /finishReason/}},
  {
    name: 'an error chunk after some text',
    text: 'Hello',
    upstream: 'gemini',
    body: geminiText + data({error: {code: 503, message: 'The model is overloaded.', status: 'UNAVAILABLE'}}),
    expect: {error: /overloaded/},
  },
  ...['SAFETY', 'RECITATION', 'PROHIBITED_CONTENT', 'BLOCKLIST', 'SPII'].map((reason): Case => ({
    name: `finishReason ${reason}`,
    upstream: 'gemini',
    body: geminiText + geminiFinish(reason),
    expect: {stop: 'content_filter'},
  })),
  {
    name: 'finishReason MAX_TOKENS',
    upstream: 'gemini',
    body: geminiText + geminiFinish('MAX_TOKENS'),
    expect: {stop: 'max_tokens'},
    text: 'Hello',
  },
  {
    name: 'finishReason MALFORMED_FUNCTION_CALL',
    upstream: 'gemini',
    body: geminiFinish('MALFORMED_FUNCTION_CALL'),
    expect: {error: /malformed function call/},
  },
  ...['UNEXPECTED_TOOL_CALL', 'LANGUAGE'].map((reason): Case => ({
    name: `finishReason ${reason}`,
    upstream: 'gemini',
    body: geminiText + geminiFinish(reason),
    expect: {error: new RegExp(reason)},
  })),
  {
    name: 'finishReason OTHER',
    text: 'Hello',
    upstream: 'gemini',
    body: geminiText + geminiFinish('OTHER'),
    expect: {error: /OTHER/},
  },
  {
    name: 'promptFeedback.blockReason with no candidates',
    upstream: 'gemini',
    body: geminiChunk(undefined, {promptFeedback: {blockReason: 'PROHIBITED_CONTENT'}, ...geminiUsage}),
    expect: {stop: 'content_filter'},
  },
  {
    name: 'finishReason STOP',
    upstream: 'gemini',
    body: geminiText + geminiFinish('STOP'),
    expect: {stop: 'end'},
    text: 'Hello',
  },
]

/** What the client's SDK read: the text, and the stop it was told or the error it threw. */
interface Read {
  text: string
  stop?: string
  error?: string
}

/** The client's stop for each IR stop a case expects, as its SDK gives it. */
const CLIENT_STOP: Record<Family, Record<'end' | 'tool_use' | 'max_tokens' | 'content_filter', string>> = {
  chat: {end: 'stop', tool_use: 'tool_calls', max_tokens: 'length', content_filter: 'content_filter'},
  messages: {end: 'end_turn', tool_use: 'tool_use', max_tokens: 'max_tokens', content_filter: 'refusal'},
  responses: {
    end: 'completed',
    tool_use: 'completed',
    max_tokens: 'incomplete:max_output_tokens',
    content_filter: 'incomplete:content_filter',
  },
  gemini: {end: 'STOP', tool_use: 'STOP', max_tokens: 'MAX_TOKENS', content_filter: 'SAFETY'},
}

const REQUEST: Record<Family, Record<string, unknown>> = {
  chat: {
    model: 'm',
    stream: true,
    stream_options: {include_usage: true},
    messages: [{role: 'user', content: 'hi'}],
  },
  responses: {model: 'm', stream: true, input: 'hi'},
  messages: {model: 'm', stream: true, max_tokens: 100, messages: [{role: 'user', content: 'hi'}]},
  gemini: {contents: [{role: 'user', parts: [{text: 'hi'}]}]},
}

let server: Server
let base: string
/** What the server answers next: the translated stream. */
let answer = ''

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      res.writeHead(200, {'content-type': 'text/event-stream'})
      res.end(answer)
    })
  })
  server.listen(0, '127.0.0.1')
  await new Promise((resolve) => server.once('listening', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})

afterAll(() => {
  server.close()
})

const message = (error: unknown): string =>
  error instanceof Error ? `${error.constructor.name}: ${error.message}` : String(error)

/** Reads `answer` through the client family's official SDK. */
async function readWithSdk(client: Family): Promise<Read> {
  const read: Read = {text: ''}
  try {
    if (client === 'chat') {
      const openai = new OpenAI({baseURL: `${base}/v1`, apiKey: 'k', maxRetries: 0})
      const stream = await openai.chat.completions.create(REQUEST.chat as any)
      for await (const c of stream as any) {
        const choice = c.choices?.[0]
        if (choice?.delta?.content) read.text += choice.delta.content
        if (choice?.finish_reason) read.stop = choice.finish_reason
      }
    } else if (client === 'responses') {
      const openai = new OpenAI({baseURL: `${base}/v1`, apiKey: 'k', maxRetries: 0})
      const stream = openai.responses.stream(REQUEST.responses as any)
      for await (const e of stream) if (e.type === 'response.output_text.delta') read.text += e.delta
      const final = await stream.finalResponse()
      read.stop =
        final.status === 'incomplete' ? `incomplete:${final.incomplete_details?.reason}` : final.status
    } else if (client === 'messages') {
      const anthropic = new Anthropic({baseURL: base, apiKey: 'k', maxRetries: 0})
      const stream = anthropic.messages.stream(REQUEST.messages as any)
      for await (const e of stream)
        if (e.type === 'content_block_delta' && e.delta.type === 'text_delta') read.text += e.delta.text
      const final = await stream.finalMessage()
      read.stop = final.stop_reason ?? undefined
    } else {
      const ai = new GoogleGenAI({apiKey: 'k', httpOptions: {baseUrl: base}})
      const stream = await ai.models.generateContentStream({model: 'm', contents: 'hi'})
      for await (const c of stream) {
        const candidate = c.candidates?.[0]
        for (const p of candidate?.content?.parts ?? []) if (p.text && !p.thought) read.text += p.text
        if (candidate?.finishReason) read.stop = candidate.finishReason
      }
    }
  } catch (error) {
    read.error = message(error)
  }
  return read
}

/** The client's stream for `c`'s upstream bytes, through the translator, fed in two reads. */
function translate(c: Case, client: Family): {out: string; translator: StreamTranslator} {
  const request = decodeClientRequest(client, REQUEST[client], {model: 'm', stream: true})
  const translator = new StreamTranslator(c.upstream, request, {newId: (p) => `${p}1`})
  const bytes = Buffer.from(c.body)
  const half = Math.floor(bytes.length / 2)
  const out =
    translator.push(bytes.subarray(0, half)) + translator.push(bytes.subarray(half)) + translator.end()
  return {out, translator}
}

describe.each(FAMILIES)('a %s upstream', (upstream) => {
  const clients = FAMILIES.filter((f) => f !== upstream)
  const cases = CASES.filter((c) => c.upstream === upstream)
  describe.each(cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    it.each(clients)('to a %s client', async (client) => {
      const {out, translator} = translate(c, client)
      answer = out
      const read = await readWithSdk(client)
      if ('error' in c.expect) {
        expect(read.error, `the SDK read ${JSON.stringify(read)} from:\n${out}`).toBeDefined()
        expect(translator.error?.message).toMatch(c.expect.error)
        expect(out).toMatch(c.expect.error)
        // the row counts what streamed before the error
        if (c.text) expect(translator.usage.get()?.outputTokens).toBeGreaterThan(0)
      } else {
        expect(read.error, out).toBeUndefined()
        expect(read.stop, out).toBe(CLIENT_STOP[client][c.expect.stop])
        expect(translator.error).toBeUndefined()
        // the row's usage: what the upstream said, or an estimate
        expect(translator.usage.get()?.inputTokens).toBeGreaterThan(0)
      }
      if (c.text !== undefined) expect(read.text).toBe(c.text)
    })
  })
})

describe('a prompt past the window said inside a stream (LM Studio: a 200 and one error event)', () => {
  const lmstudio: Case = {
    name: 'LM Studio 0.4.21',
    upstream: 'chat',
    body: `event: error\n${data({error: 'Input does not fit in context length. The input has 9000 tokens, but the context length only supports 4096 tokens.'})}`,
    expect: {error: /./},
  }
  const WORDS: Record<Exclude<Family, 'chat'>, RegExp> = {
    // what Claude Code's reactive compaction reads, both counts in it
    messages: /prompt is too long: 9000 tokens > 4096 maximum \(Input does not fit/,
    // Codex: `context_length_exceeded` in response.failed
    responses: /exceeds the context window of this model \(4096 tokens; this request has 9000\)/,
    gemini: /The input token count \(9000\) exceeds the maximum number of tokens allowed \(4096\)/,
  }

  it.each(['messages', 'responses', 'gemini'] as const)(
    'to a %s client: in the words the agent compacts on, the window kept',
    async (client) => {
      const {out, translator} = translate(lmstudio, client)
      answer = out
      const read = await readWithSdk(client)
      expect(read.error, out).toMatch(WORDS[client])
      expect(translator.error).toMatchObject({status: 400, truncated: false})
      expect(translator.contextWindow).toBe(4096)
      if (client === 'responses') expect(out).toContain('"code":"context_length_exceeded"')
      if (client === 'messages') expect(out).toContain('"type":"invalid_request_error"')
    },
  )

  it('after some of the answer, or another error, the words stay as they came', () => {
    const late = translate(
      {...lmstudio, body: chatText + lmstudio.body.replace('event: error\n', '')},
      'messages',
    )
    expect(late.out).toContain('"message":"Input does not fit in context length.')
    expect(late.out).not.toContain('prompt is too long')
    expect(late.translator.contextWindow).toBeUndefined()
    const other = translate(
      {...lmstudio, body: `event: error\n${data({error: 'Model failed to load'})}`},
      'messages',
    )
    expect(other.translator.error).toMatchObject({status: 502, message: 'Model failed to load'})
    expect(other.translator.contextWindow).toBeUndefined()
  })
})
