/**
 * How Anthropic's models take thinking and sampling settings, by the model's name (Anthropic's
 * model ids as its API refuses them, written out one by one: the simulator's own table, not the
 * gateway's rule), or by quirk for any name:
 *
 * - **adaptive only** (Opus 4.7 and 4.8, Sonnet 5, Fable 5, Mythos; quirk `adaptive-only`):
 *   `thinking.type: enabled` is refused ("\"thinking.type.enabled\" is not supported for this
 *   model. Use \"thinking.type.adaptive\" and \"output_config.effort\" to control thinking
 *   behavior."), and so is a `temperature`, `top_p` or `top_k` ("temperature is deprecated for
 *   this model."); the thinking text is omitted (an empty `thinking` with its signature) unless
 *   `thinking.display` is `summarized`.
 * - **no adaptive** (Claude 4.5 and older; quirk `no-adaptive`): `thinking.type: adaptive` is
 *   refused ("adaptive thinking is not supported on this model").
 * - Opus and Sonnet 4.6 take both forms.
 */
import type {Quirks} from './quirks.js'

type Body = Record<string, unknown>

/** Anthropic's ids of the models that take adaptive thinking only (a date or `@` suffix allowed). */
const ADAPTIVE_ONLY = [
  'claude-opus-4-7',
  'claude-opus-4-8',
  'claude-sonnet-5',
  'claude-opus-5',
  'claude-fable-5',
  'claude-mythos-preview',
]

/** Anthropic's ids of the models that refuse adaptive thinking. */
const NO_ADAPTIVE = [
  'claude-opus-4-5',
  'claude-sonnet-4-5',
  'claude-haiku-4-5',
  'claude-opus-4-1',
  'claude-opus-4',
  'claude-sonnet-4',
  'claude-3-7-sonnet',
]

const named = (list: readonly string[], model: string): boolean =>
  list.some((id) => model === id || model.startsWith(`${id}-2`) || model.startsWith(`${id}@`))

export type ClaudeKind = 'adaptive-only' | 'no-adaptive' | 'both'

export function claudeKind(model: string, quirks: Quirks): ClaudeKind {
  if (quirks.has('adaptive-only') || named(ADAPTIVE_ONLY, model)) return 'adaptive-only'
  if (quirks.has('no-adaptive') || named(NO_ADAPTIVE, model)) return 'no-adaptive'
  return 'both'
}

/** Anthropic's refusal of the request's thinking or sampling settings, or undefined. */
export function claudeSettingsProblem(body: Body, kind: ClaudeKind): string | undefined {
  const thinking = body.thinking as Body | undefined
  const display = thinking?.display
  if (display !== undefined && display !== 'summarized' && display !== 'omitted')
    return `thinking.${String(thinking?.type)}.display: Input should be 'summarized' or 'omitted'`
  if (kind === 'adaptive-only') {
    if (thinking?.type === 'enabled')
      return '"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.'
    for (const field of ['temperature', 'top_p', 'top_k'])
      if (body[field] !== undefined) return `${field} is deprecated for this model.`
  }
  if (kind === 'no-adaptive' && thinking?.type === 'adaptive')
    return 'adaptive thinking is not supported on this model'
  const effort = (body.output_config as Body | undefined)?.effort
  if (effort !== undefined && !['low', 'medium', 'high', 'xhigh', 'max'].includes(String(effort)))
    return `output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'`
  return undefined
}

/** Whether the answer's thinking text is left out (an adaptive-only model, not asked to show it). */
export function thinkingOmitted(body: Body, kind: ClaudeKind): boolean {
  return kind === 'adaptive-only' && (body.thinking as Body | undefined)?.display !== 'summarized'
}
