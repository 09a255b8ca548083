/**
 * Claude Code passed through to a strict host fronting Claude (Bedrock, Vertex AI, a LiteLLM or
 * Copilot relay) that refuses its newer body fields in Anthropic's validation words: "diagnostics:
 * Extra inputs are not permitted" (9router #3875), "tools.0.custom.eager_input_streaming: Extra
 * inputs are not permitted" (yuegongzi/copilot-api #11). Every turn of the agent failed; now the
 * refusal is learned per provider and model, the request goes again at once without the field (a
 * tool's member: from every tool), and the model's later requests go without it from the first try,
 * every other byte as Claude Code sent it. A scripted upstream judged by the simulator's own
 * `strict-messages-fields` rule, behind the proxy.
 */
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'

import {selectQuirks} from '../../sim/upstream/quirks.js'
import {strictMessagesFieldsProblem} from '../../sim/upstream/messages.js'
import {learnedAdaptations} from './proxy.js'
import {judgedMessagesGateway, messagesTarget, MESSAGES_ANSWER, MESSAGES_STREAM} from './proxy-fixture.js'

/** The upstream model (the simulator's rule by its name); the client asks for it by that name. */
const MODEL = 'claude-opus-4-8+strict-messages-fields'
let targets = [messagesTarget('bedrock', MODEL, 'http://127.0.0.1:9')]
const {gateway, upstream, received, start, clear, close, post} = judgedMessagesGateway(
  (body) => {
    const refused = strictMessagesFieldsProblem(body, selectQuirks({}, body.model).quirks)
    if (refused === undefined) return undefined
    return {status: 400, body: {type: 'error', error: {type: 'invalid_request_error', message: refused}}}
  },
  {route: () => ({targets})},
)

beforeAll(start)
afterEach(clear)
afterAll(close)

const target = (name: string) => messagesTarget(name, MODEL, upstream.origin)

/**
 * Claude Code's body, cut down, as raw text: escapes and a number that `JSON.stringify` would write
 * otherwise (`\u00e9`, `\/`, `1.0`), and the field's name inside the prompt, so a body written again,
 * or a cut outside the field, would show.
 */
const claudeCode = (extra: string, tools = '', stream = false) =>
  `{"model":"${MODEL}","max_tokens":32000,"thinking":{"type":"adaptive"},"output_config":{"effort":"high"},` +
  `"system":[{"type":"text","text":"You are Claude Code. caf\\u00e9 a\\/b","cache_control":{"type":"ephemeral"}}],` +
  `"messages":[{"role":"user","content":[{"type":"text","text":"say \\"diagnostics\\": {} and \\"eager_input_streaming\\": true"}]}],` +
  `${tools}"temperature":1.0${extra},"stream":${stream}}`

const DIAGNOSTICS = ',"diagnostics":{"cache":{"previous_message_id":"msg_0"}}'
const SPEED = ',"speed":"fast"'
const TOOLS =
  '"tools":[{"name":"Bash","description":"Run a command.","input_schema":{"type":"object","properties":{}},"eager_input_streaming":true},' +
  '{"name":"Read","input_schema":{"type":"object"}, "eager_input_streaming" : true ,"cache_control":{"type":"ephemeral"}}],'
const WITHOUT_EAGER =
  '"tools":[{"name":"Bash","description":"Run a command.","input_schema":{"type":"object","properties":{}}},' +
  '{"name":"Read","input_schema":{"type":"object"}, "cache_control":{"type":"ephemeral"}}],'

const rules = (provider: string) => learnedAdaptations().find((a) => a.provider === provider)?.rules

