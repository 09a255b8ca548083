import {readFile} from 'node:fs/promises'
import {Args, Flags} from '@oclif/core'

import type {AppliesOn} from '../../cli/applies-on.js'
import {printAppliesOn} from '../../cli/applies-on.js'
import {BaseCommand} from '../../core/base-command.js'
import {NotFoundError, UsageError} from '../../core/errors.js'
import {out, warn} from '../../core/output.js'
import type {PolicyConfig} from '../../store/schema.js'
import {setPolicy} from '../../services/policies.js'
import {readAllStdin} from '../../cli/stdin.js'

export default class PoliciesSet extends BaseCommand {
  static summary = 'Creates or replaces a routing policy from a JSON file.'
  static description =
    'The JSON is checked against the policy schema and the routing rules (every target names a known provider of its route family; ' +
    'cross-family targets are refused) before it is written; a problem exits 2 and names it. Missing fallbacks, breaker and timeouts ' +
    'take the defaults. A running gateway loads it on `gwctl gateway restart`, a stopped one when it starts.'

  static examples = [
    '<%= config.bin %> policies set team-a --file team-a.json',
    `$ echo '{"routes":{"messages":[{"provider":"anthropic"}]}}' | <%= config.bin %> policies set team-a --file -`,
  ]

  static args = {
    id: Args.string({description: 'Policy id.', required: true, ignoreStdin: true}),
  }

  static flags = {
    file: Flags.string({description: 'JSON file of the policy, or - for stdin.', required: true}),
  }

  async run(): Promise<{policy: PolicyConfig; created: boolean; warnings: string[]; appliesOn: AppliesOn}> {
    const {args, flags} = await this.parse(PoliciesSet)
    let text: string
    if (flags.file === '-') text = await readAllStdin('--file -', this.signal)
    else {
      try {
        text = await readFile(flags.file, 'utf8')
      } catch (error) {
        const e = error as NodeJS.ErrnoException
        // A file that is not there is "not found" (exit 7), as the README's table says.
        if (e.code === 'ENOENT') {
          throw new NotFoundError(`No file ${flags.file}.`, {
            code: 'file_not_found',
            hint: 'Give the path of a policy JSON file, or `--file -` to read it from stdin.',
          })
        }
        throw new UsageError(`Cannot read ${flags.file}: ${e.message}`, {code: 'file_unreadable'})
      }
    }
    const result = await setPolicy(args.id, text)
    if (!this.jsonEnabled()) {
      out(`${result.created ? 'Created' : 'Replaced'} policy ${result.policy.id}.`)
      for (const w of result.warnings) warn(w)
    }
    const appliesOn = await printAppliesOn(this.jsonEnabled())
    return {...result, appliesOn}
  }
}
