/**
 * The simulator driving Codex's sub-agents (multi-agent v2, `npm run test:agents -- --subagent`):
 * a tool the user's words name (`named-tool`) is called with arguments of its schema, which Codex
 * takes (its spawn_agent refuses a call without `task_name` and `message`, and a task name of any
 * other characters than lowercase letters, digits and underscores); the tools the words name are
 * called one after another (spawn_agent, then wait_agent); the Responses sim reads Codex's
 * `agent_message` item as the user's words, as OpenAI does, so the child answers its task and never
 * spawns again from its parent's words.
 */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {Simulator} from '../server.js'
import {startSim} from '../server.js'
import {namedArgs} from './common.js'
import {geminiAnswer} from './gemini.js'
import {messagesAnswer} from './messages.js'
import {pickedTool} from './quirks.js'
import {responsesAnswer} from './responses.js'

type Json = Record<string, any>

/** Codex 0.171's spawn_agent parameters (its collaboration namespace, as captured), cut down. */
const SPAWN = {
  type: 'object',
  properties: {
    fork_turns: {type: 'string', description: 'Parent history to inherit.'},
    message: {type: 'string', description: 'Initial plain-text task for the new agent.', encrypted: true},
    model: {type: 'string'},
    reasoning_effort: {type: 'string'},
    task_name: {type: 'string', description: 'Use lowercase letters, digits, and underscores.'},
  },
  required: ['task_name', 'message'],
  additionalProperties: false,
}
const WAIT = {type: 'object', properties: {timeout_ms: {type: 'number'}}, additionalProperties: false}
const PROMPT =
  'Count the files in this folder and say how many. tool:collaboration__spawn_agent tool:collaboration__wait_agent'
const SPAWNED = {
  task_name: 'count_the_files_in_this',
  message: 'Count the files in this folder and say how many.',
}

describe('namedArgs: the arguments of a named tool, from its schema', () => {
  it("Codex's spawn_agent: its required names only, the task name an identifier, no tool:NAME in the words", () => {
    expect(namedArgs(SPAWN, PROMPT)).toEqual(SPAWNED)
  })

  it("an enum's first value, a value of each other type, every property when none is required", () => {
    const schema = {
      type: 'object',
      properties: {
        mode: {type: 'string', enum: ['fast', 'slow']},
        limit: {type: 'integer', minimum: 5},
        flags: {type: 'array', items: {type: 'string'}},
        deep: {type: 'boolean'},
        query: {type: 'string'},
        agent_id: {type: 'string'},
      },
    }
    expect(namedArgs(schema, 'Find  it,\nplease!')).toEqual({
      mode: 'fast',
      limit: 5,
      flags: [],
      deep: false,
      query: 'Find it, please!',
      agent_id: 'find_it_please',
    })
    // Gemini's upper-case types; no words left: `sim`
    expect(
      namedArgs({type: 'OBJECT', properties: {n: {type: 'NUMBER'}, id: {type: 'STRING'}}}, 'tool:x'),
    ).toEqual({n: 1, id: 'sim'})
    expect(namedArgs(undefined, 'words')).toEqual({})
  })

  it('the words at most 60 characters, an identifier at most 24 without a trailing underscore', () => {
    const words = 'a'.repeat(70)
    expect(namedArgs({properties: {q: {type: 'string'}}}, words).q).toHaveLength(60)
    expect(namedArgs({properties: {name: {type: 'string'}}}, 'Count the files in this folder').name).toBe(
      'count_the_files_in_this',
    )
  })
})

describe('named-tool: the tools the words name, one after another', () => {
  const quirk = new Set(['named-tool'] as const)
  const names = ['collaboration__spawn_agent', 'collaboration__wait_agent', 'functions__exec']

  it('after the result of one, the next one named (by its name or namespace__name); after the last, none', () => {
    expect(pickedTool(names, PROMPT, quirk)).toEqual({name: 'collaboration__spawn_agent'})
    expect(pickedTool(names, PROMPT, quirk, 'collaboration__spawn_agent')).toEqual({
      name: 'collaboration__wait_agent',
    })
    // the Responses sim knows a call by its own name, the namespace beside it
    expect(pickedTool(names, PROMPT, quirk, 'spawn_agent')).toEqual({name: 'collaboration__wait_agent'})
    expect(pickedTool(names, PROMPT, quirk, 'wait_agent')).toBeUndefined()
    expect(pickedTool(names, PROMPT, quirk, 'functions__exec')).toBeUndefined()
    // without the quirk, or the next one not offered: the result is answered
    expect(pickedTool(names, PROMPT, new Set(), 'spawn_agent')).toBeUndefined()
    expect(pickedTool(names.slice(0, 1), PROMPT, quirk, 'spawn_agent')).toBeUndefined()
  })
})

