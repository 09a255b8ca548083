/**
 * How Anthropic's models take thinking, sampling, tool choice and a trailing assistant message,
 * by the model's name (Anthropic's model ids as its API refuses them, written out one by one: the
 * simulator's own table, not the gateway's rule), or by quirk for any name. docs/SIMULATOR.md
 * ("Claude models") has the table; the refusals are Anthropic's words.
 *
 * - **adaptive only** (Opus 4.7 on, every Claude 5; quirk `adaptive-only`): `thinking.type:
 *   enabled` refused, and so is a `temperature`, `top_p` or `top_k`; the thinking text is omitted
 *   (an empty `thinking` with its signature) unless `thinking.display` is `summarized`.
 * - **no adaptive** (Claude 4.5 and older; quirk `no-adaptive`): `thinking.type: adaptive` refused.
 * - **thinks by default** (Claude 5; quirk `thinks-by-default`): no `thinking` field is adaptive
 *   thinking with its text omitted; `disabled` is taken at effort `high` or below only.
 * - `thinking.type: disabled` refused outright (Opus 5.5, Fable, Mythos 5; quirk `no-disabled`),
 *   or in favour of `between_tools` (Sonnet 5.5, the only model that takes it; quirk
 *   `between-tools`).
 * - forced tool choice (`any`, `tool`): refused (Opus 5.5, Sonnet 5.5, Fable 5.1, Mythos 5.1;
 *   quirk `no-forced-tools`), or refused while thinking is on (every model with `enabled`; with
 *   adaptive thinking too on Opus 4.7/4.8, Sonnet 5, Opus 5, Haiku 5.5 and under quirks
 *   `adaptive-only`, `thinks-by-default`).
 * - no prefill (Opus and Sonnet 4.6 on; quirk `no-prefill`): a last message of the assistant's is
 *   refused, except a paused server-tool turn sent back to go on.
 * - prefix binding (Fable 5.1, Opus 5.5, Sonnet 5.5, Haiku 5.5; quirk `prefix-binding`): a
 *   thinking block is bound to what came before it (turn-checks.ts `bindingProblem`).
 */
import type {Quirks} from './quirks.js'

type Body = Record<string, unknown>

export type ClaudeKind = 'adaptive-only' | 'no-adaptive' | 'both'

/** What a Claude model takes (see the file's comment). */
export interface ClaudeModel {
  kind: ClaudeKind
  /** No `thinking` field is adaptive thinking (its text omitted). */
  thinksByDefault: boolean
  /**
   * How `thinking.type: disabled` is taken: `yes`; `high-effort`, only at effort `high` or below;
   * `no`, refused; `no-between-tools`, refused with a pointer to `between_tools`.
   */
  disabled: 'yes' | 'high-effort' | 'no' | 'no-between-tools'
  /** `thinking.type: between_tools` taken (Sonnet 5.5). */
  betweenTools: boolean
  /**
   * A forced tool choice: `with-thinking-off`, refused while thinking is on (`enabled` on every
   * model; here adaptive too); `never`, refused; `unless-enabled`, refused with `enabled` only.
   */
  forcedTools: 'unless-enabled' | 'with-thinking-off' | 'never'
  /** A last message of the assistant's taken (not a paused turn's). */
  prefill: boolean
  /** Thinking blocks bound to their prefix. */
  prefixBinding: boolean
}

const BASE: ClaudeModel = {
  kind: 'both',
  thinksByDefault: false,
  disabled: 'yes',
  betweenTools: false,
  forcedTools: 'unless-enabled',
  prefill: true,
  prefixBinding: false,
}

/** Claude 5 that thinks by default and takes `disabled` at effort high or below (and forcing, with it). */
const THINKS_5: Partial<ClaudeModel> = {
  kind: 'adaptive-only',
  thinksByDefault: true,
  disabled: 'high-effort',
  forcedTools: 'with-thinking-off',
  prefill: false,
}

/** Claude 5 that always thinks. */
const ALWAYS_5: Partial<ClaudeModel> = {
  kind: 'adaptive-only',
  thinksByDefault: true,
  disabled: 'no',
  prefill: false,
}

/**
 * Anthropic's model ids (a date or `@` suffix allowed) and what each takes, over BASE. The ids of
 * models this table does not name take both forms of thinking, prefill and sampling.
 */
