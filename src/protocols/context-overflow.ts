/**
 * A request past the model's context window, as each vendor refuses it and as each agent
 * recognizes it. Claude Code compacts its conversation and tries again when its API says "prompt
 * is too long: N tokens > M maximum" (its reactive compaction reads both numbers to know how much
 * to drop); Codex recognizes the Responses API's `context_length_exceeded`; a chat client
 * OpenAI's own words and code. Through a translating proxy the agent gets another vendor's words
 * instead ("This model's maximum context length is 102400 tokens. However, you requested 107837
 * tokens"), takes the refusal for any other 400, and the session stops: claude-code-router #1292,
 * #405 and #252, free-claude-code #263. The translated route says it in the entrance's words,
 * with the upstream's own message after them.
 */
import type {Family} from './ir.js'

/** What an upstream said of its context window: the request's prompt tokens and the window, where it said. */
export interface ContextOverflow {
  inputTokens?: number
  limit?: number
  /**
   * The prompt fits, the room asked for the completion (`max_tokens`, or the server's default) does
   * not: said to a Messages client in Anthropic's own words for it ("input length and `max_tokens`
   * exceed context limit: P + C > L"), which Claude Code handles as "prompt is too long" (its
   * code tests for both); to the other entrances the upstream's error goes as it came.
   */
  completionTokens?: number
}

/**
 * Words an error about a prompt past the context window has (a cheap test before the reading;
 * DashScope's "Range of input length should be [1, 129024]" has none of the others).
 */
export const MAYBE_OVERFLOW = /context|too long|token|input length/i

const num = (s: string | undefined): number | undefined => (s === undefined ? undefined : Number(s))

/**
 * The context overflow an upstream's error states, from its message (`message`) and its whole
 * error body (`raw`: llama.cpp puts the counts beside the message, OpenAI the code); undefined for
 * any other error. A refusal of the completion's part only (the prompt fits; `max_tokens` too
 * large) is no overflow: the adaptations drop `max_tokens` for it.
 */
