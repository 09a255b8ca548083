/**
 * Anthropic's redacted thinking through translation, on turn 2: a Messages upstream's answer of a
 * signed thinking block, a `redacted_thinking` block and another signed thinking block (the
 * simulator's `redacted-thinking` quirk) goes to a Responses client as three reasoning items, to a
 * Gemini client as thought parts, to a chat client through the gateway's carry; the next request
 * sends Anthropic the same three blocks in the same order, the redacted one as `redacted_thinking`
 * with its data as it came (the simulator refuses it otherwise, in Anthropic's words). Before, the
 * Responses and Gemini decoders read the redacted data back as a signature: a `thinking` block
 * signed by it, Anthropic's 400. A history that still holds such an old wrap is sent again
 * without the wrapped thinking of the turn Anthropic's 400 names (nothing learned), a running tool
 * loop's kept, and a rule learned on the way keeps it so; a chat client's answer of text alone has
 * its thinking carried under its conversation (key, project, policy, the user's words) and its
 * text, never into another project's. The real daemon, the simulator, the official SDKs; stream
 * and not.
 */
import {GoogleGenAI} from '@google/genai'
import type {Content} from '@google/genai'
import OpenAI from 'openai'
import {describe, expect, it} from 'vitest'

import {codexRequest, READ_FILE_TOOL} from './helpers/codex.js'
import {projectLogRows, takeSimCalls, translatedRoutes} from './helpers/gateway.js'

const gw = translatedRoutes(
  {
    sonnet: 'claude-sonnet-4-6+redacted-thinking',
    // another project's route to the same model (its own key, project and policy)
    other: 'claude-sonnet-4-6+redacted-thinking',
    // a Claude 5 that refuses thinking.type disabled (learned: its least effort instead)
    always: 'claude-sonnet-5+redacted-thinking+no-disabled',
  },
  {prefix: 'redacted', provider: 'sim-messages', families: ['responses', 'gemini', 'chat']},
)

const ASK = 'Use the tool to read /tmp/notes.txt.'
const messagesCalls = (): Promise<Array<Record<string, any>>> => takeSimCalls(gw.simOrigin, /\/v1\/messages$/)
const key = (): string => gw.keys.get('sonnet')!
let rows = 0

/** A chat client's request (thinking high) that offers the read_file tool. */
const chatToolRequest = (messages: any[]) => ({
  model: 'gpt-5',
  reasoning_effort: 'high' as const,
  messages,
  tools: [{type: 'function' as const, function: {name: 'read_file', parameters: READ_FILE_TOOL.parameters}}],
})

/** A test's start: the simulator's calls and the log's rows so far left behind. */
async function fresh(): Promise<void> {
  await messagesCalls()
  rows = (await projectLogRows(gw.base, 'redacted-sonnet', 0)).length
}

/**
 * The blocks of the assistant message of the turn-2 request Anthropic got (the second of the two
 * since the test's start), both requests answered 200 (the log's rows).
 */
async function turnTwo(): Promise<Array<Record<string, any>>> {
  const calls = await messagesCalls()
  expect(calls).toHaveLength(2)
  const assistant = calls[1].messages.find((m: any) => m.role === 'assistant')
  const logged = await projectLogRows(gw.base, 'redacted-sonnet', rows + 2)
  expect(logged.slice(rows).map((r) => r.status)).toEqual([200, 200])
  return assistant.content
}

/** The simulator's redacted data: base64 of `simred:<hash>:<what it stands for>`. */
const simRedacted = (data: unknown): boolean =>
  typeof data === 'string' && Buffer.from(data, 'base64').toString().startsWith('simred:')

/** The redacted data in the string a client was given for it, its wrap marked as redacted. */
function unwrapped(wrapped: string): string {
  expect(wrapped).toMatch(/^gwx1\.messages\+redacted\./)
  return wrapped.slice('gwx1.messages+redacted.'.length)
}

/** Turn 2's blocks: the redacted one between the signed ones, with `data`, the call after. */
function expectBlocks(blocks: Array<Record<string, any>>, data: string): void {
  expect(blocks.map((b) => b.type)).toEqual(['thinking', 'redacted_thinking', 'thinking', 'tool_use'])
  expect(blocks[1]).toEqual({type: 'redacted_thinking', data})
  expect(simRedacted(data)).toBe(true)
  for (const b of [blocks[0], blocks[2]]) expect(b.signature).not.toBe(data)
}

