/**
 * What a chat upstream refused of a chat request passed through untranslated (a chat client,
 * qwen-code or opencode, on a chat upstream) is learned as a translated request's refusal is, and
 * the request goes again with the rule applied: Ollama's model without thinking, gpt-5.6's effort
 * beside tools, xAI's camelCase `reasoningEffort`, a text-only model's refusal of images,
 * DeepSeek's of a JSON schema and of successive user messages. What the proxy sends upstream,
 * before and after it learned, and what the client gets. Scripted upstreams behind the proxy (the
 * keywords of Gemini's tool schemas, the first such rule, are pass-schema.test.ts's).
 */
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'

import type {ProxyTarget} from './proxy.js'
import {learnedAdaptations} from './proxy.js'
import type {Refusal, Upstream} from './proxy-fixture.js'
import {CHAT_ANSWER, chatTarget, ProxyGateway, startJudgedUpstream} from './proxy-fixture.js'
import {kimiRefusal} from '../../sim/upstream/quirks.js'

/** What the upstream received, raw. */
const received: Buffer[] = []
/** How the upstream judges a request: a refusal (status, body) or nothing (it answers). */
let judge: (body: Record<string, unknown>) => Refusal | undefined = () => undefined
let upstream: Upstream
let targets: ProxyTarget[] = []
const gateway = new ProxyGateway({route: () => ({targets})})

const target = (name: string, model: string): ProxyTarget => chatTarget(name, model, upstream.origin)

const STREAM =
  'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"streamed"},"finish_reason":null}]}\n\n' +
  'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n' +
  'data: [DONE]\n\n'

beforeAll(async () => {
  upstream = await startJudgedUpstream(received, (b) => judge(b), {stream: STREAM, json: CHAT_ANSWER})
  await gateway.listen()
})

afterEach(() => {
  received.length = 0
  judge = () => undefined
  gateway.results.length = 0
})

afterAll(async () => {
  await gateway.close()
  upstream.close()
})

const post = (body: string): Promise<Response> =>
  fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: {'content-type': 'application/json', authorization: 'Bearer gw'},
    body,
  })

const sent = (i: number): Record<string, unknown> =>
  JSON.parse(String(received[i])) as Record<string, unknown>

/** Ollama's refusal of thinking for a model without it (its OpenAI-compatible endpoint). */
const ollamaRefusal = (model: string) => ({
  status: 400,
  body: {
    error: {message: `"${model}" does not support thinking`, type: 'invalid_request_error', param: null},
  },
})

/** DeepSeek's 400, in its error body. */
const deepseekRefusal = (message: string): Refusal => ({
  status: 400,
  body: {error: {message, type: 'invalid_request_error', param: null, code: 'invalid_request_error'}},
})

const TOOLS = [{type: 'function', function: {name: 'read', parameters: {type: 'object', properties: {}}}}]

/**
 * Posts `body` (its bytes): answered 200 after two tries, the second `again` (parsed), the row's
 * note `note`; then posts it again: answered 200 in one try. That try's body, parsed.
 */
async function refusedOnce(body: string, again: unknown, note: string): Promise<Record<string, unknown>> {
  expect((await post(body)).status).toBe(200)
  expect(received).toHaveLength(2)
  expect(sent(1)).toEqual(again)
  expect((await gateway.settled(1))[0].error).toBe(note)
  received.length = 0
  expect((await post(body)).status).toBe(200)
  expect(received).toHaveLength(1)
  return sent(0)
}

