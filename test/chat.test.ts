import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import type {Simulator} from '../src/sim/server.js'
import {startSim} from '../src/sim/server.js'
import type {CliResult} from './helpers/cli.js'
import {json, runCli, spawnCli, tempHome} from './helpers/cli.js'

let sim: Simulator
let home: {home: string; cleanup: () => void}

beforeEach(async () => {
  sim = await startSim({timeScale: 100})
  home = tempHome()
})
afterEach(async () => {
  await sim.close()
  home.cleanup()
})

const env = (): Record<string, string> => ({GWCTL_BASE_URL: sim.baseUrl, GWCTL_API_KEY: 'test-key'})
const chat = (args: string[], input?: string): Promise<CliResult> =>
  runCli(['chat', ...args], {home: home.home, env: env(), input})
const chatRequests = (): any[] =>
  sim.requests.filter((r) => r.path === '/api/v1/chat/completions').map((r) => r.body)

/** Resolves once `stream` has printed text matching `pattern`. */
function waitFor(stream: NodeJS.ReadableStream, pattern: RegExp): Promise<string> {
  let seen = ''
  return new Promise((resolve) => {
    stream.on('data', (chunk: Buffer) => {
      seen += chunk.toString()
      if (pattern.test(seen)) resolve(seen)
    })
  })
}

