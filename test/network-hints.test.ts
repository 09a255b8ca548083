/**
 * The hint of a refused connection (issue 25, item 9): a base URL on the configured gateway's
 * port says to start the gateway; a base URL from GWCTL_BASE_URL names the variable, not the
 * setting it overrides.
 */
import {afterEach, describe, expect, it} from 'vitest'

import {freePort, runCli, tempHome} from './helpers/cli.js'

const cleanups: Array<() => void> = []
afterEach(() => {
  for (const c of cleanups.splice(0)) c()
})

async function setup() {
  const t = tempHome()
  cleanups.push(t.cleanup)
  const port = await freePort()
  const cli = (args: string[], env: Record<string, string> = {}) =>
    runCli(args, {home: t.home, env: {GWCTL_API_KEY: 'k', ...env}})
  return {port, cli}
}

describe('a refused connection gets the hint that fits', () => {
  it('the configured gateway stopped, URL from GWCTL_BASE_URL: start it, or repoint the variable', async () => {
    const {port, cli} = await setup()
    expect((await cli(['config', 'set', 'gateway.port', String(port)])).exitCode).toBe(0)
    const r = await cli(['chat', '-m', 'sim-mini', 'hi'], {GWCTL_BASE_URL: `http://127.0.0.1:${port}/v1`})
    expect(r.exitCode).toBe(5)
    expect(r.stderr).toContain(`nothing is listening at http://127.0.0.1:${port}`)
    expect(r.stderr).toContain('The gateway is not running: start it with `gwctl gateway start`')
    expect(r.stderr).toContain('or point GWCTL_BASE_URL elsewhere')
    expect(r.stderr).not.toContain('config get base-url')
  })

  it('the configured gateway stopped, URL from the setting: start it', async () => {
    const {port, cli} = await setup()
    expect((await cli(['config', 'set', 'gateway.port', String(port)])).exitCode).toBe(0)
    expect((await cli(['config', 'set', 'base-url', `http://127.0.0.1:${port}/v1`])).exitCode).toBe(0)
    const r = await cli(['chat', '-m', 'sim-mini', 'hi'])
    expect(r.exitCode).toBe(5)
    expect(r.stderr).toContain('The gateway is not running: start it with `gwctl gateway start`')
    expect(r.stderr).not.toContain('GWCTL_BASE_URL')
  })

  it('another URL from GWCTL_BASE_URL: names the variable; from the setting: names the setting', async () => {
    const {port, cli} = await setup()
    const url = `http://127.0.0.1:${port}/api/v1`
    const env = await cli(['chat', '-m', 'sim-mini', 'hi'], {GWCTL_BASE_URL: url})
    expect(env.exitCode).toBe(5)
    expect(env.stderr).toContain('Check GWCTL_BASE_URL (it sets the base URL')
    expect(env.stderr).not.toContain('gateway start')
    expect((await cli(['config', 'set', 'base-url', url])).exitCode).toBe(0)
    const set = await cli(['chat', '-m', 'sim-mini', 'hi'])
    expect(set.exitCode).toBe(5)
    expect(set.stderr).toContain('Check the base URL (`gwctl config get base-url`)')
  })
})
