/**
 * Claude 5 and 5.5 through translation: they think unless told not to, each told its own way
 * (Sonnet 5 `disabled`, Sonnet 5.5 `between_tools`, Opus 5.5 cannot stop: a low effort); Opus and
 * Sonnet 5.5 refuse a forced tool choice (it goes as `auto`, the call asked for at the end of the
 * prompt, a JSON answer's `json_answer` offered); Opus 5.5 binds a thinking block to the
 * conversation before it (blocks go back with `block_binding: drop_block` and its beta header, and
 * a block whose conversation changed is dropped, said on the log row). The real daemon, the
 * simulator's Messages upstream (its own table of Claude models, and quirks for other names), the
 * official SDKs.
 */
import {GoogleGenAI} from '@google/genai'
import OpenAI from 'openai'
import {describe, expect, it} from 'vitest'

import {codexRequest, READ_FILE_TOOL} from './helpers/codex.js'
import {projectLogRows, takeSimCalls, translatedRoutes} from './helpers/gateway.js'

/** Policy id -> the Messages model its routes translate to. */
const MODELS: Record<string, string> = {
  opus55: 'claude-opus-5-5',
  sonnet55: 'claude-sonnet-5-5',
  sonnet5: 'claude-sonnet-5',
  // names that say nothing: learned from the refusals
  corp: 'corp-large+no-forced-tools',
  think: 'corp-think+thinks-by-default',
  bound: 'corp-bound+prefix-binding',
}

const gw = translatedRoutes(MODELS, {
  prefix: 'claude5',
  provider: 'sim-messages',
  families: ['responses', 'gemini', 'chat'],
})

const messagesCalls = (): Promise<Array<Record<string, any>>> => takeSimCalls(gw.simOrigin, /\/v1\/messages$/)
/** Rows of the project seen by this file's tests so far (each test reads only its own). */
const seen = new Map<string, number>()
/** The project's `count` rows after those earlier tests read. */
async function logRows(name: string, count = 1) {
  const before = seen.get(name) ?? 0
  const rows = (await projectLogRows(gw.base, name, before + count)).slice(before)
  seen.set(name, before + rows.length)
  return rows
}
const openai = (id: string) => new OpenAI({baseURL: `${gw.base}/v1`, apiKey: gw.keys.get(id)!, maxRetries: 0})

/**
 * A Codex conversation of `requests` requests, its history sent back whole each time: a call of
 * the tool is answered with its output (the model then answers in text), a text answer with the
 * user's next ask.
 */
async function codexLoop(id: string, requests: number) {
  const client = openai(id)
  const history: any[] = [{role: 'user', content: 'Use the tool to read /tmp/notes.txt.'}]
  const answers: any[] = []
  for (let i = 0; i < requests; i++) {
    const answer = await client.responses.create(codexRequest(history))
    answers.push(answer)
    history.push(...answer.output)
    const call = answer.output.find((o: any) => o.type === 'function_call') as any
    if (call) history.push({type: 'function_call_output', call_id: call.call_id, output: `notes ${i}`})
    else history.push({role: 'user', content: `Use the tool to read /tmp/more-${i}.txt.`})
  }
  return {answers, history}
}

