import {Flags} from '@oclif/core'

import type {ChatMessage} from '../api/chat.js'
import {BaseCommand} from '../core/base-command.js'
import {GwError, InterruptedError, UpstreamError, UsageError} from '../core/errors.js'
import {warn} from '../core/output.js'
import type {ChatInput} from '../services/chat-request.js'
import {buildChatRequest, userMessage} from '../services/chat-request.js'
import {ChatSession} from '../services/chat-session.js'
import type {ChatTiming} from '../services/chat-stream.js'
import {readStdin} from '../cli/stdin.js'
import {chatClient, runChatTurn} from '../services/chat-stream.js'
import {getSetting} from '../store/settings.js'
import {printStats, printToolCalls, turnPrinter} from '../cli/chat-output.js'

const ROUTING = 'PROVIDER ROUTING'
const SAMPLING = 'REQUEST'

export default class Chat extends BaseCommand {
  static summary = 'Sends a chat completion and streams the answer, or opens a multi-turn chat.'
  static description =
    'Sends MESSAGE to {base_url}/chat/completions and prints the answer as it arrives. Text piped on stdin is appended ' +
    'to the message (or replaces a "-" argument). Reasoning is shown dimmed on stderr, followed by a stats line ' +
    '(provider, tokens, time to first token, tokens/s). Without a message on a terminal, or with --interactive, it ' +
    'opens a REPL with /model, /system, /clear, /save FILE and /exit; Ctrl-C cancels the reply in flight.'

  static examples = [
    '<%= config.bin %> chat --model sim-pro "Explain SSE in one sentence"',
    '$ git diff | <%= config.bin %> chat "review this"',
    '<%= config.bin %> chat --model sim-mini --only beta-ai,gamma-fast --sort latency "hi"',
    '<%= config.bin %> chat --model sim-reasoner --hide-reasoning --json "2+2?" | jq -r .choices[0].message.content',
    '<%= config.bin %> chat --interactive --model sim-pro --system "Be brief."',
  ]

  static strict = false
  // No declared args: oclif would read piped stdin into a missing arg; stdin is handled here.
  static args = {}
  static usage = ['chat [MESSAGE...] [FLAGS]']

  static flags = {
    model: Flags.string({
      char: 'm',
      description: 'Model name (default: setting chat.model / GWCTL_CHAT_MODEL).',
    }),
    system: Flags.string({char: 's', description: 'System prompt.'}),
    image: Flags.string({
      description: 'Image URL to attach (repeatable).',
      multiple: true,
      multipleNonGreedy: true,
      helpGroup: SAMPLING,
    }),
    video: Flags.string({
      description: 'Video URL to attach (repeatable).',
      multiple: true,
      multipleNonGreedy: true,
      helpGroup: SAMPLING,
    }),
    temperature: Flags.string({description: 'Sampling temperature, 0 to 2.', helpGroup: SAMPLING}),
    'top-p': Flags.string({description: 'Nucleus sampling, 0 to 1.', helpGroup: SAMPLING}),
    'top-k': Flags.string({description: 'Top-k sampling, an integer greater than 0.', helpGroup: SAMPLING}),
    'presence-penalty': Flags.string({description: 'Presence penalty, -2 to 2.', helpGroup: SAMPLING}),
    'max-tokens': Flags.string({
      description:
        'Maximum output tokens, sent as max_completion_tokens (use --param max_tokens=N for the older name).',
      helpGroup: SAMPLING,
    }),
    thinking: Flags.boolean({
      description: 'Switch thinking on or off (enable_thinking; only some models support it).',
      allowNo: true,
      helpGroup: SAMPLING,
    }),
    'json-object': Flags.boolean({
      description: 'Ask for a JSON object answer (response_format json_object).',
      helpGroup: SAMPLING,
    }),
    stream: Flags.boolean({
      description: 'Stream the answer (default); --no-stream waits for the whole answer.',
      allowNo: true,
      default: true,
      helpGroup: SAMPLING,
    }),
    timeout: Flags.string({
      description: 'Seconds to wait for the first token (extra_body.timeout).',
      helpGroup: SAMPLING,
    }),
    param: Flags.string({
      description: 'Extra request field key=value (repeatable; JSON values parsed, dotted keys nest).',
      multiple: true,
      multipleNonGreedy: true,
      helpGroup: SAMPLING,
    }),
    only: Flags.string({description: 'Allow only these providers (a,b).', helpGroup: ROUTING}),
    ignore: Flags.string({description: 'Never use these providers (a,b).', helpGroup: ROUTING}),
    order: Flags.string({description: 'Try providers in this order (a,b).', helpGroup: ROUTING}),
    sort: Flags.string({
      description:
        'Rank providers by these keys, first key first: input_price, output_price, throughput, latency, input_length.',
      helpGroup: ROUTING,
    }),
    'input-price-range': Flags.string({
      description: 'Input price MIN,MAX per 1M tokens.',
      helpGroup: ROUTING,
    }),
    'output-price-range': Flags.string({
      description: 'Output price MIN,MAX per 1M tokens.',
      helpGroup: ROUTING,
    }),
    'throughput-range': Flags.string({description: 'Throughput MIN,MAX in tokens/s.', helpGroup: ROUTING}),
    'latency-range': Flags.string({description: 'Latency MIN,MAX in seconds.', helpGroup: ROUTING}),
    'input-length-range': Flags.string({
      description: 'Maximum input length MIN,MAX (integers).',
      helpGroup: ROUTING,
    }),
    'prompt-length-filter': Flags.boolean({
      description: 'Filter providers by prompt length (default on; --no-prompt-length-filter turns it off).',
      allowNo: true,
      helpGroup: ROUTING,
    }),
    fallbacks: Flags.boolean({
      description:
        'Allow other providers when none fits (allow_fallbacks; server default: off with --only, else on).',
      allowNo: true,
      helpGroup: ROUTING,
    }),
    provider: Flags.string({
      description: 'Whole provider object as JSON; the routing flags above override its keys.',
      helpGroup: ROUTING,
    }),
    'hide-reasoning': Flags.boolean({description: 'Do not show reasoning content.'}),
    interactive: Flags.boolean({char: 'i', description: 'Open the multi-turn REPL.'}),
  }

