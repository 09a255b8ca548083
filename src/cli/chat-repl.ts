/**
 * The multi-turn chat REPL on node:readline: streaming replies, slash commands, Ctrl-C cancels
 * the reply in flight (and, pressed twice at an empty prompt, leaves). Works on a terminal and on
 * piped input (one line per message or command).
 */
import {createInterface} from 'node:readline'

import type {PlatformClient} from '../api/http.js'
import type {GwError} from '../core/errors.js'
import {InterruptedError} from '../core/errors.js'
import {colorErr, err} from '../core/output.js'
import type {ChatMessage} from '../api/chat.js'
import type {ChatSession, UsageTotals} from '../services/chat-session.js'
import {parseReplLine} from '../services/chat-session.js'
import {runChatTurn} from '../services/chat-stream.js'
import {printStats, printToolCalls, totalsLine, turnPrinter} from './chat-output.js'

export interface ReplOptions {
  session: ChatSession
  client: PlatformClient
  showReasoning: boolean
  headersTimeoutMs?: number
  /** Sent as the first turn before the prompt appears. */
  firstMessage?: ChatMessage
  /** Aborted when the whole command must stop (SIGTERM). */
  signal: AbortSignal
}

const HELP = [
  '/model NAME    switch the model (without NAME: show it)',
  '/system TEXT   set the system prompt (without TEXT: remove it)',
  '/clear         forget the conversation so far',
  '/save FILE     write the conversation as JSON',
  '/exit          leave (also Ctrl-D, or Ctrl-C twice at an empty prompt)',
  '//text         send a message that starts with "/"',
]

function printError(error: GwError | Error): void {
  const c = colorErr()
  err(c.red(`Error: ${error.message}`))
  const hint = (error as GwError).hint
  if (hint) err(c.dim(hint))
}

/** Runs the REPL until /exit, end of input, or the command's signal; returns the summed usage. */
export async function runChatRepl(options: ReplOptions): Promise<UsageTotals> {
  const {session, client} = options
  const tty = Boolean(process.stdin.isTTY)
  const rl = createInterface({input: process.stdin, output: process.stderr, terminal: tty})
  // Taken now, so lines (and the end of piped input) that arrive during the first turn are queued.
  const lines = rl[Symbol.asyncIterator]()
  const c = colorErr()
  rl.setPrompt(c.bold('> '))
  let turn: AbortController | undefined
  let lastIdleInterrupt = 0

  const interrupt = (): void => {
    if (turn) {
      turn.abort(new InterruptedError('Reply cancelled.'))
      return
    }
    if (rl.line) {
      // Clear what was typed, like a shell.
      rl.write(null, {ctrl: true, name: 'u'})
      return
    }
    const now = Date.now()
    if (now - lastIdleInterrupt < 2000) {
      rl.close()
      return
    }
    lastIdleInterrupt = now
    err(c.dim('\n(Press Ctrl-C again or type /exit to leave.)'))
    rl.prompt()
  }
  const stop = (): void => {
    turn?.abort(new InterruptedError())
    rl.close()
  }
  rl.on('SIGINT', interrupt)
  process.on('SIGINT', interrupt)
  options.signal.addEventListener('abort', stop, {once: true})

  /** The prompt is shown and nothing typed after it ended its line (Ctrl-D, Ctrl-C twice). */
  let atPrompt = false
  const prompt = (): void => {
    if (!tty) return
    rl.prompt()
    atPrompt = true
  }

  const send = async (user: ChatMessage): Promise<void> => {
    let request
    try {
      request = session.request(user)
    } catch (error) {
      printError(error as Error)
      return
    }
    const printer = turnPrinter({showReasoning: options.showReasoning})
    turn = new AbortController()
    try {
      const result = await runChatTurn(client, request, {
        signal: turn.signal,
        headersTimeoutMs: options.headersTimeoutMs,
        onContent: printer.onContent,
        onReasoning: printer.onReasoning,
      })
      printer.finish()
      printToolCalls(result)
      if (result.error instanceof InterruptedError) err(c.dim('(reply cancelled)'))
      else if (result.error) printError(result.error)
      if (result.usage || !result.error) printStats(result)
      session.record(user, result)
    } catch (error) {
      printer.finish()
      if (error instanceof InterruptedError) err(c.dim('(request cancelled)'))
      else printError(error as Error)
      session.record(user, undefined)
    } finally {
      turn = undefined
    }
  }

  if (tty) {
    err(
      c.dim(
        `Chat with ${session.model ?? '(no model)'} at ${client.baseUrl}. /help for commands; /exit, Ctrl-D or Ctrl-C twice to leave.`,
      ),
    )
  }
  try {
    if (options.firstMessage) await send(options.firstMessage)
    prompt()
    for (;;) {
      const next = await lines.next()
      if (next.done) break
      atPrompt = false
      const command = parseReplLine(next.value as string)
      switch (command.kind) {
        case 'empty':
          break
        case 'message':
          await send({role: 'user', content: command.text})
          break
        case 'model':
          if (command.name) session.model = command.name
          err(c.dim(`model: ${session.model ?? '(none)'}`))
          break
        case 'system':
          session.system = command.text
          err(c.dim(command.text ? 'System prompt set.' : 'System prompt removed.'))
          break
        case 'clear':
          session.clear()
          err(c.dim('Conversation cleared.'))
          break
        case 'save':
          try {
            err(c.dim(`Saved to ${await session.save(command.file)}.`))
          } catch (error) {
            printError(error as Error)
          }
          break
        case 'help':
          for (const help of HELP) err(help)
          break
        case 'unknown':
          printError(new Error(`Unknown command /${command.name}; /help lists the commands.`))
          break
        case 'exit':
          rl.close()
          break
      }
      if (command.kind === 'exit' || options.signal.aborted) break
      prompt()
    }
  } finally {
    rl.close()
    process.off('SIGINT', interrupt)
    options.signal.removeEventListener('abort', stop)
  }
  // left at the prompt: the summary goes on a line of its own, not after "> "
  if (atPrompt) err('')
  err(c.dim(`Session: ${totalsLine(session.totals)}`))
  return session.totals
}
