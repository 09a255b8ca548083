import {describe, expect, it} from 'vitest'

import {UsageError} from '../core/errors.js'
import type {ChatInput} from './chat-request.js'
import {buildChatRequest, parseParams, userMessage} from './chat-request.js'

const hi = [{role: 'user' as const, content: 'hi'}]
const build = (input: Partial<ChatInput>) => buildChatRequest({model: 'm', messages: hi, ...input})

describe('buildChatRequest: options -> request body', () => {
  it.each<[string, Partial<ChatInput>, Record<string, unknown>]>([
    ['streams with exact usage by default', {}, {stream: true, stream_options: {include_usage: true}}],
    ['--no-stream drops stream_options', {stream: false}, {stream: false}],
    ['--system goes first', {system: 'be brief'}, {messages: [{role: 'system', content: 'be brief'}, ...hi]}],
    ['--temperature', {temperature: '0.7'}, {temperature: 0.7}],
    ['--top-p', {topP: '1'}, {top_p: 1}],
    ['--top-k', {topK: '40'}, {top_k: 40}],
    ['--presence-penalty', {presencePenalty: '-2'}, {presence_penalty: -2}],
    ['--max-tokens sends the newer name', {maxTokens: '64'}, {max_completion_tokens: 64}],
    ['--thinking', {thinking: true}, {enable_thinking: true}],
    ['--no-thinking', {thinking: false}, {enable_thinking: false}],
    ['--json-object', {jsonObject: true}, {response_format: {type: 'json_object'}}],
    ['--timeout goes in extra_body', {timeoutSeconds: '30'}, {extra_body: {timeout: 30}}],
    [
      '--param passes through (JSON or string, dotted keys nest)',
      {params: ['seed=7', 'user=alice', 'a.b=[1]']},
      {seed: 7, user: 'alice', a: {b: [1]}},
    ],
    ['--param max_tokens for older services', {params: ['max_tokens=5']}, {max_tokens: 5}],
    ['a named option beats --param', {params: ['temperature=1.5'], temperature: '0.2'}, {temperature: 0.2}],
    [
      '--only/--ignore/--order lists',
      {provider: {only: 'a, b', ignore: 'c', order: 'b,a'}},
      {provider: {only: ['a', 'b'], ignore: ['c'], order: ['b', 'a']}},
    ],
    [
      '--sort keeps priority order',
      {provider: {sort: 'latency,input_price'}},
      {provider: {sort: ['latency', 'input_price']}},
    ],
    [
      'ranges become [min, max]',
      {
        provider: {
          inputPriceRange: '0,1.5',
          outputPriceRange: '1,2',
          throughputRange: '50,500',
          latencyRange: '0,0.5',
          inputLengthRange: '1000,64000',
        },
      },
      {
        provider: {
          input_price_range: [0, 1.5],
          output_price_range: [1, 2],
          throughput_range: [50, 500],
          latency_range: [0, 0.5],
          input_length_range: [1000, 64000],
        },
      },
    ],
    [
      '--no-prompt-length-filter',
      {provider: {promptLengthFilter: false}},
      {provider: {allow_filter_prompt_length: false}},
    ],
    ['--fallbacks / --no-fallbacks', {provider: {fallbacks: false}}, {provider: {allow_fallbacks: false}}],
    [
      '--provider JSON, flags override its keys',
      {provider: {json: '{"only":["x"],"sort":["throughput"]}', only: 'y'}},
      {provider: {only: ['y'], sort: ['throughput']}},
    ],
  ])('%s', (_name, input, expected) => {
    expect(build(input)).toMatchObject(expected)
  })

  it('sends no provider object when no routing is asked for, and no stream_options without streaming', () => {
    expect(build({provider: {}})).not.toHaveProperty('provider')
    expect(build({stream: false})).not.toHaveProperty('stream_options')
  })

  it('attaches images and videos as content items', () => {
    expect(userMessage('look', ['https://x/a.png'], ['https://x/b.mp4'])).toEqual({
      role: 'user',
      content: [
        {type: 'text', text: 'look'},
        {type: 'image_url', image_url: {url: 'https://x/a.png'}},
        {type: 'video_url', video_url: {url: 'https://x/b.mp4'}},
      ],
    })
    expect(userMessage('plain')).toEqual({role: 'user', content: 'plain'})
  })
})

