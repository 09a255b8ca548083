import {existsSync} from 'node:fs'
import {join} from 'node:path'

import {ROOT} from './helpers/cli.js'

/** End-to-end tests spawn the built CLI: fail loudly when it was not built. */
export default function setup(): void {
  if (!existsSync(join(ROOT, 'dist', 'commands')) || !existsSync(join(ROOT, 'oclif.manifest.json'))) {
    throw new Error('dist/ is missing: run `npm test` (it builds first) or `npm run build`.')
  }
}
