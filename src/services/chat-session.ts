/**
 * The state of a multi-turn chat (the REPL): model, system prompt, history and summed usage, and
 * the parsing of its slash commands. No terminal I/O here.
 */
import {writeFile} from 'node:fs/promises'
import {resolve} from 'node:path'

import type {ChatMessage, ChatRequest} from '../api/chat.js'
import {UsageError} from '../core/errors.js'
import type {ChatInput} from './chat-request.js'
import {buildChatRequest} from './chat-request.js'
import type {ChatTurnResult} from './chat-stream.js'

export interface UsageTotals {
  turns: number
  prompt_tokens: number
  completion_tokens: number
  total_tokens: number
  cached_tokens: number
  reasoning_tokens: number
}

export type ReplCommand =
  | {kind: 'message'; text: string}
  | {kind: 'model'; name?: string}
  | {kind: 'system'; text?: string}
  | {kind: 'clear'}
  | {kind: 'save'; file?: string}
  | {kind: 'help'}
  | {kind: 'exit'}
  | {kind: 'empty'}
  | {kind: 'unknown'; name: string}

/** Reads one REPL line: `/model NAME`, `/system TEXT`, `/clear`, `/save FILE`, `/exit`, or a message. */
export function parseReplLine(line: string): ReplCommand {
  const trimmed = line.trim()
  if (!trimmed) return {kind: 'empty'}
  // `//text` sends a message that starts with a slash.
  if (trimmed.startsWith('//')) return {kind: 'message', text: trimmed.slice(1)}
  if (!trimmed.startsWith('/')) return {kind: 'message', text: line}
  const [, name, rest = ''] = /^\/(\S+)\s*([\s\S]*)$/.exec(trimmed) ?? []
  const arg = rest.trim() || undefined
  switch (name) {
    case 'model':
      return {kind: 'model', name: arg}
    case 'system':
      return {kind: 'system', text: arg}
    case 'clear':
      return {kind: 'clear'}
    case 'save':
      return {kind: 'save', file: arg}
    case 'help':
    case '?':
      return {kind: 'help'}
    case 'exit':
    case 'quit':
      return {kind: 'exit'}
    default:
      return {kind: 'unknown', name: name ?? trimmed}
  }
}

/** One conversation. `base` holds every request option except the messages. */
export class ChatSession {
  model?: string
  system?: string
  readonly messages: ChatMessage[] = []
  readonly totals: UsageTotals = {
    turns: 0,
    prompt_tokens: 0,
    completion_tokens: 0,
    total_tokens: 0,
    cached_tokens: 0,
    reasoning_tokens: 0,
  }

  constructor(private readonly base: Omit<ChatInput, 'messages'>) {
    this.model = base.model
    this.system = base.system
  }

  /** The request for the next user message (history included); validates like a one-shot chat. */
  request(user: ChatMessage): ChatRequest {
    return buildChatRequest({
      ...this.base,
      model: this.model,
      system: this.system,
      messages: [...this.messages, user],
    })
  }

  /**
   * Records a turn. A turn that produced text stays in the history (even when cut short, since
   * that is what the user saw); one that produced nothing is dropped, so it can simply be retried.
   */
  record(user: ChatMessage, result: ChatTurnResult | undefined): void {
    if (result?.usage) {
      const u = result.usage
      this.totals.prompt_tokens += u.prompt_tokens ?? 0
      this.totals.completion_tokens += u.completion_tokens ?? 0
      this.totals.total_tokens += u.total_tokens ?? 0
      this.totals.cached_tokens += u.prompt_tokens_details?.cached_tokens ?? 0
      this.totals.reasoning_tokens += u.completion_tokens_details?.reasoning_tokens ?? 0
    }
    const message = result?.completion.choices[0]?.message
    if (!result || (!result.text && !message?.tool_calls?.length)) return
    this.totals.turns++
    const reply: ChatMessage = {role: 'assistant', content: result.text}
    if (message?.tool_calls?.length) reply.tool_calls = message.tool_calls
    this.messages.push(user, reply)
  }

  clear(): void {
    this.messages.length = 0
  }

  /** The conversation as a JSON document. */
  toJSON(): {model?: string; system?: string; messages: ChatMessage[]; usage: UsageTotals} {
    const messages: ChatMessage[] = this.system
      ? [{role: 'system', content: this.system}, ...this.messages]
      : [...this.messages]
    return {model: this.model, system: this.system, messages, usage: {...this.totals}}
  }

  /** Writes the conversation as JSON to `file`; returns the absolute path. */
  async save(file: string | undefined): Promise<string> {
    if (!file) throw new UsageError('/save needs a file name, e.g. /save chat.json', {code: 'missing_file'})
    const path = resolve(file)
    await writeFile(path, JSON.stringify(this.toJSON(), null, 2) + '\n')
    return path
  }
}
