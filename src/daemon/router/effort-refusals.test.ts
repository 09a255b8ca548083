/**
 * A reasoning effort the server refuses, in its own words, learned (F2): Ollama's `invalid
 * reasoning value: "xhigh" (must be ...)`, pydantic's `literal_error` (SGLang's, vLLM's, FastAPI's),
 * zod's "Expected ..., received ...", read for a chat body (translated or passed through) and a
 * Responses body passed through (Codex's), whose effort, or the effort itself, OpenAI's refusal
 * for gpt-4o-mini teaches too. Each reader checked against refusals of other things.
 */
import {describe, expect, it} from 'vitest'

import {sentOfPassedChat, sentOfPassedResponses} from '../../protocols/translate.js'
import {describeAdaptation, refusedEffortValues, UpstreamAdaptations} from './adaptations.js'

/** Ollama's `/v1` error body (ollama/ollama #17252). */
const ollama = (value: string, quote = '"') =>
  JSON.stringify({
    error: {
      message: `invalid reasoning value: ${quote}${value}${quote} (must be ${[
        'high',
        'medium',
        'low',
        'max',
        'none',
      ]
        .map((v) => `${quote}${v}${quote}`)
        .join(', ')
        .replace(/, ([^,]*)$/, ', or $1')})`,
      type: 'invalid_request_error',
      param: null,
      code: null,
    },
  })

/** SGLang's 400, its pydantic error as Python writes it (CLIProxyAPI #1572). */
const sglang = (loc: string, input: string) => {
  const error = `{'type': 'literal_error', 'loc': ('body', ${loc}), 'msg': "Input should be 'low', 'medium' or 'high'", 'input': '${input}', 'ctx': {'expected': "'low', 'medium' or 'high'"}}`
  return JSON.stringify({
    object: 'error',
    message: `1 validation error:\n  ${error}\n\n  File "/sgl-workspace/sglang/python/sglang/srt/entrypoints/http_server.py", line 1324, in openai_v1_chat_completions\n    POST /v1/chat/completions [${error}]`,
    type: 'Bad Request',
    param: null,
    code: 400,
  })
}

/** FastAPI's 422, as JSON. */
const fastapi = (loc: unknown[], input: unknown, msg = "Input should be 'low', 'medium' or 'high'") =>
  JSON.stringify({
    detail: [{type: 'literal_error', loc, msg, input, ctx: {expected: "'low', 'medium' or 'high'"}}],
  })

const openai = (message: string, param: string | null, code = 'unsupported_parameter') =>
  JSON.stringify({error: {message, type: 'invalid_request_error', param, code}})

