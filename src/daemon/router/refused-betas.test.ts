/**
 * `anthropic-beta` values a Messages upstream refused: learned from its words (Anthropic's
 * "Unexpected value(s)" naming them, as Vertex AI, Azure Foundry and relays pass it on; Bedrock's
 * "invalid beta flag", naming none), and left out of the header from then on.
 */
import {describe, expect, it} from 'vitest'

import type {SentRequest} from '../../protocols/translate.js'
import {betaValues, describeAdaptation, rewritesMessagesBody, UpstreamAdaptations} from './adaptations.js'
import {forwardHeaders, withoutLearnedBetas} from './headers.js'

/** Anthropic's error body, as relays pass it on. */
const anthropic = (message: string) =>
  JSON.stringify({type: 'error', error: {type: 'invalid_request_error', message}})
const unexpected = (...values: string[]) =>
  anthropic(
    `Unexpected value(s) ${values.map((v) => `\`${v}\``).join(', ')} for the \`anthropic-beta\` header. Please consult our documentation at docs.anthropic.com or try again without the header.`,
  )

const CLAUDE_CODE_BETAS = 'claude-code-20250219,advisor-tool-2026-03-01,interleaved-thinking-2025-05-14'
const sent = (
  betas?: string,
  fields = ['model', 'messages', 'max_tokens', 'context_management'],
): SentRequest => ({
  upstream: 'messages',
  fields,
  ...(betas === undefined ? {} : {betas}),
})

describe('a refusal of anthropic-beta values', () => {
  it('reads the values named, learns those that were sent, and says so', () => {
    const a = new UpstreamAdaptations()
    expect(a.learn('vertex', 'claude', unexpected('advisor-tool-2026-03-01'), sent(CLAUDE_CODE_BETAS))).toBe(
      'refused anthropic-beta advisor-tool-2026-03-01: sent again without it',
    )
    expect(a.get('vertex', 'claude')).toEqual({refusedBetas: ['advisor-tool-2026-03-01']})
    expect(a.list()[0].rules).toEqual(['anthropic-beta sent without advisor-tool-2026-03-01 (refused)'])
    // header only: a body passed through goes as it came, unparsed
    expect(rewritesMessagesBody(a.get('vertex', 'claude'))).toBe(false)

    // several named (Vertex's through new-api), one of them not sent: only those sent
    const b = new UpstreamAdaptations()
    const words = unexpected(
      'prompt-caching-scope-2026-01-05',
      'structured-outputs-2025-12-15',
      'other-2026-01-01',
    )
    expect(
      b.learn('relay', 'm', words, sent('prompt-caching-scope-2026-01-05,structured-outputs-2025-12-15')),
    ).toBe(
      'refused anthropic-beta prompt-caching-scope-2026-01-05, structured-outputs-2025-12-15: sent again without them',
    )
    // what was learned before is kept beside the new ones
    const known = b.get('relay', 'm')
    expect(
      b.learn('relay', 'm', unexpected('advisor-tool-2026-03-01'), {
        ...sent(CLAUDE_CODE_BETAS),
        adaptedWith: known,
      }),
    ).toBe('refused anthropic-beta advisor-tool-2026-03-01: sent again without it')
    expect(b.get('relay', 'm')?.refusedBetas).toEqual([
      'prompt-caching-scope-2026-01-05',
      'structured-outputs-2025-12-15',
      'advisor-tool-2026-03-01',
    ])
  })

  it('learns nothing of values it did not send, of a request without the header, or of other words', () => {
    const a = new UpstreamAdaptations()
    expect(a.learn('p', 'm', unexpected('other-2026-01-01'), sent(CLAUDE_CODE_BETAS))).toBeUndefined()
    expect(a.learn('p', 'm', unexpected('advisor-tool-2026-03-01'), sent())).toBeUndefined()
    expect(a.learn('p', 'm', anthropic('invalid beta flag'), sent())).toBeUndefined()
    expect(
      a.learn('p', 'm', anthropic('messages: roles must alternate'), sent(CLAUDE_CODE_BETAS)),
    ).toBeUndefined()
    // (a 5xx is no refusal of the request)
    expect(
      a.learn('p', 'm', unexpected('advisor-tool-2026-03-01'), sent(CLAUDE_CODE_BETAS), 500),
    ).toBeUndefined()
    expect(a.list()).toEqual([])
  })

  it("the words inside a relay's own wrapping, and OpenAI's shape", () => {
    const a = new UpstreamAdaptations()
    const wrapped = JSON.stringify({
      error: {
        message: `upstream error: ${unexpected('advisor-tool-2026-03-01')}`,
        type: 'upstream_error',
      },
    })
    expect(a.learn('r', 'm', wrapped, sent(CLAUDE_CODE_BETAS))).toBe(
      'refused anthropic-beta advisor-tool-2026-03-01: sent again without it',
    )
  })

  it("Bedrock's invalid beta flag (none named): the header goes no more; then the body's context_management, as before", () => {
    const a = new UpstreamAdaptations()
    const bedrock = anthropic('invalid beta flag')
    expect(a.learn('bedrock', 'claude', bedrock, sent(CLAUDE_CODE_BETAS))).toBe(
      'refused its anthropic-beta values (invalid beta flag, none named): sent again without the header',
    )
    const known = a.get('bedrock', 'claude')
    expect(known).toEqual({noBetas: true})
    // (CLIProxyAPI's form: the words alone)
    expect(new UpstreamAdaptations().learn('c', 'm', '400 "invalid beta flag"', sent('a-1'))).toBe(
      'refused its anthropic-beta values (invalid beta flag, none named): sent again without the header',
    )
    // the field its beta was for refused next: the existing rule learns it away
    expect(
      a.learn('bedrock', 'claude', anthropic('context_management: Extra inputs are not permitted'), {
        ...sent(),
        adaptedWith: known,
      }),
    ).toBe('refused context_management: sent again without it')
    expect(describeAdaptation(a.get('bedrock', 'claude')!)).toEqual([
      'sent without context_management',
      'sent without the anthropic-beta header (invalid beta flag)',
    ])
  })

  it('the values of a header', () => {
    expect(betaValues(' a-1, b-2,,c-3 ')).toEqual(['a-1', 'b-2', 'c-3'])
  })
})

