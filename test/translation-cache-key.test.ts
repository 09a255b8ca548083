/**
 * A Responses upstream is given a `prompt_cache_key`, the key OpenAI routes a prompt to the machine
 * that holds its cache by (without it, a translated conversation's cache hits are rare: new-api
 * #6538 measured none): Claude Code's session id, from its `metadata.user_id`, the same on every
 * turn of the session; opencode's own `prompt_cache_key` from a chat request; OpenCode's session
 * header (its Anthropic provider names the session nowhere else); and for Gemini CLI and Qwen Code,
 * which name none, a key derived from the agent and the conversation's first turn, the same on every
 * turn. A body's own key holds over a header's. And an empty text
 * part (Claude Code writes them, with a cache mark) is left out for Gemini, which refuses it. The
 * real daemon, the simulator, the official SDKs.
 */
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import {describe, expect, it} from 'vitest'

import {headerCacheKey} from '../src/protocols/cache-key.js'
import {projectLogRows, takeSimCalls, translatedRoutes} from './helpers/gateway.js'

const gw = translatedRoutes(
  {
    responses: ['sim-responses', 'sim-mini'],
    // a second agent on the same upstream: its derived keys are its own
    other: ['sim-responses', 'sim-mini'],
    gemini: ['sim-gemini', 'gemini-2.5-flash'],
  },
  {prefix: 'ck'},
)

const SESSION = '6d0f3c2e-9b1a-4c5d-8e7f-0a1b2c3d4e5f'
// Claude Code 2.1's metadata.user_id: a JSON object of ids
const USER_ID = JSON.stringify({device_id: 'a'.repeat(64), account_uuid: '', session_id: SESSION})

describe('prompt_cache_key to a Responses upstream', {timeout: 60_000}, () => {
  it('Claude Code: its session id is the key, the same on both turns of the session', async () => {
    await takeSimCalls(gw.simOrigin, /\/responses$/)
    const client = new Anthropic({baseURL: gw.base, apiKey: gw.keys.get('responses')!, maxRetries: 0})
    const first = await client.messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 256,
      metadata: {user_id: USER_ID},
      messages: [{role: 'user', content: 'hi'}],
    })
    const text = first.content.find((b) => b.type === 'text')!.text
    await client.messages
      .stream({
        model: 'claude-sonnet-4-5',
        max_tokens: 256,
        metadata: {user_id: USER_ID},
        messages: [
          {role: 'user', content: 'hi'},
          {role: 'assistant', content: text},
          {role: 'user', content: 'Say hello.'},
        ],
      })
      .finalMessage()
    const calls = await takeSimCalls(gw.simOrigin, /\/responses$/)
    expect(calls.map((c) => c.prompt_cache_key)).toEqual([SESSION, SESSION])
    // (the user id itself, about 150 characters, is more than OpenAI's `user` takes)
    expect(calls.every((c) => c.user === undefined)).toBe(true)
  })

  it("opencode: a chat request's prompt_cache_key reaches the Responses upstream", async () => {
    await takeSimCalls(gw.simOrigin, /\/responses$/)
    const client = new OpenAI({baseURL: `${gw.base}/v1`, apiKey: gw.keys.get('responses')!, maxRetries: 0})
    await client.chat.completions.create({
      model: 'gpt-5.5',
      messages: [{role: 'user', content: 'hi'}],
      prompt_cache_key: 'ses_abc',
    })
    const calls = await takeSimCalls(gw.simOrigin, /\/responses$/)
    expect(calls.map((c) => c.prompt_cache_key)).toEqual(['ses_abc'])
  })
})

describe('an empty text part to Gemini', {timeout: 60_000}, () => {
  it("Claude Code's empty text block with a cache mark is left out: answered on the first try", async () => {
    await takeSimCalls(gw.simOrigin, /generateContent$/)
    const client = new Anthropic({baseURL: gw.base, apiKey: gw.keys.get('gemini')!, maxRetries: 0})
    const answer = await client.messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 256,
      messages: [
        {role: 'user', content: 'hi'},
        {role: 'assistant', content: [{type: 'text', text: ''}]},
        {
          role: 'user',
          content: [
            {type: 'text', text: 'next'},
            {type: 'text', text: '', cache_control: {type: 'ephemeral'}},
          ],
        },
      ],
    })
    expect(answer.content.some((b) => b.type === 'text')).toBe(true)
    const calls = await takeSimCalls(gw.simOrigin, /generateContent$/)
    expect(calls).toHaveLength(1)
    expect(calls[0].contents).toEqual([{role: 'user', parts: [{text: 'hi'}, {text: 'next'}]}])
    const rows = await projectLogRows(gw.base, 'ck-gemini', 1)
    expect(rows.map((r) => [r.status, r.error])).toEqual([[200, null]])
  })
})

