/**
 * Ollama's silent cut of a prompt longer than its context: the answer is a 200 that reports only
 * what it kept (`num_ctx / 2 + 2` since 0.30.11). The cut's shapes and the size test, which
 * upstreams are read, and through the proxy (a scripted Ollama on 127.0.0.1): the row says what
 * happened and what to do, the status stays 200, the window is kept for doctor; passed through
 * (Claude Code to Ollama's Anthropic endpoint) and translated (to its chat API), streamed or not.
 */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {ProviderConfig} from '../../store/schema.js'
import {cutWindow, holdsMedia, mayBeOllama} from './ollama-cut.js'
import type {ProxyTarget} from './proxy.js'
import {learnedAdaptations} from './proxy.js'
import type {Upstream} from './proxy-fixture.js'
import {chatTarget, messagesTarget, ProxyGateway, startUpstream} from './proxy-fixture.js'

describe('the cut, from an answer’s count and the request’s size', () => {
  // a request of 1 000 000 bytes: about 250 000 tokens, far past any of these counts
  const big = 1_000_000
  it.each([
    [2050, 4096, 'since 0.30.11: num_ctx / 2 + 2 (num_keep 4)'],
    [2051, 4096, 'the same and the BOS: + 3'],
    [16386, 32768, 'the 32 768 default (little-coder #128)'],
    [16387, 32768, '(ollama #3839)'],
    [32002, 64000, 'the window Ollama’s Claude Code guide asks for'],
    [4095, 4096, '0.30.0 to 0.30.10: num_ctx - 1'],
    [8192, 8192, 'the CGO runners before: num_ctx'],
    [1026, 2048, 'the old 2 048 default'],
  ])('%i reported: a window of %i (%s)', (kept, window) => {
    expect(cutWindow(kept, big)).toBe(window)
  })

  it('a count of no such shape, or a request not clearly larger, is no cut', () => {
    expect(cutWindow(2100, big)).toBeUndefined()
    expect(cutWindow(12_345, big)).toBeUndefined()
    // 6 bytes a token or less: a prompt of that count may well be whole
    expect(cutWindow(2050, 2050 * 6)).toBeUndefined()
    expect(cutWindow(2050, 2050 * 6 + 1)).toBe(4096)
    // (too small to be half of any window Ollama runs)
    expect(cutWindow(1000, big)).toBeUndefined()
    expect(cutWindow(0, big)).toBeUndefined()
  })

  const provider = (name: string, baseUrl: string): ProviderConfig => ({name, family: 'chat', baseUrl})
  it('read only from an Ollama: by its name, its host or its port; not its cloud', () => {
    expect(mayBeOllama(provider('ollama', 'http://127.0.0.1:8080'), 'qwen3:8b')).toBe(true)
    expect(mayBeOllama(provider('local', 'http://127.0.0.1:11434'), 'qwen3:8b')).toBe(true)
    expect(mayBeOllama(provider('local', 'http://ollama:11434/v1'), 'qwen3:8b')).toBe(true)
    expect(mayBeOllama(provider('gpu', 'http://ollama.lan'), 'qwen3:8b')).toBe(true)
    // vLLM, llama.cpp, LM Studio, a vendor
    expect(mayBeOllama(provider('local', 'http://127.0.0.1:8000'), 'qwen3:8b')).toBe(false)
    expect(mayBeOllama(provider('lmstudio', 'http://127.0.0.1:1234'), 'qwen3:8b')).toBe(false)
    expect(mayBeOllama(provider('deepseek', 'https://api.deepseek.com'), 'deepseek-chat')).toBe(false)
    // Ollama's cloud runs its models at their full length
    expect(mayBeOllama(provider('ollama-cloud', 'https://ollama.com'), 'gpt-oss:120b')).toBe(false)
    expect(mayBeOllama(provider('ollama', 'http://127.0.0.1:11434'), 'gpt-oss:120b-cloud')).toBe(false)
    expect(mayBeOllama(provider('ollama', 'http://127.0.0.1:11434'), 'qwen3-coder:480b-cloud')).toBe(false)
  })

  it('a request with media is not cut by Ollama (and its bytes are not its prompt)', () => {
    expect(
      holdsMedia(Buffer.from('{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}}')),
    ).toBe(true)
    expect(holdsMedia(Buffer.from('{"type":"image","source":{"type":"base64","data":"AAAA"}}'))).toBe(true)
    expect(holdsMedia(Buffer.from('{"text":"decode the \\"base64\\" string"}'))).toBe(false)
  })
})

