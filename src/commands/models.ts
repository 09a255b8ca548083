import type {ModelList} from '../api/models.js'
import {listPlatformModels} from '../services/models.js'
import {BaseCommand} from '../core/base-command.js'
import {printTable} from '../core/output.js'

export default class Models extends BaseCommand {
  static summary = 'Lists the models of the platform ({base_url}/models).'
  static description =
    'Prints a table of the models-list endpoint: id, owner, context length, reasoning and serving providers when the ' +
    'platform reports them. With --json the list is printed as the platform sent it.'

  static examples = ['<%= config.bin %> models', '<%= config.bin %> models --json | jq -r ".data[].id"']

  async run(): Promise<ModelList> {
    await this.parse(Models)
    const list = await listPlatformModels({signal: this.signal})
    if (!this.jsonEnabled()) {
      printTable(
        list.data,
        [
          {header: 'MODEL', value: (m) => m.id},
          {header: 'OWNED BY', value: (m) => m.owned_by},
          {header: 'CONTEXT', value: (m) => m.context_length ?? '-', align: 'right'},
          {header: 'REASONING', value: (m) => (m.reasoning === undefined ? '-' : m.reasoning ? 'yes' : 'no')},
          {header: 'PROVIDERS', value: (m) => m.providers?.map((p) => p.name).join(', ') || '-'},
        ],
        'The platform lists no models.',
      )
    }
    return list
  }
}
