/**
 * A chat client passed through with several system messages (opencode with a plugin that adds one,
 * Cline's and others' context blocks) to MiniMax, which refuses them ("invalid params, invalid chat
 * setting (2013)"), or to a Qwen3.5 model under llama.cpp, whose chat template raises "System
 * message must be at the beginning." (a 400; Ollama's a 500, read by those words): one failed try, learned for the model, and from then on the
 * run goes as one system message. A server that takes several gets them as they came. The real
 * daemon, the simulator's `minimax-system`, `system-first` and `ollama-system-first` quirks, the
 * official OpenAI SDK.
 */
import OpenAI from 'openai'
import {describe, expect, it} from 'vitest'

import {projectLogRows, takeSimCalls, translatedRoutes} from './helpers/gateway.js'

const gw = translatedRoutes(
  {
    minimax: ['sim-chat', 'MiniMax-M2.7+minimax-system'],
    qwen: ['sim-chat', 'Qwen/Qwen3.5-35B-A3B+system-first'],
    // the same template under Ollama, which answers its exception with a 500
    ollama: ['sim-chat', 'qwen3.6:35b+ollama-system-first'],
    plain: ['sim-chat', 'deepseek-chat'],
  },
  {prefix: 'sysmsg', families: ['chat']},
)

/** opencode with the superpowers plugin: its system prompt, the plugin's, then the user's turn. */
const messages = (text: string): OpenAI.Chat.ChatCompletionMessageParam[] => [
  {role: 'system', content: 'You are opencode, an interactive CLI tool.'},
  {role: 'system', content: '<EXTREMELY_IMPORTANT>You have superpowers.</EXTREMELY_IMPORTANT>'},
  {role: 'user', content: text},
]
const MERGED = {
  role: 'system',
  content:
    'You are opencode, an interactive CLI tool.\n\n<EXTREMELY_IMPORTANT>You have superpowers.</EXTREMELY_IMPORTANT>',
}
const NOTE =
  'sim-chat refused several system messages in a row: sent again with each run of messages of one role as one message'

describe('several system messages passed through to a server that refuses them', {timeout: 60_000}, () => {
  const MODEL: Record<string, string> = {minimax: 'MiniMax', qwen: 'Qwen', ollama: 'qwen3.6'}
  for (const id of ['minimax', 'qwen', 'ollama'])
    it(`${id}: one failed try, then the run goes as one system message, on every later request`, async () => {
      const openai = new OpenAI({baseURL: `${gw.base}/v1`, apiKey: gw.keys.get(id)!, maxRetries: 0})
      await takeSimCalls(gw.simOrigin, /./)
      const first = await openai.chat.completions.create({model: 'm', messages: messages('hi')})
      expect(first.choices[0].message.content).toBeTruthy()
      const tries = await takeSimCalls(gw.simOrigin, /\/chat\/completions$/)
      expect(tries.map((t) => t.messages.map((m: any) => m.role))).toEqual([
        ['system', 'system', 'user'],
        ['system', 'user'],
      ])
      expect(tries[1].messages).toEqual([MERGED, {role: 'user', content: 'hi'}])
      // a stream, the next turn: merged from the start
      const stream = await openai.chat.completions.create({
        model: 'm',
        messages: messages('go on'),
        stream: true,
      })
      for await (const _ of stream) void _
      const [next] = await takeSimCalls(gw.simOrigin, /\/chat\/completions$/)
      expect(next.messages).toEqual([MERGED, {role: 'user', content: 'go on'}])
      expect((await projectLogRows(gw.base, `sysmsg-${id}`, 2)).map((r) => [r.status, r.error])).toEqual([
        [200, NOTE],
        [200, null],
      ])
      const {adaptations} = (await (await fetch(`${gw.base}/api/adaptations`)).json()) as {adaptations: any[]}
      expect(adaptations.find((a) => a.provider === 'sim-chat' && a.model.includes(MODEL[id])).rules).toEqual(
        ['successive user, assistant or system messages sent as one message'],
      )
    })

  // a lone system message between turns (a harness's reminder passed on): no run, but the same
  // refusal; folded into the first system message, at the front
  const between = (text: string): OpenAI.Chat.ChatCompletionMessageParam[] => [
    {role: 'system', content: 'You are terse.'},
    {role: 'user', content: 'Hi'},
    {role: 'assistant', content: 'Hello.'},
    {role: 'system', content: 'From now on answer in French.'},
    {role: 'user', content: text},
  ]
  const FOLDED = [
    {role: 'system', content: 'You are terse.\n\nFrom now on answer in French.'},
    {role: 'user', content: 'Hi'},
    {role: 'assistant', content: 'Hello.'},
  ]
  for (const [id, model] of Object.entries(MODEL))
    it(`${id}: a lone system message between turns, one failed try, then folded into the first`, async () => {
      const openai = new OpenAI({baseURL: `${gw.base}/v1`, apiKey: gw.keys.get(id)!, maxRetries: 0})
      await takeSimCalls(gw.simOrigin, /./)
      const first = await openai.chat.completions.create({model: 'm', messages: between('Sky?')})
      expect(first.choices[0].message.content).toBeTruthy()
      const tries = await takeSimCalls(gw.simOrigin, /\/chat\/completions$/)
      expect(tries.map((t) => t.messages.map((m: any) => m.role))).toEqual([
        ['system', 'user', 'assistant', 'system', 'user'],
        ['system', 'user', 'assistant', 'user'],
      ])
      expect(tries[1].messages).toEqual([...FOLDED, {role: 'user', content: 'Sky?'}])
      await openai.chat.completions.create({model: 'm', messages: between('Sea?')})
      const [next] = await takeSimCalls(gw.simOrigin, /\/chat\/completions$/)
      expect(next.messages).toEqual([...FOLDED, {role: 'user', content: 'Sea?'}])
      const rows = await projectLogRows(gw.base, `sysmsg-${id}`, 4)
      expect(rows.slice(-2).map((r) => [r.status, r.error])).toEqual([
        [
          200,
          'sim-chat refused a system message after the first turn: sent again with every system message folded into the first',
        ],
        [200, null],
      ])
      const {adaptations} = (await (await fetch(`${gw.base}/api/adaptations`)).json()) as {adaptations: any[]}
      expect(adaptations.find((a) => a.provider === 'sim-chat' && a.model.includes(model)).rules).toContain(
        'system messages after the first turn folded into the first system message',
      )
    })

  it('a server that takes several system messages gets them as the client sent them', async () => {
    const openai = new OpenAI({baseURL: `${gw.base}/v1`, apiKey: gw.keys.get('plain')!, maxRetries: 0})
    await takeSimCalls(gw.simOrigin, /./)
    await openai.chat.completions.create({model: 'm', messages: messages('hi')})
    const calls = await takeSimCalls(gw.simOrigin, /\/chat\/completions$/)
    expect(calls).toHaveLength(1)
    expect(calls[0].messages).toEqual(messages('hi'))
  })
})
