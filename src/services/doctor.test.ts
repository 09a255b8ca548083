import {describe, expect, it} from 'vitest'

import {windowAdvice} from './doctor.js'

describe("doctor's advice on a learned context window", () => {
  it('tells Claude Code the window it does not know, each way its settings take it', () => {
    expect(windowAdvice({tokens: 131_072, entrance: 'messages'})).toBe(
      'Claude Code assumes up to 1,000,000: set CLAUDE_CODE_AUTO_COMPACT_WINDOW=131072 in its environment (or its settings.json env; `gwctl run claude-code` sets it) so that it compacts in time',
    )
    // under the least auto-compact window Claude Code takes (100 000): the model's own window
    expect(windowAdvice({tokens: 32_768, entrance: 'messages'})).toBe(
      'Claude Code assumes up to 1,000,000: run it with a model name that does not start with claude- and CLAUDE_CODE_MAX_CONTEXT_TOKENS=32768 so that it compacts in time',
    )
    // Claude Code 2.1.3xx assumes 1 000 000 for its own models (2.1.1xx 200 000): a window of
    // 262 144 (Kimi) is still past it; as large as that, nothing to do
    expect(windowAdvice({tokens: 262_144, entrance: 'messages'})).toContain(
      'CLAUDE_CODE_AUTO_COMPACT_WINDOW=262144',
    )
    expect(windowAdvice({tokens: 1_000_000, entrance: 'messages'})).toBeUndefined()
  })

  it('tells Codex through its config.toml; chat clients get nothing; no window, no advice', () => {
    expect(windowAdvice({tokens: 131_072, entrance: 'responses'})).toBe(
      'for Codex, set model_context_window = 131072 and model_auto_compact_token_limit = 117964 in ~/.codex/config.toml (`gwctl run codex` sets them) so that it compacts in time',
    )
    expect(windowAdvice({tokens: 131_072, entrance: 'chat'})).toBeUndefined()
    expect(windowAdvice(undefined)).toBeUndefined()
  })

  it('tells Gemini CLI the part of its assumed 1 048 576 tokens at which 80 % of the window is used', () => {
    // GLM's 200 000: 0.8 x 200 000 / 1 048 576 = 0.1525..., rounded down
    expect(windowAdvice({tokens: 200_000, entrance: 'gemini'})).toBe(
      'Gemini CLI assumes 1,048,576 tokens for every model but Gemma 4 and compresses at half of it: set "model": {"compressionThreshold": 0.152} in ~/.gemini/settings.json (`gwctl run gemini-cli` sets it) so that it compresses in time',
    )
    // a window where Gemma 4's own 256 000 would not come in time either: its threshold beside
    // (0.8 x 131 072 / 256 000 = 0.4096...)
    expect(windowAdvice({tokens: 131_072, entrance: 'gemini'})).toContain(
      '"compressionThreshold": 0.1} (0.409 when it runs gemma-4-31b-it or gemma-4-26b-a4b-it, for which it assumes 256,000) in ~/.gemini/settings.json',
    )
    // a small local model: never 0 (which Gemini CLI takes for "not set")
    expect(windowAdvice({tokens: 4096, entrance: 'gemini'})).toContain('"compressionThreshold": 0.003}')
    expect(windowAdvice({tokens: 1000, entrance: 'gemini'})).toContain('"compressionThreshold": 0.001}')
    // from 655 360 on, its own half of 1 048 576 comes before 80 % of the window: nothing to do
    expect(windowAdvice({tokens: 655_359, entrance: 'gemini'})).toContain('0.499')
    expect(windowAdvice({tokens: 655_360, entrance: 'gemini'})).toBeUndefined()
  })

  it("a window Ollama cut a prompt to: the server's setting, whatever the agent", () => {
    for (const entrance of ['messages', 'responses', 'chat', 'gemini'])
      expect(windowAdvice({tokens: 4096, entrance, cut: true})).toBe(
        "raise OLLAMA_CONTEXT_LENGTH where Ollama runs (64000 or more for an agent: Claude Code's first request alone is 12,000 to 25,000 tokens) or num_ctx in the model's Modelfile, and restart it",
      )
  })
})
