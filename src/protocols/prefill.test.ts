import {describe, expect, it} from 'vitest'

import {UpstreamAdaptations} from '../daemon/router/adaptations.js'
import {claudeModel, prefillProblem} from '../sim/upstream/claude-models.js'
import {NO_QUIRKS} from '../sim/upstream/quirks.js'
import type {Request} from './ir.js'
import {continuationText, encodeMessagesRequest, PREFILL_NOTE} from './messages-request.js'
import {continuationBody} from './pause.js'
import {decodeClientRequest, encodeUpstreamRequest} from './translate.js'
import type {UpstreamAdaptation} from './translate.js'

const chatPrefill = {
  model: 'm',
  messages: [
    {role: 'user', content: 'Write a haiku about rain.'},
    {role: 'assistant', content: 'Soft rain on the roof'},
  ],
}

/** What a Messages upstream's `model` is sent for a client's body, and the row's notes. */
function sent(
  family: 'chat' | 'responses' | 'gemini',
  body: unknown,
  model: string,
  adapt?: UpstreamAdaptation,
) {
  const client = decodeClientRequest(family, body, {model: 'm', stream: false})
  const out = encodeUpstreamRequest(client, 'messages', model, {}, adapt)
  return {json: JSON.parse(out.body.toString()), notes: out.sent.notes, sent: out.sent}
}

/** A Messages body's turns without the cache marks the encoder adds. */
const turns = (json: any) =>
  json.messages.map((t: any) => ({
    role: t.role,
    content: t.content.map(({cache_control: _, ...b}: any) => b),
  }))

const continued = [
  {
    role: 'user',
    content: [
      {type: 'text', text: 'Write a haiku about rain.'},
      {type: 'text', text: continuationText('Soft rain on the roof')},
    ],
  },
]

describe('a prefill to a Claude model that takes none (Opus and Sonnet 4.6 on, Claude 5)', () => {
  it.each([
    'claude-opus-4-6',
    'claude-sonnet-4-6',
    'anthropic/claude-opus-4.7',
    'claude-sonnet-5',
    'claude-haiku-5-5',
  ])(
    "a chat client's last assistant text goes as a user turn asking %s to continue it, the row says so",
    (model) => {
      const {json, notes, sent: s} = sent('chat', chatPrefill, model)
      expect(turns(json)).toEqual(continued)
      expect(json.messages.at(-1).role).toBe('user')
      expect(notes).toEqual([PREFILL_NOTE])
      expect(s.prefill).toBeUndefined()
      expect(
        prefillProblem(json, claudeModel(model.replace('anthropic/', '').replace('.', '-'), NO_QUIRKS)),
      ).toBe(undefined)
    },
  )

  it('the words: the text quoted, to be continued without repeating it', () => {
    expect(continuationText('Soft rain')).toBe(
      'Your answer so far reads: «Soft rain». Continue it from exactly where it stops, without repeating any of it.',
    )
  })

  it.each(['claude-sonnet-4-5', 'claude-opus-4-1', 'corp-large'])(
    '%s takes a prefill: it goes as it came, and the request says it sent one',
    (model) => {
      const {json, notes, sent: s} = sent('chat', chatPrefill, model)
      expect(turns(json).at(-1)).toEqual({
        role: 'assistant',
        content: [{type: 'text', text: 'Soft rain on the roof'}],
      })
      expect(notes).toBeUndefined()
      expect(s.prefill).toBe(true)
    },
  )

  it('a Responses and a Gemini client the same way; a name that says nothing once its refusal was learned', () => {
    const responses = sent(
      'responses',
      {
        model: 'm',
        input: [
          {role: 'user', content: 'Write a haiku about rain.'},
          {role: 'assistant', content: [{type: 'output_text', text: 'Soft rain on the roof'}]},
        ],
      },
      'claude-opus-4-8',
    )
    expect(turns(responses.json)).toEqual(continued)
    const gemini = sent(
      'gemini',
      {
        contents: [
          {role: 'user', parts: [{text: 'Write a haiku about rain.'}]},
          {role: 'model', parts: [{text: 'Soft rain on the roof'}]},
        ],
      },
      'corp-large',
      {claude: {noPrefill: true}},
    )
    expect(turns(gemini.json)).toEqual(continued)
    expect(gemini.notes).toEqual([PREFILL_NOTE])
  })

  it('a last assistant turn with a tool call is no prefill: it goes as it came', () => {
    const request: Request = {
      model: 'm',
      system: [],
      tools: [{name: 'f', parameters: {type: 'object'}}],
      stream: false,
      messages: [
        {role: 'user', parts: [{type: 'text', text: 'go'}]},
        {
          role: 'assistant',
          parts: [
            {type: 'text', text: 'Calling.'},
            {type: 'tool_call', id: 'toolu_1', name: 'f', arguments: '{}'},
          ],
        },
      ],
    }
    const body = encodeMessagesRequest(request, 'claude-opus-4-6') as any
    expect(body.messages.at(-1).role).toBe('assistant')
    expect(body.messages.at(-1).content.map((b: any) => b.type)).toEqual(['text', 'tool_use'])
  })

  it("a paused turn's continuation after it still ends with the paused content, which the model takes", () => {
    const client = decodeClientRequest('chat', chatPrefill, {})
    const {body} = encodeUpstreamRequest(client, 'messages', 'claude-opus-4-6')
    const paused = [{type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {query: 'rain'}}]
    const again = JSON.parse(continuationBody(body, paused).toString())
    expect(again.messages.at(-2).role).toBe('user')
    expect(again.messages.at(-1)).toEqual({role: 'assistant', content: paused})
    expect(prefillProblem(again, claudeModel('claude-opus-4-6', NO_QUIRKS))).toBeUndefined()
  })
})

describe('the refusal of a prefill, learned for a name that does not say it', () => {
  const refusal = JSON.stringify({
    type: 'error',
    error: {
      type: 'invalid_request_error',
      message:
        'This model does not support assistant message prefill. The conversation must end with a user message.',
    },
  })
  const fields = ['model', 'max_tokens', 'messages']

  it('is learned only for a request that ended with an assistant message, and described', () => {
    const a = new UpstreamAdaptations()
    expect(a.learn('p', 'm', refusal, {upstream: 'messages', fields})).toBeUndefined()
    expect(a.learn('p', 'm', refusal, {upstream: 'messages', fields, prefill: true})).toBe(
      'refused a conversation ending with an assistant message (prefill): sent again with that text in a user turn asking to continue it',
    )
    expect(a.get('p', 'm')).toEqual({claude: {noPrefill: true}})
    expect(a.list()[0].rules).toEqual([
      'a last assistant message (prefill) sent as a user turn asking to continue it',
    ])
    // a chat upstream's 400 in the same words teaches nothing (no prefill rule there)
    expect(a.learn('p', 'c', refusal, {upstream: 'chat', fields, prefill: true})).toBeUndefined()
  })
})
