/**
 * A JSON schema beside tools to Gemini 2.x (`codex exec --output-schema` routed to
 * gemini-2.5-flash): Gemini 2.0 and 2.5 refuse function declarations with a JSON response mime type
 * ("Function calling with a response mime type: 'application/json' is unsupported"), Gemini 3 takes
 * both. Learned per model from Google's words: the request goes again at once without the mime
 * type and its schema, the schema as an instruction at the end of the system instruction (what a
 * Messages upstream gets beside tools), and so do the model's later requests with tools; one
 * without tools keeps its JSON mode. The real daemon, the simulator's `+no-json-tools` model, the
 * official OpenAI SDK on the Responses entrance.
 */
import OpenAI from 'openai'
import {describe, expect, it} from 'vitest'

import {READ_FILE_TOOL} from './helpers/codex.js'
import {projectLogRows, takeSimCalls, translatedRoutes} from './helpers/gateway.js'

const MODEL = 'gemini-2.5-flash+no-json-tools'

const gw = translatedRoutes({flash: ['sim-gemini', MODEL]}, {prefix: 'gjson', families: ['responses']})

const GEMINI = /:(?:stream)?generateContent$/i

const SCHEMA = {
  type: 'object',
  properties: {summary: {type: 'string'}, files: {type: 'array', items: {type: 'string'}}},
  required: ['summary', 'files'],
  additionalProperties: false,
}

/** `codex exec --output-schema`'s request, cut down: its instructions, a tool, the schema in text.format. */
const codexExec = (tools = true): any => ({
  model: 'gpt-5.5',
  instructions: 'You are Codex.',
  input: [{type: 'message', role: 'user', content: [{type: 'input_text', text: 'List the files.'}]}],
  ...(tools ? {tools: [READ_FILE_TOOL], tool_choice: 'auto'} : {}),
  text: {format: {type: 'json_schema', name: 'codex_output_schema', schema: SCHEMA, strict: true}},
  store: false,
  stream: false,
})

const INSTRUCTION = `Respond with one JSON object only, with no other text, that matches this JSON schema:\n${JSON.stringify(SCHEMA)}`

describe('a JSON schema beside tools to Gemini 2.x', {timeout: 60_000}, () => {
  it('refused once: learned, sent again without the mime type and with the instruction; later requests in one try', async () => {
    await takeSimCalls(gw.simOrigin, GEMINI)
    const client = new OpenAI({baseURL: `${gw.base}/v1`, apiKey: gw.keys.get('flash')!, maxRetries: 0})
    const answer = await client.responses.create(codexExec())
    expect(answer.status).toBe('completed')
    const [refused, again, ...more] = await takeSimCalls(gw.simOrigin, GEMINI)
    expect(more).toEqual([])
    expect(refused.generationConfig).toMatchObject({
      responseMimeType: 'application/json',
      responseJsonSchema: SCHEMA,
    })
    expect(refused.tools[0].functionDeclarations.map((d: {name: string}) => d.name)).toEqual(['read_file'])
    expect(again.generationConfig ?? {}).not.toHaveProperty('responseMimeType')
    expect(again.generationConfig ?? {}).not.toHaveProperty('responseJsonSchema')
    expect(again.tools).toEqual(refused.tools)
    expect(again.systemInstruction.parts).toEqual([{text: 'You are Codex.'}, {text: INSTRUCTION}])
    expect((await projectLogRows(gw.base, 'gjson-flash')).map((r) => [r.status, r.error])).toEqual([
      [
        200,
        'sim-gemini refused a JSON response beside function tools: sent again without the JSON mime type, an instruction to answer JSON at the end of the system instruction',
      ],
    ])
    const {adaptations} = (await (await fetch(`${gw.base}/api/adaptations`)).json()) as {
      adaptations: Array<{model: string; rules: string[]}>
    }
    expect(adaptations.find((a) => a.model === MODEL)?.rules).toEqual([
      'JSON asked for in the system prompt only (to Gemini: in a request with function tools, which it refuses beside a JSON response)',
    ])
    // the next request with tools: one try, as learned; one without tools keeps the JSON mode
    await client.responses.create(codexExec())
    await client.responses.create(codexExec(false))
    const later = await takeSimCalls(gw.simOrigin, GEMINI)
    expect(later.map((b) => b.generationConfig?.responseMimeType)).toEqual([undefined, 'application/json'])
    expect(later[0].systemInstruction.parts.at(-1)).toEqual({text: INSTRUCTION})
    expect(later[1].systemInstruction.parts).toEqual([{text: 'You are Codex.'}])
  })
})
