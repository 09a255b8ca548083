/** Reading all of stdin, for `--api-key-stdin` and `--file -`. */
import {UsageError} from '../core/errors.js'

/** All of stdin as text; exit 2 when stdin is a terminal (nothing was piped). */
export async function readAllStdin(what: string, signal?: AbortSignal): Promise<string> {
  if (process.stdin.isTTY) {
    throw new UsageError(`${what} reads stdin, but nothing was piped.`, {
      code: 'stdin_is_tty',
      hint: `Pipe it in, e.g. printf %s "$VALUE" | gwctl ...`,
    })
  }
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) {
    if (signal?.aborted) break
    chunks.push(chunk as Buffer)
  }
  return Buffer.concat(chunks).toString('utf8')
}
