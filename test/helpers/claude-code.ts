/**
 * What Claude Code reads of an error: its reactive compaction's expression over a prompt-too-long
 * message (the counts it drops by), as in its bundle.
 */
export const claudeCodeReads = (message: string): {actual: number; limit: number} | undefined => {
  const m = /prompt is too long[^0-9]*(\d+)\s*tokens?\s*>\s*(\d+)/i.exec(message)
  return m ? {actual: Number(m[1]), limit: Number(m[2])} : undefined
}
