/**
 * Codex's sub-agents (multi-agent v2, the default of gpt-5.6-sol, gpt-5.6-terra and gpt-6*): the
 * sub-agent's task comes in an `agent_message` input item. Before, a translated route dropped it
 * (Anthropic got `messages: []`, the child asked "what would you like me to do?") and a Responses
 * server that is not OpenAI's refused it (Ollama's `unknown input item type: "agent_message"`).
 * Now a translated upstream gets the task as a user turn, a Responses server on this machine gets
 * it as a user message, OpenAI's API gets the item as it came, and OpenAI's ciphertext on a
 * translated route is refused by name. The real daemon, the simulator, the official OpenAI SDK.
 */
import type {IncomingMessage, ServerResponse} from 'node:http'
import {createServer} from 'node:http'
import type {AddressInfo} from 'node:net'

import OpenAI from 'openai'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {PolicyTarget} from '../src/store/schema.js'
import {
  issueKeyOverApi,
  projectLogRows,
  simPolicy,
  startSimGatewayWithPolicies,
  takeSimCalls,
} from './helpers/gateway.js'

/** What the Ollama-like upstream got, in order. */
const received: Array<Record<string, any>> = []

/** A Responses server as Ollama's: it refuses an `agent_message` item as Ollama does, else answers. */
const ollama = createServer((req: IncomingMessage, res: ServerResponse) => {
  let data = ''
  req.on('data', (c: Buffer) => (data += c))
  req.on('end', () => {
    const body = JSON.parse(data) as Record<string, any>
    received.push(body)
    if (data.includes('"agent_message"')) {
      res.writeHead(400, {'content-type': 'application/json'})
      res.end(JSON.stringify({error: {message: 'unknown input item type: "agent_message"'}}))
      return
    }
    const message = {
      type: 'message',
      id: 'msg_o',
      role: 'assistant',
      status: 'completed',
      content: [{type: 'output_text', text: '12 files.', annotations: []}],
    }
    res.writeHead(200, {'content-type': 'application/json'})
    res.end(
      JSON.stringify({
        id: 'resp_o',
        object: 'response',
        created_at: 1,
        status: 'completed',
        model: body.model,
        output: [message],
        usage: {input_tokens: 20, output_tokens: 3, total_tokens: 23},
      }),
    )
  })
})

let base = ''
let simOrigin = ''
let stop: () => Promise<void> = async () => {}
const keys = new Map<string, string>()
const IDS = ['messages', 'chat', 'openai', 'ollama'] as const

beforeAll(async () => {
  await new Promise<void>((resolve) => ollama.listen(0, '127.0.0.1', resolve))
  const port = (ollama.address() as AddressInfo).port
  const policy = (id: string, target: PolicyTarget) => simPolicy(`agentmsg-${id}`, {responses: [target]})
  ;({base, simOrigin, stop} = await startSimGatewayWithPolicies(
    [
      policy('messages', {provider: 'sim-messages', model: 'claude-sonnet-4-5', translate: true}),
      policy('chat', {provider: 'sim-chat', model: 'deepseek-chat', translate: true}),
      policy('openai', {provider: 'sim-responses', model: 'gpt-5.6-sol'}),
      policy('ollama', {provider: 'ollama', model: 'qwen3-coder'}),
    ],
    [{name: 'ollama', family: 'responses', baseUrl: `http://127.0.0.1:${port}/v1`}],
  ))
  for (const id of IDS) keys.set(id, await issueKeyOverApi(base, `agentmsg-${id}`, 'codex', `agentmsg-${id}`))
}, 120_000)

afterAll(async () => {
  await stop()
  ollama.close()
})

const client = (id: string) => new OpenAI({baseURL: `${base}/v1`, apiKey: keys.get(id)!, maxRetries: 0})

/** The item as Codex 0.171 writes it for a parent that is not on OpenAI's API: the task as it came. */
const agentMessage = (task: string) => ({
  type: 'agent_message',
  author: '/root',
  recipient: '/root/worker',
  content: [
    {type: 'input_text', text: 'Task from /root. Payload:\n'},
    {type: 'encrypted_content', encrypted_content: task},
  ],
})