describe('Opus 5.5: thinking bound to its conversation', {timeout: 60_000}, () => {
  it("Codex's tool loops over four requests: every block goes back bound and is kept (the history's bytes stay the same turn to turn)", async () => {
    await messagesCalls()
    const {answers} = await codexLoop('opus55', 4)
    expect(answers.map((a) => a.status)).toEqual(['completed', 'completed', 'completed', 'completed'])
    expect(answers.map((a) => a.output.some((o: any) => o.type === 'function_call'))).toEqual([
      true,
      false,
      true,
      false,
    ])
    const calls = await messagesCalls()
    expect(calls).toHaveLength(4)
    // turn 1 sends back nothing; turns 2 and 3 their thinking, with the setting
    expect(calls[0].thinking).toEqual({type: 'adaptive', display: 'summarized'})
    for (const call of calls.slice(1)) {
      expect(call.thinking).toEqual({
        type: 'adaptive',
        display: 'summarized',
        block_binding: {prefix_mismatch_behavior: 'drop_block'},
      })
      expect(call.output_config).toEqual({effort: 'high'})
      expect(call).not.toHaveProperty('temperature')
    }
    // the last request sends back every earlier answer's thinking
    const thinking = calls[3].messages.flatMap((m: any) =>
      m.role === 'assistant' ? m.content.filter((b: any) => b.type === 'thinking') : [],
    )
    expect(thinking).toHaveLength(3)
    // none was dropped: the translation gave the same history each turn
    const rows = await logRows('claude5-opus55', 4)
    expect(rows.map((r) => [r.status, r.error ?? null])).toEqual([
      [200, null],
      [200, null],
      [200, null],
      [200, null],
    ])
  })

  it('a chat client and Gemini CLI over four requests: their thinking (carried, or in thought signatures) kept too', async () => {
    await messagesCalls()
    // chat: the reasoning kept by the gateway (the carry, keyed by the tool call)
    const chat = openai('opus55')
    const messages: any[] = [{role: 'user', content: 'Use the tool to read /tmp/notes.txt.'}]
    for (let i = 0; i < 4; i++) {
      const answer: any = await chat.chat.completions.create({
        model: 'gpt-5',
        reasoning_effort: 'high',
        messages,
        tools: [{type: 'function', function: {name: 'read_file', parameters: READ_FILE_TOOL.parameters}}],
      } as any)
      const message = answer.choices[0].message
      messages.push({role: 'assistant', content: message.content, tool_calls: message.tool_calls})
      const call = message.tool_calls?.[0]
      if (call) messages.push({role: 'tool', tool_call_id: call.id, content: `notes ${i}`})
      else messages.push({role: 'user', content: `Use the tool to read /tmp/more-${i}.txt.`})
    }
    // Gemini: the thought signatures on its parts
    const genai = new GoogleGenAI({apiKey: gw.keys.get('opus55')!, httpOptions: {baseUrl: gw.base}})
    const contents: any[] = [{role: 'user', parts: [{text: 'Use the tool to read /tmp/notes.txt.'}]}]
    for (let i = 0; i < 4; i++) {
      const answer = await genai.models.generateContent({
        model: 'gemini-2.5-pro',
        contents,
        config: {
          thinkingConfig: {includeThoughts: true, thinkingBudget: 8192},
          tools: [
            {functionDeclarations: [{name: 'read_file', parametersJsonSchema: READ_FILE_TOOL.parameters}]},
          ],
        },
      })
      const content = answer.candidates?.[0]?.content
      contents.push(content)
      const call = content?.parts?.find((p) => p.functionCall)?.functionCall
      if (call)
        contents.push({
          role: 'user',
          parts: [{functionResponse: {name: call.name, response: {output: `notes ${i}`}}}],
        })
      else contents.push({role: 'user', parts: [{text: `Use the tool to read /tmp/more-${i}.txt.`}]})
    }
    const calls = await messagesCalls()
    expect(calls).toHaveLength(8)
    const sentBack = (call: any) =>
      call.messages.flatMap((m: any) =>
        m.role === 'assistant' ? m.content.filter((b: any) => b.type === 'thinking') : [],
      )
    // Gemini CLI sends back every answer's thought signature: the three earlier answers' thinking
    expect(sentBack(calls[7])).toHaveLength(3)
    // a chat client's thinking is kept by the gateway, of its tool calls (the carry, by the call)
    // and of its text answers (by the answer's text in its conversation): every earlier answer's
    // thinking goes back too, none left out
    expect(sentBack(calls[3])).toHaveLength(3)
    expect(sentBack(calls[2])).toHaveLength(2)
    const rows = await logRows('claude5-opus55', 8)
    expect(rows.map((r) => [r.status, r.error ?? null])).toEqual(Array.from({length: 8}, () => [200, null]))
  })

  it('a history the client edited: the block bound to the old one is dropped by the model, the row says so', async () => {
    await messagesCalls()
    const {history} = await codexLoop('opus55', 1)
    // the client rewrote its first message (an edit, a compaction)
    history[0] = {role: 'user', content: 'Use the tool to read /tmp/notes.txt, please.'}
    const answer = await openai('opus55').responses.create(codexRequest(history))
    expect(answer.status).toBe('completed')
    const rows = await logRows('claude5-opus55', 2)
    expect(rows[1].status).toBe(200)
    expect(rows[1].error).toBe(
      'sim-messages dropped thinking blocks of the history: 1 (prefix_binding_mismatch)',
    )
  })

  it('a name that says nothing: its refusal of a changed history is learned, and the request goes again', async () => {
    await messagesCalls()
    const {history} = await codexLoop('bound', 1)
    history[0] = {role: 'user', content: 'Use the tool to read /tmp/notes.txt, please.'}
    const answer = await openai('bound').responses.create(codexRequest(history))
    expect(answer.status).toBe('completed')
    const calls = await messagesCalls()
    expect(calls.map((c) => c.thinking?.block_binding ?? null)).toEqual([
      null,
      null,
      {prefix_mismatch_behavior: 'drop_block'},
    ])
    const rows = await logRows('claude5-bound', 2)
    expect(rows[1].status).toBe(200)
    expect(rows[1].error).toContain(
      'refused a thinking block bound to another conversation: sent again with block_binding drop_block',
    )
    expect(rows[1].error).toContain('dropped thinking blocks of the history: 1 (prefix_binding_mismatch)')
  })
})

