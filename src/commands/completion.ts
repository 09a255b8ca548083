import {Args} from '@oclif/core'

import {VIDEO_MODELS} from '../api/video-catalog.js'
import {BaseCommand} from '../core/base-command.js'
import {out} from '../core/output.js'
import {SHELLS, commandTree, completionScript} from '../completion/scripts.js'
import type {Shell} from '../completion/scripts.js'

export default class Completion extends BaseCommand {
  static summary = 'Prints the shell completion script for bash, zsh or fish.'
  static description =
    'Completes commands, flags and their options, and each value from its own domain: the video models for `video create --model`, ' +
    'chat models for `chat --model` (the chat providers and routes in your state, and the setting chat.model), the tools `agents enable` can bind, ' +
    'the bound ones for `agents disable`, agents holding a live key for `key revoke`, agent names (--agent, `agents remove`) and ' +
    'policy ids (--policy, --policy-id, `policies show|set|route|remove`). ' +
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
    const tree = commandTree(this.config.commands, {
      'video:create --model': VIDEO_MODELS.map((m) => m.name),
    })
    out(completionScript(args.shell as Shell, tree, this.config.bin).trimEnd())
  }
}
