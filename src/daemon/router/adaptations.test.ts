import {describe, expect, it} from 'vitest'

import {refusedField, UpstreamAdaptations} from './adaptations.js'

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
