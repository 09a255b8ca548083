/**
 * A gateway started "as it last ran": `gateway start` records how it started (port, simulator) in
 * `<home>/gateway-last-start.json` (0600), and `gateway restart` of a stopped gateway (like the
 * app's `S`) starts it the same way: a gateway stopped after `--sim` comes back with the
 * simulator, never on the real providers.
 */
import {readFileSync, statSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'

import {freePort, json, runCli, tempHome} from './helpers/cli.js'
import {killDaemon} from './helpers/gateway.js'

const cleanups: Array<() => void | Promise<void>> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

describe('a start as the gateway last ran', () => {
  it('records the last start; restart of a stopped gateway keeps --sim', async () => {
    const t = tempHome()
    cleanups.push(t.cleanup)
    cleanups.push(() => killDaemon(t.home))
    const port = await freePort()
    const cli = (args: string[]) => runCli(args, {home: t.home, env: {GWCTL_GATEWAY_PORT: String(port)}})
    expect((await cli(['gateway', 'start', '--sim'])).exitCode).toBe(0)
    const record = join(t.home, 'gateway-last-start.json')
    expect(JSON.parse(readFileSync(record, 'utf8'))).toMatchObject({port, sim: true})
    expect(statSync(record).mode & 0o777).toBe(0o600)
    expect((await cli(['gateway', 'stop', '--drain', '1'])).exitCode).toBe(0)

    const restarted = await cli(['gateway', 'restart', '--json'])
    expect(restarted.exitCode, restarted.stderr).toBe(0)
    expect(json(restarted).daemon.simOrigin).toEqual(expect.any(String))

    // --no-sim is obeyed, and recorded for the next start
    expect((await cli(['gateway', 'restart', '--no-sim'])).exitCode).toBe(0)
    expect(JSON.parse(readFileSync(record, 'utf8'))).toMatchObject({port, sim: false})
    expect((await cli(['gateway', 'stop', '--drain', '1'])).exitCode).toBe(0)
    // a damaged record is no record: the defaults (no simulator)
    writeFileSync(record, '{"port": "x"', {mode: 0o600})
    const plain = await cli(['gateway', 'restart', '--json'])
    expect(plain.exitCode, plain.stderr).toBe(0)
    expect(json(plain).daemon.simOrigin ?? null).toBeNull()
  }, 90_000)
})
