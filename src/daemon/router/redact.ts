/**
 * Redaction of a provider's credential quoted back by an upstream in a streamed or plain answer
 * (issue 14): applied chunk by chunk, without buffering the answer. A key split across two
 * chunks is caught by holding back only the tail of a chunk that is a prefix of the key (real
 * answers end their chunks in "\n" or "}", which no key starts with, so nothing is held back on
 * the ordinary path). The key is replaced by a mask of the same byte length ("[redacted]" padded
 * with "*"), so a Content-Length the upstream sent stays exact. Credentials shorter than
 * MIN_REDACTED_KEY are not masked: a test key such as "k" would otherwise mask every "k" of the
 * answer and break its JSON.
 */
export const MIN_REDACTED_KEY = 8

/** A redactor for `credential`, or undefined when there is nothing worth masking. */
export function keyRedactor(credential: string | undefined): KeyRedactor | undefined {
  return credential && credential.length >= MIN_REDACTED_KEY ? new KeyRedactor(credential) : undefined
}

export class KeyRedactor {
  private readonly key: Buffer
  private readonly mask: Buffer
  private held: Buffer | undefined

  constructor(credential: string) {
    this.key = Buffer.from(credential, 'utf8')
    const label = Buffer.from('[redacted]')
    this.mask =
      this.key.length >= label.length
        ? Buffer.concat([label, Buffer.alloc(this.key.length - label.length, '*')])
        : Buffer.alloc(this.key.length, '*') // a direct KeyRedactor may take a short key
  }

  /** The bytes of `chunk` that can be sent now, the key masked. */
  push(chunk: Buffer): Buffer {
    let data = chunk
    if (this.held) {
      data = Buffer.concat([this.held, chunk])
      this.held = undefined
    }
    const key = this.key
    let at = data.indexOf(key)
    if (at !== -1) {
      if (data === chunk) data = Buffer.from(chunk) // never write into the upstream's buffer
      while (at !== -1) {
        this.mask.copy(data, at)
        at = data.indexOf(key, at + key.length)
      }
    }
    // the longest tail of `data` that could start the key: held for the next chunk
    // (a plain loop over at most key.length - 1 bytes: cheaper than native calls per candidate)
    const length = data.length
    const first = key[0]
    for (let i = Math.max(0, length - key.length + 1); i < length; i++) {
      if (data[i] !== first) continue
      let j = 1
      while (i + j < length && data[i + j] === key[j]) j++
      if (i + j === length) {
        this.held = data.subarray(i)
        return data.subarray(0, i)
      }
    }
    return data
  }

  /** Whatever was held back: the answer ended, so it was not the key. */
  flush(): Buffer {
    const rest = this.held ?? Buffer.alloc(0)
    this.held = undefined
    return rest
  }
}
