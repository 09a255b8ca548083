import js from '@eslint/js'
import tseslint from 'typescript-eslint'

/**
 * The layering of src/ (docs/ARCHITECTURE.md says the same in words): what each folder may import
 * statically. An arrow that points the wrong way fails `npm run lint`. Dynamic `import()` is not
 * checked, so the daemon may load the simulator for `--sim` and commands may load the daemon for
 * `gateway run`, both lazily. Tests (`*.test.ts`) may import whatever they exercise.
 */
const LAYERS = {
  core: [],
  store: ['core'],
  protocols: ['core'],
  gateway: ['store', 'core'],
  'agent-tools': ['gateway', 'store', 'core'],
  api: ['store', 'core'],
  completion: ['store', 'core'],
  hooks: ['core'],
  services: ['api', 'gateway', 'agent-tools', 'protocols', 'store', 'core'],
  sim: ['api', 'gateway', 'protocols', 'store', 'core'],
  daemon: ['gateway', 'protocols', 'agent-tools', 'store', 'core'],
  cli: ['services', 'api', 'gateway', 'agent-tools', 'protocols', 'store', 'core'],
  ui: ['services', 'cli', 'gateway', 'store', 'core'],
  commands: ['cli', 'ui', 'services', 'api', 'gateway', 'agent-tools', 'store', 'completion', 'core'],
}
const FOLDERS = Object.keys(LAYERS)

/** One block per folder: every other folder it may not import is a restricted pattern. */
const layering = FOLDERS.map((folder) => {
  const allowed = new Set([folder, ...LAYERS[folder]])
  const patterns = FOLDERS.filter((f) => !allowed.has(f)).map((f) => ({
    group: [`**/${f}/**`, `../${f}/*`, `../../${f}/*`],
    message: `src/${folder}/ may not import src/${f}/ (docs/ARCHITECTURE.md). Allowed: ${LAYERS[folder].join(', ') || 'nothing outside itself'}.`,
  }))
  if (folder === 'commands')
    // "A command never talks HTTP itself": types from the clients are fine, calls go through a service.
    patterns.push({
      group: ['**/api/http.js', '**/api/loopback-client.js'],
      allowTypeImports: true,
      message: 'A command never talks HTTP itself: call a service (src/services/).',
    })
  return {
    files: [`src/${folder}/**/*.ts`, `src/${folder}/**/*.tsx`],
    ignores: ['**/*.test.ts', '**/*.test.tsx'],
    rules: {'@typescript-eslint/no-restricted-imports': ['error', {patterns}]},
  }
})

export default tseslint.config(
  {ignores: ['dist/**', 'build/**', 'node_modules/**', 'coverage/**', 'oclif.manifest.json']},
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: {parserOptions: {projectService: true, tsconfigRootDir: import.meta.dirname}},
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', {argsIgnorePattern: '^_', varsIgnorePattern: '^_'}],
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  ...layering,
  {
    files: ['**/*.js'],
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
        Buffer: 'readonly',
        performance: 'readonly',
        fetch: 'readonly',
        AbortController: 'readonly',
      },
    },
  },
  {
    // bin/gwctl.cjs: the one CommonJS file (the `gwctl` command, see its header)
    files: ['**/*.cjs'],
    languageOptions: {sourceType: 'commonjs', globals: {process: 'readonly', require: 'readonly'}},
    rules: {'@typescript-eslint/no-require-imports': 'off'},
  },
)
