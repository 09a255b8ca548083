/**
 * What a new user trips over: next steps in error messages, one JSON document with --json, exit
 * codes as the README's table says.
 */
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import type {Simulator} from '../src/sim/server.js'
import {startSim} from '../src/sim/server.js'
import {LogStore} from '../src/store/log-store.js'
import {freePort, json, runCli, tempHome} from './helpers/cli.js'
import {keyIssueArgs} from './helpers/gateway.js'

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

describe('messages say what to do next', () => {
  it('a reply cut mid-stream says it is incomplete and names the provider to avoid (exit 5)', async () => {
    const r = await runCli(['chat', '--model', 'sim-pro', '[error-mid-stream] hi'], {
      home: home.home,
      env: env(),
    })
    expect(r.exitCode).toBe(5)
    expect(r.stdout).toContain('Hello from alpha-cloud')
    expect(r.stderr).toContain('incomplete: try again, or route around alpha-cloud with --ignore alpha-cloud')
  })

  it('chat with an unknown model points at `gwctl models` (exit 7)', async () => {
    const r = await runCli(['chat', '--model', 'no-such-model', 'hi'], {home: home.home, env: env()})
    expect(r.exitCode).toBe(7)
    expect(r.stderr).toContain('gwctl models')
    const j = await runCli(['chat', '--model', 'no-such-model', 'hi', '--json'], {
      home: home.home,
      env: env(),
    })
    expect(j.exitCode).toBe(7)
    expect(json(j).error.hint).toContain('gwctl models')
  })

  it('a missing argument says "--help" once', async () => {
    const r = await runCli(['config', 'set'], {home: home.home})
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toContain('Missing 2 required args')
    expect(r.stderr.match(/--help/g)).toHaveLength(1)
    expect(r.stderr).toContain('gwctl config set --help')
  })

  it("a missing flag is named as typed, without oclif's wrapper", async () => {
    const r = await runCli(['video', 'create', '--prompt', 'x', '--json'], {home: home.home})
    expect(r.exitCode).toBe(2)
    expect(json(r).error).toMatchObject({
      code: 'invalid_flags',
      message: 'Missing required flag --model',
      hint: 'Run `gwctl video create --help` for its usage.',
    })
  })
})

describe('unknown flags', () => {
  it('suggest the closest flag of the command: --promt -> --prompt (issue 25)', async () => {
    const r = await runCli(['video', 'create', '-m', 'Alpha2.6-T2V', '--promt', 'a fox'], {home: home.home})
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toContain('Nonexistent flag: --promt')
    expect(r.stderr).toContain('Did you mean `--prompt`? Run `gwctl video create --help` for its usage.')
    const far = await runCli(['video', 'create', '--zzzzzz', 'x'], {home: home.home})
    expect(far.exitCode).toBe(2)
    expect(far.stderr).not.toContain('Did you mean')
  })
})

describe('unknown commands', () => {
  it('suggest the closest command and exit 2', async () => {
    const r = await runCli(['video', 'creat', '-m', 'x'], {home: home.home})
    expect(r.exitCode).toBe(2)
    expect(r.stdout).toBe('')
    expect(r.stderr).toContain('Unknown command "video creat"')
    expect(r.stderr).toContain('gwctl video create')
  })

  it('are coloured only when asked for (FORCE_COLOR) and never under NO_COLOR or in a pipe', async () => {
    const forced = await runCli(['statuz'], {home: home.home, env: {FORCE_COLOR: '1', NO_COLOR: undefined}})
    expect(forced.stderr).toContain('\u001b[31mError: Unknown command "statuz".\u001b[39m')
    expect(forced.stderr).toContain('\u001b[2mDid you mean `gwctl status`?')
    const none = await runCli(['statuz'], {home: home.home, env: {FORCE_COLOR: '1', NO_COLOR: '1'}})
    const piped = await runCli(['statuz'], {
      home: home.home,
      env: {NO_COLOR: undefined, FORCE_COLOR: undefined},
    })
    for (const r of [none, piped]) {
      expect(r.exitCode).toBe(2)
      expect(r.stderr).not.toContain('\u001b[')
      expect(r.stderr).toContain('Error: Unknown command "statuz".')
    }
  })

  it('print one JSON error document with --json', async () => {
    const r = await runCli(['policy', 'list', '--json'], {home: home.home})
    expect(r.exitCode).toBe(2)
    expect(json(r).error).toMatchObject({code: 'unknown_command'})
    expect(json(r).error.hint).toContain('gwctl policies list')
  })
})

