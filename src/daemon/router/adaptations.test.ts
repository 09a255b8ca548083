import {describe, expect, it} from 'vitest'

import {
  adaptPassedChat,
  adaptPassedGemini,
  adaptPassedMessages,
  decodeClientRequest,
  encodeUpstreamRequest,
  geminiThinkingSent,
  sentOfPassedChat,
  sentOfPassedMessages,
  sentOfPassedResponses,
} from '../../protocols/translate.js'
import {reshapeReasoningHistory} from '../../protocols/conversation-rules.js'
import type {UpstreamAdaptation} from '../../protocols/translate.js'
import {
  alwaysThinkingEfforts,
  describeAdaptation,
  extraFields,
  mediaCount,
  mediaRefusal,
  nearestEffort,
  outputFloor,
  outputLimit,
  REASONING_HISTORY,
  refusedField,
  rewritesChatBody,
  rewritesMessagesBody,
  supportedValues,
  toolCapStated,
  unknownResponsesFields,
  UpstreamAdaptations,
} from './adaptations.js'

const openai = (message: string, param: string | null) =>
  JSON.stringify({error: {message, type: 'invalid_request_error', param, code: 'unsupported_parameter'}})

const SENT = ['model', 'messages', 'max_tokens', 'temperature', 'reasoning_effort', 'user', 'stream']

describe('refusedField', () => {
  it("reads the field from OpenAI's param, or from the message when there is none", () => {
    expect(
      refusedField(
        openai(
          "Unsupported parameter: 'reasoning_effort' is not supported with this model.",
          'reasoning_effort',
        ),
        SENT,
      ),
    ).toBe('reasoning_effort')
    // Azure / vLLM style, no param, the name bare
    expect(
      refusedField('{"error":{"message":"Unrecognized request argument supplied: reasoning_effort"}}', SENT),
    ).toBe('reasoning_effort')
    expect(refusedField('Unrecognized request argument supplied: max_tokens', SENT)).toBe('max_tokens')
    expect(
      refusedField(
        openai("Unsupported value: 'temperature' does not support 0.2 with this model.", null),
        SENT,
      ),
    ).toBe('temperature')
  })

  it('names nothing for a 400 about anything else, or a field that was not sent', () => {
    // prose that holds a field's name as a word is no refusal of it
    expect(refusedField(openai('The user message must not be empty.', null), SENT)).toBeUndefined()
    expect(refusedField(openai('Invalid temperature range in the prompt.', null), SENT)).toBeUndefined()
    expect(
      refusedField(openai("Invalid value for 'messages[1].role'.", 'messages[1].role'), SENT),
    ).toBeUndefined()
    // a field the request did not send, or one a request may not go without
    expect(refusedField(openai("Unsupported parameter: 'top_p'.", 'top_p'), SENT)).toBeUndefined()
    expect(refusedField(openai("Unsupported parameter: 'messages'.", 'messages'), SENT)).toBeUndefined()
    expect(refusedField('', SENT)).toBeUndefined()
    // a param naming something else: the field names its message quotes are no refusal of them
    expect(
      refusedField(
        openai(
          "Invalid schema for function 'f': In context=('properties', 'temperature'), 'additionalProperties' is required.",
          'tools[0].function.parameters',
        ),
        SENT,
      ),
    ).toBeUndefined()
    expect(
      refusedField(
        openai(
          "Invalid value: 'tool'. Supported values are: 'system', 'assistant', 'user'.",
          'messages[0].role',
        ),
        SENT,
      ),
    ).toBeUndefined()
    // max_completion_tokens is not max_tokens
    expect(
      refusedField('Unrecognized request argument supplied: max_completion_tokens', SENT),
    ).toBeUndefined()
  })

  it("reads Kimi's fixed temperature or top_p, bare in its own clause, and no prose about a temperature", () => {
    const kimi = (message: string) => JSON.stringify({error: {message, type: 'invalid_request_error'}})
    const sent = [...SENT, 'top_p']
    expect(refusedField(kimi('invalid temperature: only 1 is allowed for this model'), sent)).toBe(
      'temperature',
    )
    // thinking off (kimi-cli #1924, hermes-agent #11764)
    expect(refusedField(kimi('invalid temperature: only 0.6 is allowed for this model'), sent)).toBe(
      'temperature',
    )
    expect(refusedField(kimi('invalid top_p: only 0.95 is allowed for this model'), sent)).toBe('top_p')
    // SiliconFlow's and other relays' unwrapped body, a proxy's prefix, a request id after it
    expect(
      refusedField(
        JSON.stringify({
          code: 20015,
          message: 'invalid temperature: only 1 is allowed for this model',
          data: null,
        }),
        sent,
      ),
    ).toBe('temperature')
    expect(
      refusedField(
        kimi(
          'litellm.BadRequestError: MoonshotException - invalid temperature: only 1 is allowed for this model',
        ),
        sent,
      ),
    ).toBe('temperature')
    expect(
      refusedField(kimi('invalid temperature: only 1 is allowed for this model (request id: 2026x)'), sent),
    ).toBe('temperature')
    expect(refusedField('invalid temperature: only 1 is allowed for this model', sent)).toBe('temperature')
    // not sent: nothing to go without
    expect(
      refusedField(kimi('invalid temperature: only 1 is allowed for this model'), ['model', 'messages']),
    ).toBeUndefined()
    // prose that merely mentions a temperature, or the words in another clause
    for (const message of [
      'The temperature is too high for this model.',
      'temperature must be between 0 and 2',
      'Invalid temperature: must be a number',
      'invalid temperature: only one decimal place is allowed',
      'Please explain why an invalid temperature: only 1 is allowed for this model',
      'the invalid temperature: only 1 is allowed rule was removed',
      'invalid temperature: only 1 is allowed for this model and 0.6 for the other',
      'invalid temperature: only 1 is allowed for this modeling run',
    ])
      expect(refusedField(kimi(message), sent), message).toBeUndefined()
    // a `param` naming another place, or an echo of the request that quotes the words
    expect(
      refusedField(
        openai('invalid temperature: only 1 is allowed for this model', 'messages[1].content'),
        sent,
      ),
    ).toBeUndefined()
    expect(
      refusedField(
        kimi(
          "1 validation error for Body: 'input': 'invalid temperature: only 1 is allowed for this model' is too long",
        ),
        sent,
      ),
    ).toBeUndefined()
  })
})

describe('UpstreamAdaptations', () => {
  it('learns per provider and model: a field dropped, max_tokens renamed when the error asks for it', () => {
    const a = new UpstreamAdaptations()
    expect(a.get('p', 'm')).toBeUndefined()
    expect(
      a.learn('p', 'm', openai("Unsupported parameter: 'reasoning_effort'.", 'reasoning_effort'), {
        fields: SENT,
      }),
    ).toBe('refused reasoning_effort: sent again without it')
    expect(a.get('p', 'm')).toEqual({drop: ['reasoning_effort']})
    expect(
      a.learn(
        'p',
        'm',
        openai(
          "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
          'max_tokens',
        ),
        {fields: SENT, adaptedWith: a.get('p', 'm')},
      ),
    ).toBe('refused max_tokens: sent again as max_completion_tokens')
    expect(a.get('p', 'm')).toEqual({drop: ['reasoning_effort'], maxCompletionTokens: true})
    expect(a.get('p', 'other')).toBeUndefined()
    expect(a.get('q', 'm')).toBeUndefined()
    expect(
      a.learn('p', 'm', openai('Bad conversation.', null), {fields: SENT, adaptedWith: a.get('p', 'm')}),
    ).toBeUndefined()
  })

  it("an Anthropic-compatible server that refuses Codex's live web search: the search left out from then on", () => {
    const codex = decodeClientRequest(
      'responses',
      {
        model: 'gpt-5.5',
        input: 'hi',
        tools: [
          {type: 'function', name: 'shell', parameters: {type: 'object', properties: {}}},
          {type: 'web_search', external_web_access: true},
        ],
      },
      {},
    )
    const first = encodeUpstreamRequest(codex, 'messages', 'glm-4.6')
    expect(JSON.parse(first.body.toString()).tools.map((t: {name: string}) => t.name)).toEqual([
      'shell',
      'web_search',
    ])
    const a = new UpstreamAdaptations()
    const refusal = JSON.stringify({
      type: 'error',
      error: {
        type: 'invalid_request_error',
        message:
          "tools.1: Input tag 'web_search_20250305' found using 'type' does not match any of the expected tags",
      },
    })
    expect(a.learn('glm', 'glm-4.6', refusal, first.sent)).toBe(
      'refused its web search tool: sent again without it',
    )
    // MiniMax's words for it name no tool (claude-code-hub #1262): learned the same way
    const minimax = JSON.stringify({
      type: 'error',
      error: {
        type: 'invalid_request_error',
        message: 'invalid params, function name or parameters is empty (2013)',
      },
    })
    expect(
      a.learn('minimax', 'MiniMax-M3', minimax, encodeUpstreamRequest(codex, 'messages', 'MiniMax-M3').sent),
    ).toBe('refused its web search tool: sent again without it')
    const again = encodeUpstreamRequest(codex, 'messages', 'glm-4.6', {}, a.get('glm', 'glm-4.6'))
    expect(JSON.parse(again.body.toString()).tools.map((t: {name: string}) => t.name)).toEqual(['shell'])
    expect(describeAdaptation(a.get('glm', 'glm-4.6')!)).toEqual(['web search beside functions left out'])
    // Gemini 3 gets the search beside functions by its name: a Gemini endpoint that refuses the
    // mix (Vertex AI has no include_server_side_tool_invocations) teaches the same
    const gemini = (message: string) =>
      JSON.stringify({error: {code: 400, message, status: 'INVALID_ARGUMENT'}})
    const toGemini3 = encodeUpstreamRequest(codex, 'gemini', 'gemini-3-pro-preview')
    expect(JSON.parse(toGemini3.body.toString()).tools[0].googleSearch).toEqual({})
    expect(
      a.learn(
        'vertex',
        'gemini-3-pro-preview',
        gemini(
          'Please enable tool_config.include_server_side_tool_invocations to use Built-in tools with Function calling.',
        ),
        toGemini3.sent,
      ),
    ).toBe('refused its web search tool: sent again without it')
    const withoutSearch = encodeUpstreamRequest(
      codex,
      'gemini',
      'gemini-3-pro-preview',
      {},
      a.get('vertex', 'gemini-3-pro-preview'),
    )
    expect(JSON.parse(withoutSearch.body.toString()).tools).toEqual([
      {functionDeclarations: [expect.objectContaining({name: 'shell'})]},
    ])
    // Gemini 2.5 was never sent the search beside functions: nothing to learn from the same words
    expect(
      a.learn(
        'g',
        'gemini-2.5-pro',
        gemini('Tool use with function calling is unsupported'),
        encodeUpstreamRequest(codex, 'gemini', 'gemini-2.5-pro').sent,
      ),
    ).toBeUndefined()
    // a search request is not one to send without its search: nothing learned from its refusal
    const search = decodeClientRequest(
      'messages',
      {
        model: 'm',
        max_tokens: 10,
        messages: [{role: 'user', content: 'q'}],
        tools: [{type: 'web_search_20250305', name: 'web_search'}],
      },
      {},
    )
    expect(
      a.learn('glm', 'other', refusal, encodeUpstreamRequest(search, 'responses', 'other').sent),
    ).toBeUndefined()
    // nothing learned from a 400 that only mentions the search: a refused setting of the tool, an
    // echo of the body, or an upstream that was never sent the search (chat leaves it out)
    const b = new UpstreamAdaptations()
    const anthropic = (message: string) =>
      JSON.stringify({type: 'error', error: {type: 'invalid_request_error', message}})
    expect(
      b.learn(
        'p',
        'm',
        anthropic('tools.1.web_search_20250305.user_location.country: invalid country'),
        first.sent,
      ),
    ).toBeUndefined()
    expect(
      b.learn(
        'p',
        'm',
        JSON.stringify({
          detail: [
            {type: 'string_too_long', loc: ['body', 'messages'], input: 'search the web: unknown tags'},
          ],
        }),
        first.sent,
      ),
    ).toBeUndefined()
    const toChat = encodeUpstreamRequest(codex, 'chat', 'deepseek-chat')
    expect(toChat.sent.optionalSearch).toBeUndefined()
    expect(b.learn('p', 'm', refusal, toChat.sent)).toBeUndefined()
  })

  it('forgets the oldest target past its bound', () => {
    const a = new UpstreamAdaptations()
    const refusal = openai("Unsupported parameter: 'user'.", 'user')
    for (let i = 0; i <= 1000; i++) a.learn('p', `m${i}`, refusal, {fields: SENT})
    expect(a.get('p', 'm0')).toBeUndefined()
    expect(a.get('p', 'm1')).toEqual({drop: ['user']})
    expect(a.get('p', 'm1000')).toEqual({drop: ['user']})
  })
})

describe('outputLimit', () => {
  it('reads the limit of a refused max_tokens, as DeepSeek, OpenAI and Groq state it', () => {
    const deepseek = JSON.stringify({
      error: {
        message: 'Invalid max_tokens value, the valid range of max_tokens is [1, 8192]',
        type: 'invalid_request_error',
        param: null,
        code: 'invalid_request_error',
      },
    })
    expect(outputLimit(deepseek, 64000)).toBe(8192)
    expect(
      outputLimit(
        openai(
          'max_tokens is too large: 64000. This model supports at most 16384 completion tokens, whereas you provided 64000.',
          'max_tokens',
        ),
        64000,
      ),
    ).toBe(16384)
    expect(
      outputLimit(
        '{"error":{"message":"`max_tokens` must be less than or equal to `8192`, the maximum value for `max_tokens` is less than the `context_window` for this model"}}',
        32000,
      ),
    ).toBe(8192)
  })

  it("reads Google's exclusive range of maxOutputTokens (Gemini 2.0 Flash, Gemma: 8 192)", () => {
    const google = (sent: number, end: number) =>
      JSON.stringify({
        error: {
          code: 400,
          message: `Unable to submit request because it has a maxOutputTokens value of ${sent} but the supported range is from 1 (inclusive) to ${end} (exclusive). Update the value and try again.`,
          status: 'INVALID_ARGUMENT',
        },
      })
    expect(outputLimit(google(32000, 8193), 32000)).toBe(8192)
    expect(outputLimit(google(65536, 65536), 65536)).toBe(65535)
    // not below what was sent: nothing to learn
    expect(outputLimit(google(8192, 8193), 8192)).toBeUndefined()
  })

  it('reads none from a limit that depends on the prompt, a limit not below what was sent, or another 400', () => {
    expect(
      outputLimit(
        "'max_tokens' or 'max_completion_tokens' is too large: 64000. This model's maximum context length is 32768 tokens and your request has 1200 input tokens (64000 > 32768 - 1200).",
        64000,
      ),
    ).toBeUndefined()
    expect(outputLimit('the valid range of max_tokens is [1, 8192]', 8192)).toBeUndefined()
    expect(outputLimit('the valid range of max_tokens is [1, 8192]', undefined)).toBeUndefined()
    expect(outputLimit(openai('messages: at most 100 items allowed', null), 64000)).toBeUndefined()
  })

  it("drops a max_tokens that does not fit vLLM's context (its default then fits), and a max_completion_tokens too", () => {
    const a = new UpstreamAdaptations()
    const vllm = JSON.stringify({
      object: 'error',
      message:
        "'max_tokens' or 'max_completion_tokens' is too large: 64000. This model's maximum context length is 32768 tokens and your request has 1200 input tokens (64000 > 32768 - 1200).",
      type: 'BadRequestError',
      param: null,
      code: 400,
    })
    expect(a.learn('v', 'm', vllm, {fields: SENT, maxTokens: 64000})).toBe(
      'refused max_tokens: sent again without it',
    )
    expect(a.get('v', 'm')).toEqual({drop: ['max_tokens']})
    // renamed for an o-series model, then too large for it
    const b = new UpstreamAdaptations()
    const sent = ['model', 'messages', 'max_completion_tokens']
    expect(b.learn('o', 'm', vllm.replace(/'max_tokens' or /, ''), {fields: sent, maxTokens: 64000})).toBe(
      'refused max_completion_tokens: sent again without it',
    )
  })

  it('drops max_tokens for the older context error of vLLM and OpenAI, when the messages alone fit', () => {
    const older = (messages: number) =>
      openai(
        `This model's maximum context length is 32768 tokens. However, you requested ${messages + 64000} tokens (${messages} in the messages, 64000 in the completion). Please reduce the length of the messages or completion.`,
        'messages',
      )
    const a = new UpstreamAdaptations()
    expect(a.learn('v', 'm', older(1200), {fields: SENT, maxTokens: 64000})).toBe(
      'refused max_tokens: sent again without it',
    )
    expect(a.get('v', 'm')).toEqual({drop: ['max_tokens']})
    expect(a.learn('v', 'n', older(40000), {fields: SENT, maxTokens: 64000})).toBeUndefined()
    expect(a.learn('v', 'o', older(1200), {fields: ['model', 'messages']})).toBeUndefined()
  })

  it("learns nothing from vLLM's context error when the prompt alone fills the context", () => {
    const a = new UpstreamAdaptations()
    const tooLong =
      "'max_tokens' or 'max_completion_tokens' is too large: 512. This model's maximum context length is 32768 tokens and your request has 40000 input tokens (512 > 32768 - 40000)."
    expect(a.learn('v', 'm', tooLong, {fields: SENT, maxTokens: 512})).toBeUndefined()
    expect(a.get('v', 'm')).toBeUndefined()
  })

  it('sends what was learned: renamed, then dropped, stays dropped; a field learned twice is kept once', () => {
    const client = decodeClientRequest(
      'messages',
      {model: 'c', max_tokens: 64000, temperature: 0.5, messages: [{role: 'user', content: 'hi'}]},
      {model: 'c', stream: false},
    )
    const sent = (adapt: Parameters<typeof encodeUpstreamRequest>[4]) =>
      JSON.parse(encodeUpstreamRequest(client, 'chat', 'm', {}, adapt).body.toString())
    expect(sent({maxCompletionTokens: true})).toMatchObject({max_completion_tokens: 64000, temperature: 0.5})
    const both = sent({maxCompletionTokens: true, drop: ['max_completion_tokens']})
    expect(both).not.toHaveProperty('max_tokens')
    expect(both).not.toHaveProperty('max_completion_tokens')
    expect(sent({maxTokens: 8192, drop: ['temperature']})).toEqual({
      model: 'm',
      messages: [{role: 'user', content: 'hi'}],
      max_tokens: 8192,
    })
    const a = new UpstreamAdaptations()
    const refusal = openai("Unsupported parameter: 'user'.", 'user')
    a.learn('p', 'm', refusal, {fields: SENT})
    a.learn('p', 'm', refusal, {fields: SENT, adaptedWith: a.get('p', 'm')})
    expect(a.get('p', 'm')).toEqual({drop: ['user']})
  })

  it('is learned as a cap before any drop of max_tokens', () => {
    const a = new UpstreamAdaptations()
    const refusal = openai('Invalid max_tokens value, the valid range of max_tokens is [1, 8192]', null)
    expect(a.learn('p', 'm', refusal, {fields: SENT, maxTokens: 64000})).toBe(
      'refused max_tokens 64000: sent again with 8192, its limit',
    )
    expect(a.get('p', 'm')).toEqual({maxTokens: 8192})
  })
})

describe('a request for JSON the upstream refuses', () => {
  const deepseek = (message: string) =>
    JSON.stringify({
      error: {message, type: 'invalid_request_error', param: null, code: 'invalid_request_error'},
    })
  const schemaSent = {fields: ['model', 'messages', 'response_format'], responseFormat: 'json_schema'}
  const modeSent = {fields: ['model', 'messages', 'response_format'], responseFormat: 'json_object'}

  it("DeepSeek's schema refusal: JSON mode with the schema in the system prompt, then JSON mode refused too: the instruction alone", () => {
    const a = new UpstreamAdaptations()
    expect(a.learn('d', 'm', deepseek('This response_format type is unavailable now'), schemaSent)).toBe(
      'refused response_format json_schema: sent again as json_object, the schema in the system prompt',
    )
    expect(a.get('d', 'm')).toEqual({json: 'json_object'})
    // the same refusal again (another model's JSON mode, say) learns the next step, then nothing
    const refused = openai(
      "Unsupported parameter: 'response_format' is not supported with this model.",
      'response_format',
    )
    expect(a.learn('d', 'm', refused, {...modeSent, adaptedWith: a.get('d', 'm')})).toBe(
      'refused response_format: sent again without it, an instruction to answer JSON in the system prompt',
    )
    expect(a.get('d', 'm')).toEqual({json: 'instruction'})
    expect(a.learn('d', 'm', refused, {...modeSent, adaptedWith: a.get('d', 'm')})).toBeUndefined()
    // DeepSeek's older refusal, a 422 with the field path in its text
    const b = new UpstreamAdaptations()
    expect(
      b.learn(
        'd',
        'm',
        'Failed to deserialize the JSON body into the target type: response_format: response_format.type `json_schema` is unavailable now at line 1 column 12440',
        schemaSent,
      ),
    ).toMatch(/^refused response_format json_schema/)
  })

  it("DeepSeek's JSON mode without the word json in the prompt: the instruction added, JSON mode kept", () => {
    const a = new UpstreamAdaptations()
    const refusal = deepseek(
      "Prompt must contain the word 'json' in some form to use 'response_format' of type 'json_object'.",
    )
    expect(a.learn('d', 'm', refusal, modeSent)).toBe(
      'refused response_format json_object without "json" in the prompt: sent again with an instruction to answer JSON',
    )
    expect(a.get('d', 'm')).toEqual({jsonInstruction: true})
    expect(a.learn('d', 'm', refusal, {...modeSent, adaptedWith: a.get('d', 'm')})).toBeUndefined()
  })

  it('learns nothing from a 400 about something else, or when no JSON was asked', () => {
    const a = new UpstreamAdaptations()
    expect(
      a.learn('d', 'm', openai('Invalid response_format in messages[2].', 'messages[2]'), schemaSent),
    ).toBeUndefined()
    expect(a.learn('d', 'm', deepseek('The conversation is too long.'), schemaSent)).toBeUndefined()
    expect(
      a.learn('d', 'm', deepseek('This response_format type is unavailable now'), {fields: SENT}),
    ).toBeUndefined()
    expect(a.get('d', 'm')).toBeUndefined()
  })

  it('sends JSON the way learned: the schema and the instruction in the first system message', () => {
    const schema = {type: 'object', properties: {city: {type: 'string'}}, required: ['city']}
    const request = (system?: string) =>
      decodeClientRequest(
        'messages',
        {
          model: 'c',
          max_tokens: 100,
          ...(system ? {system} : {}),
          output_config: {format: {type: 'json_schema', schema}},
          messages: [{role: 'user', content: 'Where?'}],
        },
        {model: 'c', stream: false},
      )
    const body = (adapt: Parameters<typeof encodeUpstreamRequest>[4], system?: string) =>
      JSON.parse(encodeUpstreamRequest(request(system), 'chat', 'm', {}, adapt).body.toString())
    const instruction = `Respond with one JSON object only, with no other text, that matches this JSON schema:\n${JSON.stringify(schema)}`
    // nothing learned: the schema as the client sent it
    expect(body(undefined).response_format).toMatchObject({type: 'json_schema', json_schema: {schema}})
    const asObject = body({json: 'json_object'}, 'Be brief.')
    expect(asObject.response_format).toEqual({type: 'json_object'})
    expect(asObject.messages[0]).toEqual({role: 'system', content: `Be brief.\n\n${instruction}`})
    expect(asObject.messages[1]).toEqual({role: 'user', content: 'Where?'})
    const alone = body({json: 'instruction'})
    expect(alone).not.toHaveProperty('response_format')
    expect(alone.messages).toEqual([
      {role: 'system', content: instruction},
      {role: 'user', content: 'Where?'},
    ])
    const {sent} = encodeUpstreamRequest(request(), 'chat', 'm', {}, {json: 'json_object'})
    expect(sent.responseFormat).toBe('json_object')
  })
})

describe('a reasoning effort the upstream refuses with the values it takes', () => {
  it('reads the supported values and picks the nearest, a tie to the higher, none only for minimal', () => {
    expect(
      supportedValues(
        openai(
          "Unsupported value: 'reasoning_effort' does not support 'minimal' with this model. Supported values are: 'low', 'medium', and 'high'.",
          'reasoning_effort',
        ),
      ),
    ).toEqual(['low', 'medium', 'high'])
    expect(nearestEffort('minimal', ['low', 'medium', 'high'])).toBe('low')
    expect(nearestEffort('none', ['minimal', 'low', 'medium', 'high'])).toBe('minimal')
    expect(nearestEffort('high', ['low', 'medium'])).toBe('medium')
    // Cohere's compatibility API: none and high
    expect(nearestEffort('medium', ['none', 'high'])).toBe('high')
    expect(nearestEffort('low', ['none', 'high'])).toBe('high')
    expect(nearestEffort('minimal', ['none', 'high'])).toBe('none')
    expect(nearestEffort('low', [])).toBeUndefined()
    expect(nearestEffort('turbo', ['low'])).toBeUndefined()
  })

  it('learns the nearest effort, sends it from then on, and drops the field when no value fits', () => {
    const a = new UpstreamAdaptations()
    const sent = {fields: SENT, effort: 'minimal'}
    const refusal = openai(
      "Unsupported value: 'reasoning_effort' does not support 'minimal' with this model. Supported values are: 'low', 'medium', and 'high'.",
      'reasoning_effort',
    )
    expect(a.learn('o', 'm', refusal, sent)).toBe('refused reasoning_effort minimal: sent again with low')
    expect(a.get('o', 'm')).toEqual({effort: {minimal: 'low'}})
    const client = decodeClientRequest(
      'responses',
      {model: 'c', input: 'hi', reasoning: {effort: 'minimal'}},
      {model: 'c', stream: false},
    )
    const out = encodeUpstreamRequest(client, 'chat', 'm', {}, a.get('o', 'm'))
    expect(JSON.parse(out.body.toString()).reasoning_effort).toBe('low')
    expect(out.sent.effort).toBe('low')
    // no list: the field goes
    const b = new UpstreamAdaptations()
    expect(
      b.learn(
        'o',
        'm',
        openai("Unsupported value: 'reasoning_effort' does not support 'low'.", 'reasoning_effort'),
        {fields: SENT, effort: 'low'},
      ),
    ).toBe('refused reasoning_effort: sent again without it')
  })
})

describe('a Responses upstream', () => {
  const sent = ['model', 'input', 'reasoning', 'store', 'include', 'max_output_tokens', 'stream']

  it("reads the refused part of `reasoning` or `include` from OpenAI's param, or quoted in the message", () => {
    const noEffort = openai(
      "Unsupported parameter: 'reasoning.effort' is not supported with this model.",
      'reasoning.effort',
    )
    expect(refusedField(noEffort, sent)).toBe('reasoning')
    expect(refusedField(openai('Encrypted content is not supported.', 'include[0]'), sent)).toBe('include')
    expect(
      refusedField(
        openai("Unsupported parameter: 'reasoning.summary' is not supported with this model.", null),
        sent,
      ),
    ).toBe('reasoning.summary')
    // prose that names reasoning unquoted is no refusal of it, nor a field not sent
    expect(
      refusedField(openai('The reasoning items of the input are malformed.', null), sent),
    ).toBeUndefined()
    expect(refusedField(noEffort, ['model', 'input'])).toBeUndefined()
    const a = new UpstreamAdaptations()
    expect(a.learn('r', 'm', noEffort, {fields: sent, effort: 'high'})).toBe(
      'refused reasoning: sent again without it',
    )
    expect(a.get('r', 'm')).toEqual({drop: ['reasoning']})
  })
})

describe("a Responses body passed through (Codex's) refused for a top-level field the server does not know", () => {
  /** Codex 0.155's body, signed in with ChatGPT, cut down. */
  const codex = {
    model: 'muse-spark-1.3',
    instructions: 'You are Codex.',
    input: [{type: 'message', role: 'user', content: [{type: 'input_text', text: 'hi'}]}],
    tools: [{type: 'function', name: 'exec', parameters: {type: 'object', properties: {}}}],
    tool_choice: 'auto',
    parallel_tool_calls: true,
    reasoning: {effort: 'medium', summary: 'auto'},
    store: false,
    stream: true,
    include: ['reasoning.encrypted_content'],
    prompt_cache_key: 'k',
    access_programs: {cyber: 'standard'},
  }
  const fields = Object.keys(codex)
  /** OpenCode Go's 400 (lidge-jun/opencodex #4853). */
  const go = (field: string) =>
    JSON.stringify({error: {message: `unknown parameter \`${field}\``, type: 'invalid_request_error'}})

  it('learns the field per provider and model, and says so', () => {
    const a = new UpstreamAdaptations()
    expect(a.learn('go', 'muse-spark-1.3', go('access_programs'), sentOfPassedResponses(codex))).toBe(
      'refused access_programs (a field it does not know): sent again without it',
    )
    const learned = a.get('go', 'muse-spark-1.3')
    expect(learned).toEqual({drop: ['access_programs']})
    expect(a.get('go', 'other')).toBeUndefined()
    expect(describeAdaptation(learned!)).toEqual(['sent without access_programs'])
    // the next field it refuses, in a request sent with the first learned, adds to it
    const {access_programs: _, ...without} = codex
    const next = a.learn(
      'go',
      'muse-spark-1.3',
      go('prompt_cache_key'),
      sentOfPassedResponses(without, learned),
    )
    expect(next).toBe('refused prompt_cache_key (a field it does not know): sent again without it')
    expect(a.get('go', 'muse-spark-1.3')).toEqual({drop: ['access_programs', 'prompt_cache_key']})
    // the same refusal again, with nothing new to learn: the client's
    expect(
      a.learn(
        'go',
        'muse-spark-1.3',
        go('access_programs'),
        sentOfPassedResponses(codex, a.get('go', 'muse-spark-1.3')),
      ),
    ).toBeUndefined()
  })

  it("OpenAI's refusal of access_programs for an organization (vm0-ai/vm0 #35465): its top-level field goes", () => {
    /** OpenAI's 400, its whole body. */
    const notEnabled = (field: string, param: string) =>
      JSON.stringify({
        error: {
          message: `The ${field} parameter is not enabled for this organization.`,
          type: 'invalid_request_error',
          param,
          code: 'unsupported_parameter',
        },
      })
    const a = new UpstreamAdaptations()
    expect(
      a.learn(
        'openai',
        'gpt-5.5',
        notEnabled('access_programs', 'access_programs.cyber'),
        sentOfPassedResponses(codex),
      ),
    ).toBe('refused access_programs (not enabled for this organization): sent again without it')
    expect(a.get('openai', 'gpt-5.5')).toEqual({drop: ['access_programs']})
    // a bare param with the same words too
    const bare = new UpstreamAdaptations()
    expect(
      bare.learn(
        'openai',
        'm',
        notEnabled('access_programs', 'access_programs'),
        sentOfPassedResponses(codex),
      ),
    ).toMatch(/^refused access_programs /)
    // never a field the request needs, one it did not send, or a param that names another field;
    // nor another field the body sent in the same words: only access_programs has been seen so
    // (without Codex's store false OpenAI keeps the response, without include its reasoning's
    // encrypted_content is lost, without service_tier the tier it chose)
    const tiered = {...codex, service_tier: 'priority'}
    for (const [field, param] of [
      ['input', 'input.cyber'],
      ['tools', 'tools.0'],
      ['model', 'model'],
      ['service_tier', 'service_tier.flex'],
      ['access_programs', 'prompt_cache_key.x'],
      ['access_programs', 'access_programsx.cyber'],
      ['store', 'store'],
      ['include', 'include'],
      ['include', 'include.0'],
      ['service_tier', 'service_tier'],
      ['prompt_cache_key', 'prompt_cache_key'],
      ['parallel_tool_calls', 'parallel_tool_calls'],
    ]) {
      const none = new UpstreamAdaptations()
      expect(
        none.learn('openai', 'm', notEnabled(field, param), sentOfPassedResponses(tiered)),
        `${field} ${param}`,
      ).toBeUndefined()
      expect(none.get('openai', 'm')).toBeUndefined()
    }
  })

  it('never learns away a field the request cannot go without, nor one it did not send', () => {
    for (const field of ['input', 'model', 'tools', 'instructions', 'stream', 'tool_choice']) {
      const a = new UpstreamAdaptations()
      expect(a.learn('go', 'm', go(field), sentOfPassedResponses(codex)), field).toBeUndefined()
      expect(a.get('go', 'm'), field).toBeUndefined()
    }
    // `text` (a JSON schema's format) too
    expect(unknownResponsesFields(go('text'), [...fields, 'text'])).toBeUndefined()
    // a field not sent, or a part of one (a refused value of a known field, not an unknown field)
    expect(unknownResponsesFields(go('client_metadata'), fields)).toBeUndefined()
    expect(unknownResponsesFields(go('reasoning.summary'), fields)).toBeUndefined()
    expect(
      unknownResponsesFields(
        openai(
          "Unsupported parameter: 'reasoning.effort' is not supported with this model.",
          'reasoning.effort',
        ),
        fields,
      ),
    ).toBeUndefined()
    // a list that names one it cannot go without beside one it can: nothing
    expect(
      unknownResponsesFields(
        openai('Unrecognized request argument supplied: access_programs, tools', null),
        fields,
      ),
    ).toBeUndefined()
    // OpenAI's refusal of the program for an organization: not a field it does not know (learned
    // by its own rule, notEnabledResponsesField, above)
    expect(
      unknownResponsesFields(
        openai(
          'The access_programs parameter is not enabled for this organization.',
          'access_programs.cyber',
        ),
        fields,
      ),
    ).toBeUndefined()
    // words about something else, and an echo of the request that holds the words
    expect(unknownResponsesFields(openai('Invalid input: messages malformed.', null), fields)).toBeUndefined()
    expect(
      unknownResponsesFields(
        "1 validation error for Request\ninput\n  Value error, bad [type=value_error, input_value='unknown parameter `access_programs`']",
        fields,
      ),
    ).toBeUndefined()
    // nothing but the field rule and the reasoning's (./effort-refusals.test.ts) is learned from a
    // body passed through (its tool shapes, `store` and the order of its outputs have rules of
    // their own)
    const a = new UpstreamAdaptations()
    expect(
      a.learn(
        'r',
        'm',
        JSON.stringify({
          error: {
            message: 'tool type custom not supported',
            type: 'BadRequestError',
            param: 'tools',
            code: 400,
          },
        }),
        sentOfPassedResponses(codex),
      ),
    ).toBeUndefined()
  })

  it("reads other servers' words for a field they do not know", () => {
    const named = (text: string) => unknownResponsesFields(text, fields)
    expect(
      named(
        'Error from provider (Console Go): Upstream request failed: [invalid_request_error] unknown parameter `access_programs`',
      ),
    ).toEqual(['access_programs'])
    expect(named(openai("Unknown parameter: 'access_programs'.", 'access_programs'))).toEqual([
      'access_programs',
    ])
    expect(named('unknown field `access_programs`, expected one of `model`, `input`, `tools`')).toEqual([
      'access_programs',
    ])
    expect(named('json: unknown field "access_programs"')).toEqual(['access_programs'])
    expect(named("Unrecognized key(s) in object: 'access_programs'")).toEqual(['access_programs'])
    // zod's list: every key it names at once (one try, not one a key)
    expect(named("Unrecognized key(s) in object: 'access_programs', 'prompt_cache_key'")).toEqual([
      'access_programs',
      'prompt_cache_key',
    ])
    // a value refused, the field named as its param: the field stays
    for (const [message, param] of [
      ["Invalid value for 'service_tier': 'flex' is not supported with this model.", 'service_tier'],
      ["Unsupported value: 'service_tier' does not support 'priority' with this model.", 'service_tier'],
      ['parallel_tool_calls is unsupported when tools is empty', 'parallel_tool_calls'],
    ])
      expect([message, unknownResponsesFields(openai(message, param), [...fields, 'service_tier'])]).toEqual([
        message,
        undefined,
      ])
    // a param beside words for a field the server does not know at all
    expect(named(openai('Unknown field.', 'access_programs'))).toEqual(['access_programs'])
    expect(named(openai("Parameter 'access_programs' is not supported.", 'access_programs'))).toEqual([
      'access_programs',
    ])
    expect(
      named(openai('Unrecognized request argument supplied: access_programs, prompt_cache_key', null)),
    ).toEqual(['access_programs', 'prompt_cache_key'])
    expect(
      named(
        "1 validation error for ResponsesRequest\naccess_programs\n  Extra inputs are not permitted [type=extra_forbidden, input_value={'cyber': 'standard'}, input_type=dict]",
      ),
    ).toEqual(['access_programs'])
    const fastapi = JSON.stringify({
      detail: [
        {
          type: 'extra_forbidden',
          loc: ['body', 'access_programs'],
          msg: 'Extra inputs are not permitted',
          input: {cyber: 'standard'},
        },
      ],
    })
    expect(named(fastapi)).toEqual(['access_programs'])
    const a = new UpstreamAdaptations()
    expect(a.learn('vllm', 'm', fastapi, sentOfPassedResponses(codex), 422)).toBe(
      'refused access_programs (a field it does not know): sent again without it',
    )
  })
})

