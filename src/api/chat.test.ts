import {Readable} from 'node:stream'

import {describe, expect, it} from 'vitest'

import {streamChatCompletion} from './chat.js'

/** The chunks `gwctl chat` reads from a stream of these SSE data lines. */
async function chunks(...data: unknown[]): Promise<unknown[]> {
  const sse = data.map((d) => `data: ${typeof d === 'string' ? d : JSON.stringify(d)}\n\n`).join('')
  const body = Readable.from([Buffer.from(sse)])
  const client = {stream: async () => ({body})} as unknown as Parameters<typeof streamChatCompletion>[0]
  const got: unknown[] = []
  for await (const c of streamChatCompletion(client, {
    model: 'm',
    messages: [{role: 'user', content: 'hi'}],
  } as never))
    got.push(c)
  return got
}

describe('the platform chat stream', () => {
  it('a chunk that says "error": null beside its choices is a chunk like any other (OpenAI-compatible servers send it)', async () => {
    const chunk = {
      id: 'c1',
      object: 'chat.completion.chunk',
      choices: [{index: 0, delta: {content: 'Hello'}, finish_reason: null}],
      error: null,
    }
    expect(await chunks(chunk, '[DONE]')).toHaveLength(1)
  })

  it('a chunk that is an error fails the stream with its words', async () => {
    await expect(chunks({error: {message: 'overloaded', type: 'server_error'}}, '[DONE]')).rejects.toThrow(
      'The stream failed: overloaded',
    )
  })
})
