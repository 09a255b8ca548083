/**
 * Claude Code's Read of a screenshot gives the image back inside a `tool_result`; LM Studio's and
 * Ollama's `/v1/messages` take the same image in a user turn but refuse it there ("Only text
 * tool_result blocks are supported when tool_result.content is an array.", lmstudio #425), and
 * since the history keeps it, every later turn too. Codex's `view_image` output through a Responses
 * server that is not OpenAI's the same (Zen's 422 "Input should be a valid string", opencode
 * #48740). The gateway learns the rule from that refusal, once per provider and model: the request
 * goes again at once with the image right after the results, so the agent sees no failure, and
 * later requests go so from the first try, with the same bytes for the same history. The real
 * daemon, the simulator's `text-tool-results` quirk, the official SDKs.
 */
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {runCli} from './helpers/cli.js'
import {
  issueKeyOverApi,
  projectLogRows,
  simPolicy,
  startSimGatewayWithPolicies,
  takeSimCalls,
} from './helpers/gateway.js'

const MESSAGES_MODEL = 'qwen3-vl-8b+text-tool-results'
const RESPONSES_MODEL = 'glm-5.3-flash+text-tool-results'
const TRANSLATED_MODEL = 'gemma-4-vision+text-tool-results'

let base = ''
let home = ''
let simOrigin = ''
const keys: Record<string, string> = {}
let stop: () => Promise<void> = async () => {}

beforeAll(async () => {
  ;({base, home, simOrigin, stop} = await startSimGatewayWithPolicies([
    simPolicy('img-messages', {messages: [{provider: 'sim-messages', model: MESSAGES_MODEL}]}),
    simPolicy('img-responses', {responses: [{provider: 'sim-responses', model: RESPONSES_MODEL}]}),
    // Codex translated onto an Anthropic-compatible server (LM Studio's `/v1/messages`)
    simPolicy('img-translated', {
      responses: [{provider: 'sim-messages', model: TRANSLATED_MODEL, translate: true}],
    }),
  ]))
  keys.messages = await issueKeyOverApi(base, 'img-messages', 'claude_code', 'img-messages')
  keys.responses = await issueKeyOverApi(base, 'img-responses', 'codex', 'img-responses')
  keys.translated = await issueKeyOverApi(base, 'img-translated', 'codex', 'img-translated')
}, 120_000)

afterAll(() => stop())

const NOTE = (provider: string) =>
  `${provider} refused an image or document inside a tool result: sent again with each one right after the results, in a user turn, the result keeping its text (or "[image attached below]")`
const RULE =
  'images and documents inside tool results sent right after the results, in the user turn, the result keeping its text (refused inside them)'

const learned = async (provider: string, model: string): Promise<string[]> => {
  const {adaptations} = (await (await fetch(`${base}/api/adaptations`)).json()) as {
    adaptations: Array<{provider: string; model: string; rules: string[]}>
  }
  return adaptations.find((a) => a.provider === provider && a.model === model)?.rules ?? []
}

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='

