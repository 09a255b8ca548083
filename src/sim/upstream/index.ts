/**
 * Simulator module of the vendor-style model upstreams the gateway routes to: OpenAI Responses,
 * Anthropic Messages and Gemini generateContent. (Chat completions lives in `../chat.ts`.)
 */
import type {SimModule} from '../server.js'
import {registerGemini} from './gemini.js'
import {registerMessages} from './messages.js'
import {registerResponses} from './responses.js'

export const upstreamModule: SimModule = {
  name: 'upstream',
  register(router, context) {
    registerResponses(router, context)
    registerMessages(router, context)
    registerGemini(router, context)
  },
}
