/**
 * A prompt past the window in the words of DashScope ("Range of input length should be [1, W]"),
 * LM Studio ("Trying to keep the first P tokens when context the overflows ... context length of
 * only W tokens"), MiniMax ("invalid params, context window exceeds limit (2013)"), vLLM's engine
 * ("The decoder prompt (length P) is longer than the maximum model length of W") and Xinference
 * (the same, as a 500), LM Studio's MLX engine ("Context size has been exceeded.", a 500), Cerebras ("Current length is P while limit is W"): Claude Code gets "prompt is too long" (with both numbers where they are
 * stated) and compacts, Codex `context_length_exceeded`, a chat client passed through OpenAI's
 * words; the window stated is kept. The real daemon, the simulator's `*-context` quirks, the
 * official SDKs.
 */
import Anthropic from '@anthropic-ai/sdk'
import {createOpenAICompatible} from '@ai-sdk/openai-compatible'
import {streamText} from 'ai'
import OpenAI from 'openai'
import {describe, expect, it} from 'vitest'

import {projectLogRows, takeSimCalls, translatedRoutes} from './helpers/gateway.js'
import {claudeCodeReads} from './helpers/claude-code.js'

const MODELS = {
  dashscope: 'qwen3-coder-plus+dashscope-context',
  lmstudio: 'qwen/qwen3-coder-30b+lmstudio-context+context-4k',
  minimax: 'MiniMax-M2.7+minimax-context',
  vllm: 'Qwen/Qwen3-Coder-30B-A3B-Instruct+vllm-context',
  xinference: 'qwen3-coder+xinference-context',
  lmstudiomlx: 'qwen/qwen3-coder-next-mlx+lmstudio-mlx-context',
  cerebras: 'gpt-oss-120b+cerebras-context',
}

const LM_STREAM = 'qwen/qwen3-coder-30b+lmstudio-fit-context+stream-errors+context-4k'

// (each policy's chat route passes a chat client through; its messages and responses routes translate)
const gw = translatedRoutes(
  {
    ...Object.fromEntries(Object.entries(MODELS).map(([id, model]) => [id, ['sim-chat', model]])),
    // Claude Code passed through to MiniMax's Anthropic endpoint
    minimaxsame: ['sim-messages', 'MiniMax-M2.7+minimax-context'],
    // LM Studio 0.4.21 refusing a streamed request: a 200 stream of one error event
    lmstream: ['sim-chat', LM_STREAM],
  },
  {prefix: 'ctxw', families: ['messages', 'responses', 'chat']},
)

// about 11 000 of the simulator's tokens: past each window on its own
const LONG = Array.from({length: 2200}, (_, i) => `line ${i} of a long tool output`).join('\n')

async function refusal<T>(promise: Promise<T>): Promise<{status: number; message: string; error?: any}> {
  return promise.then(
    () => {
      throw new Error('expected a refusal')
    },
    (error: any) => ({status: error.status, message: error.message, error: error.error}),
  )
}

/** Claude Code's turn with LONG in it (its refusal, read). */
const claudeCode = (id: string) =>
  refusal(
    new Anthropic({baseURL: gw.base, apiKey: gw.keys.get(id)!, maxRetries: 0}).messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 1024,
      messages: [{role: 'user', content: LONG}],
    }),
  )

