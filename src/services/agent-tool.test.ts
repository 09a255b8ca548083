import {describe, expect, it} from 'vitest'
import {agentToolOf} from './agent-tool.js'

describe('agentToolOf', () => {
  it('takes the binding first, then the source tool, then the agent kind (sub-agents too)', () => {
    expect(agentToolOf({type: 'claude_code', sourceTool: 'codex'}, 'opencode')).toBe('opencode')
    expect(agentToolOf({type: 'claude_code', sourceTool: 'qwen-code'})).toBe('qwen-code')
    expect(agentToolOf({type: 'opencode_subagent', sourceTool: null})).toBe('opencode')
    expect(agentToolOf({type: 'qwen_code', sourceTool: 'not-a-tool'}, 'nor-this')).toBe('qwen-code')
    expect(agentToolOf({type: 'generic_agent', sourceTool: null})).toBeUndefined()
  })
})
