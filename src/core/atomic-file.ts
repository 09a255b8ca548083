/**
 * Durable file replacement, shared by the gateway state and the agents' config files that route
 * binding edits: a temp file beside the target (its mode set from the first byte), fsync, rename,
 * then fsync of the folder. A `kill -9` or power loss at any moment leaves either the old or the
 * new file, never a torn one. Temp files are named `.<name>.gwctl-<pid>-<uuid>.tmp`.
 */
import {open, rename, rm} from 'node:fs/promises'
import {basename, dirname, join} from 'node:path'

/** Replaces `path` with `data` atomically; the new file gets `mode` (0600 unless said). */
export async function writeFileAtomic(path: string, data: Buffer | string, mode = 0o600): Promise<void> {
  const dir = dirname(path)
  // the global `crypto` loads node:crypto on first use (4-6 ms): only commands that write pay it
  const temp = join(dir, `.${basename(path)}.gwctl-${process.pid}-${crypto.randomUUID()}.tmp`)
  const handle = await open(temp, 'wx', mode)
  try {
    await handle.writeFile(data)
    await handle.chmod(mode) // the umask may have narrowed it
    await handle.sync()
  } catch (error) {
    await handle.close()
    await rm(temp, {force: true})
    throw error
  }
  await handle.close()
  try {
    await rename(temp, path)
  } catch (error) {
    await rm(temp, {force: true})
    throw error
  }
  await syncDir(dir)
}

/** fsyncs a folder so a rename or delete in it survives a power loss. */
export async function syncDir(dir: string): Promise<void> {
  let handle
  try {
    handle = await open(dir, 'r')
    await handle.sync()
  } catch {
    // not every platform can fsync a folder; the rename is still atomic
  } finally {
    await handle?.close()
  }
}
