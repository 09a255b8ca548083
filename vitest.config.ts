import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {defineConfig} from 'vitest/config'

// No test reads or writes the real home folder (agent discovery and history scanners look there).
const testHome = mkdtempSync(join(tmpdir(), 'gwctl-test-home-'))

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'src/**/*.test.tsx', 'test/**/*.test.ts'],
    exclude: ['test/agents/**', 'node_modules/**'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // e2e tests spawn bin/run.js (a Node process each); two cores.
    maxWorkers: 2,
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['test/setup-worker.ts'],
    env: {
      NO_COLOR: '1',
      TZ: 'UTC',
      NODE_EXTRA_CA_CERTS: '',
      HOME: testHome,
      XDG_CONFIG_HOME: join(testHome, '.config'),
      CLAUDE_CONFIG_DIR: '',
      CODEX_HOME: '',
      GEMINI_CLI_HOME: '',
      GEMINI_DATA_DIR: '',
    },
  },
})
