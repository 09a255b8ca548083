/**
 * Claude Code 2.1.332's mid-conversation system messages (its date after the first turn, `# Environment`
 * after the first tool result) passed through to a Messages server that is not Anthropic's, which
 * refuses a `role: "system"` message in `messages` (DeepSeek's, vLLM's, llama.cpp's, Ollama's): each
 * goes as a `<system-reminder>` block of the user turn beside it, the system prompt the same on every
 * request, and the server's prefix cache reads the whole of request 1's prompt on request 2. Before,
 * they went to the end of the system prompt, which grew at request 2: nothing read from the cache.
 * The real daemon, the simulator's Messages endpoint with its prefix cache (`prefix-cache`), the
 * official SDK with Claude Code's User-Agent; the log row's cache read.
 */
import Anthropic from '@anthropic-ai/sdk'
import {describe, expect, it} from 'vitest'

import {
  DATE_MESSAGE as DATE,
  ENVIRONMENT_MESSAGE as ENV,
  midConversationSystem as request,
} from './helpers/claude-code.js'
import {projectLogRows, takeSimCalls, translatedRoutes} from './helpers/gateway.js'

const gw = translatedRoutes(
  {messages: ['sim-messages', 'deepseek-chat+prefix-cache']},
  {prefix: 'pp', families: ['messages']},
)

describe(
  "Claude Code's mid-conversation system messages passed through to a Messages server",
  {timeout: 60_000},
  () => {
    it("go in the user turns beside them: request 2 reads the whole of request 1's prompt from the cache", async () => {
      await takeSimCalls(gw.simOrigin, /\/messages$/)
      const client = new Anthropic({
        baseURL: gw.base,
        apiKey: gw.keys.get('messages')!,
        maxRetries: 0,
        defaultHeaders: {'user-agent': 'claude-cli/2.1.332 (external, cli)'},
      })
      await client.messages.create(request(false))
      await client.messages.create(request(true))
      const [one, two] = await takeSimCalls(gw.simOrigin, /\/messages$/)
      const rows = await projectLogRows(gw.base, 'pp-messages', 2)
      expect(two.system).toEqual(one.system)
      expect(two.messages[0]).toEqual(one.messages[0])
      expect(two.messages.map((m: {role: string}) => m.role)).toEqual(['user', 'assistant', 'user'])
      expect(two.messages[0].content.at(-1)).toEqual({
        type: 'text',
        text: `<system-reminder>\n${DATE}\n</system-reminder>`,
      })
      expect(two.messages[2].content.at(-1)).toEqual({
        type: 'text',
        text: `<system-reminder>\n${ENV}\n</system-reminder>`,
      })
      expect(rows.map((r) => r.status)).toEqual([200, 200])
      // (request 1's whole prompt, at the head of request 2)
      expect(rows[1].cacheReadTokens).toBe(rows[0].inputTokens)
    })
  },
)
