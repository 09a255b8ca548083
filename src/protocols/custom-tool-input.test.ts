import {describe, expect, it} from 'vitest'

import type {Family} from './ir.js'
import {decodeClientRequest, encodeUpstreamRequest, StreamTranslator, translateResponse} from './translate.js'

// Codex's custom (free-form) tools through an upstream of another family (research49 #1): what
// Codex gets as `custom_tool_call.input` is the patch or the code whole, whatever shape the model
// wrote it in

const DESCRIPTION =
  'The `apply_patch` tool can be used to edit files. This is a FREEFORM tool, so do not wrap the patch in JSON.'
const PATCH = "*** Begin Patch\n*** Update File: a.py\n@@\n-cfg = {}\n+cfg = {'debug': True}\n*** End Patch"
const CODE = 'const r = await tools.shell({"command": ["ls", "-la"]});\ntext(r.output);'

const codex = (stream = false) =>
  decodeClientRequest(
    'responses',
    {
      model: 'gpt-5.5',
      input: [{type: 'message', role: 'user', content: [{type: 'input_text', text: 'edit'}]}],
      tools: [
        {type: 'custom', name: 'apply_patch', description: DESCRIPTION, format: {type: 'grammar'}},
        {type: 'custom', name: 'exec', description: 'Run JavaScript.', format: {type: 'text'}},
        {
          type: 'function',
          name: 'shell',
          parameters: {type: 'object', properties: {command: {type: 'string'}}},
        },
      ],
      stream,
    },
    {},
  )

const chatAnswer = (name: string, args: string) => ({
  id: 'c1',
  object: 'chat.completion',
  model: 'm',
  choices: [
    {
      index: 0,
      finish_reason: 'tool_calls',
      message: {
        role: 'assistant',
        content: null,
        tool_calls: [{id: 't1', type: 'function', function: {name, arguments: args}}],
      },
    },
  ],
  usage: {prompt_tokens: 10, completion_tokens: 5},
})

/** The one call item Codex gets for a chat model's call of `name` with `args`. */
function itemFor(name: string, args: string): Record<string, unknown> {
  const client = codex()
  const out = translateResponse('chat', client, chatAnswer(name, args), {tools: client.request.tools})
  return (out.body.output as Array<Record<string, unknown>>).find((i) => i.call_id === 't1') ?? {}
}

describe("a custom tool's description upstream", () => {
  const toolsSent = (family: Family, ctx = {}) =>
    JSON.parse(encodeUpstreamRequest(codex(), family, 'm', ctx).body.toString()) as Record<string, unknown>

  it('tells a chat, Messages or Gemini model to put the patch in `input`, the rest of it kept', () => {
    const said =
      'The `apply_patch` tool can be used to edit files. Put the whole patch text in the `input` string.'
    const chat = toolsSent('chat').tools as Array<{function: Record<string, unknown>}>
    expect(chat[0].function).toMatchObject({name: 'apply_patch', description: said})
    expect(chat[0].function.parameters).toMatchObject({properties: {input: {type: 'string'}}})
    expect(chat[1].function.description).toBe('Run JavaScript.')
    const messages = toolsSent('messages').tools as Array<Record<string, unknown>>
    expect(messages[0]).toMatchObject({name: 'apply_patch', description: said})
    const gemini = toolsSent('gemini').tools as Array<{functionDeclarations: Array<Record<string, unknown>>}>
    expect(gemini[0].functionDeclarations[0]).toMatchObject({name: 'apply_patch', description: said})
    // a Responses server that takes only functions gets the function's words too
    const plain = toolsSent('responses', {plainTools: true}).tools as Array<Record<string, unknown>>
    expect(plain[0]).toMatchObject({type: 'function', name: 'apply_patch', description: said})
  })

  it("goes to a Responses upstream that takes custom tools in Codex's own words", () => {
    const tools = toolsSent('responses').tools as Array<Record<string, unknown>>
    expect(tools[0]).toEqual({
      type: 'custom',
      name: 'apply_patch',
      description: DESCRIPTION,
      format: {type: 'grammar'},
    })
  })
})

