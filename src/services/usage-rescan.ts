/**
 * The history scan behind `gwctl usage rescan` (and the incremental scan `gwctl usage` runs
 * without a daemon): kept apart from `usage.ts`, whose gateway and log imports a rescan never
 * needs (a full rescan is timed against ccusage, start-up included).
 */
import type {AgentTool} from '../store/history-rows.js'
import type {ScanStats} from '../agent-tools/history/scan.js'
import type {HistoryStore} from '../store/history-store.js'
import {homeFile} from '../store/paths.js'

/** Opens the history tables in the log database. */
export async function openHistory(): Promise<HistoryStore> {
  const {HistoryStore: Store} = await import('../store/history-store.js')
  return Store.open(homeFile('logDb'))
}

/** Scans the agents' history into the log database: incremental, or every file whole (`full`). */
export async function rescanHistory(
  options: {full?: boolean; tools?: AgentTool[]; signal?: AbortSignal} = {},
): Promise<ScanStats> {
  const {scanHistory} = await import('../agent-tools/history/scan.js')
  const store = await openHistory()
  try {
    return await scanHistory(store, options)
  } finally {
    store.close()
  }
}