/** A raw POST to the gateway: the client's own headers, as the CLIs send them. */
async function post(path: string, key: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${gw.base}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-api-key': key,
      'x-goog-api-key': key,
      authorization: `Bearer ${key}`,
      'anthropic-version': '2023-06-01',
      ...headers,
    },
    body: JSON.stringify(body),
  })
  const text = await res.text()
  expect(res.status, text).toBe(200)
}

// OpenCode 1.18.33 with its anthropic provider: the session only in two headers
const OPENCODE_SESSION = 'ses_dd8e6a3aeffeTzTtOQHc3M1140'
const OPENCODE_HEADERS = {
  'user-agent': 'opencode/1.18.33 ai-sdk/provider-utils/4.0.46 runtime/bun/1.3.14',
  'x-session-affinity': OPENCODE_SESSION,
  'x-session-id': OPENCODE_SESSION,
}
const opencodeSystem = [{type: 'text', text: 'You are OpenCode, the best coding agent on the planet.'}]

// Gemini CLI 0.61: its session context, then the prompt, in the first user turn; no id anywhere
const sessionContext = (dir: string) =>
  `<session_context>\nThis is the Gemini CLI. We are setting up the context for our chat.\nToday's date is Sunday, November 29, 2026.\nMy operating system is: linux\n- **Workspace Directories:**\n  - ${dir}\n</session_context>`
const geminiFirst = (prompt: string, dir = '/home/u/work') => ({
  role: 'user',
  parts: [{text: sessionContext(dir)}, {text: prompt}],
})
const geminiBody = (contents: unknown[]) => ({
  systemInstruction: {
    parts: [
      {text: 'You are Gemini CLI, an autonomous CLI agent specializing in software engineering tasks.'},
    ],
  },
  contents,
  generationConfig: {temperature: 1, topP: 0.95, topK: 64},
})
const GEMINI_PATH = '/v1beta/models/gemini-3.8-flash:generateContent'
const GEMINI_HEADERS = {'user-agent': 'GeminiCLI-tui/0.61.0/gemini-3.1-pro-preview (linux; x64; terminal)'}

// Qwen Code 0.24: reminders, then the prompt, in the first user turn; no id anywhere
const qwenBody = (messages: unknown[]) => ({
  model: 'qwen3-coder-plus',
  messages: [
    {role: 'system', content: 'You are Qwen Code, a non-interactive CLI agent developed by Alibaba Group.'},
    ...messages,
  ],
  max_tokens: 256,
})
const qwenFirst = (prompt: string) => ({
  role: 'user',
  content: [
    {
      type: 'text',
      text: '<system-reminder>\nThis is the Qwen Code. We are setting up the context for our chat.\n</system-reminder>',
    },
    {type: 'text', text: prompt},
  ],
})

const DERIVED = /^gw-[\w-]{32}$/

