import {Readable} from 'node:stream'
import {describe, expect, it} from 'vitest'
import {readAll, TooLarge} from './translated.js'

type Body = Parameters<typeof readAll>[0]
const body = (chunks: Buffer[], fail?: Error): Body => {
  let i = 0
  return new Readable({
    read() {
      if (i < chunks.length) this.push(chunks[i++])
      else if (fail) this.destroy(fail)
      else this.push(null)
    },
  }) as unknown as Body
}

describe('readAll (a translated answer read whole)', () => {
  it('gives the bytes of every chunk, in order', async () => {
    const bytes = await readAll(body([Buffer.from('{"a":'), Buffer.from('1}')]), 100)
    expect(bytes.toString()).toBe('{"a":1}')
  })

  it('gives an empty answer as no bytes', async () => {
    expect((await readAll(body([]), 100)).length).toBe(0)
  })

  it('refuses an answer past the cap and stops reading it', async () => {
    const readable = body([Buffer.alloc(60), Buffer.alloc(60), Buffer.alloc(60)])
    await expect(readAll(readable, 100)).rejects.toBeInstanceOf(TooLarge)
    expect((readable as unknown as Readable).destroyed).toBe(true)
  })

  it('fails with the body’s error when it breaks off', async () => {
    const error = new Error('other side closed')
    await expect(readAll(body([Buffer.from('{"a"')], error), 100)).rejects.toBe(error)
  })
})
