/** Worker thread of the staged rescan (stage.ts): reads its part into its scratch database. */
import {parentPort, workerData} from 'node:worker_threads'

import type {StageJob} from './stage.js'
import {stageFiles} from './stage.js'

parentPort?.postMessage(await stageFiles(workerData as StageJob))
