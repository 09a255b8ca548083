import {Flags} from '@oclif/core'

import {BaseCommand} from '../../core/base-command.js'
import {out, printTable, warn} from '../../core/output.js'
import type {JournalTask} from '../../store/video-journal.js'
import {journalPath} from '../../store/video-journal.js'
import {listJournaledVideoTasks, refreshVideoTasks} from '../../services/video-tasks.js'
import {note} from '../../cli/video-print.js'

export default class VideoList extends BaseCommand {
  static summary = 'Lists the video tasks created from this machine (local journal).'
  static description =
    'The /videos API has no list endpoint, so gwctl keeps a journal in GWCTL_HOME of every task it created: id, model, ' +
    'provider, prompt, time and the last status it saw, with the time it saw it (LAST SEEN). Statuses are refreshed ' +
    'by `video get`, `video poll`, and by --refresh, which asks the platform about every task not finished yet.'

  static examples = [
    '<%= config.bin %> video list',
    '<%= config.bin %> video list --refresh',
    '<%= config.bin %> video list --limit 5 --json',
  ]

  static flags = {
    limit: Flags.integer({description: 'Show at most this many tasks (newest first).', min: 1}),
    refresh: Flags.boolean({
      description: 'Query the platform for the listed tasks that were not finished when last seen.',
    }),
  }

  async run(): Promise<{tasks: JournalTask[]}> {
    const {flags} = await this.parse(VideoList)
    const all = listJournaledVideoTasks()
    let tasks = flags.limit ? all.slice(0, flags.limit) : all
    if (flags.refresh) tasks = (await refreshVideoTasks(tasks, {signal: this.signal, onWarning: warn})).tasks
    if (!this.jsonEnabled()) {
      printTable(
        tasks,
        [
          {header: 'ID', value: (t) => t.id},
          {header: 'LAST SEEN', value: (t) => `${t.status} at ${shortTime(t.updated_at)}`},
          {header: 'MODEL', value: (t) => t.model},
          {header: 'PROVIDER', value: (t) => t.provider ?? '-'},
          {header: 'CREATED', value: (t) => shortTime(t.created_at)},
          {header: 'PROMPT', value: (t) => truncate(t.prompt ?? '', 40)},
        ],
        `No video tasks yet (journal: ${journalPath()}).`,
      )
      if (tasks.length < all.length) out(`(${all.length - tasks.length} older not shown)`)
      if (!flags.refresh && tasks.some((t) => !['completed', 'failed', 'UNKNOWN'].includes(t.status)))
        note('LAST SEEN is what gwctl saw then; `gwctl video list --refresh` asks the platform now.')
    }
    return {tasks}
  }
}

function shortTime(iso: string): string {
  return iso.replace(/\.\d+Z$/, 'Z')
}

function truncate(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ')
  return flat.length > max ? flat.slice(0, max - 1) + '…' : flat
}
