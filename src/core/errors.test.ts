import {describe, expect, it} from 'vitest'

import {ExitCode, fileSystemError} from './errors.js'

const errno = (code: string, extra: Record<string, unknown> = {}) =>
  Object.assign(new Error(`${code}: something, open '/h/state.json'`), {code, ...extra})

describe('fileSystemError (issue 29, item 5)', () => {
  it.each([
    ['EROFS', 'home_read_only', /read-only/],
    ['EACCES', 'home_not_writable', /permission denied/],
    ['EPERM', 'home_not_writable', /not permitted/],
    ['ENOSPC', 'disk_full', /no space/],
    ['EDQUOT', 'disk_full', /quota/],
  ])('%s is a config error (exit 3) naming the path', (code, gwCode, what) => {
    const gw = fileSystemError(errno(code, {path: '/h/state.json', syscall: 'open'}))!
    expect(gw.exitCode).toBe(ExitCode.config)
    expect(gw.code).toBe(gwCode)
    expect(gw.message).toMatch(what)
    expect(gw.message).toContain('open /h/state.json')
    expect(gw.hint).toBeTruthy()
  })

  it.each([
    ['SQLITE_NOTADB', 'database_damaged'],
    ['SQLITE_CORRUPT', 'database_damaged'],
    ['SQLITE_CORRUPT_VTAB', 'database_damaged'],
    ['SQLITE_READONLY', 'home_not_writable'],
    ['SQLITE_CANTOPEN', 'home_not_writable'],
    ['SQLITE_FULL', 'disk_full'],
    ['SQLITE_IOERR_WRITE', 'disk_error'],
  ])('%s is a config error too', (code, gwCode) => {
    const gw = fileSystemError(errno(code, {path: '/h/logs.db'}))!
    expect(gw.exitCode).toBe(ExitCode.config)
    expect(gw.code).toBe(gwCode)
    expect(gw.message).toContain('/h/logs.db')
  })

  it('leaves other errors alone', () => {
    expect(fileSystemError(new Error('boom'))).toBeUndefined()
    expect(fileSystemError(errno('ECONNREFUSED'))).toBeUndefined()
    expect(fileSystemError(errno('SQLITE_BUSY'))).toBeUndefined()
    expect(fileSystemError(undefined)).toBeUndefined()
  })
})