describe(
  "a prompt past the window in DashScope's, LM Studio's, MiniMax's and vLLM's words",
  {timeout: 60_000},
  () => {
    it('Claude Code translated: "prompt is too long", the counts where the upstream states them, the words after', async () => {
      await takeSimCalls(gw.simOrigin, /./)
      const said: Record<string, {message: string; read?: {actual: number; limit: number}}> = {}
      for (const id of Object.keys(MODELS)) {
        const refused = await claudeCode(id)
        expect([id, refused.status, refused.error.error.type]).toEqual([id, 400, 'invalid_request_error'])
        expect(refused.error.error.message, id).toMatch(/^prompt is too long: /)
        said[id] = {message: refused.error.error.message, read: claudeCodeReads(refused.error.error.message)}
      }
      // DashScope and MiniMax state no prompt count: Claude Code compacts on the words alone
      expect(said.dashscope.read).toBeUndefined()
      expect(said.dashscope.message).toContain(
        'upstream answered 400: <400> InternalError.Algo.InvalidParameter: Range of input length should be [1, 8192]',
      )
      expect(said.minimax.read).toBeUndefined()
      expect(said.minimax.message).toContain('invalid params, context window exceeds limit (2013)')
      // LM Studio's MLX engine: a 500 without counts, said as the 400 it is
      expect(said.lmstudiomlx.read).toBeUndefined()
      expect(said.lmstudiomlx.message).toBe(
        'prompt is too long: sim-chat (chat, translated): upstream answered 500: Context size has been exceeded.',
      )
      // LM Studio, vLLM, Xinference state both
      expect(said.lmstudio.read?.limit).toBe(4096)
      expect(said.vllm.read?.limit).toBe(8192)
      expect(said.xinference.read?.limit).toBe(8192)
      // (and Cerebras, its body unwrapped)
      expect(said.cerebras.read?.limit).toBe(8192)
      expect(said.cerebras.message).toContain('Current length is')
      for (const id of ['lmstudio', 'vllm', 'xinference', 'cerebras'])
        expect(said[id].read!.actual).toBeGreaterThan(8192)
      // Xinference's 500, said as the 400 it is; a refusal, not a failure: each request went once
      expect(said.xinference.message).toContain('upstream answered 500: ')
      expect(await takeSimCalls(gw.simOrigin, /\/chat\/completions$/)).toHaveLength(7)
      const [row] = await projectLogRows(gw.base, 'ctxw-xinference', 1)
      expect(row.status).toBe(400)
      expect(row.error).toContain('The decoder prompt (length')
    })

    it('Codex translated: context_length_exceeded, with the window where stated', async () => {
      for (const [id, window] of [
        ['dashscope', '8192 tokens'],
        ['minimax', undefined],
        ['xinference', '8192 tokens; this request has'],
        ['lmstudiomlx', undefined],
        ['cerebras', '8192 tokens; this request has'],
      ] as const) {
        const openai = new OpenAI({baseURL: `${gw.base}/v1`, apiKey: gw.keys.get(id)!, maxRetries: 0})
        const refused = await refusal(
          openai.responses.create({
            model: 'gpt-5-codex',
            store: false,
            input: [{role: 'user', content: LONG}],
          }),
        )
        expect([id, refused.status]).toEqual([id, 400])
        expect(refused.error).toMatchObject({code: 'context_length_exceeded'})
        expect(refused.error.message).toMatch(
          window
            ? new RegExp(`^Your input exceeds the context window of this model \\(${window}`)
            : /^Your input exceeds the context window of this model\. /,
        )
      }
    })

    it("a chat client passed through: DashScope's and Xinference's words in OpenAI's, with its code", async () => {
      for (const id of ['dashscope', 'xinference', 'lmstudio', 'lmstudiomlx']) {
        const openai = new OpenAI({baseURL: `${gw.base}/v1`, apiKey: gw.keys.get(id)!, maxRetries: 0})
        const refused = await refusal(
          openai.chat.completions.create({model: 'qwen3-coder', messages: [{role: 'user', content: LONG}]}),
        )
        expect([id, refused.status, refused.error.code]).toEqual([id, 400, 'context_length_exceeded'])
        expect(refused.error.message).toMatch(/^This model's maximum context length /)
      }
    })

    it("Claude Code passed through to MiniMax's Anthropic endpoint: the same words", async () => {
      await takeSimCalls(gw.simOrigin, /./)
      const refused = await claudeCode('minimaxsame')
      expect(refused.status).toBe(400)
      expect(refused.error.error.message).toBe(
        'prompt is too long: sim-messages: upstream answered 400: invalid params, context window exceeds limit (2013)',
      )
      expect(await takeSimCalls(gw.simOrigin, /\/v1\/messages$/)).toHaveLength(1)
    })

    it("LM Studio's overflow inside a 200 stream: Claude Code and Codex streaming get a 400 in their words, the window is kept", async () => {
      await takeSimCalls(gw.simOrigin, /./)
      const anthropic = new Anthropic({baseURL: gw.base, apiKey: gw.keys.get('lmstream')!, maxRetries: 0})
      const claude = await refusal(
        anthropic.messages
          .stream({model: 'claude-sonnet-4-5', max_tokens: 1024, messages: [{role: 'user', content: LONG}]})
          .finalMessage(),
      )
      // nothing of the stream had gone out: the 400 an error answer would have been, both counts
      // in it as Claude Code's reactive compaction reads them
      expect([claude.status, claude.error.error.type]).toEqual([400, 'invalid_request_error'])
      expect(claude.error.error.message).toMatch(
        /^prompt is too long: \d+ tokens > 4096 maximum \(Input does not fit/,
      )
      expect(claudeCodeReads(claude.error.error.message)?.limit).toBe(4096)
      const codex = await refusal(
        new OpenAI({
          baseURL: `${gw.base}/v1`,
          apiKey: gw.keys.get('lmstream')!,
          maxRetries: 0,
        }).responses.create({
          model: 'gpt-5-codex',
          stream: true,
          store: false,
          input: [{role: 'user', content: LONG}],
        }),
      )
      expect(codex.status).toBe(400)
      expect(codex.error).toMatchObject({code: 'context_length_exceeded'})
      expect(codex.error.message).toMatch(
        /^Your input exceeds the context window of this model \(4096 tokens; this request has \d+\)/,
      )
      // each request went once; the row says what happened; the window is kept
      expect(await takeSimCalls(gw.simOrigin, /\/chat\/completions$/)).toHaveLength(2)
      const [row] = await projectLogRows(gw.base, 'ctxw-lmstream', 1)
      expect(row.status).toBe(400)
      expect(row.error).toContain('Input does not fit in context length.')
      const {adaptations} = (await (await fetch(`${gw.base}/api/adaptations`)).json()) as {adaptations: any[]}
      expect(
        adaptations.find((a) => a.provider === 'sim-chat' && a.model === LM_STREAM)?.window?.tokens,
      ).toBe(4096)
    })

    it("LM Studio's overflow inside a 200 stream, a chat client passed through: OpenAI's words and code in the stream's error event", async () => {
      await takeSimCalls(gw.simOrigin, /./)
      // Qwen Code's SDK: the stream's error event thrown as an API error
      const openai = new OpenAI({baseURL: `${gw.base}/v1`, apiKey: gw.keys.get('lmstream')!, maxRetries: 0})
      const refused = await refusal(
        (async () => {
          const stream = await openai.chat.completions.create({
            model: 'qwen3-coder',
            stream: true,
            messages: [{role: 'user', content: LONG}],
          })
          for await (const _ of stream);
        })(),
      )
      expect(refused.error).toMatchObject({code: 'context_length_exceeded', type: 'invalid_request_error'})
      expect(refused.error.message).toMatch(
        /^This model's maximum context length is 4096 tokens\. However, your messages resulted in \d+ tokens\. .*\(Input does not fit in context length\./,
      )
      // OpenCode's (the AI SDK's) error part: the same error, whose words its overflow test matches
      const errors: unknown[] = []
      const result = streamText({
        model: createOpenAICompatible({
          name: 'lm',
          baseURL: `${gw.base}/v1`,
          apiKey: gw.keys.get('lmstream')!,
        }).chatModel('qwen3-coder'),
        maxRetries: 0,
        prompt: LONG,
        onError: ({error}) => {
          errors.push(error)
        },
      })
      for await (const _ of result.fullStream);
      expect(errors).toEqual([
        expect.objectContaining({
          code: 'context_length_exceeded',
          message: expect.stringMatching(/^This model's maximum context length is 4096 tokens/),
        }),
      ])
      // the row keeps LM Studio's words
      const [row] = await projectLogRows(gw.base, 'ctxw-lmstream', 1)
      expect(row.error).toContain('Input does not fit in context length.')
    })

    it('the window each refusal stated is kept (none where none is stated)', async () => {
      const {adaptations} = (await (await fetch(`${gw.base}/api/adaptations`)).json()) as {adaptations: any[]}
      const window = (model: string) =>
        adaptations.find((a) => a.provider === 'sim-chat' && a.model === model)?.window?.tokens
      expect(window(MODELS.dashscope)).toBe(8192)
      expect(window(MODELS.lmstudio)).toBe(4096)
      expect(window(MODELS.vllm)).toBe(8192)
      expect(window(MODELS.xinference)).toBe(8192)
      expect(window(MODELS.minimax)).toBeUndefined()
      expect(window(MODELS.lmstudiomlx)).toBeUndefined()
      expect(window(MODELS.cerebras)).toBe(8192)
    })
  },
)
