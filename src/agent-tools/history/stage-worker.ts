/**
 * Worker thread of the staged rescan (stage.ts): reads the files it takes into the scratch
 * database the main thread created for it, then posts its result.
 */
import {parentPort, workerData} from 'node:worker_threads'

import {Scratch} from '../../store/history-scratch.js'
import type {StageJob} from './stage.js'
import {jobLock, stageFiles} from './stage.js'

const job = workerData as StageJob
parentPort?.postMessage(
  await stageFiles(job, (gen) => Scratch.open(job.scratches[gen], jobLock(job), job.cacheKb)),
)