describe('buildChatRequest: validation before sending', () => {
  it.each<[string, Partial<ChatInput>, string, RegExp]>([
    ['temperature above 2', {temperature: '2.1'}, 'invalid_temperature', /between 0 and 2/],
    ['temperature below 0', {temperature: '-0.1'}, 'invalid_temperature', /between 0 and 2/],
    ['temperature not a number', {temperature: 'hot'}, 'invalid_temperature', /must be a number/],
    ['top_p above 1', {topP: '1.01'}, 'invalid_top_p', /between 0 and 1/],
    ['presence_penalty beyond 2', {presencePenalty: '2.5'}, 'invalid_presence_penalty', /between -2 and 2/],
    ['top_k of 0', {topK: '0'}, 'invalid_top_k', /greater than 0/],
    ['top_k not an integer', {topK: '1.5'}, 'invalid_top_k', /integer/],
    ['max tokens negative', {maxTokens: '-5'}, 'invalid_max_tokens', /greater than 0/],
    ['timeout not an integer', {timeoutSeconds: '1.5'}, 'invalid_timeout', /integer/],
    ['range with one number', {provider: {latencyRange: '5'}}, 'invalid_range', /two numbers/],
    ['range with min > max', {provider: {inputPriceRange: '2,1'}}, 'invalid_range', /greater than max/],
    ['range not numbers', {provider: {throughputRange: 'a,b'}}, 'invalid_range', /two numbers/],
    [
      'input length range of fractions',
      {provider: {inputLengthRange: '0.5,10'}},
      'invalid_range',
      /integers/,
    ],
    ['unknown sort key', {provider: {sort: 'price'}}, 'invalid_provider_sort', /Unknown sort key "price"/],
    ['bad --provider JSON', {provider: {json: '{only:'}}, 'invalid_provider_json', /not valid JSON/],
    [
      '--provider JSON with a bad range',
      {provider: {json: '{"latency_range":[3,1]}'}},
      'invalid_range',
      /greater than max/,
    ],
    ['--param without =', {params: ['seed']}, 'invalid_param', /key=value/],
    ['--param setting messages', {params: ['messages=[]']}, 'invalid_param', /cannot set "messages"/],
    ['no model', {model: ''}, 'missing_model', /No model/],
    ['no message', {messages: []}, 'missing_message', /No message/],
  ])('refuses %s', (_name, input, code, message) => {
    let error: unknown
    try {
      build(input)
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(UsageError)
    expect(error).toMatchObject({code, exitCode: 2})
    expect((error as Error).message).toMatch(message)
  })

  it('names the flag and its allowed values in the hint, never a spec section', () => {
    expect(() => build({temperature: '3'})).toThrow(
      expect.objectContaining({hint: 'Allowed: --temperature from 0.0 to 2.0, e.g. --temperature 0.7.'}),
    )
  })

  it('warns about a --param value that looks like JSON but does not parse, and sends it as text', () => {
    const warnings: string[] = []
    const request = build({params: ['n={bad', 'x=plain'], onWarning: (w) => warnings.push(w)})
    expect(request).toMatchObject({n: '{bad', x: 'plain'})
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain('--param n: "{bad" looks like JSON but does not parse')
  })

  it('refuses bad image URLs', () => {
    expect(() => userMessage('x', ['not a url'])).toThrow(/--image must be an http\(s\) or data: URL/)
  })
})

describe('parseParams', () => {
  it('keeps values that are not JSON as strings', () => {
    expect(parseParams(['stop=END', 'n=2', 'flag=true', 'obj={"a":1}'])).toEqual({
      stop: 'END',
      n: 2,
      flag: true,
      obj: {a: 1},
    })
  })

  it('refuses __proto__ in a key instead of changing Object.prototype', () => {
    for (const key of ['__proto__.polluted', 'extra_body.__proto__.polluted', '__proto__'])
      expect(() => parseParams([`${key}=1`])).toThrow(/"__proto__" is not a field name/)
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    expect(parseParams(['constructor.prototype.x=1'])).toEqual({constructor: {prototype: {x: 1}}})
  })
})