describe(
  'Claude Code passed through to an Anthropic-compatible server that refuses an image inside a tool result',
  {timeout: 60_000},
  () => {
    const image = {type: 'image', source: {type: 'base64', media_type: 'image/png', data: PNG}}
    const read = (id: string) => ({type: 'tool_use', id, name: 'Read', input: {file_path: `/tmp/${id}.png`}})
    const TURN_1 = [
      {role: 'user', content: [{type: 'text', text: 'What is on the screenshot?'}]},
      {role: 'assistant', content: [read('toolu_01A')]},
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_01A',
            content: [image],
            cache_control: {type: 'ephemeral'},
          },
        ],
      },
    ]
    const claudeCode = (messages: unknown[]): any => ({
      model: 'claude-sonnet-4-5',
      max_tokens: 4096,
      system: [{type: 'text', text: 'You are Claude Code.', cache_control: {type: 'ephemeral'}}],
      tools: [{name: 'Read', input_schema: {type: 'object', properties: {file_path: {type: 'string'}}}}],
      messages,
    })
    const MOVED = {
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: 'toolu_01A',
          content: '[image attached below]',
          cache_control: {type: 'ephemeral'},
        },
        image,
      ],
    }
    let rewritten: unknown[] = []

    it('refused, learned, sent again at once with the image after the result: Claude Code gets its answer', async () => {
      await takeSimCalls(simOrigin, /\/v1\/messages$/)
      const client = new Anthropic({baseURL: base, apiKey: keys.messages, maxRetries: 0})
      const answer = await client.messages.create(claudeCode(TURN_1))
      expect(answer.content.some((b) => b.type === 'text')).toBe(true)
      const [refused, again, ...more] = await takeSimCalls(simOrigin, /\/v1\/messages$/)
      expect(more).toEqual([])
      expect(refused.messages).toEqual(TURN_1)
      expect(again.messages).toEqual([TURN_1[0], TURN_1[1], MOVED])
      // every other member as it was
      expect({...again, messages: undefined}).toEqual({...refused, messages: undefined})
      rewritten = again.messages
      const [row] = await projectLogRows(base, 'img-messages', 1)
      expect([row.status, row.error]).toEqual([200, NOTE('sim-messages')])
      expect(await learned('sim-messages', MESSAGES_MODEL)).toEqual([RULE])
    })

    it('the next turn goes rewritten from the first try, its history as the turn before went', async () => {
      const client = new Anthropic({baseURL: base, apiKey: keys.messages, maxRetries: 0})
      const turn2 = [
        ...TURN_1,
        {role: 'assistant', content: [read('toolu_01B')]},
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'toolu_01B',
              content: [{type: 'text', text: 'Read 1 image'}, image],
            },
            {type: 'text', text: 'Compare them.'},
          ],
        },
      ]
      const answer = await client.messages.create(claudeCode(turn2))
      expect(answer.content.some((b) => b.type === 'text')).toBe(true)
      const [sent, ...more] = await takeSimCalls(simOrigin, /\/v1\/messages$/)
      expect(more).toEqual([])
      expect(sent.messages.slice(0, 3)).toEqual(rewritten)
      expect(sent.messages[4]).toEqual({
        role: 'user',
        content: [
          {type: 'tool_result', tool_use_id: 'toolu_01B', content: [{type: 'text', text: 'Read 1 image'}]},
          image,
          {type: 'text', text: 'Compare them.'},
        ],
      })
      const [, row] = await projectLogRows(base, 'img-messages', 2)
      expect([row.status, row.error]).toEqual([200, null])
      const doctor = await runCli(['doctor', '--json'], {home})
      const check = JSON.parse(doctor.stdout).checks.find((c: {id: string}) => c.id === 'translation')
      expect(check.detail).toContain(`sim-messages ${MESSAGES_MODEL}`)
      expect(check.detail).toContain('images and documents inside tool results sent right after the results')
    })
  },
)

const inputImage = {type: 'input_image', image_url: `data:image/png;base64,${PNG}`}
const viewImage = (id: string) => ({
  type: 'function_call',
  call_id: id,
  name: 'view_image',
  arguments: JSON.stringify({path: `/tmp/${id}.png`}),
})
const user = (text: string) => ({type: 'message', role: 'user', content: [{type: 'input_text', text}]})
const codexRequest = (input: unknown[]) =>
  ({
    model: 'gpt-5.6-sol',
    instructions: 'You are Codex.',
    input,
    tools: [
      {
        type: 'function',
        name: 'view_image',
        parameters: {type: 'object', properties: {path: {type: 'string'}}, required: ['path']},
        strict: false,
      },
    ],
    tool_choice: 'auto',
    parallel_tool_calls: true,
    store: false,
  }) as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming
const CODEX_TURN_1 = [
  user('What is on the screenshot?'),
  viewImage('call_1'),
  {type: 'function_call_output', call_id: 'call_1', output: [inputImage]},
]