// ---- through the proxy ----

/** Claude Code's long turn: about 60 000 bytes, its system prompt and a tool in front. */
const LONG = Array.from({length: 2000}, (_, i) => `line ${i} of a long tool output`).join('\n')
const claudeCode = (stream = false) => ({
  model: 'qwen3:8b',
  max_tokens: 1024,
  stream,
  system: 'You are Claude Code. Use the tools.',
  tools: [{name: 'Read', description: 'Read a file', input_schema: {type: 'object', properties: {}}}],
  messages: [{role: 'user', content: LONG}],
})

/** What Ollama kept of it: half its 4 096 and two. */
const KEPT = 2050

const messagesAnswer = (input: number) =>
  JSON.stringify({
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'qwen3:8b',
    content: [{type: 'text', text: 'I am not sure what you want me to do with these lines.'}],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: {input_tokens: input, output_tokens: 12},
  })

/** Ollama's Anthropic stream: the input in message_start and again in message_delta. */
const messagesStream = (input: number) =>
  [
    [
      'message_start',
      {
        type: 'message_start',
        message: {...JSON.parse(messagesAnswer(input)), content: [], stop_reason: null},
      },
    ],
    ['content_block_start', {type: 'content_block_start', index: 0, content_block: {type: 'text', text: ''}}],
    [
      'content_block_delta',
      {type: 'content_block_delta', index: 0, delta: {type: 'text_delta', text: 'Hm.'}},
    ],
    ['content_block_stop', {type: 'content_block_stop', index: 0}],
    [
      'message_delta',
      {
        type: 'message_delta',
        delta: {stop_reason: 'end_turn'},
        usage: {input_tokens: input, output_tokens: 12},
      },
    ],
    ['message_stop', {type: 'message_stop'}],
  ]
    .map(([event, data]) => `event: ${event as string}\ndata: ${JSON.stringify(data)}\n\n`)
    .join('')

const chatAnswer = (input: number) =>
  JSON.stringify({
    id: 'chatcmpl-447',
    object: 'chat.completion',
    created: 1,
    model: 'qwen3:8b',
    system_fingerprint: 'fp_ollama',
    choices: [{index: 0, message: {role: 'assistant', content: 'Hm.'}, finish_reason: 'stop'}],
    usage: {prompt_tokens: input, completion_tokens: 2, total_tokens: input + 2},
  })

let input = KEPT
let ollama: Upstream
let gateway: ProxyGateway
let targets: ProxyTarget[] = []

beforeAll(async () => {
  ollama = await startUpstream((req, res, body) => {
    const json = JSON.parse(String(body)) as {stream?: boolean}
    const chat = req.url?.includes('/chat/completions')
    res.writeHead(200, {'content-type': json.stream ? 'text/event-stream' : 'application/json'})
    if (chat) res.end(chatAnswer(input))
    else res.end(json.stream ? messagesStream(input) : messagesAnswer(input))
  })
  gateway = new ProxyGateway({route: () => ({targets})})
  await gateway.listen()
})

afterAll(() => {
  ollama.close()
  return gateway.close()
})

const post = (body: unknown) =>
  fetch(`${gateway.url}/v1/messages`, {
    method: 'POST',
    headers: {'content-type': 'application/json', 'x-api-key': 'k', 'anthropic-version': '2023-06-01'},
    body: JSON.stringify(body),
  })

const windowOf = (provider: string) => learnedAdaptations().find((a) => a.provider === provider)

