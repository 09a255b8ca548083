/**
 * The rows the history store keeps, owned by storage: the agent tools whose history gwctl reads,
 * and one record per model response an agent recorded in its own session log, with the same
 * column meanings as the gateway's log (see `src/daemon/router/taps/tap.ts`): `inputTokens` is
 * input not read from cache, `outputTokens` every generated token including reasoning,
 * `reasoningTokens` the part of it spent reasoning. The readers in `src/agent-tools/history/`
 * produce them.
 */

/**
 * The stable names of the agent tools gwctl knows (types only here: the list itself,
 * `AGENT_TOOLS`, is in `src/agent-tools/agent-homes.ts`, checked against this type).
 */
export type AgentTool = 'claude-code' | 'codex' | 'gemini-cli' | 'opencode' | 'qwen-code'

export interface HistoryRecord {
  /** Dedup key: a rescan or a second copy of the same response maps to the same key. */
  key: string
  tool: AgentTool
  /** UTC, Unix milliseconds. */
  time: number
  model: string | null
  session: string | null
  /** The agent's working folder (Claude Code, Codex) or project folder name (Gemini CLI). */
  project: string | null
  /** The upstream request/response id the file holds (Claude `requestId`, Codex `response_id`). */
  requestId: string | null
  inputTokens: number
  outputTokens: number
  cacheReadTokens: number
  cacheCreationTokens: number
  /** Claude's TTL breakdown of cache writes, kept apart (not used for totals). */
  cache5mTokens: number
  cache1hTokens: number
  reasoningTokens: number
  totalTokens: number
  /** Claude: the line came from a sidechain (sub-agent or `/btw`). */
  sidechain: boolean
  /** Claude `message.id`, for the `/btw` replay rule. */
  messageId: string | null
}
