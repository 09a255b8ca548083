import {describe, expect, it} from 'vitest'

import {decodeClientRequest, encodeUpstreamRequest} from '../../protocols/translate.js'
import {outputLimit, refusedField, UpstreamAdaptations} from './adaptations.js'

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
})

describe('UpstreamAdaptations', () => {
  it('learns per provider and model: a field dropped, max_tokens renamed when the error asks for it', () => {
    const a = new UpstreamAdaptations()
    expect(a.get('p', 'm')).toBeUndefined()
    expect(
      a.learn('p', 'm', openai("Unsupported parameter: 'reasoning_effort'.", 'reasoning_effort'), SENT),
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
        SENT,
      ),
    ).toBe('refused max_tokens: sent again as max_completion_tokens')
    expect(a.get('p', 'm')).toEqual({drop: ['reasoning_effort'], maxCompletionTokens: true})
    expect(a.get('p', 'other')).toBeUndefined()
    expect(a.get('q', 'm')).toBeUndefined()
    expect(a.learn('p', 'm', openai('Bad conversation.', null), SENT)).toBeUndefined()
  })

  it('forgets the oldest target past its bound', () => {
    const a = new UpstreamAdaptations()
    const refusal = openai("Unsupported parameter: 'user'.", 'user')
    for (let i = 0; i <= 1000; i++) a.learn('p', `m${i}`, refusal, SENT)
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
    expect(a.learn('v', 'm', vllm, SENT, 64000)).toBe('refused max_tokens: sent again without it')
    expect(a.get('v', 'm')).toEqual({drop: ['max_tokens']})
    // renamed for an o-series model, then too large for it
    const b = new UpstreamAdaptations()
    const sent = ['model', 'messages', 'max_completion_tokens']
    expect(b.learn('o', 'm', vllm.replace(/'max_tokens' or /, ''), sent, 64000)).toBe(
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
    expect(a.learn('v', 'm', older(1200), SENT, 64000)).toBe('refused max_tokens: sent again without it')
    expect(a.get('v', 'm')).toEqual({drop: ['max_tokens']})
    expect(a.learn('v', 'n', older(40000), SENT, 64000)).toBeUndefined()
    expect(a.learn('v', 'o', older(1200), ['model', 'messages'], undefined)).toBeUndefined()
  })

  it("learns nothing from vLLM's context error when the prompt alone fills the context", () => {
    const a = new UpstreamAdaptations()
    const tooLong =
      "'max_tokens' or 'max_completion_tokens' is too large: 512. This model's maximum context length is 32768 tokens and your request has 40000 input tokens (512 > 32768 - 40000)."
    expect(a.learn('v', 'm', tooLong, SENT, 512)).toBeUndefined()
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
    a.learn('p', 'm', refusal, SENT)
    a.learn('p', 'm', refusal, SENT)
    expect(a.get('p', 'm')).toEqual({drop: ['user']})
  })

  it('is learned as a cap before any drop of max_tokens', () => {
    const a = new UpstreamAdaptations()
    const refusal = openai('Invalid max_tokens value, the valid range of max_tokens is [1, 8192]', null)
    expect(a.learn('p', 'm', refusal, SENT, 64000)).toBe(
      'refused max_tokens 64000: sent again with 8192, its limit',
    )
    expect(a.get('p', 'm')).toEqual({maxTokens: 8192})
  })
})
