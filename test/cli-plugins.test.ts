// bin/run.js hands oclif the plugins package.json names, loaded beforehand (so oclif does not
// match every dependency against them on each start): the plugin's commands must still be
// there, and a user plugin file, which only oclif's own loader reads, must still be honoured.
import {mkdirSync, symlinkSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'

import {ROOT, runCli, tempHome} from './helpers/cli.js'

describe('oclif plugins', () => {
  const cleanups: Array<() => void> = []
  afterEach(() => {
    while (cleanups.length > 0) cleanups.pop()!()
  })

  it("the plugin package.json names keeps its commands: autocomplete's help and the command list", async () => {
    const {home, cleanup} = tempHome()
    cleanups.push(cleanup)
    const help = await runCli(['autocomplete', '--help'], {home})
    expect(help.exitCode, help.stderr).toBe(0)
    expect(help.stdout).toContain('Display autocomplete installation instructions.')
    const top = await runCli(['--help'], {home})
    expect(top.stdout).toMatch(/^\s+autocomplete\s/m)
  })

  it('a user plugin file in the data folder is read, as oclif reads it: its command runs', async () => {
    const {home, cleanup} = tempHome()
    cleanups.push(cleanup)
    // a linked plugin with one command, named by the user plugin file in GWCTL_DATA_DIR
    const plugin = join(home, 'plugin')
    mkdirSync(join(plugin, 'commands'), {recursive: true})
    symlinkSync(join(ROOT, 'node_modules'), join(plugin, 'node_modules'))
    writeFileSync(
      join(plugin, 'package.json'),
      JSON.stringify({
        name: 'gwctl-plugin-hi',
        version: '1.0.0',
        type: 'module',
        oclif: {commands: './commands'},
      }),
    )
    writeFileSync(
      join(plugin, 'commands', 'hi.js'),
      `import {Command} from '@oclif/core'\nexport default class Hi extends Command {\n  async run() {\n    this.log('hi from a user plugin')\n  }\n}\n`,
    )
    const data = join(home, 'data')
    mkdirSync(data)
    writeFileSync(
      join(data, 'package.json'),
      JSON.stringify({oclif: {plugins: [{type: 'link', name: 'gwctl-plugin-hi', root: plugin}]}}),
    )
    const hi = await runCli(['hi'], {home, env: {GWCTL_DATA_DIR: data}})
    expect(hi.stdout, hi.stderr).toBe('hi from a user plugin\n')
    expect(hi.exitCode).toBe(0)
    // without the file the command is unknown (exit 2, as any unknown command)
    const none = await runCli(['hi'], {home})
    expect(none.exitCode).toBe(2)
    expect(none.stderr).toContain('Unknown command "hi"')
  })
})
