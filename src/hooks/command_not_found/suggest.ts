/**
 * An unknown command (`gwctl chatt`, `gwctl video creat`): says so in gwctl's words, suggests the
 * closest command, and exits 2 (usage) like every other bad input. With `--json` the error is the
 * usual `{"error": ...}` document on stdout.
 */
import type {Hook} from '@oclif/core'

import {UsageError} from '../../core/errors.js'
import {editDistance} from '../../core/suggest.js'

/**
 * The command id closest to what was typed, compared over the same number of words; a longer
 * match wins (`video creat` -> `video create`, not the topic `video`).
 */
export function closestCommand(typed: string[], ids: string[]): string | undefined {
  let best: {id: string; score: number; words: number} | undefined
  for (const id of ids) {
    const words = id.split(':')
    if (typed.length < words.length) continue
    const score = editDistance(typed.slice(0, words.length).join(' '), words.join(' '))
    if (score > Math.max(1, Math.floor(words.join(' ').length / 3))) continue
    if (!best || words.length > best.words || (words.length === best.words && score < best.score)) {
      best = {id, score, words: words.length}
    }
  }
  return best?.id.split(':').join(' ')
}

/**
 * What to say about the unknown command `typed`: the words to name, and the hint. A suggestion
 * is never the very topic the user typed (`gwctl key frobnicate` is not helped by "Did you mean
 * `gwctl key`?"): then the unknown word is the one after the topic, and the hint names the
 * topic's closest command, or all of them.
 */
export function unknownCommand(
  typed: string[],
  ids: string[],
  topics: string[],
): {shown: string; hint: string} {
  const every = 'Run `gwctl --help` for every command.'
  const suggestion = closestCommand(typed, [...ids, ...topics])
  const words = suggestion?.split(' ') ?? []
  const topicTyped =
    suggestion !== undefined && topics.includes(words.join(':')) && words.every((w, i) => typed[i] === w)
  if (topicTyped && typed.length > words.length) {
    const topic = words.join(':')
    const shown = typed.slice(0, words.length + 1).join(' ')
    const under = ids.filter((id) => id.startsWith(`${topic}:`) && id.split(':').length === words.length + 1)
    const near = closestCommand(typed, under)
    const verbs = under.map((id) => id.split(':').at(-1)).sort()
    return {
      shown,
      hint: near
        ? `Did you mean \`gwctl ${near}\`? Run \`gwctl ${words.join(' ')} --help\` for its commands.`
        : `\`gwctl ${words.join(' ')}\` has: ${verbs.join(', ')}. Run \`gwctl ${words.join(' ')} --help\` for their usage.`,
    }
  }
  // oclif joins every leading argument into the id: name only the words that cannot be a command.
  const shown = typed.slice(0, Math.max(1, words.length || 1)).join(' ')
  return {
    shown,
    hint: suggestion ? `Did you mean \`gwctl ${suggestion}\`? ${every}` : every,
  }
}

const hook: Hook.CommandNotFound = async function (options) {
  const typed = options.id.split(':')
  // `gwctl help [COMMAND...]`, as in git and npm: the same as `gwctl [COMMAND...] --help`.
  if (typed[0] === 'help') {
    const {loadHelpClass} = await import('@oclif/core')
    const Help = await loadHelpClass(options.config)
    await new Help(options.config).showHelp([...typed.slice(1), ...(options.argv ?? [])])
    return
  }
  const ids = options.config.commands.filter((c) => !c.hidden).map((c) => c.id)
  const topics = options.config.topics.map((t) => t.name)
  const {shown, hint} = unknownCommand(typed, ids, topics)
  const error = new UsageError(`Unknown command "${shown}".`, {code: 'unknown_command', hint})
  if ((options.argv ?? []).includes('--json')) {
    process.stdout.write(JSON.stringify(error.toJSON(), null, 2) + '\n')
  } else {
    const {colorErr, err} = await import('../../core/output.js')
    const c = colorErr()
    err(c.red(`Error: ${error.message}`))
    err(c.dim(error.hint ?? ''))
  }
  process.exit(error.exitCode)
}

export default hook
