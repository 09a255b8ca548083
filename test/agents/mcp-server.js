// A small stdio MCP server for the agent-CLI suite (`--tool-search`): four GitHub-like tools, made
// with the official MCP SDK, which the suite installs into test/agents/.cache/mcp-sdk (not a
// dependency of gwctl). Codex 0.171 defers the tools of an MCP server behind its client-run
// `tool_search`: the upstream must search, get them loaded, and call one, whose answer is the
// recognizable CALL_ANSWER line. Every tools/call is appended to the log file as a JSON line, so
// the suite can tell the call reached this server.
//
//   node mcp-server.js <sdk dir> <log file>
import {appendFileSync} from 'node:fs'
import {createRequire} from 'node:module'
import {resolve} from 'node:path'

const [sdkDir, logFile] = process.argv.slice(2)
if (!sdkDir || !logFile) {
  console.error('usage: node mcp-server.js <sdk dir> <log file>')
  process.exit(2)
}
// the SDK from the suite's cache, not from gwctl's node_modules
const require = createRequire(resolve(sdkDir, 'package.json'))
const {Server} = require('@modelcontextprotocol/sdk/server/index.js')
const {StdioServerTransport} = require('@modelcontextprotocol/sdk/server/stdio.js')
const {CallToolRequestSchema, ListToolsRequestSchema} = require('@modelcontextprotocol/sdk/types.js')

/** What a call answers: the suite looks for it upstream (the tool result) and in Codex's answer. */
const CALL_ANSWER = 'gwctl-suite-mcp answered'

const object = (properties, required) => ({type: 'object', properties, required})
const TOOLS = [
  {
    name: 'search_issues',
    description: 'Search the issues of a GitHub repository.',
    inputSchema: object({query: {type: 'string', description: 'What to search for'}}, ['query']),
  },
  {
    name: 'get_issue',
    description: 'Read one issue of a GitHub repository by its number.',
    inputSchema: object({number: {type: 'integer', description: 'The issue number'}}, ['number']),
  },
  {
    name: 'list_pull_requests',
    description: 'List the open pull requests of a GitHub repository.',
    inputSchema: object({state: {type: 'string', enum: ['open', 'closed', 'all']}}, []),
  },
  {
    name: 'create_comment',
    description: 'Comment on an issue or a pull request of a GitHub repository.',
    inputSchema: object({number: {type: 'integer'}, body: {type: 'string'}}, ['number', 'body']),
  },
]

const server = new Server({name: 'github', version: '1.0.0'}, {capabilities: {tools: {}}})
server.setRequestHandler(ListToolsRequestSchema, async () => ({tools: TOOLS}))
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  const {name, arguments: args} = request.params
  appendFileSync(logFile, JSON.stringify({name, arguments: args ?? {}}) + '\n')
  if (!TOOLS.some((t) => t.name === name))
    return {isError: true, content: [{type: 'text', text: `no tool ${name}`}]}
  return {content: [{type: 'text', text: `${CALL_ANSWER} ${name}: issue #7 "gateway drops tool_search"`}]}
})
await server.connect(new StdioServerTransport())
