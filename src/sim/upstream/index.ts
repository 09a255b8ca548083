/**
 * Simulator module of the vendor-style model upstreams the gateway routes to: OpenAI Responses,
 * Anthropic Messages and Gemini generateContent. (Chat completions lives in `../chat.ts`.)
 *
 * `HEAD /` answers 200 with no body: Claude Code sends it (no credentials) to warm up the
 * connection before its first model call.
 */
import type {SimModule} from '../context.js'
import {registerGemini} from './gemini.js'
import {registerMessages} from './messages.js'
import {registerResponses} from './responses.js'

export const upstreamModule: SimModule = {
  name: 'upstream',
  register(router, context) {
    router.add('HEAD', '/', ({res}) => {
      res.writeHead(200, {'content-length': '0'})
      res.end()
    })
    registerResponses(router, context)
    registerMessages(router, context)
    registerGemini(router, context)
  },
}
