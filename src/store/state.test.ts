import {existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync} from 'node:fs'
import {createRequire} from 'node:module'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {describeSchemaErrors} from '../core/schema-errors.js'
import {tempHome} from '../../test/helpers/cli.js'
import {StateLockedError, lockState} from './state-lock.js'
import {StateCorruptError, StateStore, inspectStateFile, withState} from './state.js'

describe('state store', () => {
  let home: string
  let cleanup: () => void
  let saved: string | undefined
  beforeEach(() => {
    ;({home, cleanup} = tempHome())
    saved = process.env.GWCTL_HOME
    process.env.GWCTL_HOME = home
  })
  afterEach(() => {
    if (saved === undefined) delete process.env.GWCTL_HOME
    else process.env.GWCTL_HOME = saved
    cleanup()
  })

  it('seeds default policies and a secret, and writes the file with mode 0600 and no temp file left', async () => {
    const path = join(home, 'state.json')
    const store = await StateStore.open(path)
    expect(store.created).toBe(true)
    expect(store.data.policies.map((p) => p.id)).toEqual(['default', 'claude_code_default'])
    expect(store.data.policies[0].routes).toEqual({})
    await store.save()
    expect(statSync(path).mode & 0o777).toBe(0o600)
    expect(readdirSync(home).filter((n) => n.endsWith('.tmp'))).toEqual([])
    const again = await StateStore.open(path)
    expect(again.created).toBe(false)
    expect(again.data.secret).toBe(store.data.secret)
  })

  it('coalesces concurrent saves and every change of every caller is on disk when its save resolves', async () => {
    const path = join(home, 'state.json')
    const store = await StateStore.open(path)
    await Promise.all(
      Array.from({length: 50}, async (_, i) => {
        store.data.employees.push({id: `e${i}`, name: 'n', contact: `c${i}`, createdAt: 1, updatedAt: 1})
        await store.save()
        const onDisk = JSON.parse(readFileSync(path, 'utf8'))
        expect(onDisk.employees.some((e: {id: string}) => e.id === `e${i}`)).toBe(true)
      }),
    )
  })

  it('keeps the bindings the CLI wrote on disk when the daemon saves its own data', async () => {
    const path = join(home, 'state.json')
    await (await StateStore.open(path)).save() // a file without bindings is valid (older files)
    const daemon = await StateStore.open(path, {mode: 'daemon'})
    const binding = {
      tool: 'codex',
      agentId: 'agt_1',
      keyId: 'key_1',
      port: 4999,
      phase: 'bound' as const,
      files: [{path: '/h/.codex/config.toml', original: null, writtenHash: 'a'.repeat(64)}],
      createdAt: 1,
      updatedAt: 1,
    }
    await withState((store) => {
      store.data.bindings = [binding]
    }, path)
    daemon.data.employees.push({id: 'e1', name: 'n', contact: 'c', createdAt: 1, updatedAt: 1})
    await daemon.save()
    const onDisk = JSON.parse(readFileSync(path, 'utf8'))
    expect(onDisk.bindings).toEqual([binding])
    expect(onDisk.employees).toHaveLength(1)
    onDisk.bindings[0].phase = 'half'
    writeFileSync(path, JSON.stringify(onDisk), {mode: 0o600})
    await expect(StateStore.open(path)).rejects.toThrow(
      /"bindings\[0\]\.phase" must be one of binding, bound, unbinding/,
    )
  })

  it('refuses a file that is not JSON or breaks the schema, and inspect reports it', async () => {
    const path = join(home, 'state.json')
    writeFileSync(path, '{"version":1,', {mode: 0o600})
    await expect(StateStore.open(path)).rejects.toBeInstanceOf(StateCorruptError)
    expect(inspectStateFile(path).problems[0]).toMatch(/not JSON/)
    writeFileSync(path, JSON.stringify({version: 1, secret: 'x', employees: []}))
    await expect(StateStore.open(path)).rejects.toThrow(/secret|required/)
    expect(inspectStateFile(path).problems.length).toBeGreaterThan(0)
  })

  it('validates each version of the file once: a checked one is not validated again, any change is', async () => {
    const path = join(home, 'state.json')
    const first = await StateStore.open(path)
    await first.save()
    await StateStore.open(path) // validates and remembers this version
    const checked = readFileSync(`${path}.checked`, 'utf8')
    expect(statSync(`${path}.checked`).mode & 0o777).toBe(0o600)
    await StateStore.open(path)
    expect(readFileSync(`${path}.checked`, 'utf8')).toBe(checked)
    // The same size, changed in place (same inode): an invalid secret must still be refused.
    const text = readFileSync(path, 'utf8')
    const secret = JSON.parse(text).secret as string
    const broken = text.replace(secret, 'Z'.repeat(secret.length))
    expect(broken.length).toBe(text.length)
    writeFileSync(path, broken)
    await expect(StateStore.open(path)).rejects.toThrow(/secret/)
    // A stamp file that says anything else is no proof either.
    writeFileSync(`${path}.checked`, 'nonsense')
    await expect(StateStore.open(path)).rejects.toThrow(/secret/)
    expect(readdirSync(home).filter((n) => n.endsWith('.tmp'))).toEqual([])
  })

  it('locks across writers, and breaks a lock whose owner process is gone', async () => {
    const path = join(home, 'state.json')
    const release = await lockState(path)
    await expect(withState(() => 1, path, {waitMs: 200})).rejects.toBeInstanceOf(StateLockedError)
    await release()
    expect(await withState((s) => s.data.policies.length, path)).toBe(2)

    // a lock left by a killed process (pid 2^22+ never exists on Linux defaults)
    mkdirSync(`${path}.lock`)
    writeFileSync(`${path}.lock.owner`, '4194304999\n')
    expect(await withState(() => 'ok', path, {waitMs: 200})).toBe('ok')
  })

  it('keeps the lock folder and its owner file private while the lock is held', async () => {
    const path = join(home, 'state.json')
    const old = process.umask(0o022)
    try {
      const release = await lockState(path)
      expect((statSync(`${path}.lock`).mode & 0o777).toString(8)).toBe('700')
      expect((statSync(`${path}.lock.owner`).mode & 0o777).toString(8)).toBe('600')
      await release()
    } finally {
      process.umask(old)
    }
  })
})