describe('Gemini and Messages upstreams', () => {
  const google = (message: string) =>
    JSON.stringify({error: {code: 400, message, status: 'INVALID_ARGUMENT'}})
  const gemini = (thinkingBudget: number) => ({
    upstream: 'gemini' as const,
    fields: ['contents', 'generationConfig'],
    thinkingBudget,
  })

  it("learns Gemini's refused thinking budgets: 0 left out, a stated range kept to, an unstated one left out from there on", () => {
    const a = new UpstreamAdaptations()
    const zero = google('Budget 0 is invalid. This model only works in thinking mode.')
    expect(a.learn('g', 'm', zero, gemini(0))).toBe(
      'refused thinkingBudget 0: sent again without it, the model decides',
    )
    expect(a.learn('g', 'm', zero, {...gemini(0), adaptedWith: a.get('g', 'm')})).toBeUndefined()
    expect(
      a.learn('g', 'm', google('The thinking budget (40000) is invalid.'), {
        ...gemini(40000),
        adaptedWith: a.get('g', 'm'),
      }),
    ).toBe('refused thinkingBudget 40000: sent again without it, the model decides')
    expect(a.get('g', 'm')).toEqual({thinkingBudget: {zero: true, over: 40000}})
    const b = new UpstreamAdaptations()
    const ranged = google('The thinking budget 31999 is invalid. Please choose a value between 0 and 24576.')
    expect(b.learn('g', 'm', ranged, gemini(31999))).toBe(
      'refused thinkingBudget 31999: sent again with 24576, its limit',
    )
    // another budget's refusal, or a budget in another message, is not this one
    expect(b.learn('g', 'n', ranged, gemini(30000))).toBeUndefined()
    expect(b.learn('g', 'n', google('Invalid value at contents[0].'), gemini(30000))).toBeUndefined()
  })

  describe("where a function result's images go (Claude Code's two screenshots)", () => {
    const png = 'iVBORw0KGgo='
    const image = {type: 'image', source: {type: 'base64', media_type: 'image/png', data: png}}
    const client = (results: unknown[] = [image]) =>
      decodeClientRequest(
        'messages',
        {
          model: 'c',
          max_tokens: 8000,
          tools: [{name: 'Read', input_schema: {type: 'object', properties: {}}}],
          messages: [
            {role: 'user', content: 'look at both'},
            {
              role: 'assistant',
              content: [
                {type: 'tool_use', id: 't1', name: 'Read', input: {}},
                {type: 'tool_use', id: 't2', name: 'Read', input: {}},
              ],
            },
            {
              role: 'user',
              content: [
                {type: 'tool_result', tool_use_id: 't1', content: results},
                {type: 'tool_result', tool_use_id: 't2', content: results},
                {type: 'text', text: '<system-reminder>x</system-reminder>'},
              ],
            },
          ],
        },
        {model: 'c', stream: false},
      )
    const encode = (model: string, adapt?: UpstreamAdaptation, results?: unknown[]) =>
      encodeUpstreamRequest(client(results), 'gemini', model, {}, adapt)
    const keys = (out: ReturnType<typeof encode>) =>
      JSON.parse(out.body.toString()).contents[2].parts.map((p: object) => Object.keys(p)[0])
    const PARTS = google(
      'Unable to submit request because `function_response.parts` is not supported for this model.',
    )
    const COUNT = google(
      'Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.',
    )

    it('says the layout sent only for a body whose results held media', () => {
      expect(encode('gemini-3.8-flash').sent.geminiResultMedia).toBe('nested')
      expect(encode('gemini-2.5-flash').sent.geminiResultMedia).toBe('flat')
      expect(encode('gemini-2.5-flash', {geminiResultMedia: 'nested'}).sent.geminiResultMedia).toBe('nested')
      expect(encode('gemini-3.8-flash', undefined, [{type: 'text', text: 'A'}]).sent).not.toHaveProperty(
        'geminiResultMedia',
      )
    })

    it('learns the flat layout from `function_response.parts` refused, per model, and sends it', () => {
      const a = new UpstreamAdaptations()
      // a Gemini 2.5 on Vertex behind a gemini-3 name (a relay's)
      const first = encode('gemini-3-pro-vertex')
      expect(a.learn('v', 'gemini-3-pro-vertex', PARTS, first.sent)).toBe(
        'refused images and documents inside a functionResponse (function_response.parts): sent again with them after every functionResponse of the turn',
      )
      const learned = a.get('v', 'gemini-3-pro-vertex')
      expect(learned).toEqual({geminiResultMedia: 'flat'})
      expect(a.get('v', 'gemini-3.8-flash')).toBeUndefined()
      expect(describeAdaptation(learned!)).toEqual([
        "images and documents of a function's result sent after every functionResponse of the turn (refused inside it: function_response.parts)",
      ])
      const again = encode('gemini-3-pro-vertex', learned)
      expect(keys(again)).toEqual([
        'functionResponse',
        'functionResponse',
        'inlineData',
        'inlineData',
        'text',
      ])
      // the same bytes on the next turn
      expect(encode('gemini-3-pro-vertex', learned).body.equals(again.body)).toBe(true)
      // learned once: the other layout's refusal now teaches nothing (no back and forth)
      expect(a.learn('v', 'gemini-3-pro-vertex', COUNT, again.sent)).toBeUndefined()
    })

    it('learns nesting from the part count refused on a body with media after the responses', () => {
      const a = new UpstreamAdaptations()
      // an alias of Gemini 3.8 Flash
      const first = encode('team-gemini')
      expect(keys(first)).toEqual([
        'functionResponse',
        'functionResponse',
        'inlineData',
        'inlineData',
        'text',
      ])
      expect(a.learn('g', 'team-gemini', COUNT, first.sent)).toBe(
        "refused images and documents beside the functionResponse parts: sent again with each inside its functionResponse's parts, one part per call",
      )
      const learned = a.get('g', 'team-gemini')!
      expect(learned).toEqual({geminiResultMedia: 'nested'})
      expect(describeAdaptation(learned)[0]).toMatch(/inside its functionResponse \(parts\)/)
      expect(keys(encode('team-gemini', learned))).toEqual(['functionResponse', 'functionResponse', 'text'])
      // Vertex AI's words for the same layout, to a request that does not end with a model turn
      const b = new UpstreamAdaptations()
      expect(
        b.learn(
          'vertex',
          'team-gemini',
          google('Requests ending with a model turn are not supported.'),
          first.sent,
        ),
      ).toMatch(/^refused images and documents beside/)
    })

    it("judges Vertex's 'model turn' words against the body sent: an empty last user message left out teaches nothing", () => {
      // Claude Code's history with a result's image, then an answer and an empty user text: the
      // encoder leaves the empty text out, so the body ends with the model's turn
      const body = (last: string) =>
        decodeClientRequest(
          'messages',
          {
            model: 'c',
            max_tokens: 8000,
            tools: [{name: 'Read', input_schema: {type: 'object', properties: {}}}],
            messages: [
              {role: 'user', content: 'look'},
              {role: 'assistant', content: [{type: 'tool_use', id: 't1', name: 'Read', input: {}}]},
              {role: 'user', content: [{type: 'tool_result', tool_use_id: 't1', content: [image]}]},
              {role: 'assistant', content: [{type: 'text', text: 'a cat'}]},
              {role: 'user', content: [{type: 'text', text: last}]},
            ],
          },
          {model: 'c', stream: false},
        )
      const MODEL_TURN = google('Requests ending with a model turn are not supported.')
      const empty = encodeUpstreamRequest(body(''), 'gemini', 'team-gemini', {})
      expect(JSON.parse(empty.body.toString()).contents.at(-1).role).toBe('model')
      expect(empty.sent.geminiEndsWithModel).toBe(true)
      expect(new UpstreamAdaptations().learn('v', 'team-gemini', MODEL_TURN, empty.sent)).toBeUndefined()
      const asked = encodeUpstreamRequest(body('and now?'), 'gemini', 'team-gemini', {})
      expect(asked.sent).not.toHaveProperty('geminiEndsWithModel')
      expect(new UpstreamAdaptations().learn('v', 'team-gemini', MODEL_TURN, asked.sent)).toMatch(
        /^refused images and documents beside/,
      )
    })

    it('never learns nesting for a gemini-1* or gemini-2* name (they refuse it; no way back)', () => {
      const a = new UpstreamAdaptations()
      for (const model of ['gemini-2.5-flash', 'models/gemini-2.0-flash', 'gemini-1.5-pro']) {
        const first = encode(model)
        expect(first.sent.geminiResultMedia).toBe('flat')
        expect(a.learn('g', model, COUNT, first.sent)).toBeUndefined()
        expect(
          a.learn('g', model, google('Requests ending with a model turn are not supported.'), first.sent),
        ).toBeUndefined()
        expect(a.get('g', model)).toBeUndefined()
      }
      // (another name that does not say Gemini 3 still learns it)
      expect(a.learn('g', 'gemini-exp-1206', COUNT, encode('gemini-exp-1206').sent)).toMatch(
        /^refused images/,
      )
    })

    it("learns nesting for an alias from an image beside the results (a chat client's user message after its tool message)", () => {
      const chat = decodeClientRequest(
        'chat',
        {
          model: 'c',
          tools: [{type: 'function', function: {name: 'read', parameters: {type: 'object', properties: {}}}}],
          messages: [
            {role: 'user', content: 'look'},
            {
              role: 'assistant',
              content: null,
              tool_calls: [{id: 'c1', type: 'function', function: {name: 'read', arguments: '{}'}}],
            },
            {role: 'tool', tool_call_id: 'c1', content: 'Image read'},
            {role: 'user', content: [{type: 'image_url', image_url: {url: `data:image/png;base64,${png}`}}]},
          ],
        },
        {model: 'c', stream: false},
      )
      const first = encodeUpstreamRequest(chat, 'gemini', 'team-gemini', {})
      expect(first.sent.geminiResultMedia).toBe('flat')
      const a = new UpstreamAdaptations()
      expect(a.learn('g', 'team-gemini', COUNT, first.sent)).toMatch(/^refused images and documents beside/)
      const again = encodeUpstreamRequest(chat, 'gemini', 'team-gemini', {}, a.get('g', 'team-gemini'))
      expect(JSON.parse(again.body.toString()).contents[2].parts).toEqual([
        {
          functionResponse: {
            name: 'read',
            id: 'c1',
            response: {output: 'Image read'},
            parts: [{inlineData: {mimeType: 'image/png', data: png}}],
          },
        },
      ])
    })

    it('learns nothing from those words for a body without media in results, or the layout it did not send', () => {
      const a = new UpstreamAdaptations()
      const text = encode('team-gemini', undefined, [{type: 'text', text: 'A'}])
      expect(a.learn('g', 'team-gemini', COUNT, text.sent)).toBeUndefined()
      expect(a.learn('g', 'gemini-2.5-flash', PARTS, encode('gemini-2.5-flash').sent)).toBeUndefined()
      expect(a.learn('g', 'gemini-3.8-flash', COUNT, encode('gemini-3.8-flash').sent)).toBeUndefined()
      expect(
        a.learn('g', 'gemini-3.8-flash', google('Invalid value at contents[2].'), encode('m').sent),
      ).toBeUndefined()
    })
  })

  it('sends the budget learned', () => {
    const request = (thinking: unknown) =>
      decodeClientRequest(
        'messages',
        {model: 'c', max_tokens: 64000, thinking, messages: [{role: 'user', content: 'hi'}]},
        {model: 'c', stream: false},
      )
    const config = (thinking: unknown, adapt: Parameters<typeof encodeUpstreamRequest>[4]) =>
      JSON.parse(encodeUpstreamRequest(request(thinking), 'gemini', 'm', {}, adapt).body.toString())
        .generationConfig
    expect(config({type: 'disabled'}, undefined).thinkingConfig).toEqual({thinkingBudget: 0})
    // (Gemini 2.5 Pro's refusal of 0: nothing left of the config, so none goes, not `{}`)
    expect(config({type: 'disabled'}, {thinkingBudget: {zero: true}})).not.toHaveProperty('thinkingConfig')
    const big = {type: 'enabled', budget_tokens: 31999}
    expect(config(big, {thinkingBudget: {min: 0, max: 24576}}).thinkingConfig.thinkingBudget).toBe(24576)
    expect(config(big, {thinkingBudget: {over: 30000}}).thinkingConfig).not.toHaveProperty('thinkingBudget')
    expect(config(big, {thinkingBudget: {over: 40000}}).thinkingConfig.thinkingBudget).toBe(31999)
  })

  it("Gemma 4's refusal of any budget: learned from Google's words, the budget left out from then on (0 too)", () => {
    const refused = JSON.stringify({
      error: {
        code: 400,
        message: 'Thinking budget is not supported for this model.',
        status: 'INVALID_ARGUMENT',
        details: [
          {
            '@type': 'type.googleapis.com/google.rpc.BadRequest',
            fieldViolations: [
              {
                field: 'generationConfig.thinking_config',
                description: 'Thinking budget is not supported for this model.',
              },
            ],
          },
        ],
      },
    })
    // Claude Code's body (adaptive thinking, effort high), to a Gemma 4 named otherwise (a relay's alias)
    const claude = decodeClientRequest(
      'messages',
      {
        model: 'claude-opus-5',
        max_tokens: 32000,
        stream: true,
        thinking: {type: 'adaptive'},
        output_config: {effort: 'high'},
        messages: [{role: 'user', content: 'hi'}],
      },
      {},
    )
    const first = encodeUpstreamRequest(claude, 'gemini', 'gemma4-31b')
    expect(first.sent.thinkingBudget).toBe(24576)
    const a = new UpstreamAdaptations()
    expect(a.learn('google', 'gemma4-31b', refused, first.sent)).toBe(
      'refused thinkingBudget 24576: sent again without it (the model takes none)',
    )
    const learned = a.get('google', 'gemma4-31b')!
    expect(learned).toEqual({thinkingBudget: {none: true}})
    expect(describeAdaptation(learned)).toEqual(['thinkingBudget left out (the model takes none)'])
    const again = encodeUpstreamRequest(claude, 'gemini', 'gemma4-31b', {}, learned)
    expect(JSON.parse(again.body.toString()).generationConfig).toEqual({
      maxOutputTokens: 32000,
      thinkingConfig: {includeThoughts: true},
    })
    expect(again.sent.thinkingBudget).toBeUndefined()
    // the same refusal again (nothing new): the client's
    expect(a.learn('google', 'gemma4-31b', refused, {...gemini(512), adaptedWith: learned})).toBeUndefined()
    // a disabled request (budget 0): refused alike, left out alike
    const b = new UpstreamAdaptations()
    expect(b.learn('google', 'gemma4-26b', refused, gemini(0))).toBe(
      'refused thinkingBudget 0: sent again without it (the model takes none)',
    )
    const request = (thinking: unknown) =>
      decodeClientRequest(
        'messages',
        {model: 'c', max_tokens: 1000, thinking, messages: [{role: 'user', content: 'hi'}]},
        {},
      )
    const off = encodeUpstreamRequest(
      request({type: 'disabled'}),
      'gemini',
      'gemma4-26b',
      {},
      b.get('google', 'gemma4-26b'),
    )
    // (no `thinkingConfig: {}`: a config of the budget alone is left out whole)
    expect(JSON.parse(off.body.toString()).generationConfig).toEqual({maxOutputTokens: 1000})
    // a budget in other words is no such refusal
    expect(
      new UpstreamAdaptations().learn(
        'g',
        'm',
        google('Thinking level is not supported for this model.'),
        gemini(512),
      ),
    ).toBeUndefined()
  })

  it('a gemma- name goes without a budget from the first request; Gemma 4 at its level, Gemma 3 with no thinking config', () => {
    const request = (thinking: unknown) =>
      decodeClientRequest(
        'messages',
        {
          model: 'c',
          max_tokens: 32000,
          thinking,
          output_config: {effort: 'high'},
          messages: [{role: 'user', content: 'hi'}],
        },
        {},
      )
    const config = (sent: {body: Buffer}) =>
      (JSON.parse(sent.body.toString()) as {generationConfig: Record<string, unknown>}).generationConfig
    for (const model of ['gemma-4-31b-it', 'models/gemma-4-26b-a4b-it']) {
      const adaptive = encodeUpstreamRequest(request({type: 'adaptive'}), 'gemini', model)
      expect(config(adaptive).thinkingConfig).toEqual({thinkingLevel: 'HIGH', includeThoughts: true})
      expect(adaptive.sent.thinkingBudget).toBeUndefined()
      // (Gemma 4 cannot stop thinking: the least it takes)
      const off = encodeUpstreamRequest(request({type: 'disabled'}), 'gemini', model)
      expect(config(off).thinkingConfig).toEqual({thinkingLevel: 'MINIMAL'})
    }
    // Gemma 3 does not think: no thinking config at all, whatever the client asked
    for (const model of ['gemma-3-27b-it', 'google/gemma-3n-e4b-it']) {
      for (const thinking of [{type: 'adaptive'}, {type: 'disabled'}, {type: 'enabled', budget_tokens: 4096}])
        expect(config(encodeUpstreamRequest(request(thinking), 'gemini', model))).toEqual({
          maxOutputTokens: 32000,
        })
    }
    // a Gemini name keeps its budget
    const gemini = encodeUpstreamRequest(request({type: 'adaptive'}), 'gemini', 'gemini-2.5-flash')
    expect(gemini.sent.thinkingBudget).toBe(24576)
  })

  it.each([
    ['none', 'MINIMAL'],
    ['minimal', 'MINIMAL'],
    ['low', 'MINIMAL'],
    ['medium', 'HIGH'],
    ['high', 'HIGH'],
    ['xhigh', 'HIGH'],
  ])("Codex's effort %s to Gemma 4: thinkingLevel %s", (effort, level) => {
    const codex = decodeClientRequest(
      'responses',
      {model: 'gpt-5', input: 'hi', reasoning: {effort, summary: 'auto'}},
      {},
    )
    const sent = encodeUpstreamRequest(codex, 'gemini', 'gemma-4-31b-it')
    const thinking = (JSON.parse(sent.body.toString()) as {generationConfig: {thinkingConfig: unknown}})
      .generationConfig.thinkingConfig
    expect(thinking).toMatchObject({thinkingLevel: level})
    expect(thinking).not.toHaveProperty('thinkingBudget')
    expect(sent.sent.thinkingLevel).toBe(level)
  })

  it.each([
    [{type: 'enabled', budget_tokens: 1024}, undefined, 'MINIMAL'],
    [{type: 'enabled', budget_tokens: 16000}, undefined, 'HIGH'],
    [{type: 'adaptive'}, 'max', 'HIGH'],
    [{type: 'adaptive'}, 'low', 'MINIMAL'],
  ])("Claude Code's thinking %j, effort %s, to Gemma 4: thinkingLevel %s", (thinking, effort, level) => {
    const claude = decodeClientRequest(
      'messages',
      {
        model: 'c',
        max_tokens: 32000,
        thinking,
        ...(effort ? {output_config: {effort}} : {}),
        messages: [{role: 'user', content: 'hi'}],
      },
      {},
    )
    const sent = encodeUpstreamRequest(claude, 'gemini', 'gemma-4-26b-a4b-it')
    expect(JSON.parse(sent.body.toString()).generationConfig.thinkingConfig).toEqual({
      thinkingLevel: level,
      includeThoughts: true,
    })
  })

  it("Gemma 4's refusal of the level sent, and Gemma 3's of any thinking config: learned per model, sent again without", () => {
    const claude = decodeClientRequest(
      'messages',
      {
        model: 'c',
        max_tokens: 1000,
        thinking: {type: 'adaptive'},
        output_config: {effort: 'high'},
        messages: [{role: 'user', content: 'hi'}],
      },
      {},
    )
    const config = (sent: {body: Buffer}) =>
      (JSON.parse(sent.body.toString()) as {generationConfig: Record<string, unknown>}).generationConfig
    const a = new UpstreamAdaptations()
    const first = encodeUpstreamRequest(claude, 'gemini', 'gemma-4-31b-it')
    expect(
      a.learn(
        'google',
        'gemma-4-31b-it',
        google('Thinking level is not supported for this model.'),
        first.sent,
      ),
    ).toBe('refused thinkingLevel HIGH: sent again without it, the model decides')
    const level = a.get('google', 'gemma-4-31b-it')!
    expect(level).toEqual({noThinkingLevel: true})
    const again = encodeUpstreamRequest(claude, 'gemini', 'gemma-4-31b-it', {}, level)
    expect(config(again)).toEqual({maxOutputTokens: 1000, thinkingConfig: {includeThoughts: true}})
    // a request with thinking off (MINIMAL, nothing else in its config): no config at all, not `{}`
    const off = decodeClientRequest(
      'messages',
      {model: 'c', max_tokens: 1000, thinking: {type: 'disabled'}, messages: [{role: 'user', content: 'hi'}]},
      {},
    )
    expect(config(encodeUpstreamRequest(off, 'gemini', 'gemma-4-31b-it'))).toEqual({
      maxOutputTokens: 1000,
      thinkingConfig: {thinkingLevel: 'MINIMAL'},
    })
    expect(config(encodeUpstreamRequest(off, 'gemini', 'gemma-4-31b-it', {}, level))).toEqual({
      maxOutputTokens: 1000,
    })
    // another name for Gemma 3 (an alias): its budget refused in Google's words, the whole config left out
    const alias = encodeUpstreamRequest(claude, 'gemini', 'my-gemma3')
    expect(config(alias).thinkingConfig).toBeDefined()
    expect(
      a.learn('google', 'my-gemma3', google('Thinking is not enabled for models/my-gemma3'), alias.sent),
    ).toBe('refused thinkingConfig: sent again without it (the model does not think)')
    const none = a.get('google', 'my-gemma3')!
    expect(none).toEqual({noThinking: true})
    expect(describeAdaptation(none)).toEqual(['thinkingConfig left out (the model does not think)'])
    expect(config(encodeUpstreamRequest(claude, 'gemini', 'my-gemma3', {}, none))).toEqual({
      maxOutputTokens: 1000,
    })
    // Gemini CLI passed through to it: the same
    const body = {
      contents: [{role: 'user', parts: [{text: 'hi'}]}],
      generationConfig: {temperature: 1, thinkingConfig: {thinkingBudget: 0}},
    }
    const b = new UpstreamAdaptations()
    expect(
      b.learnPassedGeminiThinking(
        'google',
        'my-gemma3',
        google('Thinking is not enabled for models/my-gemma3'),
        geminiThinkingSent(body),
        undefined,
      ),
    ).toBe('refused thinkingConfig: sent again without it (the model does not think)')
    expect(JSON.parse(adaptPassedGemini(body, b.get('google', 'my-gemma3')!).toString())).toEqual({
      contents: body.contents,
      generationConfig: {temperature: 1},
    })
  })

  it("caps max_tokens at Anthropic's stated limit, with a thinking budget kept under it, and learns nothing else from a Messages upstream", () => {
    const anthropic = (message: string) =>
      JSON.stringify({type: 'error', error: {type: 'invalid_request_error', message}})
    const sent = {
      upstream: 'messages' as const,
      fields: ['model', 'max_tokens', 'messages', 'temperature'],
      maxTokens: 64000,
    }
    const a = new UpstreamAdaptations()
    expect(
      a.learn(
        'a',
        'm',
        anthropic(
          'max_tokens: 64000 > 32000, which is the maximum allowed number of output tokens for claude-opus-4-20250514',
        ),
        sent,
      ),
    ).toBe('refused max_tokens 64000: sent again with 32000, its limit')
    expect(
      a.learn('a', 'n', anthropic('`max_tokens` must be greater than `thinking.budget_tokens`.'), sent),
    ).toBeUndefined()
    // a sampling setting the model refuses by name is left out (Opus 4.7 on: see the next test)
    expect(a.learn('a', 'n', anthropic("'temperature' is not supported."), sent)).toBe(
      'refused temperature: sent again without it',
    )
    expect(
      a.learn('a', 'o', anthropic('messages: temperature is not supported in a tool result'), sent),
    ).toBeUndefined()
    const client = decodeClientRequest(
      'chat',
      {model: 'c', max_tokens: 64000, reasoning_effort: 'high', messages: [{role: 'user', content: 'hi'}]},
      {model: 'c', stream: false},
    )
    const body = (max: number) =>
      JSON.parse(encodeUpstreamRequest(client, 'messages', 'm', {}, {maxTokens: max}).body.toString())
    expect(body(32000)).toMatchObject({max_tokens: 32000, thinking: {type: 'enabled', budget_tokens: 24000}})
    expect(body(8192)).toMatchObject({max_tokens: 8192, thinking: {type: 'enabled', budget_tokens: 8191}})
    expect(body(1000)).not.toHaveProperty('thinking')
  })

  it("learns the thinking form and the sampling Anthropic's current models refuse, only from their words and only when sent", () => {
    const anthropic = (message: string) =>
      JSON.stringify({type: 'error', error: {type: 'invalid_request_error', message}})
    const enabledRefused = anthropic(
      '"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.',
    )
    const adaptiveRefused = anthropic('adaptive thinking is not supported on this model')
    const fields = ['model', 'max_tokens', 'messages', 'thinking']
    const enabled = {upstream: 'messages' as const, fields, thinking: 'enabled' as const}
    const adaptive = {
      upstream: 'messages' as const,
      fields: [...fields, 'output_config'],
      thinking: 'adaptive' as const,
      thinkingDisplay: true,
    }
    const a = new UpstreamAdaptations()
    expect(a.learn('p', 'x', enabledRefused, enabled)).toBe(
      'refused thinking.type enabled: sent again as adaptive thinking with output_config.effort',
    )
    expect(a.get('p', 'x')).toEqual({thinking: 'adaptive'})
    // the same words to a request that sent adaptive (or no thinking): nothing to learn
    expect(a.learn('p', 'y', enabledRefused, adaptive)).toBeUndefined()
    expect(a.learn('p', 'y', enabledRefused, {upstream: 'messages', fields})).toBeUndefined()
    expect(a.learn('p', 'y', adaptiveRefused, adaptive)).toBe(
      'refused adaptive thinking: sent again with thinking.type enabled and a budget',
    )
    expect(a.get('p', 'y')).toEqual({thinking: 'enabled'})
    expect(a.learn('p', 'z', adaptiveRefused, enabled)).toBeUndefined()
    // the same words through a proxy: Bedrock's prefix, LiteLLM's escaped quotes
    expect(
      a.learn(
        'p',
        'b',
        anthropic('The model returned the following errors: temperature is deprecated for this model.'),
        {upstream: 'messages', fields: ['model', 'messages', 'temperature']},
      ),
    ).toBe('refused temperature: sent again without it')
    expect(
      a.learn(
        'p',
        'l',
        anthropic(
          'litellm.BadRequestError: AnthropicException - {\\"type\\":\\"error\\",\\"error\\":{\\"message\\":\\"\\\\\\"thinking.type.enabled\\\\\\" is not supported for this model.\\"}}',
        ),
        enabled,
      ),
    ).toBe('refused thinking.type enabled: sent again as adaptive thinking with output_config.effort')
    // a FastAPI server's refusal of output_config by its place in the body
    expect(
      a.learn(
        'p',
        'f',
        JSON.stringify({
          detail: [
            {
              type: 'extra_forbidden',
              loc: ['body', 'output_config'],
              msg: 'Extra inputs are not permitted',
              input: {effort: 'high'},
            },
          ],
        }),
        adaptive,
        422,
      ),
    ).toBe('refused output_config: sent again without it')
    // Opus 4.7's refusal of sampling settings, each by its name, only when it was sent
    const sampling = {upstream: 'messages' as const, fields: ['model', 'messages', 'top_p']}
    expect(a.learn('p', 's', anthropic('top_p is deprecated for this model.'), sampling)).toBe(
      'refused top_p: sent again without it',
    )
    expect(
      a.learn('p', 't', anthropic('temperature is deprecated for this model.'), sampling),
    ).toBeUndefined()
    // a server that does not know `thinking.display` or `output_config` (a pydantic-style refusal)
    expect(
      a.learn('p', 'd', anthropic('thinking.adaptive.display: Extra inputs are not permitted'), adaptive),
    ).toBe('refused thinking.display: sent again without it')
    expect(
      a.learn('p', 'd2', anthropic('thinking.adaptive.display: Extra inputs are not permitted'), {
        ...adaptive,
        thinkingDisplay: undefined,
      }),
    ).toBeUndefined()
    expect(a.learn('p', 'o', anthropic('output_config: Extra inputs are not permitted'), adaptive)).toBe(
      'refused output_config: sent again without it',
    )
    expect(
      a.learn('p', 'o2', anthropic('output_config.effort: Input should be low, medium or high'), adaptive),
    ).toBeUndefined()
    expect(describeAdaptation({thinking: 'adaptive'})).toEqual([
      'thinking sent as adaptive, with output_config.effort',
    ])
    expect(describeAdaptation({thinking: 'enabled', drop: ['temperature']})).toEqual([
      'sent without temperature',
      'thinking sent as enabled, with a budget (adaptive refused)',
    ])

    // what was learned is what the next request sends
    const client = decodeClientRequest(
      'responses',
      {model: 'c', input: 'hi', reasoning: {effort: 'medium', summary: 'auto'}, temperature: 0.5},
      {model: 'c', stream: false},
    )
    const body = (adapt?: UpstreamAdaptation, model = 'm') =>
      JSON.parse(encodeUpstreamRequest(client, 'messages', model, {}, adapt).body.toString())
    expect(body()).toMatchObject({thinking: {type: 'enabled', budget_tokens: 10000}})
    expect(body()).not.toHaveProperty('temperature')
    expect(body({thinking: 'adaptive'})).toMatchObject({
      thinking: {type: 'adaptive', display: 'summarized'},
      output_config: {effort: 'medium'},
    })
    expect(body({thinking: 'adaptive', drop: ['thinking.display', 'output_config']})).toEqual(
      expect.objectContaining({thinking: {type: 'adaptive'}}),
    )
    expect(body({thinking: 'adaptive', drop: ['output_config']})).not.toHaveProperty('output_config')
    expect(body({thinking: 'enabled'}, 'claude-opus-4-8')).toMatchObject({
      thinking: {type: 'enabled', budget_tokens: 10000},
    })
  })
})

