/**
 * The agent kinds the gateway knows (`agentType` of a key issue). Neutral names for the main and
 * sub-agent kinds of the well-known coding agents, plus a generic kind for anything else.
 */
import type {Family} from '../store/schema.js'

export interface AgentKind {
  type: string
  description: string
  /** The entrance family the agent speaks (its route in a policy). */
  family: Family
  /** A sub-agent kind: `parentAgentId` is required. */
  subagent: boolean
  /** Policy used when the issue call names none. */
  defaultPolicy: string
  /**
   * The agent speaks whichever family its own provider config names (OpenCode): like a generic
   * agent, it is routed and listed by the entrance it last used; `family` is its usual one.
   */
  anyFamily?: boolean
}

/**
 * The family agents of `kind` are routed and listed by; undefined when that is the entrance they
 * last used (generic agents, and kinds that speak any family).
 */
export function fixedFamily(kind: AgentKind | undefined): Family | undefined {
  return kind && kind.type !== 'generic_agent' && kind.anyFamily !== true ? kind.family : undefined
}

/**
 * `claude_code` is the one main coding-agent kind with its own `<kind>_default` policy: its
 * gateway set-up (ANTHROPIC_BASE_URL + a token) is the documented, most used one, and its
 * sub-agents run many cheap calls that a team may want to route apart from the main session.
 */
export const AGENT_KINDS: readonly AgentKind[] = [
  {
    type: 'generic_agent',
    description: 'Any tool that speaks one of the four protocols.',
    family: 'chat',
    subagent: false,
    defaultPolicy: 'default',
  },
  {
    type: 'claude_code',
    description: 'Claude Code main session.',
    family: 'messages',
    subagent: false,
    defaultPolicy: 'claude_code_default',
  },
  {
    type: 'claude_code_subagent',
    description: 'A Claude Code sub-agent (Task tool).',
    family: 'messages',
    subagent: true,
    defaultPolicy: 'default',
  },
  {
    type: 'codex',
    description: 'Codex CLI main session.',
    family: 'responses',
    subagent: false,
    defaultPolicy: 'default',
  },
  {
    type: 'codex_subagent',
    description: 'A Codex sub-agent (spawned thread).',
    family: 'responses',
    subagent: true,
    defaultPolicy: 'default',
  },
  {
    type: 'gemini_cli',
    description: 'Gemini CLI main session.',
    family: 'gemini',
    subagent: false,
    defaultPolicy: 'default',
  },
  {
    type: 'gemini_cli_subagent',
    description: 'A Gemini CLI sub-agent.',
    family: 'gemini',
    subagent: true,
    defaultPolicy: 'default',
  },
  {
    type: 'opencode',
    description: 'OpenCode main session (speaks the family of its provider).',
    family: 'messages',
    subagent: false,
    defaultPolicy: 'default',
    anyFamily: true,
  },
  {
    type: 'opencode_subagent',
    description: 'An OpenCode sub-agent (task tool).',
    family: 'messages',
    subagent: true,
    defaultPolicy: 'default',
    anyFamily: true,
  },
  {
    type: 'qwen_code',
    description: 'Qwen Code main session.',
    family: 'chat',
    subagent: false,
    defaultPolicy: 'default',
  },
  {
    type: 'qwen_code_subagent',
    description: 'A Qwen Code sub-agent.',
    family: 'chat',
    subagent: true,
    defaultPolicy: 'default',
  },
]

/** The kind named `type`, or undefined. */
export function agentKind(type: string): AgentKind | undefined {
  return AGENT_KINDS.find((k) => k.type === type)
}
