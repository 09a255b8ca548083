import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../../core/base-command.js'
import {colorErr, err, out, warn} from '../../core/output.js'
import type {EnableResult} from '../../services/agent-binding.js'
import {enableAgent} from '../../services/agent-binding.js'

export default class AgentsEnable extends BaseCommand {
  static summary = "Points an installed coding agent's own config at the gateway, with a key of its own."
  static description =
    'Claude Code: settings.json env ANTHROPIC_BASE_URL + ANTHROPIC_AUTH_TOKEN. Codex: config.toml model_provider "gwctl" and [model_providers.gwctl] (base_url .../v1, wire_api "responses", experimental_bearer_token). ' +
    'Gemini CLI: ~/.gemini/.env GOOGLE_GEMINI_BASE_URL + GEMINI_API_KEY, and settings.json security.auth.selectedType "gemini-api-key". ' +
    'Every other byte of those files stays; the original bytes are kept in the gateway state so `gwctl agents disable` restores them exactly. ' +
    'Enabling a bound agent again does nothing; --rotate issues a new key and rewrites the config.'

  static examples = [
    '<%= config.bin %> agents enable claude-code',
    '<%= config.bin %> agents enable codex --policy default',
    '<%= config.bin %> agents enable gemini-cli --rotate --json',
    '<%= config.bin %> agents enable claude-code --statusline',
  ]

  static args = {
    agent: Args.string({
      description: 'claude-code, codex or gemini-cli (or the name/id of a bound agent).',
      required: true,
      ignoreStdin: true,
    }),
  }

  static flags = {
    policy: Flags.string({
      description: "Policy of the agent's key (default: the default policy of its kind).",
    }),
    rotate: Flags.boolean({
      description: 'Issue a new key and rewrite the config even when the binding is live.',
    }),
    statusline: Flags.boolean({
      description:
        'Claude Code: also set its statusLine to `gwctl statusline` (cost of the session, the day, the 5-hour window); a statusLine of your own is kept unless --replace, and comes back on disable.',
    }),
    replace: Flags.boolean({
      description: 'With --statusline: replace your own statusLine.',
      dependsOn: ['statusline'],
    }),
  }

  async run(): Promise<EnableResult> {
    const {args, flags} = await this.parse(AgentsEnable)
    const result = await enableAgent({
      agent: args.agent,
      policyId: flags.policy,
      rotate: flags.rotate,
      ...(flags.statusline ? {statusline: {replace: flags.replace}} : {}),
      signal: this.signal,
    })
    if (flags.statusline && result.tool !== 'claude-code')
      err(colorErr().dim(`--statusline is for Claude Code; ${result.tool} has no statusLine.`))
    if (!this.jsonEnabled()) {
      if (result.outcome === 'already-bound') {
        out(
          `${result.tool} is already bound to ${result.baseUrl} (key ${result.keyPrefix}); nothing changed.`,
        )
        err(colorErr().dim('Pass --rotate to issue a new key and rewrite its config.'))
      } else {
        out(
          `${result.tool} ${result.outcome === 'rebound' ? 'rebound' : 'bound'} to ${result.baseUrl} with ${result.keyIssued ? 'a new' : 'its'} key ${result.keyPrefix}.`,
        )
        for (const f of result.files) out(`  wrote ${f}`)
        if (result.autoModeLocal)
          out(
            "  auto mode: classified locally (CLAUDE_CODE_AUTO_MODE_SERVER=0: the route does not start at Anthropic's API)",
          )
        if (result.tool === 'gemini-cli') err(colorErr().dim(GEMINI_TRUST_NOTE))
        err(colorErr().dim(`Undo with \`gwctl agents disable ${result.tool}\`.`))
      }
      if (result.statusline === 'gwctl') out('  statusLine: gwctl statusline')
      else if (result.statusline === 'user')
        err(colorErr().dim('Your own statusLine is kept; pass --replace to use `gwctl statusline` instead.'))
      await routeAdvice(result)
    }
    return result
  }
}

/**
 * Gemini CLI (0.61: folder trust is on unless settings turn it off) reads `~/.gemini/.env` only
 * in a folder the user trusted; elsewhere `gemini -p` says "you must specify the GEMINI_API_KEY
 * environment variable", as if nothing were bound. Trusting a folder is the user's call, not ours.
 */
const GEMINI_TRUST_NOTE =
  'Gemini CLI reads ~/.gemini/.env only in a folder you trust: trust it when `gemini` asks, or for `gemini -p` in a new folder pass --skip-trust (or set GEMINI_CLI_TRUST_WORKSPACE=true).'

/**
 * What the agent meets on its first request, when it is not an answer. A stopped gateway: a
 * refused connection. A route without a provider (a gateway started without `--sim` or vendor
 * keys, the quick start's first try): a 503 on every request, which Claude Code retries for
 * minutes without a word. Say so at once, with what to do. Only a running gateway knows its
 * routes (the default ones are made at its start); any failure to ask it stays silent.
 */
async function routeAdvice(result: EnableResult): Promise<void> {
  try {
    const {listAgents} = await import('../../services/gateway-keys.js')
    const {isGatewayRunning} = await import('../../services/gateway.js')
    if (!isGatewayRunning()) {
      err(
        colorErr().dim(
          `The gateway is not running: start it with \`gwctl gateway start\` (until then ${result.tool} gets "connection refused").`,
        ),
      )
      return
    }
    const agent = (await listAgents()).find((a) => a.agentId === result.agentId)
    if (!agent || agent.enabled) return
    const family = agent.route.family
    warn(
      `policy ${agent.policyId} has no provider for ${family} requests, so the gateway answers ${result.tool}'s requests 503. ` +
        `Add one (\`gwctl providers add NAME --family ${family} ...\`, then \`gwctl gateway restart\`), route the policy to one (\`gwctl policies route ${agent.policyId} --family ${family} --target ...\`), or try it offline: \`gwctl gateway restart --sim\`.`,
    )
  } catch {
    // the binding is done; this was only advice
  }
}