describe("a thinking form refused in the words of an Anthropic-compatible server that is not Anthropic's", () => {
  const bad = (message: string) =>
    JSON.stringify({type: 'error', error: {type: 'bad_request_error', message, http_code: '400'}})
  const invalid = (message: string) =>
    JSON.stringify({type: 'error', error: {type: 'invalid_request_error', message}})

  it("MiniMax-M3's refusal of thinking.type enabled: sent again as adaptive", () => {
    const words = bad('invalid params, invalid thinking.type: "enabled" (allowed: adaptive, disabled) (2013)')
    const codex = decodeClientRequest(
      'responses',
      {model: 'gpt-5.5', input: 'hi', reasoning: {effort: 'high'}},
      {model: 'gpt-5.5', stream: true},
    )
    const first = encodeUpstreamRequest(codex, 'messages', 'MiniMax-M3')
    expect(JSON.parse(first.body.toString()).thinking).toMatchObject({type: 'enabled'})
    const a = new UpstreamAdaptations()
    expect(a.learn('minimax', 'MiniMax-M3', words, first.sent)).toBe(
      'refused thinking.type enabled: sent again as adaptive thinking with output_config.effort',
    )
    expect(a.get('minimax', 'MiniMax-M3')).toEqual({thinking: 'adaptive'})
    const again = JSON.parse(
      encodeUpstreamRequest(
        codex,
        'messages',
        'MiniMax-M3',
        {},
        a.get('minimax', 'MiniMax-M3'),
      ).body.toString(),
    )
    expect(again.thinking).toEqual({type: 'adaptive'})
    expect(again.output_config).toEqual({effort: 'high'})
    // its escaped form through a relay; and nothing for a request that sent adaptive, or for the
    // words with adaptive not among those allowed
    expect(
      new UpstreamAdaptations().learn(
        'p',
        'm',
        bad('invalid params, invalid thinking.type: \\"enabled\\" (allowed: adaptive, disabled) (2013)'),
        first.sent,
      ),
    ).toMatch(/^refused thinking.type enabled/)
    expect(
      new UpstreamAdaptations().learn('p', 'm', words, {...first.sent, thinking: 'adaptive'}),
    ).toBeUndefined()
    expect(
      new UpstreamAdaptations().learn(
        'p',
        'm',
        bad('invalid params, invalid thinking.type: "enabled" (allowed: disabled) (2013)'),
        first.sent,
      ),
    ).toBeUndefined()
  })

  const REFUSALS = [
    // zod (freellmapi #632), zod 4
    "Invalid request: thinking.type: Invalid enum value. Expected 'enabled' | 'disabled', received 'adaptive'",
    'thinking.type: Invalid option: expected one of "enabled"|"disabled"',
    // pydantic's literal
    "thinking.type: Input should be 'enabled' or 'disabled'",
    "body.thinking.type: Input should be 'enabled' or 'disabled'",
    // MiniMax's form
    'invalid params, invalid thinking.type: "adaptive" (allowed: enabled, disabled) (2013)',
    // a relay's validation (9router #2023), DashScope's Anthropic endpoint (claude-code #29531)
    'Validation: `thinking.type` must be `enabled` or `disabled`',
    'event:error\ndata:{"code":"InvalidParameter","message":"Only \'enabled\' and \'disabled\' are supported for thinking; \'adaptive\' is not supported.","request_id":"647ffb95"}\n\n',
    // pydantic's discriminator (learned before)
    "Input tag 'adaptive' found using 'type' does not match any of the expected tags: 'disabled', 'enabled'",
    // pydantic's refusal of a member its schema does not have, and its plain-text form
    'thinking.adaptive: Extra inputs are not permitted',
    '1 validation error for MessagesRequest\nthinking.adaptive\n  Extra inputs are not permitted [type=extra_forbidden, input_value={}, input_type=dict]',
  ]

  it("Claude Code's adaptive thinking refused by a relay's schema: sent again enabled with a budget", () => {
    const cc = {
      model: 'qwen3.7-plus',
      max_tokens: 32000,
      thinking: {type: 'adaptive', display: 'omitted'},
      output_config: {effort: 'high'},
      messages: [{role: 'user', content: 'x'}],
    }
    for (const message of REFUSALS) {
      const a = new UpstreamAdaptations()
      expect(a.learn('relay', 'qwen3.7-plus', invalid(message), sentOfPassedMessages(cc)), message).toBe(
        'refused adaptive thinking: sent again with thinking.type enabled and a budget',
      )
      expect(a.get('relay', 'qwen3.7-plus'), message).toEqual({thinking: 'enabled'})
      const again = JSON.parse(adaptPassedMessages(cc, a.get('relay', 'qwen3.7-plus')!).toString())
      expect(again.thinking, message).toMatchObject({type: 'enabled'})
      expect((again.thinking as {budget_tokens: number}).budget_tokens, message).toBeGreaterThanOrEqual(1024)
    }
  })

  it("FastAPI's 422 for adaptive thinking, by its place and the input refused", () => {
    const sent = sentOfPassedMessages({
      model: 'qwen3-coder-30b',
      max_tokens: 32000,
      thinking: {type: 'adaptive'},
      messages: [{role: 'user', content: 'x'}],
    })
    const detail = (loc: string[], input: unknown) =>
      JSON.stringify({
        detail: [
          {
            type: 'literal_error',
            loc,
            msg: "Input should be 'enabled' or 'disabled'",
            input,
            ctx: {expected: "'enabled' or 'disabled'"},
          },
        ],
      })
    const a = new UpstreamAdaptations()
    expect(a.learn('omlx', 'q', detail(['body', 'thinking', 'type'], 'adaptive'), sent, 422)).toBe(
      'refused adaptive thinking: sent again with thinking.type enabled and a budget',
    )
    // another place, or another input: the client's to see
    expect(
      new UpstreamAdaptations().learn(
        'omlx',
        'q',
        detail(['body', 'tool_choice', 'type'], 'adaptive'),
        sent,
        422,
      ),
    ).toBeUndefined()
    expect(
      new UpstreamAdaptations().learn('omlx', 'q', detail(['body', 'thinking', 'type'], 'x'), sent, 422),
    ).toBeUndefined()
    // the member it does not have, pydantic's extra_forbidden
    const extra = JSON.stringify({
      detail: [
        {
          type: 'extra_forbidden',
          loc: ['body', 'thinking', 'adaptive'],
          msg: 'Extra inputs are not permitted',
          input: {},
        },
      ],
    })
    expect(new UpstreamAdaptations().learn('omlx', 'q', extra, sent, 422)).toBe(
      'refused adaptive thinking: sent again with thinking.type enabled and a budget',
    )
  })

  it("a part of adaptive thinking refused is not adaptive thinking refused (block_binding's own rule)", () => {
    const sent = sentOfPassedMessages({
      model: 'm',
      max_tokens: 32000,
      thinking: {type: 'adaptive'},
      messages: [{role: 'user', content: 'x'}],
    })
    expect(
      new UpstreamAdaptations().learn(
        'p',
        'm',
        invalid('thinking.adaptive.block_binding: Extra inputs are not permitted'),
        sent,
      ),
    ).toBeUndefined()
  })

  it('learns none of them from a request that sent enabled, or no thinking', () => {
    const enabled = {
      upstream: 'messages' as const,
      fields: ['model', 'messages', 'thinking'],
      thinking: 'enabled' as const,
    }
    const none = {upstream: 'messages' as const, fields: ['model', 'messages']}
    for (const message of REFUSALS) {
      expect(new UpstreamAdaptations().learn('p', 'm', invalid(message), enabled), message).toBeUndefined()
      expect(new UpstreamAdaptations().learn('p', 'm', invalid(message), none), message).toBeUndefined()
    }
    // words about another field's enum
    const adaptive = {...enabled, thinking: 'adaptive' as const}
    expect(
      new UpstreamAdaptations().learn(
        'p',
        'm',
        invalid("tool_choice.type: Input should be 'auto', 'any' or 'tool'"),
        adaptive,
      ),
    ).toBeUndefined()
  })
})

describe("Ollama's Anthropic endpoint for a model without thinking, and a Messages body passed through", () => {
  const ollama = (message: string) =>
    JSON.stringify({type: 'error', error: {type: 'invalid_request_error', message}, request_id: 'req_1'})
  const fields = ['model', 'messages', 'system', 'max_tokens', 'thinking', 'context_management', 'stream']

  it('learns thinking away (and the effort it reads as a level), only what was sent, from its words alone', () => {
    const a = new UpstreamAdaptations()
    const noThinking = ollama('"llama3.1:8b" does not support thinking')
    expect(a.learn('o', 'l', noThinking, {upstream: 'messages', fields, thinking: 'enabled'})).toBe(
      'refused thinking (a model without it): sent again without thinking',
    )
    expect(a.get('o', 'l')).toEqual({drop: ['thinking']})
    expect(
      a.learn('o', 'e', noThinking, {
        upstream: 'messages',
        fields: [...fields, 'output_config'],
        thinking: 'enabled',
        effort: 'high',
      }),
    ).toBe('refused thinking (a model without it): sent again without thinking and output_config.effort')
    // adaptive alone asks Ollama for nothing: its effort is what was refused
    expect(
      a.learn('o', 'a', ollama('think value "high" is not supported for this model'), {
        upstream: 'messages',
        fields: [...fields, 'output_config'],
        thinking: 'adaptive',
        effort: 'high',
      }),
    ).toBe('refused thinking (a model without it): sent again without output_config.effort')
    // nothing sent that asks for thinking, or the words inside another message: nothing learned
    expect(
      a.learn('o', 'n', noThinking, {upstream: 'messages', fields: ['model', 'messages']}),
    ).toBeUndefined()
    expect(
      a.learn('o', 'w', ollama('the model said: "llama3.1:8b" does not support thinking, so what'), {
        upstream: 'messages',
        fields,
        thinking: 'enabled',
      }),
    ).toBeUndefined()
    expect(describeAdaptation({drop: ['thinking', 'output_config.effort']})).toEqual([
      'sent without thinking, output_config.effort',
    ])
  })

  it("a server that does not know Claude Code's context_management: learned only when sent", () => {
    const a = new UpstreamAdaptations()
    const refused = ollama('context_management: Extra inputs are not permitted')
    expect(a.learn('r', 'g', refused, {upstream: 'messages', fields})).toBe(
      'refused context_management: sent again without it',
    )
    expect(a.learn('r', 'h', refused, {upstream: 'messages', fields: ['model', 'messages']})).toBeUndefined()
  })

  it('what rewrites a Messages body passed through, and how', () => {
    expect(rewritesMessagesBody(undefined)).toBe(false)
    expect(rewritesMessagesBody({thinkOpen: true, noWebSearch: true, claude: {noPrefill: true}})).toBe(false)
    // (a top-level field learned away is cut out of the bytes, no parse: proxy.ts `passedBytes`)
    expect(rewritesMessagesBody({drop: ['thinking']})).toBe(false)
    for (const rule of [
      {drop: ['output_config.effort']},
      {thinking: 'adaptive' as const},
      {maxTokens: 8192},
      {minOutputTokens: 16},
    ])
      expect(rewritesMessagesBody(rule)).toBe(true)
    const passed = (body: Record<string, unknown>, adapt: UpstreamAdaptation) =>
      JSON.parse(String(adaptPassedMessages(body, adapt))) as Record<string, unknown>
    const enabled = {
      model: 'm',
      max_tokens: 32000,
      thinking: {budget_tokens: 2000, type: 'enabled', display: 'omitted'},
      messages: [],
    }
    // a small budget is a low effort; display as the client asked; key order kept
    expect(JSON.stringify(passed(enabled, {thinking: 'adaptive'}))).toBe(
      JSON.stringify({
        model: 'm',
        max_tokens: 32000,
        thinking: {type: 'adaptive', display: 'omitted'},
        messages: [],
        output_config: {effort: 'low'},
      }),
    )
    // adaptive to enabled: the effort's budget under max_tokens, output_config's other parts kept
    const adaptive = {
      model: 'm',
      max_tokens: 2000,
      thinking: {type: 'adaptive'},
      output_config: {effort: 'medium', format: {type: 'json_schema'}},
      messages: [],
    }
    expect(passed(adaptive, {thinking: 'enabled'})).toEqual({
      model: 'm',
      max_tokens: 2000,
      thinking: {type: 'enabled', budget_tokens: 1999},
      output_config: {format: {type: 'json_schema'}},
      messages: [],
    })
    // under Anthropic's 1 024: no thinking at all
    expect(passed({...adaptive, max_tokens: 1000}, {thinking: 'enabled'})).not.toHaveProperty('thinking')
    // a form the body already has, or no thinking: as it came
    expect(passed(enabled, {thinking: 'enabled'})).toEqual(enabled)
    expect(passed({model: 'm', messages: []}, {thinking: 'adaptive'})).toEqual({model: 'm', messages: []})
    // the effort dropped as the only part of output_config: no empty object left
    expect(passed({model: 'm', output_config: {effort: 'high'}}, {drop: ['output_config.effort']})).toEqual({
      model: 'm',
    })
  })
})

describe("Claude 5's refusals, learned for a name that does not say it", () => {
  const anthropic = (message: string) =>
    JSON.stringify({type: 'error', error: {type: 'invalid_request_error', message}})
  const fields = ['model', 'max_tokens', 'messages', 'tools', 'tool_choice']
  const forced = {upstream: 'messages' as const, fields, forcedTool: true}
  const forcedRefused = anthropic('tool_choice: type "tool" and "any" are not supported for this model.')
  const thinksBeside = anthropic('Thinking may not be enabled when tool_choice forces tool use.')
  const sonnet55 = anthropic(
    '"thinking.type.disabled" is not supported for this model. Use "thinking.type.between_tools" for the lowest thinking setting, or "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.',
  )
  const opus55 = anthropic(
    '"thinking.type.disabled" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.',
  )
  const bound = anthropic(
    'messages.1.content.0: Invalid `signature` in `thinking` block. The block is bound to a different conversation. Remove the block, or set `thinking.block_binding.prefix_mismatch_behavior` to "drop_block". That setting requires the `thinking-binding-controls-2026-08-01` value in the `anthropic-beta` header.',
  )

  it('learns each from its words, only when the request sent what it refuses', () => {
    const a = new UpstreamAdaptations()
    expect(a.learn('p', 'f', forcedRefused, forced)).toBe(
      'refused a forced tool_choice: sent again with tool_choice auto, the call asked for at the end of the prompt',
    )
    expect(a.get('p', 'f')).toEqual({claude: {noForcedTools: true}})
    // Bedrock's prefix
    expect(
      a.learn(
        'p',
        'fb',
        anthropic(`The model returned the following errors: ${JSON.parse(forcedRefused).error.message}`),
        forced,
      ),
    ).toMatch(/^refused a forced tool_choice/)
    // not forced: nothing to learn
    expect(a.learn('p', 'g', forcedRefused, {upstream: 'messages', fields})).toBeUndefined()

    expect(a.learn('p', 't', thinksBeside, forced)).toBe(
      'thinks unless told not to: sent again with thinking.type disabled',
    )
    expect(a.get('p', 't')).toEqual({claude: {thinkingOff: 'disabled'}})
    // the request had thinking on: its own doing, nothing learned
    expect(a.learn('p', 't2', thinksBeside, {...forced, thinking: 'adaptive' as const})).toBeUndefined()

    const disabled = {
      upstream: 'messages' as const,
      fields: [...fields, 'thinking'],
      thinkingOff: 'disabled' as const,
    }
    expect(a.learn('p', 's', sonnet55, disabled)).toBe(
      'refused thinking.type disabled: sent again with thinking.type between_tools',
    )
    expect(a.learn('p', 'o', opus55, disabled)).toBe(
      'refused thinking.type disabled: sent again with output_config.effort low (it cannot stop thinking)',
    )
    expect(a.get('p', 'o')).toEqual({claude: {thinkingOff: 'low'}})
    expect(
      a.learn('p', 'b', anthropic('"thinking.type.between_tools" is not supported for this model.'), {
        ...disabled,
        thinkingOff: 'between_tools' as const,
      }),
    ).toBe('refused thinking.type between_tools: sent again with thinking.type disabled')
    // the refusal of `enabled` is not one of `disabled`
    expect(a.learn('p', 'e', opus55, {upstream: 'messages', fields, thinking: 'enabled' as const})).toBe(
      undefined,
    )

    expect(a.learn('p', 'k', bound, {upstream: 'messages', fields})).toBe(
      'refused a thinking block bound to another conversation: sent again with block_binding drop_block',
    )
    // sent with the setting already: the 400 is the client's
    expect(
      a.learn('p', 'k2', bound, {upstream: 'messages', fields, beta: 'thinking-binding-controls-2026-08-01'}),
    ).toBe(undefined)
    // a proxy that does not know the setting (its beta header stripped on the way)
    const unknown = anthropic('thinking.adaptive.block_binding: Extra inputs are not permitted')
    const beta = {upstream: 'messages' as const, fields, beta: 'thinking-binding-controls-2026-08-01'}
    expect(a.learn('p', 'x', unknown, beta)).toBe('refused thinking.block_binding: sent again without it')
    expect(a.get('p', 'x')).toEqual({claude: {noBlockBinding: true}})
    expect(a.learn('p', 'x2', unknown, {upstream: 'messages', fields})).toBeUndefined()
    expect(describeAdaptation({claude: {noBlockBinding: true}})).toEqual([
      'thinking blocks sent without block_binding (refused)',
    ])
    expect(
      describeAdaptation({claude: {thinkingOff: 'low', noForcedTools: true, dropUnboundThinking: true}}),
    ).toEqual([
      'thinking turned down to output_config.effort low (it cannot be turned off)',
      'a forced tool_choice sent as auto, the call asked for at the end of the prompt',
      "thinking blocks sent with block_binding drop_block (a changed conversation's are dropped)",
    ])
  })

  it('what was learned is what the next request sends, its beta header named', () => {
    const client = decodeClientRequest(
      'chat',
      {
        model: 'c',
        messages: [{role: 'user', content: 'hi'}],
        tools: [{type: 'function', function: {name: 'f', parameters: {type: 'object'}}}],
        tool_choice: 'required',
        reasoning_effort: 'none',
      },
      {model: 'c', stream: false},
    )
    const encoded = (claude: UpstreamAdaptation['claude']) =>
      encodeUpstreamRequest(client, 'messages', 'corp', {}, {claude})
    const body = (claude: UpstreamAdaptation['claude']) => JSON.parse(encoded(claude).body.toString())
    expect(body(undefined).tool_choice).toEqual({type: 'any'})
    expect(encoded(undefined).sent).toMatchObject({forcedTool: true})
    expect(body({noForcedTools: true}).tool_choice).toEqual({type: 'auto'})
    expect(body({thinkingOff: 'disabled'}).thinking).toEqual({type: 'disabled'})
    expect(encoded({thinkingOff: 'between_tools'}).sent).toMatchObject({thinkingOff: 'between_tools'})
    expect(encoded(undefined).sent.beta).toBeUndefined()
  })
})

describe('a server named for Claude that takes no cache marks on chat content parts', () => {
  it('learns it from a refusal that names cache_control, only when marks were sent', () => {
    const refused = JSON.stringify({
      error: {
        message: 'messages.0.content.0.cache_control: Extra inputs are not permitted',
        type: 'invalid_request_error',
      },
    })
    const a = new UpstreamAdaptations()
    const sent = {upstream: 'chat' as const, fields: ['model', 'messages'], cacheMarks: true}
    expect(a.learn('p', 'claude-x', refused, sent)).toBe(
      'refused cache_control on content parts: sent again without it',
    )
    expect(a.get('p', 'claude-x')).toEqual({noCacheMarks: true})
    expect(a.learn('p', 'y', refused, {...sent, cacheMarks: undefined})).toBeUndefined()
    expect(describeAdaptation({noCacheMarks: true})).toEqual([
      'no cache marks on content parts (cache_control refused)',
    ])
    // what was learned is what the next request sends
    const client = decodeClientRequest(
      'chat',
      {
        model: 'c',
        messages: [
          {role: 'system', content: 'sys'},
          {role: 'user', content: 'hi'},
        ],
      },
      {model: 'c', stream: false},
    )
    const body = (adapt?: UpstreamAdaptation) =>
      encodeUpstreamRequest(client, 'chat', 'anthropic/claude-opus-4.8', {}, adapt)
    expect(body().sent.cacheMarks).toBe(true)
    expect(body().body.toString()).toContain('cache_control')
    expect(body({noCacheMarks: true}).body.toString()).not.toContain('cache_control')
    expect(body({noCacheMarks: true}).sent.cacheMarks).toBeUndefined()
  })
})

describe('what is never learned, or learned only once', () => {
  const schemaSent = {fields: ['model', 'messages', 'response_format'], responseFormat: 'json_schema'}

  it("a client's own invalid schema is its 400 to see: JSON schemas still go to that model", () => {
    const a = new UpstreamAdaptations()
    const invalid = openai(
      "Invalid schema for response_format 'person': In context=(), 'additionalProperties' is required to be supplied and to be false.",
      'response_format',
    )
    expect(a.learn('o', 'm', invalid, schemaSent)).toBeUndefined()
    expect(
      a.learn(
        'o',
        'm',
        openai(
          "Invalid 'response_format.json_schema.name': empty string.",
          'response_format.json_schema.name',
        ),
        schemaSent,
      ),
    ).toBeUndefined()
    expect(a.get('o', 'm')).toBeUndefined()
  })

  it('two requests refused at once: the second goes again as the first learned, and learns nothing more', () => {
    const a = new UpstreamAdaptations()
    const refusal = openai(
      "Unsupported value: 'reasoning_effort' does not support 'minimal' with this model. Supported values are: 'low', 'medium', and 'high'.",
      'reasoning_effort',
    )
    // both encoded before anything was learned
    const sent = {fields: SENT, effort: 'minimal'}
    expect(a.learn('o', 'm', refusal, sent)).toBe('refused reasoning_effort minimal: sent again with low')
    expect(a.learn('o', 'm', refusal, sent)).toBe(
      'refused it too: sent again with what another request learned meanwhile',
    )
    expect(a.get('o', 'm')).toEqual({effort: {minimal: 'low'}})
    // the same for DeepSeek's JSON: JSON mode is kept
    const b = new UpstreamAdaptations()
    const deepseek = JSON.stringify({
      error: {message: 'This response_format type is unavailable now', param: null},
    })
    b.learn('d', 'm', deepseek, schemaSent)
    expect(b.learn('d', 'm', deepseek, schemaSent)).toMatch(/meanwhile/)
    expect(b.get('d', 'm')).toEqual({json: 'json_object'})
  })

  it('a reasoning summary refused (an unverified organization): only the summary goes, the effort stays', () => {
    const a = new UpstreamAdaptations()
    const refusal = openai(
      'Your organization must be verified to generate reasoning summaries.',
      'reasoning.summary',
    )
    const sent = {
      upstream: 'responses' as const,
      fields: ['model', 'input', 'reasoning', 'store', 'include'],
      effort: 'high',
    }
    expect(a.learn('o', 'm', refusal, sent)).toBe('refused reasoning.summary: sent again without it')
    const client = decodeClientRequest(
      'messages',
      {
        model: 'c',
        max_tokens: 64000,
        thinking: {type: 'enabled', budget_tokens: 30000},
        messages: [{role: 'user', content: 'hi'}],
      },
      {model: 'c', stream: false},
    )
    const body = JSON.parse(
      encodeUpstreamRequest(client, 'responses', 'm', {}, a.get('o', 'm')).body.toString(),
    )
    expect(body.reasoning).toEqual({effort: 'high'})
  })

  it("a Responses server that refuses prompt_cache_key (Azure Foundry, NIM): Claude Code's session key left out from then on", () => {
    const a = new UpstreamAdaptations()
    const client = decodeClientRequest(
      'messages',
      {
        model: 'c',
        max_tokens: 1000,
        metadata: {
          user_id: JSON.stringify({device_id: 'd'.repeat(64), account_uuid: '', session_id: 'sess-1'}),
        },
        messages: [{role: 'user', content: 'hi'}],
      },
      {model: 'c', stream: false},
    )
    const first = encodeUpstreamRequest(client, 'responses', 'm')
    expect(JSON.parse(first.body.toString()).prompt_cache_key).toBe('sess-1')
    for (const words of [
      '{"error":{"message":"Unrecognized request argument supplied: prompt_cache_key","type":"invalid_request_error","param":null,"code":null}}',
      '{"error":{"message":"Unsupported parameter(s): prompt_cache_key","type":"BadRequestError","param":null,"code":400}}',
    ]) {
      const b = new UpstreamAdaptations()
      expect(b.learn('o', 'm', words, first.sent)).toBe('refused prompt_cache_key: sent again without it')
    }
    a.learn('o', 'm', 'Unrecognized request argument supplied: prompt_cache_key', first.sent)
    const again = encodeUpstreamRequest(client, 'responses', 'm', {}, a.get('o', 'm'))
    const body = JSON.parse(again.body.toString())
    expect(body).not.toHaveProperty('prompt_cache_key')
    expect(body.input).toEqual([{type: 'message', role: 'user', content: [{type: 'input_text', text: 'hi'}]}])
  })

  it('a 422 teaches only that a JSON schema is refused: a validation error that echoes the body drops nothing', () => {
    const a = new UpstreamAdaptations()
    const fastapi = JSON.stringify({
      detail: [
        {
          type: 'missing',
          loc: ['body', 'messages', 2, 'content'],
          msg: 'Field required',
          input: {role: 'user', max_tokens: 1, reasoning_effort: 'high', temperature: 0.2},
        },
      ],
    })
    expect(a.learn('v', 'm', fastapi, {fields: SENT, maxTokens: 64000}, 422)).toBeUndefined()
    expect(a.get('v', 'm')).toBeUndefined()
    const older =
      'Failed to deserialize the JSON body into the target type: response_format: response_format.type `json_schema` is unavailable now at line 1 column 12440'
    expect(a.learn('d', 'm', older, schemaSent, 422)).toMatch(/^refused response_format json_schema/)
  })
})

describe("a FastAPI server's 422 for fields it does not take (Mistral)", () => {
  const extra = (...fields: string[]) =>
    fields.map((f) => ({
      type: 'extra_forbidden',
      loc: ['body', f],
      msg: 'Extra inputs are not permitted',
      input: 1,
    }))

  it('reads the refused top-level fields from every shape Mistral has answered with', () => {
    const now = JSON.stringify({
      object: 'error',
      message: {detail: extra('reasoning_effort', 'user')},
      type: 'invalid_request_error',
      param: null,
      code: null,
    })
    expect(extraFields(now)).toEqual(['reasoning_effort', 'user'])
    const older = JSON.stringify({
      object: 'error',
      message: JSON.stringify({detail: extra('max_completion_tokens')}),
      type: 'internal_error_proxy',
    })
    expect(extraFields(older)).toEqual(['max_completion_tokens'])
    expect(extraFields(JSON.stringify({detail: extra('user')}))).toEqual(['user'])
    // another field refused inside a message, a missing field, prose: nothing to go without
    const nested = {type: 'extra_forbidden', loc: ['body', 'messages', 3, 'user', 'name'], msg: 'x'}
    expect(extraFields(JSON.stringify({message: {detail: [...extra('user'), nested]}}))).toEqual([])
    // the reasoning of the history's assistant messages, which the history may go without
    const reasoning = {
      type: 'extra_forbidden',
      loc: ['body', 'messages', 3, 'assistant', 'reasoning_content'],
      msg: 'x',
    }
    expect(extraFields(JSON.stringify({message: {detail: [...extra('user'), reasoning]}}))).toEqual([
      'user',
      REASONING_HISTORY,
    ])
    // OpenRouter's details and Google's signature on a tool call, in a history Mistral got
    const details = {
      type: 'extra_forbidden',
      loc: ['body', 'messages', 1, 'assistant', 'reasoning_details'],
      msg: 'x',
    }
    const signature = {
      type: 'extra_forbidden',
      loc: ['body', 'messages', 1, 'assistant', 'tool_calls', 0, 'extra_content'],
      msg: 'x',
    }
    expect(extraFields(JSON.stringify({detail: [details, signature]}))).toEqual([
      'messages[].reasoning_details',
      'messages[].tool_calls[].extra_content',
    ])
    // extra_content anywhere else in a message is not a tool call's signature
    const elsewhere = {
      type: 'extra_forbidden',
      loc: ['body', 'messages', 1, 'assistant', 'extra_content'],
      msg: 'x',
    }
    expect(extraFields(JSON.stringify({detail: [elsewhere]}))).toEqual([])
    expect(
      extraFields(
        JSON.stringify({detail: [{type: 'missing', loc: ['body', 'model'], msg: 'Field required'}]}),
      ),
    ).toEqual([])
    expect(extraFields('Extra inputs are not permitted')).toEqual([])
  })

  it('drops them all at once, and only when each is one a request may go without', () => {
    const a = new UpstreamAdaptations()
    const refusal = JSON.stringify({object: 'error', message: {detail: extra('reasoning_effort', 'user')}})
    expect(a.learn('m', 'devstral', refusal, {fields: SENT}, 422)).toBe(
      'refused reasoning_effort, user: sent again without them',
    )
    expect(a.get('m', 'devstral')).toEqual({drop: ['reasoning_effort', 'user']})
    const b = new UpstreamAdaptations()
    const withMessages = JSON.stringify({message: {detail: extra('reasoning_effort', 'messages')}})
    expect(b.learn('m', 'devstral', withMessages, {fields: SENT}, 422)).toBeUndefined()
    expect(b.get('m', 'devstral')).toBeUndefined()
  })
})

describe("NVIDIA NIM's pydantic v1 text for a chat client's sampling fields (Kilo's penalties; research55 F5)", () => {
  const nim = (...fields: string[]) =>
    JSON.stringify({
      error: fields
        .map((f) => `body -> ${f}\n  Extra inputs are not permitted (type=extra_forbidden)`)
        .join('\n'),
    })
  const KILO = [
    'model',
    'messages',
    'stream',
    'stream_options',
    'tools',
    'presence_penalty',
    'frequency_penalty',
  ]

  it('reads every field it names, and nothing when one is another error or at another place', () => {
    expect(extraFields(nim('presence_penalty', 'frequency_penalty'))).toEqual([
      'presence_penalty',
      'frequency_penalty',
    ])
    const missing = JSON.stringify({
      error:
        'body -> presence_penalty\n  Extra inputs are not permitted (type=extra_forbidden)\nbody -> model\n  field required (type=value_error.missing)',
    })
    expect(extraFields(missing)).toEqual([])
    expect(extraFields(nim('messages -> 2 -> name'))).toEqual([])
    // a line of the server's own size is read by trims and a prefix, nothing that backtracks
    expect(
      extraFields(JSON.stringify({error: `body -> ${' \t'.repeat(30_000)}x\n  (type=extra_forbidden)`})),
    ).toEqual(['x'])
  })

  it('never learns a sampling field the message lists as one it takes, or names in words that are no refusal', () => {
    const fields = [...KILO, 'logprobs']
    const serde = JSON.stringify({
      error: {
        message:
          'Failed to deserialize the JSON body into the target type: unknown field `logprobs`, expected one of `model`, `messages`, `stream`, `presence_penalty`, `frequency_penalty`, `max_tokens` at line 1 column 200',
      },
    })
    expect(refusedField(serde, fields)).toBeUndefined()
    const prose = JSON.stringify({
      error: {
        message:
          'Sampling parameters like presence_penalty are ignored; the request failed because messages[1].content is empty',
      },
    })
    expect(refusedField(prose, fields)).toBeUndefined()
    // in a refusal's words, bare: learned
    expect(
      refusedField(
        JSON.stringify({error: {message: 'presence_penalty is not supported for this model'}}),
        fields,
      ),
    ).toBe('presence_penalty')
  })

  it('learns both away at once for a chat body passed through; a field the answer needs is never learned', () => {
    const a = new UpstreamAdaptations()
    expect(
      a.learn('nim', 'z-ai/glm-5.1', nim('presence_penalty', 'frequency_penalty'), {fields: KILO}, 422),
    ).toBe('refused presence_penalty, frequency_penalty: sent again without them')
    expect(a.get('nim', 'z-ai/glm-5.1')).toEqual({drop: ['presence_penalty', 'frequency_penalty']})
    const body = {
      model: 'z-ai/glm-5.1',
      messages: [{role: 'user', content: 'hi'}],
      presence_penalty: 0,
      frequency_penalty: 0,
    }
    expect(JSON.parse(adaptPassedChat(body, a.get('nim', 'z-ai/glm-5.1')!).toString())).toEqual({
      model: 'z-ai/glm-5.1',
      messages: [{role: 'user', content: 'hi'}],
    })
    const b = new UpstreamAdaptations()
    expect(b.learn('nim', 'm', nim('presence_penalty', 'tools'), {fields: KILO}, 422)).toBeUndefined()
    // (a seed, named in OpenAI's words with its param)
    const c = new UpstreamAdaptations()
    expect(
      c.learn('o', 'o3', openai("Unsupported parameter: 'seed' is not supported with this model.", 'seed'), {
        fields: [...KILO, 'seed'],
      }),
    ).toBe('refused seed: sent again without it')
  })
})

