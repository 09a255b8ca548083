/**
 * "Thinking off" to a model on a server on this machine or the local network (vLLM, SGLang,
 * llama.cpp), which reads the switch only from `chat_template_kwargs` (the simulator's
 * `template-kwargs` quirk: a top-level `enable_thinking` or `thinking` is ignored): Claude Code's
 * `thinking: disabled` and Codex's effort `none` reach it as the template's argument too, and the
 * answer has no reasoning. A server elsewhere gets the vendor's field only. A local server that
 * refuses the argument costs one failed try; a chat client's own `chat_template_kwargs`, passed
 * through, is never learned away nor dropped. The real daemon, the official Anthropic and OpenAI SDKs.
 */
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {Simulator} from '../src/sim/server.js'
import {startSim} from '../src/sim/server.js'
import {
  issueKeyOverApi,
  projectLogRows,
  simPolicy,
  startSimGatewayWithPolicies,
  takeSimCalls,
} from './helpers/gateway.js'

const QWEN = 'Qwen/Qwen3.6-35B-A3B+template-kwargs'
const STRICT = 'Qwen/Qwen3.6-35B-A3B+strict-fields'
const KIMI = 'moonshotai/Kimi-K2.6+template-kwargs'

let base = ''
/** A simulator of the test's own: the local server (127.0.0.1), and, as `origin: 'sim'`, one elsewhere. */
let ownSim: Simulator
let stop: () => Promise<void> = async () => {}
const keys = new Map<string, string>()

const policy = (id: string, provider: string, model: string) =>
  simPolicy(id, {
    messages: [{provider, model, translate: true}],
    responses: [{provider, model, translate: true}],
    chat: [{provider, model}],
  })

beforeAll(async () => {
  ownSim = await startSim({timeScale: 100})
  const credential = {secret: 'sim-key'}
  ;({base, stop} = await startSimGatewayWithPolicies(
    [
      policy('tk-local', 'local-vllm', QWEN),
      policy('tk-kimi', 'local-vllm', KIMI),
      policy('tk-strict', 'local-vllm', STRICT),
      policy('tk-remote', 'vendor', QWEN),
    ],
    [
      {name: 'local-vllm', family: 'chat', baseUrl: `${ownSim.origin}/v1`, credential},
      // a server elsewhere (`origin: 'sim'`: the gateway takes it for a vendor's API, whatever its host)
      {name: 'vendor', family: 'chat', baseUrl: `${ownSim.origin}/v1`, credential, origin: 'sim'},
    ],
  ))
  for (const id of ['tk-local', 'tk-kimi', 'tk-strict', 'tk-remote'])
    keys.set(id, await issueKeyOverApi(base, id, 'generic_agent', id))
}, 120_000)

afterAll(async () => {
  await stop()
  await ownSim?.close()
})

const CHAT = /\/chat\/completions$/
const anthropic = (id: string) => new Anthropic({baseURL: base, apiKey: keys.get(id)!, maxRetries: 0})
const titleCall = {
  model: 'claude-haiku-4-5',
  max_tokens: 512,
  thinking: {type: 'disabled' as const},
  messages: [{role: 'user' as const, content: 'Write a title for this chat'}],
}