describe('gateway commands, gateway stopped', () => {
  it('providers list with an unknown agent points at `gwctl agents list` (exit 7)', async () => {
    const r = await runCli(['providers', 'list', 'nosuchagent', '--json'], {home: home.home})
    expect(r.exitCode).toBe(7)
    expect(json(r).error.hint).toContain('gwctl agents list')
  })

  it('key issue for a sub-agent without a parent names the flag to pass (exit 2)', async () => {
    const r = await runCli(keyIssueArgs('a', 'codex_subagent', {name: 'Ada', contact: 'ada@example.com'}), {
      home: home.home,
    })
    expect(r.exitCode).toBe(2)
    expect(r.stdout).toBe('')
    expect(r.stderr).toContain('Pass --parent-agent-id')
  })
})

describe('a file that is not there is "not found" (exit 7)', () => {
  it('policies set --file', async () => {
    const r = await runCli(['policies', 'set', 'team-a', '--file', `${home.home}/nope.json`, '--json'], {
      home: home.home,
    })
    expect(r.exitCode).toBe(7)
    expect(json(r).error.code).toBe('file_not_found')
  })

  it('gamma generate --content', async () => {
    const r = await runCli(
      ['gamma', 'generate', '--content', `${home.home}/nope.json`, '-r', '768P', '-d', '5'],
      {
        home: home.home,
        env: env(),
      },
    )
    expect(r.exitCode).toBe(7)
    expect(r.stderr).toContain('No file')
    expect(sim.requests.filter((q) => q.path.includes('gamma'))).toHaveLength(0)
  })
})

describe('--json prints one document', () => {
  it('status --quiet --json with the gateway stopped (exit 6)', async () => {
    const r = await runCli(['status', '--quiet', '--json'], {home: home.home})
    expect(r.exitCode).toBe(6)
    // only the liveness check's answer, in the snapshot's words: no state file or agents read
    expect(json(r)).toEqual({
      healthy: false,
      gateway: {
        state: 'Stopped',
        url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
        port: expect.any(Number),
        pid: null,
      },
      problem: 'The gateway is not running.',
      fix: 'Start it with `gwctl gateway start`.',
    })
    const quiet = await runCli(['status', '--quiet'], {home: home.home})
    expect(quiet.exitCode).toBe(6)
    expect(quiet.stdout + quiet.stderr).toBe('')
  })
})

describe('tables', () => {
  it('models marks the fields a plain OpenAI list lacks with "-" (a gateway, a vendor)', async () => {
    const vendor = sim.baseUrl.replace(/\/api\/v1$/, '/v1')
    const r = await runCli(['models'], {home: home.home, env: {GWCTL_BASE_URL: vendor, GWCTL_API_KEY: 'k'}})
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toMatch(/^sim-mini\s+\S+\s+-\s+-\s+-$/m)
  })
})

describe('gamma rules name the flag that fixes them', () => {
  it('text-to-video without a ratio says to add --ratio (exit 2, nothing sent)', async () => {
    const r = await runCli(['gamma', 'generate', '-t', 'a fox', '-r', '768P', '-d', '5', '--json'], {
      home: home.home,
      env: env(),
    })
    expect(r.exitCode).toBe(2)
    expect(json(r).error).toMatchObject({code: 'content_rule', rule: 'text-to-video-ratio'})
    expect(json(r).error.hint).toContain('--ratio 16:9')
    expect(sim.requests).toHaveLength(0)
  })
})

describe('bad settings are configuration errors, not bugs', () => {
  it('a GWCTL_BASE_URL that is not a URL exits 3 with the fix', async () => {
    const r = await runCli(['models', '--json'], {
      home: home.home,
      env: {GWCTL_BASE_URL: 'notaurl', GWCTL_API_KEY: 'k'},
    })
    expect(r.exitCode).toBe(3)
    expect(json(r).error).toMatchObject({code: 'invalid_base_url'})
    expect(json(r).error.hint).toContain('GWCTL_BASE_URL')
  })

  it('config set gateway.port refuses a number that is no port (exit 2)', async () => {
    const r = await runCli(['config', 'set', 'gateway.port', '70000'], {home: home.home})
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toContain('1-65535')
    expect((await runCli(['config', 'set', 'gateway.port', '4318'], {home: home.home})).exitCode).toBe(0)
  })
})

