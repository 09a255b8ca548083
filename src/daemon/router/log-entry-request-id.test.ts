/** The request id a log row keys on is the one the agent's history will hold. */
import {expect, it} from 'vitest'

import {logEntryFor} from './log-entry.js'
import {gatewayAnswered} from './proxy.js'

const identity = {agentId: 'a', keyPrefix: 'k', policyId: 'p', project: null}
const usage = {
  inputTokens: 3,
  outputTokens: 2,
  cacheReadTokens: 0,
  cacheCreationTokens: 0,
  reasoningTokens: 0,
}

it('Responses rows hold the response id (Codex records it), others the request-id header', () => {
  const withBodyId = {
    ...gatewayAnswered(200, '', Date.now(), 'req_header'),
    usage: {...usage, responseId: 'resp_9'},
  }
  expect(logEntryFor('responses', identity, withBodyId).requestId).toBe('resp_9')
  const headerOnly = {...gatewayAnswered(200, '', Date.now(), 'req_header'), usage}
  expect(logEntryFor('messages', identity, headerOnly).requestId).toBe('req_header')
})
