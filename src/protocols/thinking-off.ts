/**
 * How a request turns a model's thinking off, by the model's name: a chat model's own switch for a
 * request that asked for no thinking (chat.ts), and for one that forces a tool call, which the
 * thinking mode of DeepSeek V4, Kimi and DashScope's Qwen3 refuses and takes with thinking off
 * (translate.ts, ../daemon/router/adaptations.ts). Kept apart from the chat codec: the daemon's
 * refusal rules read it without loading the translation.
 */

/**
 * The off switch of a chat model that thinks unless told not to, for a request that asked for no
 * thinking (Claude Code's `thinking: disabled` helper calls and sub-agents, Gemini CLI's
 * `thinkingBudget: 0`, Codex's effort `none`): without it the model thinks anyway, slower and
 * billed for it. Each vendor's own field, by the model's name (any `vendor/` prefix aside):
 * - DeepSeek V4 (`deepseek-v4-flash`, `deepseek-v4-pro`, thinking on by default):
 *   `thinking: {type: "disabled"}` (api-docs.deepseek.com/guides/thinking_mode);
 * - Kimi K2.5, K2.6 and K2.7 (`kimi-k2.5`, `kimi-k2.6`): the same field (can1357/oh-my-pi #1077);
 *   not K2.7 Code (`kimi-k2.7-code`, `-highspeed`) nor Kimi Code's `kimi-for-coding` (the K2.7 Code
 *   and later models behind it), which think always and refuse it ("invalid thinking: only
 *   type=enabled is allowed for this model": oh-my-pi #3852, #3853; hermes-agent PR #55488; Volcano
 *   Ark's "The current model does not support disabling thinking", VicBilibily/GCMP #289): K2.7
 *   Code takes no other switch, nothing; nor Kimi K3 ({@link ALWAYS_THINKS}: `kimi-k3`,
 *   `kimi-k3.1-pro`, `-highspeed`) and `kimi-for-coding`, which always reason and take only a
 *   top-level `reasoning_effort` `low`, `high` or `max` (Moonshot's reasoning-effort guide: "Kimi
 *   K3 always reasons… When migrating from K2.x to K3, remove the K2.x `thinking` configuration",
 *   quoted in lemon07r/opencode-kimi-full PR #11; `none` refused, anomalyco/models.dev PR #4721;
 *   Kimi Code's list, liliMozi/openhanako #2092; no effort is `max`): `reasoning_effort: "low"`;
 * - GLM-4.5 to GLM-5.2: the same (docs.bigmodel.cn, GLM-4.5: `thinking.type` enabled or disabled;
 *   GLM-4.7 and GLM-5 think by default); GLM-5.3 (`glm-5.3`, `-flash`, `-flashx`) has no off
 *   switch ({@link ALWAYS_THINKS}): `reasoning_effort: "low"`, the least it takes;
 * - Qwen3 (`qwen3-…`, `qwen3.5-…`; DashScope, where they think by default): `enable_thinking: false`,
 *   the field DashScope documents and research42's non-stream rule already writes; DashScope's
 *   Qwen3-based Plus, Flash and Turbo ({@link QWEN_HYBRID}) the same: hybrid thinking, off by
 *   default, on for a client that asks (Model Studio's deep-thinking guide), so the field turns
 *   off what a translated request turned on, and a learned forced-call rule has a switch to send;
 * - OpenAI's GPT-5.1 on (not their Codex, chat or pro models, which take no `none`):
 *   `reasoning_effort: "none"` (OpenAI's reference: "gpt-5.1 defaults to none… models before
 *   gpt-5.1 … do not support none").
 * Undefined for another model: nothing is sent, as before. A server that refuses the field (a
 * proxy with its own schema, Qwen3 off DashScope) learns to go without it, as any refused field
 * (../daemon/router/adaptations.ts).
 *
 * Those are the vendors' API fields. The servers people run these models on themselves (`local`:
 * one on this machine or the local network) read the switch only as an argument of the model's
 * chat template, `chat_template_kwargs`: vLLM logs a top-level field it does not know as ignored,
 * llama-server and LM Studio drop it. Qwen3's and GLM's templates take `enable_thinking` (Qwen's
 * vLLM and SGLang deployment docs; vLLM's GLM-5.1 recipe: `{"enable_thinking": false}`), Kimi
 * K2.5's and K2.6's `thinking` (SGLang's Kimi-K2.5 page: instant mode is `thinking=false`;
 * NVIDIA's hosted K2.6 takes the same kwarg), DeepSeek V4's `thinking` too: it has no Jinja
 * template, and vLLM's `DeepseekV4Tokenizer` reads `thinking` or `enable_thinking` (both off:
 * chat mode), its reasoning parser the same two (`deepseek_v4_chat_kwargs.py` turns thinking on
 * only when the request names neither). To such a server both go: the top-level field still reaches a relay on this machine in
 * front of the vendor's API (LiteLLM to DashScope), and vLLM reads DeepSeek V4's `thinking` at the
 * top level; a server that knows neither leaves both alone, and one that refuses the kwargs learns
 * to go without them. Ollama has no templates of that kind: its `/v1` turns thinking off for
 * `reasoning_effort: "none"` (ollama `openai/thinking_test.go`), sent where the name has Ollama's
 * `:tag` (`qwen3.6:35b`). LM Studio's chat completions read neither (lmstudio-bug-tracker #632,
 * #988): nothing gwctl can send turns its thinking off.
 */
