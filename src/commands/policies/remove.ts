import {Args} from '@oclif/core'

import type {AppliesOn} from '../../cli/applies-on.js'
import {printAppliesOn} from '../../cli/applies-on.js'
import {BaseCommand} from '../../core/base-command.js'
import {out} from '../../core/output.js'
import type {PolicyConfig} from '../../store/schema.js'
import {removePolicy} from '../../services/policies.js'

export default class PoliciesRemove extends BaseCommand {
  static summary = 'Removes a routing policy.'
  static description =
    'Refused (exit 2) for `default` and while agents are bound to the policy; exit 7 when there is no such policy. A running gateway applies it on `gwctl gateway restart`, a stopped one when it starts.'

  static examples = ['<%= config.bin %> policies remove team-a']

  static args = {
    id: Args.string({description: 'Policy id.', required: true, ignoreStdin: true}),
  }

  async run(): Promise<{policy: PolicyConfig; appliesOn: AppliesOn}> {
    const {args} = await this.parse(PoliciesRemove)
    const policy = await removePolicy(args.id)
    if (!this.jsonEnabled()) {
      out(`Removed policy ${policy.id}.`)
    }
    const appliesOn = await printAppliesOn(this.jsonEnabled())
    return {policy, appliesOn}
  }
}