export function readContextOverflow(message: string, raw = ''): ContextOverflow | undefined {
  // OpenAI, DeepSeek, vLLM, OpenRouter: "maximum context length is 102400 tokens. However, you
  // requested 107837 tokens (99645 in the messages, 8192 in the completion)"; "... your messages
  // resulted in 9000 tokens"; vLLM's newer "... and your request has 40000 input tokens"
  let m =
    /maximum context length is (\d+) tokens\b[^]*?(?:requested|resulted in|request has)\s+(?:about\s+)?(\d+)\s+(?:input\s+)?tokens/i.exec(
      message,
    )
  if (m) {
    const limit = Number(m[1])
    const total = Number(m[2])
    let input = total
    const messages = /\((\d+) in the messages/i.exec(message)
    const output = /(\d+) (?:in the (?:completion|output))\)/i.exec(message)
    if (messages) input = Number(messages[1])
    else if (output) input -= Number(output[1])
    if (input > limit) return {inputTokens: input, limit}
    // the prompt fits and the completion's room does not (the translation learns `max_tokens`
    // away for it first); vLLM's "'max_tokens' is too large: 32000. ... your request has 1000
    // input tokens" names no completion's part: nothing to say of it
    return total > limit && input < total
      ? {inputTokens: input, limit, completionTokens: total - input}
      : undefined
  }
  // SGLang: "Requested token count exceeds the model's maximum context length of 131072 tokens.
  // You requested a total of 71897 tokens: 7897 tokens from the input messages and 64000 tokens
  // for the completion."
  m =
    /maximum context length of (\d+) tokens[^]*?total of (\d+) tokens:\s*(\d+) tokens from the input messages and (\d+) tokens for the completion/i.exec(
      message,
    )
  if (m) {
    const [limit, input, completion] = [Number(m[1]), Number(m[3]), Number(m[4])]
    if (input > limit) return {inputTokens: input, limit}
    return input + completion > limit ? {inputTokens: input, limit, completionTokens: completion} : undefined
  }
  // Cerebras (and Hugging Face's router in front of it), its error body unwrapped, with `code:
  // context_length_exceeded`: "Please reduce the length of the messages or completion. Current
  // length is 202427 while limit is 131072" (cline #5140, opencode #1551): its count is read as the
  // prompt's (the cases seen are past the window by far more than any completion's room, and
  // Claude Code compacts by the gap)
  m = /current length is (\d+) while limit is (\d+)/i.exec(message)
  if (m) return {inputTokens: num(m[1]), limit: num(m[2])}
  // Anthropic: "prompt is too long: 208000 tokens > 200000 maximum"
  m = /prompt is too long:?\s*(\d+)\s*tokens?\s*>\s*(\d+)/i.exec(message)
  if (m) return {inputTokens: num(m[1]), limit: num(m[2])}
  // Anthropic: "input length and `max_tokens` exceed context limit: 196655 + 21333 > 200000":
  // the input alone past the window, or the completion's room
  m = /input length and `?max_tokens`? exceed context limit:\s*(\d+)\s*\+\s*(\d+)\s*>\s*(\d+)/i.exec(message)
  if (m) {
    const [input, completion, limit] = [Number(m[1]), Number(m[2]), Number(m[3])]
    return input > limit
      ? {inputTokens: input, limit}
      : {inputTokens: input, limit, completionTokens: completion}
  }
  // Gemini: "The input token count (1048577) exceeds the maximum number of tokens allowed (1048576)."
  m =
    /input token count(?:\s*\((\d+)\))? exceeds the maximum number of tokens allowed(?:\s*\((\d+)\))?/i.exec(
      message,
    )
  if (m) return {inputTokens: num(m[1]), limit: num(m[2])}
  // NVIDIA NIM and others: "The input (345516 tokens) is longer than the model's context length (262144 tokens)."
  m = /input \((\d+) tokens\) is longer than the model's context length \((\d+) tokens\)/i.exec(message)
  if (m) return {inputTokens: num(m[1]), limit: num(m[2])}
  // Moonshot (Kimi): "Your request exceeded model token limit: 262144 (requested: 270000)"
  m = /exceeded model token limit:?\s*(\d+)(?:\s*\(requested:\s*(\d+)\))?/i.exec(message)
  if (m) return {inputTokens: num(m[2]), limit: num(m[1])}
  // xAI: "This model's maximum prompt length is 131072 but the request contains 537812 tokens."
  m = /maximum prompt length is (\d+) but the request contains (\d+) tokens/i.exec(message)
  if (m) return {inputTokens: num(m[2]), limit: num(m[1])}
  // Mistral: "Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 maximum context length"
  m = /prompt contains (\d+) tokens[^]*?too large for model with (\d+) maximum context length/i.exec(message)
  if (m) return {inputTokens: num(m[1]), limit: num(m[2])}
  // vLLM's engine (and Xinference in front of it, as a 500): "The decoder prompt (length 66501) is
  // longer than the maximum model length of 65536. Make sure that `max_model_len` is no smaller
  // than the number of text tokens."
  m = /decoder prompt \(length (\d+)\) is longer than the maximum model length of (\d+)/i.exec(message)
  if (m) return {inputTokens: num(m[1]), limit: num(m[2])}
  // LM Studio: "Trying to keep the first 111490 tokens when context the overflows. However, the
  // model is loaded with context length of only 32768 tokens, which is not enough." (older: "when
  // context overflows ... with a context length of only"); its older "The number of tokens to keep
  // from the initial prompt is greater than the context length (n_keep: 13055>= n_ctx: 4096)"
  m =
    /keep the first (\d+) tokens when context (?:the )?overflows[^]*?context length of only (\d+) tokens/i.exec(
      message,
    )
  if (m) return {inputTokens: num(m[1]), limit: num(m[2])}
  m =
    /number of tokens to keep from the initial prompt is greater than the context length(?:\s*\(n_keep:\s*(\d+)\s*>=?\s*n_ctx:\s*(\d+)\))?/i.exec(
      message,
    )
  if (m) return {inputTokens: num(m[1]), limit: num(m[2])}
  // LM Studio 0.4.21 and later: "Input does not fit in context length. The input has 31430 tokens,
  // but the context length only supports 30000 tokens." (lmstudio-bug-tracker #2322)
  m = /input has (\d+) tokens, but the context length only supports (\d+) tokens/i.exec(message)
  if (m) return {inputTokens: num(m[1]), limit: num(m[2])}
  // DashScope (Qwen on Model Studio): "<400> InternalError.Algo.InvalidParameter: Range of input
  // length should be [1, 129024]", the most input tokens the model takes and nothing of the request's
  m = /range of input length should be \[1,\s*(\d+)\]/i.exec(message)
  if (m) return {limit: num(m[1])}
  // TGI (Hugging Face endpoints): "`inputs` tokens + `max_new_tokens` must be <= 32769. Given: 40000
  // `inputs` tokens and 8192 `max_new_tokens`": the input alone past it, or the completion's room;
  // "`inputs` must have less than 4096 tokens. Given: 5000"
  m =
    /`?inputs`? tokens \+ `?max_new_tokens`? must be <= (\d+)\. Given: (\d+) `?inputs`? tokens and (\d+) `?max_new_tokens`?/i.exec(
      message,
    )
  if (m) {
    const [limit, input, completion] = [Number(m[1]), Number(m[2]), Number(m[3])]
    return input > limit
      ? {inputTokens: input, limit}
      : {inputTokens: input, limit, completionTokens: completion}
  }
  m = /`?inputs`? must have less than (\d+) tokens\. Given: (\d+)/i.exec(message)
  if (m) return {inputTokens: num(m[2]), limit: num(m[1])}
  // llama.cpp: "the request exceeds the available context size, try increasing it", the counts beside it;
  // its newer server: "request (9000 tokens) exceeds the available context size (8192 tokens), try increasing it"
  if (/exceeds the available context size/i.test(message)) {
    m = /request \((\d+) tokens\) exceeds the available context size \((\d+) tokens\)/i.exec(message)
    if (m) return {inputTokens: num(m[1]), limit: num(m[2])}
    const n = (key: string) => num(new RegExp(`"${key}"\\s*:\\s*(\\d+)`).exec(raw)?.[1])
    return {inputTokens: n('n_prompt_tokens'), limit: n('n_ctx')}
  }
  // the code OpenAI and others set, or the words of the rest (Zhipu 1261 "Prompt exceeds max length",
  // MiniMax's "invalid params, context window exceeds limit (2013)", Bedrock's "Input is too long
  // for requested model.", Ollama's with its context shift off, a DeepSeek-family model: "the
  // prompt is longer than the context length currently available to the model"; LM Studio's MLX
  // engine's and llama.cpp's 500 "Context size has been exceeded.", no counts: relay.ts OVERFLOW_500)
  if (
    /"code"\s*:\s*"context_length_exceeded"/.test(raw) ||
    /context[_ ]length[_ ]exceeded|exceeds? (?:the )?(?:model'?s? )?(?:maximum )?context (?:window|length)|context window (?:is )?exceeded|context window exceeds limit|prompt exceeds max length|prompt (?:is )?too long|prompt is longer than the context length|input is too long for requested model|context size has been exceeded|input does not fit in context length/i.test(
      message,
    )
  )
    return {}
  return undefined
}