export function thinkingOffFields(model: string, local = false): Record<string, unknown> | undefined {
  const name = model.slice(model.lastIndexOf('/') + 1).toLowerCase()
  // (its template reads `reasoning_effort` alone: GLM-5.3-Flash's first line takes `low` or `high`
  // and makes anything else, none or absent included, `max`)
  if (ALWAYS_THINKS.test(name))
    return local && name.startsWith('glm')
      ? {reasoning_effort: 'low', chat_template_kwargs: {reasoning_effort: 'low'}}
      : {reasoning_effort: 'low'}
  if (/^(?:deepseek-v4|kimi-k2\.[5-9](?!\d|\S*-code)|glm-(?:4\.[5-9]|5))/.test(name)) {
    const off = {thinking: {type: 'disabled'}}
    if (!local) return off
    const kwargs = name.startsWith('glm') ? {enable_thinking: false} : {thinking: false}
    return localOff(off, kwargs, name)
  }
  if (name.startsWith('qwen3') || QWEN_HYBRID.test(name))
    return local
      ? localOff({enable_thinking: false}, {enable_thinking: false}, name)
      : {enable_thinking: false}
  if (/^gpt-5\.[1-9]\d*(?:-mini|-nano)?(?:-\d{4}-\d{2}-\d{2})?$/.test(name)) return {reasoning_effort: 'none'}
  return undefined
}

/**
 * GLM-5.3 (`glm-5.3`, `glm-5.3-flash`, `glm-5.3-flashx`, any `vendor/` prefix or Ollama `:tag`):
 * it always thinks, and takes only the efforts `low`, `high` and `max`. Z.AI's and BigModel's
 * standard routes refuse `thinking: {type: "disabled"}`, `reasoning_effort` `none`, `medium` and
 * `xhigh` with code 1210, "This model always engages in thinking and cannot be disabled; please use
 * low, high, or max" (NousResearch/hermes-agent PR #97286, #98465, #96838's probes; lobehub PR
 * #18301 quoting Z.AI's docs: "use reasoning_effort low instead of turning thinking off"); its
 * coding route takes them but thinks next to nothing at `medium`, and its chat template makes any
 * value but `low` and `high` the most, `max` (osaurus-ai/vmlx-swift PR #441). Leaving the field out
 * is the server's default, `max` too: "no thinking" is `low`.
 *
 * Kimi K3 (`kimi-k3`, `kimi-k3.1-pro`, `kimi-k3.1-pro-highspeed`, any `vendor/` prefix) the same:
 * it always reasons, at a top-level `reasoning_effort` `low`, `high` or `max`, `max` when none is
 * given (Moonshot's reasoning-effort guide, quoted in lemon07r/opencode-kimi-full PR #11;
 * NousResearch/hermes-agent PR #81647, #76427: `medium` rounds to `high`, `xhigh` to `max`;
 * CherryHQ/cherry-studio PR #20036: `medium` refused with a 400); `thinking: {type: "disabled"}` and
 * the efforts `none`, `off` and `disabled` it refuses. Not `kimi-k3-fast`, a relay's variant that
 * does not reason (anomalyco/models.dev PR #4090). Kimi Code's `kimi-for-coding` the same: it
 * refuses `medium` with "Unsupported value: 'reasoning_effort' does not support 'medium' with this
 * model. Supported values are: 'low', 'high', and 'max'." (liliMozi/openhanako #2092, 2026-07-09),
 * and `thinking.type: disabled` (above). Not yet `kimi-k2.7-code` (no thread shows its efforts).
 */
