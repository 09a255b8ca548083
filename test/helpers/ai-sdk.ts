/**
 * The AI SDK's OpenAI-compatible provider as a chat client of the gateway (`@ai-sdk/openai-
 * compatible` pinned as opencode and Kilo ship it), and the raw chunks of a streamed chat answer.
 */
import {createOpenAICompatible} from '@ai-sdk/openai-compatible'
import {streamText, tool} from 'ai'
import {z} from 'zod'

/** A prompt that makes the simulator call the tool {@link aiSdkTurn} offers. */
export const TOOL_PROMPT = 'Use a tool to read /tmp/notes.txt.'

/** What one turn of the AI SDK's `streamText` showed. */
export interface AiSdkTurn {
  finishReason: string | undefined
  text: string
  calls: Array<{id: string; input: unknown}>
  /** Its error parts and what the stream threw (a chunk its schema refuses, a call without an id). */
  errors: string[]
}

/**
 * One turn of the AI SDK's `streamText` through the gateway at `base` with `key`, with a
 * `read_file` tool and {@link TOOL_PROMPT} when `withTool`, else "Say hello.".
 */
export async function aiSdkTurn(base: string, key: string, withTool = false): Promise<AiSdkTurn> {
  const provider = createOpenAICompatible({name: 'gwctl', baseURL: `${base}/v1`, apiKey: key})
  const errors: string[] = []
  const result = streamText({
    model: provider.chatModel('sim-pro'),
    maxRetries: 0,
    prompt: withTool ? TOOL_PROMPT : 'Say hello.',
    ...(withTool
      ? {tools: {read_file: tool({description: 'Read a file', inputSchema: z.object({path: z.string()})})}}
      : {}),
    onError: ({error}) => {
      errors.push((error as Error).message)
    },
  })
  const turn: AiSdkTurn = {finishReason: undefined, text: '', calls: [], errors}
  try {
    for await (const part of result.fullStream)
      if (part.type === 'finish') turn.finishReason = part.finishReason
      else if (part.type === 'text-delta') turn.text += part.text
      else if (part.type === 'tool-call') turn.calls.push({id: part.toolCallId, input: part.input})
  } catch (error) {
    errors.push((error as Error).message)
  }
  return turn
}

/**
 * The chunks of one streamed chat answer with its usage, raw (as the client's SSE parser sees
 * them): `body` on top of a `sim-pro` stream of "Say hello.".
 */
export async function streamedChunks(
  base: string,
  key: string,
  body: Record<string, unknown> = {},
): Promise<Array<Record<string, any>>> {
  const response = await fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: {'content-type': 'application/json', authorization: `Bearer ${key}`},
    body: JSON.stringify({
      model: 'sim-pro',
      stream: true,
      stream_options: {include_usage: true},
      messages: [{role: 'user', content: 'Say hello.'}],
      ...body,
    }),
  })
  if (response.status !== 200) throw new Error(`the stream answered ${response.status}`)
  return (await response.text())
    .split('\n')
    .filter((line) => line.startsWith('data: {'))
    .map((line) => JSON.parse(line.slice(6)) as Record<string, any>)
}
