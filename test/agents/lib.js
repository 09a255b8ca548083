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

/**
 * A valid one-page PDF (Helvetica, one line of `text`) with a correct cross-reference table, for
 * Claude Code's Read of a PDF (`--pdf`).
 */
export function onePagePdf(text) {
  const content = `BT /F1 18 Tf 20 70 Td (${text.replace(/[()\\]/g, '\\$&')}) Tj ET`
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 144] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ]
  let out = '%PDF-1.4\n'
  const offsets = objects.map((object, i) => {
    const at = out.length
    out += `${i + 1} 0 obj\n${object}\nendobj\n`
    return at
  })
  const xref = out.length
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`
  for (const at of offsets) out += `${String(at).padStart(10, '0')} 00000 n \n`
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`
  return Buffer.from(out, 'latin1')
}
