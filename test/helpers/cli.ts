/**
 * Shared helpers of the end-to-end tests: a temp GWCTL_HOME per test, a free port, and a runner
 * that spawns the real `gwctl` (`bin/gwctl.cjs`, package.json's bin) with a fixed environment.
 */
import {mkdtempSync, rmSync} from 'node:fs'
import {createServer} from 'node:net'
import {tmpdir} from 'node:os'
import {join, resolve} from 'node:path'
import {fileURLToPath} from 'node:url'
import type {ResultPromise} from 'execa'
import {execa} from 'execa'

export const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)))
export const BIN = join(ROOT, 'bin', 'gwctl.cjs')

/** The test ports: 20 000 to 31 999, a block of 500 for each of 24 workers. */
const FIRST_PORT = 20_000
const PORTS_A_WORKER = 500
const WORKER_BLOCKS = 24

/** A fresh GWCTL_HOME folder; `cleanup()` removes it. */
export function tempHome(): {home: string; cleanup: () => void} {
  const home = mkdtempSync(join(tmpdir(), 'gwctl-test-'))
  return {home, cleanup: () => rmSync(home, {recursive: true, force: true})}
}

/** Whether a server can listen on `port` of 127.0.0.1 now (it is closed again at once). */
function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer()
    server.unref()
    server.once('error', () => resolve(false))
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)))
  })
}

/** The next port this process tries (see {@link freePort}). */
let nextPort = process.pid % PORTS_A_WORKER

/**
 * A port that was free a moment ago (never 4317). Test files run in parallel workers, and a port
 * the kernel gave out for `listen(0)` and took back can be given again to another worker's probe
 * before the first one's daemon binds it: two daemons on one port, one start failing. So each
 * worker (VITEST_POOL_ID) takes ports from a block of its own, below Linux's ephemeral range
 * (32768 on), where no outgoing connection's local port lands either; one found taken (another
 * run of the tests on this machine) is passed over.
 */
export async function freePort(): Promise<number> {
  const worker = Number(process.env.VITEST_POOL_ID ?? 0) % WORKER_BLOCKS
  for (let tries = 0; tries < PORTS_A_WORKER; tries++) {
    const port = FIRST_PORT + worker * PORTS_A_WORKER + (nextPort++ % PORTS_A_WORKER)
    if (port !== 4317 && (await canListen(port))) return port
  }
  // every port of the block taken: one the kernel picks
  for (;;) {
    const port = await new Promise<number>((res, rej) => {
      const server = createServer()
      server.unref()
      server.on('error', rej)
      server.listen(0, '127.0.0.1', () => {
        const address = server.address()
        server.close(() => res(typeof address === 'object' && address ? address.port : 0))
      })
    })
    if (port !== 4317) return port
  }
}

export interface CliResult {
  stdout: string
  stderr: string
  exitCode: number
}

export interface RunOptions {
  home: string
  env?: Record<string, string | undefined>
  input?: string
  timeoutMs?: number
}

/** The environment every spawned gwctl gets: isolated home, no colour, UTC, no user overrides. */
export function cliEnv(
  home: string,
  extra: Record<string, string | undefined> = {},
): Record<string, string | undefined> {
  return {
    GWCTL_HOME: home,
    NO_COLOR: '1',
    TZ: 'UTC',
    NODE_EXTRA_CA_CERTS: undefined,
    GWCTL_BASE_URL: undefined,
    GWCTL_API_KEY: undefined,
    GWCTL_GATEWAY_PORT: undefined,
    GWCTL_VERBOSE: undefined,
    // `usage prices update` downloads only from where a test points it
    GWCTL_PRICES_URL: undefined,
    // Vendor keys would give the gateway default routes to real vendors: tests stay on loopback.
    OPENAI_API_KEY: undefined,
    ANTHROPIC_API_KEY: undefined,
    GEMINI_API_KEY: undefined,
    GOOGLE_API_KEY: undefined,
    // Agent discovery and the history scanners read the user's home: never the real one.
    HOME: join(home, 'user-home'),
    XDG_CONFIG_HOME: undefined,
    CLAUDE_CONFIG_DIR: undefined,
    CODEX_HOME: undefined,
    GEMINI_CLI_HOME: undefined,
    GEMINI_DATA_DIR: undefined,
    XDG_DATA_HOME: undefined,
    OPENCODE_CONFIG: undefined,
    OPENCODE_DB: undefined,
    QWEN_HOME: undefined,
    QWEN_RUNTIME_DIR: undefined,
    OPENAI_BASE_URL: undefined,
    ANTHROPIC_BASE_URL: undefined,
    ANTHROPIC_AUTH_TOKEN: undefined,
    GOOGLE_GEMINI_BASE_URL: undefined,
    ...extra,
  }
}

/** Runs `gwctl <args>` to completion; never throws on a non-zero exit. */
export async function runCli(args: string[], options: RunOptions): Promise<CliResult> {
  const result = await execa('node', [BIN, ...args], {
    env: cliEnv(options.home, options.env),
    extendEnv: true,
    input: options.input,
    stdin: options.input === undefined ? 'ignore' : undefined,
    reject: false,
    timeout: options.timeoutMs ?? 60_000,
    stripFinalNewline: false,
  })
  return {stdout: String(result.stdout), stderr: String(result.stderr), exitCode: result.exitCode ?? -1}
}

/** Starts `gwctl <args>` without waiting, for long-running commands. */
export function spawnCli(args: string[], options: RunOptions): ResultPromise {
  return execa('node', [BIN, ...args], {
    env: cliEnv(options.home, options.env),
    extendEnv: true,
    reject: false,
    buffer: true,
  })
}

/** Parses stdout as exactly one JSON document. */
export function json<T = any>(result: CliResult): T {
  return JSON.parse(result.stdout) as T
}
