/**
 * A state written before the backups of bindings' originals (base64 `original` in state.json,
 * vendor keys included) is migrated on the first load that sees it: the backups under
 * `<GWCTL_HOME>/bindings/` (0600), then the state without them; crash-safe (kill -9 loop on a real
 * process), and a load that cannot migrate (lock held elsewhere, home refusing the backup) still
 * loads, the state left as it was.
 */
import {spawn} from 'node:child_process'
import {createHash} from 'node:crypto'
import {
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {ROOT, runCli, tempHome} from '../../test/helpers/cli.js'
import {StateStore} from './state.js'
import {initialState, validateState} from './state-schema.js'

const SECRET = 'sk-ant-api03-legacy-vendor-secret-0123456789'
const FILES = [
  `{\n  "env": {"ANTHROPIC_API_KEY": "${SECRET}"}\n}\n`,
  `# codex\nmodel = "gpt-5"\n[mcp_servers.x]\nenv = {TOKEN = "${SECRET}-mcp"}\n`,
  `export GEMINI_API_KEY=${SECRET}-gemini\n`,
  `{"theme": "dark"}\n`,
]

const sha = (s: string) => createHash('sha256').update(s).digest('hex')

/** A valid state whose bindings keep their originals in base64 (as gwctl 0.1 wrote them). */
function legacyState() {
  const state = initialState() as unknown as Record<string, unknown>
  const now = Math.floor(Date.now() / 1000)
  state.bindings = [
    {
      tool: 'claude-code',
      agentId: 'agt_a',
      keyId: 'key_a',
      port: 4317,
      phase: 'bound',
      files: [{path: '/u/.claude/settings.json', original: b64(FILES[0]), writtenHash: sha('w0')}],
      createdAt: now,
      updatedAt: now,
    },
    {
      tool: 'codex',
      agentId: 'agt_b',
      keyId: 'key_b',
      port: 4317,
      phase: 'bound',
      files: [{path: '/u/.codex/config.toml', original: b64(FILES[1]), writtenHash: sha('w1')}],
      createdAt: now,
      updatedAt: now,
    },
    {
      tool: 'gemini-cli',
      agentId: 'agt_c',
      keyId: 'key_c',
      port: 4317,
      phase: 'bound',
      files: [
        {path: '/u/.gemini/.env', original: b64(FILES[2]), writtenHash: sha('w2')},
        {path: '/u/.gemini/settings.json', original: b64(FILES[3]), writtenHash: sha('w3')},
        {path: '/u/.gemini/new.json', original: null, writtenHash: sha('w4')},
      ],
      createdAt: now,
      updatedAt: now,
    },
  ]
  return state
}

function b64(s: string): string {
  return Buffer.from(s).toString('base64')
}

describe('migration of base64 originals out of state.json', () => {
  let home: string
  let cleanup: () => void
  const saved = {...process.env}
  const statePath = () => join(home, 'state.json')
  const stateText = () => readFileSync(statePath(), 'utf8')
  const writeLegacy = () => writeFileSync(statePath(), JSON.stringify(legacyState(), null, 2), {mode: 0o600})
  beforeEach(() => {
    ;({home, cleanup} = tempHome())
    process.env.GWCTL_HOME = home
  })
  afterEach(() => {
    process.env = {...saved}
    cleanup()
  })

  /** Every file record points at a backup holding its exact bytes, and no secret is left. */
  function expectMigrated() {
    const text = stateText()
    expect(text).not.toContain('"original"')
    expect(text).not.toContain(SECRET)
    for (const f of FILES) expect(text).not.toContain(b64(f).slice(0, 24))
    const state = JSON.parse(text)
    expect(validateState(state)).toEqual([])
    const hashes = state.bindings.flatMap((b: {files: Array<{originalHash: string}>}) =>
      b.files.map((f) => f.originalHash),
    )
    expect(hashes).toEqual([...FILES.map(sha), 'absent'])
    expect(statSync(join(home, 'bindings')).mode & 0o777).toBe(0o700)
    for (const [i, f] of FILES.entries()) {
      const backup = join(home, 'bindings', `${sha(f)}.orig`)
      expect(readFileSync(backup, 'utf8'), `backup ${i}`).toBe(f)
      expect(statSync(backup).mode & 0o777).toBe(0o600)
    }
    expect(readdirSync(join(home, 'bindings')).sort()).toEqual(FILES.map((f) => `${sha(f)}.orig`).sort())
    expect(statSync(statePath()).mode & 0o777).toBe(0o600)
  }

  it('moves them into 0600 backups on a plain load (no lock held), and the load sees the new records', async () => {
    writeLegacy()
    expect(stateText()).toContain(b64(FILES[0]))
    const store = await StateStore.open(statePath())
    expectMigrated()
    expect(store.data.bindings?.[0].files[0]).toEqual({
      path: '/u/.claude/settings.json',
      originalHash: sha(FILES[0]),
      writtenHash: sha('w0'),
    })
    // a second load has nothing to do and changes nothing
    const before = stateText()
    await StateStore.open(statePath())
    expect(stateText()).toBe(before)
    // no lock or temp file left behind
    expect(readdirSync(home).filter((n) => n.includes('.lock') || n.endsWith('.tmp'))).toEqual([])
  })

  it('migrates past a fresh lock left without its owner file (a holder killed right after taking it)', async () => {
    writeLegacy()
    // proper-lockfile's lock folder, just made, and no owner file: what a kill between taking the
    // lock and writing the owner file leaves. Its modification time is what proper-lockfile's
    // precision probe sets: the next whole second + 5 ms, up to a second ahead of the clock
    mkdirSync(`${statePath()}.lock`)
    const probe = (Math.ceil(Date.now() / 1000) * 1000 + 1005) / 1000
    utimesSync(`${statePath()}.lock`, probe, probe)
    const started = Date.now()
    await StateStore.open(statePath())
    expectMigrated()
    // taken over once the lock was a second old, not after proper-lockfile's 10 s staleness
    expect(Date.now() - started).toBeLessThan(5000)
    expect(readdirSync(home).filter((n) => n.includes('.lock'))).toEqual([])
  })

  it('migrates on the first command that loads the state (`gwctl status`)', async () => {
    writeLegacy()
    const status = await runCli(['status'], {home})
    // 6: the gateway is not running (the bindings point at it); the load itself went through
    expect(status.exitCode, status.stderr).toBe(6)
    expect(status.stdout + status.stderr).not.toContain('bug')
    expectMigrated()
  })

  it('leaves the state as it was, and still loads it, when another process holds the lock', async () => {
    writeLegacy()
    // a live holder: the lock folder proper-lockfile makes, fresh, and its owner file naming a
    // live process
    const holder = spawn('sleep', ['30'], {stdio: 'ignore'})
    try {
      mkdirSync(`${statePath()}.lock`)
      writeFileSync(`${statePath()}.lock.owner`, `${holder.pid}\n`)
      const before = stateText()
      const t0 = Date.now()
      const store = await StateStore.open(statePath())
      expect(Date.now() - t0).toBeLessThan(5_000) // waited for the lock at most 1 s, then went on
      expect(stateText()).toBe(before)
      expect(store.data.bindings?.[0].files[0].original).toBe(b64(FILES[0]))
      expect(existsSync(join(home, 'bindings'))).toBe(false)
    } finally {
      holder.kill('SIGKILL')
    }
    // once the holder is gone, the next load migrates
    await StateStore.open(statePath())
    expectMigrated()
  })

  it('leaves the state as it was when the backup cannot be written, and the load still works', async () => {
    writeLegacy()
    writeFileSync(join(home, 'bindings'), 'not a folder') // mkdir of the backups folder fails
    const before = stateText()
    const store = await StateStore.open(statePath())
    expect(stateText()).toBe(before)
    expect(store.data.bindings?.[0].files[0].original).toBe(b64(FILES[0]))
  })

  it('is crash-safe: kill -9 at any moment of the migration leaves a complete state', async () => {
    const script = `
      const {StateStore} = await import(${JSON.stringify(join(ROOT, 'dist', 'store', 'state.js'))})
      process.stdout.write('go\\n')
      const t0 = performance.now()
      await StateStore.open(process.env.GWCTL_HOME + '/state.json')
      process.stdout.write('done ' + Math.ceil(performance.now() - t0) + '\\n')
    `
    const outcomes = {killedBefore: 0, killedDuring: 0, finished: 0}
    // the first loop is not killed: it says how long a whole migrating load takes, and the kills
    // of the next loops are spread over that time
    let loadMs = 0
    const loops = 20
    for (let loop = 0; loop < loops; loop++) {
      writeLegacy()
      rmSync(join(home, 'bindings'), {recursive: true, force: true})
      const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
        env: {...process.env, GWCTL_HOME: home},
        stdio: ['ignore', 'pipe', 'inherit'],
      })
      let out = ''
      const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()))
      await new Promise<void>((resolve) => {
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString()
          if (out.includes('go')) resolve()
        })
        child.on('exit', () => resolve())
      })
      if (loop > 0) {
        await new Promise((r) => setTimeout(r, Math.floor((loadMs * 1.2 * (loop - 1)) / (loops - 2))))
        child.kill('SIGKILL')
      }
      await exited
      if (loop === 0) loadMs = Number(/done (\d+)/.exec(out)?.[1])
      // whatever the moment: the state parses and validates, and every record is either still
      // base64 or points at a backup with exactly its bytes
      const state = JSON.parse(stateText())
      expect(validateState(state), `loop ${loop}`).toEqual([])
      for (const b of state.bindings)
        for (const f of b.files) {
          if (f.originalHash === undefined || f.originalHash === 'absent') continue
          expect(readFileSync(join(home, 'bindings', `${f.originalHash}.orig`)).toString()).toBe(
            FILES.find((x) => sha(x) === f.originalHash),
          )
        }
      if (out.includes('done')) outcomes.finished++
      else if (existsSync(join(home, 'bindings')))
        outcomes.killedDuring++ // backups, no new state
      else outcomes.killedBefore++
      // the next load completes it, also after a kill between taking the state lock and writing
      // its owner file: that ownerless lock is taken over after its 1 s grace, within the load's wait
      await StateStore.open(statePath())
      expectMigrated()
    }
    console.log(`migration kill loop (a whole load ${loadMs} ms): ${JSON.stringify(outcomes)}`)
    expect(loadMs).toBeGreaterThan(0)
    expect(outcomes.killedBefore + outcomes.killedDuring + outcomes.finished).toBe(loops)
  }, 60_000)
})