/** A sub-agent's first request, cut down: Codex's instructions, its task, one tool. */
const childRequest = (task = 'Count the files in src.') =>
  ({
    model: 'gpt-5.6-sol',
    instructions: 'You are Codex, a sub-agent.',
    input: [agentMessage(task)],
    tools: [
      {
        type: 'function',
        name: 'exec',
        description: 'Run a command.',
        parameters: {type: 'object', properties: {cmd: {type: 'string'}}, required: ['cmd']},
        strict: false,
      },
    ],
    store: false,
  }) as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming

const TASK_TEXT = 'Message from /root:\nTask from /root. Payload:\nCount the files in src.'

describe("Codex's sub-agent task (an agent_message item) through the gateway", {timeout: 60_000}, () => {
  it('translated to Messages: the task is the user turn Anthropic gets; the answer and the row', async () => {
    await takeSimCalls(simOrigin, /\/v1\/messages$/)
    const answer = await client('messages').responses.create(childRequest())
    const [sent, ...more] = await takeSimCalls(simOrigin, /\/v1\/messages$/)
    expect(more).toEqual([])
    expect(sent.messages).toMatchObject([{role: 'user', content: [{type: 'text', text: TASK_TEXT}]}])
    expect(answer.status).toBe('completed')
    expect(answer.output.length).toBeGreaterThan(0)
    const [row] = await projectLogRows(base, 'agentmsg-messages', 1)
    expect([row.status, row.error, row.upstreamFamily]).toEqual([200, null, 'messages'])
  })

  it('translated to chat, streamed: the task is the user message', async () => {
    await takeSimCalls(simOrigin, /\/chat\/completions$/)
    const answer = await client('chat')
      .responses.stream({...childRequest(), stream: true})
      .finalResponse()
    const [sent] = await takeSimCalls(simOrigin, /\/chat\/completions$/)
    expect(sent.messages).toEqual([
      {role: 'system', content: 'You are Codex, a sub-agent.'},
      {role: 'user', content: TASK_TEXT},
    ])
    expect(answer.status).toBe('completed')
    const [row] = await projectLogRows(base, 'agentmsg-chat', 1)
    expect([row.status, row.upstreamFamily]).toEqual([200, 'chat'])
  })

  it("OpenAI's ciphertext on a translated route: a 400 that says why, nothing sent upstream", async () => {
    await takeSimCalls(simOrigin, /\/v1\/messages$/)
    const refused = await client('messages')
      .responses.create(childRequest('gAAAAABpZ1x2-opaque=='))
      .catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError)
    expect((refused as Error).message).toContain(
      "an agent_message item (Codex's message between its agents) holds its text encrypted by OpenAI",
    )
    expect(await takeSimCalls(simOrigin, /\/v1\/messages$/)).toEqual([])
    const rows = await projectLogRows(base, 'agentmsg-messages', 2)
    expect(rows[1].status).toBe(400)
  })

  it("OpenAI's API: the item passes through as Codex sent it", async () => {
    await takeSimCalls(simOrigin, /\/v1\/responses$/)
    const answer = await client('openai').responses.create(childRequest())
    const [sent] = await takeSimCalls(simOrigin, /\/v1\/responses$/)
    expect(sent.input).toEqual([agentMessage('Count the files in src.')])
    expect(answer.status).toBe('completed')
  })

  it('a Responses server on this machine (Ollama): the task as a user message from the first request', async () => {
    received.length = 0
    const answer = await client('ollama').responses.create(childRequest())
    expect(received).toHaveLength(1)
    expect(received[0].input).toEqual([
      {type: 'message', role: 'user', content: [{type: 'input_text', text: TASK_TEXT}]},
    ])
    expect(received[0].instructions).toBe('You are Codex, a sub-agent.')
    expect(answer.output_text).toBe('12 files.')
    const [row] = await projectLogRows(base, 'agentmsg-ollama', 1)
    expect([row.status, row.error, row.provider]).toEqual([200, null, 'ollama'])
  })
})
