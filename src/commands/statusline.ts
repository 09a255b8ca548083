import {BaseCommand} from '../core/base-command.js'
import {out} from '../core/output.js'
import {readStatuslineInput, statusline} from '../services/usage-statusline.js'

export default class Statusline extends BaseCommand {
  static summary =
    'One line of usage for Claude Code’s statusLine: model, session, today, the 5-hour window, burn rate.'
  static description =
    'Reads the JSON Claude Code pipes on stdin (session id, model) and prints one line: the model, this session’s cost, ' +
    'today’s cost, the active 5-hour window’s cost and time left, and its burn rate in dollars per hour. The figures come ' +
    'from the running gateway’s memory (a file it keeps up to date once asked, or one loopback request), or from logs.db read-only when it is stopped (then as of the ' +
    'last history scan). `gwctl statusline` with no flag is answered without loading the command framework (about one bare ' +
    'Node start). `gwctl agents enable claude-code --statusline` installs it.'

  static examples = [
    `echo '{"session_id":"abc","model":{"display_name":"Opus"}}' | <%= config.bin %> statusline`,
    '<%= config.bin %> statusline --json < input.json',
  ]

  async run(): Promise<{line: string; source: 'daemon' | 'database'}> {
    await this.parse(Statusline)
    const result = await statusline(await readStatuslineInput())
    if (!this.jsonEnabled()) out(result.line)
    return result
  }
}
