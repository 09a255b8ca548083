/**
 * Encrypted content of another provider or account in Codex's request passed through
 * (./encrypted-content.ts): the upstream's refusal (OpenAI's `invalid_encrypted_content`, ChatGPT's
 * `code: null` words, a relay's escaped) sends the request again at once without the reasoning
 * items' ciphertext, an empty item left out; nothing learned; other 400s pass as they came; a
 * compaction item of another account is answered a 400 that says to start a new conversation.
 */
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'

import type {Simulator} from '../../sim/server.js'
import {startSim} from '../../sim/server.js'
import {
  refusesForeignCiphertext,
  unrepairableCiphertext,
  withoutReasoningCiphertext,
} from './encrypted-content.js'
import {learnedAdaptations, type ProxyTarget} from './proxy.js'
import type {GatewayRoute, Refusal, Upstream} from './proxy-fixture.js'
import {ProxyGateway, RESPONSES_ANSWER, RESPONSES_STREAM, startJudgedUpstream} from './proxy-fixture.js'

/** OpenAI's API: the ciphertext cut, code `invalid_encrypted_content`. */
const OPENAI_REFUSAL: Refusal = {
  status: 400,
  body: {
    error: {
      message: 'The encrypted content gAAA...Rg== could not be verified.',
      type: 'invalid_request_error',
      param: null,
      code: 'invalid_encrypted_content',
    },
  },
}
/** ChatGPT's backend: the item named, `code: null`. */
const CHATGPT_REFUSAL: Refusal = {
  status: 400,
  body: {
    error: {
      message:
        'The encrypted content for item rs_0a1 could not be verified. Reason: Encrypted content could not be decrypted or parsed.',
      type: 'invalid_request_error',
      param: null,
      code: null,
    },
  },
}
/** A relay's: the upstream's body as text inside its own message. */
const RELAY_REFUSAL: Refusal = {
  status: 400,
  body: {
    error: {
      message: `upstream error: ${JSON.stringify({
        error: {message: 'The encrypted content for item rs_0a1 could not be verified.', code: null},
      })}`,
      type: 'upstream_error',
    },
  },
}
/** The refusal of a compaction item, by its id. */
const COMPACTION_REFUSAL: Refusal = {
  status: 400,
  body: {
    error: {
      message:
        'The encrypted content for item cmp_0b2 could not be verified. Reason: Encrypted content could not be decrypted or parsed.',
      type: 'invalid_request_error',
      param: null,
      code: null,
    },
  },
}
/** Another 400, whose words are not about encrypted content. */
const OTHER_REFUSAL: Refusal = {
  status: 400,
  body: {
    error: {
      message: "Invalid value: 'foo'. Supported values are: 'low', 'medium', and 'high'.",
      type: 'invalid_request_error',
      param: 'reasoning.effort',
      code: 'invalid_value',
    },
  },
}

/** Ciphertext another account made (OpenAI's Fernet tokens start `gAAAAA`). */
const FOREIGN = 'gAAAAABpForeignCiphertextOfAccountB=='

/** Codex's request, cut down: a tool loop whose reasoning items another account encrypted. */
const codexBody = (extra: unknown[] = [], stream = false) => ({
  model: 'gpt-5.5',
  instructions: 'You are Codex.',
  input: [
    ...extra,
    {type: 'message', role: 'user', content: [{type: 'input_text', text: 'List the files.'}]},
    {
      type: 'reasoning',
      id: 'rs_0a1',
      summary: [{type: 'summary_text', text: '**Listing files**'}],
      encrypted_content: FOREIGN,
    },
    {type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'exec', arguments: '{"cmd":"ls"}'},
    {type: 'function_call_output', call_id: 'call_1', output: 'a.ts b.ts'},
    {type: 'reasoning', id: 'rs_0a2', summary: [], encrypted_content: FOREIGN},
    {
      type: 'message',
      id: 'msg_1',
      role: 'assistant',
      content: [{type: 'output_text', text: 'Two files.'}],
    },
    {type: 'message', role: 'user', content: [{type: 'input_text', text: 'Read a.ts.'}]},
  ],
  tools: [
    {
      type: 'function',
      name: 'exec',
      parameters: {type: 'object', properties: {cmd: {type: 'string'}}, required: ['cmd']},
    },
  ],
  tool_choice: 'auto',
  parallel_tool_calls: true,
  reasoning: {effort: 'medium', summary: 'auto'},
  store: false,
  stream,
  include: ['reasoning.encrypted_content'],
  prompt_cache_key: 'session-1',
})