describe('the second reading: echoes, unrelated refusals, wordings', () => {
  const schemaSent = {fields: ['model', 'messages', 'response_format'], responseFormat: 'json_schema'}

  it("vLLM's 400 that echoes the request teaches nothing from the names in it", () => {
    const a = new UpstreamAdaptations()
    const vllm = JSON.stringify({
      object: 'error',
      message:
        "1 validation error for ChatCompletionRequest\n  Value error, When using `tool_choice`, `tools` must be set. [type=value_error, input_value={'model': 'm', 'reasoning_effort': 'high', 'max_tokens': 64000}, input_type=dict]",
      type: 'BadRequestError',
      param: null,
      code: 400,
    })
    expect(a.learn('v', 'm', vllm, {fields: SENT, maxTokens: 64000})).toBeUndefined()
    const echoed = openai(
      "[{'type': 'value_error', 'loc': ('body', 'messages', 2), 'input': {'content': 'why does reasoning_effort fail?'}}]",
      null,
    )
    expect(a.learn('v', 'm', echoed, {fields: SENT})).toBeUndefined()
    expect(a.get('v', 'm')).toBeUndefined()
  })

  it('an unrelated 400 right after another request learned reaches the client, with no retry', () => {
    const a = new UpstreamAdaptations()
    const sent = {fields: SENT, effort: 'minimal'}
    a.learn(
      'o',
      'm',
      openai(
        "Unsupported value: 'reasoning_effort' does not support 'minimal' with this model. Supported values are: 'low', 'medium', and 'high'.",
        'reasoning_effort',
      ),
      sent,
    )
    expect(a.learn('o', 'm', openai('This conversation is too long.', 'messages'), sent)).toBeUndefined()
    // the same refusal learned again teaches nothing new
    const b = new UpstreamAdaptations()
    const summary = openai(
      'Your organization must be verified to generate reasoning summaries.',
      'reasoning.summary',
    )
    const responses = {
      upstream: 'responses' as const,
      fields: ['model', 'input', 'reasoning'],
      effort: 'high',
    }
    expect(b.learn('o', 'm', summary, responses)).toBe('refused reasoning.summary: sent again without it')
    expect(b.learn('o', 'm', summary, {...responses, adaptedWith: b.get('o', 'm')})).toBeUndefined()
  })

  it("LM Studio's refusal of JSON mode is learned; a schema feature the model lacks is the client's", () => {
    const a = new UpstreamAdaptations()
    const lmstudio = JSON.stringify({error: "'response_format.type' must be 'json_schema' or 'text'"})
    expect(a.learn('l', 'm', lmstudio, {fields: schemaSent.fields, responseFormat: 'json_object'})).toMatch(
      /^refused response_format: sent again without it/,
    )
    const b = new UpstreamAdaptations()
    expect(
      b.learn('o', 'm', openai("'oneOf' is not supported.", 'response_format'), schemaSent),
    ).toBeUndefined()
    expect(
      b.learn('o', 'm', openai("Unknown parameter: 'response_format.json_schema.x'.", null), schemaSent),
    ).toBeUndefined()
    expect(
      b.learn(
        'o',
        'm',
        openai(
          "Invalid value: 'json_schema'. Supported values are: 'text' and 'json_object'.",
          'response_format.type',
        ),
        schemaSent,
      ),
    ).toMatch(/^refused response_format json_schema/)
  })
})

describe('the conversation rules a chat server holds history to', () => {
  const mistral = (message: string, type = 'invalid_request_error', code: string | null = null) =>
    JSON.stringify({object: 'error', message, type, param: null, code})
  const ids = mistral(
    'Tool call id was toolu_01A09q90qw90lq917835lq9 but must be a-z, A-Z, 0-9, with a length of 9.',
  )
  const order = mistral("Unexpected role 'user' after role 'tool'", 'invalid_request_message_order', '3230')
  const tooLong = (param: string | null) =>
    JSON.stringify({
      error: {
        message: `Invalid 'messages[10].tool_calls[0].id': string too long. Expected a string with maximum length 40, but got a string with length 53 instead.`,
        type: 'invalid_request_error',
        param,
        code: 'string_above_max_length',
      },
    })

  it("Mistral's ids and its order of roles, each learned once, in the order they come", () => {
    const a = new UpstreamAdaptations()
    expect(a.learn('m', 'devstral', ids, {fields: SENT})).toBe(
      'refused a tool call id (it takes 9 letters and digits): sent again with every id in that shape',
    )
    expect(a.get('m', 'devstral')).toEqual({toolIds: {alnum: 9}})
    const known = a.get('m', 'devstral')
    expect(a.learn('m', 'devstral', order, {fields: SENT, adaptedWith: known})).toBe(
      'refused a user message right after tool results: sent again with an assistant message between',
    )
    expect(a.get('m', 'devstral')).toEqual({toolIds: {alnum: 9}, bridgeToolTurns: true})
    // refused again with both applied: nothing new, the client sees it
    const both = a.get('m', 'devstral')
    expect(a.learn('m', 'devstral', order, {fields: SENT, adaptedWith: both})).toBeUndefined()
    expect(a.learn('m', 'devstral', ids, {fields: SENT, adaptedWith: both})).toBeUndefined()
  })

  it("OpenAI's length limit, from its param or (through a router that drops it) its message", () => {
    const a = new UpstreamAdaptations()
    expect(a.learn('o', 'gpt-4o', tooLong('messages[10].tool_calls[0].id'), {fields: SENT})).toBe(
      'refused a tool call id over 40 characters: sent again with long ids shortened',
    )
    expect(a.get('o', 'gpt-4o')).toEqual({toolIds: {max: 40}})
    const b = new UpstreamAdaptations()
    expect(b.learn('r', 'gpt-4o', tooLong(null), {fields: SENT})).toMatch(/over 40 characters/)
    // a Responses upstream's call_id
    const c = new UpstreamAdaptations()
    const responses = JSON.stringify({
      error: {
        message:
          "Invalid 'input[3].call_id': string too long. Expected a string with maximum length 64, but got a string with length 80 instead.",
        param: 'input[3].call_id',
      },
    })
    expect(c.learn('o', 'gpt-5', responses, {upstream: 'responses', fields: ['model', 'input']})).toMatch(
      /over 64 characters/,
    )
  })

  it('what is not such a refusal teaches nothing', () => {
    const a = new UpstreamAdaptations()
    // another string too long: a message's content, a tool's name
    const content = JSON.stringify({
      error: {
        message:
          "Invalid 'messages[1].content': string too long. Expected a string with maximum length 1048576, but got a string with length 2000000 instead.",
        param: 'messages[1].content',
      },
    })
    expect(a.learn('o', 'm', content, {fields: SENT})).toBeUndefined()
    // the words echoed from the conversation by a validation error (a user pasting Mistral's error)
    const echo = JSON.stringify({
      object: 'error',
      message:
        "1 validation error for ChatCompletionRequest [type=value_error, input_value={'messages': [{'content': \"why Unexpected role 'user' after role 'tool'?\"}]}, input_type=dict]",
      type: 'BadRequestError',
      param: null,
      code: 400,
    })
    expect(a.learn('v', 'm', echo, {fields: SENT})).toBeUndefined()
    // a Responses upstream has no tool messages; a Messages or Gemini one has rules of its own
    expect(a.learn('o', 'm', order, {upstream: 'responses', fields: ['model', 'input']})).toBeUndefined()
    expect(a.learn('a', 'm', ids, {upstream: 'messages', fields: ['model', 'messages']})).toBeUndefined()
    expect(a.learn('g', 'm', ids, {upstream: 'gemini', fields: ['contents']})).toBeUndefined()
    expect(a.get('o', 'm')).toBeUndefined()
  })

  it('a translated body goes with the ids shaped and the bridge in place, from what was learned', () => {
    const client = decodeClientRequest(
      'messages',
      {
        model: 'claude-sonnet-4-5',
        max_tokens: 100,
        messages: [
          {role: 'user', content: 'go'},
          {role: 'assistant', content: [{type: 'tool_use', id: 'toolu_9', name: 'Bash', input: {}}]},
          {
            role: 'user',
            content: [
              {type: 'tool_result', tool_use_id: 'toolu_9', content: 'ok'},
              {type: 'text', text: 'and now?'},
            ],
          },
        ],
      },
      {model: 'claude-sonnet-4-5', stream: false},
    )
    const {body} = encodeUpstreamRequest(
      client,
      'chat',
      'devstral',
      {},
      {toolIds: {alnum: 9}, bridgeToolTurns: true},
    )
    const messages = JSON.parse(body.toString()).messages
    expect(messages.map((m: any) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user'])
    expect(messages[2].tool_call_id).toBe(messages[1].tool_calls[0].id)
    expect(messages[2].tool_call_id).toMatch(/^[a-zA-Z0-9]{9}$/)
  })
})

describe("the history's reasoning refused back", () => {
  const cerebras = (field: string, n = 2) =>
    JSON.stringify({
      message: `messages.${n}.assistant.${field}: property 'messages.${n}.assistant.${field}' is unsupported`,
      type: 'invalid_request_error',
      param: 'validation_error',
      code: 'wrong_api_format',
    })

  it('Cerebras: reasoning_content refused, sent as reasoning; that refused too, sent without', () => {
    const a = new UpstreamAdaptations()
    expect(a.learn('c', 'gpt-oss-120b', cerebras('reasoning_content'), {fields: SENT})).toBe(
      'refused reasoning_content in its history: sent again as reasoning',
    )
    expect(a.get('c', 'gpt-oss-120b')).toEqual({reasoningHistory: 'reasoning'})
    const known = a.get('c', 'gpt-oss-120b')
    expect(a.learn('c', 'gpt-oss-120b', cerebras('reasoning'), {fields: SENT, adaptedWith: known})).toBe(
      'refused reasoning in its history: sent again without it',
    )
    expect(a.get('c', 'gpt-oss-120b')).toEqual({reasoningHistory: 'drop'})
    const dropped = a.get('c', 'gpt-oss-120b')
    expect(
      a.learn('c', 'gpt-oss-120b', cerebras('reasoning_content'), {fields: SENT, adaptedWith: dropped}),
    ).toBeUndefined()
  })

  it("Mistral's 422 for it, beside a top-level field: both go in one retry", () => {
    const mistral = JSON.stringify({
      object: 'error',
      message: {
        detail: [
          {
            type: 'extra_forbidden',
            loc: ['body', 'user'],
            msg: 'Extra inputs are not permitted',
            input: 'ada',
          },
          {type: 'extra_forbidden', loc: ['body', 'messages', 1, 'assistant', 'reasoning_content'], msg: 'x'},
        ],
      },
    })
    const b = new UpstreamAdaptations()
    expect(b.learn('m', 'magistral', mistral, {fields: SENT}, 422)).toBe(
      'refused user, reasoning_content in its history: sent again without them',
    )
    expect(b.get('m', 'magistral')).toEqual({drop: ['user'], reasoningHistory: 'drop'})
  })

  it("Mistral's 422 for Gemini 3's signatures in a history from OpenRouter or Google (a fallback): the history goes without them", () => {
    const refused = (...locs: unknown[][]) =>
      JSON.stringify({
        object: 'error',
        message: {
          detail: locs.map((loc) => ({type: 'extra_forbidden', loc, msg: 'Extra inputs are not permitted'})),
        },
      })
    const a = new UpstreamAdaptations()
    const both = refused(
      ['body', 'messages', 1, 'assistant', 'reasoning_details'],
      ['body', 'messages', 1, 'assistant', 'tool_calls', 0, 'extra_content'],
    )
    expect(a.learn('m', 'mistral-large', both, {fields: SENT, upstream: 'chat'}, 422)).toBe(
      "refused reasoning_details and its tool calls' extra_content in its history: sent again without them",
    )
    expect(a.get('m', 'mistral-large')).toEqual({reasoningHistory: 'drop'})
    // to another family's upstream the words teach nothing
    const b = new UpstreamAdaptations()
    expect(b.learn('m', 'x', both, {fields: SENT, upstream: 'messages'}, 422)).toBeUndefined()
  })

  it("the words in an echo of the client's conversation, under another param, or to a Responses upstream teach nothing", () => {
    const a = new UpstreamAdaptations()
    const echo = JSON.stringify({
      object: 'error',
      message:
        '1 validation error for ChatCompletionRequest\nmessages.1.content\n  Value error [type=value_error, input_value="why property \'messages.2.assistant.reasoning_content\' is unsupported?", input_type=str]',
      type: 'BadRequestError',
      param: null,
      code: 400,
    })
    expect(a.learn('v', 'qwq', echo, {fields: SENT})).toBeUndefined()
    const quoted = (words: string) =>
      JSON.stringify({
        error: {
          message: `Invalid 'messages[3].content': the user said "${words}"`,
          param: 'messages[3].content',
        },
      })
    expect(
      a.learn('o', 'm', quoted("Unexpected role 'user' after role 'tool'"), {fields: SENT}),
    ).toBeUndefined()
    expect(
      a.learn('o', 'm', quoted('Tool call id was x but must be a-z, A-Z, 0-9, with a length of 9.'), {
        fields: SENT,
      }),
    ).toBeUndefined()
    expect(
      a.learn('o', 'r', cerebras('reasoning_content'), {upstream: 'responses', fields: ['model', 'input']}),
    ).toBeUndefined()
    expect(a.get('o', 'm')).toBeUndefined()
    expect(a.get('v', 'qwq')).toBeUndefined()
  })

  it("Mistral's chat template through vLLM: its wording of the id rule", () => {
    const a = new UpstreamAdaptations()
    const template = JSON.stringify({
      object: 'error',
      message: 'Tool call IDs should be alphanumeric strings with length 9!',
      type: 'BadRequestError',
      param: null,
      code: 400,
    })
    expect(a.learn('v', 'mistral-small', template, {fields: SENT})).toMatch(/it takes 9 letters and digits/)
    expect(a.get('v', 'mistral-small')).toEqual({toolIds: {alnum: 9}})
  })

  it('a translated body goes with the reasoning of its history in the field learned, or without it', () => {
    const body = {
      model: 'm',
      messages: [
        {role: 'user', content: 'go'},
        {role: 'assistant', content: null, reasoning_content: 'Let me think.', tool_calls: [{id: 'a'}]},
        {role: 'tool', tool_call_id: 'a', content: 'ok'},
      ],
    }
    const client = decodeClientRequest('chat', body, {model: 'm', stream: false})
    const sent = (to: 'reasoning' | 'drop') =>
      JSON.parse(encodeUpstreamRequest(client, 'chat', 'm', {}, {reasoningHistory: to}).body.toString())
    expect(sent('reasoning').messages[1]).toMatchObject({reasoning: 'Let me think.'})
    expect(sent('reasoning').messages[1]).not.toHaveProperty('reasoning_content')
    expect(sent('drop').messages[1]).not.toHaveProperty('reasoning_content')
    expect(sent('drop').messages[1]).not.toHaveProperty('reasoning')
    expect(sent('drop').messages[1].tool_calls[0].id).toBe('a')
  })

  it("without the history's reasoning: OpenRouter's details and Google's signatures go too, nothing else", () => {
    const details = [
      {type: 'reasoning.encrypted', data: 'sig', id: 'a', format: 'google-gemini-v1', index: 0},
    ]
    const body = {
      model: 'm',
      messages: [
        {role: 'user', content: 'go'},
        {
          role: 'assistant',
          content: null,
          reasoning_details: details,
          tool_calls: [
            {
              id: 'a',
              type: 'function',
              function: {name: 'f', arguments: '{}'},
              extra_content: {google: {thought_signature: 's'}},
            },
            {id: 'b', type: 'function', function: {name: 'f', arguments: '{}'}},
          ],
        },
        {role: 'tool', tool_call_id: 'a', content: 'ok'},
        {role: 'tool', tool_call_id: 'b', content: 'ok'},
      ],
    }
    reshapeReasoningHistory(body, 'drop')
    expect(body.messages[1]).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [
        {id: 'a', type: 'function', function: {name: 'f', arguments: '{}'}},
        {id: 'b', type: 'function', function: {name: 'f', arguments: '{}'}},
      ],
    })
    expect(body.messages[0]).toEqual({role: 'user', content: 'go'})
  })
})

describe('the reasoning field, both ways', () => {
  it("DeepSeek's refusal of a turn without reasoning_content: the history's reasoning renamed there", () => {
    const deepseek = JSON.stringify({
      error: {
        message:
          'Missing `reasoning_content` field in the assistant message at message index 1. For more information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls',
        type: 'invalid_request_error',
        param: null,
        code: 'invalid_request_error',
      },
    })
    const a = new UpstreamAdaptations()
    expect(a.learn('d', 'deepseek-reasoner', deepseek, {fields: SENT})).toBe(
      'refused an assistant turn without reasoning_content: sent again with it on every assistant turn (the reasoning there, or empty)',
    )
    expect(a.get('d', 'deepseek-reasoner')).toEqual({reasoningHistory: 'reasoning_content'})
    // refused again so: the history has no reasoning to rename, the client sees it
    expect(
      a.learn('d', 'deepseek-reasoner', deepseek, {
        fields: SENT,
        adaptedWith: a.get('d', 'deepseek-reasoner'),
      }),
    ).toBeUndefined()
    const body = {
      model: 'm',
      messages: [
        {role: 'user', content: 'go'},
        {
          role: 'assistant',
          content: null,
          reasoning: 'Let me think.',
          tool_calls: [{id: 'a', type: 'function', function: {name: 'f', arguments: '{}'}}],
        },
        {role: 'tool', tool_call_id: 'a', content: 'ok'},
      ],
    }
    const client = decodeClientRequest('chat', body, {model: 'm', stream: false})
    const sent = JSON.parse(
      encodeUpstreamRequest(client, 'chat', 'm', {}, {reasoningHistory: 'reasoning_content'}).body.toString(),
    )
    expect(sent.messages[1].reasoning_content).toBe('Let me think.')
    expect(sent.messages[1]).not.toHaveProperty('reasoning')
  })

  it("Kimi's refusal of a tool call turn without reasoning_content: an empty one on each assistant turn, the history's own kept", () => {
    const KIMI =
      'thinking is enabled but reasoning_content is missing in assistant tool call message at index 3'
    for (const body of [
      {error: {message: KIMI, type: 'invalid_request_error'}},
      // SiliconFlow's wrap
      {code: 20015, message: KIMI, data: null},
      // a relay's prefix
      {error: {message: `Provider API error: ${KIMI}`, type: 'upstream_error'}},
    ]) {
      const a = new UpstreamAdaptations()
      expect(a.learn('k', 'kimi-k2.5', JSON.stringify(body), {fields: SENT})).toBe(
        'refused an assistant turn without reasoning_content: sent again with it on every assistant turn (the reasoning there, or empty)',
      )
      expect(a.get('k', 'kimi-k2.5')).toEqual({reasoningHistory: 'reasoning_content'})
      expect(describeAdaptation(a.get('k', 'kimi-k2.5')!)).toEqual([
        "the history's reasoning sent as reasoning_content, an empty one on an assistant turn without",
      ])
    }
    // the words quoted in prose, an echo of the request, or a param naming another place: nothing
    const a = new UpstreamAdaptations()
    for (const [message, param] of [
      [`The user asked why "${KIMI}" happens.`, null],
      [`1 validation error: 'input': '${KIMI}'`, null],
      [KIMI, 'messages[3].content'],
    ])
      expect(a.learn('k', 'kimi-k2.5', openai(message!, param), {fields: SENT})).toBeUndefined()

    // a history of three tool call turns: Kimi's own reasoning, another vendor's call (its
    // reasoning not chat's), a Kimi turn that streamed none before its call
    const call = (id: string) => ({id, type: 'function', function: {name: 'f', arguments: '{}'}})
    const client = decodeClientRequest(
      'chat',
      {
        model: 'm',
        messages: [
          {role: 'user', content: 'go'},
          {role: 'assistant', content: null, reasoning_content: 'Let me think.', tool_calls: [call('a')]},
          {role: 'tool', tool_call_id: 'a', content: 'ok'},
          {role: 'assistant', content: 'Next.', tool_calls: [call('b')]},
          {role: 'tool', tool_call_id: 'b', content: 'ok'},
          {role: 'assistant', content: null, reasoning: 'Hmm.', tool_calls: [call('c')]},
          {role: 'tool', tool_call_id: 'c', content: 'ok'},
          {role: 'assistant', content: 'Done.'},
          {role: 'user', content: 'thanks'},
        ],
      },
      {model: 'm', stream: false},
    )
    const encode = () =>
      encodeUpstreamRequest(client, 'chat', 'm', {}, {reasoningHistory: 'reasoning_content'}).body.toString()
    const bytes = encode()
    const sent = JSON.parse(bytes)
    expect(sent.messages.map((m: any) => m.reasoning_content)).toEqual([
      undefined,
      'Let me think.',
      undefined,
      '',
      undefined,
      'Hmm.',
      undefined,
      // the text that ends the loop too (DeepSeek V4 refuses it without)
      '',
      undefined,
    ])
    expect(sent.messages[5]).not.toHaveProperty('reasoning')
    // the same bytes every time (the prompt cache)
    expect(encode()).toBe(bytes)
  })

  it("Mistral's 422 for `reasoning` in the history (the field Cerebras wrote) is learned too", () => {
    const mistral = JSON.stringify({
      object: 'error',
      message: {
        detail: [{type: 'extra_forbidden', loc: ['body', 'messages', 2, 'assistant', 'reasoning'], msg: 'x'}],
      },
    })
    const a = new UpstreamAdaptations()
    expect(a.learn('m', 'magistral', mistral, {fields: SENT}, 422)).toBe(
      'refused reasoning in its history: sent again without it',
    )
    expect(a.get('m', 'magistral')).toEqual({reasoningHistory: 'drop'})
  })
})

describe("a text-only model's refusal of images and files", () => {
  const PNG = 'iVBORw0KGgo='
  const PDF = Buffer.from('%PDF-1.7').toString('base64')
  // Claude Code's turn: a screenshot, a PDF a tool read, a text file a tool read, and words
  const request = decodeClientRequest(
    'messages',
    {
      model: 'claude-sonnet-4-5',
      max_tokens: 100,
      messages: [
        {role: 'user', content: 'Look.'},
        {role: 'assistant', content: [{type: 'tool_use', id: 't1', name: 'Read', input: {}}]},
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 't1',
              content: [
                {type: 'document', source: {type: 'base64', media_type: 'application/pdf', data: PDF}},
                {type: 'document', source: {type: 'text', media_type: 'text/plain', data: 'notes'}},
              ],
            },
            {type: 'image', source: {type: 'base64', media_type: 'image/png', data: PNG}},
            {type: 'text', text: 'Why is it broken?'},
          ],
        },
      ],
    },
    {},
  )
  const sent = encodeUpstreamRequest(request, 'chat', 'deepseek-chat').sent
  const deepseek = (variant: string) =>
    JSON.stringify({
      error: {
        message: `Failed to deserialize the JSON body into the target type: messages[3]: unknown variant \`${variant}\`, expected \`text\` at line 1 column 690848`,
        type: 'invalid_request_error',
        param: null,
        code: 'invalid_request_error',
      },
    })

  it('counts the media a request carries (a text file is text)', () => {
    expect(mediaCount(request.request)).toEqual({images: 1, files: 1, audio: 0, video: 0})
  })

  it("reads which media each server's wording refuses", () => {
    // serde's "expected `text`": every kind the request sent, whichever it named first
    expect(mediaRefusal(deepseek('image_url'), sent)).toEqual({images: true, files: true})
    expect(mediaRefusal(deepseek('file'), sent)).toEqual({images: true, files: true})
    // a longer list (a server that reads images, TGI's): only the kind named (review61)
    for (const expected of ['`text` or `image_url`', '`text`, `image_url`'])
      expect(
        mediaRefusal(
          JSON.stringify({
            error: {
              message: `messages[1]: unknown variant \`file\`, expected ${expected} at line 1 column 9`,
            },
          }),
          sent,
        ),
      ).toEqual({files: true})
    // vLLM, Zhipu's 1210, Groq: the media of the request, whole
    for (const message of [
      'deepseek-coder is not a multimodal model None',
      "messages.content.type 参数非法，取值范围['text']",
      'messages[1].content must be a string',
    ])
      expect(mediaRefusal(JSON.stringify({object: 'error', message, code: 400}), sent)).toEqual({
        images: true,
        files: true,
      })
    // llama.cpp (its 500), its older wording, OpenAI's older models, plain words
    for (const message of [
      'image input is not supported - hint: if this is unexpected, you may need to provide the mmproj',
      'Failed to parse messages: Unsupported content part type: "image_url"; messages = [...]',
      'Invalid content type. image_url is only supported by certain models.',
      'This model does not support image input.',
      'Multimodal input is not supported for this model',
    ])
      expect(mediaRefusal(JSON.stringify({error: {code: 500, message, type: 'server_error'}}), sent)).toEqual(
        {images: true},
      )
  })

  it("reads vLLM's refusal of a file part, old and new", () => {
    for (const message of [
      "Unsupported chat content part type: 'file'. Supported types: text, image_url, input_audio, video_url",
      'Unknown part type: file',
    ])
      expect(
        mediaRefusal(JSON.stringify({object: 'error', message, param: 'type', code: 400}), sent),
      ).toEqual({
        files: true,
      })
  })

  it("reads a refusal of audio or video (a chat client's input_audio and video_url), and learns only that", () => {
    const av = sentOfPassedChat({
      model: 'm',
      messages: [
        {
          role: 'user',
          content: [
            {type: 'image_url', image_url: {url: `data:image/png;base64,${PNG}`}},
            {type: 'video_url', video_url: {url: 'data:video/mp4;base64,AAAA'}},
            {type: 'input_audio', input_audio: {data: 'SUQz', format: 'mp3'}},
          ],
        },
      ],
    })
    expect(mediaCount(av.request!)).toEqual({images: 1, files: 0, audio: 1, video: 1})
    for (const variant of ['video_url', 'input_audio', 'image_url'])
      expect(mediaRefusal(deepseek(variant), av)).toEqual({images: true, audio: true, video: true})
    // (a kind the request did not send: the refusal is not of this request's media)
    expect(mediaRefusal(deepseek('file'), av)).toBeUndefined()
    for (const [message, learned] of [
      ["Unsupported chat content part type: 'input_audio'", {audio: true}],
      ['This model does not support audio input.', {audio: true}],
      ['Video input is not supported for this model', {video: true}],
      ['At most 0 video(s) may be provided in one prompt.', {video: true}],
      ['deepseek-coder is not a multimodal model None', {images: true, audio: true, video: true}],
    ] as const)
      expect(mediaRefusal(openai(message, null), av), message).toEqual(learned)
    // none sent: nothing learned
    expect(mediaRefusal(deepseek('input_audio'), sent)).toBeUndefined()
    expect(describeAdaptation({media: {audio: true, video: true}})).toEqual([
      'audio and video sent as a line of text (a text-only model)',
    ])
    expect(describeAdaptation({media: {images: true, files: true, audio: true, video: true}})).toEqual([
      'images, files, audio and video sent as a line of text (a text-only model)',
    ])
  })

  it("learns the Gemini API's refusal of a Gemma model's audio and images, and sends each as a line", () => {
    const a = new UpstreamAdaptations()
    const gemini = (message: string) =>
      JSON.stringify({error: {code: 400, message, status: 'INVALID_ARGUMENT'}})
    // Gemini CLI's turn with a recording and a screenshot
    const client = decodeClientRequest(
      'gemini',
      {
        contents: [
          {
            role: 'user',
            parts: [
              {text: 'what is said here, and shown?'},
              {inlineData: {mimeType: 'audio/mp3', data: 'SUQz'}},
              {inlineData: {mimeType: 'image/png', data: PNG}},
            ],
          },
        ],
      },
      {model: 'gemma-3-27b-it'},
    )
    const first = encodeUpstreamRequest(client, 'gemini', 'gemma-3-27b-it')
    expect(
      a.learn(
        'google',
        'gemma-3-27b-it',
        gemini('Audio input modality is not enabled for models/gemma-3-27b-it'),
        first.sent,
      ),
    ).toBe('refused audio (a text-only model): sent again with a line in place of each')
    const second = encodeUpstreamRequest(
      client,
      'gemini',
      'gemma-3-27b-it',
      {},
      a.get('google', 'gemma-3-27b-it'),
    )
    const parts = () => JSON.parse(second.body.toString()).contents[0].parts as Array<Record<string, any>>
    expect(parts().map((p) => p.inlineData?.mimeType ?? 'text')).toEqual(['text', 'text', 'image/png'])
    expect(
      a.learn(
        'google',
        'gemma-3-27b-it',
        gemini('Image input modality is not enabled for models/gemma-3-27b-it'),
        second.sent,
      ),
    ).toBe('refused images and audio (a text-only model): sent again with a line in place of each')
    const third = encodeUpstreamRequest(
      client,
      'gemini',
      'gemma-3-27b-it',
      {},
      a.get('google', 'gemma-3-27b-it'),
    )
    expect(JSON.stringify(third.body.toString())).not.toContain('inlineData')
  })

  it('learns nothing from a refusal of media the request did not send, or of anything else', () => {
    const textOnly = encodeUpstreamRequest(
      decodeClientRequest('chat', {model: 'm', messages: [{role: 'user', content: 'hi'}]}, {}),
      'chat',
      'deepseek-chat',
    ).sent
    expect(mediaRefusal(deepseek('image_url'), textOnly)).toBeUndefined()
    expect(mediaRefusal('deepseek-chat is not a multimodal model', textOnly)).toBeUndefined()
    // a variant that is no media, a refusal of something else
    expect(mediaRefusal(deepseek('developer'), sent)).toBeUndefined()
    expect(mediaRefusal(openai('Invalid image: the data is not a PNG.', null), sent)).toBeUndefined()
    // words about media that are no refusal of the model's media (a vision model keeps its images)
    for (const message of [
      'This model does not support image URLs; send base64',
      'The image is not supported: it is too large',
      'Function calling with vision is not supported',
      'tool message content must be a string',
      // Anthropic's and Gemini's refusals of one image's type or size: the encoders fit images to
      // those limits (images.ts), and a model that sees images keeps them
      'messages.1.content.0.image.source.base64.data: Image does not match the provided media type image/png',
      'messages.3.content.1.image.source.base64: image exceeds 5 MB maximum: 6278112 bytes > 5242880 bytes',
      'Unsupported MIME type: image/gif',
    ])
      expect(mediaRefusal(openai(message, null), sent), message).toBeUndefined()
    // a validation error that quotes the conversation (Mistral's 422, pydantic's input_value): the
    // agent read a log that says "this model does not support image input"
    const quoted = JSON.stringify({
      object: 'error',
      message: {
        detail: [
          {
            type: 'extra_forbidden',
            loc: ['body', 'messages', 1, 'assistant', 'reasoning_content'],
            msg: 'Extra inputs are not permitted',
            input: 'The log says: this model does not support image input.',
          },
        ],
      },
    })
    expect(mediaRefusal(quoted, sent, 422)).toBeUndefined()
    expect(mediaRefusal(quoted, sent, 400)).toBeUndefined()
    expect(
      mediaRefusal(
        "1 validation error for ChatRequest\nmessages.1.content\n  Input should be a valid string [type=string_type, input_value='this model does not support image input', input_type=str]",
        sent,
      ),
    ).toBeUndefined()
    expect(mediaRefusal(openai("Unsupported parameter: 'temperature'.", 'temperature'), sent)).toBeUndefined()
  })

  it('sends each refused image or file as a line, the rest of the request as it was, and then learns nothing more', () => {
    const store = new UpstreamAdaptations()
    // serde's refusal names the image, and `text` as all it reads: the PDF goes as a line too
    expect(store.learn('ds', 'deepseek-chat', deepseek('image_url'), sent)).toBe(
      'refused images and files (a text-only model): sent again with a line in place of each',
    )
    const again = encodeUpstreamRequest(
      request,
      'chat',
      'deepseek-chat',
      {},
      store.get('ds', 'deepseek-chat'),
    )
    const body = JSON.parse(again.body.toString())
    const text = JSON.stringify(body)
    expect(text).not.toContain('image_url')
    expect(text).not.toContain('"type":"file"')
    expect(text).toContain('[image/png image not attached: deepseek-chat takes no images]')
    const tool = body.messages.find((m: any) => m.role === 'tool')
    expect(tool.content).toBe('[application/pdf file not attached: deepseek-chat takes no files]\nnotes')
    // the text file as its text, the words as they were
    expect(text).toContain('Why is it broken?')
    // the client's request is untouched: a later encoding without the rule sends the image
    expect(encodeUpstreamRequest(request, 'chat', 'deepseek-chat').body.toString()).toContain('image_url')
    // the same refusal again (nothing left to take out): the 400 is the client's
    expect(store.learn('ds', 'deepseek-chat', deepseek('image_url'), again.sent)).toBeUndefined()
    expect(store.learn('ds', 'deepseek-chat', deepseek('file'), again.sent, 400)).toBeUndefined()
  })
})

