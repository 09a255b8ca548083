import {Args} from '@oclif/core'

import {BaseCommand} from '../core/base-command.js'
import {out} from '../core/output.js'
import {SHELLS, commandTree, completionScript} from '../completion/scripts.js'
import type {Shell} from '../completion/scripts.js'

export default class Completion extends BaseCommand {
  static summary = 'Prints the shell completion script for bash, zsh or fish.'
  static description =
    'Completes commands, flags and their options, and the names in your state: agent names (--agent, `agents enable|disable`), ' +
    'policy ids (--policy, --policy-id, `policies show|set|route|remove`) and model names (--model, from providers and routes). ' +
    'Each Tab runs `gwctl __complete`, which reads the state file directly (no gateway, no network). ' +
    'Install: bash `source <(gwctl completion bash)` in ~/.bashrc; zsh `source <(gwctl completion zsh)` in ~/.zshrc after ' +
    'compinit; fish `gwctl completion fish > ~/.config/fish/completions/gwctl.fish`. Re-run it after upgrading gwctl.'

  static examples = [
    '<%= config.bin %> completion bash >> ~/.bashrc',
    '<%= config.bin %> completion fish > ~/.config/fish/completions/<%= config.bin %>.fish',
  ]

  static args = {
    shell: Args.string({description: 'The shell.', options: [...SHELLS], required: true}),
  }

  async run(): Promise<void> {
    const {args} = await this.parse(Completion)
    const tree = commandTree(this.config.commands)
    out(completionScript(args.shell as Shell, tree, this.config.bin).trimEnd())
  }
}