/** A compaction item another account's remote compaction made. */
const COMPACTION = {type: 'compaction', id: 'cmp_0b2', encrypted_content: FOREIGN}

const received: Buffer[] = []
/** How the upstream refuses a body that holds another account's ciphertext. */
let refusal: Refusal | undefined
/** Refuses every request while set. */
let refuseAll: Refusal | undefined
let upstream: Upstream
let route: GatewayRoute
let gateway: ProxyGateway

beforeAll(async () => {
  upstream = await startJudgedUpstream(
    received,
    (body) => refuseAll ?? (refusal && JSON.stringify(body).includes(FOREIGN) ? refusal : undefined),
    {stream: RESPONSES_STREAM, json: RESPONSES_ANSWER},
  )
  gateway = new ProxyGateway({route: () => route})
  await gateway.listen()
})

afterEach(() => {
  received.length = 0
  gateway.results.length = 0
  refusal = undefined
  refuseAll = undefined
})

afterAll(async () => {
  await gateway.close()
  upstream.close()
})

const target = (name: string, baseUrl = `${upstream.origin}/v1`): ProxyTarget => ({
  provider: {name, family: 'responses', baseUrl, credential: {secret: 'upstream-key'}},
})

const CODEX_HEADERS = {originator: 'codex_exec', 'user-agent': 'codex_exec/0.171.0'}

const post = (body: unknown, headers: Record<string, string> = CODEX_HEADERS) =>
  fetch(`${gateway.url}/v1/responses`, {
    method: 'POST',
    headers: {'content-type': 'application/json', authorization: 'Bearer client', ...headers},
    body: JSON.stringify(body),
  })

const sent = (i: number) => JSON.parse(String(received[i])) as {input: Array<Record<string, unknown>>}

