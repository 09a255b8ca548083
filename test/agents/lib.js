// Helpers of the agent-CLI suite: processes, ports, files. Plain Node, no dependencies.
import {spawn} from 'node:child_process'
import {existsSync, readdirSync, readFileSync, statSync} from 'node:fs'
import {createServer} from 'node:net'
import {join} from 'node:path'

/** A port that was free a moment ago (never 4317, the gateway's default). */
export async function freePort() {
  for (;;) {
    const port = await new Promise((resolve, reject) => {
      const server = createServer()
      server.unref()
      server.on('error', reject)
      server.listen(0, '127.0.0.1', () => {
        const address = server.address()
        server.close(() => resolve(address.port))
      })
    })
    if (port !== 4317) return port
  }
}

/**
 * Runs a command to completion with stdin closed (`/dev/null`) and the given environment only
 * (nothing inherited). Resolves `{code, stdout, stderr, ms}`; never rejects on a non-zero exit.
 */
export function run(cmd, args, {cwd, env, timeoutMs = 130_000} = {}) {
  return new Promise((resolve) => {
    const started = performance.now()
    const child = spawn(cmd, args, {cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true})
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    const timer = setTimeout(() => {
      stderr += `\n[suite] killed after ${timeoutMs} ms`
      try {
        process.kill(-child.pid, 'SIGKILL')
      } catch {
        // already gone
      }
    }, timeoutMs)
    child.on('error', (error) => {
      clearTimeout(timer)
      resolve({code: -1, stdout, stderr: stderr + String(error), ms: performance.now() - started})
    })
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      resolve({code: code ?? (signal ? 128 : -1), stdout, stderr, ms: performance.now() - started})
    })
  })
}

/** Every file below `dir` whose name matches `pattern` (depth-first, sorted). */
export function findFiles(dir, pattern) {
  if (!existsSync(dir)) return []
  const out = []
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) out.push(...findFiles(path, pattern))
    else if (pattern.test(name)) out.push(path)
  }
  return out
}

/** The JSON objects of a JSONL file (unparsable lines skipped). */
export function readJsonl(path) {
  const lines = []
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (!line.trim()) continue
    try {
      lines.push(JSON.parse(line))
    } catch {
      // a partial last line
    }
  }
  return lines
}

/** The last `n` lines of a text, indented, for a failure report. */
export function tail(text, n = 15) {
  return String(text)
    .trimEnd()
    .split('\n')
    .slice(-n)
    .map((line) => '      ' + line)
    .join('\n')
}

/** GET a JSON document from a loopback URL. */
export async function getJson(url, headers = {}) {
  const response = await fetch(url, {headers})
  const text = await response.text()
  let body
  try {
    body = JSON.parse(text)
  } catch {
    body = text
  }
  return {status: response.status, body}
}

/** Compares `actual` with `expected` on the keys of `expected`; returns the differences. */
export function diff(label, actual, expected) {
  const problems = []
  for (const [key, want] of Object.entries(expected)) {
    const got = actual?.[key]
    if (got !== want) problems.push(`${label}.${key} is ${JSON.stringify(got)}, want ${want}`)
  }
  return problems
}