/**
 * The entrance's own refusal of a prompt past the context window (`said`: the upstream's words,
 * kept after them): Anthropic's "prompt is too long: N tokens > M maximum" (what Claude Code's
 * reactive compaction reads), OpenAI's chat and Responses wording with `code:
 * context_length_exceeded` (what Codex reads), Gemini's input token count.
 */
export function contextOverflowError(
  family: Family,
  overflow: ContextOverflow,
  said: string,
): {message: string; code?: string} {
  const {inputTokens: input, limit, completionTokens: completion} = overflow
  const known = input !== undefined && limit !== undefined
  // the completion's room: Anthropic's own words for it (the caller says it to Messages clients only)
  if (completion !== undefined && known)
    return {
      message: `input length and \`max_tokens\` exceed context limit: ${input} + ${completion} > ${limit}, decrease input length or \`max_tokens\` and try again (${said})`,
    }
  switch (family) {
    case 'messages':
      return {
        message: known
          ? `prompt is too long: ${input} tokens > ${limit} maximum (${said})`
          : `prompt is too long: ${said}`,
      }
    case 'gemini':
      return {
        message: `The input token count${input !== undefined ? ` (${input})` : ''} exceeds the maximum number of tokens allowed${limit !== undefined ? ` (${limit})` : ''}. (${said})`,
      }
    case 'responses':
      return {
        message: `Your input exceeds the context window of this model${limit !== undefined ? ` (${limit} tokens${input !== undefined ? `; this request has ${input}` : ''})` : ''}. Please adjust your input and try again. (${said})`,
        code: 'context_length_exceeded',
      }
    default:
      return {
        message: known
          ? `This model's maximum context length is ${limit} tokens. However, your messages resulted in ${input} tokens. Please reduce the length of the messages. (${said})`
          : `This model's maximum context length was exceeded. Please reduce the length of the messages. (${said})`,
        code: 'context_length_exceeded',
      }
  }
}

/**
 * Whether `overflow` is said to a client of `family` at all: a refusal of the completion's room
 * only to a Messages client (Claude Code handles it as "prompt is too long"; the other agents
 * have no words for it).
 */
export const saysOverflow = (family: Family, overflow: ContextOverflow): boolean =>
  overflow.completionTokens === undefined || family === 'messages'

/**
 * Whether an error body already says it in `family`'s own words for a prompt past the window
 * (Anthropic's "prompt is too long" or "exceed context limit", OpenAI's `context_length_exceeded`,
 * Gemini's input token count): left as it is.
 */
export function inEntranceWords(family: Family, text: string): boolean {
  if (family === 'messages') return /prompt is too long|exceed context limit/i.test(text)
  if (family === 'gemini') return /input token count/i.test(text)
  return /context_length_exceeded/.test(text)
}

/**
 * An upstream's error said where no status says it (a stream's error event, a 200 whose body is an
 * error alone) that states a prompt past the context window (`said`: its message), in the words
 * of the client's protocol, with the window it states; undefined for any other error, and for
 * words the client's protocol already has. A cheap word test first: most errors are not one.
 */
export function saidOverflow(
  family: Family,
  said: string,
  raw = said,
): {message: string; code?: string; window: number | undefined} | undefined {
  if (!MAYBE_OVERFLOW.test(said) || inEntranceWords(family, said)) return undefined
  // (`raw`: the whole error, whose fields beside the words may state the numbers: llama.cpp's
  // `n_prompt_tokens` and `n_ctx`)
  const overflow = readContextOverflow(said, raw)
  if (!overflow || !saysOverflow(family, overflow)) return undefined
  const words = contextOverflowError(family, overflow, said)
  return {message: words.message, code: words.code, window: overflow.limit}
}
