/**
 * The translation example of the README ("Claude Code on the platform's chat completions") and of
 * docs/TRANSLATION.md, run as written against a running gateway, the way a newcomer follows it.
 * They used to enable the agent before `gateway restart`: the running daemon, which loads policies
 * at its start, refused the new policy ("Unknown policyId") and the example stopped at its second
 * line.
 */
import {mkdirSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'

import {freePort, json, ROOT, runCli, tempHome} from './helpers/cli.js'
import {killDaemon} from './helpers/gateway.js'

const cleanups: Array<() => void | Promise<void>> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

/** The `gwctl` lines of the first ```sh block after `marker` in `file`, comments dropped. */
function exampleLines(file: string, marker: string): string[][] {
  const text = readFileSync(join(ROOT, file), 'utf8')
  const at = text.indexOf(marker)
  expect(at, `${file} lacks ${marker}`).toBeGreaterThan(-1)
  const start = text.indexOf('```sh\n', at) + 6
  const block = text.slice(start, text.indexOf('```\n', start))
  return block
    .split('\n')
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter((line) => line.startsWith('gwctl '))
    .map((line) => line.split(/\s+/).slice(1))
}

describe('the translation example, as written', {timeout: 120_000}, () => {
  for (const [file, marker] of [
    ['README.md', '**Translation: any agent on any provider.**'],
    ['docs/TRANSLATION.md', '# Translation between protocol families'],
  ]) {
    it(`${file}: every line exits 0 with the gateway running, and Claude Code ends on the policy`, async () => {
      const t = tempHome()
      const port = await freePort()
      const cli = (args: string[]) => runCli(args, {home: t.home, env: {GWCTL_GATEWAY_PORT: String(port)}})
      cleanups.push(t.cleanup, () => killDaemon(t.home))
      // what comes before the example: the platform configured, Claude Code installed, a gateway
      for (const folder of ['.claude', '.codex', '.gemini'])
        mkdirSync(join(t.home, 'user-home', folder), {recursive: true})
      expect((await cli(['config', 'set', 'base-url', 'http://127.0.0.1:9/api/v1'])).exitCode).toBe(0)
      expect((await cli(['config', 'set', 'api-key', 'sk-example'])).exitCode).toBe(0)
      expect((await cli(['gateway', 'start', '--sim'])).exitCode).toBe(0)

      const lines = exampleLines(file, marker)
      expect(lines.some((l) => l[0] === 'agents' && l[1] === 'enable')).toBe(true)
      for (const line of lines) {
        const r = await cli(line)
        expect(r.exitCode, `gwctl ${line.join(' ')}\n${r.stderr}`).toBe(0)
      }
      const agents = json(await cli(['agents', 'list', '--json'])).agents as Array<{
        name: string
        policyId: string
      }>
      expect(agents.find((a) => a.name === 'claude-code')?.policyId).toBe('claude-on-chat')
      // and each other agent the example enables, on the policy it names
      for (const line of lines.filter((l) => l[0] === 'agents' && l[1] === 'enable')) {
        expect(agents.find((a) => a.name === line[2])?.policyId).toBe(line[line.indexOf('--policy') + 1])
      }
    })
  }
})