describe('thinking off to a local server that reads it from the chat template', {timeout: 60_000}, () => {
  it("Claude Code's thinking disabled reaches local Qwen3 as chat_template_kwargs: no reasoning back", async () => {
    await takeSimCalls(ownSim.origin, /./)
    const off = await anthropic('tk-local').messages.create(titleCall)
    expect(off.content.map((b) => b.type)).toEqual(['text'])
    const [sent] = await takeSimCalls(ownSim.origin, CHAT)
    expect([sent.enable_thinking, sent.chat_template_kwargs]).toEqual([false, {enable_thinking: false}])
    // not asked: nothing sent, and the model thinks as its template does by default
    const {thinking: _, ...asked} = titleCall
    const on = await anthropic('tk-local').messages.create(asked)
    expect(on.content.map((b) => b.type)).toEqual(['thinking', 'text'])
    const [plain] = await takeSimCalls(ownSim.origin, CHAT)
    expect(plain).not.toHaveProperty('chat_template_kwargs')
    expect((await projectLogRows(base, 'tk-local', 2)).map((r) => [r.status, r.error])).toEqual([
      [200, null],
      [200, null],
    ])
  })

  it("Codex's effort none reaches local Kimi K2.6 as its template's thinking: false", async () => {
    const openai = new OpenAI({baseURL: `${base}/v1`, apiKey: keys.get('tk-kimi')!, maxRetries: 0})
    await takeSimCalls(ownSim.origin, /./)
    const answer = await openai.responses.create({
      model: 'gpt-5.5',
      input: 'Write a title for this chat',
      reasoning: {effort: 'none'},
    })
    expect(answer.output.map((o) => o.type)).toEqual(['message'])
    const [sent] = await takeSimCalls(ownSim.origin, CHAT)
    expect([sent.thinking, sent.chat_template_kwargs]).toEqual([{type: 'disabled'}, {thinking: false}])
  })

  it("a vendor's server elsewhere gets its own field only (which this server ignores: it thinks)", async () => {
    await takeSimCalls(ownSim.origin, /./)
    const answer = await anthropic('tk-remote').messages.create(titleCall)
    expect(answer.content.map((b) => b.type)).toEqual(['thinking', 'text'])
    const [sent] = await takeSimCalls(ownSim.origin, CHAT)
    expect(sent.enable_thinking).toBe(false)
    expect(sent).not.toHaveProperty('chat_template_kwargs')
  })

  it('a local server that refuses chat_template_kwargs: one failed try, learned; a chat client keeps its own', async () => {
    await takeSimCalls(ownSim.origin, /./)
    const first = await anthropic('tk-strict').messages.create(titleCall)
    expect(first.type).toBe('message')
    const tries = await takeSimCalls(ownSim.origin, CHAT)
    expect(tries.map((b) => b.chat_template_kwargs)).toEqual([{enable_thinking: false}, undefined])
    expect(tries.map((b) => b.enable_thinking)).toEqual([false, false])
    // learned: the next request goes without it from the start
    await anthropic('tk-strict').messages.create(titleCall)
    const [next] = await takeSimCalls(ownSim.origin, CHAT)
    expect(next).not.toHaveProperty('chat_template_kwargs')
    expect((await projectLogRows(base, 'tk-strict', 2)).map((r) => [r.status, r.error])).toEqual([
      [200, 'local-vllm refused chat_template_kwargs: sent again without it'],
      [200, null],
    ])
    const {adaptations} = (await (await fetch(`${base}/api/adaptations`)).json()) as {adaptations: any[]}
    const learned = adaptations.find((a) => a.provider === 'local-vllm' && a.model === STRICT)
    expect(learned.rules).toEqual(['sent without chat_template_kwargs'])

    // a chat client's own, passed through: as it came, and the server's refusal is the client's to see
    const chat = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: {'content-type': 'application/json', authorization: `Bearer ${keys.get('tk-strict')}`},
      body: JSON.stringify({
        model: 'any',
        messages: [{role: 'user', content: 'hi'}],
        chat_template_kwargs: {enable_thinking: true},
      }),
    })
    expect(chat.status).toBe(400)
    expect(await chat.text()).toContain('chat_template_kwargs')
    const passed = await takeSimCalls(ownSim.origin, CHAT)
    expect(passed.map((b) => b.chat_template_kwargs)).toEqual([{enable_thinking: true}])
    const {adaptations: after} = (await (await fetch(`${base}/api/adaptations`)).json()) as {
      adaptations: any[]
    }
    expect(after.find((a) => a.provider === 'local-vllm' && a.model === STRICT).rules).toEqual([
      'sent without chat_template_kwargs',
    ])
  })
})