describe(
  "Codex passed through to a Responses server that refuses an image inside a tool call's output",
  {timeout: 60_000},
  () => {
    const MOVED = [
      CODEX_TURN_1[0],
      CODEX_TURN_1[1],
      {type: 'function_call_output', call_id: 'call_1', output: '[image attached below]'},
      {type: 'message', role: 'user', content: [inputImage]},
    ]
    let rewritten: unknown[] = []

    it("Zen's 422: learned, sent again at once with the image in a user message after the output", async () => {
      await takeSimCalls(simOrigin, /\/v1\/responses$/)
      const openai = new OpenAI({baseURL: `${base}/v1`, apiKey: keys.responses, maxRetries: 0})
      const answer = await openai.responses.create(codexRequest(CODEX_TURN_1))
      expect(answer.status).toBe('completed')
      const [refused, again, ...more] = await takeSimCalls(simOrigin, /\/v1\/responses$/)
      expect(more).toEqual([])
      expect(refused.input).toEqual(CODEX_TURN_1)
      expect(again.input).toEqual(MOVED)
      expect({...again, input: undefined}).toEqual({...refused, input: undefined})
      rewritten = again.input
      const [row] = await projectLogRows(base, 'img-responses', 1)
      expect([row.status, row.error]).toEqual([200, NOTE('sim-responses')])
      expect(await learned('sim-responses', RESPONSES_MODEL)).toEqual([RULE])
    })

    it('later turns go rewritten from the first try, their prefix the bytes of the turn before', async () => {
      const openai = new OpenAI({baseURL: `${base}/v1`, apiKey: keys.responses, maxRetries: 0})
      const turn2 = [
        ...CODEX_TURN_1,
        {type: 'message', role: 'assistant', content: [{type: 'output_text', text: 'A login form.'}]},
        user('And now?'),
      ]
      const answer = await openai.responses.create(codexRequest(turn2))
      expect(answer.status).toBe('completed')
      const [sent, ...more] = await takeSimCalls(simOrigin, /\/v1\/responses$/)
      expect(more).toEqual([])
      expect(sent.input).toEqual([...MOVED, turn2[3], turn2[4]])
      // (the prompt cache: the turn before, as it went, is where this one starts)
      expect(JSON.stringify(sent.input).startsWith(JSON.stringify(rewritten).slice(0, -1))).toBe(true)
      const [, row] = await projectLogRows(base, 'img-responses', 2)
      expect([row.status, row.error]).toEqual([200, null])
    })
  },
)

describe(
  'Codex translated onto an Anthropic-compatible server that refuses an image inside a tool result',
  {timeout: 60_000},
  () => {
    it('learned from the translated request, sent again with the image after the result; the next one from the first try', async () => {
      await takeSimCalls(simOrigin, /\/v1\/messages$/)
      const openai = new OpenAI({baseURL: `${base}/v1`, apiKey: keys.translated, maxRetries: 0})
      const answer = await openai.responses.create(codexRequest(CODEX_TURN_1))
      expect(answer.status).toBe('completed')
      const [refused, again, ...more] = await takeSimCalls(simOrigin, /\/v1\/messages$/)
      expect(more).toEqual([])
      const last = (body: Record<string, any>) => body.messages.at(-1).content
      expect(last(refused)).toEqual([
        expect.objectContaining({type: 'tool_result', content: [expect.objectContaining({type: 'image'})]}),
      ])
      expect(last(again)).toEqual([
        expect.objectContaining({type: 'tool_result', content: '[image attached below]'}),
        expect.objectContaining({type: 'image'}),
      ])
      const [row] = await projectLogRows(base, 'img-translated', 1)
      expect([row.status, row.error]).toEqual([200, NOTE('sim-messages')])

      expect((await openai.responses.create(codexRequest(CODEX_TURN_1))).status).toBe('completed')
      const later = await takeSimCalls(simOrigin, /\/v1\/messages$/)
      expect(later).toHaveLength(1)
      expect(last(later[0])).toEqual(last(again))
    })
  },
)
