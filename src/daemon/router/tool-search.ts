/**
 * Claude Code's tool search passed through to a Messages server that is not Anthropic's. Claude
 * Code 2.1.2xx-2.1.33x sends most of its tools with `defer_loading: true` (and a
 * `DeferredToolPlaceholder`) under the beta `advanced-tool-use-2025-11-20`, and once the model has
 * searched, `tool_reference` blocks inside a `tool_result`. Anthropic's API loads the referenced
 * tools; other Anthropic-compatible servers refuse the request, and every later one (the history
 * keeps the blocks), so the session dies:
 * - Kimi's coding endpoint, `{"error":{"type":"invalid_request_error","message":"Invalid request
 *   Error"},"type":"error"}` (MoonshotAI/kimi-cli #2223, MoonshotAI/Kimi-K2.5 #51);
 * - OpenRouter's Messages API with a model that is not Claude's, "Deferred custom tools are only
 *   supported on Anthropic models and on Anthropic-compatible provider endpoints that implement
 *   deferral. Other endpoints cannot call tools omitted from tools[]. Received stealth/ox-alpha."
 *   (anthropics/claude-code #89211; before, "... Non-Anthropic models cannot call tools omitted
 *   from tools[]. Received x-ai/grok-4.6-20260810.");
 * - Volcengine Ark, "... invalid value: tool_reference, supported values are: text, thinking,
 *   image, 'tool_use' and tool_result." (anthropics/claude-code #30912);
 * - Z.AI's Anthropic endpoint, under the beta, defers even the tools sent without `defer_loading`
 *   (zai-org/feedback #172): no refusal, the model without Bash, Read, Edit.
 * Such a body goes with the translated route's rule in Messages form
 * (../../protocols/deferred-tools.ts `withDeferredToolsLoaded`) and without the tool-search betas:
 * by rule to a model that is not Claude's, learned from these refusals for a relay in front of
 * Claude (`deferralOff`, which may implement deferral).
 */
import {withoutBetas} from './safeguards.js'

/**
 * Whether a Messages server's error refuses Claude Code's tool search, to a body that held
 * `defer_loading` or `tool_reference` (the caller's to know: Kimi's words name nothing).
 */
export function refusesDeferredTools(errorText: string): boolean {
  return (
    // OpenRouter's, both wordings
    /Deferred custom tools are only supported|cannot call tools omitted from tools\[\]/i.test(errorText) ||
    // Volcengine Ark's, and any refusal that names the block or the field
    /\b(?:tool_reference|defer_loading)\b/.test(errorText) ||
    // Kimi's coding endpoint's, which names nothing
    /"message"\s*:\s*"Invalid request Error"/.test(errorText)
  )
}

/** Tool search's betas: Anthropic's API's, and Bedrock's and Vertex's name for it. */
const TOOL_SEARCH_BETA = /^(?:advanced-tool-use|tool-search-tool)-/

/** Whether a request's `anthropic-beta` names a tool-search beta (substring tests). */
export function asksToolSearch(beta: string | undefined): boolean {
  return beta !== undefined && (beta.includes('advanced-tool-use-') || beta.includes('tool-search-tool-'))
}

/** An `anthropic-beta` value without the tool-search betas; undefined when none is left. */
export const withoutToolSearchBetas = (beta: string): string | undefined =>
  withoutBetas(beta, (name) => TOOL_SEARCH_BETA.test(name))