describe('refusedEffortValues', () => {
  it("reads Ollama's list, its quotes double or single, for the value refused", () => {
    expect(refusedEffortValues(ollama('xhigh'), 'xhigh')).toEqual(['high', 'medium', 'low', 'max', 'none'])
    expect(refusedEffortValues(ollama('minimal', "'"), 'minimal')).toEqual([
      'high',
      'medium',
      'low',
      'max',
      'none',
    ])
    // (the words as text, a proxy's escaped quotes)
    expect(
      refusedEffortValues(
        'upstream: invalid reasoning value: \\"xhigh\\" (must be \\"high\\" or \\"low\\")',
        'xhigh',
      ),
    ).toEqual(['high', 'low'])
    // another value named than the one sent, or the value sent among those it lists: nothing
    expect(refusedEffortValues(ollama('xhigh'), 'minimal')).toBeUndefined()
    expect(refusedEffortValues(ollama('high'), 'high')).toBeUndefined()
  })

  it("reads pydantic's literal_error by its place and input: Python's repr, FastAPI's JSON, the plain text", () => {
    expect(refusedEffortValues(sglang("'reasoning_effort'", 'xhigh'), 'xhigh')).toEqual([
      'low',
      'medium',
      'high',
    ])
    expect(refusedEffortValues(fastapi(['body', 'reasoning_effort'], 'max'), 'max')).toEqual([
      'low',
      'medium',
      'high',
    ])
    expect(refusedEffortValues(fastapi(['body', 'reasoning', 'effort'], 'xhigh'), 'xhigh')).toEqual([
      'low',
      'medium',
      'high',
    ])
    const text =
      "1 validation error for ChatCompletionRequest\nreasoning_effort\n  Input should be 'low', 'medium' or 'high' [type=literal_error, input_value='xhigh', input_type=str]"
    expect(refusedEffortValues(text, 'xhigh')).toEqual(['low', 'medium', 'high'])
  })

  it("never reads pydantic's echo of another field, nor an input that is not the value sent", () => {
    // a message's role (its input the client's words), the text's verbosity, a tool's type
    expect(refusedEffortValues(sglang("'messages', 2, 'role'", 'xhigh'), 'xhigh')).toBeUndefined()
    expect(refusedEffortValues(fastapi(['body', 'text', 'verbosity'], 'xhigh'), 'xhigh')).toBeUndefined()
    expect(
      refusedEffortValues(
        fastapi(['body', 'messages', 0, 'content'], "'loc': ('body', 'reasoning_effort') xhigh"),
        'xhigh',
      ),
    ).toBeUndefined()
    // the place an effort's, its input another value
    expect(refusedEffortValues(fastapi(['body', 'reasoning_effort'], 'max'), 'xhigh')).toBeUndefined()
    // an input it lists (no refusal of the value)
    expect(refusedEffortValues(fastapi(['body', 'reasoning_effort'], 'high'), 'high')).toBeUndefined()
    // another kind of error at the effort's place
    expect(
      refusedEffortValues(
        JSON.stringify({
          detail: [
            {
              type: 'string_type',
              loc: ['body', 'reasoning_effort'],
              msg: 'Input should be a valid string',
              input: 3,
            },
          ],
        }),
        'xhigh',
      ),
    ).toBeUndefined()
  })

  it("reads zod's list where the effort is named or the value is an effort's alone", () => {
    expect(
      refusedEffortValues(
        openai(
          "reasoning_effort: Invalid enum value. Expected 'low' | 'medium' | 'high', received 'xhigh'",
          null,
        ),
        'xhigh',
      ),
    ).toEqual(['low', 'medium', 'high'])
    // Kimi's (CLIProxyAPI #1307), no field named, a value only an effort has
    expect(
      refusedEffortValues("expected one of 'low' | 'medium' | 'high', received 'xhigh'", 'xhigh'),
    ).toEqual(['low', 'medium', 'high'])
    // a value another field takes too, no effort named: not read (it may be the verbosity's)
    expect(refusedEffortValues("Expected 'low' | 'high', received 'medium'", 'medium')).toBeUndefined()
    expect(
      refusedEffortValues("text.verbosity: Expected 'low' | 'medium' | 'high', received 'xhigh'", 'xhigh'),
    ).toBeUndefined()
    // received another value
    expect(refusedEffortValues("Expected 'low' | 'medium' | 'high', received 'max'", 'xhigh')).toBeUndefined()
  })

  it("reads none of OpenAI's own words (read with their field elsewhere), nor a value that is no effort", () => {
    expect(
      refusedEffortValues(
        openai(
          "Unsupported value: 'reasoning_effort' does not support 'xhigh' with this model. Supported values are: 'low', 'medium', and 'high'.",
          'reasoning_effort',
          'unsupported_value',
        ),
        'xhigh',
      ),
    ).toBeUndefined()
    expect(refusedEffortValues(ollama('turbo'), 'turbo')).toBeUndefined()
    expect(
      refusedEffortValues('{"error":{"message":"invalid temperature: only 1 is allowed"}}', 'xhigh'),
    ).toBeUndefined()
  })
})