/** Codex's Lite request on gpt-6.2-sol: its tools in an `additional_tools` item. */
const fn = (name: string, parameters: Json) => ({type: 'function', name, parameters, strict: false})
const TOOLS = [
  {type: 'namespace', name: 'functions', tools: [{type: 'custom', name: 'exec', format: {type: 'text'}}]},
  {type: 'namespace', name: 'collaboration', tools: [fn('spawn_agent', SPAWN), fn('wait_agent', WAIT)]},
]
const user = (text: string) => ({type: 'message', role: 'user', content: [{type: 'input_text', text}]})
const call = (id: string, name: string, args: Json) => ({
  type: 'function_call',
  call_id: id,
  name,
  namespace: 'collaboration',
  arguments: JSON.stringify(args),
})
const output = (id: string, text: string) => ({type: 'function_call_output', call_id: id, output: text})
/** The child's task as Codex 0.171 writes it for a parent that is not on OpenAI's API. */
const TASK = {
  type: 'agent_message',
  author: '/root',
  recipient: '/root/count_the_files_in_this',
  content: [
    {type: 'input_text', text: 'Message Type: NEW_TASK\nPayload:\n'},
    {type: 'encrypted_content', encrypted_content: SPAWNED.message},
  ],
}
const body = (input: Json[]) => ({
  model: 'gpt-6.2-sol',
  input: [{type: 'additional_tools', tools: TOOLS}, ...input],
})
const NAMED = new Set(['named-tool'] as const)

describe('the Responses sim through a sub-agent of Codex', () => {
  it('the parent: spawn_agent with arguments of its schema, then wait_agent, then the answer', () => {
    const first = responsesAnswer(body([user(PROMPT)]), NAMED)
    expect(first.tool).toEqual({name: 'collaboration__spawn_agent', args: SPAWNED})
    const spawned = [
      user(PROMPT),
      call('c1', 'spawn_agent', SPAWNED),
      output('c1', '{"task_name":"/root/x"}'),
    ]
    const second = responsesAnswer(body(spawned), NAMED)
    expect(second.tool).toEqual({name: 'collaboration__wait_agent', args: {timeout_ms: 1}})
    const waited = [...spawned, call('c2', 'wait_agent', {timeout_ms: 1}), output('c2', 'Wait completed.')]
    const third = responsesAnswer(body(waited), NAMED)
    expect(third.tool).toBeUndefined()
    expect(third.text).toBe('The tool answered: Wait completed.')
  })

  it("the child (its parent's history, then its task as an agent_message): answers the task, spawns nothing", () => {
    const answer = responsesAnswer(body([user(PROMPT), TASK]), NAMED)
    expect(answer.tool).toBeUndefined()
    expect(answer.text).toBe('PONG from sim: Message Type: NEW_TASK Payload: Count the files in this fold')
  })
})

describe('the vendor sims: a named tool called with arguments of its schema', () => {
  it('Messages: its input_schema', () => {
    const answer = messagesAnswer(
      {
        model: 'claude-sonnet-4-5',
        max_tokens: 100,
        tools: [{name: 'collaboration__spawn_agent', input_schema: SPAWN}],
        messages: [{role: 'user', content: PROMPT}],
      },
      NAMED,
    )
    expect(answer.tool).toEqual({name: 'collaboration__spawn_agent', args: SPAWNED})
  })

  it('Gemini: its parameters (or parametersJsonSchema)', () => {
    for (const key of ['parameters', 'parametersJsonSchema']) {
      const answer = geminiAnswer(
        {
          contents: [{role: 'user', parts: [{text: PROMPT}]}],
          tools: [{functionDeclarations: [{name: 'collaboration__spawn_agent', [key]: SPAWN}]}],
        },
        NAMED,
      )
      expect(answer.tool).toEqual({name: 'collaboration__spawn_agent', args: SPAWNED})
    }
  })
})

describe('the chat sim through a sub-agent of Codex', () => {
  let sim: Simulator
  beforeAll(async () => {
    sim = await startSim()
  })
  afterAll(async () => {
    await sim.close()
  })

  it("spawn_agent with arguments of its schema from the request itself (Codex's context before it), then wait_agent", async () => {
    const tools = [
      {type: 'function', function: {name: 'collaboration__spawn_agent', parameters: SPAWN}},
      {type: 'function', function: {name: 'collaboration__wait_agent', parameters: WAIT}},
    ]
    const ask = async (messages: Json[]) => {
      const response = await fetch(`${sim.origin}/v1/chat/completions`, {
        method: 'POST',
        headers: {'content-type': 'application/json', authorization: 'Bearer sk-test'},
        body: JSON.stringify({model: 'sim-mini+named-tool', tools, messages}),
      })
      return ((await response.json()) as Json).choices[0].message.tool_calls?.[0]
    }
    const prompt = {
      role: 'user',
      content: `<environment_context>\n  <cwd>/tmp/w</cwd>\n</environment_context>\n\n${PROMPT}`,
    }
    const spawn = await ask([prompt])
    expect(spawn.function.name).toBe('collaboration__spawn_agent')
    expect(JSON.parse(spawn.function.arguments)).toEqual(SPAWNED)
    const wait = await ask([
      prompt,
      {role: 'assistant', content: null, tool_calls: [spawn]},
      {role: 'tool', tool_call_id: spawn.id, content: '{"task_name":"/root/count_the_files_in_this"}'},
    ])
    expect(wait.function.name).toBe('collaboration__wait_agent')
    expect(JSON.parse(wait.function.arguments)).toEqual({timeout_ms: 1})
  })
})
