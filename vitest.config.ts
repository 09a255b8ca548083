import {defineConfig} from 'vitest/config'

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'src/**/*.test.tsx', 'test/**/*.test.ts'],
    exclude: ['test/agents/**', 'node_modules/**'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // e2e tests spawn bin/run.js (a Node process each); two cores.
    maxWorkers: 2,
    globalSetup: ['test/global-setup.ts'],
    env: {NO_COLOR: '1', TZ: 'UTC', NODE_EXTRA_CA_CERTS: ''},
  },
})