  async run(): Promise<unknown> {
    const {argv, flags} = await this.parse(Chat)
    const words = argv as string[]
    const unknownFlag = words.find((w) => /^--?[a-zA-Z]/.test(w))
    if (unknownFlag) {
      throw new UsageError(`Unknown flag ${unknownFlag}.`, {
        code: 'invalid_flags',
        hint: 'See `gwctl chat --help`; quote a message that starts with "-".',
      })
    }
    const base: Omit<ChatInput, 'messages'> = {
      model: flags.model ?? getSetting('chat.model'),
      system: flags.system,
      temperature: flags.temperature,
      topP: flags['top-p'],
      topK: flags['top-k'],
      presencePenalty: flags['presence-penalty'],
      maxTokens: flags['max-tokens'],
      thinking: flags.thinking,
      jsonObject: flags['json-object'],
      stream: flags.stream,
      timeoutSeconds: flags.timeout,
      params: flags.param,
      onWarning: warnOnce(),
      provider: {
        json: flags.provider,
        only: flags.only,
        ignore: flags.ignore,
        order: flags.order,
        sort: flags.sort,
        inputPriceRange: flags['input-price-range'],
        outputPriceRange: flags['output-price-range'],
        throughputRange: flags['throughput-range'],
        latencyRange: flags['latency-range'],
        inputLengthRange: flags['input-length-range'],
        promptLengthFilter: flags['prompt-length-filter'],
        fallbacks: flags.fallbacks,
      },
    }
    const timeout = Number(flags.timeout)
    const headersTimeoutMs =
      Number.isFinite(timeout) && timeout > 0 ? Math.max(60_000, timeout * 1000 + 10_000) : undefined
    const images = flags.image ?? []
    const videos = flags.video ?? []

    const interactive = flags.interactive || (words.length === 0 && Boolean(process.stdin.isTTY))
    if (interactive) {
      if (this.jsonEnabled()) {
        throw new UsageError('--json cannot be used with the interactive chat.', {
          code: 'invalid_flags',
          hint: 'Use /save FILE inside the chat to keep the conversation as JSON.',
        })
      }
      if (words.includes('-')) {
        throw new UsageError('"-" (read stdin) cannot be used with the interactive chat.', {
          code: 'invalid_flags',
        })
      }
      const session = new ChatSession(base)
      const text = words.join(' ')
      const first = text || images.length || videos.length ? userMessage(text, images, videos) : undefined
      // Validate the options once before the prompt appears.
      session.request(first ?? {role: 'user', content: '.'})
      this.releaseSigint()
      const {runChatRepl} = await import('../cli/chat-repl.js')
      await runChatRepl({
        session,
        client: chatClient(),
        showReasoning: !flags['hide-reasoning'],
        headersTimeoutMs,
        firstMessage: first,
        signal: this.signal,
      })
      if (this.signal.aborted) throw new InterruptedError()
      return undefined
    }

    const message = await composeMessage(words, this.signal)
    const user: ChatMessage = userMessage(message, images, videos)
    const request = buildChatRequest({
      ...base,
      messages: message || images.length || videos.length ? [user] : [],
    })
    const client = chatClient()
    const json = this.jsonEnabled()
    const printer = turnPrinter({showReasoning: !flags['hide-reasoning'] && !json})
    const result = await runChatTurn(client, request, {
      signal: this.signal,
      headersTimeoutMs,
      onContent: json ? undefined : printer.onContent,
      onReasoning: json ? undefined : printer.onReasoning,
    })
    if (!json) {
      printer.finish()
      printToolCalls(result)
      if (result.usage || !result.error) printStats(result)
    }
    if (result.error) {
      const e = result.error
      if (!json || !(e instanceof UpstreamError)) throw e
      throw new UpstreamError(e.message, {
        code: e.code,
        status: e.status,
        hint: e.hint,
        details: {...e.details, provider: result.provider, partial_text: result.text},
      })
    }
    const output: Record<string, unknown> & {timing: ChatTiming} = {
      ...result.completion,
      timing: result.timing,
    }
    return output
  }
}

/** The message: arguments joined by spaces; stdin replaces "-", or is appended when piped. */
async function composeMessage(words: string[], signal: AbortSignal): Promise<string> {
  const dash = words.includes('-')
  const piped = !process.stdin.isTTY
  const stdin = dash || piped ? (await readPipedMessage(signal)).replace(/\s+$/, '') : ''
  if (dash) return words.map((w) => (w === '-' ? stdin : w)).join(' ')
  const text = words.join(' ')
  if (!stdin) return text
  return text ? `${text}\n\n${stdin}` : stdin
}

async function readPipedMessage(signal: AbortSignal): Promise<string> {
  try {
    return await readStdin(signal)
  } catch (error) {
    if (error instanceof GwError) throw error
    throw new UsageError(`stdin cannot be read: ${(error as Error).message}.`, {code: 'stdin_unreadable'})
  }
}

/** A warning printed once, though the interactive chat rebuilds the request every turn. */
function warnOnce(): (warning: string) => void {
  const said = new Set<string>()
  return (warning) => {
    if (said.has(warning)) return
    said.add(warning)
    warn(warning)
  }
}