describe('an effort refused in a chat body (translated or passed through)', () => {
  const chat = {model: 'glm-5.2:cloud', messages: [{role: 'user', content: 'hi'}], reasoning_effort: 'xhigh'}

  it("Ollama's list: every effort it does not take as the nearest it does, said on the row and by doctor", () => {
    const a = new UpstreamAdaptations()
    expect(a.learn('ollama', 'glm-5.2:cloud', ollama('xhigh'), sentOfPassedChat(chat))).toBe(
      'refused reasoning_effort xhigh (it takes high, medium, low, max, none): sent again with max',
    )
    const learned = a.get('ollama', 'glm-5.2:cloud')!
    expect(learned).toEqual({effort: {minimal: 'low', xhigh: 'max'}})
    expect(describeAdaptation(learned)).toEqual(['effort minimal sent as low', 'effort xhigh sent as max'])
  })

  it("SGLang's literal_error (a 400) and FastAPI's (a 422)", () => {
    const a = new UpstreamAdaptations()
    expect(a.learn('sglang', 'glm-5', sglang("'reasoning_effort'", 'xhigh'), sentOfPassedChat(chat))).toBe(
      'refused reasoning_effort xhigh (it takes low, medium, high): sent again with high',
    )
    expect(a.get('sglang', 'glm-5')?.effort).toEqual({
      none: 'low',
      minimal: 'low',
      xhigh: 'high',
      max: 'high',
    })
    const b = new UpstreamAdaptations()
    expect(
      b.learn('vllm', 'm', fastapi(['body', 'reasoning_effort'], 'xhigh'), sentOfPassedChat(chat), 422),
    ).toBe('refused reasoning_effort xhigh (it takes low, medium, high): sent again with high')
  })

  it('teaches nothing from a literal_error elsewhere (its echo of the input is the client’s)', () => {
    const a = new UpstreamAdaptations()
    expect(
      a.learn('sglang', 'glm-5', sglang("'messages', 1, 'role'", 'xhigh'), sentOfPassedChat(chat)),
    ).toBeUndefined()
    expect(a.get('sglang', 'glm-5')).toBeUndefined()
  })
})

