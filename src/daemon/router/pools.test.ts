import {afterEach, describe, expect, it} from 'vitest'

import {UpstreamPools} from './pools.js'

describe('upstream pools', () => {
  let pools = new UpstreamPools()
  afterEach(async () => {
    await pools.close()
    pools = new UpstreamPools()
  })

  it('gives one pool per origin and timeouts, also to an equal timeouts object', () => {
    const timeouts = {connectMs: 1000, firstByteMs: 2000, idleMs: 3000}
    const a = pools.get('http://127.0.0.1:1', timeouts)
    expect(pools.get('http://127.0.0.1:1', timeouts)).toBe(a)
    expect(pools.get('http://127.0.0.1:1', {...timeouts})).toBe(a)
    expect(pools.get('http://127.0.0.1:2', timeouts)).not.toBe(a)
  })

  it('gives another pool to timeouts edited in place, and new pools after close', async () => {
    const timeouts = {connectMs: 1000, firstByteMs: 2000, idleMs: 3000}
    const a = pools.get('http://127.0.0.1:1', timeouts)
    timeouts.idleMs = 4000
    const b = pools.get('http://127.0.0.1:1', timeouts)
    expect(b).not.toBe(a)
    timeouts.idleMs = 3000
    expect(pools.get('http://127.0.0.1:1', timeouts)).toBe(a)
    await pools.close()
    expect(pools.get('http://127.0.0.1:1', timeouts)).not.toBe(a)
  })
})
