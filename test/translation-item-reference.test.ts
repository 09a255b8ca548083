/**
 * `item_reference` inputs on a route that translates a Responses client: the AI SDK's Responses
 * provider sends an earlier answer's items back as `{"type": "item_reference", "id"}` unless told
 * `store: false` (the API's default `store` is true), and before, the decoder dropped them without
 * a word, so the model got the conversation without its own turns (a function call's output an
 * orphan). The gateway keeps the items of the answers it wrote and puts back what each id stood
 * for; an id it does not hold gets a 400 that says to send the items in full. The real daemon, the
 * simulator's chat upstream (`deepseek-reasoner`: a tool-call turn must come back with its
 * `reasoning_content`, or DeepSeek's 400), the official OpenAI SDK.
 */
import OpenAI from 'openai'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {
  issueKeyOverApi,
  projectLogRows,
  simPolicy,
  startSimGatewayWithPolicies,
  takeSimCalls,
} from './helpers/gateway.js'

const CHAT_CALL = /\/chat\/completions$/

let base = ''
let simOrigin = ''
let client: OpenAI
let stop: () => Promise<void> = async () => {}

beforeAll(async () => {
  ;({base, simOrigin, stop} = await startSimGatewayWithPolicies([
    simPolicy('itemref', {responses: [{provider: 'sim-chat', model: 'deepseek-reasoner', translate: true}]}),
  ]))
  const key = await issueKeyOverApi(base, 'itemref', 'codex', 'itemref')
  client = new OpenAI({baseURL: `${base}/v1`, apiKey: key, maxRetries: 0})
}, 120_000)

afterAll(() => stop())

const user = (text: string) => ({
  type: 'message' as const,
  role: 'user' as const,
  content: [{type: 'input_text' as const, text}],
})
const reference = (id: string) => ({type: 'item_reference' as const, id})
const TOOLS: OpenAI.Responses.Tool[] = [
  {
    type: 'function',
    name: 'list_files',
    description: 'List the files of a directory.',
    parameters: {type: 'object', properties: {path: {type: 'string'}}, required: ['path']},
    strict: false,
  },
]

describe('item_reference on a translated route', {timeout: 60_000}, () => {
  it("an earlier answer's message by reference: the chat body upstream holds the assistant's text", async () => {
    const first = await client.responses.create({model: 'gpt-5.5', input: [user('Say hello.')]})
    const message = first.output.find((item) => item.type === 'message')!
    expect(message.id).toMatch(/^msg_/)
    const text = first.output_text
    expect(text).not.toBe('')
    await takeSimCalls(simOrigin, CHAT_CALL)

    const second = await client.responses.create({
      model: 'gpt-5.5',
      input: [user('Say hello.'), reference(message.id), user('Now say it again.')],
    })
    expect(second.status).toBe('completed')
    const [body] = await takeSimCalls(simOrigin, CHAT_CALL)
    const turns = body.messages.filter((m: {role: string}) => m.role !== 'system')
    expect(turns.map((m: {role: string}) => m.role)).toEqual(['user', 'assistant', 'user'])
    expect(turns[1].content).toBe(text)
  })

  it("a streamed answer's reasoning and call by reference, then the call's output: the call and result paired, its reasoning back", async () => {
    const stream = client.responses.stream({
      model: 'gpt-5.5',
      input: [user('List the files here.')],
      tools: TOOLS,
    })
    const first = await stream.finalResponse()
    const reasoning = first.output.find((item) => item.type === 'reasoning')!
    const call = first.output.find((item) => item.type === 'function_call')!
    expect([reasoning.id.slice(0, 3), call.id!.slice(0, 3)]).toEqual(['rs_', 'fc_'])
    await takeSimCalls(simOrigin, CHAT_CALL)

    // the AI SDK's next request: its own items by reference, the tool's output in full
    const second = await client.responses.create({
      model: 'gpt-5.5',
      tools: TOOLS,
      input: [
        user('List the files here.'),
        reference(reasoning.id),
        reference(call.id!),
        {type: 'function_call_output', call_id: call.call_id, output: 'a.txt\nb.txt'},
      ],
    })
    // (DeepSeek refuses a tool-call turn without its reasoning_content: a 200 says it went back)
    expect(second.status).toBe('completed')
    const [body] = await takeSimCalls(simOrigin, CHAT_CALL)
    const turns = body.messages.filter((m: {role: string}) => m.role !== 'system')
    expect(turns.map((m: {role: string}) => m.role)).toEqual(['user', 'assistant', 'tool'])
    expect(turns[1].tool_calls).toEqual([
      {id: call.call_id, type: 'function', function: {name: 'list_files', arguments: call.arguments}},
    ])
    expect(turns[1].reasoning_content).toBe(reasoning.summary.map((s) => s.text).join('\n\n'))
    expect(turns[2]).toMatchObject({tool_call_id: call.call_id, content: 'a.txt\nb.txt'})
  })

  it('an id the gateway does not hold: a 400 that says to send the items in full (`store: false`), nothing upstream', async () => {
    const refused = await client.responses
      .create({model: 'gpt-5.5', input: [user('Hi.'), reference('msg_from_elsewhere'), user('And?')]})
      .catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError)
    const message = (refused as Error).message
    expect(message).toContain(
      'an item_reference names item "msg_from_elsewhere", which this gateway does not hold',
    )
    expect(message).toContain("send the conversation's items in full: `store: false`")
    const rows = await projectLogRows(base, 'itemref', 5)
    expect(rows.at(-1)?.status).toBe(400)
    expect(await takeSimCalls(simOrigin, CHAT_CALL)).toEqual([])
  })

  it("a request with `store: false` (Codex) has its answer's items kept for nobody: a later reference to them is refused", async () => {
    const first = await client.responses.create({model: 'gpt-5.5', input: [user('Say hello.')], store: false})
    const message = first.output.find((item) => item.type === 'message')!
    await takeSimCalls(simOrigin, CHAT_CALL)
    const refused = await client.responses
      .create({model: 'gpt-5.5', input: [user('Say hello.'), reference(message.id), user('Again.')]})
      .catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError)
    expect(await takeSimCalls(simOrigin, CHAT_CALL)).toEqual([])
  })
})