describe("an effort refused in Codex's Responses body passed through", () => {
  const codex = {
    model: 'glm-5.2:cloud',
    instructions: 'You are Codex.',
    input: [{type: 'message', role: 'user', content: [{type: 'input_text', text: 'hi'}]}],
    reasoning: {effort: 'xhigh', summary: 'auto'},
    stream: true,
  }

  it("Ollama's refusal of xhigh teaches the nearest it takes", () => {
    const a = new UpstreamAdaptations()
    expect(a.learn('ollama', 'glm-5.2:cloud', ollama('xhigh'), sentOfPassedResponses(codex))).toBe(
      'refused reasoning.effort xhigh (it takes high, medium, low, max, none): sent again with max',
    )
    expect(a.get('ollama', 'glm-5.2:cloud')).toEqual({effort: {minimal: 'low', xhigh: 'max'}})
  })

  it("OpenAI's list for o3, by its param", () => {
    const a = new UpstreamAdaptations()
    const refusal = openai(
      "Unsupported value: 'reasoning.effort' does not support 'xhigh' with this model. Supported values are: 'low', 'medium', and 'high'.",
      'reasoning.effort',
      'unsupported_value',
    )
    expect(a.learn('openai', 'o3', refusal, sentOfPassedResponses({...codex, model: 'o3'}))).toBe(
      'refused reasoning.effort xhigh (it takes low, medium, high): sent again with high',
    )
  })

  it("OpenAI's refusal of the effort itself (gpt-4o-mini): without it, the summary kept; the summary refused after", () => {
    const a = new UpstreamAdaptations()
    const body = {...codex, model: 'gpt-4o-mini', reasoning: {effort: 'none', summary: 'auto'}}
    const refusal = openai(
      "Unsupported parameter: 'reasoning.effort' is not supported with this model.",
      'reasoning.effort',
    )
    expect(a.learn('openai', 'gpt-4o-mini', refusal, sentOfPassedResponses(body))).toBe(
      'refused reasoning.effort: sent again without it',
    )
    const learned = a.get('openai', 'gpt-4o-mini')!
    expect(learned).toEqual({drop: ['reasoning.effort']})
    expect(describeAdaptation(learned)).toEqual(['sent without reasoning.effort'])
    const summary = openai(
      "Unsupported parameter: 'reasoning.summary' is not supported with this model.",
      'reasoning.summary',
    )
    expect(
      a.learn(
        'openai',
        'gpt-4o-mini',
        summary,
        sentOfPassedResponses({...body, reasoning: {summary: 'auto'}}, learned),
      ),
    ).toBe('refused reasoning.summary: sent again without it')
    expect(a.get('openai', 'gpt-4o-mini')).toEqual({drop: ['reasoning.effort', 'reasoning.summary']})
  })

  it('learns nothing of the effort from other refusals', () => {
    const a = new UpstreamAdaptations()
    const sent = sentOfPassedResponses(codex)
    // a value of another field refused (its param another), the input's words, a bare 400
    for (const refusal of [
      openai(
        "Invalid value: 'flex'. Supported values are: 'auto' and 'default'.",
        'service_tier',
        'invalid_value',
      ),
      openai("Unsupported parameter: 'temperature' is not supported with this model.", 'temperature'),
      sglang("'input', 0, 'role'", 'xhigh'),
      '{"error":{"message":"Bad Request"}}',
    ])
      expect(a.learn('p', 'm', refusal, sent), refusal).toBeUndefined()
    // the summary's words to a body that asked for none
    expect(
      a.learn(
        'p',
        'm',
        openai(
          "Unsupported parameter: 'reasoning.summary' is not supported with this model.",
          'reasoning.summary',
        ),
        sentOfPassedResponses({...codex, reasoning: {effort: 'high'}}),
      ),
    ).toBeUndefined()
    // the effort's words to a body that sent none
    expect(
      a.learn(
        'p',
        'm',
        openai(
          "Unsupported parameter: 'reasoning.effort' is not supported with this model.",
          'reasoning.effort',
        ),
        sentOfPassedResponses({...codex, reasoning: {summary: 'auto'}}),
      ),
    ).toBeUndefined()
    expect(a.get('p', 'm')).toBeUndefined()
  })

  it("serde's refusal of the value (a server written in Rust): the nearest it lists", () => {
    const a = new UpstreamAdaptations()
    const refusal = openai(
      "Invalid 'reasoning.effort': unknown variant `xhigh`, expected one of `minimal`, `low`, `medium`, `high` at line 1 column 812",
      'reasoning.effort',
    )
    expect(a.learn('p', 'm', refusal, sentOfPassedResponses(codex))).toBe(
      'refused reasoning.effort xhigh (it takes minimal, low, medium, high): sent again with high',
    )
    // another field's variant, and an effort's own value beside verbosity: nothing
    expect(
      refusedEffortValues('unknown variant `loud`, expected one of `low`, `high`', 'xhigh'),
    ).toBeUndefined()
    expect(
      refusedEffortValues('text.verbosity: unknown variant `high`, expected one of `low`, `medium`', 'high'),
    ).toBeUndefined()
  })

  it('never learns the effort away from a refusal of its value (no list in it): the value named, or the words for a value', () => {
    const a = new UpstreamAdaptations()
    const sent = sentOfPassedResponses(codex)
    for (const refusal of [
      openai("'reasoning.effort' has an unsupported value 'xhigh'", null),
      // a relay's prefix before OpenAI's words
      openai(
        "litellm.BadRequestError: OpenAIException - Unsupported value: 'reasoning.effort' does not support 'xhigh' with this model.",
        null,
      ),
      openai("Reasoning effort 'xhigh' is not supported with the web_search tool.", 'reasoning.effort'),
    ])
      expect(a.learn('p', 'm', refusal, sent), refusal).toBeUndefined()
    expect(a.get('p', 'm')).toBeUndefined()
  })
})