describe('what was learned, in words', () => {
  it('says each rule of an adaptation, and lists the targets the latest first', () => {
    expect(
      describeAdaptation({
        media: {images: true, files: true},
        drop: ['reasoning_effort', 'temperature'],
        maxTokens: 8192,
        effort: {minimal: 'low'},
        json: 'json_object',
        toolIds: {max: 40},
        bridgeToolTurns: true,
        reasoningHistory: 'reasoning',
      }),
    ).toEqual([
      'images and files sent as a line of text (a text-only model)',
      'sent without reasoning_effort, temperature',
      'max_tokens capped at 8192',
      'effort minimal sent as low',
      'a JSON schema sent as JSON mode, the schema in the system prompt',
      'tool-call ids of at most 40 characters',
      'an assistant message between tool results and a user message',
      "the history's reasoning sent as reasoning",
    ])
    const store = new UpstreamAdaptations()
    expect(store.list()).toEqual([])
    const chat = (model: string) =>
      encodeUpstreamRequest(
        decodeClientRequest(
          'chat',
          {model, messages: [{role: 'user', content: 'hi'}], max_tokens: 64000},
          {},
        ),
        'chat',
        model,
      ).sent
    store.learn(
      'ds',
      'deepseek-chat',
      openai('Invalid max_tokens value, the valid range of max_tokens is [1, 8192]', null),
      chat('deepseek-chat'),
    )
    const [one] = store.list()
    expect(one).toMatchObject({provider: 'ds', model: 'deepseek-chat', rules: ['max_tokens capped at 8192']})
    expect(Math.abs(one.learnedAt - Date.now())).toBeLessThan(5000)
  })

  it("keeps the context window an overflow stated, beside what was learned, the entrance's latest", () => {
    const store = new UpstreamAdaptations()
    store.learn(
      'ds',
      'deepseek-chat',
      openai('Invalid max_tokens value, the valid range of max_tokens is [1, 8192]', null),
      encodeUpstreamRequest(
        decodeClientRequest(
          'chat',
          {model: 'm', messages: [{role: 'user', content: 'hi'}], max_tokens: 64000},
          {},
        ),
        'chat',
        'deepseek-chat',
      ).sent,
    )
    store.noteWindow('ds', 'deepseek-chat', 131_072, 'responses')
    store.noteWindow('ds', 'deepseek-chat', 131_072, 'messages')
    // a target with a window only
    store.noteWindow('local', 'qwen3-32b', 32_768, 'messages')
    // nothing a window could be
    store.noteWindow('bad', 'm', 0, 'messages')
    store.noteWindow('bad', 'm', Number.NaN, 'messages')
    // no model (a request without one), or a name no model has
    store.noteWindow('bad', '', 8192, 'messages')
    store.noteWindow('bad', 'x'.repeat(300), 8192, 'messages')
    const listed = store.list()
    expect(listed.map((a) => a.provider).sort()).toEqual(['ds', 'local'])
    expect(listed.find((a) => a.provider === 'ds')).toMatchObject({
      model: 'deepseek-chat',
      rules: [
        'max_tokens capped at 8192',
        'a context window of 131,072 tokens (stated in its refusal of a longer prompt)',
      ],
      window: {tokens: 131_072, entrance: 'messages'},
    })
    expect(listed.find((a) => a.provider === 'local')).toMatchObject({
      rules: ['a context window of 32,768 tokens (stated in its refusal of a longer prompt)'],
      window: {tokens: 32_768, entrance: 'messages'},
    })
    // a window changes nothing a request is sent with
    expect(store.get('local', 'qwen3-32b')).toBeUndefined()
  })

  it('keeps a window Ollama cut a prompt to as such, until a refusal states one', () => {
    const store = new UpstreamAdaptations()
    store.noteWindow('ollama', 'qwen3:8b', 4096, 'messages', true)
    expect(store.list()).toMatchObject([
      {
        provider: 'ollama',
        model: 'qwen3:8b',
        rules: [
          'a context window of 4,096 tokens (its num_ctx, read from a longer prompt it cut without a word, its start dropped)',
        ],
        window: {tokens: 4096, entrance: 'messages', cut: true},
      },
    ])
    expect(store.get('ollama', 'qwen3:8b')).toBeUndefined()
    // the server's context raised, its refusal (context shift off) states the new one
    store.noteWindow('ollama', 'qwen3:8b', 65_536, 'messages')
    expect(store.list()[0].window).toEqual({tokens: 65_536, entrance: 'messages'})
  })

  it('keeps the window a refusal the request learned past states (vLLM, OpenAI, SGLang), and none from other words', () => {
    const store = new UpstreamAdaptations()
    store.noteStatedWindow(
      'vllm',
      'qwen3',
      openai(
        "This model's maximum context length is 131072 tokens. However, you requested 200007 tokens (7 in the messages, 200000 in the completion). Please reduce the length of the messages or completion.",
        'messages',
      ),
      'responses',
    )
    store.noteStatedWindow(
      'sglang',
      'glm',
      openai(
        "Requested token count exceeds the model's maximum context length of 65536 tokens. You requested a total of 71897 tokens: 7897 tokens from the input messages and 64000 tokens for the completion.",
        null,
      ),
      'messages',
    )
    store.noteStatedWindow('other', 'm', openai('Invalid max_tokens value', null), 'messages')
    const byProvider = store.list().sort((a, b) => a.provider.localeCompare(b.provider))
    expect(byProvider.map((a) => [a.provider, a.window])).toEqual([
      ['sglang', {tokens: 65_536, entrance: 'messages'}],
      ['vllm', {tokens: 131_072, entrance: 'responses'}],
    ])
  })
})

describe("Gemini 3's refusal of a tool call turn without its thought signature (a chat server)", () => {
  const GOOGLE =
    'Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:ls` , position 2. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.'
  const VERTEX =
    'Unable to submit request because function call `default_api:ls` in the 2. content block is missing a `thought_signature`. Learn more: https://docs.cloud.google.com/vertex-ai/generative-ai/docs/thought-signatures'
  const openRouter = (upstream: string) =>
    JSON.stringify({
      error: {
        message: 'Provider returned error',
        code: 400,
        metadata: {
          raw: `Gemini models require OpenRouter reasoning details to be preserved in each request. Please refer to our docs: https://openrouter.ai/docs/guides/best-practices/reasoning-tokens#preserving-reasoning-blocks. Upstream error: ${JSON.stringify({error: {code: 400, message: upstream, status: 'INVALID_ARGUMENT'}}, null, 2)}\n`,
          provider_name: 'Google AI Studio',
        },
      },
      user_id: 'user_1',
    })

  it("learns where the server reads one: OpenRouter's reasoning_details, Google's and Vertex's extra_content", () => {
    for (const [text, field] of [
      [openRouter(GOOGLE), 'reasoning_details'],
      [openRouter(VERTEX), 'reasoning_details'],
      [JSON.stringify({error: {code: 400, message: GOOGLE, status: 'INVALID_ARGUMENT'}}), 'google'],
      // Google's endpoint may answer a list of errors
      [JSON.stringify([{error: {code: 400, message: GOOGLE, status: 'INVALID_ARGUMENT'}}]), 'google'],
      [JSON.stringify({error: {code: 400, message: VERTEX, status: 'INVALID_ARGUMENT'}}), 'vertex'],
    ] as const) {
      const a = new UpstreamAdaptations()
      expect(a.learn('g', 'gemini-3-pro', text, {fields: SENT})).toMatch(
        /^refused a tool call turn without its thought signature: sent again with Google's skip_thought_signature_validator in /,
      )
      expect(a.get('g', 'gemini-3-pro')).toEqual({thoughtSignatures: field})
      expect(describeAdaptation(a.get('g', 'gemini-3-pro')!)[0]).toMatch(/skip_thought_signature_validator/)
      // learned once: the same refusal again is the client's
      expect(
        a.learn('g', 'gemini-3-pro', text, {fields: SENT, adaptedWith: a.get('g', 'gemini-3-pro')}),
      ).toBe(undefined)
    }
  })

  it("learns Google's and Vertex's refusal a relay wrapped, as text, in its own message (Antigravity-Manager #3229), one level", () => {
    // the upstream's body, pretty-printed, as the relay's message
    const wrapped = (message: string) =>
      JSON.stringify({
        error: {
          code: 400,
          message: JSON.stringify({error: {code: 400, message, status: 'INVALID_ARGUMENT'}}, null, 2),
          status: 'INVALID_ARGUMENT',
        },
      })
    for (const [message, field] of [
      [GOOGLE, 'google'],
      [VERTEX, 'vertex'],
    ] as const) {
      // the chat-side rule (Google's OpenAI-compatible endpoint behind the relay)
      const chat = new UpstreamAdaptations()
      expect(chat.learn('g', 'gemini-3-pro', wrapped(message), {fields: SENT})).toMatch(
        /^refused a tool call turn without its thought signature/,
      )
      expect(chat.get('g', 'gemini-3-pro')).toEqual({thoughtSignatures: field})
      // a Gemini body passed through
      const passed = new UpstreamAdaptations()
      expect(passed.learnPassedGeminiSignatures('g', 'gemini-3-pro', wrapped(message), undefined)).toMatch(
        /^refused a tool call turn without its thought signature/,
      )
      expect(passed.get('g', 'gemini-3-pro')).toEqual({thoughtSignatures: 'part'})
    }
    // one level only, and only words at the start of the inner message
    const twice = JSON.stringify({error: {code: 400, message: wrapped(GOOGLE)}})
    const prose = wrapped(`Why does "${GOOGLE}" happen?`)
    for (const text of [twice, prose, JSON.stringify({error: {message: '{not json'}})])
      expect(
        new UpstreamAdaptations().learnPassedGeminiSignatures('g', 'm', text, undefined),
        text,
      ).toBeUndefined()
  })

  it('learns nothing from the words quoted in prose, an echo of the request, or a translated body to Gemini itself', () => {
    const a = new UpstreamAdaptations()
    for (const message of [
      `Why does "${GOOGLE}" happen?`,
      `1 validation error: 'input': '${GOOGLE}'`,
      'Gemini models require OpenRouter reasoning details to be preserved in each request.',
    ])
      expect(a.learn('g', 'gemini-3-pro', openai(message, null), {fields: SENT})).toBeUndefined()
    // a translated body to Gemini's own API: the encoder signed each turn's first call already
    // (gemini.ts), a rule would send the same bytes again
    const google = JSON.stringify({error: {code: 400, message: GOOGLE, status: 'INVALID_ARGUMENT'}})
    expect(a.learn('g', 'gemini-3-pro', google, {fields: SENT, upstream: 'gemini'})).toBeUndefined()
  })

  it("on Gemini's own API, to a body passed through: Google's and Vertex's words teach the part's own field, once", () => {
    for (const message of [GOOGLE, VERTEX]) {
      const text = JSON.stringify({error: {code: 400, message, status: 'INVALID_ARGUMENT'}})
      const a = new UpstreamAdaptations()
      expect(a.learnPassedGeminiSignatures('g', 'gemini-3-pro', text, undefined)).toBe(
        "refused a tool call turn without its thought signature: sent again with Google's skip_thought_signature_validator in the thoughtSignature of each model turn's first call where the history has none",
      )
      const learned = a.get('g', 'gemini-3-pro')!
      expect(learned).toEqual({thoughtSignatures: 'part'})
      expect(describeAdaptation(learned)).toEqual([
        "a tool call turn without its thought signature sent with skip_thought_signature_validator (the thoughtSignature of each model turn's first call)",
      ])
      // the same refusal again, to a body sent with it: the client's
      expect(a.learnPassedGeminiSignatures('g', 'gemini-3-pro', text, learned)).toBeUndefined()
    }
    // the words quoted in prose teach nothing
    const prose = JSON.stringify({error: {code: 400, message: `Why does "${GOOGLE}" happen?`}})
    expect(new UpstreamAdaptations().learnPassedGeminiSignatures('g', 'm', prose, undefined)).toBeUndefined()
  })

  it('sends a turn whose call has no signature with the dummy, one whose call has one as it was', () => {
    const call = (id: string, extra?: unknown) => ({
      id,
      type: 'function',
      function: {name: 'ls', arguments: '{}'},
      ...(extra ? {extra_content: extra} : {}),
    })
    const body = {
      model: 'm',
      messages: [
        {role: 'user', content: 'list'},
        {role: 'assistant', content: null, tool_calls: [call('a'), call('b')]},
        {role: 'tool', tool_call_id: 'a', content: 'x'},
        {role: 'tool', tool_call_id: 'b', content: 'y'},
      ],
    }
    const client = decodeClientRequest('chat', body, {model: 'm', stream: false})
    const send = (adapt: UpstreamAdaptation) =>
      JSON.parse(encodeUpstreamRequest(client, 'chat', 'm', {}, adapt).body.toString()).messages[1]
    const google = send({thoughtSignatures: 'google'})
    expect(google.tool_calls).toEqual([
      call('a', {google: {thought_signature: 'skip_thought_signature_validator'}}),
      call('b'),
    ])
    expect(send({thoughtSignatures: 'vertex'}).tool_calls[0].extra_content).toEqual({
      vertex: {thought_signature: 'skip_thought_signature_validator'},
    })
    const openRouterTurn = send({thoughtSignatures: 'reasoning_details'})
    expect(openRouterTurn.reasoning_details).toEqual([
      {
        type: 'reasoning.encrypted',
        data: 'skip_thought_signature_validator',
        id: 'a',
        format: 'google-gemini-v1',
        index: 0,
      },
    ])
    expect(openRouterTurn.tool_calls).toEqual([call('a'), call('b')])
  })
})

describe("Gemini's refusal of unknown fields: tool-schema keywords, the ids of function calls", () => {
  const line = (name: string, at: string) =>
    `Invalid JSON payload received. Unknown name "${name}" at '${at}': Cannot find field.`
  /** Google's OpenAI-compatible endpoint: its error bodies in a list. */
  const google = (...lines: string[]) =>
    JSON.stringify([{error: {code: 400, message: lines.join('\n'), status: 'INVALID_ARGUMENT'}}])
  const schemaLine = (name: string, at = '') =>
    line(name, `tools[0].function_declarations[0].parameters${at}`)
  const client = () =>
    decodeClientRequest(
      'messages',
      {
        model: 'c',
        max_tokens: 1024,
        messages: [{role: 'user', content: 'hi'}],
        tools: [
          {
            name: 'Bash',
            input_schema: {
              $schema: 'http://json-schema.org/draft-07/schema#',
              type: 'object',
              properties: {
                command: {type: 'string'},
                timeout: {type: 'number', exclusiveMinimum: 0},
                const: {type: 'string', const: 'x'},
              },
              additionalProperties: false,
            },
          },
        ],
      },
      {model: 'c', stream: false},
    )
  const chatSent = () => encodeUpstreamRequest(client(), 'chat', 'gemini-2.5-pro').sent

  it('every keyword of one refusal at once, remembered, and later ones added', () => {
    const a = new UpstreamAdaptations()
    const refusal = google(schemaLine('$schema'), schemaLine('exclusiveMinimum', '.properties[1].value'))
    expect(a.learn('g', 'gemini-2.5-pro', refusal, chatSent())).toBe(
      'refused the tool-schema keywords $schema, exclusiveMinimum: sent again without them',
    )
    expect(a.get('g', 'gemini-2.5-pro')).toEqual({schemaKeys: ['$schema', 'exclusiveMinimum']})
    const known = a.get('g', 'gemini-2.5-pro')
    const more = google(schemaLine('const', '.properties[2].value'), schemaLine('additionalProperties'))
    expect(a.learn('g', 'gemini-2.5-pro', more, {...chatSent(), adaptedWith: known})).toBe(
      'refused the tool-schema keywords const, additionalProperties: sent again without them',
    )
    expect(a.get('g', 'gemini-2.5-pro')?.schemaKeys).toEqual([
      '$schema',
      'exclusiveMinimum',
      'const',
      'additionalProperties',
    ])
    // the same keywords refused again (nothing new): the client sees it
    const all = a.get('g', 'gemini-2.5-pro')
    expect(a.learn('g', 'gemini-2.5-pro', more, {...chatSent(), adaptedWith: all})).toBeUndefined()
    expect(describeAdaptation(all!)).toEqual([
      "tool schemas sent without $schema, exclusiveMinimum, const, additionalProperties (Gemini's schema subset)",
    ])
  })

  it("in a relay's message (LiteLLM's, Google's body escaped inside it)", () => {
    const inner = JSON.stringify({
      error: {code: 400, message: schemaLine('propertyNames', '.properties[3].value')},
    })
    const litellm = JSON.stringify({
      error: {message: `litellm.BadRequestError: VertexAIException BadRequestError - ${inner}`, code: '400'},
    })
    const a = new UpstreamAdaptations()
    expect(a.learn('l', 'gemini-2.5-flash', litellm, chatSent())).toBe(
      'refused the tool-schema keyword propertyNames: sent again without it',
    )
  })

  it('sends the schemas without them, the same bytes on every request; a property named const stays', () => {
    const adapt: UpstreamAdaptation = {
      schemaKeys: ['$schema', 'exclusiveMinimum', 'const', 'additionalProperties'],
    }
    const body = () => encodeUpstreamRequest(client(), 'chat', 'gemini-2.5-pro', {}, adapt).body.toString()
    const sent = JSON.parse(body())
    expect(sent.tools[0].function.parameters).toEqual({
      type: 'object',
      properties: {
        command: {type: 'string'},
        timeout: {type: 'number', minimum: 0},
        const: {type: 'string', enum: ['x']},
      },
    })
    expect(body()).toBe(body())
    // a Gemini upstream too (a relay that converts parametersJsonSchema to parameters)
    const gemini = JSON.parse(encodeUpstreamRequest(client(), 'gemini', 'g', {}, adapt).body.toString())
    expect(JSON.stringify(gemini.tools)).not.toMatch(/\$schema|exclusiveMinimum|additionalProperties/)
  })

  it("Vertex AI's refusal of call ids: learned for a Gemini upstream, with schema keywords in the same 400", () => {
    const ids = JSON.stringify({
      error: {
        code: 400,
        message: [
          line('id', 'contents[1].parts[0].function_call'),
          line('id', 'contents[2].parts[0].function_response'),
        ].join('\n'),
        status: 'INVALID_ARGUMENT',
      },
    })
    const geminiSent = encodeUpstreamRequest(client(), 'gemini', 'gemini-2.5-pro').sent
    const a = new UpstreamAdaptations()
    expect(a.learn('v', 'gemini-2.5-pro', ids, geminiSent)).toBe(
      'refused the id of function calls and responses: sent again without it',
    )
    expect(a.get('v', 'gemini-2.5-pro')).toEqual({noCallIds: true})
    expect(describeAdaptation({noCallIds: true})).toEqual([
      'function calls and responses sent without ids (paired by order and name)',
    ])
    // both at once
    const b = new UpstreamAdaptations()
    const both = google(schemaLine('$schema'), line('id', 'contents[1].parts[0].function_call'))
    expect(b.learn('v', 'm', both, geminiSent)).toBe(
      'refused the tool-schema keyword $schema, refused the id of function calls and responses: sent again without them',
    )
    expect(b.get('v', 'm')).toEqual({schemaKeys: ['$schema'], noCallIds: true})
    // a chat upstream writes ids of its own protocol: nothing to learn there
    expect(new UpstreamAdaptations().learn('c', 'm', ids, chatSent())).toBeUndefined()
  })

  it('teaches nothing where a name is refused at another place, or the request had no tools', () => {
    const a = new UpstreamAdaptations()
    const mixed = google(schemaLine('$schema'), line('foo', 'generation_config'))
    expect(a.learn('g', 'm', mixed, chatSent())).toBeUndefined()
    expect(
      a.learn('g', 'm', google(line('strict', 'tools[0].function_declarations[0]')), chatSent()),
    ).toBeUndefined()
    const noTools = encodeUpstreamRequest(
      decodeClientRequest(
        'messages',
        {model: 'c', max_tokens: 10, messages: [{role: 'user', content: 'hi'}]},
        {},
      ),
      'chat',
      'm',
    ).sent
    expect(a.learn('g', 'm', google(schemaLine('$schema')), noTools)).toBeUndefined()
    expect(a.get('g', 'm')).toBeUndefined()
  })

  describe('a list of types (an MCP tool\'s ["string", "null"]): never `type` gone', () => {
    const listLine = (name: string, at: string) =>
      `Invalid JSON payload received. Unknown name "${name}" at 'tools[0].function_declarations[${at}': Proto field is not repeating, cannot start list.`
    const READ = {
      type: 'object',
      properties: {
        file_path: {type: 'string'},
        limit: {type: ['integer', 'null']},
        mode: {type: ['string', 'null'], enum: ['a', 'b', null], description: 'how'},
        value: {type: ['string', 'array'], items: {type: 'string'}, description: 'one or many'},
        pair: {type: 'array', items: [{type: 'string'}, {type: ['number', 'null']}]},
        single: {type: 'array', items: [{type: 'string'}]},
        only: {type: ['boolean']},
      },
      required: ['file_path'],
    }
    const ONE_TYPE = {
      type: 'object',
      properties: {
        file_path: {type: 'string'},
        limit: {type: 'integer', nullable: true},
        mode: {type: 'string', nullable: true, enum: ['a', 'b'], description: 'how'},
        value: {
          anyOf: [{type: 'string'}, {type: 'array', items: {type: 'string'}}],
          description: 'one or many',
        },
        pair: {type: 'array', items: {anyOf: [{type: 'string'}, {type: 'number', nullable: true}]}},
        single: {type: 'array', items: {type: 'string'}},
        only: {type: 'boolean'},
      },
      required: ['file_path'],
    }
    const refusal = google(listLine('type', '1].parameters.properties[0].value'))
    const passed = () => ({
      model: 'gemini-3.5-flash',
      messages: [{role: 'user', content: 'hi'}],
      tools: [{type: 'function', function: {name: 'Read', parameters: READ}}],
    })

    it("learned as typeLists from Google's words, not as the keyword `type`", () => {
      const a = new UpstreamAdaptations()
      expect(a.learnSchemaKeys('google-openai', 'gemini-3.5-flash', refusal, undefined)).toBe(
        'refused a list of types in a tool schema: sent again with one type each (nullable, or anyOf)',
      )
      const learned = a.get('google-openai', 'gemini-3.5-flash')!
      expect(learned).toEqual({typeLists: true})
      expect(rewritesChatBody(learned)).toBe(true)
      expect(describeAdaptation(learned)).toEqual([
        "tool schemas' type lists sent as one type each (nullable, or anyOf: Gemini's schema subset)",
      ])
      // the same refusal again: nothing new, the client's
      expect(a.learnSchemaKeys('google-openai', 'gemini-3.5-flash', refusal, learned)).toBeUndefined()
      // a tuple's items alike; in a translated request's refusal too; with unknown keywords in the same 400
      const b = new UpstreamAdaptations()
      const both = google(schemaLine('$schema'), listLine('items', '0].parameters.properties[4].value'))
      expect(b.learn('g', 'gemini-2.5-pro', both, chatSent())).toBe(
        'refused the tool-schema keyword $schema, refused a list of types in a tool schema: sent again without it, with one type each (nullable, or anyOf)',
      )
      expect(b.get('g', 'gemini-2.5-pro')).toEqual({schemaKeys: ['$schema'], typeLists: true})
    })

    it('a structural keyword is never learned as refused, whatever the line says; other reasons teach nothing', () => {
      const a = new UpstreamAdaptations()
      for (const name of ['type', 'properties', 'items', 'required', 'enum'])
        expect(
          a.learn('g', 'm', google(schemaLine(name, '.properties[0].value')), chatSent()),
        ).toBeUndefined()
      // a list refused for a keyword that is no type or items; a line with no reason
      expect(a.learn('g', 'm', google(listLine('enum', '0].parameters')), chatSent())).toBeUndefined()
      const bare = `Invalid JSON payload received. Unknown name "$schema" at 'tools[0].function_declarations[0].parameters'`
      expect(a.learn('g', 'm', google(bare), chatSent())).toBeUndefined()
      expect(a.get('g', 'm')).toBeUndefined()
    })

    it('a chat body passed through: each list as one type, the root type object kept, the same bytes each time', () => {
      const body = () => adaptPassedChat(passed(), {typeLists: true}).toString()
      const sent = JSON.parse(body())
      expect(sent.tools[0].function.parameters).toEqual(ONE_TYPE)
      expect(body()).toBe(body())
      // a body with no list goes as it came
      const plain = {
        ...passed(),
        tools: [{type: 'function', function: {name: 'Ls', parameters: {type: 'object'}}}],
      }
      expect(JSON.parse(adaptPassedChat(plain, {typeLists: true}).toString())).toEqual(plain)
    })

    it('a translated request: chat and a Gemini relay alike', () => {
      const claude = decodeClientRequest(
        'messages',
        {
          model: 'c',
          max_tokens: 1024,
          messages: [{role: 'user', content: 'hi'}],
          tools: [{name: 'Read', input_schema: READ}],
        },
        {},
      )
      const chat = JSON.parse(
        encodeUpstreamRequest(claude, 'chat', 'gemini-2.5-pro', {}, {typeLists: true}).body.toString(),
      )
      expect(chat.tools[0].function.parameters).toEqual(ONE_TYPE)
      const relay = JSON.parse(
        encodeUpstreamRequest(claude, 'gemini', 'gemini-2.5-pro', {}, {typeLists: true}).body.toString(),
      )
      expect(relay.tools[0].functionDeclarations[0].parametersJsonSchema).toEqual(ONE_TYPE)
      // not learned: Gemini's own parametersJsonSchema takes the lists, sent as they came
      const native = JSON.parse(encodeUpstreamRequest(claude, 'gemini', 'gemini-2.5-pro').body.toString())
      expect(native.tools[0].functionDeclarations[0].parametersJsonSchema).toEqual(READ)
    })

    it("a rule that strips `type` (learned before this fix) keeps the root's type object", () => {
      const body = JSON.parse(adaptPassedChat(passed(), {schemaKeys: ['type']}).toString())
      expect(body.tools[0].function.parameters).toMatchObject({type: 'object', required: ['file_path']})
      expect(body.tools[0].function.parameters.properties.file_path).toEqual({})
    })
  })

  it('a chat request passed through: only tool-schema keywords are learned, kept with what was learned before', () => {
    const a = new UpstreamAdaptations()
    // the ids of calls (a chat upstream writes its own), a name at another place, another refusal
    expect(
      a.learnSchemaKeys('p', 'm', google(line('id', 'contents[1].parts[0].function_call')), undefined),
    ).toBeUndefined()
    expect(
      a.learnSchemaKeys('p', 'm', google(schemaLine('$schema'), line('foo', 'generation_config')), undefined),
    ).toBeUndefined()
    expect(
      a.learnSchemaKeys('p', 'm', openai('Unsupported parameter: temperature', 'temperature'), undefined),
    ).toBeUndefined()
    expect(a.get('p', 'm')).toBeUndefined()
    // learned alongside what a translated request taught the same upstream model
    expect(
      a.learn('p', 'm', openai('Unsupported parameter: temperature', 'temperature'), {fields: SENT}),
    ).toBe('refused temperature: sent again without it')
    const known = a.get('p', 'm')
    expect(
      a.learnSchemaKeys('p', 'm', google(schemaLine('$schema'), schemaLine('additionalProperties')), known),
    ).toBe('refused the tool-schema keywords $schema, additionalProperties: sent again without them')
    expect(a.get('p', 'm')).toEqual({drop: ['temperature'], schemaKeys: ['$schema', 'additionalProperties']})
    // a request sent before that: goes again as things stand now; the same refusal again: the client's
    expect(a.learnSchemaKeys('p', 'm', google(schemaLine('$schema')), known)).toBe(
      'refused it too: sent again with what another request learned meanwhile',
    )
    expect(a.learnSchemaKeys('p', 'm', google(schemaLine('$schema')), a.get('p', 'm'))).toBeUndefined()
  })

  it('sends a Gemini body without the ids of calls and responses once learned', () => {
    const history = decodeClientRequest(
      'chat',
      {
        model: 'c',
        messages: [
          {role: 'user', content: 'list'},
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              {id: 'call_1', type: 'function', function: {name: 'ls', arguments: '{}'}},
              {id: 'call_2', type: 'function', function: {name: 'ls', arguments: '{"a":1}'}},
            ],
          },
          {role: 'tool', tool_call_id: 'call_1', content: 'a'},
          {role: 'tool', tool_call_id: 'call_2', content: 'b'},
        ],
        tools: [{type: 'function', function: {name: 'ls', parameters: {type: 'object'}}}],
      },
      {},
    )
    const encode = (adapt?: UpstreamAdaptation) =>
      encodeUpstreamRequest(history, 'gemini', 'gemini-2.5-pro', {}, adapt).body.toString()
    expect(encode()).toMatch(/"id":"call_1"/)
    const body = JSON.parse(encode({noCallIds: true}))
    expect(body.contents[1].parts.map((p: any) => p.functionCall)).toEqual([
      {name: 'ls', args: {}},
      {name: 'ls', args: {a: 1}},
    ])
    expect(body.contents[2].parts.map((p: any) => p.functionResponse)).toEqual([
      {name: 'ls', response: {output: 'a'}},
      {name: 'ls', response: {output: 'b'}},
    ])
    expect(encode({noCallIds: true})).toBe(encode({noCallIds: true}))
  })
})

describe("a chat server's refusal of a forced tool_choice (Z.AI, OpenRouter)", () => {
  const zai = JSON.stringify({
    error: {message: 'Tool choice must be auto', code: 400, metadata: {provider_name: 'Z.AI'}},
  })
  const openrouter = JSON.stringify({
    error: {message: "No endpoints found that support the provided 'tool_choice' value.", code: 404},
  })
  const fields = ['model', 'messages', 'tools', 'tool_choice']
  const forced = {upstream: 'chat' as const, fields, forcedTool: true}
  const note =
    'refused a forced tool_choice: sent again with tool_choice auto, the call asked for at the end of the prompt'

  it("learns Z.AI's 400 and OpenRouter's 404 from their exact words, only for a forced choice", () => {
    const a = new UpstreamAdaptations()
    expect(a.learn('zai', 'glm-4.6', zai, forced, 400)).toBe(note)
    expect(a.get('zai', 'glm-4.6')).toEqual({autoToolChoice: true})
    expect(a.learn('or', 'z-ai/glm-4.6', openrouter, forced, 404)).toBe(note)
    expect(a.list()[0].rules).toEqual([
      'a forced tool_choice sent as auto, the call asked for at the end of the prompt',
    ])
    // not forced, or learned already: the refusal is the client's
    expect(a.learn('zai', 'other', zai, {upstream: 'chat', fields}, 400)).toBeUndefined()
    expect(
      a.learn('zai', 'glm-4.6', zai, {...forced, adaptedWith: {autoToolChoice: true}}, 400),
    ).toBeUndefined()
    // the 404's words as a 400, the 400's as a 404, another 404, or a Messages upstream: nothing
    expect(a.learn('or', 'x', openrouter, forced, 400)).toBeUndefined()
    expect(a.learn('or', 'x', zai, forced, 404)).toBeUndefined()
    const notFound = JSON.stringify({error: {message: 'No endpoints found for z-ai/glm-9.', code: 404}})
    expect(a.learn('or', 'x', notFound, forced, 404)).toBeUndefined()
    expect(a.learn('or', 'x', zai, {...forced, upstream: 'messages' as const}, 400)).toBeUndefined()
    // the words quoted inside another message (an echo of the conversation) teach nothing
    const quoted = JSON.stringify({error: {message: 'Invalid prompt: "Tool choice must be auto"', code: 400}})
    expect(a.learn('zai', 'y', quoted, forced, 400)).toBeUndefined()
  })

  it('the next request sends auto, the call asked for at the end of the last user message or after tool results', () => {
    const request = (messages: unknown[], choice: unknown) =>
      decodeClientRequest(
        'chat',
        {
          model: 'glm-4.6',
          messages,
          tools: [
            {type: 'function', function: {name: 'Bash', parameters: {type: 'object'}}},
            {type: 'function', function: {name: 'Read', parameters: {type: 'object'}}},
          ],
          tool_choice: choice,
        },
        {},
      )
    const sent = (client: ReturnType<typeof request>, adapt?: UpstreamAdaptation) => {
      const out = encodeUpstreamRequest(client, 'chat', 'glm-4.6', {}, adapt)
      return {json: JSON.parse(out.body.toString()), sent: out.sent}
    }
    const named = request([{role: 'user', content: 'list files'}], {
      type: 'function',
      function: {name: 'Bash'},
    })
    expect(sent(named).sent.forcedTool).toBe(true)
    expect(sent(named).json.tool_choice).toEqual({type: 'function', function: {name: 'Bash'}})
    const adapted = sent(named, {autoToolChoice: true}).json
    expect(adapted.tool_choice).toBe('auto')
    expect(adapted.messages).toEqual([
      {role: 'user', content: 'list files\n\nIn this answer, call the tool Bash.'},
    ])
    const afterTools = request(
      [
        {role: 'user', content: [{type: 'text', text: 'go'}]},
        {
          role: 'assistant',
          content: null,
          tool_calls: [{id: 'c1', type: 'function', function: {name: 'Read', arguments: '{}'}}],
        },
        {role: 'tool', tool_call_id: 'c1', content: 'x'},
      ],
      'required',
    )
    const json = sent(afterTools, {autoToolChoice: true}).json
    expect(json.tool_choice).toBe('auto')
    expect(json.messages.at(-1)).toEqual({role: 'user', content: 'In this answer, call one of the tools.'})
    expect(json.messages[0]).toEqual({role: 'user', content: 'go'})
    // auto or none is no forced choice: nothing changes
    const auto = request([{role: 'user', content: 'hi'}], 'auto')
    expect(sent(auto).sent.forcedTool).toBeUndefined()
    expect(sent(auto, {autoToolChoice: true}).json.messages).toEqual([{role: 'user', content: 'hi'}])
  })
})

