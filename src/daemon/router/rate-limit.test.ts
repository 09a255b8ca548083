/** How a 429 is read for its wait, and who is Codex (./rate-limit.ts). */
import {describe, expect, it} from 'vitest'

import {parseFault, quotaDetails} from '../../sim/faults.js'
import {parseRetryAfter} from '../../core/retry-after.js'
import {
  bodyWait,
  isClaudeCodeClient,
  isCodexClient,
  msWaitHeaders,
  noWaitHelps,
  waitedNote,
  waitHeaders,
} from './rate-limit.js'

/** Codex's and Claude Code's request headers, as they send them. */
const CODEX = {originator: 'codex_exec', 'user-agent': 'codex_exec/0.171.0 (Debian 12.0.0; x86_64)'}
const CLAUDE_CODE = {'user-agent': 'claude-cli/2.1.328 (external, cli)'}

/** The `retry-after` a 429 to a Messages client gets from its body and its words (none: undefined). */
const after = (text: string, words = '') => waitHeaders(text, words, {family: 'messages'})['retry-after']
/** The same said inside a 200 (a stream's first event, a JSON error alone): Codex's 2 s when none is stated. */
const saidAfter = (text: string, words: string) =>
  waitHeaders(text, words, {family: 'messages'}, true)['retry-after']

