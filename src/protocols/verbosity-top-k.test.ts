/**
 * Two settings the decoders dropped without a word: a Responses `text.verbosity` (Codex 0.171 on
 * gpt-5.5 sends `"low"`) and a chat client's `verbosity`, kept for a Responses upstream and
 * OpenAI's own chat completions; and Gemini's `generationConfig.topK` (Gemini CLI sends 64 on
 * every call) and Messages `top_k`, kept for Messages (not beside thinking) and Gemini.
 */
import {describe, expect, it} from 'vitest'

import {UpstreamAdaptations, refusedField} from '../daemon/router/adaptations.js'
import type {CodecContext, Family} from './ir.js'
import {decodeClientRequest, encodeUpstreamRequest} from './translate.js'

const upstreamBody = (family: Family, body: unknown, up: Family, model = 'm', ctx: CodecContext = {}): any =>
  JSON.parse(encodeUpstreamRequest(decodeClientRequest(family, body, {}), up, model, ctx).body.toString())

/** Codex 0.171 on gpt-5.5 (captured): `text: {verbosity: "low"}`. */
const codex = {
  model: 'gpt-5.5',
  input: [{type: 'message', role: 'user', content: [{type: 'input_text', text: 'hi'}]}],
  text: {verbosity: 'low'},
  stream: true,
}

describe('verbosity', () => {
  it('is read from a Responses text.verbosity and a chat verbosity (an unknown value is not)', () => {
    expect(decodeClientRequest('responses', codex, {}).request.verbosity).toBe('low')
    const chat = {model: 'gpt-5.5', messages: [{role: 'user', content: 'hi'}], verbosity: 'high'}
    expect(decodeClientRequest('chat', chat, {}).request.verbosity).toBe('high')
    expect(decodeClientRequest('chat', {...chat, verbosity: 'terse'}, {}).request.verbosity).toBeUndefined()
  })

  it('goes to a Responses upstream in text, beside the format', () => {
    expect(upstreamBody('responses', codex, 'responses').text).toEqual({verbosity: 'low'})
    const json = {...codex, text: {verbosity: 'high', format: {type: 'json_object'}}}
    expect(upstreamBody('responses', json, 'responses').text).toEqual({
      format: {type: 'json_object'},
      verbosity: 'high',
    })
    const chat = {model: 'gpt-5.5', messages: [{role: 'user', content: 'hi'}], verbosity: 'medium'}
    expect(upstreamBody('chat', chat, 'responses').text).toEqual({verbosity: 'medium'})
  })

  it("goes to OpenAI's own chat completions only; other families have none", () => {
    expect(upstreamBody('responses', codex, 'chat', 'gpt-5.5', {openAiApi: true}).verbosity).toBe('low')
    // DeepSeek, GLM, a vLLM server: a field they may refuse
    expect(upstreamBody('responses', codex, 'chat', 'deepseek-chat')).not.toHaveProperty('verbosity')
    expect(JSON.stringify(upstreamBody('responses', codex, 'messages', 'claude-sonnet-4-5'))).not.toContain(
      'verbosity',
    )
    expect(JSON.stringify(upstreamBody('responses', codex, 'gemini', 'gemini-2.5-pro'))).not.toContain(
      'verbosity',
    )
  })

  it("is learned away where the model refuses it (OpenAI's older models), the rest kept", () => {
    const unsupported = (param: string) =>
      JSON.stringify({
        error: {
          message:
            "Unsupported value: 'low' is not supported with the 'gpt-4.1' model. Supported values are: 'medium'.",
          type: 'invalid_request_error',
          param,
          code: 'unsupported_value',
        },
      })
    expect(refusedField(unsupported('verbosity'), ['model', 'messages', 'verbosity'])).toBe('verbosity')
    expect(refusedField(unsupported('text.verbosity'), ['model', 'input', 'text'])).toBe('text.verbosity')
    const a = new UpstreamAdaptations()
    const client = decodeClientRequest(
      'responses',
      {...codex, text: {verbosity: 'low', format: {type: 'json_object'}}},
      {},
    )
    const sent = encodeUpstreamRequest(client, 'responses', 'gpt-4.1').sent
    expect(a.learn('oai', 'gpt-4.1', unsupported('text.verbosity'), sent)).toBe(
      'refused text.verbosity: sent again without it',
    )
    const again = JSON.parse(
      encodeUpstreamRequest(client, 'responses', 'gpt-4.1', {}, a.get('oai', 'gpt-4.1')).body.toString(),
    )
    expect(again.text).toEqual({format: {type: 'json_object'}})
    // verbosity alone: no empty `text` left behind once it is learned away (review59)
    const alone = decodeClientRequest('responses', {...codex, text: {verbosity: 'low'}}, {})
    const without = JSON.parse(
      encodeUpstreamRequest(alone, 'responses', 'gpt-4.1', {}, a.get('oai', 'gpt-4.1')).body.toString(),
    )
    expect(without).not.toHaveProperty('text')
  })
})