describe("a chat model's call of a custom tool, to Codex", () => {
  it.each([
    ['the patch raw, a `{}` in it', PATCH, PATCH],
    ['JavaScript raw, an object in it', CODE, CODE],
    ['{"input": …}', JSON.stringify({input: PATCH}), PATCH],
    ['{"patch": …}', JSON.stringify({patch: PATCH}), PATCH],
    ['{"command": ["apply_patch", …]}', JSON.stringify({command: ['apply_patch', PATCH]}), PATCH],
    ['a JSON string of it', JSON.stringify(PATCH), PATCH],
    ['in a fence', '```diff\n' + PATCH + '\n```', PATCH],
    ['in a heredoc', "apply_patch <<'EOF'\n" + PATCH + '\nEOF\n', PATCH],
    ['{"input": …} in a fence', JSON.stringify({input: '```\n' + PATCH + '\n```'}), PATCH],
    ["Qwen3-Coder's parameter form", `<parameter=input>\n${PATCH}\n</parameter>`, PATCH],
  ])('%s: the input whole', (_, args, input) => {
    expect(itemFor('apply_patch', args)).toMatchObject({
      type: 'custom_tool_call',
      name: 'apply_patch',
      input,
      status: 'completed',
    })
  })

  it("keeps a custom tool's own JSON input: one key of another name is no wrapper (review50b B2)", () => {
    for (const raw of ['{"query":"select 1"}', '{"name":"x"}'])
      expect(itemFor('apply_patch', raw)).toMatchObject({type: 'custom_tool_call', input: raw})
  })

  it("keeps an input that holds a fence or a heredoc of its own, and repairs a function's arguments as before", () => {
    const md = '*** Begin Patch\n*** Add File: a.md\n+```sh\n+cat <<EOF\n+x\n+EOF\n+```\n*** End Patch'
    expect(itemFor('apply_patch', JSON.stringify({input: md})).input).toBe(md)
    expect(itemFor('exec', JSON.stringify({code: CODE})).input).toBe(CODE)
    expect(itemFor('shell', "{'command': 'ls'}")).toMatchObject({
      type: 'function_call',
      arguments: '{"command": "ls"}',
    })
  })
})

describe("a chat model's streamed call of a custom tool, to Codex", () => {
  const chunk = (delta: unknown, finish: string | null = null) =>
    'data: ' +
    JSON.stringify({
      id: 'c1',
      object: 'chat.completion.chunk',
      model: 'm',
      choices: [{index: 0, delta, finish_reason: finish}],
    }) +
    '\n\n'

  function streamed(name: string, args: string): {done: Record<string, unknown>; input: string} {
    const client = codex(true)
    const t = new StreamTranslator('chat', client, {
      newId: (p: string) => `${p}1`,
      tools: client.request.tools,
    })
    const call = (a: string) => chunk({tool_calls: [{index: 0, function: {arguments: a}}]})
    const cut = Math.floor(args.length / 2)
    const sse =
      chunk({role: 'assistant', content: ''}) +
      chunk({tool_calls: [{index: 0, id: 'call_1', type: 'function', function: {name, arguments: ''}}]}) +
      call(args.slice(0, cut)) +
      call(args.slice(cut)) +
      chunk({}, 'tool_calls') +
      'data: [DONE]\n\n'
    const events = (t.push(Buffer.from(sse)) + t.end())
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => JSON.parse(l.slice(6)) as Record<string, unknown>)
    const done = events.find((e) => e.type === 'response.output_item.done')?.item as Record<string, unknown>
    const input = events.find((e) => e.type === 'response.custom_tool_call_input.done')?.input as string
    return {done, input}
  }

  it.each([
    ['the patch raw', PATCH],
    ['JavaScript raw', CODE],
    ['{"patch": …}', JSON.stringify({patch: PATCH})],
    ['{"input": …}', JSON.stringify({input: PATCH})],
  ])('%s: the input whole, in the done item and event', (_, args) => {
    const want = args === CODE ? CODE : PATCH
    const {done, input} = streamed(args === CODE ? 'exec' : 'apply_patch', args)
    expect(done).toMatchObject({type: 'custom_tool_call', input: want, status: 'completed'})
    expect(input).toBe(want)
  })
})

describe("a Messages or Gemini model's call of a custom tool, to Codex", () => {
  it('has its input taken out of a key of another name', () => {
    const client = codex()
    const messages = translateResponse('messages', client, {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'm',
      content: [{type: 'tool_use', id: 'tu_1', name: 'apply_patch', input: {patch: PATCH}}],
      stop_reason: 'tool_use',
      usage: {input_tokens: 5, output_tokens: 5},
    })
    expect((messages.body.output as Array<Record<string, unknown>>)[0]).toMatchObject({
      type: 'custom_tool_call',
      input: PATCH,
    })
    const gemini = translateResponse('gemini', client, {
      candidates: [
        {
          content: {
            role: 'model',
            parts: [{functionCall: {name: 'apply_patch', args: {command: ['apply_patch', PATCH]}}}],
          },
          finishReason: 'STOP',
        },
      ],
      usageMetadata: {promptTokenCount: 5, candidatesTokenCount: 5},
    })
    expect((gemini.body.output as Array<Record<string, unknown>>)[0]).toMatchObject({
      type: 'custom_tool_call',
      input: PATCH,
    })
  })
})
