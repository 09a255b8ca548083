/**
 * What Claude Code reads of an error: its reactive compaction's expression over a prompt-too-long
 * message (the counts it drops by), as in its bundle.
 */
export const claudeCodeReads = (message: string): {actual: number; limit: number} | undefined => {
  const m = /prompt is too long[^0-9]*(\d+)\s*tokens?\s*>\s*(\d+)/i.exec(message)
  return m ? {actual: Number(m[1]), limit: Number(m[2])} : undefined
}

/** Claude Code's advisor tool (`advisor_20260301`, as its `advisorModel` setting sends it). */
export const ADVISOR_TOOL = {type: 'advisor_20260301', name: 'advisor', model: 'claude-opus-4-5'}

/** Claude Code's Bash tool, cut. */
export const BASH_TOOL = {
  name: 'Bash',
  description: 'Run a command',
  input_schema: {type: 'object', properties: {command: {type: 'string'}}},
}

/** The advisor's advice in {@link advisedTurns} (its `advisor_result`). */
export const ADVICE = {type: 'advisor_result', text: 'Check the fake timer first.'}

/**
 * Claude Code's conversation after a turn that asked its advisor, the blocks as Anthropic's API
 * answers them: the user's ask; the assistant's text, its call of the advisor, the call's `result`
 * (the advice, a redacted result, a failed call), its text after; the user's `next` words.
 */
export const advisedTurns = (result: Record<string, unknown> = ADVICE, next: unknown = 'go on') => [
  {role: 'user', content: 'Fix the flaky test'},
  {
    role: 'assistant',
    content: [
      {type: 'text', text: 'Let me ask the advisor.'},
      {type: 'server_tool_use', id: 'srvtoolu_01A', name: 'advisor', input: {}},
      {type: 'advisor_tool_result', tool_use_id: 'srvtoolu_01A', content: result},
      {type: 'text', text: 'I will look at the timer first.'},
    ],
  },
  {role: 'user', content: next},
]