describe('a chat template that opens <think> in the prompt, learned from an answer', () => {
  it('is kept per provider and model, beside what refusals taught, once', () => {
    const a = new UpstreamAdaptations()
    expect(a.noteThinkOpen('p', 'qwen3')).toBe(true)
    expect(a.get('p', 'qwen3')).toEqual({thinkOpen: true})
    expect(a.noteThinkOpen('p', 'qwen3')).toBe(false)
    expect(a.get('p', 'other')).toBeUndefined()
    expect(
      a.learn('p', 'qwen3', openai("Unsupported parameter: 'user'.", 'user'), {
        fields: SENT,
        adaptedWith: a.get('p', 'qwen3'),
      }),
    ).toBe('refused user: sent again without it')
    expect(a.get('p', 'qwen3')).toEqual({thinkOpen: true, drop: ['user']})
    expect(a.list()[0]).toMatchObject({
      provider: 'p',
      model: 'qwen3',
      rules: [
        'sent without user',
        'answers read as reasoning up to </think> (its chat template opens <think> in the prompt; learned from an answer)',
      ],
    })
    // (no model name: nothing to key it on)
    expect(a.noteThinkOpen('p', '')).toBe(false)
  })

  it('changes nothing in the request', () => {
    const client = decodeClientRequest(
      'messages',
      {model: 'c', max_tokens: 100, messages: [{role: 'user', content: 'hi'}]},
      {},
    )
    const plain = encodeUpstreamRequest(client, 'chat', 'qwen3', {})
    const learned = encodeUpstreamRequest(client, 'chat', 'qwen3', {}, {thinkOpen: true})
    expect(learned.body.toString()).toBe(plain.body.toString())
    expect(describeAdaptation({thinkOpen: true})).toHaveLength(1)
  })
})

describe('thinking and efforts refused: Ollama, gpt-5.6 beside tools, xAI, DashScope; a floor of output tokens', () => {
  const BASH = {name: 'Bash', description: 'Run', input_schema: {type: 'object', properties: {}}}
  /** Claude Code's request (effort high unless said), encoded for `upstream`, as sent. */
  const claudeCode = (
    upstream: 'chat' | 'responses',
    extra: Record<string, unknown> = {},
    adapt?: UpstreamAdaptation,
    model = 'm',
  ) => {
    const client = decodeClientRequest(
      'messages',
      {
        model: 'claude-opus-4-8',
        max_tokens: 1024,
        thinking: {type: 'adaptive'},
        output_config: {effort: 'high'},
        messages: [{role: 'user', content: 'hi'}],
        ...extra,
      },
      {},
    )
    const out = encodeUpstreamRequest(client, upstream, model, {}, adapt)
    return {json: JSON.parse(out.body.toString()) as Record<string, any>, sent: out.sent}
  }
  const body = (message: string, type = 'invalid_request_error', param: string | null = null) =>
    JSON.stringify({error: {message, type, param, code: null}})

  it("Ollama's model without thinking, in its words now and before: reasoning_effort (Responses: reasoning) learned away", () => {
    const a = new UpstreamAdaptations()
    const {sent} = claudeCode('chat')
    expect(a.learn('ollama', 'llama3.1:8b', body('"llama3.1:8b" does not support thinking'), sent)).toBe(
      'refused thinking (a model without it): sent again without reasoning_effort',
    )
    expect(a.get('ollama', 'llama3.1:8b')).toEqual({drop: ['reasoning_effort']})
    expect(claudeCode('chat', {}, a.get('ollama', 'llama3.1:8b')).json).not.toHaveProperty('reasoning_effort')
    expect(
      a.learn(
        'ollama',
        'qwen3:8b',
        body('think value "high" is not supported for this model', 'api_error'),
        sent,
      ),
    ).toBe('refused thinking (a model without it): sent again without reasoning_effort')
    // the native API's string error, a name with a registry path
    expect(
      a.learn(
        'ollama',
        'x',
        JSON.stringify({error: 'registry.ollama.ai/library/x:7b does not support thinking'}),
        sent,
      ),
    ).toBeDefined()
    const responses = claudeCode('responses')
    expect(a.learn('ollama', 'r', body('"r" does not support thinking'), responses.sent)).toBe(
      'refused thinking (a model without it): sent again without reasoning',
    )
    // nothing thinking was sent, or the words inside other words: nothing learned
    const off = claudeCode('chat', {thinking: {type: 'disabled'}, output_config: undefined}).sent
    expect(a.learn('ollama', 'y', body('"y" does not support thinking'), off)).toBeUndefined()
    expect(
      a.learn('ollama', 'z', body('The user said "z" does not support thinking at all, is that so?'), sent),
    ).toBeUndefined()
  })

  it("gpt-5.6's refusal of an effort beside tools: none with tools, the effort kept without; gpt-5.4's: without it, then none if refused again", () => {
    const gpt56 = (model: string) =>
      body(
        `Function tools with reasoning_effort are not supported for ${model} in /v1/chat/completions. To use function tools, use /v1/responses or set reasoning_effort to 'none'.`,
        'invalid_request_error',
        'reasoning_effort',
      )
    const gpt54 = body(
      'Function tools with reasoning_effort are not supported for gpt-5.4 in /v1/chat/completions. Please use /v1/responses instead.',
      'invalid_request_error',
      'reasoning_effort',
    )
    const a = new UpstreamAdaptations()
    const tools = claudeCode('chat', {tools: [BASH]})
    expect(tools.json.reasoning_effort).toBe('high')
    expect(a.learn('openai', 'gpt-5.6-terra', gpt56('gpt-5.6-terra'), tools.sent)).toBe(
      'refused reasoning_effort beside function tools: sent again with reasoning_effort none (requests with tools from now on)',
    )
    const learned = a.get('openai', 'gpt-5.6-terra')
    expect(learned).toEqual({effortWithTools: 'none'})
    expect(claudeCode('chat', {tools: [BASH]}, learned).json.reasoning_effort).toBe('none')
    // without tools the effort stays; with thinking off and tools, none is sent all the same
    expect(claudeCode('chat', {}, learned).json.reasoning_effort).toBe('high')
    const noEffort = {thinking: {type: 'disabled'}, output_config: undefined, tools: [BASH]}
    expect(claudeCode('chat', noEffort, learned).json.reasoning_effort).toBe('none')
    // a request with no effort refused so (gpt-5.6's default effort is not none): none learned
    const b = new UpstreamAdaptations()
    expect(
      b.learn('openai', 'gpt-5.6-luna', gpt56('gpt-5.6-luna'), claudeCode('chat', noEffort).sent),
    ).toMatch(/with reasoning_effort none/)
    // none refused too, or a request without tools: the 400 is the client's
    expect(
      b.learn(
        'openai',
        'gpt-5.6-luna',
        gpt56('gpt-5.6-luna'),
        claudeCode('chat', noEffort, b.get('openai', 'gpt-5.6-luna')).sent,
      ),
    ).toBeUndefined()
    expect(b.learn('openai', 'other', gpt56('other'), claudeCode('chat').sent)).toBeUndefined()

    // gpt-5.4's words do not ask for none: the field goes, with tools only
    const c = new UpstreamAdaptations()
    expect(c.learn('openai', 'gpt-5.4', gpt54, tools.sent)).toBe(
      'refused reasoning_effort beside function tools: sent again without it (requests with tools from now on)',
    )
    expect(c.get('openai', 'gpt-5.4')).toEqual({effortWithTools: 'drop'})
    const retry = claudeCode('chat', {tools: [BASH]}, c.get('openai', 'gpt-5.4'))
    expect(retry.json).not.toHaveProperty('reasoning_effort')
    expect(claudeCode('chat', {}, c.get('openai', 'gpt-5.4')).json.reasoning_effort).toBe('high')
    // refused again without the field: none from then on
    expect(c.learn('openai', 'gpt-5.4', gpt54, retry.sent)).toMatch(/with reasoning_effort none/)
    expect(c.get('openai', 'gpt-5.4')).toEqual({effortWithTools: 'none'})
    // a request that asked for no thinking goes to gpt-5.4 with its switch, none: refused beside
    // tools (gpt-5.4's words), it goes without the field, as the requests with tools after it
    const e = new UpstreamAdaptations()
    const offWithTools = claudeCode('chat', noEffort, undefined, 'gpt-5.4')
    expect(offWithTools.json.reasoning_effort).toBe('none')
    expect(e.learn('openai', 'gpt-5.4', gpt54, offWithTools.sent)).toBe(
      'refused reasoning_effort none beside function tools: sent again without it (requests with tools from now on)',
    )
    expect(e.get('openai', 'gpt-5.4')).toEqual({effortWithTools: 'drop'})
    expect(claudeCode('chat', noEffort, e.get('openai', 'gpt-5.4'), 'gpt-5.4').json).not.toHaveProperty(
      'reasoning_effort',
    )
    // a model that went without the field for another refusal, refused so without it: none with tools
    const d = new UpstreamAdaptations()
    d.learn(
      'openai',
      'm',
      openai("Unsupported parameter: 'reasoning_effort'.", 'reasoning_effort'),
      tools.sent,
    )
    const dropped = claudeCode('chat', {tools: [BASH]}, d.get('openai', 'm'))
    expect(dropped.json).not.toHaveProperty('reasoning_effort')
    expect(d.learn('openai', 'm', gpt56('m'), dropped.sent)).toMatch(/with reasoning_effort none/)
    expect(d.get('openai', 'm')).toEqual({drop: ['reasoning_effort'], effortWithTools: 'none'})
    expect(claudeCode('chat', {tools: [BASH]}, d.get('openai', 'm')).json.reasoning_effort).toBe('none')
    expect(claudeCode('chat', {}, d.get('openai', 'm')).json).not.toHaveProperty('reasoning_effort')
    // doctor's words
    expect(describeAdaptation({effortWithTools: 'none'})).toEqual([
      'reasoning_effort sent as none with function tools, so no reasoning there (refused beside tools on chat completions; a provider added with --family responses keeps it)',
    ])
    expect(describeAdaptation({effortWithTools: 'drop'})[0]).toMatch(
      /^sent without reasoning_effort with function tools/,
    )
  })

  it("xAI's camelCase refusal, its error a string: reasoning_effort, a Responses reasoning.effort (the summary kept)", () => {
    const xai = (field: string) =>
      JSON.stringify({
        code: 'Client specified an invalid argument',
        error: `Model grok-4-latest does not support parameter ${field}.`,
      })
    expect(refusedField(xai('reasoningEffort'), SENT)).toBe('reasoning_effort')
    expect(refusedField(xai('maxTokens'), SENT)).toBe('max_tokens')
    expect(refusedField(xai('reasoningEffort'), ['model', 'input', 'reasoning', 'include'])).toBe(
      'reasoning.effort',
    )
    // a field a request may not go without, or one not sent: the client's 400
    expect(refusedField(xai('stop'), [...SENT, 'stop'])).toBeUndefined()
    expect(refusedField(xai('topP'), SENT)).toBeUndefined()
    const a = new UpstreamAdaptations()
    expect(a.learn('xai', 'grok-4-latest', xai('reasoningEffort'), claudeCode('chat').sent)).toBe(
      'refused reasoning_effort: sent again without it',
    )
    const responses = claudeCode('responses', {thinking: {type: 'adaptive', display: 'summarized'}})
    expect(responses.json.reasoning).toEqual({effort: 'high', summary: 'auto'})
    expect(a.learn('xai', 'grok-4', xai('reasoningEffort'), responses.sent)).toBe(
      'refused reasoning.effort: sent again without it',
    )
    const again = claudeCode(
      'responses',
      {thinking: {type: 'adaptive', display: 'summarized'}},
      a.get('xai', 'grok-4'),
    )
    expect(again.json.reasoning).toEqual({summary: 'auto'})
    expect(again.json.include).toEqual(['reasoning.encrypted_content'])
  })

  it("DashScope's refusal of a non-stream request while thinking, in English or Chinese: enable_thinking false, streams untouched", () => {
    const dashscope = (message: string) =>
      JSON.stringify({
        error: {code: 'invalid_parameter_error', param: null, message, type: 'invalid_request_error'},
        id: 'chatcmpl-1',
        request_id: 'r1',
      })
    const english = dashscope('parameter.enable_thinking must be set to false for non-streaming calls')
    const chinese = dashscope('parameter.enable_thinking必须设置为false才能进行非流式调用')
    const a = new UpstreamAdaptations()
    const {sent} = claudeCode('chat')
    expect(a.learn('dashscope', 'qwen3-32b', english, sent)).toBe(
      'refused a non-stream request while thinking: sent again with enable_thinking false (no reasoning in its answer)',
    )
    expect(a.get('dashscope', 'qwen3-32b')).toEqual({noThinkingUnstreamed: true})
    expect(a.learn('dashscope', 'qwen-plus', chinese, sent)).toBeDefined()
    // a stream was not what it refused
    expect(a.learn('dashscope', 'q', english, claudeCode('chat', {stream: true}).sent)).toBeUndefined()
    const learned = a.get('dashscope', 'qwen3-32b')
    expect(claudeCode('chat', {}, learned).json.enable_thinking).toBe(false)
    const stream = claudeCode('chat', {stream: true}, learned).json
    expect(stream).not.toHaveProperty('enable_thinking')
    expect(stream.reasoning_effort).toBe('high')
    expect(describeAdaptation(learned!)).toEqual([
      'a non-stream request sent with enable_thinking false, so its answer has no reasoning',
    ])
  })

  it("Responses: a max_output_tokens below OpenAI's 16 sent as 16; another floor a server states is learned", () => {
    const probe = claudeCode('responses', {max_tokens: 1, thinking: undefined, output_config: undefined})
    expect(probe.json.max_output_tokens).toBe(16)
    expect(claudeCode('responses', {max_tokens: 500}).json.max_output_tokens).toBe(500)
    const floor = (n: number, got: number, param = 'max_output_tokens') =>
      JSON.stringify({
        error: {
          message: `Invalid '${param}': integer below minimum value. Expected a value >= ${n}, but got ${got} instead.`,
          type: 'invalid_request_error',
          param,
          code: 'integer_below_min_value',
        },
      })
    expect(outputFloor(floor(32, 16), 16)).toBe(32)
    expect(outputFloor(floor(16, 16), 16)).toBeUndefined()
    expect(outputFloor(floor(32, 16), undefined)).toBeUndefined()
    const a = new UpstreamAdaptations()
    expect(a.learn('r', 'm', floor(32, 16), probe.sent)).toBe(
      'refused max_tokens 16: sent again with 32, its minimum',
    )
    expect(a.get('r', 'm')).toEqual({minOutputTokens: 32})
    expect(claudeCode('responses', {max_tokens: 1}, a.get('r', 'm')).json.max_output_tokens).toBe(32)
    expect(claudeCode('responses', {max_tokens: 500}, a.get('r', 'm')).json.max_output_tokens).toBe(500)
    // a chat server's words for max_tokens: raised, not dropped
    const chat = claudeCode('chat', {max_tokens: 1, thinking: undefined, output_config: undefined})
    expect(a.learn('c', 'm', floor(4, 1, 'max_tokens'), chat.sent)).toBe(
      'refused max_tokens 1: sent again with 4, its minimum',
    )
    expect(claudeCode('chat', {max_tokens: 1}, a.get('c', 'm')).json.max_tokens).toBe(4)
    expect(describeAdaptation({minOutputTokens: 32})).toEqual(['max_tokens raised to at least 32'])
  })
})

describe("DeepSeek's, Kimi's and DashScope's refusals in their thinking mode", () => {
  /** DeepSeek's error body, on chat completions and on its Anthropic endpoint alike. */
  const deepseek = (message: string) =>
    JSON.stringify({
      error: {message, type: 'invalid_request_error', param: null, code: 'invalid_request_error'},
    })

  /** Claude Code 2.1.332's request for a sub-agent: thinking off, the session's effort kept. */
  const subAgent = {
    model: 'deepseek-v4-pro',
    max_tokens: 32000,
    messages: [{role: 'user', content: [{type: 'text', text: 'Search the repo.'}]}],
    system: [{type: 'text', text: 'You are a sub-agent.'}],
    thinking: {type: 'disabled'},
    output_config: {effort: 'max'},
    stream: true,
  }
  const effortRefused = deepseek('thinking options type cannot be disabled when reasoning_effort is set')

  it("DeepSeek's Anthropic endpoint: an effort beside thinking disabled is learned away from such bodies only", () => {
    const a = new UpstreamAdaptations()
    expect(a.learn('ds-effort', 'deepseek-v4-pro', effortRefused, sentOfPassedMessages(subAgent))).toBe(
      'refused output_config.effort beside thinking.type disabled: sent again without the effort (requests that turn thinking off, from now on)',
    )
    const learned = a.get('ds-effort', 'deepseek-v4-pro')!
    expect(learned).toEqual({effortOnlyWithThinking: true})
    expect(rewritesMessagesBody(learned)).toBe(true)
    expect(describeAdaptation(learned)).toEqual([
      'output_config.effort left out where thinking.type is disabled (refused together)',
    ])
    // the sub-agent's body again: without output_config, every other field in its order
    const {output_config: _, ...rest} = subAgent
    expect(adaptPassedMessages(subAgent, learned).toString()).toBe(JSON.stringify(rest))
    // another part of output_config stays
    const format = {...subAgent, output_config: {effort: 'max', format: {type: 'json_schema'}}}
    expect(JSON.parse(adaptPassedMessages(format, learned).toString()).output_config).toEqual({
      format: {type: 'json_schema'},
    })
    // the main agent's request, which thinks: its bytes as they came
    const main = {...subAgent, thinking: {type: 'adaptive'}}
    expect(adaptPassedMessages(main, learned).toString()).toBe(JSON.stringify(main))
    // learned already, or a body that did not send the pair: the refusal is the client's
    expect(
      a.learn('ds-effort', 'deepseek-v4-pro', effortRefused, sentOfPassedMessages(subAgent, learned)),
    ).toBeUndefined()
    const b = new UpstreamAdaptations()
    expect(b.learn('ds-effort2', 'm', effortRefused, sentOfPassedMessages(rest))).toBeUndefined()
    expect(b.learn('ds-effort2', 'm', effortRefused, sentOfPassedMessages(main))).toBeUndefined()
  })

  it("DeepSeek V4's refusal of a tool call turn without reasoning_content: an empty one on each", () => {
    const V4 = 'The `reasoning_content` in the thinking mode must be passed back to the API.'
    for (const [i, body] of [
      deepseek(V4),
      // 9router's prefix
      deepseek(`[deepseek/deepseek-v4-flash] [400]: ${V4}`),
      // without the backticks (a client that strips them)
      deepseek(V4.replaceAll('`', '')),
    ].entries()) {
      const a = new UpstreamAdaptations()
      expect(a.learn(`ds-rc${i}`, 'deepseek-v4-flash', body, {upstream: 'chat', fields: SENT})).toBe(
        'refused an assistant turn without reasoning_content: sent again with it on every assistant turn (the reasoning there, or empty)',
      )
      expect(a.get(`ds-rc${i}`, 'deepseek-v4-flash')).toEqual({reasoningHistory: 'reasoning_content'})
    }
    // the words in prose, or an echo of the request: nothing
    const a = new UpstreamAdaptations()
    for (const message of [`Why does "${V4}" happen?`, `1 validation error: 'input': '${V4}'`])
      expect(a.learn('ds-rc', 'deepseek-v4-flash', deepseek(message), {fields: SENT})).toBeUndefined()
    // a chat client's history passed through: its tool call turn without reasoning goes with an empty one
    const passed = {
      model: 'deepseek-v4-flash',
      messages: [
        {role: 'user', content: 'go'},
        {
          role: 'assistant',
          content: null,
          tool_calls: [{id: 'a', type: 'function', function: {name: 'f', arguments: '{}'}}],
        },
        {role: 'tool', tool_call_id: 'a', content: 'ok'},
      ],
    }
    const learn = new UpstreamAdaptations()
    expect(learn.learn('ds-rc-pass', 'deepseek-v4-flash', deepseek(V4), sentOfPassedChat(passed))).toMatch(
      /^refused an assistant turn without reasoning_content/,
    )
    const again = JSON.parse(
      adaptPassedChat(passed, learn.get('ds-rc-pass', 'deepseek-v4-flash')!).toString(),
    )
    expect(again.messages[1]).toEqual({...passed.messages[1], reasoning_content: ''})
    expect(again.messages[0]).toEqual(passed.messages[0])
  })

  /** A thinking-mode server's refusal of a forced choice, each in its own words and body. */
  const CHOICE_REFUSALS: Array<[provider: string, model: string, body: string]> = [
    ['ds-choice-v4', 'deepseek-v4-flash', deepseek('Thinking mode does not support this tool_choice')],
    ['ds-choice-r', 'deepseek-reasoner', deepseek('deepseek-reasoner does not support this tool_choice')],
    [
      'kimi-choice-req',
      'kimi-k2.6',
      JSON.stringify({
        error: {
          message: "tool_choice 'required' is incompatible with thinking enabled",
          type: 'invalid_request_error',
        },
      }),
    ],
    [
      'kimi-choice-spec',
      'kimi-for-coding',
      JSON.stringify({
        error: {
          message: "tool_choice 'specified' is incompatible with thinking enabled",
          type: 'invalid_request_error',
        },
      }),
    ],
    // Kimi K3 and GLM-5.3 behind a relay in Kimi's words: their "off" is effort low, still thinking
    [
      'kimi-choice-k3',
      'kimi-k3',
      JSON.stringify({
        error: {
          message: "tool_choice 'specified' is incompatible with thinking enabled",
          type: 'invalid_request_error',
        },
      }),
    ],
    [
      'glm-choice-53',
      'z-ai/glm-5.3',
      JSON.stringify({
        error: {
          message: "tool_choice 'required' is incompatible with thinking enabled",
          type: 'invalid_request_error',
        },
      }),
    ],
    [
      'dashscope-choice',
      'qwen3-max',
      JSON.stringify({
        error: {
          code: 'invalid_parameter_error',
          param: null,
          message:
            '<400> InternalError.Algo.InvalidParameter: The tool_choice parameter does not support being set to required or object in thinking mode',
          type: 'invalid_request_error',
        },
      }),
    ],
    [
      'router-choice',
      'deepseek-v4-pro',
      deepseek('[deepseek/deepseek-v4-pro] [400]: Thinking mode does not support this tool_choice'),
    ],
  ]
  const note =
    'refused a forced tool_choice: sent again with tool_choice auto, the call asked for at the end of the prompt'

  /** Each model's switch of thinking off, as the forced call goes with it. */
  const OFF: Record<string, Record<string, unknown>> = {
    'deepseek-v4-flash': {thinking: {type: 'disabled'}},
    'kimi-k2.6': {thinking: {type: 'disabled'}},
    'qwen3-max': {enable_thinking: false},
    'deepseek-v4-pro': {thinking: {type: 'disabled'}},
  }

  it('a forced tool_choice refused in thinking mode (chat): thinking off for the forced call where the model has a switch, else auto', () => {
    const body = (model: string): Record<string, unknown> => ({
      model,
      messages: [{role: 'user', content: 'Answer in JSON.'}],
      tools: [{type: 'function', function: {name: 'answer', parameters: {type: 'object'}}}],
      tool_choice: {type: 'function', function: {name: 'answer'}},
      reasoning_effort: 'high',
    })
    for (const [provider, model, refusal] of CHOICE_REFUSALS) {
      const passed = body(model)
      const a = new UpstreamAdaptations()
      const off = OFF[model]
      if (!off) {
        // deepseek-reasoner, kimi-for-coding, Kimi K3 and GLM-5.3 (thinking always; the last three's
        // "off" is effort low) have no switch: auto, the call asked for at the end of the prompt
        expect([provider, a.learn(provider, model, refusal, sentOfPassedChat(passed), 400)]).toEqual([
          provider,
          note,
        ])
        expect(a.get(provider, model)).toEqual({autoToolChoice: true})
        const {reasoning_effort: effort, ...rest} = passed
        expect(adaptPassedChat(body(model), {autoToolChoice: true}).toString()).toBe(
          JSON.stringify({
            ...rest,
            messages: [{role: 'user', content: 'Answer in JSON.\n\nIn this answer, call the tool answer.'}],
            tool_choice: 'auto',
            reasoning_effort: effort,
          }),
        )
        continue
      }
      const switchWords =
        'thinking' in off ? 'thinking.type disabled' : `enable_thinking ${String(off.enable_thinking)}`
      expect([provider, a.learn(provider, model, refusal, sentOfPassedChat(passed), 400)]).toEqual([
        provider,
        `refused a forced tool_choice in thinking mode: sent again with thinking off (${switchWords}), the forced choice kept`,
      ])
      const learned = a.get(provider, model)!
      expect(learned).toEqual({forcedThinkingOff: true})
      expect(describeAdaptation(learned)).toEqual([
        'a request that forces a tool call sent with thinking turned off, the forced tool_choice kept (refused while thinking)',
      ])
      // the forced choice kept, the switch on, the effort gone
      const {reasoning_effort: _, ...rest} = passed
      const adapted = JSON.parse(adaptPassedChat(body(model), learned).toString())
      expect(adapted).toEqual({...rest, ...off})
      // not forced: as it came
      const auto = {...passed, tool_choice: 'auto'}
      expect(adaptPassedChat(auto, learned).toString()).toBe(JSON.stringify(auto))
      expect(
        new UpstreamAdaptations().learn(provider, model, refusal, sentOfPassedChat(auto), 400),
      ).toBeUndefined()
      // refused with thinking off too: auto, the call asked for, from now on
      expect(a.learn(provider, model, refusal, sentOfPassedChat(adapted, learned), 400)).toBe(note)
      const fallback = a.get(provider, model)!
      expect(fallback).toEqual({forcedThinkingOff: true, autoToolChoice: true})
      expect(describeAdaptation(fallback)).toEqual([
        'a forced tool_choice sent as auto, the call asked for at the end of the prompt',
      ])
      expect(JSON.parse(adaptPassedChat(body(model), fallback).toString())).toMatchObject({
        tool_choice: 'auto',
        reasoning_effort: 'high',
      })
      expect(JSON.parse(adaptPassedChat(body(model), fallback).toString())).not.toHaveProperty(
        Object.keys(off)[0],
      )
    }
    // a switch the server refused as a field before: the forcing goes at once
    const dropped = new UpstreamAdaptations()
    const known: UpstreamAdaptation = {drop: ['thinking']}
    dropped.learn(
      'ds-dropped',
      'deepseek-v4-flash',
      deepseek('Unrecognized request argument supplied: thinking'),
      {
        upstream: 'chat',
        fields: ['model', 'messages', 'thinking'],
      },
    )
    expect(dropped.get('ds-dropped', 'deepseek-v4-flash')).toEqual(known)
    expect(
      dropped.learn(
        'ds-dropped',
        'deepseek-v4-flash',
        CHOICE_REFUSALS[0][2],
        sentOfPassedChat(body('deepseek-v4-flash'), dropped.get('ds-dropped', 'deepseek-v4-flash')),
        400,
      ),
    ).toBe(note)
    // Z.AI's "Tool choice must be auto" says nothing of thinking: auto, though GLM has a switch
    const zai = new UpstreamAdaptations()
    expect(
      zai.learn(
        'zai',
        'glm-4.6',
        JSON.stringify({error: {message: 'Tool choice must be auto', code: 400}}),
        sentOfPassedChat(body('glm-4.6')),
        400,
      ),
    ).toBe(note)
    // the words quoted in another message, or another tool_choice refusal: nothing
    const a = new UpstreamAdaptations()
    for (const message of [
      'Invalid prompt: "Thinking mode does not support this tool_choice"',
      'The user wrote that thinking mode does not support this tool_choice.',
      'tool_choice must name a tool in tools',
    ])
      expect(
        a.learn('ds-choice-no', 'deepseek-v4-flash', deepseek(message), sentOfPassedChat(body('x')), 400),
      ).toBeUndefined()
  })

  it("DeepSeek's Anthropic endpoint refuses a forced tool_choice in thinking mode: passed through with thinking disabled, then as auto if refused still", () => {
    const webSearch = {
      model: 'deepseek-v4-pro',
      max_tokens: 32000,
      thinking: {type: 'adaptive'},
      output_config: {effort: 'max'},
      messages: [
        {role: 'user', content: [{type: 'text', text: 'Perform a web search for the query: gwctl'}]},
      ],
      tools: [{name: 'web_search', input_schema: {type: 'object'}}],
      tool_choice: {type: 'tool', name: 'web_search'},
      stream: true,
    }
    for (const [provider, message] of [
      ['ds-anth-choice', 'deepseek-reasoner does not support this tool_choice'],
      ['ds-anth-choice2', 'Thinking mode does not support this tool_choice'],
      ['kimi-anth-choice', "tool_choice 'specified' is incompatible with thinking enabled"],
    ]) {
      const a = new UpstreamAdaptations()
      expect(a.learn(provider, 'deepseek-v4-pro', deepseek(message), sentOfPassedMessages(webSearch))).toBe(
        'refused a forced tool_choice in thinking mode: sent again with thinking.type disabled (and no output_config.effort), the forced choice kept',
      )
      const learned = a.get(provider, 'deepseek-v4-pro')!
      expect(learned).toEqual({forcedThinkingOff: true})
      expect(rewritesMessagesBody(learned)).toBe(true)
      // thinking off, the effort gone with it (refused together there), the forced choice kept,
      // every other field in its order
      const {output_config: _, ...rest} = webSearch
      const off = adaptPassedMessages(webSearch, learned)
      expect(off.toString()).toBe(JSON.stringify({...rest, thinking: {type: 'disabled'}}))
      // refused with thinking off too: the forcing goes
      expect(
        a.learn(
          provider,
          'deepseek-v4-pro',
          deepseek(message),
          sentOfPassedMessages(JSON.parse(off.toString()), learned),
        ),
      ).toBe(note)
      const fallback = a.get(provider, 'deepseek-v4-pro')!
      expect(fallback).toEqual({forcedThinkingOff: true, claude: {noForcedTools: true}})
      expect(adaptPassedMessages(webSearch, fallback).toString()).toBe(
        JSON.stringify({
          ...webSearch,
          messages: [
            {
              role: 'user',
              content: [
                {type: 'text', text: 'Perform a web search for the query: gwctl'},
                {type: 'text', text: 'In this answer, call the tool web_search.'},
              ],
            },
          ],
          tool_choice: {type: 'auto'},
        }),
      )
    }
    // Claude Code's WebSearch that already turns thinking off (2.1.166 on), refused: auto at once
    const disabled = {...webSearch, thinking: {type: 'disabled'}}
    const b = new UpstreamAdaptations()
    expect(
      b.learn(
        'ds-anth-off',
        'deepseek-v4-pro',
        deepseek('deepseek-reasoner does not support this tool_choice'),
        sentOfPassedMessages(disabled),
      ),
    ).toBe(note)
    expect(b.get('ds-anth-off', 'deepseek-v4-pro')).toEqual({claude: {noForcedTools: true}})
    // Claude 5.5's refusal says nothing of thinking: auto, as before
    const c = new UpstreamAdaptations()
    expect(
      c.learn(
        'claude55',
        'corp-model',
        JSON.stringify({
          type: 'error',
          error: {
            type: 'invalid_request_error',
            message: 'tool_choice: type "tool" and "any" are not supported for this model.',
          },
        }),
        sentOfPassedMessages(webSearch),
      ),
    ).toBe(note)
    expect(c.get('claude55', 'corp-model')).toEqual({claude: {noForcedTools: true}})
    // `any` after tool results, a string turn: the call asked for in a user turn's text
    const learned: UpstreamAdaptation = {claude: {noForcedTools: true}}
    const any = {
      ...webSearch,
      messages: [{role: 'user', content: 'go'}],
      tool_choice: {type: 'any', disable_parallel_tool_use: true},
    }
    expect(JSON.parse(adaptPassedMessages(any, learned).toString())).toMatchObject({
      messages: [{role: 'user', content: 'go\n\nIn this answer, call one of the tools.'}],
      tool_choice: {type: 'auto', disable_parallel_tool_use: true},
    })
    // not forced: as it came
    const auto = {...webSearch, tool_choice: {type: 'auto'}}
    expect(adaptPassedMessages(auto, learned).toString()).toBe(JSON.stringify(auto))
  })
})

describe("a model's switch of thinking off the upstream refuses", () => {
  const off = () =>
    decodeClientRequest(
      'messages',
      {model: 'c', max_tokens: 100, thinking: {type: 'disabled'}, messages: [{role: 'user', content: 'hi'}]},
      {model: 'c', stream: false},
    )

  it('learns to go without `thinking` or `enable_thinking`, and the next body has none', () => {
    for (const [model, field, refusal] of [
      ['deepseek-v4-flash', 'thinking', 'Unrecognized request argument supplied: thinking'],
      ['glm-4.7', 'thinking', openai("Unsupported parameter: 'thinking'", null)],
      ['kimi-k2.6', 'thinking', openai('Extra inputs are not permitted', 'thinking')],
      ['qwen3-32b', 'enable_thinking', 'Unsupported parameter(s): enable_thinking'],
    ]) {
      const a = new UpstreamAdaptations()
      const first = encodeUpstreamRequest(off(), 'chat', model)
      expect(JSON.parse(first.body.toString())[field], model).toBeDefined()
      expect(a.learn('p', model, refusal, first.sent), model).toBe(`refused ${field}: sent again without it`)
      expect(a.get('p', model), model).toEqual({drop: [field]})
      const again = JSON.parse(
        encodeUpstreamRequest(off(), 'chat', model, {}, a.get('p', model)).body.toString(),
      )
      expect(again[field], model).toBeUndefined()
      expect(again.messages, model).toEqual([{role: 'user', content: 'hi'}])
    }
  })

  it("never drops a Messages upstream's thinking", () => {
    const a = new UpstreamAdaptations()
    const sent = {upstream: 'messages' as const, fields: ['model', 'messages', 'thinking', 'max_tokens']}
    expect(a.learn('p', 'm', openai('Extra inputs are not permitted', 'thinking'), sent)).toBeUndefined()
    expect(a.learn('p', 'm', "Unrecognized request argument supplied: 'thinking'", sent)).toBeUndefined()
  })
})

