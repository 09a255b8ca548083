/**
 * The one stdin reader: `--api-key-stdin`, `--file -`, gamma's `--text -` and `--content -`, and
 * the message piped to `gwctl chat`.
 */
import {UsageError} from '../core/errors.js'

/** Every byte on stdin as UTF-8 text; stops early, with what it has, when `signal` aborts. */
export async function readStdin(signal?: AbortSignal): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) {
    if (signal?.aborted) break
    chunks.push(chunk as Buffer)
  }
  return Buffer.concat(chunks).toString('utf8')
}

/** All of stdin as text; exit 2 when stdin is a terminal (nothing was piped). */
export async function readAllStdin(what: string, signal?: AbortSignal): Promise<string> {
  if (process.stdin.isTTY) {
    throw new UsageError(`${what} reads stdin, but nothing was piped.`, {
      code: 'stdin_is_tty',
      hint: `Pipe it in, e.g. printf %s "$VALUE" | gwctl ...`,
    })
  }
  return readStdin(signal)
}
