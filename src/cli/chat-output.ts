/**
 * Terminal output of chat turns: answer text on stdout as it arrives, reasoning dimmed on stderr,
 * and the closing stats line on stderr.
 */
import {colorErr} from '../core/output.js'
import type {ChatTurnResult} from '../services/chat-stream.js'
import type {UsageTotals} from '../services/chat-session.js'

export interface TurnPrinter {
  onContent: (text: string) => void
  onReasoning: (text: string) => void
  /** Ends the answer with a newline when it did not end with one. */
  finish: () => void
}

/** Prints a streamed answer; reasoning is dropped when `showReasoning` is false. */
export function turnPrinter(options: {showReasoning: boolean}): TurnPrinter {
  let stdoutAtLineStart = true
  let inReasoning = false
  const endReasoning = (): void => {
    if (!inReasoning) return
    process.stderr.write('\n')
    inReasoning = false
  }
  return {
    onReasoning: (text) => {
      if (!options.showReasoning) return
      inReasoning = true
      process.stderr.write(colorErr().dim(text))
    },
    onContent: (text) => {
      endReasoning()
      process.stdout.write(text)
      stdoutAtLineStart = text.endsWith('\n')
    },
    finish: () => {
      endReasoning()
      if (!stdoutAtLineStart) process.stdout.write('\n')
      stdoutAtLineStart = true
    },
  }
}

/** Prints the tool calls of an answer on stdout, one `name(arguments)` line each. */
export function printToolCalls(result: ChatTurnResult): void {
  for (const call of result.completion.choices[0]?.message.tool_calls ?? []) {
    process.stdout.write(`tool call ${call.id}: ${call.function.name}(${call.function.arguments})\n`)
  }
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(2)} s`

/**
 * `alpha-cloud · sim-pro · 24 prompt (8 cached) + 31 completion (12 reasoning) tokens ·
 * first token 0.41 s · 78.3 tokens/s`
 */
export function statsLine(result: ChatTurnResult): string {
  const parts: string[] = []
  // Endpoints without the platform's `provider` extension (e.g. the local gateway) name none.
  if (result.provider) parts.push(result.provider)
  if (result.completion.model) parts.push(result.completion.model)
  const u = result.usage
  if (u) {
    const cached = u.prompt_tokens_details?.cached_tokens ?? 0
    const reasoning = u.completion_tokens_details?.reasoning_tokens ?? 0
    parts.push(
      `${u.prompt_tokens} prompt (${cached} cached) + ${u.completion_tokens} completion (${reasoning} reasoning) tokens`,
    )
  } else {
    parts.push('no usage reported')
  }
  if (result.timing.first_token_ms !== undefined)
    parts.push(`first token ${seconds(result.timing.first_token_ms)}`)
  else parts.push(`took ${seconds(result.timing.total_ms)}`)
  if (result.timing.tokens_per_second !== undefined) parts.push(`${result.timing.tokens_per_second} tokens/s`)
  if (result.finishReason && result.finishReason !== 'stop') parts.push(`finish: ${result.finishReason}`)
  return parts.join(' · ')
}

/** Prints the stats line, dimmed, on stderr. */
export function printStats(result: ChatTurnResult): void {
  process.stderr.write(colorErr().dim(statsLine(result)) + '\n')
}

/** `3 turns · 120 prompt (40 cached) + 300 completion (0 reasoning) tokens` */
export function totalsLine(totals: UsageTotals): string {
  return (
    `${totals.turns} turn${totals.turns === 1 ? '' : 's'} · ${totals.prompt_tokens} prompt (${totals.cached_tokens} cached) + ` +
    `${totals.completion_tokens} completion (${totals.reasoning_tokens} reasoning) tokens`
  )
}
