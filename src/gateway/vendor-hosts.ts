/**
 * Whether a provider is Anthropic's own API (`api.anthropic.com`, or another host of
 * `anthropic.com`): the one server that reads Claude Code's attribution line
 * (../daemon/router/billing-line.ts) and answers its auto-mode `safeguards`
 * (../daemon/router/safeguards.ts). Here, beside the policies, for the daemon and the commands alike.
 */
export function isAnthropicApi(baseUrl: string): boolean {
  return /^https?:\/\/(?:[^/?#@]*\.)?anthropic\.com(?:[:/?#]|$)/i.test(baseUrl)
}

/**
 * Whether a provider's host serves its own vendor's models only, never Anthropic's (DeepSeek,
 * Moonshot and Kimi, Z.AI and Zhipu, MiniMax, Alibaba's DashScope, Volcengine Ark, Fireworks):
 * there a Claude model name is Claude Code's own, which the server maps to its model (Z.AI's and
 * Kimi's Anthropic endpoints take `claude-sonnet-4-5` for theirs), so what only Claude takes (tool
 * search's deferral, the 1-hour cache) goes by that host's rules whatever the model's name. A relay
 * (OpenRouter, one of this machine) may front Claude and is not one.
 */
export function servesOwnModelsOnly(baseUrl: string): boolean {
  return /^https?:\/\/(?:[^/?#@]*\.)?(?:deepseek\.com|moonshot\.(?:ai|cn)|kimi\.com|z\.ai|bigmodel\.cn|minimaxi?\.(?:com|io|chat)|aliyuncs\.com|volces\.com|fireworks\.ai)(?:[:/?#]|$)/i.test(
    baseUrl,
  )
}
