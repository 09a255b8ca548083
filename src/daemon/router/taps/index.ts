/** The usage tap of each protocol family (see ./tap.ts for what the counts mean). */
import type {Family} from '../../../store/schema.js'
import {ChatReader} from './chat.js'
import {GeminiReader} from './gemini.js'
import {MessagesReader} from './messages.js'
import {ResponsesReader} from './responses.js'
import type {UsageTap} from './tap.js'
import {Tap} from './tap.js'

export type {ToolCallFaults, Usage, UsageTap} from './tap.js'

/** A usage tap for an answer of `family`; `sse` when the answer is `text/event-stream`. */
export function createUsageTap(family: Family, sse: boolean): UsageTap {
  const reader =
    family === 'chat'
      ? new ChatReader()
      : family === 'responses'
        ? new ResponsesReader()
        : family === 'messages'
          ? new MessagesReader()
          : new GeminiReader()
  return new Tap(reader, sse)
}