const MODELS: ReadonlyArray<[readonly string[], Partial<ClaudeModel>]> = [
  [
    [
      'claude-opus-4-5',
      'claude-sonnet-4-5',
      'claude-haiku-4-5',
      'claude-opus-4-1',
      'claude-opus-4',
      'claude-sonnet-4',
      'claude-3-7-sonnet',
    ],
    {kind: 'no-adaptive'},
  ],
  [['claude-opus-4-6', 'claude-sonnet-4-6'], {prefill: false}],
  [
    ['claude-opus-4-7', 'claude-opus-4-8'],
    {kind: 'adaptive-only', forcedTools: 'with-thinking-off', prefill: false},
  ],
  [['claude-sonnet-5', 'claude-opus-5'], THINKS_5],
  [['claude-haiku-5-5'], {...THINKS_5, prefixBinding: true}],
  // Fable 5 and Mythos 5 always think, and take a forced tool choice with it
  [['claude-fable-5', 'claude-mythos-5'], ALWAYS_5],
  [['claude-mythos-5-1'], {...ALWAYS_5, forcedTools: 'never'}],
  [['claude-fable-5-1', 'claude-opus-5-5'], {...ALWAYS_5, forcedTools: 'never', prefixBinding: true}],
  [
    ['claude-sonnet-5-5'],
    {
      ...ALWAYS_5,
      disabled: 'no-between-tools',
      betweenTools: true,
      forcedTools: 'never',
      prefixBinding: true,
    },
  ],
  [['claude-mythos-preview'], {kind: 'adaptive-only'}],
]

const named = (list: readonly string[], model: string): boolean =>
  list.some((id) => model === id || model.startsWith(`${id}-2`) || model.startsWith(`${id}@`))

/** What `model` takes: its row of the table, then the request's quirks over it. */
export function claudeModel(model: string, quirks: Quirks): ClaudeModel {
  const row = MODELS.find(([ids]) => named(ids, model))
  const m: ClaudeModel = {...BASE, ...row?.[1]}
  if (quirks.has('adaptive-only')) {
    m.kind = 'adaptive-only'
    if (m.forcedTools === 'unless-enabled') m.forcedTools = 'with-thinking-off'
  } else if (quirks.has('no-adaptive')) m.kind = 'no-adaptive'
  if (quirks.has('thinks-by-default')) {
    m.thinksByDefault = true
    if (m.disabled === 'yes') m.disabled = 'high-effort'
    if (m.forcedTools === 'unless-enabled') m.forcedTools = 'with-thinking-off'
  }
  if (quirks.has('no-disabled')) m.disabled = 'no'
  if (quirks.has('between-tools')) {
    m.betweenTools = true
    m.disabled = 'no-between-tools'
  }
  if (quirks.has('no-forced-tools')) m.forcedTools = 'never'
  if (quirks.has('no-prefill')) m.prefill = false
  if (quirks.has('prefix-binding')) m.prefixBinding = true
  return m
}

/** The beta header value that `thinking.block_binding` and `input_transformations` need. */
export const BINDING_BETA = 'thinking-binding-controls-2026-08-01'

const USE_ADAPTIVE = 'Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.'
const HIGH_EFFORTS = ['low', 'medium', 'high']

/** Anthropic's refusal of `thinking.type` value `type` at effort `effort` (sub2api's words). */
const effortRefusal = (type: string, effort: unknown): string =>
  `"thinking.type" value "${type}" is not supported with "output_config.effort" value "${String(effort)}" for this model`

/**
 * Anthropic's refusal of the request's thinking or sampling settings, or undefined. `betas`: the
 * values of the request's `anthropic-beta` header.
 */