describe('an answer Ollama cut, through the proxy', () => {
  it('passed through (Claude Code to its Anthropic endpoint): 200, the row says it, the window is kept', async () => {
    targets = [messagesTarget('ollama-pass', 'qwen3:8b', ollama.origin)]
    input = KEPT
    // the first answer of the cut's shape is not said yet: the next one with the same count is
    await (await post(claudeCode())).text()
    expect(gateway.results.at(-1)!.error).toBeNull()
    const res = await post(claudeCode())
    expect(res.status).toBe(200)
    expect(((await res.json()) as any).usage.input_tokens).toBe(KEPT)
    const row = gateway.results.at(-1)!
    expect(row.status).toBe(200)
    expect(row.error).toMatch(
      /^ollama-pass cut the prompt to its context \(num_ctx ≈ 4096\) and dropped its start: it read 2050 tokens of a request of [\d,]+ bytes \(the model lost its system prompt and tools\); raise OLLAMA_CONTEXT_LENGTH \(64000 or more for an agent\)$/,
    )
    expect(windowOf('ollama-pass')).toMatchObject({
      model: 'qwen3:8b',
      window: {tokens: 4096, entrance: 'messages', cut: true},
      rules: [
        'a context window of 4,096 tokens (its num_ctx, read from a longer prompt it cut without a word, its start dropped)',
      ],
    })
  })

  it('streamed: the same', async () => {
    targets = [messagesTarget('ollama-stream', 'qwen3:8b', ollama.origin)]
    await (await post(claudeCode(true))).text()
    const res = await post(claudeCode(true))
    expect(res.status).toBe(200)
    expect(await res.text()).toContain('message_stop')
    expect(gateway.results.at(-1)!.error).toMatch(
      /^ollama-stream cut the prompt to its context \(num_ctx ≈ 4096\)/,
    )
    expect(windowOf('ollama-stream')?.window).toEqual({tokens: 4096, entrance: 'messages', cut: true})
  })

  it('translated to its chat API (port 11434 not needed: the name says Ollama)', async () => {
    targets = [{...chatTarget('ollama-chat', 'qwen3:8b', ollama.origin), translate: true}]
    await (await post(claudeCode())).text()
    const res = await post(claudeCode())
    expect(res.status).toBe(200)
    expect(((await res.json()) as any).usage.input_tokens).toBe(KEPT)
    expect(gateway.results.at(-1)!.error).toMatch(
      /^ollama-chat cut the prompt to its context \(num_ctx ≈ 4096\)/,
    )
    expect(windowOf('ollama-chat')?.window).toEqual({tokens: 4096, entrance: 'messages', cut: true})
  })

  it('not from another server, nor for a count of the whole prompt, nor for a short request', async () => {
    targets = [messagesTarget('vllm-local', 'qwen3:8b', ollama.origin)]
    await (await post(claudeCode())).text()
    expect(gateway.results.at(-1)!.error).toBeNull()
    expect(windowOf('vllm-local')).toBeUndefined()

    targets = [messagesTarget('ollama-whole', 'qwen3:8b', ollama.origin)]
    input = 17_231
    await (await post(claudeCode())).text()
    expect(gateway.results.at(-1)!.error).toBeNull()
    // a short request whose count happens to have the shape
    input = KEPT
    await (await post({...claudeCode(), messages: [{role: 'user', content: LONG.slice(0, 9000)}]})).text()
    expect(gateway.results.at(-1)!.error).toBeNull()
    expect(windowOf('ollama-whole')).toBeUndefined()
  })

  it("counts of the cut's shape that differ from turn to turn (an Ollama that reported a turn's new tokens only) are no cut", async () => {
    targets = [messagesTarget('ollama-new-only', 'qwen3:8b', ollama.origin)]
    for (const count of [KEPT, 4095, KEPT, 8192]) {
      input = count
      await (await post(claudeCode())).text()
      expect(gateway.results.at(-1)!.error).toBeNull()
    }
    expect(windowOf('ollama-new-only')).toBeUndefined()
  })
})