const ALWAYS_THINKS = /(?:^|\/)(?:glm-5\.3(?!\d)|kimi-k3(?![\d]|\S*-fast)|kimi-for-coding)/i

/**
 * xAI's Grok models that reason whether or not a request asks them to (any `vendor/` prefix
 * aside): Grok 4 (`grok-4`, `grok-4-0709`, `-latest`) and its fast reasoning variants
 * (`grok-4-fast-reasoning`, `grok-4-1-fast-reasoning`), Grok 4.20's reasoning model and every later
 * Grok 4.x (4.5, 4.6 and 4.7 take efforts but no off switch: "reasoning cannot be disabled",
 * nesquena/hermes-webui PR #6497; chenyme/grok2api PR #908; Grok 4.3 reasons at `low` unless told
 * `none`: docs.x.ai's reasoning guide), `grok-code-fast-1` and Grok 3 Mini (`grok-3-mini`,
 * `-fast`: it always thinks, its `reasoning_effort` takes `low` and `high` only, docs.x.ai's
 * reasoning guide); not a `-non-reasoning` variant (`grok-4-fast-non-reasoning`,
 * `grok-4.20-0309-non-reasoning`) nor Grok 3. Their reasoning comes
 * back only as a reasoning item's `encrypted_content`, and only when asked for (`include:
 * ["reasoning.encrypted_content"]`, docs.x.ai: "Encrypted Reasoning Content"); without it, the next
 * turn cannot give it back, and Grok 4.7 stops reasoning after a few tool rounds (codex-router #888).
 */
export function reasonsRegardless(model: string): boolean {
  const name = model.slice(model.lastIndexOf('/') + 1).toLowerCase()
  return /^grok-(?:4|code|3-mini)(?![\d])/.test(name) && !name.includes('non-reasoning')
}

/**
 * The `reasoning_effort` a chat request sends its model for `effort` (`beyond`: the client's
 * effort above `high`, ir.ts `ReasoningSettings`): the effort itself, but for a model that takes
 * only some ({@link ALWAYS_THINKS}: `low`, `high`, `max`), where `minimal` is `low` and `medium` is
 * `high` (the nearer of the two it takes, and no less thinking than asked); one above `high` is the
 * most the model is known to take ({@link beyondEffort}), else `high`. A name test only for an
 * effort such a model does not take, or one above `high`: `low` and a plain `high` go as they are.
 */
export function chatEffort(model: string, effort: string, beyond?: 'xhigh' | 'max'): string {
  if (effort === 'low' || (effort === 'high' && beyond === undefined)) return effort
  if (effort === 'high') return beyondEffort(model, beyond!) ?? 'high'
  if (!ALWAYS_THINKS.test(model)) return effort
  return effort === 'minimal' ? 'low' : effort === 'medium' ? 'high' : effort
}

/**
 * The effort above `high` a chat or Responses model takes for a client's `beyond` (Claude Code's
 * `xhigh` and `max`, Codex's `xhigh`), by its name (any `vendor/` prefix aside), or undefined where
 * none is known (the request then goes with `high`, which every model with efforts takes):
 * - GLM-5.3 ({@link ALWAYS_THINKS}): `max`, its most (`xhigh` is refused with its 1210);
 * - OpenAI's GPT-5.2 on and `gpt-5.1-codex-max` (OpenAI's reference: "`xhigh` is supported for all
 *   models after gpt-5.1-codex-max"): `xhigh`, their most, for either; not their `-mini` and
 *   `-nano` (not said of them). GPT-6's `max` goes to a GPT-6 (`gpt-6…`) for a client's `max`.
 * A server whose model refuses it after all ("Supported values are: 'low', 'medium', and
 * 'high'.", the 1210's list) teaches the nearest it takes, from the one failed try
 * (../daemon/router/adaptations.ts).
 */
