/**
 * More tools than the upstream model takes: OpenAI refuses more than 128 ("Invalid 'tools': array
 * too long. Expected an array with maximum length 128, but got an array with length 140
 * instead."), Kimi too ("a max of 128 tools can be supported"), Gemini more than 512 function
 * declarations ("At most 512 function declarations can be specified."). The tool list goes with
 * every request, so every turn of the session failed. The cap is learned from the first refusal,
 * that request goes again at once with the client's first tools (and those its history calls), a
 * line in the system prompt naming the rest, and later requests go so from the start, the same
 * bytes each turn. Translated and passed through. The real daemon, the simulator's `tool-cap-128`
 * quirk, the official SDKs.
 */
import Anthropic from '@anthropic-ai/sdk'
import {GoogleGenAI} from '@google/genai'
import OpenAI from 'openai'
import {describe, expect, it} from 'vitest'

import {projectLogRows, takeSimCalls, translatedRoutes} from './helpers/gateway.js'

const gw = translatedRoutes(
  {
    // Claude Code translated to OpenAI's chat completions; a chat client passed through
    openai: ['sim-chat', 'gpt-5-mini+tool-cap-128'],
    // Gemini CLI with MCP servers translated to Responses
    responses: ['sim-responses', 'gpt-5.4+tool-cap-128'],
    // Gemini CLI passed through to Gemini
    gemini: ['sim-gemini', 'gemini-2.5-pro+tool-cap-128'],
    // Claude Code passed through to Kimi's Anthropic endpoint
    kimi: ['sim-messages', 'kimi-k2.6+tool-cap-128'],
  },
  {prefix: 'cap', families: ['messages', 'chat', 'gemini']},
)

const rows = (id: string, count = 1) => projectLogRows(gw.base, `cap-${id}`, count)
const learned = async (model: string): Promise<string[]> => {
  const {adaptations} = (await (await fetch(`${gw.base}/api/adaptations`)).json()) as {
    adaptations: Array<{model: string; rules: string[]}>
  }
  return adaptations.find((a) => a.model === model)?.rules ?? []
}
const RULE =
  "at most 128 tools (its stated limit): the client's first 128 sent, and those its history calls, a line in the system prompt naming the rest"
const names = (n: number) => Array.from({length: n}, (_, i) => (i < 20 ? `Tool${i}` : `mcp__srv__t${i}`))
const line = (leftOut: string[]) =>
  `[gwctl: this model takes at most 128 tools, so ${leftOut.length} of the client's tools were not offered and cannot be called in this conversation: ${leftOut.join(', ')}]`