describe("another account's encrypted reasoning refused: sent again without it", () => {
  it("OpenAI's invalid_encrypted_content: the second try without the ciphertext, an empty item left out, 200; not learned", async () => {
    refusal = OPENAI_REFUSAL
    route = {targets: [target('openai-a')]}
    const body = codexBody()
    const res = await post(body)
    expect(res.status).toBe(200)
    expect(((await res.json()) as {id: string}).id).toBe('resp_1')
    expect(received).toHaveLength(2)
    // the first try as Codex sent it
    expect(JSON.parse(String(received[0]))).toEqual(body)
    // the second: no ciphertext at all, both encrypted reasoning items left out (one kept with its
    // id and summary alone would be looked up by its id, which store: false never kept)
    expect(received[1].includes('"encrypted_content"')).toBe(false)
    const again = sent(1)
    expect(again.input).toEqual(body.input.filter((item) => (item as {type?: string}).type !== 'reasoning'))
    // everything else as it came (its include too: the answer's reasoning is this account's)
    const {input: _i, ...rest} = again as unknown as Record<string, unknown>
    const {input: _j, ...restSent} = body
    expect(rest).toEqual(restSent)
    const [result] = await gateway.settled(1)
    expect(result.status).toBe(200)
    expect(result.attempts).toEqual([{provider: 'openai-a', status: 200}])
    expect(result.error).toBe(
      "openai-a refused another account's encrypted reasoning: sent again without it (2 reasoning items left out)",
    )
    // the conversation's, not the model's: nothing learned, the next turn refused and sent again too
    expect(learnedAdaptations().find((a) => a.provider === 'openai-a')).toBeUndefined()
    expect((await post(body)).status).toBe(200)
    expect(received).toHaveLength(4)
    expect(received[3].equals(received[1])).toBe(true)
  })

  it("ChatGPT's code: null words, and a relay's escaped in its message, do it too (a stream too)", async () => {
    route = {targets: [target('chatgpt')]}
    for (const [i, words] of [CHATGPT_REFUSAL, RELAY_REFUSAL].entries()) {
      refusal = words
      const res = await post(codexBody([], true))
      expect(res.status).toBe(200)
      expect(await res.text()).toContain('response.completed')
      expect(received).toHaveLength(2 * (i + 1))
      expect(received[2 * i + 1].includes('"encrypted_content"')).toBe(false)
    }
  })

  it('every reasoning item with ciphertext is left out, whatever text it has; one without any stays', () => {
    const body = Buffer.from(
      JSON.stringify({
        input: [
          {
            type: 'reasoning',
            id: 'rs_1',
            summary: [],
            content: [{type: 'reasoning_text', text: 'why'}],
            encrypted_content: 'x',
          },
          {
            type: 'reasoning',
            id: 'rs_2',
            summary: [{type: 'summary_text', text: 'a summary'}],
            encrypted_content: 'x',
          },
          {type: 'reasoning', id: 'rs_3', summary: [{type: 'summary_text', text: 'kept as it was'}]},
          {type: 'message', role: 'user', content: 'hi'},
        ],
      }),
    )
    const again = withoutReasoningCiphertext(body)!
    expect(again.dropped).toBe(2)
    expect(JSON.parse(String(again.body))).toEqual({
      input: [
        {type: 'reasoning', id: 'rs_3', summary: [{type: 'summary_text', text: 'kept as it was'}]},
        {type: 'message', role: 'user', content: 'hi'},
      ],
    })
    // nothing to take out: no second try
    expect(withoutReasoningCiphertext(again.body)).toBeUndefined()
    expect(withoutReasoningCiphertext(Buffer.from('not json'))).toBeUndefined()
  })

  it('reads the refusal by its words only', () => {
    for (const r of [OPENAI_REFUSAL, CHATGPT_REFUSAL, RELAY_REFUSAL, COMPACTION_REFUSAL])
      expect(refusesForeignCiphertext(JSON.stringify(r.body))).toBe(true)
    expect(refusesForeignCiphertext('Could not decrypt the provided encrypted_content')).toBe(true)
    for (const words of [
      JSON.stringify(OTHER_REFUSAL.body),
      "Item with id 'rs_68a' not found. Items are not persisted when `store` is set to false.",
      'The encrypted content is fine.',
    ])
      expect(refusesForeignCiphertext(words)).toBe(false)
  })
})