describe('config set refuses an empty value', () => {
  it('exit 2, nothing stored, and the hint names config unset', async () => {
    const r = await runCli(['config', 'set', 'api-key', ''], {home: home.home})
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toContain('gwctl config unset api-key')
    expect((await runCli(['config', 'get', 'api-key'], {home: home.home})).exitCode).toBe(7)
  })
})

describe('typos in setting names', () => {
  it('config set suggests the setting meant (exit 2, nothing stored)', async () => {
    const r = await runCli(['config', 'set', 'employe.name', 'Ada', '--json'], {home: home.home})
    expect(r.exitCode).toBe(2)
    expect(json(r).error).toMatchObject({code: 'unknown_setting'})
    expect(json(r).error.hint).toContain('Did you mean "employee.name"?')
    const list = await runCli(['config', 'get', 'employee.name'], {home: home.home})
    expect(list.exitCode).toBe(7)
  })
})

describe('help and version, the usual ways', () => {
  it('`gwctl help config set` and `gwctl config set -h` print the command help', async () => {
    for (const args of [
      ['help', 'config', 'set'],
      ['config', 'set', '-h'],
    ]) {
      const r = await runCli(args, {home: home.home})
      expect(r.exitCode).toBe(0)
      expect(r.stdout).toContain('$ gwctl config set KEY VALUE')
    }
  })

  it('`gwctl version` and `-v` print the version', async () => {
    for (const args of [['version'], ['-v']]) {
      const r = await runCli(args, {home: home.home})
      expect(r.exitCode).toBe(0)
      expect(r.stdout).toMatch(/^gwctl\/\d+\.\d+\.\d+ /)
    }
  })
})

describe('status with the gateway stopped', () => {
  it('an agent on a policy without targets is on default routes, not "no provider" (exit 6)', async () => {
    const issued = await runCli(keyIssueArgs('a', 'codex'), {home: home.home})
    expect(issued.exitCode).toBe(0)
    const r = await runCli(['status', '--json'], {home: home.home})
    expect(r.exitCode).toBe(6)
    expect(json(r).agentsPerRoute).toEqual([
      {
        route: 'default/responses -> (default routes at start)',
        policyId: 'default',
        family: 'responses',
        agents: 1,
      },
    ])
  })
})

describe('logs and usage --agent', () => {
  it('take an agent name as providers list does; an unknown name exits 7; an empty filter says so', async () => {
    const issued = await runCli([...keyIssueArgs('laptop', 'codex'), '--json'], {home: home.home})
    const {agentId} = json(issued)
    const store = await LogStore.open(join(home.home, 'logs.db'))
    store.append({
      time: Date.now() - 1000,
      agentId,
      keyPrefix: 'gw-aaaa…',
      policyId: 'default',
      entrance: 'responses',
      requestedModel: 'sim-mini',
      provider: 'sim-responses',
      model: 'sim-mini',
      status: 200,
      fallback: false,
      inputTokens: 5,
      outputTokens: 7,
      cacheReadTokens: 0,
      cacheCreationTokens: 0,
      reasoningTokens: 0,
      latencyMs: 10,
      ttfbMs: 5,
      error: null,
      project: 'laptop',
      requestId: null,
    })
    store.close()

    const byName = await runCli(['logs', '--agent', 'laptop', '--json'], {home: home.home})
    expect(byName.exitCode).toBe(0)
    expect(json(byName).logs.map((r: {agentId: string}) => r.agentId)).toEqual([agentId])
    const usage = await runCli(['usage', '--agent', 'laptop', '--json'], {home: home.home})
    expect(json(usage).totals).toMatchObject({requests: 1, inputTokens: 5, outputTokens: 7})

    const ghost = await runCli(['logs', '--agent', 'ghost'], {home: home.home})
    expect(ghost.exitCode).toBe(7)
    expect(ghost.stderr).toContain('gwctl agents list')

    const none = await runCli(['logs', '--status', '5xx'], {home: home.home})
    expect(none.exitCode).toBe(0)
    expect(none.stdout).toBe('No requests match these filters.\n')
  })
})

