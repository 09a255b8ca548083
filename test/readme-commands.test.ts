/**
 * The README's command reference cannot drift from the commands (issue 25, item 11): its block
 * must be exactly what scripts/readme-commands.js generates from oclif.manifest.json, and every
 * visible command must be in it. `npm run readme:commands` rewrites it after a change.
 */
import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'

// @ts-expect-error a plain JS script, without types
import {commandReference, currentBlock} from '../scripts/readme-commands.js'
import {ROOT} from './helpers/cli.js'

describe('README command reference', () => {
  it('is the one generated from oclif.manifest.json', () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'oclif.manifest.json'), 'utf8'))
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
    const block = currentBlock(readme) as string | undefined
    expect(block, 'README.md lacks the command reference markers').toBeDefined()
    expect(block, 'run `npm run readme:commands` after changing a command').toBe(commandReference(manifest))
    const visible = Object.values(manifest.commands as Record<string, {id: string; hidden?: boolean}>).filter(
      (c) => !c.hidden,
    )
    for (const c of visible) expect(block).toContain(`\`gwctl ${c.id.replaceAll(':', ' ')}`)
  })

  it('the README starts with what gwctl is, the two set-up commands and the three quick starts', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
    const head = readme.slice(0, readme.indexOf('## Command reference'))
    expect(head).toContain('## Set-up (two commands)')
    for (const use of [
      '**A video from the platform**',
      '**Chat**',
      '**A coding agent through the gateway**',
    ]) {
      const i = head.indexOf(use)
      expect(i, use).toBeGreaterThan(-1)
      const block = head.slice(
        head.indexOf('```sh', i) + 5,
        head.indexOf('```\n', head.indexOf('```sh', i) + 5),
      )
      expect(
        block
          .trim()
          .split('\n')
          .filter((l) => l.startsWith('gwctl ')),
      ).toHaveLength(5)
    }
  })
})
