/**
 * `gwctl agents enable claude-code --statusline`: Claude Code's statusLine set to `gwctl
 * statusline` with the binding's exact undo; a statusLine of the user's own kept unless
 * --replace, and back on disable (byte for byte when the file was not touched since, by value
 * when the user edited it meanwhile).
 */
import {mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'

import {freePort, json, runCli, tempHome} from './helpers/cli.js'

const cleanups: Array<() => void> = []
afterEach(() => {
  for (const c of cleanups.splice(0)) c()
})

const PLAIN = '{\n  // mine\n  "model": "opus"\n}\n'
const OWN = '{\n  "model": "opus",\n  "statusLine": {"type": "command", "command": "~/bin/my-line.sh"}\n}\n'
const OURS = {type: 'command', command: 'gwctl statusline', padding: 0}

async function setup(settings: string) {
  const t = tempHome()
  cleanups.push(t.cleanup)
  const path = join(t.home, 'user-home', '.claude', 'settings.json')
  mkdirSync(join(path, '..'), {recursive: true})
  writeFileSync(path, settings)
  const port = await freePort()
  const cli = (args: string[]) => runCli(args, {home: t.home, env: {GWCTL_GATEWAY_PORT: String(port)}})
  const read = () => readFileSync(path, 'utf8')
  // settings.json allows comments: strip them to look at the values
  const parsed = () => JSON.parse(read().replace(/^\s*\/\/.*$/gm, ''))
  return {cli, path, read, parsed}
}

describe('agents enable claude-code --statusline', () => {
  it('writes the statusLine beside the route; disable puts the file back byte for byte', async () => {
    const {cli, read, parsed} = await setup(PLAIN)
    const r = await cli(['agents', 'enable', 'claude-code', '--statusline', '--json'])
    expect(r.exitCode, r.stderr).toBe(0)
    expect(json(r)).toMatchObject({outcome: 'bound', statusline: 'gwctl'})
    expect(parsed().statusLine).toEqual(OURS)
    expect(parsed().env.ANTHROPIC_AUTH_TOKEN).toMatch(/^gw-/)
    expect(read()).toContain('// mine')
    expect((await cli(['agents', 'disable', 'claude-code'])).exitCode).toBe(0)
    expect(read()).toBe(PLAIN)
  }, 60_000)

  it('keeps the user’s own statusLine unless --replace; disable brings it back exactly', async () => {
    const {cli, read, parsed} = await setup(OWN)
    const kept = await cli(['agents', 'enable', 'claude-code', '--statusline'])
    expect(kept.exitCode, kept.stderr).toBe(0)
    expect(kept.stderr).toMatch(/Your own statusLine is kept; pass --replace/)
    expect(parsed().statusLine.command).toBe('~/bin/my-line.sh')
    // the binding is live: --replace alone rewrites it with gwctl's statusLine
    const replaced = await cli(['agents', 'enable', 'claude-code', '--statusline', '--replace', '--json'])
    expect(replaced.exitCode, replaced.stderr).toBe(0)
    expect(json(replaced).statusline).toBe('gwctl')
    expect(parsed().statusLine).toEqual(OURS)
    expect((await cli(['agents', 'disable', 'claude-code'])).exitCode).toBe(0)
    expect(read()).toBe(OWN)
  }, 60_000)

  it('a file the user edited while bound: disable removes only gwctl’s entries and restores their statusLine', async () => {
    const {cli, path, read, parsed} = await setup(OWN)
    expect((await cli(['agents', 'enable', 'claude-code', '--statusline', '--replace'])).exitCode).toBe(0)
    writeFileSync(path, read().replace('"model": "opus"', '"model": "sonnet"'))
    const r = await cli(['agents', 'disable', 'claude-code'])
    expect(r.exitCode, r.stderr).toBe(0)
    const after = parsed()
    expect(after.model).toBe('sonnet')
    expect(after.statusLine).toEqual({type: 'command', command: '~/bin/my-line.sh'})
    expect(after.env).toBeUndefined()
  }, 60_000)

  it('--replace needs --statusline (exit 2)', async () => {
    const {cli, read} = await setup(PLAIN)
    const r = await cli(['agents', 'enable', 'claude-code', '--replace'])
    expect(r.exitCode).toBe(2)
    expect(read()).toBe(PLAIN)
  })
})