describe('a forced tool choice and JSON answers on models that refuse forcing', {timeout: 60_000}, () => {
  it("a chat client's tool_choice required on Sonnet 5.5: auto, the call asked for, the tool called", async () => {
    await messagesCalls()
    const answer = await openai('sonnet55').chat.completions.create({
      model: 'gpt-5',
      messages: [{role: 'user', content: 'Where are the notes?'}],
      tools: [{type: 'function', function: {name: 'read_file', parameters: READ_FILE_TOOL.parameters}}],
      tool_choice: {type: 'function', function: {name: 'read_file'}},
    })
    expect(answer.choices[0].message.tool_calls?.[0]).toMatchObject({function: {name: 'read_file'}})
    const [call] = await messagesCalls()
    expect(call.tool_choice).toEqual({type: 'auto'})
    expect(call.messages.at(-1).content.at(-1)).toEqual({
      type: 'text',
      text: 'In this answer, call the tool read_file.',
    })
  })

  it("Gemini CLI's JSON call (its model router) on Opus 5.5: json_answer offered, the JSON answer whole", async () => {
    await messagesCalls()
    const genai = new GoogleGenAI({apiKey: gw.keys.get('opus55')!, httpOptions: {baseUrl: gw.base}})
    const schema = {
      type: 'object',
      properties: {reasoning: {type: 'string'}, model_choice: {type: 'string', enum: ['flash', 'pro']}},
      required: ['reasoning', 'model_choice'],
    }
    for (const stream of [false, true]) {
      const request = {
        model: 'gemini-2.5-flash-lite',
        contents: 'Which model should answer?',
        config: {
          responseMimeType: 'application/json',
          responseJsonSchema: schema,
          thinkingConfig: {thinkingBudget: 0},
          temperature: 0,
        },
      }
      let text = ''
      if (stream)
        for await (const chunk of await genai.models.generateContentStream(request)) text += chunk.text ?? ''
      else text = (await genai.models.generateContent(request)).text ?? ''
      expect(JSON.parse(text)).toEqual({reasoning: 'sim', model_choice: 'flash'})
    }
    const calls = await messagesCalls()
    for (const call of calls) {
      expect(call.tool_choice).toEqual({type: 'auto', disable_parallel_tool_use: true})
      // Gemini CLI's thinking budget of 0: Opus 5.5 cannot stop thinking, the least it does
      expect(call).not.toHaveProperty('thinking')
      expect(call.output_config).toEqual({effort: 'low'})
      expect(call).not.toHaveProperty('temperature')
    }
  })

  it('Sonnet 5 takes forcing: the JSON call forced, with thinking turned off as it takes it', async () => {
    await messagesCalls()
    const answer = await openai('sonnet5').chat.completions.create({
      model: 'gpt-5',
      messages: [{role: 'user', content: 'Answer in JSON.'}],
      response_format: {type: 'json_object'},
    })
    expect(JSON.parse(answer.choices[0].message.content ?? '')).toEqual({})
    const [call] = await messagesCalls()
    expect(call.tool_choice).toEqual({type: 'tool', name: 'json_answer', disable_parallel_tool_use: true})
    expect(call.thinking).toEqual({type: 'disabled'})
  })
})

/** A chat client's request that requires a call of its one tool. */
const requiredCall = (id: string) =>
  openai(id).chat.completions.create({
    model: 'gpt-5',
    messages: [{role: 'user', content: 'Where are the notes?'}],
    tools: [{type: 'function', function: {name: 'read_file', parameters: READ_FILE_TOOL.parameters}}],
    tool_choice: 'required',
  })

describe('thinking turned off, each model its own way', {timeout: 60_000}, () => {
  it("a chat client's reasoning_effort none: disabled on Sonnet 5, between_tools on Sonnet 5.5, a low effort on Opus 5.5", async () => {
    await messagesCalls()
    for (const id of ['sonnet5', 'sonnet55', 'opus55']) {
      const answer = await openai(id).chat.completions.create({
        model: 'gpt-5',
        reasoning_effort: 'none',
        messages: [{role: 'user', content: 'Say hello.'}],
      } as any)
      expect(answer.choices[0].message.content).toBeTruthy()
    }
    const calls = await messagesCalls()
    expect(calls.map((c) => [c.thinking ?? null, c.output_config ?? null])).toEqual([
      [{type: 'disabled'}, null],
      [{type: 'between_tools'}, null],
      [null, {effort: 'low'}],
    ])
  })

  it('a name that says nothing learns that it refuses forcing: auto, the call asked for', async () => {
    await messagesCalls()
    const answer = await requiredCall('corp')
    expect(answer.choices[0].message.tool_calls?.[0]).toMatchObject({function: {name: 'read_file'}})
    const calls = await messagesCalls()
    expect(calls.map((c) => c.tool_choice)).toEqual([{type: 'any'}, {type: 'auto'}])
    expect(calls[1].messages.at(-1).content.at(-1).text).toBe('In this answer, call one of the tools.')
    const [row] = await logRows('claude5-corp')
    expect(row.status).toBe(200)
    expect(row.error).toContain('refused a forced tool_choice: sent again with tool_choice auto')
  })

  it('a name that says nothing learns that it thinks beside a forced call: disabled sent with it', async () => {
    await messagesCalls()
    const answer = await requiredCall('think')
    expect(answer.choices[0].message.tool_calls?.[0]).toMatchObject({function: {name: 'read_file'}})
    const calls = await messagesCalls()
    expect(calls.map((c) => [c.tool_choice, c.thinking ?? null])).toEqual([
      [{type: 'any'}, null],
      [{type: 'any'}, {type: 'disabled'}],
    ])
    const [row] = await logRows('claude5-think')
    expect(row.error).toContain('thinks unless told not to: sent again with thinking.type disabled')
  })
})