describe('redacted thinking back to Anthropic on turn 2', {timeout: 60_000}, () => {
  for (const stream of [false, true])
    it(`Codex (Responses), ${stream ? 'streamed' : 'not streamed'}: the reasoning item of the redacted block goes back as redacted_thinking`, async () => {
      await fresh()
      const openai = new OpenAI({baseURL: `${gw.base}/v1`, apiKey: key(), maxRetries: 0})
      const history: any[] = [{role: 'user', content: ASK}]
      const first = stream
        ? await openai.responses.stream(codexRequest(history)).finalResponse()
        : await openai.responses.create(codexRequest(history))
      const reasoning = first.output.filter(
        (o) => o.type === 'reasoning',
      ) as OpenAI.Responses.ResponseReasoningItem[]
      expect(reasoning).toHaveLength(3)
      // the one string field a reasoning item has
      const wrapped = String(reasoning[1].encrypted_content)
      const call = first.output.find(
        (o) => o.type === 'function_call',
      ) as OpenAI.Responses.ResponseFunctionToolCall
      history.push(...first.output, {type: 'function_call_output', call_id: call.call_id, output: 'notes'})
      const second = stream
        ? await openai.responses.stream(codexRequest(history)).finalResponse()
        : await openai.responses.create(codexRequest(history))
      expect(second.status).toBe('completed')
      expectBlocks(await turnTwo(), unwrapped(wrapped))
    })

  for (const stream of [false, true])
    it(`a Gemini client, ${stream ? 'streamed' : 'not streamed'}: the thought part of the redacted block goes back as redacted_thinking`, async () => {
      await fresh()
      const genai = new GoogleGenAI({apiKey: key(), httpOptions: {baseUrl: gw.base}})
      const contents: Content[] = [{role: 'user', parts: [{text: ASK}]}]
      const request = {
        model: 'gemini-2.5-pro',
        contents,
        config: {
          thinkingConfig: {includeThoughts: true, thinkingBudget: 8192},
          tools: [
            {functionDeclarations: [{name: 'read_file', parametersJsonSchema: READ_FILE_TOOL.parameters}]},
          ],
        },
      }
      const ask = async (): Promise<Content> => {
        if (!stream) return (await genai.models.generateContent(request)).candidates![0].content!
        // every chunk's parts, in order, as the client's history keeps them
        const parts = []
        for await (const chunk of await genai.models.generateContentStream(request))
          parts.push(...(chunk.candidates?.[0]?.content?.parts ?? []))
        return {role: 'model', parts}
      }
      const first = await ask()
      // the signatures of the three blocks: the redacted one's data the second
      const signatures = first
        .parts!.filter((p) => p.thought && p.thoughtSignature)
        .map((p) => p.thoughtSignature!)
      expect(signatures).toHaveLength(3)
      const call = first.parts!.find((p) => p.functionCall)!.functionCall!
      contents.push(first, {
        role: 'user',
        parts: [{functionResponse: {name: call.name, response: {output: 'notes'}}}],
      })
      const second = await ask()
      expect(second.parts?.length).toBeGreaterThan(0)
      expectBlocks(await turnTwo(), unwrapped(signatures[1]))
    })

  it('Gemini CLI, which drops thought parts: the gateway carries the three blocks for the call', async () => {
    await fresh()
    const genai = new GoogleGenAI({apiKey: key(), httpOptions: {baseUrl: gw.base}})
    const contents: Content[] = [{role: 'user', parts: [{text: ASK}]}]
    const tools = [
      {functionDeclarations: [{name: 'read_file', parametersJsonSchema: READ_FILE_TOOL.parameters}]},
    ]
    // (it asks for thoughts, and sends back none of them)
    const request = {
      model: 'gemini-2.5-pro',
      contents,
      config: {thinkingConfig: {includeThoughts: true, thinkingBudget: 8192}, tools},
    }
    const first = (await genai.models.generateContent(request)).candidates![0].content!
    const call = first.parts!.find((p) => p.functionCall)!
    contents.push(
      {role: 'model', parts: [call]},
      {
        role: 'user',
        parts: [{functionResponse: {name: call.functionCall!.name, response: {output: 'notes'}}}],
      },
    )
    await genai.models.generateContent(request)
    const blocks = await turnTwo()
    expectBlocks(blocks, String(blocks[1]?.data))
  })

  for (const stream of [false, true])
    it(`a chat client, ${stream ? 'streamed' : 'not streamed'}: the gateway carries the three blocks for the call`, async () => {
      await fresh()
      const openai = new OpenAI({baseURL: `${gw.base}/v1`, apiKey: key(), maxRetries: 0})
      const messages: any[] = [{role: 'user', content: ASK}]
      const request = () => chatToolRequest(messages)
      // the reasoning_content shown: the answer's, or the stream's pieces (read as they come: the
      // SDK's stream helper keeps only the last piece of a field it does not know)
      let shown = ''
      const ask = async () => {
        shown = ''
        if (!stream) {
          const message = (await openai.chat.completions.create(request())).choices[0].message
          shown = (message as {reasoning_content?: string}).reasoning_content ?? ''
          return message
        }
        const chunks = openai.chat.completions.stream(request()).on('chunk', (chunk) => {
          shown +=
            (chunk.choices[0]?.delta as {reasoning_content?: string} | undefined)?.reasoning_content ?? ''
        })
        return (await chunks.finalChatCompletion()).choices[0].message
      }
      const first = await ask()
      // the texts of the two thinking blocks, each a paragraph
      expect(shown).toMatch(/^The user wrote .+\.\n\nAnd the rest, said aloud\.$/s)
      const call = first.tool_calls![0]
      messages.push(
        {role: 'assistant', content: first.content, tool_calls: first.tool_calls},
        {role: 'tool', tool_call_id: call.id, content: 'notes'},
      )
      await ask()
      const blocks = await turnTwo()
      expectBlocks(blocks, String(blocks[1]?.data))
    })
})