describe('the state validator npm run build generates (ajv standalone code)', () => {
  const generated = join(import.meta.dirname, '../../dist/store/state-validator.cjs')
  // `npm test` builds first; a bare `vitest run` without a build has nothing to compare.
  it.runIf(existsSync(generated))(
    'gives the same verdict and the same sentences as the schema compiled at run time',
    async () => {
      const {Ajv} = await import('ajv')
      const {STATE_SCHEMA, STATE_VALIDATOR_OPTIONS} = await import('./state-schema.js')
      const compiled = new Ajv(STATE_VALIDATOR_OPTIONS).compile(STATE_SCHEMA)
      const built = createRequire(import.meta.url)(generated) as typeof compiled
      const {home, cleanup} = tempHome()
      try {
        const store = await StateStore.open(join(home, 'state.json'))
        const good = structuredClone(store.data) as unknown as Record<string, unknown>
        const cases: unknown[] = [
          good,
          {...good, secret: 'not-hex'},
          {...good, version: 2},
          {...good, agents: [{id: 'a', name: ''}]},
          {...good, keys: [{id: 'k', agentId: 'a', hash: 'x', prefix: 'gw-', createdAt: -1, extra: 1}]},
          {...good, policies: [{...(good.policies as object[])[0], fallbacks: 'yes'}]},
          [],
          null,
        ]
        for (const data of cases) {
          expect(built(data)).toBe(compiled(data))
          expect(describeSchemaErrors('state', built.errors ?? [])).toEqual(
            describeSchemaErrors('state', compiled.errors ?? []),
          )
        }
        expect(compiled(good)).toBe(true)
      } finally {
        cleanup()
      }
    },
  )
})