/** Google's 429 as the Gemini API answers it (free tier, per minute), cut to its details. */
const google = (
  retryDelay: unknown,
  quotaId = 'GenerateRequestsPerMinutePerProjectPerModel-FreeTier',
  message = 'You exceeded your current quota.',
) => ({
  error: {
    code: 429,
    message,
    status: 'RESOURCE_EXHAUSTED',
    details: [
      {'@type': 'type.googleapis.com/google.rpc.Help', links: [{description: 'Learn more', url: 'x'}]},
      {'@type': 'type.googleapis.com/google.rpc.QuotaFailure', violations: [{quotaId}]},
      {'@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay},
    ],
  },
})

describe('isCodexClient', () => {
  it.each([
    [{originator: 'codex_exec'}, true],
    [{originator: 'codex_cli_rs'}, true],
    [{originator: 'codex_vscode'}, true],
    [{originator: 'Codex Desktop'}, true],
    [{'user-agent': 'codex_cli_rs/0.171.0 (Mac OS 15.5.0; arm64) iTerm.app/3.5.10'}, true],
    [{'user-agent': 'OpenAI/JS 5.23.2'}, false],
    [{'user-agent': 'claude-cli/2.1.332 (external, cli)'}, false],
    [{}, false],
  ])('%j: %s', (headers, codex) => expect(isCodexClient(headers)).toBe(codex))

  it("tells Claude Code's requests by their user agent (the Agent SDK's too), not the Anthropic SDK's", () => {
    expect(isClaudeCodeClient(CLAUDE_CODE)).toBe(true)
    expect(isClaudeCodeClient({'user-agent': 'claude-cli/2.1.328 (external, sdk-cli)'})).toBe(true)
    expect(isClaudeCodeClient({'user-agent': 'Anthropic/JS 0.71.0'})).toBe(false)
    expect(isClaudeCodeClient({})).toBe(false)
  })
})

describe('parseRetryAfter, as the 429 wait reads it', () => {
  it('reads retry-after-ms first, then retry-after in seconds or as a date', () => {
    expect(parseRetryAfter({'retry-after-ms': '250', 'retry-after': '9'})).toBe(250)
    expect(parseRetryAfter({'retry-after': '1.5'})).toBe(1500)
    expect(parseRetryAfter({'retry-after': new Date(10_000).toUTCString()}, 4_000)).toBe(6_000)
    expect(parseRetryAfter({'retry-after': 'soon'})).toBeUndefined()
    expect(parseRetryAfter({})).toBeUndefined()
  })
})

describe('bodyWait', () => {
  it("reads Google's RetryInfo, in the API's shape and in its OpenAI-compatible endpoint's list", () => {
    expect(bodyWait(JSON.stringify(google('37s')))).toEqual({retryMs: 37_000})
    expect(bodyWait(JSON.stringify([google('0.5s')]))).toEqual({retryMs: 500})
    expect(bodyWait(JSON.stringify(google({seconds: 2, nanos: 500_000_000})))).toEqual({retryMs: 2500})
  })

  it('a daily quota, or OpenAI insufficient_quota, is a long wait whatever the delay', () => {
    expect(
      bodyWait(JSON.stringify(google('20s', 'GenerateRequestsPerDayPerProjectPerModel-FreeTier'))),
    ).toEqual({retryMs: 20_000, long: true})
    const openai = {
      error: {
        message: 'You exceeded your current quota',
        type: 'insufficient_quota',
        code: 'insufficient_quota',
      },
    }
    expect(bodyWait(JSON.stringify(openai))).toEqual({long: true})
  })

  it('says nothing of other bodies', () => {
    expect(bodyWait('{"error":{"message":"Rate limit reached","type":"rate_limit_error"}}')).toBeUndefined()
    expect(bodyWait('<html>google.rpc.RetryInfo</html>')).toBeUndefined()
    expect(after('{"error":{"message":"slow down"}}')).toBeUndefined()
  })

  it('takes the longer wait of RetryInfo and the words, as Google cuts RetryInfo to whole seconds (python-genai #2114)', () => {
    const words = (said: string) => `You exceeded your current quota.\nPlease retry in ${said}.`
    const perMinute = 'GenerateRequestsPerMinutePerProjectPerModel-FreeTier'
    const real = JSON.stringify(google('58s', perMinute, words('58.934310785s')))
    expect(bodyWait(real)).toEqual({retryMs: 58_935})
    expect(after(real)).toBe('59')
    // (words that say less than RetryInfo: RetryInfo's)
    expect(after(JSON.stringify(google('40s', perMinute, words('37.5s'))))).toBe('40')
    // a 429 said inside a 200: its body and its words, the longer, rounded up
    expect(saidAfter(JSON.stringify(google('58s')), words('58.934310785s'))).toBe('59')
    expect(saidAfter(JSON.stringify(google('58s')), 'Quota exceeded.')).toBe('58')
    expect(saidAfter('', words('37.5s'))).toBe('38')
  })

  it('a RetryInfo past 5 minutes that is no daily quota: x-should-retry: false, no retry-after; to a Gemini client its RetryInfo as it is', () => {
    const hour = JSON.stringify(google('3600s'))
    expect(waitHeaders(hour, '', {family: 'messages'})).toEqual({'x-should-retry': 'false'})
    expect(waitHeaders(hour, 'Quota exceeded.', {family: 'chat', headers: CODEX}, true)).toEqual({
      'x-should-retry': 'false',
    })
    // (Gemini CLI reads RetryInfo, and ends the turn on one past 5 minutes itself)
    expect(waitHeaders(hour, '', {family: 'gemini'})).toEqual({'retry-after': '3600'})
    expect(waitHeaders(JSON.stringify(google('301s')), '', {family: 'chat'})).toEqual({
      'x-should-retry': 'false',
    })
  })

  it('a wait past a minute up to 5: retry-after to a client that waits it, nothing to Codex and Claude Code, never x-should-retry', () => {
    const minute = JSON.stringify(google('60s'))
    expect(waitHeaders(minute, '', {family: 'responses', headers: CODEX})).toEqual({'retry-after': '60'})
    const five = JSON.stringify(google('300s'))
    expect(waitHeaders(five, '', {family: 'chat', headers: {'user-agent': 'OpenAI/JS 6.49.0'}})).toEqual({
      'retry-after': '300',
    })
    // (no client known: as any other client's)
    expect(waitHeaders(five, '', {family: 'messages'})).toEqual({'retry-after': '300'})
    expect(waitHeaders(five, '', {family: 'responses', headers: CODEX})).toEqual({})
    expect(waitHeaders(five, '', {family: 'messages', headers: CLAUDE_CODE})).toEqual({})
    // (the words' longer wait decides: RetryInfo's "58s" beside "Please retry in 61.2s.")
    expect(
      waitHeaders(JSON.stringify(google('58s')), 'Please retry in 61.2s.', {family: 'messages'}),
    ).toEqual({'retry-after': '62'})
    expect(waitHeaders('', 'Please try again in 1m5s.', {family: 'messages', headers: CLAUDE_CODE})).toEqual(
      {},
    )
  })

  it('retry-after-ms alone: as retry-after up to a minute; past 5 minutes x-should-retry: false, past a minute nothing to Codex', () => {
    const ms = (value: string) => ({'retry-after-ms': value})
    expect(msWaitHeaders(ms('1500'), {family: 'messages', headers: CLAUDE_CODE})).toEqual({
      'retry-after': '2',
    })
    expect(msWaitHeaders(ms('90000'), {family: 'chat'})).toEqual({'retry-after': '90'})
    expect(msWaitHeaders(ms('90000'), {family: 'responses', headers: CODEX})).toEqual({})
    expect(msWaitHeaders(ms('3600000'), {family: 'chat'})).toEqual({'x-should-retry': 'false'})
    expect(msWaitHeaders(ms('3600000'), {family: 'gemini'})).toEqual({'retry-after': '3600'})
    // (the upstream's own retry-after stays; no number, nothing)
    expect(msWaitHeaders({...ms('3600000'), 'retry-after': '3600'}, {family: 'chat'})).toEqual({})
    expect(msWaitHeaders(ms('soon'), {family: 'chat'})).toEqual({})
  })

  it('gives retry-after in whole seconds, rounded up', () => {
    expect(after(JSON.stringify(google('37.2s')))).toBe('38')
    // a spent daily quota: none, whatever its retryDelay
    expect(
      after(JSON.stringify(google('20s', 'GenerateRequestsPerDayPerProjectPerModel-FreeTier'))),
    ).toBeUndefined()
  })
})

describe('the simulator answers Google quota details for a fault that asks', () => {
  it('per minute with its delay; per day; none without either key', () => {
    const [quota, retry] = quotaDetails(parseFault('status=429,retry-delay=37s'))!
    expect(quota).toMatchObject({
      violations: [{quotaId: 'GenerateRequestsPerMinutePerProjectPerModel-FreeTier'}],
    })
    expect(retry).toEqual({'@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '37s'})
    expect(quotaDetails(parseFault('status=429,per-day'))).toHaveLength(1)
    expect(quotaDetails(parseFault('status=429,retry-after=1'))).toBeUndefined()
    expect(() => parseFault('status=429,retry-delay=37')).toThrow(/duration such as 37s/)
  })
})

describe('waitedNote', () => {
  it('says the waits of one request on its row', () => {
    expect(waitedNote('gemini', 2000, 1)).toBe('gemini waited 2s for a 429 (Codex does not retry one)')
    expect(waitedNote('gemini', 6000, 2)).toBe('gemini waited 6s for 2 429s (Codex does not retry one)')
    expect(waitedNote('gemini', 37_400, 1)).toBe('gemini waited 37s for a 429 (Codex does not retry one)')
  })
})

/** Groq's per-day 429 as it words it (its OpenAI-compatible body's message). */
const GROQ_TPD =
  'Rate limit reached for model `llama-3.3-70b-versatile` in organization `org_x` service tier `on_demand` on tokens per day (TPD): Limit 100000, Used 99763, Requested 1204. Please try again in 13m55.2s. Need more tokens? Upgrade to Dev Tier today at https://console.groq.com/settings/billing'

describe("the wait a 429's words state (waitHeaders)", () => {
  it("reads OpenAI's and Google's stated waits as whole seconds, rounded up", () => {
    expect(after('', 'Rate limit reached for requests. Please try again in 1s.')).toBe('1')
    expect(after('', 'Limit 30000, Used 29950. Please try again in 1.054s. Visit …')).toBe('2')
    expect(after('', 'Please try again in 20ms.')).toBe('1')
    expect(after('', 'Quota exceeded for metric … Please retry in 37.5s.')).toBe('38')
    expect(after('', 'Rate limit exceeded')).toBeUndefined()
  })
  it('reads a minute alone and spelled units; to Codex a wait past a minute is none (it waits any, 5 times)', () => {
    expect(after('', 'Please try again in 1m.')).toBe('60')
    expect(after('', 'Please try again in 6 seconds.')).toBe('6')
    expect(after('', 'Please retry in 0 minutes 30 seconds')).toBe('30')
    expect(after('', 'Please try again in 1m0.5s.')).toBe('61')
    // (small60 sent these: 836 s held Codex 70 minutes)
    const codex = (words: string) => waitHeaders('', words, {family: 'responses', headers: CODEX})
    expect(codex('Please try again in 1m0.5s.')).toEqual({})
    expect(codex('Please try again in 7m12s.')).toEqual({'x-should-retry': 'false'})
    expect(codex(GROQ_TPD)).toEqual({'x-should-retry': 'false'})
    expect(codex('Please try again in 1000000000000000000000000s.')).toEqual({'x-should-retry': 'false'})
    expect(codex('Please try again in moments')).toEqual({})
  })
})

describe('a daily limit in words (OpenAI, Groq: "per day (TPD)", "(RPD)")', () => {
  it('is one no wait helps, in a body or in words alone; a per-minute one is not', () => {
    const body = JSON.stringify({error: {message: GROQ_TPD, type: 'tokens', code: 'rate_limit_exceeded'}})
    expect(noWaitHelps(429, body)).toBe(true)
    expect(noWaitHelps(429, GROQ_TPD)).toBe(true)
    expect(
      noWaitHelps(429, 'Rate limit reached for gpt-4o on requests per day (RPD): Limit 200, Used 200.'),
    ).toBe(true)
    expect(noWaitHelps(429, 'Limit reached (RPD). Please try again in 2s.')).toBe(true)
    expect(noWaitHelps(429, GROQ_TPD.replace('tokens per day (TPD)', 'tokens per minute (TPM)'))).toBe(false)
    expect(noWaitHelps(500, body)).toBe(false)
  })

  it('a 429 said inside a 200 whose words state a wait past 5 minutes gets no retry-after, not the 2 s', () => {
    expect(saidAfter('', 'Please try again in 7m12s.')).toBeUndefined()
    expect(saidAfter('', 'Please try again in 59.2s.')).toBe('60')
    expect(saidAfter('', 'Too many requests')).toBe('2')
  })
})