describe('gwctl chat', () => {
  it('streams the answer to stdout and a stats line to stderr, asking for exact usage', async () => {
    const r = await chat(['--model', 'sim-pro', 'hello', 'world'])
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toBe(
      'Hello from alpha-cloud! You said: "hello world". This is a simulated reply of sim-pro.\n',
    )
    expect(r.stderr).toMatch(
      /^alpha-cloud · sim-pro · \d+ prompt \(0 cached\) \+ 14 completion \(0 reasoning\) tokens · first token [\d.]+ s · [\d.]+ tokens\/s\n$/,
    )
    const [body] = chatRequests()
    expect(body).toEqual({
      model: 'sim-pro',
      messages: [{role: 'user', content: 'hello world'}],
      stream: true,
      stream_options: {include_usage: true},
    })
  })

  it('prints tokens as they arrive, before the answer is complete', async () => {
    sim.faults.add({chunkDelayMs: 300, path: '/chat/completions'})
    const child = spawnCli(['chat', '-m', 'sim-mini', 'slowly'], {home: home.home, env: env()})
    child.stdin?.end()
    const early = await waitFor(child.stdout!, /Hello/)
    expect(child.exitCode).toBeNull()
    expect(early).not.toContain('simulated reply')
    const done = await child
    expect(String(done.stdout)).toContain('This is a simulated reply of sim-mini.')
  })

  it('takes the default model from the chat.model setting', async () => {
    await runCli(['config', 'set', 'chat.model', 'sim-mini'], {home: home.home})
    const r = await chat(['hi'])
    expect(r.exitCode).toBe(0)
    expect(chatRequests()[0].model).toBe('sim-mini')
    const other = tempHome()
    try {
      const none = await runCli(['chat', 'hi'], {home: other.home, env: env()})
      expect(none.exitCode).toBe(2)
      expect(none.stderr).toContain('No model given.')
    } finally {
      other.cleanup()
    }
  })

  it('appends piped stdin to the message, or puts it in place of "-"', async () => {
    const appended = await chat(['-m', 'sim-mini', 'review this'], 'diff --git a/x b/x\n+added line\n')
    expect(appended.exitCode).toBe(0)
    const dashed = await chat(['-m', 'sim-mini', 'summarize', '-', 'briefly'], 'THE TEXT\n')
    expect(dashed.exitCode).toBe(0)
    const onlyStdin = await chat(['-m', 'sim-mini'], 'just stdin')
    expect(onlyStdin.exitCode).toBe(0)
    expect(chatRequests().map((b) => b.messages[0].content)).toEqual([
      'review this\n\ndiff --git a/x b/x\n+added line',
      'summarize THE TEXT briefly',
      'just stdin',
    ])
    const empty = await chat(['-m', 'sim-mini'], '')
    expect(empty.exitCode).toBe(2)
    expect(empty.stderr).toContain('No message to send.')
  })

  it('sends every request flag and the routing flags as the top-level provider object', async () => {
    const r = await chat([
      '-m',
      'sim-mini',
      '--system',
      'Be brief.',
      '--image',
      'https://example.test/a.png',
      '--video',
      'https://example.test/b.mp4',
      '--temperature',
      '0.5',
      '--top-p',
      '0.9',
      '--top-k',
      '5',
      '--presence-penalty',
      '1',
      '--max-tokens',
      '200',
      '--thinking',
      '--timeout',
      '30',
      '--param',
      'seed=7',
      '--only',
      'beta-ai,gamma-fast',
      '--sort',
      'latency,input_price',
      '--latency-range',
      '0,1',
      '--input-length-range',
      '1000,64000',
      '--no-prompt-length-filter',
      '--no-fallbacks',
      'look',
    ])
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toContain('Hello from gamma-fast!')
    expect(r.stdout).toContain('I received 1 image and 1 video.')
    expect(chatRequests()[0]).toEqual({
      seed: 7,
      model: 'sim-mini',
      messages: [
        {role: 'system', content: 'Be brief.'},
        {
          role: 'user',
          content: [
            {type: 'text', text: 'look'},
            {type: 'image_url', image_url: {url: 'https://example.test/a.png'}},
            {type: 'video_url', video_url: {url: 'https://example.test/b.mp4'}},
          ],
        },
      ],
      stream: true,
      stream_options: {include_usage: true},
      temperature: 0.5,
      top_p: 0.9,
      top_k: 5,
      presence_penalty: 1,
      max_completion_tokens: 200,
      enable_thinking: true,
      extra_body: {timeout: 30},
      provider: {
        only: ['beta-ai', 'gamma-fast'],
        sort: ['latency', 'input_price'],
        latency_range: [0, 1],
        input_length_range: [1000, 64000],
        allow_filter_prompt_length: false,
        allow_fallbacks: false,
      },
    })
  })

  it('lets routing flags decide the provider, and reports when none fits', async () => {
    const cheap = await chat(['-m', 'sim-mini', '--sort', 'input_price', 'x'])
    expect(cheap.stdout).toContain('Hello from delta-cheap!')
    const json = await chat([
      '-m',
      'sim-mini',
      '--provider',
      '{"order":["beta-ai"]}',
      '--ignore',
      'beta-ai',
      'x',
    ])
    expect(json.stdout).toContain('Hello from alpha-cloud!')
    expect(chatRequests()[1].provider).toEqual({order: ['beta-ai'], ignore: ['beta-ai']})
    const none = await chat(['-m', 'sim-mini', '--only', 'beta-ai', '--latency-range', '0,0.1', 'x'])
    expect(none.exitCode).toBe(7)
    expect(none.stderr).toContain('no provider of "sim-mini" fits the provider preferences')
    expect(none.stderr).toContain('--fallbacks')
  })

  it.each([
    [['--temperature', '3'], 'must be between 0 and 2', '--temperature from 0.0 to 2.0'],
    [['--top-p', '1.5'], 'must be between 0 and 1', '--top-p from 0.0 to 1.0'],
    [['--presence-penalty', '-3'], 'must be between -2 and 2', '--presence-penalty from -2.0 to 2.0'],
    [['--top-k', '0'], 'integer greater than 0', 'e.g. --top-k 40'],
    [['--latency-range', '2,1'], 'min 2 is greater than max 1', 'MIN <= MAX'],
    [['--sort', 'cost'], 'Unknown sort key "cost"', 'input_price, output_price'],
  ])('refuses %j before sending (exit 2)', async (flags, message, rule) => {
    const r = await chat(['-m', 'sim-mini', ...flags, 'x'])
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toContain(message)
    expect(r.stderr).toContain(rule)
    expect(chatRequests()).toHaveLength(0)
  })

  it('keeps the partial text of a stream that fails midway, shows the error and exits 5', async () => {
    const r = await chat(['-m', 'sim-mini', 'please [error-mid-stream] fail'])
    expect(r.exitCode).toBe(5)
    expect(r.stdout).toMatch(/^Hello from alpha-cloud! .+\n$/)
    expect(r.stdout).not.toContain('simulated reply')
    expect(r.stderr).toContain('Error: The stream failed: provider alpha-cloud failed mid-stream')

    const j = await chat(['-m', 'sim-mini', '--json', 'please [error-mid-stream] fail'])
    expect(j.exitCode).toBe(5)
    const error = json(j).error
    expect(error).toMatchObject({
      code: 'stream_error',
      provider: 'alpha-cloud',
      upstream_code: 'provider_stream_error',
    })
    expect(error.partial_text).toMatch(/^Hello from alpha-cloud!/)
  })

  it('reports a connection cut mid-stream (exit 5) and a first token later than --timeout', async () => {
    sim.faults.add({reset: true, chunkDelayMs: 1, path: '/chat/completions'})
    const cut = await chat(['-m', 'sim-mini', 'cut me off'])
    expect(cut.exitCode).toBe(5)
    expect(cut.stdout).toMatch(/^Hello/)
    expect(cut.stderr).toMatch(/Error: The stream (broke off|ended before)/)

    const late = await chat(['-m', 'sim-mini', '--only', 'delta-cheap', '--timeout', '1', 'x'])
    expect(late.exitCode).toBe(5)
    expect(late.stderr).toContain('sent no first token within 1 s')
    expect(chatRequests()[1].extra_body).toEqual({timeout: 1})
  })

  it('prints the assembled completion once with --json, streamed or not', async () => {
    for (const extra of [[], ['--no-stream']]) {
      const r = await chat(['-m', 'sim-reasoner', '--json', ...extra, 'think'])
      expect(r.exitCode).toBe(0)
      expect(r.stderr).toBe('')
      const doc = json(r)
      expect(doc).toMatchObject({
        object: 'chat.completion',
        model: 'sim-reasoner',
        provider: 'alpha-cloud',
        choices: [
          {
            index: 0,
            message: {role: 'assistant', content: expect.stringContaining('You said: "think"')},
            finish_reason: 'stop',
          },
        ],
        usage: {completion_tokens_details: {reasoning_tokens: expect.any(Number)}},
        timing: {total_ms: expect.any(Number)},
      })
      expect(doc.choices[0].message.reasoning_content).toContain('Let me think')
      expect(doc.usage.total_tokens).toBe(doc.usage.prompt_tokens + doc.usage.completion_tokens)
    }
    expect(chatRequests()[1]).not.toHaveProperty('stream_options')
    expect(chatRequests()[1].stream).toBe(false)
  })

  it('shows reasoning dimmed on stderr, never on stdout, unless --hide-reasoning', async () => {
    const shown = await chat(['-m', 'sim-reasoner', 'why'])
    expect(shown.stdout).not.toContain('Let me think')
    expect(shown.stderr).toContain('Let me think about "why"')
    expect(shown.stderr).toMatch(/\(\d+ reasoning\)/)
    const hidden = await chat(['-m', 'sim-reasoner', '--hide-reasoning', 'why'])
    expect(hidden.stderr).not.toContain('Let me think')
    expect(hidden.stdout).toBe(shown.stdout)
  })

  it('asks for a JSON object answer with --json-object', async () => {
    const r = await chat(['-m', 'sim-mini', '--json-object', 'as json'])
    expect(JSON.parse(r.stdout)).toMatchObject({provider: 'alpha-cloud', model: 'sim-mini'})
    expect(chatRequests()[0].response_format).toEqual({type: 'json_object'})
  })

  it('passes tools through --param and shows the streamed tool call', async () => {
    const tools = [
      {
        type: 'function',
        function: {name: 'get_weather', parameters: {type: 'object', properties: {city: {type: 'string'}}}},
      },
    ]
    const r = await chat(['-m', 'sim-mini', '--param', `tools=${JSON.stringify(tools)}`, 'Paris'])
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toMatch(/^tool call call_\w+: get_weather\(\{"city":"Paris"\}\)\n$/)
    expect(r.stderr).toContain('finish: tool_calls')
    expect(chatRequests()[0].tools).toEqual(tools)
  })

  it('aborts at once on Ctrl-C and exits 130', async () => {
    sim.faults.add({chunkDelayMs: 500, path: '/chat/completions'})
    const child = spawnCli(['chat', '-m', 'sim-mini', 'long [words=50]'], {home: home.home, env: env()})
    child.stdin?.end()
    await waitFor(child.stdout!, /the/)
    child.kill('SIGINT')
    const done = await child
    expect(done.exitCode).toBe(130)
    expect(String(done.stdout)).not.toContain('throughput.')
  })

  it('maps a rejected key to exit 4', async () => {
    const locked = await startSim({apiKey: 'right', timeScale: 100})
    try {
      const r = await runCli(['chat', '-m', 'sim-mini', 'x'], {
        home: home.home,
        env: {GWCTL_BASE_URL: locked.baseUrl, GWCTL_API_KEY: 'wrong'},
      })
      expect(r.exitCode).toBe(4)
      expect(r.stderr).not.toContain('wrong')
    } finally {
      await locked.close()
    }
  })
})

describe('gwctl models', () => {
  it('prints a table for people and the list for scripts', async () => {
    const table = await runCli(['models'], {home: home.home, env: env()})
    expect(table.exitCode).toBe(0)
    expect(table.stdout.split('\n')[0]).toMatch(/^MODEL\s+OWNED BY\s+CONTEXT\s+REASONING\s+PROVIDERS$/)
    expect(table.stdout).toMatch(/sim-reasoner\s+sim\s+64000\s+yes\s+alpha-cloud, gamma-fast/)
    const list = json(await runCli(['models', '--json'], {home: home.home, env: env()}))
    expect(list.object).toBe('list')
    expect(list.data.map((m: {id: string}) => m.id)).toEqual(['sim-mini', 'sim-pro', 'sim-reasoner'])
    expect(list.data[0]).toMatchObject({object: 'model', owned_by: 'sim'})
  })

  it('exits 3 without a base URL', async () => {
    const r = await runCli(['models'], {home: home.home})
    expect(r.exitCode).toBe(3)
  })
})
