/**
 * What a budget has spent since its period started, read from the log database with the very
 * query `gwctl usage --source gateway` runs (usage-query.ts): groups per provider and model of the
 * rows of one agent, key, policy or project. The daemon reads it at start and when budgets change;
 * `gwctl budgets list` reads it when the daemon is stopped.
 */
import type BetterSqlite3 from 'better-sqlite3'

import type {UsageGroup} from './usage-query.js'
import {usageGroups} from './usage-query.js'

/** The usage groups (provider x model) of the gateway rows of `scope` = `target` since `sinceMs`. */
export function budgetSpendGroups(
  db: BetterSqlite3.Database,
  scope: 'agent' | 'key' | 'policy' | 'project',
  target: string,
  sinceMs: number,
): UsageGroup[] {
  const since = sinceMs / 1000
  switch (scope) {
    case 'agent':
      return usageGroups(db, {source: 'gateway', agentId: target, since})
    case 'policy':
      return usageGroups(db, {source: 'gateway', policyId: target, since})
    case 'key':
    case 'project':
      return usageGroups(db, {source: 'gateway', pivot: scope, since}).filter((g) => g.key === target)
  }
}