describe('a model that always thinks refuses "off" and the efforts it does not take (GLM-5.3)', () => {
  const zai = (message: string) => JSON.stringify({error: {code: '1210', message}})
  const WORDS = zai(
    'This model always engages in thinking and cannot be disabled; please use low, high, or max',
  )
  const BIGMODEL = zai('该模型始终思考，不支持关闭思考；请使用 low、high 或 max。')
  const off = () =>
    decodeClientRequest(
      'messages',
      {model: 'c', max_tokens: 100, thinking: {type: 'disabled'}, messages: [{role: 'user', content: 'hi'}]},
      {model: 'c', stream: false},
    )
  const effort = (value: string) =>
    decodeClientRequest(
      'messages',
      {
        model: 'c',
        max_tokens: 32000,
        thinking: {type: 'adaptive'},
        output_config: {effort: value},
        messages: [{role: 'user', content: 'hi'}],
      },
      {model: 'c', stream: false},
    )
  const body = (request: ReturnType<typeof off>, model: string, adapt?: UpstreamAdaptation) =>
    JSON.parse(encodeUpstreamRequest(request, 'chat', model, {}, adapt).body.toString())

  it('reads the efforts it lists, in English and in Chinese', () => {
    expect(alwaysThinkingEfforts(JSON.parse(WORDS).error.message)).toEqual(['low', 'high', 'max'])
    expect(alwaysThinkingEfforts(JSON.parse(BIGMODEL).error.message)).toEqual(['low', 'high', 'max'])
    expect(alwaysThinkingEfforts('Thinking cannot be disabled for this model')).toBeUndefined()
    expect(alwaysThinkingEfforts("Supported values are: 'low', 'medium', and 'high'.")).toBeUndefined()
  })

  it("learns from the gateway's own switch refused: the retry sends the least effort, and medium goes as high", () => {
    // a name the gateway does not know always thinks (a later GLM): the switch goes, refused once
    for (const words of [WORDS, BIGMODEL]) {
      const a = new UpstreamAdaptations()
      const first = encodeUpstreamRequest(off(), 'chat', 'glm-5.4')
      expect(JSON.parse(first.body.toString()).thinking).toEqual({type: 'disabled'})
      expect(a.learn('zai', 'glm-5.4', words, first.sent)).toBe(
        'refused thinking off (it always thinks, at low, high, max): sent again with reasoning_effort low',
      )
      expect(a.get('zai', 'glm-5.4')).toEqual({
        effort: {none: 'low', minimal: 'low', medium: 'high', xhigh: 'max'},
        alwaysThinks: true,
      })
      const again = body(off(), 'glm-5.4', a.get('zai', 'glm-5.4'))
      expect(again.thinking).toBeUndefined()
      expect(again.reasoning_effort).toBe('low')
      // the same refusal taught the main agent's medium: no second failed try
      expect(body(effort('medium'), 'glm-5.4', a.get('zai', 'glm-5.4')).reasoning_effort).toBe('high')
      expect(body(effort('high'), 'glm-5.4', a.get('zai', 'glm-5.4')).reasoning_effort).toBe('high')
    }
  })

  it("an effort none learned from other words (a client's own reasoning_effort none refused) leaves the switch off alone", () => {
    // OpenAI-style "Supported values are" for a chat client's none: effort.none learned, nothing of
    // a model that always thinks
    const a = new UpstreamAdaptations()
    const sent = {
      upstream: 'chat' as const,
      fields: ['model', 'messages', 'reasoning_effort'],
      effort: 'none',
    }
    a.learn(
      'dash',
      'qwen3.7-plus',
      JSON.stringify({
        error: {
          message: "Invalid value: 'none'. Supported values are: 'low', 'medium', and 'high'.",
          type: 'invalid_request_error',
          param: 'reasoning_effort',
          code: 'unsupported_value',
        },
      }),
      sent,
    )
    const learned = a.get('dash', 'qwen3.7-plus')
    expect(learned?.effort?.none).toBe('low')
    expect(learned?.alwaysThinks).toBeUndefined()
    // Claude Code's helper call (thinking off) still goes with the switch off, not with an effort
    const helper = body(off(), 'qwen3.7-plus', learned)
    expect(helper.reasoning_effort).toBeUndefined()
    expect(helper.enable_thinking ?? helper.thinking).toBeDefined()
  })

  it('learns from an effort refused, for a name that does not say it (a proxy alias)', () => {
    const a = new UpstreamAdaptations()
    const first = encodeUpstreamRequest(effort('medium'), 'chat', 'coding-model')
    expect(first.sent.effort).toBe('medium')
    expect(a.learn('zai', 'coding-model', WORDS, first.sent)).toBe(
      'refused reasoning_effort medium (it always thinks, at low, high, max): sent again with reasoning_effort high',
    )
    expect(body(effort('medium'), 'coding-model', a.get('zai', 'coding-model')).reasoning_effort).toBe('high')
    // a Responses upstream's effort, in its field
    const codex = decodeClientRequest(
      'responses',
      {model: 'gpt-5.5', input: 'hi', reasoning: {effort: 'minimal'}},
      {model: 'gpt-5.5', stream: false},
    )
    const responses = encodeUpstreamRequest(codex, 'responses', 'glm-relay')
    expect(new UpstreamAdaptations().learn('r', 'glm-relay', WORDS, responses.sent)).toBe(
      'refused reasoning.effort minimal (it always thinks, at low, high, max): sent again with reasoning.effort low',
    )
  })

  it('teaches nothing for an effort it takes, nor a request that sent neither an effort nor a switch', () => {
    const a = new UpstreamAdaptations()
    expect(
      a.learn('zai', 'm', WORDS, encodeUpstreamRequest(effort('high'), 'chat', 'm').sent),
    ).toBeUndefined()
    // (no switch known for the name: nothing was sent that the words could be about)
    expect(a.learn('zai', 'm', WORDS, encodeUpstreamRequest(off(), 'chat', 'sim-mini').sent)).toBeUndefined()
    // a chat client's own thinking: disabled, passed through: not the gateway's to change
    const passed = sentOfPassedChat({
      model: 'm',
      thinking: {type: 'disabled'},
      messages: [{role: 'user', content: 'hi'}],
    })
    expect(a.learn('zai', 'm', WORDS, passed)).toBeUndefined()
    expect(a.list()).toEqual([])
  })

  it('by its name, GLM-5.3 is sent what it takes from the first try', () => {
    expect(body(off(), 'glm-5.3')).toMatchObject({reasoning_effort: 'low'})
    expect(body(off(), 'glm-5.3')).not.toHaveProperty('thinking')
    expect(body(effort('medium'), 'glm-5.3').reasoning_effort).toBe('high')
    expect(body(effort('medium'), 'glm-5.3-flash').reasoning_effort).toBe('high')
  })

  it("a Messages upstream's refusal of thinking.type disabled in the same words: output_config.effort low", () => {
    const a = new UpstreamAdaptations()
    const sent = {
      upstream: 'messages' as const,
      fields: ['model', 'messages', 'max_tokens', 'thinking'],
      thinkingOff: 'disabled' as const,
    }
    expect(a.learn('zai-anthropic', 'glm-5.3', WORDS, sent)).toBe(
      'refused thinking.type disabled: sent again with output_config.effort low (it cannot stop thinking)',
    )
    expect(a.get('zai-anthropic', 'glm-5.3')).toEqual({claude: {thinkingOff: 'low'}})
  })

  it('says what it learned, in words', () => {
    expect(describeAdaptation({effort: {none: 'low', medium: 'high'}})).toEqual([
      'thinking off (effort none) sent as effort low',
      'effort medium sent as high',
    ])
  })
})

describe("a local server's refusal of chat_template_kwargs", () => {
  const off = () =>
    decodeClientRequest(
      'messages',
      {model: 'c', max_tokens: 100, thinking: {type: 'disabled'}, messages: [{role: 'user', content: 'hi'}]},
      {model: 'c', stream: false},
    )

  it('learns to go without the template arguments; the vendor field stays', () => {
    for (const refusal of [
      'Unrecognized request argument supplied: chat_template_kwargs',
      openai('Extra inputs are not permitted', 'chat_template_kwargs'),
    ]) {
      const a = new UpstreamAdaptations()
      const first = encodeUpstreamRequest(off(), 'chat', 'Qwen/Qwen3.6-35B-A3B', {localServer: true})
      expect(JSON.parse(first.body.toString()).chat_template_kwargs).toEqual({enable_thinking: false})
      expect(a.learn('p', 'q', refusal, first.sent)).toBe(
        'refused chat_template_kwargs: sent again without it',
      )
      const again = JSON.parse(
        encodeUpstreamRequest(
          off(),
          'chat',
          'Qwen/Qwen3.6-35B-A3B',
          {localServer: true},
          a.get('p', 'q'),
        ).body.toString(),
      )
      expect(again).not.toHaveProperty('chat_template_kwargs')
      expect(again.enable_thinking).toBe(false)
      expect(describeAdaptation(a.get('p', 'q')!)).toEqual(['sent without chat_template_kwargs'])
    }
  })

  it("never learns away, nor drops, a chat client's own chat_template_kwargs passed through", () => {
    const body = {
      model: 'q',
      messages: [{role: 'user', content: 'hi'}],
      chat_template_kwargs: {enable_thinking: false},
      user: 'u',
    }
    const a = new UpstreamAdaptations()
    const refusal = 'Unrecognized request argument supplied: chat_template_kwargs'
    expect(a.learn('p', 'q', refusal, sentOfPassedChat(body))).toBeUndefined()
    // learned from a translated request: a chat client's own still goes as it came
    const passed = JSON.parse(
      adaptPassedChat(body, {drop: ['chat_template_kwargs', 'user']}).toString(),
    ) as Record<string, unknown>
    expect(passed.chat_template_kwargs).toEqual({enable_thinking: false})
    expect(passed).not.toHaveProperty('user')
  })
})

describe("DashScope's refusal of history tool-call arguments that are not JSON", () => {
  const dashscope = JSON.stringify({
    error: {
      code: 'invalid_parameter_error',
      param: null,
      message:
        '<400> InternalError.Algo.InvalidParameter: The "function.arguments" parameter of the code model must be in JSON format.',
      type: 'invalid_request_error',
    },
    id: 'chatcmpl-1',
    request_id: 'r1',
  })
  // Codex's history: a call whose stream was cut at its token limit, and its failed result
  const codex = () =>
    decodeClientRequest(
      'responses',
      {
        model: 'gpt-5.5',
        input: [
          {type: 'message', role: 'user', content: [{type: 'input_text', text: 'list files'}]},
          {type: 'function_call', call_id: 'c1', name: 'shell', arguments: '{"command": ["bash","-lc","ls'},
          {type: 'function_call_output', call_id: 'c1', output: 'failed to parse function arguments'},
          {type: 'function_call', call_id: 'c2', name: 'shell', arguments: '{"command":["pwd"]}'},
          {type: 'function_call_output', call_id: 'c2', output: '/w'},
        ],
      },
      {model: 'gpt-5.5', stream: false},
    )
  const calls = (body: Buffer) =>
    (JSON.parse(body.toString()).messages as Array<{tool_calls?: Array<{function: {arguments: string}}>}>)
      .flatMap((m) => m.tool_calls ?? [])
      .map((c) => c.function.arguments)

  it('learned once per model; the calls that do not parse go repaired, the rest as they came', () => {
    const a = new UpstreamAdaptations()
    const first = encodeUpstreamRequest(codex(), 'chat', 'qwen3-coder-plus')
    expect(calls(first.body)).toEqual(['{"command": ["bash","-lc","ls', '{"command":["pwd"]}'])
    expect(a.learn('dashscope', 'qwen3-coder-plus', dashscope, first.sent)).toBe(
      "refused a history tool call's arguments that are not JSON: sent again with each such call's arguments repaired",
    )
    const learned = a.get('dashscope', 'qwen3-coder-plus')
    expect(learned).toEqual({repairArgs: true})
    const again = encodeUpstreamRequest(codex(), 'chat', 'qwen3-coder-plus', {}, learned)
    expect(calls(again.body)).toEqual(['{"command": ["bash","-lc","ls"]}', '{"command":["pwd"]}'])
    // the same bytes turn after turn
    expect(encodeUpstreamRequest(codex(), 'chat', 'qwen3-coder-plus', {}, learned).body).toEqual(again.body)
    // refused again: learned already, the client sees it
    expect(a.learn('dashscope', 'qwen3-coder-plus', dashscope, again.sent)).toBeUndefined()
    // another model has not learned it
    expect(a.get('dashscope', 'qwen3.5-plus')).toBeUndefined()
    expect(describeAdaptation(learned!)).toEqual([
      "history tool calls' arguments that are not JSON repaired (closed, or {})",
    ])
  })

  it("a chat client's history passed through is repaired too, the client's body left as it was", () => {
    const body = {
      model: 'qwen3-coder-plus',
      messages: [
        {role: 'user', content: 'list files'},
        {
          role: 'assistant',
          content: null,
          tool_calls: [{id: 'c1', type: 'function', function: {name: 'shell', arguments: '{"path": "/tm'}}],
        },
        {role: 'tool', tool_call_id: 'c1', content: 'error'},
      ],
    }
    const before = JSON.stringify(body)
    const a = new UpstreamAdaptations()
    expect(a.learn('d', 'q', dashscope, sentOfPassedChat(body))).toBeDefined()
    expect(calls(adaptPassedChat(body, a.get('d', 'q')!))).toEqual(['{"path": "/tm"}'])
    expect(JSON.stringify(body)).toBe(before)
  })

  it("MiniMax's words for it (both its error bodies): the same rule, learned once per model", () => {
    const message =
      'invalid params, invalid function arguments json string, tool_call_id: call_function_l3f47bwz5v3g_1 (2013)'
    for (const words of [
      JSON.stringify({
        type: 'error',
        error: {type: 'bad_request_error', message, http_code: '400'},
        request_id: '0660b0',
      }),
      JSON.stringify({error: {message, type: 'bad_request_error', param: '', code: null}}),
    ]) {
      const a = new UpstreamAdaptations()
      const first = encodeUpstreamRequest(codex(), 'chat', 'MiniMax-M2.7')
      expect(a.learn('minimax', 'MiniMax-M2.7', words, first.sent)).toBe(
        "refused a history tool call's arguments that are not JSON: sent again with each such call's arguments repaired",
      )
      const learned = a.get('minimax', 'MiniMax-M2.7')
      expect(learned).toEqual({repairArgs: true})
      const again = encodeUpstreamRequest(codex(), 'chat', 'MiniMax-M2.7', {}, learned)
      expect(calls(again.body)).toEqual(['{"command": ["bash","-lc","ls"]}', '{"command":["pwd"]}'])
      expect(a.learn('minimax', 'MiniMax-M2.7', words, again.sent)).toBeUndefined()
    }
    // its other 2013s teach nothing of it
    const other = JSON.stringify({
      type: 'error',
      error: {
        type: 'bad_request_error',
        message: 'invalid params, context window exceeds limit (2013)',
        http_code: '400',
      },
    })
    const sent = encodeUpstreamRequest(codex(), 'chat', 'MiniMax-M2.7').sent
    expect(new UpstreamAdaptations().learn('minimax', 'MiniMax-M2.7', other, sent)).toBeUndefined()
  })

  it("read in OpenRouter's metadata.raw (DashScope as its Alibaba provider), only on a 400", () => {
    const openrouter = JSON.stringify({
      error: {
        message: 'Provider returned error',
        code: 400,
        metadata: {raw: dashscope, provider_name: 'Alibaba'},
      },
      user_id: 'user_1',
    })
    const sent = encodeUpstreamRequest(codex(), 'chat', 'qwen/qwen3-coder').sent
    const a = new UpstreamAdaptations()
    expect(a.learn('openrouter', 'qwen/qwen3-coder', openrouter, sent)).toBe(
      "refused a history tool call's arguments that are not JSON: sent again with each such call's arguments repaired",
    )
    expect(a.get('openrouter', 'qwen/qwen3-coder')).toEqual({repairArgs: true})
    // the same relayed as another status, or another raw text: nothing learned
    const b = new UpstreamAdaptations()
    expect(b.learn('openrouter', 'q', openrouter, sent, 422)).toBeUndefined()
    const other = JSON.stringify({
      error: {
        message: 'Provider returned error',
        code: 400,
        metadata: {raw: 'Bad request', provider_name: 'Alibaba'},
      },
    })
    expect(b.learn('openrouter', 'q', other, sent)).toBeUndefined()
    expect(b.get('openrouter', 'q')).toBeUndefined()
  })

  it("another rule reads OpenRouter's metadata.raw the same way (a refused field)", () => {
    const sent = encodeUpstreamRequest(
      decodeClientRequest(
        'responses',
        {model: 'gpt-5.5', input: 'hi', reasoning: {effort: 'high'}},
        {model: 'gpt-5.5', stream: false},
      ),
      'chat',
      'openai/gpt-4.1',
    ).sent
    expect(sent.fields).toContain('reasoning_effort')
    const raw = openai('Unrecognized request argument supplied: reasoning_effort', null)
    const relayed = JSON.stringify({
      error: {message: 'Provider returned error', code: 400, metadata: {raw, provider_name: 'OpenAI'}},
    })
    const a = new UpstreamAdaptations()
    expect(a.learn('openrouter', 'openai/gpt-4.1', relayed, sent)).toMatch(/reasoning_effort/)
    expect(a.get('openrouter', 'openai/gpt-4.1')?.drop).toEqual(['reasoning_effort'])
  })

  it('not learned from other words, nor from a Gemini or Messages upstream', () => {
    const a = new UpstreamAdaptations()
    const sent = encodeUpstreamRequest(codex(), 'chat', 'q').sent
    expect(
      a.learn('d', 'q', openai('The "messages" parameter must be in JSON format.', null), sent),
    ).toBeUndefined()
    const messages = encodeUpstreamRequest(codex(), 'messages', 'claude-x').sent
    expect(a.learn('d', 'c', dashscope, messages)).toBeUndefined()
  })
})

describe('more tools than the model takes', () => {
  const openaiCap = JSON.stringify({
    error: {
      message:
        "Invalid 'tools': array too long. Expected an array with maximum length 128, but got an array with length 140 instead.",
      type: 'invalid_request_error',
      param: 'tools',
      code: 'array_above_max_length',
    },
  })
  const kimiCap = JSON.stringify({
    error: {message: 'a max of 128 tools can be supported', type: 'invalid_request_error'},
  })
  const geminiCap = JSON.stringify({
    error: {
      code: 400,
      message:
        '* GenerateContentRequest.tools[0].function_declarations: [FIELD_INVALID] At most 512 function declarations can be specified.\n',
      status: 'INVALID_ARGUMENT',
    },
  })
  const chatWith = (n: number) => ({
    model: 'gpt-5-mini',
    messages: [{role: 'user', content: 'hi'}],
    tools: Array.from({length: n}, (_, i) => ({type: 'function', function: {name: `t${i}`, parameters: {}}})),
  })

  it("reads the cap from OpenAI's, Kimi's and Gemini's words only", () => {
    expect(toolCapStated(openaiCap)).toBe(128)
    expect(toolCapStated(kimiCap)).toBe(128)
    expect(toolCapStated(geminiCap)).toBe(512)
    expect(
      toolCapStated("Invalid 'messages': array too long. Expected an array with maximum length 2048"),
    ).toBeUndefined()
    expect(toolCapStated(openai("Unsupported parameter: 'tools'", 'tools'))).toBeUndefined()
  })

  it('a translated request learns it once, below what it sent; the next request goes with the first 128', () => {
    const a = new UpstreamAdaptations()
    const client = decodeClientRequest('chat', chatWith(140), {})
    const first = encodeUpstreamRequest(client, 'responses', 'gpt-5-mini')
    const note = "refused 140 tools (it takes at most 128): sent again with the client's first 128"
    expect(a.learn('openai', 'gpt-5-mini', openaiCap, first.sent)).toBe(note)
    const learned = a.get('openai', 'gpt-5-mini')
    expect(learned).toEqual({toolCap: 128})
    const again = encodeUpstreamRequest(client, 'responses', 'gpt-5-mini', {}, learned)
    expect(JSON.parse(again.body.toString()).tools).toHaveLength(128)
    // refused again (it counts something else): the client sees it
    expect(a.learn('openai', 'gpt-5-mini', openaiCap, again.sent)).toBeUndefined()
    // a request with fewer tools than the stated cap, or with none, learns nothing
    const few = encodeUpstreamRequest(decodeClientRequest('chat', chatWith(100), {}), 'chat', 'x')
    expect(a.learn('openai', 'x', openaiCap, few.sent)).toBeUndefined()
    expect(
      a.learn('openai', 'x', openaiCap, {upstream: 'chat', fields: ['model', 'messages']}),
    ).toBeUndefined()
    expect(a.list()[0].rules).toEqual([
      "at most 128 tools (its stated limit): the client's first 128 sent, and those its history calls, a line in the system prompt naming the rest",
    ])
  })

  it('chat and Messages bodies passed through learn it and are rewritten; Gemini bodies by their declarations', () => {
    const a = new UpstreamAdaptations()
    const body = chatWith(140)
    expect(a.learn('kimi', 'k2', kimiCap, sentOfPassedChat(body))).toMatch(/^refused 140 tools/)
    const learned = a.get('kimi', 'k2')!
    expect(rewritesChatBody(learned)).toBe(true)
    const notes: string[] = []
    const sent = JSON.parse(adaptPassedChat(body, learned, notes).toString())
    expect(sent.tools).toHaveLength(128)
    expect(sent.messages[0].role).toBe('system')
    expect(notes).toHaveLength(1)
    const messages = {
      model: 'kimi-for-coding',
      max_tokens: 100,
      messages: [{role: 'user', content: 'hi'}],
      tools: Array.from({length: 130}, (_, i) => ({name: `t${i}`, input_schema: {}})),
    }
    expect(a.learn('kimi', 'kimi-for-coding', kimiCap, sentOfPassedMessages(messages))).toMatch(
      /^refused 130/,
    )
    const forMessages = a.get('kimi', 'kimi-for-coding')!
    expect(rewritesMessagesBody(forMessages)).toBe(true)
    expect(JSON.parse(adaptPassedMessages(messages, forMessages).toString()).tools).toHaveLength(128)
    // Gemini passed through: the declarations it sent
    expect(a.learnToolCap('google', 'gemini-2.5-pro', geminiCap, 520, undefined)).toBe(
      "refused 520 tools (it takes at most 512): sent again with the client's first 512",
    )
    expect(a.learnToolCap('google', 'gemini-2.5-pro', geminiCap, 512, {toolCap: 512})).toBeUndefined()
    expect(a.learnToolCap('google', 'other', openai('bad', null), 520, undefined)).toBeUndefined()
  })
})

describe('Gemini CLI passed through to a Gemini model of another generation: its thinking config', () => {
  const google = (message: string) =>
    JSON.stringify({error: {code: 400, message, status: 'INVALID_ARGUMENT'}})
  const withThinking = (thinkingConfig: Record<string, unknown>) => ({
    contents: [{role: 'user', parts: [{text: 'hi'}]}],
    generationConfig: {temperature: 1, thinkingConfig},
  })
  /** The same body with no thinking config left. */
  const without = {contents: [{role: 'user', parts: [{text: 'hi'}]}], generationConfig: {temperature: 1}}

  it("gemini-3's thinkingLevel refused by Gemini 2.5: learned per model, left out, includeThoughts kept", () => {
    const a = new UpstreamAdaptations()
    const body = withThinking({includeThoughts: true, thinkingLevel: 'HIGH'})
    const refused = google('Thinking level is not supported for this model.')
    expect(
      a.learnPassedGeminiThinking('google', 'gemini-2.5-flash', refused, geminiThinkingSent(body), undefined),
    ).toBe('refused thinkingLevel HIGH: sent again without it, the model decides')
    const learned = a.get('google', 'gemini-2.5-flash')!
    expect(learned).toEqual({noThinkingLevel: true})
    expect(JSON.parse(adaptPassedGemini(body, learned).toString())).toEqual(
      withThinking({includeThoughts: true}),
    )
    expect(describeAdaptation(learned)).toContain('thinkingLevel left out (the model takes none)')
    // a config of a level alone: left out whole, not sent as `thinkingConfig: {}`
    expect(JSON.parse(adaptPassedGemini(withThinking({thinkingLevel: 'LOW'}), learned).toString())).toEqual(
      without,
    )
    expect(
      JSON.parse(
        adaptPassedGemini(
          {contents: without.contents, generationConfig: {thinkingConfig: {thinkingLevel: 'LOW'}}},
          learned,
        ).toString(),
      ),
    ).toEqual({contents: without.contents})
    // Vertex's words too; a body without a level, or another refusal, learns nothing
    const vertex = google(
      'Unable to submit request because thinking_level MEDIUM is not supported by this model.',
    )
    expect(a.learnPassedGeminiThinking('vertex', 'm', vertex, {level: 'MEDIUM'}, undefined)).toMatch(
      /^refused thinkingLevel MEDIUM/,
    )
    expect(a.learnPassedGeminiThinking('google', 'x', refused, {budget: 512}, undefined)).toBeUndefined()
    expect(
      a.learnPassedGeminiThinking(
        'google',
        'x',
        google('Request contains an invalid argument.'),
        {level: 'HIGH'},
        undefined,
      ),
    ).toBeUndefined()
    // learned already: the same refusal again is the client's
    expect(
      a.learnPassedGeminiThinking('google', 'gemini-2.5-flash', refused, {level: 'HIGH'}, learned),
    ).toBeUndefined()
  })

  it("a utility call's thinkingBudget 0 refused by a Pro model: left out, as a translated request's", () => {
    const a = new UpstreamAdaptations()
    const body = withThinking({thinkingBudget: 0})
    const refused = google('Budget 0 is invalid. This model only works in thinking mode.')
    expect(
      a.learnPassedGeminiThinking('google', 'gemini-2.5-pro', refused, geminiThinkingSent(body), undefined),
    ).toBe('refused thinkingBudget 0: sent again without it, the model decides')
    const learned = a.get('google', 'gemini-2.5-pro')!
    // (the budget was all of its config: none goes, not `thinkingConfig: {}`)
    expect(JSON.parse(adaptPassedGemini(body, learned).toString())).toEqual(without)
    // a budget the model takes goes as it was
    const fine = withThinking({thinkingBudget: 512})
    expect(JSON.parse(adaptPassedGemini(fine, learned).toString())).toEqual(fine)
  })

  it('Gemini CLI routed to Gemma 4: any budget refused, left out (-1 included), includeThoughts kept', () => {
    const a = new UpstreamAdaptations()
    const body = withThinking({thinkingBudget: 8192, includeThoughts: true})
    const refused = google('Thinking budget is not supported for this model.')
    expect(
      a.learnPassedGeminiThinking('google', 'gemma-4-31b-it', refused, geminiThinkingSent(body), undefined),
    ).toBe('refused thinkingBudget 8192: sent again without it (the model takes none)')
    const learned = a.get('google', 'gemma-4-31b-it')!
    expect(JSON.parse(adaptPassedGemini(body, learned).toString())).toEqual(
      withThinking({includeThoughts: true}),
    )
    const dynamic = withThinking({thinkingBudget: -1})
    expect(JSON.parse(adaptPassedGemini(dynamic, learned).toString())).toEqual(without)
  })
})

describe("Azure OpenAI's refusal of an item named by its id with store false", () => {
  const AZURE = JSON.stringify({
    error: {
      message:
        "Item with id 'rs_0a1b2c' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input.",
      type: 'invalid_request_error',
      param: 'input',
      code: null,
    },
  })

  it('learned once per model, in its words only; described for doctor', () => {
    const a = new UpstreamAdaptations()
    expect(a.learnStoreTrue('azure-apim', 'gpt-5.4', AZURE, undefined)).toBe(
      'refused an item named by its id with store false (Azure OpenAI keeps no items then): sent again with store true',
    )
    const learned = a.get('azure-apim', 'gpt-5.4')!
    expect(learned).toEqual({storeTrue: true})
    expect(describeAdaptation(learned)).toEqual([
      "Codex's requests and translated ones sent with store true, so the items they name by id are found (refused with store false: Azure OpenAI keeps no items then)",
    ])
    // learned already: the same refusal again is the client's
    expect(a.learnStoreTrue('azure-apim', 'gpt-5.4', AZURE, learned)).toBeUndefined()
    // other words (an item missing for another reason, the conversation's) teach nothing
    for (const words of [
      "Item with id 'rs_0a1b2c' not found.",
      'Previous response with id resp_1 not found.',
      "Invalid 'input[3].id': string too long.",
    ])
      expect(
        a.learnStoreTrue('azure-apim', 'other', JSON.stringify({error: {message: words}}), undefined),
      ).toBe(undefined)
    expect(a.get('azure-apim', 'other')).toBeUndefined()
  })
})

describe("Gemini 2.x's refusal of a JSON response beside function tools", () => {
  const schema = {type: 'object', properties: {city: {type: 'string'}}, required: ['city']}
  const GOOGLE = JSON.stringify({
    error: {
      code: 400,
      message: "Function calling with a response mime type: 'application/json' is unsupported",
      status: 'INVALID_ARGUMENT',
    },
  })
  /** Codex's `exec --output-schema` request: its instructions, the schema, a tool unless `tools` is false. */
  const codex = (tools = true) =>
    decodeClientRequest(
      'responses',
      {
        model: 'gpt-5.5',
        instructions: 'You are Codex.',
        input: 'Where?',
        ...(tools
          ? {tools: [{type: 'function', name: 'shell', parameters: {type: 'object', properties: {}}}]}
          : {}),
        text: {format: {type: 'json_schema', name: 'out', schema, strict: true}},
      },
      {model: 'gpt-5.5', stream: false},
    )
  const instruction = `Respond with one JSON object only, with no other text, that matches this JSON schema:\n${JSON.stringify(schema)}`

  it('learned per model from those words, for a request with tools; the mime type then left out, the instruction last in systemInstruction', () => {
    const a = new UpstreamAdaptations()
    const first = encodeUpstreamRequest(codex(), 'gemini', 'gemini-2.5-flash')
    expect(JSON.parse(first.body.toString()).generationConfig).toEqual({
      responseMimeType: 'application/json',
      responseJsonSchema: schema,
    })
    expect(a.learn('google', 'gemini-2.5-flash', GOOGLE, first.sent)).toBe(
      'refused a JSON response beside function tools: sent again without the JSON mime type, an instruction to answer JSON at the end of the system instruction',
    )
    const learned = a.get('google', 'gemini-2.5-flash')!
    expect(learned).toEqual({json: 'instruction'})
    expect(describeAdaptation(learned)).toEqual([
      'JSON asked for in the system prompt only (to Gemini: in a request with function tools, which it refuses beside a JSON response)',
    ])
    const again = JSON.parse(
      encodeUpstreamRequest(codex(), 'gemini', 'gemini-2.5-flash', {}, learned).body.toString(),
    )
    expect(again).not.toHaveProperty('generationConfig')
    expect(again.systemInstruction).toEqual({parts: [{text: 'You are Codex.'}, {text: instruction}]})
    expect(again.tools[0].functionDeclarations.map((d: {name: string}) => d.name)).toEqual(['shell'])
    // without tools the model takes JSON mode: it keeps it
    const noTools = JSON.parse(
      encodeUpstreamRequest(codex(false), 'gemini', 'gemini-2.5-flash', {}, learned).body.toString(),
    )
    expect(noTools.generationConfig).toEqual({
      responseMimeType: 'application/json',
      responseJsonSchema: schema,
    })
    expect(noTools.systemInstruction).toEqual({parts: [{text: 'You are Codex.'}]})
  })

  it('not learned from other words, nor for a request without tools or without JSON', () => {
    const a = new UpstreamAdaptations()
    const other = JSON.stringify({error: {code: 400, message: 'Request contains an invalid argument.'}})
    expect(a.learn('google', 'm', other, encodeUpstreamRequest(codex(), 'gemini', 'm').sent)).toBeUndefined()
    expect(a.learn('google', 'm', GOOGLE, encodeUpstreamRequest(codex(false), 'gemini', 'm').sent)).toBe(
      undefined,
    )
    const plain = decodeClientRequest('responses', {model: 'g', input: 'hi'}, {model: 'g', stream: false})
    expect(a.learn('google', 'm', GOOGLE, encodeUpstreamRequest(plain, 'gemini', 'm').sent)).toBeUndefined()
    expect(a.get('google', 'm')).toBeUndefined()
  })
})