export function beyondEffort(model: string, beyond: 'xhigh' | 'max'): 'xhigh' | 'max' | undefined {
  const name = model.slice(model.lastIndexOf('/') + 1).toLowerCase()
  if (ALWAYS_THINKS.test(name)) return 'max'
  if (/^gpt-6(?:\.\d+)?(?![\d.])/.test(name)) return beyond === 'max' ? 'max' : undefined
  if (/^gpt-5\.(?:[2-9]|\d\d)(?!\d)(?!.*-(?:mini|nano)(?:-|$))|^gpt-5\.1-codex-max(?!-mini)/.test(name))
    return 'xhigh'
  return undefined
}

/**
 * DashScope's commercial Qwen3 models with the hybrid thinking switch (Model Studio's
 * deep-thinking guide: the Plus, Flash and Turbo series, `enable_thinking`, off by default):
 * `qwen-plus`, `qwen-turbo` and their `-latest`, and their snapshots from 2025-04-28 (the first
 * on Qwen3; `qwen-plus-2025-01-25` and older are Qwen2.5 and take no switch), `qwen-flash` and
 * its snapshots. Another `qwen-…` (`qwen-max`, `qwen-plus-character`) gets nothing.
 */
const QWEN_HYBRID =
  /^qwen-(?:(?:plus|turbo)(?:-latest|-2025-(?:04-28|0[5-9]-\d\d|1[0-2]-\d\d)|-20(?:2[6-9]|[3-9]\d)-\d\d-\d\d)?|flash(?:-latest|-\d{4}-\d\d-\d\d)?)$/

/** A local server's switch ({@link thinkingOffFields}): the vendor's field, the template's, Ollama's. */
function localOff(
  vendor: Record<string, unknown>,
  kwargs: Record<string, unknown>,
  name: string,
): Record<string, unknown> {
  return {
    ...vendor,
    chat_template_kwargs: kwargs,
    ...(name.includes(':') ? {reasoning_effort: 'none'} : {}),
  }
}

/**
 * Chat models that think by default and refuse a forced `tool_choice` (`required`, a named
 * function) while they do, named so the request that forces a call goes with thinking off from
 * the first try: DeepSeek V4 ("Thinking mode does not support this tool_choice"; LiteLLM #37470's
 * probes: `thinking: disabled` takes both), Kimi K2.5, K2.6 and K2.7 ("tool_choice 'required' is
 * incompatible with thinking enabled"; oh-my-pi #1077 sends `disabled` for forced tools). Any
 * `vendor/` prefix aside. Another model's refusal is learned (adaptations.ts).
 */
export function refusesForcedWhileThinking(model: string): boolean {
  const name = model.slice(model.lastIndexOf('/') + 1).toLowerCase()
  return /^(?:deepseek-v4|kimi-k2\.[5-9](?!\d|\S*-code))/.test(name)
}

/**
 * Kimi's chat models that refuse a forced `tool_choice` while thinking, as the K2.5 on do, and
 * cannot stop thinking (K3, K3.1 Pro and `kimi-for-coding`, {@link ALWAYS_THINKS}; K2.7 Code,
 * which takes `thinking.type: enabled` only: {@link thinkingOffFields}): a request that forces a
 * call goes with `auto` and the call asked for in words from the first try (translate.ts; the rule
 * a learned `autoToolChoice` and the Messages encoder's Claude 5.5 have), not with thinking off,
 * which they refuse (agentscope-ai/agentscope-java PR #2320 degrades their tool_choice the same
 * way; theopenco/llmgateway PR #3828: K3 takes `auto` and `none` only). Any `vendor/` prefix aside.
 */
export function refusesForcedAlwaysThinking(model: string): boolean {
  const name = model.slice(model.lastIndexOf('/') + 1).toLowerCase()
  return /^kimi-(?:k3(?!\d|\S*-fast)|k2\.\d+-code|for-coding)/.test(name)
}

/** Whether a chat body turns its model's thinking off, by any of the switches above. */
export function chatThinkingIsOff(body: Record<string, unknown>): boolean {
  return (
    (body.thinking as {type?: unknown} | undefined)?.type === 'disabled' ||
    body.enable_thinking === false ||
    body.reasoning_effort === 'none'
  )
}

