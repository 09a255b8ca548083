/** The first event of a passed-through chat stream, rewritten only when it is an overflow error. */
import {describe, expect, it} from 'vitest'

import {HOLD_BYTES, overflowFirstEvent} from './stream-overflow.js'

const chunk = (text: string) => Buffer.from(text)

describe('overflowFirstEvent', () => {
  it("LM Studio's older words, after `event: error`: OpenAI's event, the window, the rest kept", () => {
    const said = overflowFirstEvent(
      chunk(
        'event: error\ndata: {"error":"Trying to keep the first 111490 tokens when context the overflows. However, the model is loaded with context length of only 32768 tokens, which is not enough."}\n\ndata: [DONE]\n\n',
      ),
    )
    expect(said?.window).toBe(32768)
    const text = String(said?.bytes)
    expect(text.endsWith('\n\ndata: [DONE]\n\n')).toBe(true)
    expect(JSON.parse(text.slice(6, text.indexOf('\n\n')))).toEqual({
      error: {
        message: expect.stringMatching(
          /^This model's maximum context length is 32768 tokens\. However, your messages resulted in 111490 tokens\./,
        ),
        type: 'invalid_request_error',
        param: null,
        code: 'context_length_exceeded',
      },
    })
  })

  it('another error, an error already in OpenAI words, an answer, an event cut: left alone', () => {
    for (const text of [
      'data: {"error":{"message":"Rate limit reached","type":"rate_limit"}}\n\n',
      'data: {"error":{"message":"too long","code":"context_length_exceeded"}}\n\n',
      'data: {"choices":[{"index":0,"delta":{"content":"context too long"}}]}\n\n',
      'event: error\ndata: {"error":"Input does not fit in context length. The input has 9 tok',
    ])
      expect([text, overflowFirstEvent(chunk(text))]).toEqual([text, undefined])
  })

  it('an error event not ended while more may come: waited for, up to HOLD_BYTES; an answer never', () => {
    const cut = 'event: error\ndata: {"error":"Input does not fit in context length. The input has 9 tok'
    expect(overflowFirstEvent(chunk(cut), false)).toBe('unended')
    expect(overflowFirstEvent(chunk('event: error\n'), false)).toBe('unended')
    expect(overflowFirstEvent(chunk(cut + 'x'.repeat(HOLD_BYTES)), false)).toBeUndefined()
    expect(
      overflowFirstEvent(chunk('data: {"choices":[{"index":0,"delta":{"content":"he'), false),
    ).toBeUndefined()
  })
})
