/**
 * `npm run tour` keeps to its own temporary HOME (issue 25): a Claude Code config in the HOME
 * of whoever runs it is never found, read or bound.
 */
import {spawnSync} from 'node:child_process'
import {mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'

import {ROOT, cliEnv, tempHome} from './helpers/cli.js'

const cleanups: Array<() => void> = []
afterEach(() => {
  for (const c of cleanups.splice(0)) c()
})

describe('the tour', () => {
  it('finds no coding agent of the real HOME and leaves its files alone', () => {
    const t = tempHome()
    cleanups.push(t.cleanup)
    const user = join(t.home, 'user-home')
    mkdirSync(join(user, '.claude'), {recursive: true})
    const settings = join(user, '.claude', 'settings.json')
    writeFileSync(settings, '{"model": "opus"}\n')
    const env = {...process.env, ...cliEnv(t.home)} as Record<string, string | undefined>
    delete env.GWCTL_HOME // the tour makes its own
    for (const [k, v] of Object.entries(env)) if (v === undefined) delete env[k]
    const r = spawnSync(process.execPath, [join(ROOT, 'scripts', 'tour.js')], {
      env: env as NodeJS.ProcessEnv,
      encoding: 'utf8',
      timeout: 170_000,
    })
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/coding agents: +0 found, 0 bound/)
    expect(readFileSync(settings, 'utf8')).toBe('{"model": "opus"}\n')
  }, 180_000)
})