describe("DeepSeek's Responses API: a tool call and its output paired by position", () => {
  const deepseek = (message: string) =>
    JSON.stringify({
      error: {message, type: 'invalid_request_error', param: null, code: 'invalid_request_error'},
    })
  const NOTE =
    "refused a tool call's output not right after the call: sent again with each call's output right after it, what stood between after them"
  const RULE =
    "each tool call's output sent right after the call, the items between them after it (it pairs them by position)"

  it('Codex passed through: learned per model from either wording, described, and learned once', () => {
    const a = new UpstreamAdaptations()
    const refused = deepseek('No tool output found for tool call call_00_ET_SpXxxavgyEWZu15ec5Tb1552')
    expect(a.learnAdjacentOutputs('deepseek', 'deepseek-v4-pro', refused, undefined)).toBe(NOTE)
    const learned = a.get('deepseek', 'deepseek-v4-pro')!
    expect(learned).toEqual({adjacentOutputs: true})
    expect(describeAdaptation(learned)).toEqual([RULE])
    expect(a.list()[0]).toMatchObject({provider: 'deepseek', model: 'deepseek-v4-pro', rules: [RULE]})
    // the same refusal again, with the rule applied: the client's
    expect(a.learnAdjacentOutputs('deepseek', 'deepseek-v4-pro', refused, learned)).toBeUndefined()
    // the output's side of the same rule, what was learned before kept
    const other = deepseek('No tool call found for tool output with call_id read_note-2-1.')
    expect(a.learnAdjacentOutputs('deepseek', 'deepseek-v4-flash', other, undefined)).toBe(NOTE)
    const lite = openai(
      'X-OpenAI-Internal-Codex-Responses-Lite only supports function tools, custom tools, and client-executed tool search.',
      'tools',
    )
    expect(a.learnPlainTools('relay', 'm', lite, undefined)).toMatch(/Lite/)
    expect(a.learnAdjacentOutputs('relay', 'm', other, a.get('relay', 'm'))).toBe(NOTE)
    expect(a.get('relay', 'm')).toEqual({liteOff: true, adjacentOutputs: true})
  })

  it("learns nothing from OpenAI's own refusal of a missing output, or from other words", () => {
    const a = new UpstreamAdaptations()
    for (const words of [
      // OpenAI's: the output is missing, not misplaced (no order would help)
      openai('No tool output found for function call call_abc.', 'input'),
      openai('tool type custom not supported', 'tools'),
      // the words quoted inside another message (a client's pasted error)
      deepseek('Invalid input: "No tool output found for tool call call_1"'),
    ])
      expect(a.learnAdjacentOutputs('deepseek', 'm', words, undefined)).toBeUndefined()
    expect(a.list()).toEqual([])
  })

  it("translated to a Responses upstream (Codex's tools made plain, another family's client): learned, and its body rewritten", () => {
    const codex = {
      model: 'deepseek-v4-flash',
      input: [
        {type: 'message', role: 'user', content: [{type: 'input_text', text: 'List files.'}]},
        {type: 'function_call', call_id: 'c1', name: 'exec', arguments: '{"cmd":"ls"}'},
        {type: 'message', role: 'assistant', content: [{type: 'output_text', text: 'Running.'}]},
        {type: 'function_call_output', call_id: 'c1', output: 'a b'},
      ],
      tools: [{type: 'function', name: 'exec', parameters: {type: 'object', properties: {}}}],
    }
    const client = decodeClientRequest('responses', codex, {toResponses: true})
    const first = encodeUpstreamRequest(client, 'responses', 'deepseek-v4-flash', {plainTools: true})
    const types = (body: Buffer) =>
      (JSON.parse(body.toString()) as {input: Array<{type: string; role?: string}>}).input.map(
        (i) => i.role ?? i.type,
      )
    expect(types(first.body)).toEqual(['user', 'function_call', 'assistant', 'function_call_output'])
    const a = new UpstreamAdaptations()
    const refused = deepseek('No tool output found for tool call c1')
    expect(a.learn('deepseek', 'deepseek-v4-flash', refused, first.sent)).toBe(NOTE)
    const learned = a.get('deepseek', 'deepseek-v4-flash')
    const again = encodeUpstreamRequest(client, 'responses', 'deepseek-v4-flash', {plainTools: true}, learned)
    expect(types(again.body)).toEqual(['user', 'function_call', 'function_call_output', 'assistant'])
    // a chat upstream never learns it from these words (no such body there)
    const chat = encodeUpstreamRequest(client, 'chat', 'deepseek-chat')
    expect(new UpstreamAdaptations().learn('deepseek', 'deepseek-chat', refused, chat.sent)).toBeUndefined()
  })
})

describe("several system messages of a chat client passed through, refused (MiniMax, Qwen3.5's template)", () => {
  const body = (messages: unknown[]) => ({model: 'MiniMax-M2.7', stream: true, messages})
  const two = [
    {role: 'system', content: 'You are opencode.'},
    {role: 'system', content: 'You have superpowers.'},
    {role: 'user', content: 'hi'},
  ]
  const minimax = (message: string) =>
    JSON.stringify({
      type: 'error',
      error: {type: 'bad_request_error', message, http_code: '400'},
      request_id: 'r',
    })
  const words = [
    minimax('invalid params, invalid chat setting (2013)'),
    minimax('invalid params, chat content has invalid message role: system (2013)'),
    // llama.cpp's 400 for Qwen3.5's template; vLLM's
    JSON.stringify({
      error: {
        code: 400,
        message:
          "\n------------\nWhile executing CallExpression at line 85, column 32 in source:\n...first %}↵            {{- raise_exception('System message must be at the beginnin...\n                                           ^\nError: Jinja Exception: System message must be at the beginning.",
        type: 'invalid_request_error',
      },
    }),
    JSON.stringify({
      object: 'error',
      message: 'System message must be at the beginning.',
      type: 'BadRequestError',
      param: null,
      code: 400,
    }),
  ]

  it('learned from each wording: the run goes as one message, from then on', () => {
    for (const refusal of words) {
      const a = new UpstreamAdaptations()
      expect(a.learn('mm', 'MiniMax-M2.7', refusal, sentOfPassedChat(body(two)), 400), refusal).toBe(
        'refused several system messages in a row: sent again with each run of messages of one role as one message',
      )
      const learned = a.get('mm', 'MiniMax-M2.7')!
      expect(learned).toEqual({alternateRoles: true})
      expect(JSON.parse(adaptPassedChat(body(two), learned).toString()).messages).toEqual([
        {role: 'system', content: 'You are opencode.\n\nYou have superpowers.'},
        {role: 'user', content: 'hi'},
      ])
      expect(describeAdaptation(learned)).toEqual([
        'successive user, assistant or system messages sent as one message',
      ])
      // refused again: learned already, the client sees it
      expect(
        a.learn('mm', 'MiniMax-M2.7', refusal, sentOfPassedChat(body(two), learned), 400),
      ).toBeUndefined()
    }
  })

  it('nothing learned for a body without a run of system messages or a late one (the refusal is of something else)', () => {
    const oneSystem = [
      {role: 'system', content: 'a'},
      {role: 'user', content: 'hi'},
      {role: 'user', content: 'again'},
    ]
    for (const messages of [oneSystem])
      for (const refusal of words)
        expect(
          new UpstreamAdaptations().learn('mm', 'm', refusal, sentOfPassedChat(body(messages)), 400),
        ).toBeUndefined()
    // DeepSeek's words for user runs still need a run of turns, not of system messages
    const deepseek = JSON.stringify({
      error: {
        message:
          'deepseek-reasoner does not support successive user or assistant messages (messages[0] and messages[1] in your input).',
        type: 'invalid_request_error',
      },
    })
    expect(
      new UpstreamAdaptations().learn('ds', 'm', deepseek, sentOfPassedChat(body(two)), 400),
    ).toBeUndefined()
  })

  it("Ollama's 500 for the template's exception: learned by its words alone, never from another 500", () => {
    const ollama = JSON.stringify({
      error: {
        code: 500,
        message:
          "\n------------\nWhile executing CallExpression at line 85, column 32 in source:\n...first %}↵            {{- raise_exception('System message must be at the beginnin...\n                                           ^\nError: Jinja Exception: System message must be at the beginning.",
        type: 'server_error',
      },
    })
    const a = new UpstreamAdaptations()
    expect(a.learn('ollama', 'qwen3.6', ollama, sentOfPassedChat(body(two)), 500)).toBe(
      'refused several system messages in a row: sent again with each run of messages of one role as one message',
    )
    expect(a.get('ollama', 'qwen3.6')).toEqual({alternateRoles: true})
    // a 500 in other words, or the words for a body with one system message first, teach nothing
    for (const [refusal, messages] of [
      [JSON.stringify({error: 'model runner has unexpectedly stopped'}), two],
      [JSON.stringify({error: {code: 500, message: 'internal error', type: 'server_error'}}), two],
      [
        ollama,
        [
          {role: 'system', content: 'a'},
          {role: 'user', content: 'hi'},
        ],
      ],
    ] as const)
      expect(
        new UpstreamAdaptations().learn('ollama', 'm', refusal, sentOfPassedChat(body([...messages])), 500),
      ).toBeUndefined()
    // nor a 502 or 503 with the words
    for (const status of [502, 503])
      expect(
        new UpstreamAdaptations().learn('ollama', 'm', ollama, sentOfPassedChat(body(two)), status),
      ).toBeUndefined()
  })

  const between = [
    {role: 'system', content: 'You are terse.'},
    {role: 'user', content: 'hi'},
    {role: 'assistant', content: 'Hello.'},
    {role: 'system', content: 'From now on answer in French.'},
    {role: 'user', content: 'go on'},
  ]
  const FOLD_NOTE =
    'refused a system message after the first turn: sent again with every system message folded into the first'

  it('a lone system message between turns, refused in each wording: folded into the first, from then on', () => {
    for (const refusal of words) {
      const a = new UpstreamAdaptations()
      expect(a.learn('mm', 'MiniMax-M2.7', refusal, sentOfPassedChat(body(between)), 400), refusal).toBe(
        FOLD_NOTE,
      )
      const learned = a.get('mm', 'MiniMax-M2.7')!
      expect(learned).toEqual({systemFirst: true})
      expect(JSON.parse(adaptPassedChat(body(between), learned).toString()).messages).toEqual([
        {role: 'system', content: 'You are terse.\n\nFrom now on answer in French.'},
        {role: 'user', content: 'hi'},
        {role: 'assistant', content: 'Hello.'},
        {role: 'user', content: 'go on'},
      ])
      expect(describeAdaptation(learned)).toEqual([
        'system messages after the first turn folded into the first system message',
      ])
      expect(
        a.learn('mm', 'MiniMax-M2.7', refusal, sentOfPassedChat(body(between), learned), 400),
      ).toBeUndefined()
    }
  })

  it('a body with a leading run and a late one learns the fold alone: one system message, at the front', () => {
    const both = [...two, {role: 'assistant', content: 'Hello.'}, {role: 'system', content: 'late'}]
    const a = new UpstreamAdaptations()
    expect(a.learn('q', 'Qwen3.5', words[2], sentOfPassedChat(body(both)), 400)).toBe(FOLD_NOTE)
    const learned = a.get('q', 'Qwen3.5')!
    expect(JSON.parse(adaptPassedChat(body(both), learned).toString()).messages).toEqual([
      {role: 'system', content: 'You are opencode.\n\nYou have superpowers.\n\nlate'},
      {role: 'user', content: 'hi'},
      {role: 'assistant', content: 'Hello.'},
    ])
    // a body with no late system message is sent as it came under the fold alone
    const plain = [
      {role: 'system', content: 'a'},
      {role: 'user', content: 'b'},
    ]
    expect(JSON.parse(adaptPassedChat(body(plain), learned).toString()).messages).toEqual(plain)
  })
})

describe('an output_config.effort a Messages upstream refuses', () => {
  const invalid = (message: string) =>
    JSON.stringify({type: 'error', error: {type: 'invalid_request_error', message}})
  /** Claude Code 2.1.332's main request at `/effort EFFORT`. */
  const cc = (effort: string, extra: Record<string, unknown> = {}) => ({
    model: 'qwen3.7-plus',
    max_tokens: 32000,
    thinking: {type: 'adaptive', display: 'omitted'},
    output_config: {effort},
    messages: [{role: 'user', content: 'x'}],
    ...extra,
  })
  const again = (body: Record<string, unknown>, a: UpstreamAdaptations) =>
    JSON.parse(adaptPassedMessages(body, a.get('p', 'm')!).toString())

  it('a value refused with those it takes: xhigh and max step down to the nearest, from the one refusal', () => {
    const WORDS = [
      // pydantic's literal (Anthropic's own wording), its plain-text form with the input echoed
      "output_config.effort: Input should be 'low', 'medium' or 'high'",
      "1 validation error for MessagesRequest\noutput_config.effort\n  Input should be 'low', 'medium' or 'high' [type=literal_error, input_value='max', input_type=str]",
      // zod's
      "output_config.effort: Invalid enum value. Expected 'low' | 'medium' | 'high', received 'max'",
      // OpenAI's form
      "Unsupported value: 'output_config.effort' does not support 'max' with this model. Supported values are: 'low', 'medium', and 'high'.",
    ]
    for (const words of WORDS) {
      const a = new UpstreamAdaptations()
      expect(a.learn('p', 'm', invalid(words), sentOfPassedMessages(cc('max'))), words).toBe(
        'refused output_config.effort max (it takes low, medium, high): sent again with high',
      )
      expect(a.get('p', 'm'), words).toEqual({effort: {xhigh: 'high', max: 'high'}})
      expect(rewritesMessagesBody(a.get('p', 'm')), words).toBe(true)
      // the retry, and the next request at xhigh: high; one it takes stays as it was
      expect(again(cc('max'), a).output_config, words).toEqual({effort: 'high'})
      expect(again(cc('xhigh'), a).output_config, words).toEqual({effort: 'high'})
      expect(again(cc('medium'), a).output_config, words).toEqual({effort: 'medium'})
      expect(again(cc('max'), a).thinking, words).toEqual({type: 'adaptive', display: 'omitted'})
    }
    expect(describeAdaptation({effort: {xhigh: 'high', max: 'high'}})).toEqual([
      'effort xhigh sent as high',
      'effort max sent as high',
    ])
  })

  it("a list with xhigh: max goes as xhigh; Z.AI's list for GLM-5.3: medium as high", () => {
    const a = new UpstreamAdaptations()
    expect(
      a.learn(
        'p',
        'm',
        invalid(
          "effort 'max' is not supported for this model. Supported values are: 'low', 'medium', 'high' and 'xhigh'.",
        ),
        sentOfPassedMessages(cc('max')),
      ),
    ).toBe('refused output_config.effort max (it takes low, medium, high, xhigh): sent again with xhigh')
    expect(again(cc('max'), a).output_config).toEqual({effort: 'xhigh'})
    const z = new UpstreamAdaptations()
    expect(
      z.learn(
        'p',
        'm',
        invalid('This model always engages in thinking and cannot be disabled; please use low, high, or max'),
        sentOfPassedMessages(cc('medium')),
      ),
    ).toBe('refused output_config.effort medium (it takes low, high, max): sent again with high')
    expect(again(cc('medium'), z).output_config).toEqual({effort: 'high'})
    expect(again(cc('max'), z).output_config).toEqual({effort: 'max'})
  })

  it('the value alone: one above high goes as high, another without the field', () => {
    const a = new UpstreamAdaptations()
    expect(
      a.learn(
        'p',
        'm',
        invalid("effort 'xhigh' is not supported for this model"),
        sentOfPassedMessages(cc('xhigh')),
      ),
    ).toBe('refused output_config.effort xhigh: sent again with high')
    expect(again(cc('xhigh'), a).output_config).toEqual({effort: 'high'})
    const b = new UpstreamAdaptations()
    expect(
      b.learn('p', 'm', invalid('effort "medium" is not supported'), sentOfPassedMessages(cc('medium'))),
    ).toBe('refused output_config.effort medium: sent again without it')
    expect(again(cc('medium'), b).output_config).toBeUndefined()
  })

  it("the value named in a field's wording: that value steps down, the field stays for the others (review50b B5)", () => {
    for (const [words, value] of [
      ["This model does not support effort 'max'.", 'max'],
      ['This model does not support the effort level max', 'max'],
      ["claude-opus-4-5 does not support effort 'xhigh'", 'xhigh'],
      ["output_config.effort: 'max' is only available on Opus 4.6 and later", 'max'],
    ] as const) {
      const a = new UpstreamAdaptations()
      expect(a.learn('p', 'm', invalid(words), sentOfPassedMessages(cc(value))), words).toBe(
        `refused output_config.effort ${value}: sent again with high`,
      )
      expect(a.get('p', 'm')?.drop, words).toBeUndefined()
      expect(again(cc('low'), a).output_config, words).toEqual({effort: 'low'})
    }
  })

  it('the field refused: the requests go without it (the model its default effort)', () => {
    for (const words of [
      'output_config.effort: Extra inputs are not permitted',
      'This model does not support the effort parameter.',
    ]) {
      const a = new UpstreamAdaptations()
      expect(a.learn('p', 'm', invalid(words), sentOfPassedMessages(cc('high'))), words).toBe(
        'refused output_config.effort: sent again without it',
      )
      expect(again(cc('high'), a).output_config, words).toBeUndefined()
      // (another part of output_config stays)
      const format = {type: 'json_schema', schema: {type: 'object'}}
      expect(again(cc('high', {output_config: {effort: 'high', format}}), a).output_config, words).toEqual({
        format,
      })
    }
    // the whole output_config, as before
    const b = new UpstreamAdaptations()
    expect(
      b.learn(
        'p',
        'm',
        invalid('output_config: Extra inputs are not permitted'),
        sentOfPassedMessages(cc('high')),
      ),
    ).toBe('refused output_config: sent again without it')
  })

  it('learns nothing from words about a value it takes, the thinking form, or no effort sent', () => {
    const learn = (words: string, body: Record<string, unknown>) =>
      new UpstreamAdaptations().learn('p', 'm', invalid(words), sentOfPassedMessages(body))
    // it lists the value sent: the refusal is of something else
    expect(
      learn("output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'", cc('max')),
    ).toBeUndefined()
    // thinking off beside a high effort (Claude 5's), read by its own rules
    expect(
      learn(
        '"thinking.type" value "disabled" is not supported with "output_config.effort" value "xhigh" for this model',
        cc('xhigh', {thinking: {type: 'disabled'}}),
      ),
    ).toBeUndefined()
    // no effort sent
    const {output_config: _, ...none} = cc('high')
    expect(learn("output_config.effort: Input should be 'low', 'medium' or 'high'", none)).toBeUndefined()
    // another field's values
    expect(learn("tool_choice.type: Input should be 'auto', 'any' or 'tool'", cc('max'))).toBeUndefined()
  })

  it("Codex's xhigh translated to a Claude model that refuses it: high from the one refusal", () => {
    const codex = decodeClientRequest(
      'responses',
      {model: 'gpt-5.5', input: 'hi', reasoning: {effort: 'xhigh'}},
      {},
    )
    const first = encodeUpstreamRequest(codex, 'messages', 'claude-opus-5-5')
    expect(JSON.parse(first.body.toString()).output_config).toEqual({effort: 'xhigh'})
    const a = new UpstreamAdaptations()
    expect(
      a.learn(
        'p',
        'm',
        invalid("output_config.effort: Input should be 'low', 'medium' or 'high'"),
        first.sent,
      ),
    ).toBe('refused output_config.effort xhigh (it takes low, medium, high): sent again with high')
    const next = encodeUpstreamRequest(codex, 'messages', 'claude-opus-5-5', {}, a.get('p', 'm'))
    expect(JSON.parse(next.body.toString()).output_config).toEqual({effort: 'high'})
    expect(next.sent.effort).toBe('high')
  })
})

describe("an effort above high a chat or Responses model refuses (OpenAI's before GPT-5.2)", () => {
  it("Claude Code's max sent as xhigh by the name, refused: high from then on, chat and Responses alike", () => {
    const cc = decodeClientRequest(
      'messages',
      {
        model: 'claude-opus-5-5',
        max_tokens: 32000,
        thinking: {type: 'adaptive'},
        output_config: {effort: 'max'},
        messages: [{role: 'user', content: 'x'}],
      },
      {},
    )
    for (const [family, param] of [
      ['chat', 'reasoning_effort'],
      ['responses', 'reasoning.effort'],
    ] as const) {
      const effortOf = (body: Buffer) => {
        const b = JSON.parse(body.toString())
        return family === 'chat' ? b.reasoning_effort : b.reasoning.effort
      }
      const first = encodeUpstreamRequest(cc, family, 'gpt-5.5')
      expect(effortOf(first.body), family).toBe('xhigh')
      const a = new UpstreamAdaptations()
      const refusal = JSON.stringify({
        error: {
          message: `Unsupported value: '${param}' does not support 'xhigh' with this model. Supported values are: 'low', 'medium', and 'high'.`,
          type: 'invalid_request_error',
          param,
          code: 'unsupported_value',
        },
      })
      expect(a.learn('o', 'gpt-5.5', refusal, first.sent), family).toBe(
        `refused ${param} xhigh: sent again with high`,
      )
      const next = encodeUpstreamRequest(cc, family, 'gpt-5.5', {}, a.get('o', 'gpt-5.5'))
      expect(effortOf(next.body), family).toBe('high')
    }
  })
})

describe("DeepSeek's Responses API: a turn without its reasoning_text (research49 #4)", () => {
  const refused = JSON.stringify({
    error: {
      message: 'The `reasoning_text` in the thinking mode must be passed back to the API.',
      type: 'invalid_request_error',
      param: null,
      code: 'invalid_request_error',
    },
  })
  const NOTE =
    'refused a tool call turn without its reasoning_text: sent again through the codecs, each reasoning item with its text as reasoning_text (empty where Codex kept none)'
  const RULE =
    "Codex's reasoning sent back as reasoning_text, an empty one where Codex kept none, its tools as plain functions (a turn without it was refused)"

  it('Codex passed through: learned per model, described, once', () => {
    const a = new UpstreamAdaptations()
    expect(a.learnPlainTools('ds', 'deepseek-v4-pro', refused, undefined)).toBe(NOTE)
    const learned = a.get('ds', 'deepseek-v4-pro')!
    expect(learned).toEqual({plainTools: true, reasoningTextBack: true})
    expect(describeAdaptation(learned)).toEqual([RULE])
    expect(a.learnPlainTools('ds', 'deepseek-v4-pro', refused, learned)).toBeUndefined()
    // a model that had its tools made plain before learns it too; the chat rule's words do not
    expect(
      a.learnPlainTools('ds', 'm2', openai('tool type custom not supported', 'tools'), undefined),
    ).toMatch(/plain function/)
    expect(a.learnPlainTools('ds', 'm2', refused, a.get('ds', 'm2'))).toBe(NOTE)
    expect(a.get('ds', 'm2')).toEqual({plainTools: true, reasoningTextBack: true})
    const chatWords = refused.replace('reasoning_text', 'reasoning_content')
    expect(new UpstreamAdaptations().learnPlainTools('ds', 'm', chatWords, undefined)).toBeUndefined()
  })

  it('sends a reasoning item whose text Codex did not keep as an empty reasoning_text, only where learned', () => {
    const client = decodeClientRequest(
      'responses',
      {
        model: 'deepseek-v4-pro',
        input: [
          {type: 'message', role: 'user', content: [{type: 'input_text', text: 'hi'}]},
          {type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: null},
          {type: 'function_call', call_id: 'c1', name: 'shell', arguments: '{}'},
          {type: 'function_call_output', call_id: 'c1', output: 'x'},
          {type: 'reasoning', id: 'rs_2', summary: [{type: 'summary_text', text: 'Read it.'}]},
          {type: 'function_call', call_id: 'c2', name: 'shell', arguments: '{}'},
          {type: 'function_call_output', call_id: 'c2', output: 'y'},
        ],
        tools: [{type: 'custom', name: 'apply_patch'}],
      },
      {},
    )
    const reasoningSent = (ctx: Record<string, unknown>) =>
      (
        JSON.parse(encodeUpstreamRequest(client, 'responses', 'deepseek-v4-pro', ctx).body.toString()) as {
          input: Array<Record<string, unknown>>
        }
      ).input.filter((i) => i.type === 'reasoning')
    expect(reasoningSent({plainTools: true, reasoningTextBack: true})).toEqual([
      {type: 'reasoning', id: 'rs_1', summary: [], content: [{type: 'reasoning_text', text: ''}]},
      {type: 'reasoning', id: 'rs_2', summary: [], content: [{type: 'reasoning_text', text: 'Read it.'}]},
    ])
    // gpt-oss on vLLM (plain, not learned): as before, only the one with text
    expect(reasoningSent({plainTools: true}).map((i) => i.id)).toEqual(['rs_2'])
  })
})

describe("Kimi's Anthropic endpoint: a tool call turn without thinking (research49 #5)", () => {
  const refused = JSON.stringify({
    error: {
      type: 'invalid_request_error',
      message:
        'thinking is enabled but reasoning_content is missing in assistant tool call message at index 1',
    },
    type: 'error',
  })
  const NOTE =
    'refused thinking beside an earlier tool call turn without thinking: sent again with thinking off (a history with such a turn, from now on)'
  const tools = [{type: 'function', name: 'shell', parameters: {type: 'object', properties: {}}}]
  const user = (text: string) => ({type: 'message', role: 'user', content: [{type: 'input_text', text}]})
  // Codex at effort high, an earlier turn's call made without thinking (effort none, a fallback)
  const codex = (withCall: boolean) =>
    decodeClientRequest(
      'responses',
      {
        model: 'kimi-for-coding',
        reasoning: {effort: 'high'},
        tools,
        input: [
          user('hi'),
          ...(withCall
            ? [
                {type: 'function_call', call_id: 'c1', name: 'shell', arguments: '{}'},
                {type: 'function_call_output', call_id: 'c1', output: 'x'},
              ]
            : []),
          {type: 'message', role: 'assistant', content: [{type: 'output_text', text: 'done'}]},
          user('again'),
        ],
      },
      {},
    )
  const thinkingOf = (withCall: boolean, adapt?: UpstreamAdaptation) =>
    (
      JSON.parse(
        encodeUpstreamRequest(codex(withCall), 'messages', 'kimi-for-coding', {}, adapt).body.toString(),
      ) as {thinking?: {type: string}}
    ).thinking?.type

  it('is learned on a Messages upstream, and such a history then goes with thinking off', () => {
    const first = encodeUpstreamRequest(codex(true), 'messages', 'kimi-for-coding')
    expect(thinkingOf(true)).toBe('enabled')
    const a = new UpstreamAdaptations()
    expect(a.learn('kimi', 'kimi-for-coding', refused, first.sent)).toBe(NOTE)
    const learned = a.get('kimi', 'kimi-for-coding')!
    expect(learned).toEqual({claude: {thinkingEveryToolTurn: true}})
    expect(describeAdaptation(learned)).toEqual([
      'thinking turned off for a history with an assistant tool call turn without thinking (refused)',
    ])
    expect(thinkingOf(true, learned)).not.toBe('enabled')
    // a history without such a turn keeps its thinking
    expect(thinkingOf(false, learned)).toBe('enabled')
    // sent again so and refused the same: the client's to see
    const again = encodeUpstreamRequest(codex(true), 'messages', 'kimi-for-coding', {}, learned)
    expect(a.learn('kimi', 'kimi-for-coding', refused, again.sent)).toBeUndefined()
  })

  it('is learned from nothing else, and on chat still as reasoning_content', () => {
    const a = new UpstreamAdaptations()
    // no thinking was sent: not this
    const off = encodeUpstreamRequest(
      decodeClientRequest('responses', {model: 'k', input: 'hi', reasoning: {effort: 'none'}}, {}),
      'messages',
      'kimi-for-coding',
    )
    expect(a.learn('kimi', 'kimi-for-coding', refused, off.sent)).toBeUndefined()
    expect(a.learn('kimi', 'k2', refused, {upstream: 'chat', fields: ['model', 'messages']})).toMatch(
      /reasoning_content/,
    )
  })
})

describe("Kimi's Anthropic endpoint, which takes thinking only on", () => {
  const kimi = JSON.stringify({
    type: 'error',
    error: {
      type: 'invalid_request_error',
      message: 'invalid thinking: only type=enabled is allowed for this model',
    },
  })
  const body = (extra: Record<string, unknown>) => ({
    model: 'kimi-k2.7-code',
    max_tokens: 512,
    messages: [{role: 'user', content: 'hi'}],
    ...extra,
  })

  it('learns the least budget from a body that turned thinking off or left it out, nothing from one that thinks', () => {
    const a = new UpstreamAdaptations()
    expect(a.learn('kimi', 'k', kimi, sentOfPassedMessages(body({thinking: {type: 'disabled'}})))).toBe(
      'refused thinking.type disabled (only enabled is allowed): sent again with thinking.type enabled and the least budget, 1024 tokens (a request without thinking on, from now on)',
    )
    expect(a.get('kimi', 'k')).toEqual({claude: {thinkingOff: 'least_budget'}})
    expect(describeAdaptation(a.get('kimi', 'k')!)).toEqual([
      'thinking turned down to thinking.type enabled with the least budget, 1024 tokens, a forced tool_choice as auto (only enabled is allowed)',
    ])
    const b = new UpstreamAdaptations()
    expect(b.learn('kimi', 'k', kimi, sentOfPassedMessages(body({})))).toMatch(
      /^refused a request without thinking \(only enabled is allowed\)/,
    )
    // a forced call learned before (thinking off for it) goes: the model cannot stop thinking
    const c = new UpstreamAdaptations()
    const required = JSON.stringify({
      type: 'error',
      error: {
        type: 'invalid_request_error',
        message: "tool_choice 'required' is incompatible with thinking enabled",
      },
    })
    expect(c.learn('kimi', 'k', required, sentOfPassedMessages(body({tool_choice: {type: 'any'}})))).toMatch(
      /^refused a forced tool_choice in thinking mode/,
    )
    const forced = body({thinking: {type: 'disabled'}, tool_choice: {type: 'any'}})
    expect(c.learn('kimi', 'k', kimi, sentOfPassedMessages(forced, c.get('kimi', 'k')))).toMatch(
      /1024 tokens, the forced tool_choice as auto with the call asked for at the end of the prompt/,
    )
    expect(c.get('kimi', 'k')).toEqual({claude: {thinkingOff: 'least_budget'}})
    for (const thinking of [{type: 'enabled', budget_tokens: 1024}, {type: 'adaptive'}])
      expect(
        new UpstreamAdaptations().learn('kimi', 'k', kimi, sentOfPassedMessages(body({thinking}))),
      ).toBeUndefined()
  })

  it("learns from Kimi's words after a relay's prefix, nothing from a pydantic echo of a user who pasted them", () => {
    const litellm = `litellm.BadRequestError: AnthropicException - ${kimi}`
    expect(new UpstreamAdaptations().learn('kimi', 'k', litellm, sentOfPassedMessages(body({})))).toMatch(
      /^refused a request without thinking \(only enabled is allowed\)/,
    )
    const echo = JSON.stringify({
      type: 'error',
      error: {
        message:
          '1 validation error for MessagesRequest\nmessages.0.content\n  Value error [type=value_error, input_value="invalid thinking: only type=enabled is allowed for this model — why?", input_type=str]',
      },
    })
    // (and FastAPI's list of errors, its `'input':` on the first line, after a colon)
    const fastapi = JSON.stringify({
      detail:
        "[{'type': 'value_error', 'msg': 'Value error', 'input': 'invalid thinking: only type=enabled is allowed for this model'}]",
    })
    // (and a relay's quote of the request it failed, without a validator's marker)
    const quoted = `upstream error: request {"messages":[{"role":"user","content":"invalid thinking: only type=enabled is allowed for this model?"}]} failed`
    const a = new UpstreamAdaptations()
    for (const text of [echo, fastapi, quoted])
      expect(a.learn('vllm', 'qwen3-coder', text, sentOfPassedMessages(body({}))), text).toBeUndefined()
    expect(a.get('vllm', 'qwen3-coder')).toBeUndefined()
  })

  it('a translated request that said nothing of thinking goes with the least budget once learned so (as the note says)', () => {
    const learned: UpstreamAdaptation = {claude: {thinkingOff: 'least_budget'}}
    const chat = decodeClientRequest(
      'chat',
      {model: 'k', messages: [{role: 'user', content: 'hi'}], max_tokens: 200},
      {},
    )
    const sent = JSON.parse(
      encodeUpstreamRequest(chat, 'messages', 'kimi-for-coding', {}, learned).body.toString(),
    )
    expect([sent.thinking, sent.max_tokens]).toEqual([{type: 'enabled', budget_tokens: 1024}, 1224])
    // (a limit under twice the budget raised by it, the sampling settings left out)
    const near = decodeClientRequest(
      'chat',
      {
        model: 'k',
        messages: [{role: 'user', content: 'hi'}],
        max_tokens: 1100,
        temperature: 0,
        reasoning_effort: 'none',
      },
      {},
    )
    const out = JSON.parse(
      encodeUpstreamRequest(near, 'messages', 'kimi-for-coding', {}, learned).body.toString(),
    )
    expect([out.thinking, out.max_tokens, out.temperature]).toEqual([
      {type: 'enabled', budget_tokens: 1024},
      2124,
      undefined,
    ])
  })

  it('a passed-through body written again from its parse: the least budget, max_tokens above it, a forced call as auto', () => {
    const learned: UpstreamAdaptation = {claude: {thinkingOff: 'least_budget'}}
    const sent = JSON.parse(
      adaptPassedMessages(
        body({
          thinking: {type: 'disabled'},
          tools: [{name: 'T', input_schema: {}}],
          tool_choice: {type: 'tool', name: 'T'},
        }),
        learned,
      ).toString(),
    )
    expect([sent.thinking, sent.max_tokens, sent.tool_choice]).toEqual([
      {type: 'enabled', budget_tokens: 1024},
      1536,
      {type: 'auto'},
    ])
    expect(JSON.stringify(sent.messages.at(-1))).toMatch(/call the tool T/)
    // a limit under twice the budget raised by it (the answer keeps its room), no sampling setting
    const near = JSON.parse(
      adaptPassedMessages(
        body({
          max_tokens: 1100,
          temperature: 0,
          top_k: 40,
          tool_choice: {type: 'any'},
          tools: [{name: 'T', input_schema: {}}],
        }),
        learned,
      ).toString(),
    )
    expect([near.max_tokens, near.temperature, near.top_k]).toEqual([2124, undefined, undefined])
    // one that thinks goes as it came
    const thinks = body({max_tokens: 8000, thinking: {type: 'enabled', budget_tokens: 4000}})
    expect(JSON.parse(adaptPassedMessages(thinks, learned).toString())).toEqual(thinks)
  })
})
