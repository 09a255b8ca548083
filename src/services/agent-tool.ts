/**
 * The agent tool an agent is, by the one rule the usage service, the statusline and the terminal
 * app's live counters share: its binding's tool, else its key's source tool, else its agent kind
 * (`opencode`, `qwen_code_subagent`, ...). OpenCode and Qwen Code come in through the entrances of
 * the others, so the entrance alone cannot tell.
 */
import {AGENT_TOOLS} from '../agent-tools/agent-homes.js'
import {TOOL_AGENT_TYPE} from '../agent-tools/discovery.js'
import type {AgentTool} from '../store/history-rows.js'

const TOOL_OF_TYPE = new Map<string, AgentTool>(
  AGENT_TOOLS.flatMap((t) => [
    [TOOL_AGENT_TYPE[t], t],
    [`${TOOL_AGENT_TYPE[t]}_subagent`, t],
  ]),
)

const asTool = (t: string | null | undefined): AgentTool | undefined => AGENT_TOOLS.find((x) => x === t)

/** The tool of `agent` (`boundTool`: the tool of its binding record, if any); undefined when none. */
export function agentToolOf(
  agent: {type: string; sourceTool?: string | null},
  boundTool?: string | null,
): AgentTool | undefined {
  return asTool(boundTool) ?? asTool(agent.sourceTool) ?? TOOL_OF_TYPE.get(agent.type)
}
