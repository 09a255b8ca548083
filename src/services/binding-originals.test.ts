import {existsSync, readdirSync, statSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {tempHome} from '../../test/helpers/cli.js'
import {hashBytes} from '../agent-tools/config/file-io.js'
import type {BindingFileRecord, GatewayState} from '../store/state-schema.js'
import {backupPath, originalOf, pruneOriginals, saveOriginal, upgradeOriginal} from './binding-originals.js'

describe('binding originals', () => {
  let home: string
  let cleanup: () => void
  const saved = {...process.env}
  beforeEach(() => {
    ;({home, cleanup} = tempHome())
    process.env.GWCTL_HOME = home
  })
  afterEach(() => {
    process.env = {...saved}
    cleanup()
  })
  const BYTES = '{"env": {"ANTHROPIC_API_KEY": "sk-ant-test-secret-123"}}\n'
  const stateOf = (files: BindingFileRecord[]) => ({bindings: [{files}]}) as unknown as GatewayState

  it('keeps an original in a 0600 file named by its hash, and reads it back checked', async () => {
    const hash = await saveOriginal(BYTES)
    expect(hash).toBe(hashBytes(BYTES))
    expect(statSync(backupPath(hash)).mode & 0o777).toBe(0o600)
    const file = {path: '/x', originalHash: hash, writtenHash: null}
    expect((await originalOf(file))?.toString()).toBe(BYTES)
    expect(await saveOriginal(null)).toBe('absent')
    expect(await originalOf({path: '/x', originalHash: 'absent', writtenHash: null})).toBeNull()
    writeFileSync(backupPath(hash), 'tampered')
    await expect(originalOf(file)).rejects.toMatchObject({code: 'binding_backup_missing'})
  })

  it('moves a legacy base64 original out of the record', async () => {
    const file: BindingFileRecord = {
      path: '/x',
      original: Buffer.from(BYTES).toString('base64'),
      writtenHash: null,
    }
    expect((await originalOf(file))?.toString()).toBe(BYTES)
    await upgradeOriginal(file)
    expect(file).toEqual({path: '/x', originalHash: hashBytes(BYTES), writtenHash: null})
    expect((await originalOf(file))?.toString()).toBe(BYTES)
    const gone: BindingFileRecord = {path: '/y', original: null, writtenHash: null}
    await upgradeOriginal(gone)
    expect(gone.originalHash).toBe('absent')
  })

  it('prunes only the backups no binding refers to (a crash before the intent leaves one)', async () => {
    const kept = await saveOriginal(BYTES)
    const orphan = await saveOriginal('left by a kill before the intent was recorded\n')
    await pruneOriginals(stateOf([{path: '/x', originalHash: kept, writtenHash: null}]))
    expect(existsSync(backupPath(kept))).toBe(true)
    expect(existsSync(backupPath(orphan))).toBe(false)
    await pruneOriginals({bindings: []} as unknown as GatewayState)
    expect(readdirSync(join(home, 'bindings'))).toEqual([])
  })
})
