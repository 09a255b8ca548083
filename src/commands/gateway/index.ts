import {Flags} from '@oclif/core'

import {BaseCommand} from '../../core/base-command.js'
import {printFields} from '../../core/output.js'
import type {GatewayInfo} from '../../services/gateway.js'
import {gatewayStateFields, getGatewayInfo} from '../../services/gateway.js'

export default class Gateway extends BaseCommand {
  static summary = 'Prints the state of the local gateway: Running or Stopped, pid, port, uptime, version.'
  static description =
    'The gateway is a daemon on 127.0.0.1 (port 4317 unless --port, GWCTL_GATEWAY_PORT or the gateway.port setting say otherwise). Subcommands: start, stop, restart, run.'

  static examples = ['<%= config.bin %> gateway', '<%= config.bin %> gateway --json']

  static flags = {
    port: Flags.integer({description: 'Port to report when the gateway is stopped.', min: 1, max: 65535}),
  }

  async run(): Promise<GatewayInfo> {
    const {flags} = await this.parse(Gateway)
    const state = await getGatewayInfo({port: flags.port, signal: this.signal})
    if (!this.jsonEnabled()) printFields(gatewayStateFields(state))
    return state
  }
}
