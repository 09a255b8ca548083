import {Args, Flags} from '@oclif/core'

import type {AppliesOn} from '../../cli/applies-on.js'
import {printAppliesOn} from '../../cli/applies-on.js'
import {BaseCommand} from '../../core/base-command.js'
import {out, warn} from '../../core/output.js'
import type {PolicyConfig} from '../../store/schema.js'
import {FAMILIES} from '../../store/schema.js'
import {routePolicy, routeLines} from '../../services/policies.js'

export default class PoliciesRoute extends BaseCommand {
  static summary = "Sets one entrance family's ordered targets in a policy."
  static description =
    'Replaces the targets of --family with the --target values, tried in the order given (PROVIDER, or PROVIDER:MODEL to rewrite the model). ' +
    'Creates the policy with default fallbacks, breaker and timeouts when it does not exist. A target of another family or an unknown provider exits 2, ' +
    'unless --translate marks the cross-family targets: requests and answers are then translated between the two protocols (docs/TRANSLATION.md). ' +
    'A running gateway loads it on `gwctl gateway restart`, a stopped one when it starts.'

  static examples = [
    '<%= config.bin %> policies route default --family messages --target anthropic --target sim-messages:claude-sim',
    '<%= config.bin %> policies route team-a --family responses --target openai-responses:gpt-5',
    '<%= config.bin %> policies route claude-on-chat --family messages --target platform:deepseek-v3 --translate',
  ]

  static args = {
    id: Args.string({description: 'Policy id.', required: true, ignoreStdin: true}),
  }

  static flags = {
    family: Flags.string({description: 'Entrance family.', required: true, options: [...FAMILIES]}),
    target: Flags.string({
      description: 'PROVIDER or PROVIDER:MODEL, in order (repeatable).',
      required: true,
      multiple: true,
    }),
    translate: Flags.boolean({
      description:
        "Translate to the targets that speak another family than --family (e.g. Claude Code's messages on a chat-completions provider).",
      default: false,
      env: 'GWCTL_TRANSLATE',
    }),
  }

  async run(): Promise<{policy: PolicyConfig; created: boolean; warnings: string[]; appliesOn: AppliesOn}> {
    const {args, flags} = await this.parse(PoliciesRoute)
    const result = await routePolicy(args.id, flags.family, flags.target, {translate: flags.translate})
    if (!this.jsonEnabled()) {
      const line = routeLines(result.policy, result.providers).find((l) =>
        l.startsWith(`${flags.family} -> `),
      )
      out(`${result.created ? 'Created' : 'Updated'} policy ${result.policy.id}: ${line ?? flags.family}`)
    }
    if (!this.jsonEnabled()) for (const w of result.warnings) warn(w)
    const appliesOn = await printAppliesOn(this.jsonEnabled())
    return {policy: result.policy, created: result.created, warnings: result.warnings, appliesOn}
  }
}
