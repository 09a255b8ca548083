/**
 * Test fixture of the tool-search tests (not a test itself; nothing in the product imports it):
 * Claude Code 2.1.332's tools and its turns after the model called ToolSearch (as recorded from the
 * real CLI, cut): the placeholder it always defers, deferred tools, and a result of
 * tool_reference blocks followed by "Tool loaded."
 */

/** A tool's input schema of one required string property. */
export const schema = (prop: string) => ({
  type: 'object',
  properties: {[prop]: {type: 'string'}},
  required: [prop],
  additionalProperties: false,
})

/** A tool as Claude Code sends it (ToolSearch's property `query`, every other's `x`). */
export const tool = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  description: `${name} does it.`,
  input_schema: schema(name === 'ToolSearch' ? 'query' : 'x'),
  ...extra,
})

/** The tool Claude Code always defers, so that tool search stays on. */
export const placeholder = {
  name: 'DeferredToolPlaceholder',
  description: 'Reserved placeholder that keeps deferred tool loading active; never call this tool.',
  input_schema: {type: 'object', properties: {}},
  defer_loading: true,
}

/** A deferred tool. */
export const deferred = (name: string) => tool(name, {defer_loading: true})

/** The user's first turn. */
export const turn1 = {role: 'user', content: [{type: 'text', text: 'fetch example.com'}]}

/** The model's call of ToolSearch, by `id`, with `query`. */
export const search = (id: string, query: string) => ({
  role: 'assistant',
  content: [{type: 'tool_use', id, name: 'ToolSearch', input: {query}}],
})

/** The result of the ToolSearch call `id` (`refs`), followed by "Tool loaded.". */
export const loaded = (id: string, refs: unknown[]) => ({
  role: 'user',
  content: [
    {type: 'tool_result', tool_use_id: id, content: refs},
    {type: 'text', text: 'Tool loaded.', cache_control: {type: 'ephemeral'}},
  ],
})

/** A tool_reference block to `name`. */
export const ref = (name: string, extra: Record<string, unknown> = {}) => ({
  type: 'tool_reference',
  tool_name: name,
  ...extra,
})

/** A `tool`'s definition as a reference is written for a model (one `<function>` line). */
export const line = (name: string, prop = 'x') =>
  `<function>${JSON.stringify({description: `${name} does it.`, name, parameters: schema(prop)})}</function>`

/** A text block of one `<functions>` block over `lines`. */
export const functions = (...lines: string[]) => ({
  type: 'text',
  text: `<functions>\n${lines.join('\n')}\n</functions>`,
})
