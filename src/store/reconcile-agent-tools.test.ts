/**
 * OpenCode and Qwen Code come in through the entrances of the other tools (messages, chat): the
 * gateway's rows go to their agent's tool (`agentTools`, from the state), their history rows hold
 * no id the gateway logs and are matched by tool, model and time.
 */
import {mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {afterEach, beforeEach, expect, it} from 'vitest'

import {tempHome} from '../../test/helpers/cli.js'
import {scanHistory} from '../agent-tools/history/scan.js'
import {HistoryStore} from './history-store.js'
import type {LogEntry} from './log-store.js'
import {LogStore} from './log-store.js'
import {reconcile, timeMatchedHistoryKeys} from './reconcile-query.js'
import {usageGroups} from './usage-query.js'

const FIXTURE = join(import.meta.dirname, '..', '..', 'test', 'fixtures', 'agents', 'qwen-code-0.24.4.jsonl')

const entry = (o: Partial<LogEntry>): LogEntry => ({
  time: Date.parse('2026-11-26T01:10:41.000Z'),
  agentId: 'agt_qwen',
  keyPrefix: 'gwk_1',
  policyId: 'default',
  entrance: 'chat',
  requestedModel: null,
  provider: 'sim',
  model: 'gw-model',
  status: 200,
  fallback: false,
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheCreationTokens: 0,
  reasoningTokens: 0,
  latencyMs: 1,
  ttfbMs: 1,
  error: null,
  project: null,
  ...o,
})

let home: {home: string; cleanup: () => void}
let logs: LogStore
let history: HistoryStore
beforeEach(async () => {
  home = tempHome()
  const db = join(home.home, 'logs.db')
  logs = await LogStore.open(db)
  history = await HistoryStore.open(db)
  const user = join(home.home, 'user-home')
  const chats = join(user, '.qwen', 'projects', '-work-proj', 'chats')
  mkdirSync(chats, {recursive: true})
  writeFileSync(join(chats, 'aa50bbef-a853-4286-9fd4-1497cf250027.jsonl'), readFileSync(FIXTURE))
  await scanHistory(history, {env: {HOME: user}})
  // the two calls of the fixture as the gateway logged them (prompt tokens include cache reads),
  // with the chat answer's x-request-id, not its body id
  logs.append(
    entry({
      time: Date.parse('2026-11-26T01:10:40.300Z'),
      requestId: 'req_1',
      inputTokens: 8070,
      outputTokens: 85,
    }),
  )
  logs.append(entry({requestId: 'req_2', inputTokens: 8099, outputTokens: 16, cacheReadTokens: 8070}))
  // a Claude Code request through the same gateway
  logs.append(
    entry({agentId: 'agt_claude', entrance: 'messages', requestId: 'req_C', inputTokens: 9, outputTokens: 1}),
  )
  logs.flush()
})
afterEach(() => {
  logs.close()
  history.close()
  home.cleanup()
})

const agentTools = {agt_qwen: 'qwen-code', agt_claude: 'claude-code'} as const

it('matches Qwen Code requests by model and time, with the tool of their agent', () => {
  const rec = reconcile(history.db, {sinceMs: 0, tool: 'qwen-code', agentTools})
  expect(rec.days).toEqual([
    expect.objectContaining({
      tool: 'qwen-code',
      matched: 2,
      matchedByTime: 2,
      onlyHistory: 0,
      onlyGateway: 0,
      differing: 0,
    }),
  ])
  expect(rec.differences).toEqual([])
  // without the state's agents a chat row has no tool: nothing to match the history with
  const blind = reconcile(history.db, {sinceMs: 0, tool: 'qwen-code'})
  expect(blind.days[0]).toMatchObject({matched: 0, onlyHistory: 2})
  expect(timeMatchedHistoryKeys(history.db, {agentTools})).toHaveLength(2)
})

it('usage --source all counts each Qwen Code request once, under its tool', () => {
  const keys = timeMatchedHistoryKeys(history.db, {agentTools})
  const byTool = usageGroups(history.db, {source: 'all', pivot: 'tool'}, keys, {agentTools}).map((g) => [
    g.key,
    g.requests,
  ])
  expect(byTool).toEqual(
    expect.arrayContaining([
      ['qwen-code', 2],
      ['claude-code', 1],
    ]),
  )
  expect(byTool).toHaveLength(2)
})
