/**
 * Whether a provider is Anthropic's own API (`api.anthropic.com`, or another host of
 * `anthropic.com`): the one server that reads Claude Code's attribution line
 * (../daemon/router/billing-line.ts) and answers its auto-mode `safeguards`
 * (../daemon/router/safeguards.ts). Here, beside the policies, for the daemon and the commands alike.
 */
export function isAnthropicApi(baseUrl: string): boolean {
  return /^https?:\/\/(?:[^/?#@]*\.)?anthropic\.com(?:[:/?#]|$)/i.test(baseUrl)
}
