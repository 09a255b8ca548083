import {Flags} from '@oclif/core'

import {GAMMA_STATUSES, GAMMA_TASK_TYPES} from '../../api/gamma.js'
import {BaseCommand} from '../../core/base-command.js'
import {out, printTable} from '../../core/output.js'
import type {ListResult} from '../../services/gamma-tasks.js'
import {GAMMA_MAX_PAGE_SIZE, gammaApi, listGammaTasks} from '../../services/gamma-tasks.js'
import {isoTime, notePlatformId} from '../../cli/gamma.js'

export default class GammaList extends BaseCommand {
  static summary = 'Lists gamma tasks of the last 7 days, newest first.'
  static description =
    'Filters combine with AND and count in the total. --all walks every page. The platform answers an invalid filter value with an empty list.'

  static examples = [
    '<%= config.bin %> gamma list',
    '<%= config.bin %> gamma list --status succeeded --type generation --all',
    '<%= config.bin %> gamma list --task-id cgt-1 --task-id cgt-2 --json',
  ]

  static flags = {
    status: Flags.string({description: 'Only tasks in this status.', options: [...GAMMA_STATUSES]}),
    'task-id': Flags.string({description: 'Only these task ids (repeatable).', multiple: true}),
    model: Flags.string({description: 'Only tasks of this platform model name.'}),
    type: Flags.string({description: 'Only tasks of this type.', options: [...GAMMA_TASK_TYPES]}),
    page: Flags.integer({description: 'Page number, from 1.', min: 1, exclusive: ['all']}),
    'page-size': Flags.integer({
      description: `Tasks per page (default 20, or ${GAMMA_MAX_PAGE_SIZE} with --all).`,
      min: 1,
      max: GAMMA_MAX_PAGE_SIZE,
    }),
    all: Flags.boolean({description: 'Read every page.'}),
  }

  async run(): Promise<ListResult> {
    const {flags} = await this.parse(GammaList)
    const result = await listGammaTasks(gammaApi(), {
      status: flags.status,
      taskIds: flags['task-id'],
      model: flags.model,
      taskType: flags.type,
      pageNum: flags.page,
      pageSize: flags['page-size'],
      all: flags.all,
      signal: this.signal,
    })
    if (!this.jsonEnabled()) {
      printTable(
        result.items,
        [
          {header: 'ID', value: (t) => t.id},
          {header: 'TYPE', value: (t) => t.task_type},
          {header: 'STATUS', value: (t) => t.status},
          {header: 'CREATED', value: (t) => isoTime(t.created_at)},
          {header: 'RES', value: (t) => t.resolution},
          {header: 'DUR', value: (t) => (t.duration === undefined ? '' : `${t.duration}s`), align: 'right'},
          {header: 'RATIO', value: (t) => t.ratio},
        ],
        'No tasks.',
      )
      const pages = Math.max(1, Math.ceil(result.total / result.page_size))
      out(
        flags.all || pages <= 1
          ? `Total: ${result.total}`
          : `Total: ${result.total} (page ${result.page_num} of ${pages}; --page N or --all for more)`,
      )
      notePlatformId(this.verbose, 'list', result.platform_id)
    }
    return result
  }
}