export function claudeSettingsProblem(
  body: Body,
  model: ClaudeModel,
  betas: readonly string[] = [],
): string | undefined {
  const thinking = body.thinking as Body | undefined
  const type = thinking?.type
  const effort = (body.output_config as Body | undefined)?.effort
  if (thinking?.block_binding !== undefined && !betas.includes(BINDING_BETA))
    return `thinking.${String(type)}.block_binding: Extra inputs are not permitted`
  if (type === 'between_tools') {
    if (!model.betweenTools) return '"thinking.type.between_tools" is not supported for this model.'
    if (effort !== undefined && !HIGH_EFFORTS.includes(String(effort)))
      return effortRefusal('between_tools', effort)
    // between_tools takes no other field (wording not verified)
    for (const field of ['display', 'budget_tokens', 'block_binding'])
      if (thinking?.[field] !== undefined)
        return `thinking.between_tools.${field}: Extra inputs are not permitted`
  }
  const display = thinking?.display
  if (display !== undefined && display !== 'summarized' && display !== 'omitted')
    return `thinking.${String(type)}.display: Input should be 'summarized' or 'omitted'`
  const behavior = (thinking?.block_binding as Body | undefined)?.prefix_mismatch_behavior
  if (behavior !== undefined && behavior !== 'error' && behavior !== 'drop_block')
    return `thinking.${String(type)}.block_binding.prefix_mismatch_behavior: Input should be 'error' or 'drop_block'`
  if (model.kind === 'adaptive-only' && type === 'enabled')
    return `"thinking.type.enabled" is not supported for this model. ${USE_ADAPTIVE}`
  if (type === 'disabled') {
    if (model.disabled === 'no')
      return `"thinking.type.disabled" is not supported for this model. ${USE_ADAPTIVE}`
    if (model.disabled === 'no-between-tools')
      return '"thinking.type.disabled" is not supported for this model. Use "thinking.type.between_tools" for the lowest thinking setting, or "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.'
    if (model.disabled === 'high-effort' && effort !== undefined && !HIGH_EFFORTS.includes(String(effort)))
      return effortRefusal('disabled', effort)
  }
  if (model.kind === 'adaptive-only')
    for (const field of ['temperature', 'top_p', 'top_k'])
      if (body[field] !== undefined) return `\`${field}\` is deprecated for this model.`
  if (model.kind === 'no-adaptive' && type === 'adaptive')
    return 'adaptive thinking is not supported on this model'
  if (effort !== undefined && !['low', 'medium', 'high', 'xhigh', 'max'].includes(String(effort)))
    return `output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'`
  return undefined
}

/**
 * How the model thinks on this request: `on` (`enabled`, `adaptive`, or no field on a model that
 * thinks by default), `between-tools` (before a tool call only), or `off`.
 */
export function thinkingMode(body: Body, model: ClaudeModel): 'on' | 'off' | 'between-tools' {
  const thinking = body.thinking as Body | undefined
  if (!thinking) return model.thinksByDefault ? 'on' : 'off'
  if (thinking.type === 'disabled') return 'off'
  return thinking.type === 'between_tools' ? 'between-tools' : 'on'
}

const isForced = (body: Body): boolean => {
  const type = (body.tool_choice as Body | undefined)?.type
  return type === 'any' || type === 'tool'
}

/** Anthropic's refusal of a forced tool choice (`any`, `tool`), or undefined. */
export function toolChoiceProblem(body: Body, model: ClaudeModel): string | undefined {
  if (!isForced(body)) return undefined
  if (model.forcedTools === 'never')
    return 'tool_choice: type "tool" and "any" are not supported for this model.'
  const type = (body.thinking as Body | undefined)?.type
  const thinking =
    model.forcedTools === 'with-thinking-off' ? thinkingMode(body, model) === 'on' : type === 'enabled'
  return thinking ? 'Thinking may not be enabled when tool_choice forces tool use.' : undefined
}

/**
 * A paused server-tool turn sent back to go on: the last message's last block is a
 * `server_tool_use` or a server tool's result (`web_search_tool_result`, not a client's
 * `tool_result`).
 */
function pausedContinuation(message: Body): boolean {
  const last = Array.isArray(message.content) ? (message.content as Body[]).at(-1) : undefined
  const type = typeof last?.type === 'string' ? last.type : ''
  return type === 'server_tool_use' || (type.endsWith('_tool_result') && type !== 'tool_result')
}

/** Anthropic's refusal of a prefill (a last message of the assistant's) on a model without it. */
export function prefillProblem(body: Body, model: ClaudeModel): string | undefined {
  if (model.prefill || !Array.isArray(body.messages)) return undefined
  const last = body.messages.at(-1) as Body | undefined
  if (last?.role !== 'assistant' || pausedContinuation(last)) return undefined
  return 'This model does not support assistant message prefill. The conversation must end with a user message.'
}

/**
 * Whether the answer's thinking text is left out: an adaptive-only model, thinking by default or
 * between tools, not asked to show it.
 */
export function thinkingOmitted(body: Body, model: ClaudeModel): boolean {
  const thinking = body.thinking as Body | undefined
  if (thinking?.display === 'summarized') return false
  return model.kind === 'adaptive-only' || !thinking || thinking.type === 'between_tools'
}
