import {BaseCommand} from '../core/base-command.js'
import {ExitCode} from '../core/errors.js'
import {color, out, printJson} from '../core/output.js'
import type {DoctorResult} from '../services/doctor.js'
import {runDoctor} from '../services/doctor.js'

export default class Doctor extends BaseCommand {
  static summary = 'Checks the installation: settings, gateway state file, gateway port.'
  static description =
    'Prints one line per check with pass or fail and a fix hint. Exits 0 only when every check passes, else 3.'
  static examples = ['<%= config.bin %> doctor', '<%= config.bin %> doctor --json']

  async run(): Promise<{ok: boolean; healthy: boolean; checks: DoctorResult[]}> {
    await this.parse(Doctor)
    const result = await runDoctor()
    if (this.jsonEnabled()) {
      if (!result.ok) {
        printJson(result)
        this.exit(ExitCode.config)
      }
      return result
    }
    const c = color()
    for (const check of result.checks) {
      out(`${check.ok ? c.green('pass') : c.red('FAIL')}  ${check.title}: ${check.detail}`)
      if (!check.ok && check.hint) out(`      fix: ${check.hint}`)
    }
    out()
    const failed = result.checks.filter((r) => !r.ok).length
    out(failed === 0 ? 'All checks passed.' : `${failed} of ${result.checks.length} checks failed.`)
    if (!result.ok) this.exit(ExitCode.config)
    return result
  }
}