describe("Claude Code's newer fields refused by a strict host fronting Claude", {timeout: 30_000}, () => {
  it("a top-level field (diagnostics): sent again at once without it; the next turn one try without it and Claude Code's other newer fields, the bytes otherwise as they came", async () => {
    targets = [target('bedrock')]
    const body = claudeCode(DIAGNOSTICS)
    const res = await post(body)
    expect(res.status).toBe(200)
    expect(await res.text()).toBe(MESSAGES_ANSWER)
    expect(received.map(String)).toEqual([body, body.replace(DIAGNOSTICS, '')])
    const [result] = await gateway.settled(1)
    expect([result.status, result.error]).toEqual([
      200,
      "bedrock refused diagnostics: sent again without it, and from now on without Claude Code's other newer fields",
    ])
    expect(rules('bedrock')).toEqual([
      'sent without diagnostics, fallbacks, fallback_credit_token, speed',
      'tools sent without eager_input_streaming (refused)',
    ])

    // the next turn, streamed, in fast mode (`/fast` adds `speed`) with tools that stream their
    // input: one try, without them all (the host's schema is the one that refused diagnostics)
    clear()
    const next = claudeCode(DIAGNOSTICS + SPEED, TOOLS, true)
    expect(await (await post(next)).text()).toBe(MESSAGES_STREAM)
    expect(received.map(String)).toEqual([
      next.replace(DIAGNOSTICS + SPEED, '').replace(TOOLS, WITHOUT_EAGER),
    ])
    expect((await gateway.settled(1))[0].error).toBeNull()
  })

  it("a tool's member (eager_input_streaming): cut out of every tool; the next turn one try", async () => {
    targets = [target('copilot')]
    const body = claudeCode('', TOOLS)
    expect((await post(body)).status).toBe(200)
    expect(received.map(String)).toEqual([body, body.replace(TOOLS, WITHOUT_EAGER)])
    const [result] = await gateway.settled(1)
    expect(result.error).toBe(
      "copilot refused its tools' eager_input_streaming: sent again without it, and from now on without Claude Code's other newer fields",
    )
    expect(rules('copilot')).toEqual([
      'sent without diagnostics, fallbacks, fallback_credit_token, speed',
      'tools sent without eager_input_streaming (refused)',
    ])

    clear()
    const next = claudeCode('', TOOLS, true)
    expect((await post(next)).status).toBe(200)
    expect(received.map(String)).toEqual([next.replace(TOOLS, WITHOUT_EAGER)])
  })

  it("Claude Code's first turn with all its newer fields, one named by the refusal: all of them left out in the one retry, the client gets 200", async () => {
    targets = [target('bedrock-all')]
    // four top-level fields and a tool's member, each of which the host refuses, and its context
    // editing, which it takes (Claude Code does not retry a 400: a turn that reached it failed)
    const NEWER = ',"fallbacks":[],"fallback_credit_token":"fct_1","speed":"fast"'
    const EDITING = ',"context_management":{"edits":[{"type":"clear_thinking_20251015","keep":"all"}]}'
    const body = claudeCode(DIAGNOSTICS + NEWER + EDITING, TOOLS, true)
    const res = await post(body)
    expect(res.status).toBe(200)
    expect(await res.text()).toBe(MESSAGES_STREAM)
    const bare = body.replace(DIAGNOSTICS + NEWER, '').replace(TOOLS, WITHOUT_EAGER)
    // two tries, not six: the refusal named diagnostics, the retry went without all five
    expect(received.map(String)).toEqual([body, bare])
    expect(bare).toContain(EDITING)
    const [result] = await gateway.settled(1)
    expect(result.error).toBe(
      "bedrock-all refused diagnostics: sent again without it, and without fallbacks, fallback_credit_token, speed, its tools' eager_input_streaming (Claude Code's other newer fields)",
    )
    expect(rules('bedrock-all')).toEqual([
      'sent without diagnostics, fallbacks, fallback_credit_token, speed',
      'tools sent without eager_input_streaming (refused)',
    ])
    // the next turn: one try
    clear()
    expect((await post(body)).status).toBe(200)
    expect(received.map(String)).toEqual([bare])
  })

  it('a field the request needs reaches the client as refused, after one try, nothing learned', async () => {
    targets = [target('strict-needed')]
    // (`output_format`: a structured output's schema, which the answer depends on)
    const body = claudeCode(',"output_format":{"type":"json_schema","schema":{}}')
    const res = await post(body)
    expect(res.status).toBe(400)
    expect(((await res.json()) as {error: {message: string}}).error.message).toBe(
      'output_format: Extra inputs are not permitted',
    )
    expect(received.map(String)).toEqual([body])
    expect(rules('strict-needed')).toBeUndefined()
  })
})