describe('anthropic-beta values learned away from the header', () => {
  const provider = {name: 'vertex', family: 'messages' as const, baseUrl: 'https://relay.example/v1'}
  const claudeCode = {
    'content-type': 'application/json',
    'anthropic-version': '2023-06-01',
    'anthropic-beta': CLAUDE_CODE_BETAS,
    'x-api-key': 'gw',
  }

  it('the refused values left out, the others kept in order; the header gone when none is left', () => {
    expect(withoutLearnedBetas(CLAUDE_CODE_BETAS, {refusedBetas: ['advisor-tool-2026-03-01']})).toBe(
      'claude-code-20250219,interleaved-thinking-2025-05-14',
    )
    // nothing of it refused: the value as it came, the same string
    expect(withoutLearnedBetas('a-1, b-2', {refusedBetas: ['c-3']})).toBe('a-1, b-2')
    expect(withoutLearnedBetas('a-1', {})).toBe('a-1')
    expect(withoutLearnedBetas('a-1, b-2', {refusedBetas: ['a-1', 'b-2']})).toBeUndefined()
    expect(withoutLearnedBetas('a-1', {noBetas: true})).toBeUndefined()

    expect(
      forwardHeaders(claudeCode, provider, 'sk', 10, false, undefined, {
        refusedBetas: ['advisor-tool-2026-03-01'],
      })['anthropic-beta'],
    ).toBe('claude-code-20250219,interleaved-thinking-2025-05-14')
    expect(
      forwardHeaders(claudeCode, provider, 'sk', 10, false, undefined, {
        refusedBetas: CLAUDE_CODE_BETAS.split(','),
      }),
    ).not.toHaveProperty('anthropic-beta')
    expect(
      forwardHeaders(claudeCode, provider, 'sk', 10, false, undefined, {noBetas: true}),
    ).not.toHaveProperty('anthropic-beta')
    // a translated request's own beta (block binding's) too
    expect(
      forwardHeaders({}, provider, 'sk', 10, true, 'thinking-binding-controls-2026-08-01', {
        refusedBetas: ['thinking-binding-controls-2026-08-01'],
      }),
    ).not.toHaveProperty('anthropic-beta')
    // nothing learned of it (or something else learned): as it came
    expect(forwardHeaders(claudeCode, provider, 'sk', 10)['anthropic-beta']).toBe(CLAUDE_CODE_BETAS)
    expect(
      forwardHeaders(claudeCode, provider, 'sk', 10, false, undefined, {drop: ['thinking']})[
        'anthropic-beta'
      ],
    ).toBe(CLAUDE_CODE_BETAS)
  })
})
