/**
 * Worker thread of the staged rescan (stage.ts): reads its part into chunks, handing each one
 * over when complete, then posts its result.
 */
import {parentPort, workerData} from 'node:worker_threads'

import type {StageJob} from './stage.js'
import {stageFiles} from './stage.js'

const result = await stageFiles(workerData as StageJob, undefined, undefined, (chunk) =>
  parentPort?.postMessage({chunk}),
)
parentPort?.postMessage(result)