describe('the same short flags across video and gamma', () => {
  it('video create takes -d and -r like gamma generate', async () => {
    const r = await runCli(
      ['video', 'create', '-m', 'BetaQ3-Turbo-Text2Video', '-p', 'waves', '-r', '720P', '-d', '6', '--json'],
      {
        home: home.home,
        env: env(),
      },
    )
    expect(r.exitCode).toBe(0)
    const sent = sim.requests.find((q) => q.method === 'POST' && q.path === '/api/v1/videos')?.body as Record<
      string,
      unknown
    >
    expect(sent).toMatchObject({resolution: '720P', duration: 6})
  })
})

describe('gateway restart with the gateway stopped', () => {
  it('says it started the gateway rather than "restarted" it', async () => {
    const port = String(await freePort())
    try {
      const r = await runCli(['gateway', 'restart', '--port', port], {home: home.home})
      expect(r.exitCode).toBe(0)
      expect(r.stdout).toContain(`Gateway was not running; started at http://127.0.0.1:${port}`)
    } finally {
      await runCli(['gateway', 'stop'], {home: home.home})
    }
  })
})

describe('providers add warns about a credential that will not work', () => {
  it('none at all, or an env var that is not set (stderr only, exit 0, stdout still one JSON document)', async () => {
    const none = await runCli(
      ['providers', 'add', 'nocred', '--family', 'chat', '--base-url', 'https://x.example', '--json'],
      {
        home: home.home,
      },
    )
    expect(none.exitCode).toBe(0)
    expect(json(none).provider.name).toBe('nocred')
    expect(none.stderr).toContain('nocred has no credential')
    const unset = await runCli(
      [
        'providers',
        'add',
        'envcred',
        '--family',
        'chat',
        '--base-url',
        'https://x.example',
        '--api-key-env',
        'GWCTL_TEST_UNSET_KEY',
      ],
      {home: home.home, env: {GWCTL_TEST_UNSET_KEY: undefined}},
    )
    expect(unset.exitCode).toBe(0)
    expect(unset.stderr).toContain('GWCTL_TEST_UNSET_KEY is not set in this shell')
    const set = await runCli(
      [
        'providers',
        'add',
        'envset',
        '--family',
        'chat',
        '--base-url',
        'https://x.example',
        '--api-key-env',
        'GWCTL_TEST_SET_KEY',
      ],
      {home: home.home, env: {GWCTL_TEST_SET_KEY: 'k'}},
    )
    expect(set.stderr).not.toContain('warning')
  })
})