/** Gemini CLI 0.61's main call (captured): temperature 1, topP 0.95, topK 64, thinking high. */
const geminiCli = {
  contents: [{role: 'user', parts: [{text: 'hi'}]}],
  generationConfig: {temperature: 1, topP: 0.95, topK: 64},
}
const thinking = {
  ...geminiCli,
  generationConfig: {
    ...geminiCli.generationConfig,
    thinkingConfig: {includeThoughts: true, thinkingLevel: 'HIGH'},
  },
}

describe('top_k', () => {
  it("is read from Gemini's topK, Messages top_k and a chat client's top_k (vLLM's)", () => {
    expect(decodeClientRequest('gemini', geminiCli, {}).request.topK).toBe(64)
    const messages = {
      model: 'claude-sonnet-4-5',
      max_tokens: 9,
      top_k: 5,
      messages: [{role: 'user', content: 'hi'}],
    }
    expect(decodeClientRequest('messages', messages, {}).request.topK).toBe(5)
    const chat = {model: 'm', top_k: 20, messages: [{role: 'user', content: 'hi'}]}
    expect(decodeClientRequest('chat', chat, {}).request.topK).toBe(20)
  })

  it('goes to Claude as top_k beside the temperature, and to Gemini as topK', () => {
    expect(upstreamBody('gemini', geminiCli, 'messages', 'claude-sonnet-4-5')).toMatchObject({
      temperature: 1,
      top_k: 64,
    })
    const messages = {
      model: 'claude-sonnet-4-5',
      max_tokens: 9,
      top_k: 5,
      messages: [{role: 'user', content: 'hi'}],
    }
    expect(upstreamBody('messages', messages, 'gemini', 'gemini-2.5-pro').generationConfig.topK).toBe(5)
  })

  it('goes to Claude with none of the other sampling settings: not beside thinking, not to Opus 4.7 on', () => {
    const thinks = upstreamBody('gemini', thinking, 'messages', 'claude-sonnet-4-5')
    expect(thinks.thinking).toBeDefined()
    expect(thinks).not.toHaveProperty('top_k')
    expect(thinks).not.toHaveProperty('temperature')
    const opus = upstreamBody('gemini', geminiCli, 'messages', 'claude-opus-4-7')
    expect(opus).not.toHaveProperty('top_k')
    expect(opus).not.toHaveProperty('temperature')
  })

  it('goes to neither OpenAI family (no such field): dropped', () => {
    expect(upstreamBody('gemini', geminiCli, 'chat', 'gpt-5.5')).not.toHaveProperty('top_k')
    expect(upstreamBody('gemini', geminiCli, 'responses', 'gpt-5.5')).not.toHaveProperty('top_k')
  })

  it('is learned away where a Claude model refuses it ("top_k is deprecated for this model.")', () => {
    const a = new UpstreamAdaptations()
    const client = decodeClientRequest('gemini', geminiCli, {})
    const sent = encodeUpstreamRequest(client, 'messages', 'claude-next').sent
    const refusal = JSON.stringify({
      type: 'error',
      error: {type: 'invalid_request_error', message: 'top_k is deprecated for this model.'},
    })
    expect(a.learn('anthropic', 'claude-next', refusal, sent)).toBe('refused top_k: sent again without it')
    const again = JSON.parse(
      encodeUpstreamRequest(
        client,
        'messages',
        'claude-next',
        {},
        a.get('anthropic', 'claude-next'),
      ).body.toString(),
    )
    expect(again).not.toHaveProperty('top_k')
    expect(again.temperature).toBe(1)
  })

  it("is learned away from an Anthropic-compatible server's own words for a field it does not know (review59)", () => {
    for (const message of [
      'Unknown parameter: top_k',
      "Unrecognized key(s) in object: 'top_k'",
      'top_k: Extra inputs are not permitted',
    ]) {
      const a = new UpstreamAdaptations()
      const sent = encodeUpstreamRequest(
        decodeClientRequest('gemini', geminiCli, {}),
        'messages',
        'kimi-k3',
      ).sent
      const refusal = JSON.stringify({type: 'error', error: {type: 'invalid_request_error', message}})
      expect(a.learn('kimi', 'kimi-k3', refusal, sent)).toBe('refused top_k: sent again without it')
    }
  })

  it('is carried only as a whole number of at least 1 (-1 and 0 are vLLM\'s "off"; Gemini takes no fraction) (review59)', () => {
    const chat = (top_k: unknown) => ({model: 'm', top_k, messages: [{role: 'user', content: 'hi'}]})
    for (const off of [-1, 0, 40.5, '40', null])
      expect(decodeClientRequest('chat', chat(off), {}).request).not.toHaveProperty('topK')
    const gemini = {...geminiCli, generationConfig: {...geminiCli.generationConfig, topK: 0}}
    expect(decodeClientRequest('gemini', gemini, {}).request).not.toHaveProperty('topK')
    const messages = {model: 'c', max_tokens: 9, top_k: -1, messages: [{role: 'user', content: 'hi'}]}
    expect(decodeClientRequest('messages', messages, {}).request).not.toHaveProperty('topK')
    expect(upstreamBody('chat', chat(-1), 'messages', 'claude-sonnet-4-5')).not.toHaveProperty('top_k')
  })
})