/**
 * The reasoning items of an answer as a gwctl before stop 60 gave them: the redacted block's data
 * wrapped as a signature (`gwx1.messages.<data>`).
 */
const asOldWrap = (output: any[]): any[] =>
  output.map((o) =>
    o.type === 'reasoning' && String(o.encrypted_content).startsWith('gwx1.messages+redacted.')
      ? {...o, encrypted_content: `gwx1.messages.${unwrapped(String(o.encrypted_content))}`}
      : o,
  )

describe('a conversation that holds an old wrap of redacted thinking', {timeout: 60_000}, () => {
  for (const stream of [false, true])
    it(`Codex (Responses), ${stream ? 'streamed' : 'not streamed'}: Anthropic's 400 is sent again once without the wrapped thinking, the row says so, nothing learned`, async () => {
      await fresh()
      const openai = new OpenAI({baseURL: `${gw.base}/v1`, apiKey: key(), maxRetries: 0})
      const ask = (history: any[]) =>
        stream
          ? openai.responses.stream(codexRequest(history)).finalResponse()
          : openai.responses.create(codexRequest(history))
      const history: any[] = [{role: 'user', content: ASK}]
      const first = await ask(history)
      const call = first.output.find(
        (o) => o.type === 'function_call',
      ) as OpenAI.Responses.ResponseFunctionToolCall
      const result = {type: 'function_call_output', call_id: call.call_id, output: 'notes'}
      // the history as Codex kept it from a gwctl before stop 60
      const second = await ask([...history, ...asOldWrap(first.output), result])
      expect(second.status).toBe('completed')
      expect(second.output.some((o) => o.type === 'message')).toBe(true)
      const calls = await messagesCalls()
      // turn 1, turn 2 refused (a thinking block signed by the redacted data), turn 2 again
      expect(calls).toHaveLength(3)
      const blocks = (body: Record<string, any>) =>
        body.messages.find((m: any) => m.role === 'assistant').content.map((b: any) => b.type)
      expect(blocks(calls[1])).toEqual(['thinking', 'thinking', 'thinking', 'tool_use'])
      // again: the tool loop's turn without thinking, and thinking off for it (Anthropic wants a
      // thinking block first in that turn when thinking is on)
      expect(blocks(calls[2])).toEqual(['tool_use'])
      expect(calls[2].thinking?.type ?? 'omitted').not.toMatch(/enabled|adaptive/)
      const logged = await projectLogRows(gw.base, 'redacted-sonnet', rows + 2)
      expect(logged.slice(rows).map((r) => r.status)).toEqual([200, 200])
      expect(logged.at(-1)!.error).toMatch(
        /refused a thinking block's signature: sent again without the thinking of gwctl's wraps of the turn it named/,
      )
      // nothing learned: the same conversation with the wraps of now keeps its thinking
      rows = logged.length
      await ask([...history, ...first.output, result])
      const [again] = await messagesCalls()
      expect(blocks(again)).toEqual(['thinking', 'redacted_thinking', 'thinking', 'tool_use'])
    })

  it('a Gemini client: the same, its thought parts', async () => {
    await fresh()
    const genai = new GoogleGenAI({apiKey: key(), httpOptions: {baseUrl: gw.base}})
    const tools = [
      {functionDeclarations: [{name: 'read_file', parametersJsonSchema: READ_FILE_TOOL.parameters}]},
    ]
    const ask = (contents: Content[]) =>
      genai.models.generateContent({
        model: 'gemini-2.5-pro',
        contents,
        config: {thinkingConfig: {includeThoughts: true, thinkingBudget: 8192}, tools},
      })
    const history: Content[] = [{role: 'user', parts: [{text: ASK}]}]
    const first = (await ask(history)).candidates![0].content!
    const call = first.parts!.find((p) => p.functionCall)!.functionCall!
    // the redacted block's thought part as a gwctl before stop 60 wrapped it
    const old = first.parts!.map((p) =>
      p.thoughtSignature?.startsWith('gwx1.messages+redacted.')
        ? {...p, thoughtSignature: `gwx1.messages.${unwrapped(p.thoughtSignature)}`}
        : p,
    )
    const result = {role: 'user', parts: [{functionResponse: {name: call.name, response: {output: 'notes'}}}]}
    const second = await ask([...history, {role: 'model', parts: old}, result])
    expect(second.candidates![0].content!.parts!.length).toBeGreaterThan(0)
    const calls = await messagesCalls()
    expect(calls).toHaveLength(3)
    const blocks = calls[2].messages.find((m: any) => m.role === 'assistant').content
    expect(blocks.map((b: any) => b.type)).toEqual(['tool_use'])
    const logged = await projectLogRows(gw.base, 'redacted-sonnet', rows + 2)
    expect(logged.at(-1)!.error).toMatch(
      /sent again without the thinking of gwctl's wraps of the turn it named/,
    )
  })
})