describe('a chat request passed through, refused for what a translated one is adapted for', () => {
  it("Ollama's model without thinking: sent again without reasoning_effort, and from then on; a stream too", async () => {
    targets = [target('ollama', 'llama3.1:8b')]
    judge = (b) => (b.reasoning_effort !== undefined ? ollamaRefusal('llama3.1:8b') : undefined)
    // the client's own spacing: the first try goes byte for byte as it came
    const body = `{ "model": "llama3.1:8b", "reasoning_effort": "high",\n  "messages": [{"role": "user", "content": "hi"}] }`
    const first = await post(body)
    expect(first.status).toBe(200)
    expect(await first.json()).toMatchObject({choices: [{message: {content: 'done'}}]})
    expect(received).toHaveLength(2)
    expect(String(received[0])).toBe(body)
    expect(sent(1)).toEqual({model: 'llama3.1:8b', messages: [{role: 'user', content: 'hi'}]})
    expect((await gateway.settled(1))[0].error).toBe(
      'ollama refused thinking (a model without it): sent again without reasoning_effort',
    )
    expect(learnedAdaptations().find((a) => a.provider === 'ollama')?.rules).toEqual([
      'sent without reasoning_effort',
    ])

    // a stream, later: one try, without the field, the answer streamed as it came
    received.length = 0
    const streamed = await post(
      JSON.stringify({model: 'llama3.1:8b', stream: true, reasoning_effort: 'low', messages: []}),
    )
    expect(streamed.status).toBe(200)
    expect(await streamed.text()).toBe(STREAM)
    expect(received).toHaveLength(1)
    // (the usage chunk asked for, as of every chat stream passed through)
    expect(sent(0)).toEqual({
      model: 'llama3.1:8b',
      stream: true,
      messages: [],
      stream_options: {include_usage: true},
    })
    expect((await gateway.settled(2))[1].error).toBeNull()
  })

  it("gpt-5.6's refusal of function tools without reasoning_effort none: with tools sent with none, without tools as asked", async () => {
    targets = [target('openai', 'gpt-5.6-terra')]
    judge = (b) =>
      Array.isArray(b.tools) && b.reasoning_effort !== 'none'
        ? {
            status: 400,
            body: {
              error: {
                message:
                  "Function tools with reasoning_effort are not supported for gpt-5.6-terra in /v1/chat/completions. To use function tools, use /v1/responses or set reasoning_effort to 'none'.",
                type: 'invalid_request_error',
                param: 'reasoning_effort',
                code: null,
              },
            },
          }
        : undefined
    // (no effort sent: gpt-5.6 refuses the tools all the same)
    const withTools = JSON.stringify({model: 'gpt-5.6-terra', messages: [], tools: TOOLS})
    expect((await post(withTools)).status).toBe(200)
    expect(received).toHaveLength(2)
    expect(sent(1)).toEqual({model: 'gpt-5.6-terra', messages: [], tools: TOOLS, reasoning_effort: 'none'})

    received.length = 0
    const without = {model: 'gpt-5.6-terra', messages: [], reasoning_effort: 'high'}
    expect((await post(JSON.stringify(without))).status).toBe(200)
    expect(received).toHaveLength(1)
    expect(sent(0)).toEqual(without)
  })

  it("xAI's refusal of reasoningEffort in its own shape: learned as reasoning_effort", async () => {
    targets = [target('xai', 'grok-code-fast-1')]
    judge = (b) =>
      b.reasoning_effort !== undefined
        ? {
            status: 400,
            body: {
              code: 'Client specified an invalid argument',
              error: 'Model grok-code-fast-1 does not support parameter reasoningEffort.',
            },
          }
        : undefined
    const answer = await post(
      JSON.stringify({model: 'grok-code-fast-1', reasoning_effort: 'medium', messages: [], tools: TOOLS}),
    )
    expect(answer.status).toBe(200)
    expect(received).toHaveLength(2)
    expect(sent(1)).toEqual({model: 'grok-code-fast-1', messages: [], tools: TOOLS})
    expect((await gateway.settled(1))[0].error).toMatch(/^xai refused reasoning_effort/)
  })

  it("OpenAI's refusal of a tool schema whose top level is a union: each such tool sent as one object, from then on", async () => {
    targets = [target('openai', 'gpt-4.1')]
    const union = (tools: unknown): boolean =>
      Array.isArray(tools) &&
      tools.some((t: {function: {parameters: Record<string, unknown>}}) => 'anyOf' in t.function.parameters)
    judge = (b) =>
      union(b.tools)
        ? {
            status: 400,
            body: {
              error: {
                message:
                  "Invalid schema for function 'fetch_issue': schema must have type 'object' and not have 'oneOf'/'anyOf'/'allOf'/'enum'/'not' at the top level.",
                type: 'invalid_request_error',
                param: 'tools[1].function.parameters',
                code: 'invalid_function_parameters',
              },
            },
          }
        : undefined
    const fetchIssue = {
      type: 'function',
      function: {
        name: 'fetch_issue',
        description: 'Fetches an issue.',
        parameters: {
          anyOf: [
            {
              type: 'object',
              properties: {project: {type: 'string'}, iid: {type: 'integer'}},
              required: ['project', 'iid'],
            },
            {
              type: 'object',
              properties: {project: {type: 'string'}, url: {type: 'string'}},
              required: ['project', 'url'],
            },
          ],
        },
      },
    }
    const body = JSON.stringify({model: 'gpt-4.1', messages: [], tools: [TOOLS[0], fetchIssue]})
    const answer = await post(body)
    expect(answer.status).toBe(200)
    expect(received).toHaveLength(2)
    const tools = sent(1).tools as Array<{function: Record<string, unknown>}>
    // the other tool as it came; the union as one object, its forms said
    expect(tools[0]).toEqual(TOOLS[0])
    expect(tools[1].function).toEqual({
      name: 'fetch_issue',
      description: 'Fetches an issue.\n\nArguments take one of these forms: {project, iid} | {project, url}',
      parameters: {
        type: 'object',
        properties: {project: {type: 'string'}, iid: {type: 'integer'}, url: {type: 'string'}},
        required: ['project'],
      },
    })
    expect((await gateway.settled(1))[0].error).toBe(
      'openai refused a tool schema whose top level is a union: sent again with each as one object',
    )
    received.length = 0
    expect((await post(body)).status).toBe(200)
    expect(received).toHaveLength(1)
    expect(sent(0).tools).toEqual(tools)
  })

  it("a text-only model's refusal of images (DeepSeek's 400, llama.cpp's 500): each image as a line, from then on", async () => {
    targets = [target('deepseek', 'deepseek-chat')]
    const image = (messages: unknown) =>
      JSON.stringify(messages).includes('"image_url"')
        ? deepseekRefusal(
            'Failed to deserialize the JSON body into the target type: messages[1]: unknown variant `image_url`, expected `text` at line 1 column 190',
          )
        : undefined
    judge = (b) => image(b.messages)
    const png = 'data:image/png;base64,iVBORw0KGgo='
    const body = {
      model: 'deepseek-chat',
      messages: [
        {role: 'system', content: 'Be brief.'},
        {
          role: 'user',
          content: [
            {type: 'text', text: 'What is in this picture?'},
            {type: 'image_url', image_url: {url: png}},
          ],
        },
      ],
    }
    await refusedOnce(
      JSON.stringify(body),
      {
        model: 'deepseek-chat',
        messages: [
          {role: 'system', content: 'Be brief.'},
          {
            role: 'user',
            content: [
              {type: 'text', text: 'What is in this picture?'},
              {type: 'text', text: '[image/png image not attached: deepseek-chat takes no images]'},
            ],
          },
        ],
      },
      'deepseek refused images (a text-only model): sent again with a line in place of each',
    )

    // llama.cpp without a vision projector answers 500; read only for a body with media
    targets = [target('llamacpp', 'qwen2.5-coder')]
    received.length = 0
    judge = (b) =>
      JSON.stringify(b.messages).includes('"image_url"')
        ? {
            status: 500,
            body: {
              error: {
                code: 500,
                message:
                  'image input is not supported - hint: if this is unexpected, you may need to provide the mmproj',
                type: 'server_error',
              },
            },
          }
        : undefined
    expect((await post(JSON.stringify({...body, model: 'qwen2.5-coder'}))).status).toBe(200)
    expect(received).toHaveLength(2)
    expect(JSON.stringify(sent(1))).toContain('[image/png image not attached: qwen2.5-coder takes no images]')
  })

  it("a text-only model's refusal of Qwen Code's video and audio parts: both as lines after one refusal, from then on", async () => {
    targets = [target('deepseek-av', 'deepseek-chat')]
    // DeepSeek's deserializer names the first part it does not know, and `text` as all it reads
    judge = (b) => {
      const type = /"type":"(video_url|input_audio)"/.exec(JSON.stringify(b.messages))?.[1]
      return type
        ? deepseekRefusal(
            `Failed to deserialize the JSON body into the target type: messages[0]: unknown variant \`${type}\`, expected \`text\` at line 1 column 90`,
          )
        : undefined
    }
    const body = {
      model: 'deepseek-chat',
      messages: [
        {
          role: 'user',
          content: [
            {type: 'text', text: 'What is in these files?'},
            {type: 'video_url', video_url: {url: 'data:video/mp4;base64,AAAAIGZ0eXA='}},
            {type: 'input_audio', input_audio: {data: 'data:audio/mpeg;base64,SUQzBA==', format: 'mp3'}},
          ],
        },
      ],
    }
    expect((await post(JSON.stringify(body))).status).toBe(200)
    expect(received).toHaveLength(2)
    expect(sent(1).messages).toEqual([
      {
        role: 'user',
        content: [
          {type: 'text', text: 'What is in these files?'},
          {type: 'text', text: '[video/mp4 file not attached: deepseek-chat takes no video]'},
          {type: 'text', text: '[audio/mpeg file not attached: deepseek-chat takes no audio]'},
        ],
      },
    ])
    expect((await gateway.settled(1))[0].error).toBe(
      'deepseek-av refused audio and video (a text-only model): sent again with a line in place of each',
    )
    received.length = 0
    expect((await post(JSON.stringify(body))).status).toBe(200)
    expect(received).toHaveLength(1)
  })

  it("DeepSeek's refusal of a JSON schema: JSON mode with the schema in the system prompt, from then on", async () => {
    targets = [target('deepseek-json', 'deepseek-chat')]
    judge = (b) =>
      (b.response_format as {type?: string} | undefined)?.type === 'json_schema'
        ? deepseekRefusal('This response_format type is unavailable now')
        : undefined
    const schema = {type: 'object', properties: {next: {type: 'string'}}, required: ['next']}
    const body = {
      model: 'deepseek-chat',
      messages: [
        {role: 'system', content: 'Decide who speaks next.'},
        {role: 'user', content: 'Who speaks next?'},
      ],
      response_format: {type: 'json_schema', json_schema: {name: 'next_speaker', schema}},
    }
    expect((await post(JSON.stringify(body))).status).toBe(200)
    expect(received).toHaveLength(2)
    expect(sent(1)).toEqual({
      model: 'deepseek-chat',
      messages: [
        {
          role: 'system',
          content: `Decide who speaks next.\n\nRespond with one JSON object only, with no other text, that matches this JSON schema:\n${JSON.stringify(schema)}`,
        },
        {role: 'user', content: 'Who speaks next?'},
      ],
      response_format: {type: 'json_object'},
    })
    // a request without JSON asked for goes as it came
    received.length = 0
    const plain = JSON.stringify({model: 'deepseek-chat', messages: [{role: 'user', content: 'hi'}]})
    expect((await post(plain)).status).toBe(200)
    expect(String(received[0])).toBe(plain)
  })

  it("DeepSeek's refusal of successive user messages: each run sent as one message, from then on", async () => {
    targets = [target('deepseek-roles', 'deepseek-reasoner')]
    const successive = (messages: Array<{role: string}>) =>
      messages.some((m, i) => i > 0 && m.role !== 'tool' && m.role === messages[i - 1].role)
    judge = (b) =>
      successive(b.messages as Array<{role: string}>)
        ? deepseekRefusal(
            'deepseek-reasoner does not support successive user or assistant messages (messages[1] and messages[2] in your input). You should interleave the user/assistant messages in the message sequence.',
          )
        : undefined
    const body = {
      model: 'deepseek-reasoner',
      messages: [
        {role: 'system', content: 'Be brief.'},
        {role: 'user', content: 'Fix the bug.'},
        {
          role: 'user',
          content: [{type: 'text', text: '<system-reminder>Plan mode is off.</system-reminder>'}],
        },
        {role: 'assistant', content: 'Done.'},
      ],
    }
    expect((await post(JSON.stringify(body))).status).toBe(200)
    expect(received).toHaveLength(2)
    expect(sent(1)).toEqual({
      model: 'deepseek-reasoner',
      messages: [
        {role: 'system', content: 'Be brief.'},
        {
          role: 'user',
          content: [
            {type: 'text', text: 'Fix the bug.'},
            {type: 'text', text: '<system-reminder>Plan mode is off.</system-reminder>'},
          ],
        },
        {role: 'assistant', content: 'Done.'},
      ],
    })
    expect((await gateway.settled(1))[0].error).toBe(
      'deepseek-roles refused successive user or assistant messages: sent again with each run as one message',
    )
    // a conversation that alternates goes as it came
    received.length = 0
    const plain = JSON.stringify({model: 'deepseek-reasoner', messages: [{role: 'user', content: 'hi'}]})
    expect((await post(plain)).status).toBe(200)
    expect(String(received[0])).toBe(plain)
  })

  it("MiniMax's refusal of several system messages: the run sent as one message, from then on", async () => {
    targets = [target('minimax-system', 'MiniMax-M2.7')]
    judge = (b) =>
      (b.messages as Array<{role: string}>).filter((m) => m.role === 'system').length > 1
        ? {
            status: 400,
            body: {
              type: 'error',
              error: {
                type: 'bad_request_error',
                message: 'invalid params, invalid chat setting (2013)',
                http_code: '400',
              },
              request_id: 'r1',
            },
          }
        : undefined
    const body = {
      model: 'MiniMax-M2.7',
      messages: [
        {role: 'system', content: 'You are opencode.'},
        {role: 'system', content: 'You have superpowers.'},
        {role: 'user', content: 'hi'},
      ],
    }
    const next = await refusedOnce(
      JSON.stringify(body),
      {
        model: 'MiniMax-M2.7',
        messages: [
          {role: 'system', content: 'You are opencode.\n\nYou have superpowers.'},
          {role: 'user', content: 'hi'},
        ],
      },
      'minimax-system refused several system messages in a row: sent again with each run of messages of one role as one message',
    )
    // the next request: merged from the start, one try
    expect(next.messages).toEqual([
      {role: 'system', content: 'You are opencode.\n\nYou have superpowers.'},
      {role: 'user', content: 'hi'},
    ])
    // a server that takes them (nothing learned of it) gets them byte for byte
    targets = [target('takes-systems', 'MiniMax-M2.7')]
    judge = () => undefined
    received.length = 0
    expect((await post(JSON.stringify(body))).status).toBe(200)
    expect(String(received[0])).toBe(JSON.stringify(body))
  })

  it("Kimi K3's refusal of a forced tool_choice (it cannot stop thinking): auto on the first refusal, from then on", async () => {
    // (AI SDK's generateObject in tool mode, OpenCode forcing a named function; the simulator's
    // judge of a Kimi model that always thinks, `kimi-always-thinks`)
    for (const model of ['kimi-k3', 'kimi-for-coding']) {
      targets = [target(`${model}-forced`, model)]
      judge = (b) => {
        const refused = kimiRefusal(b, new Set(['kimi-always-thinks'] as const), model)
        return refused && {status: 400, body: refused.raw}
      }
      received.length = 0
      const body = {
        model,
        messages: [{role: 'user', content: 'Read the file.'}],
        tools: TOOLS,
        tool_choice: {type: 'function', function: {name: 'read'}},
      }
      const auto = {
        ...body,
        messages: [{role: 'user', content: 'Read the file.\n\nIn this answer, call the tool read.'}],
        tool_choice: 'auto',
      }
      // turn 1: 200 after the one refusal; turn 2: one try, auto from the start
      const next = await refusedOnce(
        JSON.stringify(body),
        auto,
        `${model}-forced refused a forced tool_choice: sent again with tool_choice auto, the call asked for at the end of the prompt`,
      )
      expect(next, model).toEqual(auto)
      expect(learnedAdaptations().find((a) => a.provider === `${model}-forced`)?.rules, model).toEqual([
        'a forced tool_choice sent as auto, the call asked for at the end of the prompt',
      ])
      gateway.results.length = 0
    }
  })

  it("leaves a refusal that teaches nothing the client's, as it came, after one try", async () => {
    targets = [target('plain', 'some-model')]
    const refusal = {
      status: 400,
      body: {error: {message: 'messages: at least one message is required', type: 'invalid_request_error'}},
    }
    judge = () => refusal
    const body = JSON.stringify({model: 'some-model', messages: [], reasoning_effort: 'low'})
    const answer = await post(body)
    expect(answer.status).toBe(400)
    expect(await answer.json()).toEqual(refusal.body)
    expect(received).toHaveLength(1)
    expect(learnedAdaptations().some((a) => a.provider === 'plain')).toBe(false)
  })

  it('sends a request to an upstream model nothing was learned of byte for byte as it came', async () => {
    targets = [target('ollama', 'qwen3-coder:30b')]
    const body = `{"model":"qwen3-coder:30b",  "reasoning_effort": "high", "messages": []}`
    expect((await post(body)).status).toBe(200)
    expect(received).toHaveLength(1)
    expect(String(received[0])).toBe(body)
  })
})