describe('more tools than the upstream model takes', {timeout: 60_000}, () => {
  it('Claude Code to OpenAI chat: learned from the refusal, the first 128 and the called one sent, every turn alike', async () => {
    await takeSimCalls(gw.simOrigin, /\/chat\/completions$/)
    const client = new Anthropic({baseURL: gw.base, apiKey: gw.keys.get('openai')!, maxRetries: 0})
    const ask = () =>
      client.messages.create({
        model: 'claude-sonnet-4-5',
        max_tokens: 256,
        system: 'You are Claude Code.',
        tools: names(140).map((name) => ({name, input_schema: {type: 'object' as const, properties: {}}})),
        messages: [
          {role: 'user', content: 'use the last server'},
          {
            role: 'assistant',
            content: [{type: 'tool_use', id: 'toolu_1', name: 'mcp__srv__t139', input: {}}],
          },
          {role: 'user', content: [{type: 'tool_result', tool_use_id: 'toolu_1', content: 'done'}]},
        ],
      })
    expect((await ask()).content.length).toBeGreaterThan(0)
    const calls = await takeSimCalls(gw.simOrigin, /\/chat\/completions$/)
    expect(calls.map((c) => c.tools.length)).toEqual([140, 128])
    const sent = calls[1].tools.map((t: any) => t.function.name)
    expect(sent).toEqual([...names(127), 'mcp__srv__t139'])
    const leftOut = names(139).slice(127)
    expect(calls[1].messages[0]).toEqual({
      role: 'system',
      content: `You are Claude Code.\n\n${line(leftOut)}`,
    })
    const [row] = await rows('openai')
    expect([row.status, row.error]).toEqual([
      200,
      [
        "sim-chat refused 140 tools (it takes at most 128): sent again with the client's first 128",
        "left out 12 of 140 tools past the model's limit of 128 (mcp__srv__t127, mcp__srv__t128, mcp__srv__t129, mcp__srv__t130, mcp__srv__t131, …): a line in the system prompt says so",
      ].join('; '),
    ])
    expect(await learned('gpt-5-mini+tool-cap-128')).toEqual([RULE])
    // the next turn: one try, the same tools and system prompt
    await ask()
    const later = await takeSimCalls(gw.simOrigin, /\/chat\/completions$/)
    expect(later).toHaveLength(1)
    expect(JSON.stringify([later[0].tools, later[0].messages[0]])).toBe(
      JSON.stringify([calls[1].tools, calls[1].messages[0]]),
    )
  })

  it('a chat client passed through to that model: its first 128 tools, the line after its system message', async () => {
    await takeSimCalls(gw.simOrigin, /\/chat\/completions$/)
    const client = new OpenAI({baseURL: `${gw.base}/v1`, apiKey: gw.keys.get('openai')!, maxRetries: 0})
    const answer = await client.chat.completions.create({
      model: 'gpt-5-mini',
      messages: [
        {role: 'system', content: 'You are opencode.'},
        {role: 'user', content: 'hi'},
      ],
      tools: names(130).map((name) => ({
        type: 'function' as const,
        function: {name, parameters: {type: 'object'}},
      })),
    })
    expect(answer.choices[0].message).toBeDefined()
    // learned already (the same provider and model): one try
    const calls = await takeSimCalls(gw.simOrigin, /\/chat\/completions$/)
    expect(calls).toHaveLength(1)
    expect(calls[0].tools.map((t: any) => t.function.name)).toEqual(names(128))
    expect(calls[0].messages[0]).toEqual({
      role: 'system',
      content: `You are opencode.\n\n${line(['mcp__srv__t128', 'mcp__srv__t129'])}`,
    })
    const [row] = await rows('openai', 3).then((r) => r.slice(-1))
    expect([row.status, row.error]).toEqual([
      200,
      "left out 2 of 130 tools past the model's limit of 128 (mcp__srv__t128, mcp__srv__t129): a line in the system prompt says so",
    ])
  })

  it('Gemini CLI with MCP servers translated to Responses: learned from OpenAI’s words there', async () => {
    await takeSimCalls(gw.simOrigin, /\/responses$/)
    const ai = new GoogleGenAI({apiKey: gw.keys.get('responses')!, httpOptions: {baseUrl: gw.base}})
    const answer = await ai.models.generateContent({
      model: 'gemini-2.5-pro',
      contents: [{role: 'user', parts: [{text: 'Say hello.'}]}],
      config: {
        systemInstruction: 'You are Gemini CLI.',
        tools: [
          {functionDeclarations: names(100).map((name) => ({name, parametersJsonSchema: {type: 'object'}}))},
          {
            functionDeclarations: names(135)
              .slice(100)
              .map((name) => ({name, parametersJsonSchema: {type: 'object'}})),
          },
        ],
      },
    })
    expect(answer.candidates?.length).toBe(1)
    const calls = await takeSimCalls(gw.simOrigin, /\/responses$/)
    expect(calls.map((c) => c.tools.length)).toEqual([135, 128])
    expect(calls[1].tools.map((t: any) => t.name)).toEqual(names(128))
    expect(calls[1].instructions).toContain(line(names(135).slice(128)))
    const [row] = await rows('responses')
    expect(row.status).toBe(200)
    expect(row.error).toMatch(
      /^sim-responses refused 135 tools \(it takes at most 128\): .*; left out 7 of 135 tools/,
    )
  })

  it('Gemini CLI passed through to Gemini: its declarations cut across its tools entries', async () => {
    const path = /:(?:stream)?[gG]enerateContent$/
    await takeSimCalls(gw.simOrigin, path)
    const ai = new GoogleGenAI({apiKey: gw.keys.get('gemini')!, httpOptions: {baseUrl: gw.base}})
    const ask = () =>
      ai.models.generateContent({
        model: 'gemini-2.5-pro',
        contents: [{role: 'user', parts: [{text: 'Say hello.'}]}],
        config: {
          systemInstruction: 'You are Gemini CLI.',
          tools: [
            {
              functionDeclarations: names(120).map((name) => ({
                name,
                parametersJsonSchema: {type: 'object'},
              })),
            },
            {
              functionDeclarations: names(140)
                .slice(120)
                .map((name) => ({name, parametersJsonSchema: {type: 'object'}})),
            },
          ],
        },
      })
    expect((await ask()).candidates?.length).toBe(1)
    const calls = await takeSimCalls(gw.simOrigin, path)
    const counts = (c: Record<string, any>) => c.tools.map((t: any) => t.functionDeclarations.length)
    expect(calls.map(counts)).toEqual([
      [120, 20],
      [120, 8],
    ])
    expect(calls[1].systemInstruction.parts.at(-1)).toEqual({text: line(names(140).slice(128))})
    const [row] = await rows('gemini')
    expect([row.status, row.error?.split('; ')[0]]).toEqual([
      200,
      "sim-gemini refused 140 tools (it takes at most 128): sent again with the client's first 128",
    ])
    expect(await learned('gemini-2.5-pro+tool-cap-128')).toEqual([RULE])
    await ask()
    const later = await takeSimCalls(gw.simOrigin, path)
    expect(later.map(counts)).toEqual([[120, 8]])
  })

  it("Claude Code passed through to Kimi's Anthropic endpoint: learned from Kimi's words", async () => {
    await takeSimCalls(gw.simOrigin, /\/v1\/messages$/)
    const client = new Anthropic({baseURL: gw.base, apiKey: gw.keys.get('kimi')!, maxRetries: 0})
    const system = [
      {type: 'text' as const, text: 'You are Claude Code.', cache_control: {type: 'ephemeral' as const}},
    ]
    const answer = await client.messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 256,
      system,
      tools: names(131).map((name) => ({name, input_schema: {type: 'object' as const, properties: {}}})),
      messages: [{role: 'user', content: 'hi'}],
    })
    expect(answer.content.length).toBeGreaterThan(0)
    const calls = await takeSimCalls(gw.simOrigin, /\/v1\/messages$/)
    expect(calls.map((c) => c.tools.length)).toEqual([131, 128])
    expect(calls[1].system).toEqual([...system, {type: 'text', text: line(names(131).slice(128))}])
    const [row] = await rows('kimi')
    expect(row.error).toMatch(/^sim-messages refused 131 tools \(it takes at most 128\)/)
  })
})
