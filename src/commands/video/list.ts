import {Flags} from '@oclif/core'

import {BaseCommand} from '../../core/base-command.js'
import {out, printTable} from '../../core/output.js'
import type {JournalTask} from '../../store/video-journal.js'
import {journalPath} from '../../store/video-journal.js'
import {listJournaledVideoTasks} from '../../services/video-tasks.js'

export default class VideoList extends BaseCommand {
  static summary = 'Lists the video tasks created from this machine (local journal).'
  static description =
    'The /videos API has no list endpoint, so gwctl keeps a journal in GWCTL_HOME of every task it created: id, model, ' +
    'provider, prompt, time and the last status it saw. Statuses are refreshed by `video get` and `video poll`.'

  static examples = ['<%= config.bin %> video list', '<%= config.bin %> video list --limit 5 --json']

  static flags = {limit: Flags.integer({description: 'Show at most this many tasks (newest first).', min: 1})}

  async run(): Promise<{tasks: JournalTask[]}> {
    const {flags} = await this.parse(VideoList)
    const all = listJournaledVideoTasks()
    const tasks = flags.limit ? all.slice(0, flags.limit) : all
    if (!this.jsonEnabled()) {
      printTable(
        tasks,
        [
          {header: 'ID', value: (t) => t.id},
          {header: 'STATUS', value: (t) => t.status},
          {header: 'MODEL', value: (t) => t.model},
          {header: 'PROVIDER', value: (t) => t.provider ?? '-'},
          {header: 'CREATED', value: (t) => t.created_at.replace(/\.\d+Z$/, 'Z')},
          {header: 'PROMPT', value: (t) => truncate(t.prompt ?? '', 40)},
        ],
        `No video tasks yet (journal: ${journalPath()}).`,
      )
      if (tasks.length < all.length) out(`(${all.length - tasks.length} older not shown)`)
    }
    return {tasks}
  }
}

function truncate(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ')
  return flat.length > max ? flat.slice(0, max - 1) + '…' : flat
}
