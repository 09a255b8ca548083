/**
 * The completion scripts of `gwctl completion bash|zsh|fish`: the command tree (from oclif's
 * loaded commands) in a variable, and a function that hands the words to `gwctl __complete`.
 */
import type {CompletionTree, FlagSpec, ValueKind} from './engine.js'
import {flagKind} from './engine.js'

export const SHELLS = ['bash', 'zsh', 'fish'] as const
export type Shell = (typeof SHELLS)[number]

interface CommandLike {
  id: string
  hidden?: boolean
  aliases?: string[]
  flags?: Record<string, {type: string; options?: readonly string[]; hidden?: boolean}>
  args?: Record<string, {options?: readonly string[]}>
}

/**
 * The domain of a flag (`--model`) or argument (`agent`) of one command, where the name alone
 * would pick the wrong one: `--model` is a video model for `video create`, a chat model for
 * `chat`; `agents enable` takes a tool it can bind, `key revoke` an agent holding a live key.
 * 1: free text. Fixed lists that live outside this folder (the video catalog) come in `fixed`.
 */
const DOMAINS: Record<string, FlagSpec> = {
  'chat --model': 'chat-model',
  'agents:enable agent': 'tool',
  'agents:disable agent': 'bound-tool',
  'agents:remove agent': 'agent',
  'key:revoke target': 'keyed-agent',
  'providers:add --model': 1,
}

/**
 * The tree of visible commands (`agents enable`, space-separated), flags and arguments. `fixed`:
 * value lists by `<command id> --<flag>` or `<command id> <arg>` (e.g. the video models).
 */
export function commandTree(
  commands: readonly CommandLike[],
  fixed: Record<string, readonly string[]> = {},
): CompletionTree {
  const tree: CompletionTree = {}
  const domain = (key: string): FlagSpec | undefined => (fixed[key] ? [...fixed[key]] : DOMAINS[key])
  for (const c of commands) {
    if (c.hidden) continue
    const f: Record<string, FlagSpec> = {}
    for (const [name, flag] of Object.entries(c.flags ?? {})) {
      if (flag.hidden) continue
      f[name] =
        flag.type !== 'option'
          ? 0
          : flag.options
            ? [...flag.options]
            : (domain(`${c.id} --${name}`) ?? flagKind(name) ?? 1)
    }
    const a = Object.entries(c.args ?? {}).map(([name, arg]): ValueKind | string[] | null => {
      if (arg.options) return [...arg.options]
      const d = domain(`${c.id} ${name}`)
      if (d !== undefined) return d === 0 || d === 1 ? null : d
      if (name === 'id' && c.id.startsWith('policies')) return 'policy'
      return flagKind(name) ?? null
    })
    tree[c.id.replaceAll(':', ' ')] = {f, a}
  }
  return tree
}

const single = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`
const fishSingle = (s: string) => `'${s.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`

/** The script for `shell`; `bin` is the command's name (gwctl). */
export function completionScript(shell: Shell, tree: CompletionTree, bin = 'gwctl'): string {
  const json = JSON.stringify(tree)
  const fn = `_${bin.replaceAll(/\W/g, '_')}_complete`
  if (shell === 'bash')
    return `# ${bin} completion for bash: add  source <(${bin} completion bash)  to ~/.bashrc
${fn}_tree=${single(json)}
${fn}() {
  local IFS=$'\\n'
  COMPREPLY=($(GWCTL_COMPLETE_TREE="$${fn}_tree" ${bin} __complete "\${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null))
}
complete -o default -F ${fn} ${bin}
`
  if (shell === 'zsh')
    return `#compdef ${bin}
# ${bin} completion for zsh: add  source <(${bin} completion zsh)  to ~/.zshrc (after compinit)
${fn}_tree=${single(json)}
${fn}() {
  local -a candidates
  candidates=("\${(@f)$(GWCTL_COMPLETE_TREE="$${fn}_tree" ${bin} __complete "\${(@)words[2,CURRENT]}" 2>/dev/null)}")
  if [[ -n "\${candidates[1]}" ]]; then compadd -a candidates; else _files; fi
}
compdef ${fn} ${bin}
`
  return `# ${bin} completion for fish: ${bin} completion fish > ~/.config/fish/completions/${bin}.fish
set -g ${fn}_tree ${fishSingle(json)}
function ${fn}
  set -l words (commandline -opc) (commandline -ct)
  env GWCTL_COMPLETE_TREE=$${fn}_tree ${bin} __complete $words[2..-1] 2>/dev/null
end
complete -c ${bin} -a '(${fn})'
`
}
