/**
 * Whether the history of an agent tool has been scanned: the `history_files` table of
 * `<GWCTL_HOME>/logs.db` has a row whose `tool` is the tool's name (the contract with the history
 * scanners). A missing database or table means "not scanned". better-sqlite3 is loaded only
 * when the database exists, and opened read-only.
 */
import {existsSync} from 'node:fs'

import {homeFile} from '../store/paths.js'
import type {AgentTool} from '../store/history-rows.js'

/** The tools with at least one scanned history file (empty when nothing was scanned). */
export async function scannedTools(dbPath: string = homeFile('logDb')): Promise<Set<AgentTool>> {
  const result = new Set<AgentTool>()
  if (!existsSync(dbPath)) return result
  let db
  try {
    const {openSqlite} = await import('../store/sqlite.js')
    db = openSqlite(dbPath, {readonly: true, fileMustExist: true})
    const table = db
      .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'history_files'")
      .get()
    if (!table) return result
    for (const row of db.prepare('SELECT DISTINCT tool FROM history_files').all() as Array<{tool: string}>)
      result.add(row.tool as AgentTool)
  } catch {
    // a locked or damaged database: doctor's log-db check reports it; here it reads as "not scanned"
  } finally {
    db?.close()
  }
  return result
}
