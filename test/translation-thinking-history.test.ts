/**
 * DeepSeek's and Kimi's Anthropic endpoints think unless told not to and refuse a history whose
 * assistant tool-call turn has no thinking block (claude-code #62995: "The `content[].thinking` in
 * the thinking mode must be passed back to the API."; cc-switch #3219: "thinking is enabled but
 * reasoning_content is missing in assistant tool call message at index N"). Such a turn comes from
 * Claude Code itself, from a turn another target answered after a fallback (whose wrapped
 * thinking gwctl takes out), or from Codex's history translated. Learned from the refusal:
 * DeepSeek's gets an empty thinking block at the head of each such turn (it checks only that one
 * is there), thinking kept on; Kimi's goes with thinking off. The real daemon, the simulator (its
 * quirk `reasoning-content-required` on the Messages endpoint), the official SDKs.
 */
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import {describe, expect, it} from 'vitest'

import {codexRequest, READ_FILE_TOOL} from './helpers/codex.js'
import {projectLogRows, takeSimCalls, translatedRoutes} from './helpers/gateway.js'

// (a policy's messages route passes to the Messages model; its responses route translates)
const gw = translatedRoutes(
  {
    deepseek: ['sim-messages', 'deepseek-v4-pro+reasoning-content-required'],
    codex: ['sim-messages', 'deepseek-v4-flash+reasoning-content-required'],
    kimi: ['sim-messages', 'kimi-k2.6+reasoning-content-required'],
  },
  {prefix: 'thinkhist', families: ['messages', 'responses']},
)

const MESSAGES = /\/v1\/messages$/
const calls = () => takeSimCalls(gw.simOrigin, MESSAGES)
const rows = (id: string, count = 1) => projectLogRows(gw.base, `thinkhist-${id}`, count)
const anthropic = (id: string) => new Anthropic({baseURL: gw.base, apiKey: gw.keys.get(id)!, maxRetries: 0})

const TOOLS = [
  {
    name: 'Bash',
    description: 'Run a command',
    input_schema: {type: 'object' as const, properties: {command: {type: 'string'}}, required: ['command']},
  },
]

/** Claude Code's next turn after a Bash call whose turn held `first` before the call. */
const afterCall = (first: any[]): any => ({
  model: 'claude-sonnet-4-5',
  max_tokens: 32000,
  thinking: {type: 'adaptive'},
  output_config: {effort: 'high'},
  tools: TOOLS,
  messages: [
    {role: 'user', content: 'List the files.'},
    {
      role: 'assistant',
      content: [...first, {type: 'tool_use', id: 'toolu_1', name: 'Bash', input: {command: 'ls'}}],
    },
    {role: 'user', content: [{type: 'tool_result', tool_use_id: 'toolu_1', content: 'a.txt'}]},
  ],
})

const EMPTY = {type: 'thinking', thinking: '', signature: ''}

describe(
  'a tool call turn without thinking to a server that wants one while thinking',
  {timeout: 60_000},
  () => {
    it("Claude Code on DeepSeek after a fallback: the other vendor's thinking taken out, the refusal learned, an empty block in its place", async () => {
      await calls()
      const client = anthropic('deepseek')
      // the turn another target answered through translation: its thinking wrapped for gwctl
      const wrapped = {type: 'thinking', thinking: 'I will list them.', signature: 'gwx1.chat.eyJyIjoiIn0'}
      const answer = await client.messages.stream(afterCall([wrapped])).finalMessage()
      expect(answer.stop_reason).toBe('end_turn')
      const sent = await calls()
      expect(sent).toHaveLength(2)
      // the wrapped block out, and with it `thinking` (Anthropic's rule for a loop without signed
      // thinking), which DeepSeek reads as on: refused, then the empty block, thinking still on
      expect(sent.map((c) => [c.thinking, c.messages[1].content.map((b: any) => b.type)])).toEqual([
        [undefined, ['tool_use']],
        [undefined, ['thinking', 'tool_use']],
      ])
      expect(sent[1].messages[1].content[0]).toEqual(EMPTY)
      expect(sent[1].output_config).toEqual({effort: 'high'})
      expect((await rows('deepseek')).map((r) => [r.status, r.error])).toEqual([
        [
          200,
          'sim-messages refused an assistant tool call turn without a thinking block: sent again with an empty one at the head of each such turn (from now on)',
        ],
      ])
      // Claude Code's own turn without a block (one it did not keep): one try from now on
      await client.messages.stream(afterCall([])).finalMessage()
      const later = await calls()
      expect(later.map((c) => c.messages[1].content)).toEqual([
        [EMPTY, {type: 'tool_use', id: 'toolu_1', name: 'Bash', input: {command: 'ls'}}],
      ])
      expect(later[0].thinking).toEqual({type: 'adaptive'})
    })

    it("Codex translated to DeepSeek's Anthropic endpoint: a call without reasoning gets the empty block, and the request keeps its thinking", async () => {
      await calls()
      const openai = new OpenAI({baseURL: `${gw.base}/v1`, apiKey: gw.keys.get('codex')!, maxRetries: 0})
      const input = [
        {role: 'user', content: 'Read /tmp/notes.txt.'},
        {
          type: 'function_call',
          call_id: 'call_1',
          name: READ_FILE_TOOL.name,
          arguments: '{"path":"/tmp/notes.txt"}',
        },
        {type: 'function_call_output', call_id: 'call_1', output: 'notes'},
      ]
      const answer = await openai.responses.create(codexRequest(input))
      expect(answer.status).toBe('completed')
      const sent = await calls()
      expect(sent).toHaveLength(2)
      const assistant = (c: any) => c.messages.find((m: any) => m.role === 'assistant').content
      expect(assistant(sent[0]).map((b: any) => b.type)).toEqual(['tool_use'])
      expect(assistant(sent[1])[0]).toEqual(EMPTY)
      // effort high: thinking on with the turn fixed (not dropped for a loop without thinking)
      expect(sent[1].thinking).toMatchObject({type: 'enabled'})
      expect((await rows('codex')).map((r) => r.status)).toEqual([200])
    })

    it("Claude Code on Kimi's Anthropic endpoint: refused in its words, sent again with thinking off", async () => {
      await calls()
      const client = anthropic('kimi')
      const answer = await client.messages.stream(afterCall([])).finalMessage()
      expect(answer.stop_reason).toBe('end_turn')
      const sent = await calls()
      expect(sent.map((c) => [c.thinking, c.output_config])).toEqual([
        [{type: 'adaptive'}, {effort: 'high'}],
        [{type: 'disabled'}, undefined],
      ])
      expect((await rows('kimi')).map((r) => [r.status, r.error])).toEqual([
        [
          200,
          'sim-messages refused thinking beside an earlier tool call turn without thinking: sent again with thinking off (a history with such a turn, from now on)',
        ],
      ])
    })
  },
)
