import type Anthropic from '@anthropic-ai/sdk'

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

/** Claude Code's `# Environment` system message (from its 2nd request on, right after the first tool result). */
export const ENVIRONMENT_MESSAGE =
  '# Environment\nYou have been invoked in the following environment:\n - Primary working directory: /work'
/** Claude Code's date, a system message from its 1st request on. */
export const DATE_MESSAGE = "Today's date is 2026-07-01."

/**
 * Claude Code 2.1.332's request 1 and request 2 with its mid-conversation system messages (role
 * `system` in `messages`): its date after the first turn; on request 2 the call of request 1's
 * answer, its result, then `# Environment`.
 */
export function midConversationSystem(second: boolean): Anthropic.MessageCreateParamsNonStreaming {
  const messages: Anthropic.MessageParam[] = [
    {role: 'user', content: [{type: 'text', text: 'List the files.'}]},
    {role: 'system', content: DATE_MESSAGE} as unknown as Anthropic.MessageParam,
  ]
  if (second)
    messages.push(
      {
        role: 'assistant',
        content: [{type: 'tool_use', id: 'toolu_01', name: 'Bash', input: {command: 'ls'}}],
      },
      {role: 'user', content: [{type: 'tool_result', tool_use_id: 'toolu_01', content: 'a.txt\nb.txt'}]},
      {
        role: 'system',
        content: [{type: 'text', text: ENVIRONMENT_MESSAGE}],
      } as unknown as Anthropic.MessageParam,
    )
  return {
    model: 'claude-sonnet-4-5',
    max_tokens: 256,
    system: [{type: 'text', text: `You are Claude Code. ${'Follow the rules. '.repeat(100)}`}],
    messages,
    tools: [{name: 'Bash', description: 'Run a command.', input_schema: {type: 'object', properties: {}}}],
  }
}