/** The result Codex sends for the call of `answer`. */
const resultOf = (answer: OpenAI.Responses.Response) => {
  const call = answer.output.find(
    (o) => o.type === 'function_call',
  ) as OpenAI.Responses.ResponseFunctionToolCall
  return {type: 'function_call_output', call_id: call.call_id, output: 'notes'}
}

/** The block types of each assistant turn of a request Anthropic got. */
const assistantTurns = (body: Record<string, any>): string[][] =>
  body.messages.filter((m: any) => m.role === 'assistant').map((m: any) => m.content.map((b: any) => b.type))

describe(
  'an old wrap in an earlier turn, a tool loop running with the wraps of now',
  {timeout: 90_000},
  () => {
    it("Codex: Anthropic's 400 names the old turn; only its thinking is left out, the running loop thinks on (probe A)", async () => {
      await fresh()
      const openai = new OpenAI({baseURL: `${gw.base}/v1`, apiKey: key(), maxRetries: 0})
      const ask = (input: any[]) => openai.responses.create(codexRequest(input))
      const first = await ask([{role: 'user', content: ASK}])
      // the history as Codex kept it from a gwctl before stop 60, the tool loop answered
      const history: any[] = [{role: 'user', content: ASK}, ...asOldWrap(first.output), resultOf(first)]
      history.push(...(await ask(history)).output, {
        role: 'user',
        content: 'Use the tool to read /tmp/other.txt.',
      })
      // a new tool loop, its call with the wraps of now, its result sent
      const third = await ask(history)
      history.push(...third.output, resultOf(third))
      await messagesCalls()
      rows = (await projectLogRows(gw.base, 'redacted-sonnet', 0)).length
      const last = await ask(history)
      expect(last.status).toBe('completed')
      const calls = await messagesCalls()
      expect(calls).toHaveLength(2)
      expect(assistantTurns(calls[0])[0]).toEqual(['thinking', 'thinking', 'thinking', 'tool_use'])
      expect(assistantTurns(calls[0]).at(-1)).toEqual([
        'thinking',
        'redacted_thinking',
        'thinking',
        'tool_use',
      ])
      // again: the old turn without its thinking, the running loop's three blocks kept, and it thinks
      const again = assistantTurns(calls[1])
      expect(again[0]).toEqual(['tool_use'])
      expect(again.at(-1)).toEqual(['thinking', 'redacted_thinking', 'thinking', 'tool_use'])
      expect(calls[1].thinking?.type).toBe('adaptive')
      expect(calls[1].output_config?.effort).toBe(calls[0].output_config?.effort)
      const logged = await projectLogRows(gw.base, 'redacted-sonnet', rows + 1)
      expect(logged.at(-1)!.status).toBe(200)
      expect(logged.at(-1)!.error).toMatch(
        /sent again without the thinking of gwctl's wraps of the turn it named/,
      )
    })

    it('Codex: a rule learned from the request sent without the old wrap keeps it without (one round trip less)', async () => {
      await fresh()
      const openai = new OpenAI({baseURL: `${gw.base}/v1`, apiKey: gw.keys.get('always')!, maxRetries: 0})
      const ask = (input: any[]) => openai.responses.create(codexRequest(input))
      const first = await ask([{role: 'user', content: ASK}])
      const call = first.output.find(
        (o) => o.type === 'function_call',
      ) as OpenAI.Responses.ResponseFunctionToolCall
      const result = {type: 'function_call_output', call_id: call.call_id, output: 'notes'}
      await messagesCalls()
      const before = (await projectLogRows(gw.base, 'redacted-always', 0)).length
      const second = await ask([{role: 'user', content: ASK}, ...asOldWrap(first.output), result])
      expect(second.status).toBe('completed')
      const calls = await messagesCalls()
      // the old wrap refused; sent without it, thinking disabled refused (learned: effort low); sent
      // again with the rule, still without it
      expect(calls.map((c) => assistantTurns(c)[0])).toEqual([
        ['thinking', 'thinking', 'thinking', 'tool_use'],
        ['tool_use'],
        ['tool_use'],
      ])
      expect(calls[1].thinking).toEqual({type: 'disabled'})
      expect(calls[2].thinking).toBeUndefined()
      expect(calls[2].output_config).toEqual({effort: 'low'})
      const logged = await projectLogRows(gw.base, 'redacted-always', before + 1)
      expect(logged.at(-1)!.status).toBe(200)
      expect(logged.at(-1)!.error).toMatch(/refused thinking.type disabled/)
      expect(logged.at(-1)!.error).toMatch(
        /sent again without the thinking of gwctl's wraps of the turn it named/,
      )
    })
  },
)

