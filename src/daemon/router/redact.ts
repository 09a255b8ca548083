/**
 * Redacts a secret from a streamed body, chunk by chunk, as it passes to the client: an upstream
 * that quotes the provider key back (an echo endpoint, a debug field) must not hand it to an
 * agent. The mask has the secret's length, so a `content-length` stays true. Nothing is held back
 * but the tail of a chunk that could be the start of the secret (almost never: an SSE event ends
 * in a blank line), so streaming keeps its timing.
 */
/**
 * The bytes of each secret and of its mask, made once per secret rather than per answer (a
 * handful of provider credentials; bounded anyway). Read only: never written into.
 */
const encoded = new Map<string, {secret: Buffer; mask: Buffer}>()
const MAX_ENCODED = 64

function encodedSecret(secret: string): {secret: Buffer; mask: Buffer} {
  let found = encoded.get(secret)
  if (!found) {
    const bytes = Buffer.from(secret, 'utf8')
    const label = '[redacted]'
    const mask = Buffer.from(
      bytes.length >= label.length
        ? label + '*'.repeat(bytes.length - label.length)
        : '*'.repeat(bytes.length),
      'utf8',
    )
    if (encoded.size >= MAX_ENCODED) encoded.clear()
    found = {secret: bytes, mask}
    encoded.set(secret, found)
  }
  return found
}

export class SecretRedactor {
  private readonly secret: Buffer
  private readonly mask: Buffer
  private carry: Buffer | undefined = undefined

  constructor(secret: string) {
    const {secret: bytes, mask} = encodedSecret(secret)
    this.secret = bytes
    this.mask = mask
  }

  /** The bytes of `chunk` that can go out now, redacted. */
  push(chunk: Buffer): Buffer {
    let data = this.carry ? Buffer.concat([this.carry, chunk]) : chunk
    this.carry = undefined
    let at = data.indexOf(this.secret)
    if (at !== -1) {
      if (data === chunk) data = Buffer.from(chunk) // never write into the upstream's buffer
      for (; at !== -1; at = data.indexOf(this.secret, at + this.secret.length)) this.mask.copy(data, at)
    }
    const keep = this.partialTail(data)
    if (keep === 0) return data
    this.carry = Buffer.from(data.subarray(data.length - keep))
    return data.subarray(0, data.length - keep)
  }

  /** What is still held back (at the end of the body: it was not the secret). */
  flush(): Buffer {
    const rest = this.carry ?? Buffer.alloc(0)
    this.carry = undefined
    return rest
  }

  /** Length of the longest tail of `data` that is a proper start of the secret. */
  private partialTail(data: Buffer): number {
    const first = this.secret[0]
    const from = Math.max(0, data.length - this.secret.length + 1)
    for (let i = data.indexOf(first, from); i !== -1; i = data.indexOf(first, i + 1)) {
      const n = data.length - i
      if (data.compare(this.secret, 0, n, i) === 0) return n
    }
    return 0
  }
}