describe('a cache key for a client whose body names none', {timeout: 60_000}, () => {
  it('OpenCode (anthropic provider): its session header is the key on both turns', async () => {
    await takeSimCalls(gw.simOrigin, /\/responses$/)
    const key = gw.keys.get('responses')!
    const first = [{role: 'user', content: [{type: 'text', text: '"use a tool"'}]}]
    const body = {model: 'claude-sonnet-4-5', max_tokens: 256, system: opencodeSystem}
    await post('/v1/messages', key, {...body, messages: first}, OPENCODE_HEADERS)
    await post(
      '/v1/messages',
      key,
      {
        ...body,
        messages: [
          ...first,
          {role: 'assistant', content: [{type: 'text', text: 'Done.'}]},
          {role: 'user', content: [{type: 'text', text: 'again'}]},
        ],
      },
      OPENCODE_HEADERS,
    )
    // only `x-session-id` (and Codex's `session-id`) read as well
    await post('/v1/messages', key, {...body, messages: first}, {'session-id': 'thread-9'})
    const calls = await takeSimCalls(gw.simOrigin, /\/responses$/)
    // (the session's hash, never its id: review58)
    const opencodeKey = headerCacheKey({'x-session-id': OPENCODE_SESSION})
    expect(calls.map((c) => c.prompt_cache_key)).toEqual([
      opencodeKey,
      opencodeKey,
      headerCacheKey({'session-id': 'thread-9'}),
    ])
    expect(JSON.stringify(calls)).not.toContain(OPENCODE_SESSION)
  })

  it('a session header over 64 characters goes as a hash of it too', async () => {
    await takeSimCalls(gw.simOrigin, /\/responses$/)
    const body = {model: 'claude-sonnet-4-5', max_tokens: 256, messages: [{role: 'user', content: 'hi'}]}
    await post('/v1/messages', gw.keys.get('responses')!, body, {'x-session-id': 's'.repeat(100)})
    const [call] = await takeSimCalls(gw.simOrigin, /\/responses$/)
    expect(call.prompt_cache_key).toMatch(DERIVED)
  })

  it("Gemini CLI: a key derived from its first turn's context, the same on turn 2 and after a resume, another for another folder's", async () => {
    await takeSimCalls(gw.simOrigin, /\/responses$/)
    const key = gw.keys.get('responses')!
    const turn1 = geminiBody([geminiFirst('use a tool')])
    const turn2 = geminiBody([
      geminiFirst('use a tool'),
      {role: 'model', parts: [{text: 'Which tool?'}]},
      {role: 'user', parts: [{text: 'read notes.txt'}]},
    ])
    // resumed (`--resume latest`): the first turn without its prompt (audit56)
    const resumed = geminiBody([
      {role: 'user', parts: [{text: sessionContext('/home/u/work')}]},
      {role: 'model', parts: [{text: 'Done.'}]},
      {role: 'user', parts: [{text: 'go on'}]},
    ])
    await post(GEMINI_PATH, key, turn1, GEMINI_HEADERS)
    await post(GEMINI_PATH, key, turn2, GEMINI_HEADERS)
    await post(GEMINI_PATH, key, resumed, GEMINI_HEADERS)
    // the same prompt in another directory; the same conversation from another agent
    await post(GEMINI_PATH, key, geminiBody([geminiFirst('use a tool', '/home/u/other')]), GEMINI_HEADERS)
    await post(GEMINI_PATH, gw.keys.get('other')!, turn2, GEMINI_HEADERS)
    const got = (await takeSimCalls(gw.simOrigin, /\/responses$/)).map((c) => c.prompt_cache_key as string)
    expect(got).toHaveLength(5)
    for (const k of got) expect(k).toMatch(DERIVED)
    expect(got[1]).toBe(got[0])
    expect(got[2]).toBe(got[0])
    expect(new Set(got).size).toBe(3)
    // (nothing of the text in it)
    expect(got[0]).not.toMatch(/tool|Gemini/)
  })

  it('Qwen Code: a key derived from its first turn, the same on turn 2 and after a resume moved its date reminder', async () => {
    await takeSimCalls(gw.simOrigin, /\/responses$/)
    const key = gw.keys.get('responses')!
    await post('/v1/chat/completions', key, qwenBody([qwenFirst('use a tool')]))
    await post(
      '/v1/chat/completions',
      key,
      qwenBody([
        qwenFirst('use a tool'),
        {role: 'assistant', content: 'Which tool?'},
        {role: 'user', content: 'read notes.txt'},
      ]),
    )
    // `--continue`: the date reminder of the first turn moved to the new prompt
    const first = qwenFirst('use a tool')
    const dated = {
      ...first,
      content: [
        ...first.content.slice(0, 1),
        {
          type: 'text',
          text: '<system-reminder>\nThe current date is: Sunday, November 29, 2026.\n</system-reminder>',
        },
        ...first.content.slice(1),
      ],
    }
    await post('/v1/chat/completions', key, qwenBody([dated]))
    const got = (await takeSimCalls(gw.simOrigin, /\/responses$/)).map((c) => c.prompt_cache_key as string)
    expect(got).toHaveLength(3)
    expect(got[0]).toMatch(DERIVED)
    expect(got[1]).toBe(got[0])
    expect(got[2]).toBe(got[0])
  })

  it("a body's own key holds over the headers' session", async () => {
    await takeSimCalls(gw.simOrigin, /\/responses$/)
    const key = gw.keys.get('responses')!
    await post(
      '/v1/chat/completions',
      key,
      {model: 'gpt-5.5', messages: [{role: 'user', content: 'hi'}], prompt_cache_key: 'ses_body'},
      {'x-session-id': 'ses_header'},
    )
    await post(
      '/v1/messages',
      key,
      {
        model: 'claude-sonnet-4-5',
        max_tokens: 256,
        metadata: {user_id: USER_ID},
        messages: [{role: 'user', content: 'hi'}],
      },
      {'x-session-affinity': 'ses_header'},
    )
    const calls = await takeSimCalls(gw.simOrigin, /\/responses$/)
    expect(calls.map((c) => c.prompt_cache_key)).toEqual(['ses_body', SESSION])
  })

  it('to Gemini, which has no cache key: none added', async () => {
    await takeSimCalls(gw.simOrigin, /generateContent$/)
    await post('/v1/chat/completions', gw.keys.get('gemini')!, qwenBody([qwenFirst('use a tool')]), {
      'x-session-id': 'ses_x',
    })
    const [call] = await takeSimCalls(gw.simOrigin, /generateContent$/)
    expect(JSON.stringify(call)).not.toMatch(/ses_x|gw-|cache_key/)
  })
})