describe('four old-wrapped turns (the rv-mends probe)', {timeout: 90_000}, () => {
  it('Codex: each retry reaches wider (the named turn, every turn but the last, every turn); the 400 never reaches the client', async () => {
    await fresh()
    const openai = new OpenAI({baseURL: `${gw.base}/v1`, apiKey: key(), maxRetries: 0})
    const ask = (input: any[]) => openai.responses.create(codexRequest(input))
    // four tool loops, each asked in its own words (so each turn's signatures differ), each call's
    // answer kept as a gwctl before stop 60 wrapped it (its text answer as now); the fourth running
    const history: any[] = []
    for (let k = 1; k <= 4; k++) {
      history.push({role: 'user', content: `Use the tool to read /tmp/notes-${k}.txt.`})
      const answer = await ask(history)
      history.push(...asOldWrap(answer.output), resultOf(answer))
      if (k < 4) history.push(...(await ask(history)).output)
    }
    await messagesCalls()
    rows = (await projectLogRows(gw.base, 'redacted-sonnet', 0)).length
    const last = await ask(history)
    expect(last.status).toBe('completed')
    const calls = await messagesCalls()
    // (each assistant turn's thinking blocks: a call's, its text answer's (none: a text answer's
    // thinking is not sent back after a user message), ...; the running loop's last)
    const thinking = (body: Record<string, any>) =>
      assistantTurns(body).map((t) => t.filter((b) => b.endsWith('thinking')).length)
    // refused (the first loop's call named), again without its thinking; refused (the second's),
    // again without every turn's but the running loop's; refused (its own), again without any
    expect(calls.map(thinking)).toEqual([
      [3, 0, 3, 0, 3, 0, 3],
      [0, 0, 3, 0, 3, 0, 3],
      [0, 0, 0, 0, 0, 0, 3],
      [0, 0, 0, 0, 0, 0, 0],
    ])
    const logged = await projectLogRows(gw.base, 'redacted-sonnet', rows + 1)
    expect(logged.at(-1)!.status).toBe(200)
    expect(logged.at(-1)!.error).toMatch(/wraps of the turn it named/)
    expect(logged.at(-1)!.error).toMatch(/wraps before the last assistant turn/)
    expect(logged.at(-1)!.error).toMatch(/wraps of every turn/)
    // the next loop, asked with the wraps of now: two refusals, its own thinking kept, thinking on
    history.push(...last.output, {role: 'user', content: 'Use the tool to read /tmp/notes-5.txt.'})
    const fifth = await ask(history)
    history.push(...fifth.output, resultOf(fifth))
    await messagesCalls()
    expect((await ask(history)).status).toBe('completed')
    const next = await messagesCalls()
    expect(next).toHaveLength(3)
    expect(assistantTurns(next[2]).at(-1)).toEqual(['thinking', 'redacted_thinking', 'thinking', 'tool_use'])
    expect(next[2].thinking?.type).toBe('adaptive')
  })
})

