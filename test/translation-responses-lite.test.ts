/**
 * Codex's "Responses Lite" (0.144+, on a model of its own catalog marked `use_responses_lite`: the
 * gpt-5.6 and gpt-6 ones, its defaults): no `tools`, its tools in an `additional_tools` input
 * item, each in a namespace (`functions` holds `exec`, a custom tool). Through translation the
 * upstream gets them as functions, the model's call of one comes back to Codex under the tool's
 * own name with its namespace, and the second turn goes with the call and its output. The real
 * daemon, the simulator's chat, Messages and Gemini upstreams, the official OpenAI SDK.
 */
import OpenAI from 'openai'
import {describe, expect, it} from 'vitest'

import {codexLiteTools} from './helpers/codex.js'
import {projectLogRows, takeSimCalls, translatedRoutes} from './helpers/gateway.js'

const gw = translatedRoutes(
  {
    chat: ['sim-chat', 'gpt-4o'],
    messages: ['sim-messages', 'claude-sonnet-4-5'],
    gemini: ['sim-gemini', 'gemini-2.5-flash'],
  },
  {prefix: 'lite', families: ['responses']},
)

/** Codex 0.171.0's item on gpt-6.2-sol, as captured (fewer tools, descriptions cut). */
const ADDITIONAL = codexLiteTools()
const NAMES = ['functions__exec', 'functions__wait', 'clock__sleep']

/** The names of the functions an upstream request of `family` offered. */
function offered(family: string, body: Record<string, any>): string[] {
  if (family === 'chat') return (body.tools ?? []).map((t: any) => t.function.name)
  if (family === 'messages') return (body.tools ?? []).map((t: any) => t.name)
  return (body.tools ?? []).flatMap((t: any) => (t.functionDeclarations ?? []).map((d: any) => d.name))
}

const MODEL_CALL = /\/chat\/completions$|\/v1\/messages$|:(?:streamGenerateContent|generateContent)$/

describe("Codex's Responses Lite tools through translation", {timeout: 60_000}, () => {
  it.each(['chat', 'messages', 'gemini'])(
    'reach a %s upstream; the call of exec comes back in the functions namespace, and its second turn goes',
    async (family) => {
      const openai = new OpenAI({baseURL: `${gw.base}/v1`, apiKey: gw.keys.get(family)!, maxRetries: 0})
      const input: unknown[] = [
        ADDITIONAL,
        {type: 'message', role: 'developer', content: [{type: 'input_text', text: 'You are Codex.'}]},
        {type: 'message', role: 'user', content: [{type: 'input_text', text: 'use a tool'}]},
      ]
      const request = {
        model: 'gpt-6.2-sol',
        tool_choice: 'auto' as const,
        parallel_tool_calls: false,
        store: false,
        include: ['reasoning.encrypted_content' as const],
      }
      await takeSimCalls(gw.simOrigin, MODEL_CALL)
      const first = await openai.responses
        .stream({...request, input: input as OpenAI.Responses.ResponseInput})
        .finalResponse()
      const [upstream1] = await takeSimCalls(gw.simOrigin, MODEL_CALL)
      expect(offered(family, upstream1)).toEqual(NAMES)
      const call = first.output.find((o) => o.type === 'custom_tool_call') as unknown as Record<
        string,
        unknown
      >
      expect(call).toMatchObject({name: 'exec', namespace: 'functions'})
      expect(typeof call.input).toBe('string')

      // Codex's next turn: the item again, the answer's items, the call's output
      const second = await openai.responses
        .stream({
          ...request,
          input: [
            ...input,
            ...first.output,
            {type: 'custom_tool_call_output', call_id: String(call.call_id), output: 'Script completed: 42'},
          ] as OpenAI.Responses.ResponseInput,
        })
        .finalResponse()
      // (the sim quotes the result as it got it: Gemini's as `{"output": ...}`)
      expect(second.output_text).toMatch(/^The tool answered: .*Script completed: 42/)
      const [upstream2] = await takeSimCalls(gw.simOrigin, MODEL_CALL)
      expect(offered(family, upstream2)).toEqual(NAMES)
      expect(JSON.stringify(upstream2)).toContain('functions__exec')
      expect((await projectLogRows(gw.base, `lite-${family}`, 2)).map((r) => [r.status, r.error])).toEqual([
        [200, null],
        [200, null],
      ])
    },
  )
})