describe('other refusals, and what cannot be left out', () => {
  it('a 400 in other words goes to the client as it came, after one try', async () => {
    refuseAll = OTHER_REFUSAL
    route = {targets: [target('openai-other')]}
    const body = codexBody()
    const res = await post(body)
    expect(res.status).toBe(400)
    expect(await res.json()).toEqual(OTHER_REFUSAL.body)
    expect(received).toHaveLength(1)
    expect(JSON.parse(String(received[0]))).toEqual(body)
    const [result] = await gateway.settled(1)
    expect(result.error).toBeNull()
  })

  it("another account's compaction item: stripping the reasoning is not enough, the client is told to start a new conversation", async () => {
    refusal = OPENAI_REFUSAL
    route = {targets: [target('openai-cmp')]}
    const res = await post(codexBody([COMPACTION]))
    expect(res.status).toBe(400)
    const answer = (await res.json()) as {error: {message: string; type: string; code: string}}
    expect(answer.error.type).toBe('invalid_request_error')
    expect(answer.error.code).toBe('invalid_encrypted_content')
    expect(answer.error.message).toMatch(
      /^this conversation holds content encrypted by another provider or account, which openai-cmp refused: a compaction item .*Start a new conversation, or route this one back to the provider \(and account\) that made it$/,
    )
    // refused, sent again without the reasoning's ciphertext (the compaction item kept), refused again
    expect(received).toHaveLength(2)
    expect(sent(1).input[0]).toEqual(COMPACTION)
    expect(sent(1).input.filter((i) => i.type === 'reasoning' && 'encrypted_content' in i)).toEqual([])
    const [result] = await gateway.settled(1)
    expect(result.status).toBe(400)
    expect(result.error).toContain(
      "openai-cmp refused another account's encrypted content that cannot be left out (a compaction item): answered 400, start a new conversation",
    )
  })

  it('a refusal that names the compaction item is answered so after one try', async () => {
    refusal = COMPACTION_REFUSAL
    route = {targets: [target('chatgpt-cmp')]}
    const res = await post(codexBody([COMPACTION]))
    expect(res.status).toBe(400)
    expect(((await res.json()) as {error: {message: string}}).error.message).toContain('a compaction item')
    expect(received).toHaveLength(1)
  })

  it("finds a compaction item or an agent_message's encrypted text", () => {
    const of = (item: unknown) => unrepairableCiphertext(Buffer.from(JSON.stringify({input: [item]})))
    expect(of(COMPACTION)).toBe('compaction')
    expect(
      of({
        type: 'agent_message',
        author: 'parent',
        content: [{type: 'encrypted_content', encrypted_content: FOREIGN}],
      }),
    ).toBe('agent_message')
    expect(of({type: 'reasoning', summary: [], encrypted_content: FOREIGN})).toBeUndefined()
  })
})

describe("the simulator's encrypted-foreign quirk: a conversation answered by account B continued on account A", () => {
  let sim: Simulator
  beforeAll(async () => {
    sim = await startSim()
  })
  afterAll(async () => {
    await sim.close()
  })

  const account = (name: string, key: string): ProxyTarget => ({
    provider: {name, family: 'responses', baseUrl: sim.origin, credential: {secret: key}},
    model: 'gpt-5.5+encrypted-foreign',
  })

  it("A refuses B's reasoning in ChatGPT's words; sent again without it, answered", async () => {
    const first = {
      model: 'gpt-5.5',
      input: [{type: 'message', role: 'user', content: [{type: 'input_text', text: 'Say hello.'}]}],
      reasoning: {effort: 'medium', summary: 'auto'},
      store: false,
      include: ['reasoning.encrypted_content'],
    }
    route = {targets: [account('account-b', 'key-b')]}
    const answered = (await (await post(first)).json()) as {output: Array<Record<string, unknown>>}
    const reasoning = answered.output.find((i) => i.type === 'reasoning')!
    expect(reasoning.encrypted_content).toEqual(expect.any(String))
    const second = {
      ...first,
      input: [
        ...first.input,
        ...answered.output,
        {type: 'message', role: 'user', content: [{type: 'input_text', text: 'Again.'}]},
      ],
    }
    // B reads its own
    sim.requests.length = 0
    expect((await post(second)).status).toBe(200)
    expect(sim.requests).toHaveLength(1)
    // A does not: refused, sent again without it, answered
    route = {targets: [account('account-a', 'key-a')]}
    sim.requests.length = 0
    gateway.results.length = 0
    const res = await post(second)
    expect(res.status).toBe(200)
    expect(sim.requests).toHaveLength(2)
    const retried = sim.requests[1].body as {input: Array<Record<string, unknown>>}
    // (B's reasoning item left out whole; the rest of the conversation as it came)
    expect(retried.input.some((i) => i.type === 'reasoning' || i.id === reasoning.id)).toBe(false)
    expect(retried.input).toHaveLength(second.input.length - 1)
    const [result] = await gateway.settled(1)
    expect(result.error).toContain("account-a refused another account's encrypted reasoning")
  })
})