describe('providers add from a preset', () => {
  it('a known name alone fills in its family, base URL and key variable; --preset under another name; flags win', async () => {
    const byName = await runCli(['providers', 'add', 'deepseek'], {
      home: home.home,
      env: {DEEPSEEK_API_KEY: 'k'},
    })
    expect(byName.exitCode, byName.stderr).toBe(0)
    expect(byName.stdout).toBe(
      'Added provider deepseek (chat, https://api.deepseek.com, credential: env DEEPSEEK_API_KEY) from preset deepseek.\n',
    )
    const glm = await runCli(
      ['providers', 'add', 'glm', '--preset', 'zai-coding', '--api-key-env', 'GLM_KEY', '--json'],
      {
        home: home.home,
        env: {GLM_KEY: 'k'},
      },
    )
    expect(glm.exitCode, glm.stderr).toBe(0)
    expect(json(glm)).toEqual({
      provider: {
        name: 'glm',
        family: 'chat',
        baseUrl: 'https://api.z.ai/api/coding/paas/v4',
        origin: 'user',
        credential: {env: 'GLM_KEY'},
        preset: 'zai-coding',
      },
      // (no gateway runs: it loads the provider when it starts)
      appliesOn: 'gwctl gateway start',
    })
    // a server on this machine needs no key: no warning about one
    const local = await runCli(['providers', 'add', 'box', '--preset', 'ollama'], {home: home.home})
    expect(local.exitCode).toBe(0)
    expect(local.stderr).not.toContain('warning')
    const list = json(await runCli(['providers', 'list', '--json'], {home: home.home})) as {
      providers: Array<{name: string; family: string; baseUrl: string}>
    }
    expect(list.providers.filter((p) => ['deepseek', 'glm', 'box'].includes(p.name))).toMatchObject([
      {name: 'deepseek', family: 'chat', baseUrl: 'https://api.deepseek.com'},
      {name: 'glm', family: 'chat', baseUrl: 'https://api.z.ai/api/coding/paas/v4'},
      {name: 'box', family: 'chat', baseUrl: 'http://127.0.0.1:11434/v1'},
    ])
  })

  it('an unknown preset, or neither a preset nor --family and --base-url: exit 2, saying what to give', async () => {
    const unknown = await runCli(['providers', 'add', 'x', '--preset', 'nope', '--json'], {home: home.home})
    expect(unknown.exitCode).toBe(2)
    expect(json(unknown).error).toMatchObject({code: 'unknown_preset', message: 'No preset named "nope".'})
    // a family the preset's base URL does not speak: the preset that does, in the hint
    const family = await runCli(['providers', 'add', 'glm9', '--preset', 'zai', '--family', 'messages'], {
      home: home.home,
    })
    expect(family.exitCode).toBe(2)
    expect(family.stderr).toContain(
      'Preset "zai" is a chat provider: its base URL takes no messages requests.',
    )
    expect(family.stderr).toContain('For messages: --preset zai-anthropic')
    const bare = await runCli(['providers', 'add', 'corp2'], {home: home.home})
    expect(bare.exitCode).toBe(2)
    expect(bare.stderr).toContain('Missing --family and --base-url for provider "corp2".')
    expect(bare.stderr).toContain('--preset NAME')
  })

  it("--replace keeps the provider's own key over the preset's variable; a provider new under --replace gets the variable", async () => {
    const stored = await runCli(['providers', 'add', 'ds2', '--preset', 'deepseek', '--api-key-stdin'], {
      home: home.home,
      input: 'sk-mine',
    })
    expect(stored.exitCode, stored.stderr).toBe(0)
    const again = await runCli(['providers', 'add', 'ds2', '--preset', 'deepseek', '--replace', '--json'], {
      home: home.home,
    })
    expect(again.exitCode, again.stderr).toBe(0)
    expect(json(again).provider.credential).toEqual({secret: '[redacted]'})
    const fresh = await runCli(['providers', 'add', 'ds3', '--preset', 'deepseek', '--replace', '--json'], {
      home: home.home,
    })
    expect(json(fresh).provider.credential).toEqual({env: 'DEEPSEEK_API_KEY'})
  })

  it('providers presets lists them, as JSON too', async () => {
    const table = await runCli(['providers', 'presets'], {home: home.home})
    expect(table.exitCode).toBe(0)
    expect(table.stdout).toMatch(/^PRESET +FAMILY +BASE URL +KEY +WHAT\n/)
    expect(table.stdout).toMatch(/\nzai +chat +https:\/\/api\.z\.ai\/api\/paas\/v4 +ZAI_API_KEY +/)
    const listed = json(await runCli(['providers', 'presets', '--json'], {home: home.home})) as {
      presets: Array<{name: string; family: string; baseUrl: string; keyEnv?: string}>
    }
    expect(listed.presets.find((p) => p.name === 'ollama')).toEqual({
      name: 'ollama',
      family: 'chat',
      baseUrl: 'http://127.0.0.1:11434/v1',
      about: 'Ollama on this machine',
    })
    // xAI's Responses API by default (its chat completions carry no reasoning), chat under its own name
    expect(listed.presets.find((p) => p.name === 'xai')).toMatchObject({
      family: 'responses',
      baseUrl: 'https://api.x.ai/v1',
    })
    expect(listed.presets.find((p) => p.name === 'xai-chat')).toMatchObject({
      family: 'chat',
      baseUrl: 'https://api.x.ai/v1',
    })
    const chat = await runCli(['providers', 'add', 'grok', '--preset', 'xai', '--family', 'chat'], {
      home: home.home,
    })
    expect(chat.exitCode).toBe(2)
    expect(chat.stderr).toContain('For chat: --preset xai-chat')
  })
})
