/** Codex CLI's Responses request, as the end-to-end translation tests send it. */
import type OpenAI from 'openai'
import {expect} from 'vitest'

/** The tool the requests offer. */
export const READ_FILE_TOOL = {
  type: 'function' as const,
  name: 'read_file',
  description: 'Read a file',
  parameters: {type: 'object', properties: {path: {type: 'string'}}, required: ['path']},
}

/** A Codex tool's parameters of one string `prop`, as Codex writes them. */
export const liteParams = (prop: string) => ({
  type: 'object',
  properties: {[prop]: {type: 'string'}},
  required: [prop],
  additionalProperties: false,
})

/**
 * Codex 0.171.0's `additional_tools` item on a model of its catalog marked `use_responses_lite`
 * (gpt-6.2-sol), as captured (fewer tools, descriptions and schemas cut): each tool in a
 * namespace, the first of them `exec`, a custom tool of the `functions` namespace.
 */
export const codexLiteTools = (id = 'at_1') => ({
  type: 'additional_tools',
  id,
  role: 'developer',
  tools: [
    {
      type: 'namespace',
      name: 'functions',
      description: '',
      tools: [
        {
          type: 'custom',
          name: 'exec',
          description: 'Run JavaScript code to orchestrate/compose tool calls',
          format: {type: 'grammar', syntax: 'lark', definition: 'start: /[\\s\\S]+/'},
        },
        {
          type: 'function',
          name: 'wait',
          description: 'Waits on a cell.',
          strict: false,
          parameters: liteParams('cell'),
        },
      ],
    },
    {
      type: 'namespace',
      name: 'clock',
      description: 'Tools for reading and waiting on time.',
      tools: [
        {type: 'function', name: 'sleep', description: 'Pause.', strict: false, parameters: liteParams('ms')},
      ],
    },
  ],
})

/** Codex's request: effort high, a reasoning summary, its reasoning carried back encrypted. */
export const codexRequest = (input: unknown, stream = false): any => ({
  model: 'gpt-5.5-codex',
  input,
  reasoning: {effort: 'high', summary: 'auto'},
  include: ['reasoning.encrypted_content'],
  store: false,
  stream,
  tools: [READ_FILE_TOOL],
})

/**
 * Asks a Responses client (`openai`, the official SDK) `input` streamed and not, and checks each
 * answer is a reasoning item whose summary is `reasoning`, then a message whose text matches
 * `text`: what Codex shows of a translated model's reasoning.
 */
export async function expectReasoningThenText(
  openai: OpenAI,
  input: string,
  reasoning: string,
  text: RegExp,
): Promise<void> {
  const request = {model: 'gpt-5-codex', input, store: false}
  for (const answer of [
    await openai.responses.stream(request).finalResponse(),
    await openai.responses.create(request),
  ]) {
    expect(answer.output.map((o) => o.type)).toEqual(['reasoning', 'message'])
    const item = answer.output[0] as OpenAI.Responses.ResponseReasoningItem
    expect(item.summary.map((s) => s.text).join('')).toBe(reasoning)
    expect(answer.output_text).toMatch(text)
  }
}
