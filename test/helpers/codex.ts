/** Codex CLI's Responses request, as the end-to-end translation tests send it. */

/** The tool the requests offer. */
export const READ_FILE_TOOL = {
  type: 'function' as const,
  name: 'read_file',
  description: 'Read a file',
  parameters: {type: 'object', properties: {path: {type: 'string'}}, required: ['path']},
}

/** Codex's request: effort high, a reasoning summary, its reasoning carried back encrypted. */
export const codexRequest = (input: unknown, stream = false): any => ({
  model: 'gpt-5.5-codex',
  input,
  reasoning: {effort: 'high', summary: 'auto'},
  include: ['reasoning.encrypted_content'],
  store: false,
  stream,
  tools: [READ_FILE_TOOL],
})