describe("a chat client's answer of text alone", {timeout: 60_000}, () => {
  for (const stream of [false, true])
    it(`${stream ? 'streamed' : 'not streamed'}: the gateway carries its thinking, the redacted block with it, under its text`, async () => {
      await fresh()
      const openai = new OpenAI({baseURL: `${gw.base}/v1`, apiKey: key(), maxRetries: 0})
      const messages: any[] = [{role: 'user', content: 'Say what you think of the notes.'}]
      const request = () => ({model: 'gpt-5', reasoning_effort: 'high' as const, messages})
      const ask = async () =>
        stream
          ? (await openai.chat.completions.stream(request()).finalChatCompletion()).choices[0].message
          : (await openai.chat.completions.create(request())).choices[0].message
      const first = await ask()
      expect(first.tool_calls ?? []).toEqual([])
      expect(first.content).toBeTruthy()
      // the client keeps the text only, as chat clients do
      messages.push({role: 'assistant', content: first.content}, {role: 'user', content: 'And then?'})
      await ask()
      const blocks = await turnTwo()
      expect(blocks.map((b) => b.type)).toEqual(['thinking', 'redacted_thinking', 'thinking', 'text'])
      expect(simRedacted(blocks[1].data)).toBe(true)
      expect(blocks[3].text).toBe(first.content)
    })
})

describe("a chat client's answer of text alone, the same in two projects", {timeout: 90_000}, () => {
  it("each project's next turn carries its own thinking, never the other's (probe B)", async () => {
    await fresh()
    /** A project's tool loop to its answer of text, on its own key: its messages so far. */
    const loop = async (route: string, path: string) => {
      const openai = new OpenAI({baseURL: `${gw.base}/v1`, apiKey: gw.keys.get(route)!, maxRetries: 0})
      const messages: any[] = [{role: 'user', content: `Use the tool to read ${path}.`}]
      const request = () => chatToolRequest(messages)
      const first = (await openai.chat.completions.create(request())).choices[0].message
      const call = first.tool_calls![0]
      messages.push(
        {role: 'assistant', content: first.content, tool_calls: first.tool_calls},
        {role: 'tool', tool_call_id: call.id, content: 'ok'},
      )
      const answer = (await openai.chat.completions.create(request())).choices[0].message
      expect(answer.tool_calls ?? []).toEqual([])
      // (the client keeps the text only, as the OpenAI SDK's clients do)
      messages.push({role: 'assistant', content: answer.content}, {role: 'user', content: 'And then?'})
      return {next: () => openai.chat.completions.create(request()), answer: answer.content}
    }
    const a = await loop('sonnet', '/home/alice/projectA/notes.txt')
    const b = await loop('other', '/home/bob/projectB/secrets.env')
    // the two answers are the same text (short answers are: "Done.")
    expect(a.answer).toBe(b.answer)
    await messagesCalls()
    await a.next()
    const [turn] = await messagesCalls()
    const answered = assistantTurns(turn).at(-1)
    expect(answered).toEqual(['thinking', 'redacted_thinking', 'thinking', 'text'])
    const thinking = JSON.stringify(turn.messages.at(-2).content)
    expect(thinking).toContain('/home/alice/projectA/notes.txt')
    expect(thinking).not.toContain('projectB')
  })
})