/**
 * A body that forces a tool call, with its model's thinking turned off for that one request and
 * the forced choice kept (what a thinking-mode server takes): a chat body (`required`, a named
 * function) gets its model's switch ({@link thinkingOffFields}, unless `drop` holds it: refused
 * before), and goes without `reasoning_effort`, OpenRouter's `reasoning` and DashScope's
 * `thinking_budget`, which would ask for thinking again; a Messages body (`any`, `tool`) gets
 * `thinking: {type: "disabled"}` without `output_config.effort` (DeepSeek's Anthropic endpoint
 * refuses the two together: "thinking options type cannot be disabled when reasoning_effort is
 * set"). A body that forces nothing, already has thinking off, or whose model has no known
 * switch stays as it was. True when it changed.
 */
/**
 * A Messages body (in place) with thinking turned off: `thinking: {type: "disabled"}`, without the
 * `output_config.effort` that goes only with thinking on (DeepSeek's Anthropic endpoint refuses the
 * two together: "thinking options type cannot be disabled when reasoning_effort is set"). False,
 * and nothing changed, when it had thinking disabled already.
 */
export function messagesThinkingOff(body: Record<string, unknown>): boolean {
  if ((body.thinking as {type?: unknown} | undefined)?.type === 'disabled') return false
  body.thinking = {type: 'disabled'}
  const config = body.output_config as Record<string, unknown> | undefined
  if (config && typeof config === 'object' && 'effort' in config) {
    const {effort: _, ...rest} = config
    if (Object.keys(rest).length > 0) body.output_config = rest
    else delete body.output_config
  }
  return true
}

export function thinkingOffForForcedCall(
  body: Record<string, unknown>,
  drop: readonly string[] = [],
): boolean {
  const choice = body.tool_choice
  if (choice === undefined || choice === null) return false
  const type = (choice as {type?: unknown}).type
  if (type === 'any' || type === 'tool') return messagesThinkingOff(body)
  // (chat: `required`, or a named function)
  if (choice !== 'required' && (typeof choice !== 'object' || type !== 'function')) return false
  if (chatThinkingIsOff(body)) return false
  const off = typeof body.model === 'string' ? thinkingOffFields(body.model) : undefined
  // (a model that cannot stop thinking has only its least effort: no switch to send)
  if (!off || !chatThinkingIsOff(off)) return false
  const fields = Object.keys(off).filter((field) => !drop.includes(field))
  if (fields.length === 0) return false
  delete body.reasoning_effort
  delete body.reasoning
  delete body.thinking_budget
  for (const field of fields) body[field] = off[field]
  return true
}

/**
 * A Gemini 3 or later name, any case, behind a vendor's prefix too (`google/gemini-3-pro-preview`);
 * and Google's `-latest` aliases: `gemini-pro-latest`, which Google moved to Gemini 3.1 Pro on 6
 * March 2026 (its notice, quoted in google-gemini/gemini-cli #20588), `gemini-flash-latest` and
 * `gemini-flash-lite-latest`, which name no Gemini 2.5 model in late 2026: Google's deprecations
 * page gives Gemini 2.5 Flash's shutdown as 17 June 2026, `gemini-3-flash-preview` its replacement,
 * and the latest Flash is Gemini 3.8 Flash (GA in September 2026). Wrong for an alias, a level costs
 * one refusal ("Thinking level is not supported", learned: `noThinkingLevel`).
 */
const GEMINI_3_ON = /(?:^|\/)gemini-(?:[3-9]|\d{2,}|(?:pro|flash|flash-lite)-latest\b)/i

/**
 * The thinking level a relay's model name fixes (CLIProxyAPI's and Antigravity's `gemini-3-pro-high`,
 * `gemini-3.5-flash-low`, CLIProxyAPI's `gemini-3-flash(high)`): upper case, for a Gemini 3 or later
 * name ({@link takesThinkingLevel}); undefined for any other. Such a relay runs the model at that
 * level and refuses another sent beside it, so the level sent is the name's from the first request.
 */
export function nameLevel(model: string): string | undefined {
  const named = /(?:-|\()(minimal|low|medium|high)\)?$/i.exec(model)
  return named && GEMINI_3_ON.test(model) ? named[1].toUpperCase() : undefined
}

export const takesThinkingLevel = (model: string): boolean => GEMINI_3_ON.test(model)
