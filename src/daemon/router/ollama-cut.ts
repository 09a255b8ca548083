/**
 * Ollama cuts a prompt longer than its context (`num_ctx`, `OLLAMA_CONTEXT_LENGTH`) without a
 * word: the answer is a 200, its start (the system prompt, the tools, the task) dropped, and the
 * input it reports (`prompt_eval_count`, the chat API's `prompt_tokens`, the Anthropic endpoint's
 * `input_tokens`) is what was kept (ollama/ollama #3839, #17427, #17889; research48 #4). Ollama's
 * default context is 4 096 tokens below 24 GiB of VRAM, 32 768 below 48 GiB; Claude Code's first
 * request alone is 12 000 to 25 000. An agent's model then forgets its tools and its task, and
 * the agent never compacts, because the input it is told stays small.
 *
 * What is kept has a shape, read from Ollama's source (docs/TRANSLATION.md, "A prompt Ollama cut
 * to its context"): since 0.30.11 (`contextShiftPromptLimit`, llm/llama_server.go) `num_ctx -
 * floor((num_ctx - num_keep) / 2)` tokens, `num_keep` 4 and one more where the tokenizer adds its
 * BOS, so `num_ctx / 2 + 2` or `+ 3`; from 0.30.0 to 0.30.10 `num_ctx - 1`; the CGO runners before
 * (runner/llamarunner, runner/ollamarunner) `num_ctx`. The answer's count is read against that
 * shape and the size of the request, which the gateway knows: a cut is a count of one of those
 * shapes, for a window of a round size, with a request over 6 bytes for each token reported (a
 * prompt of text, code and JSON runs 3 to 4.5). Only for an upstream that is Ollama by its name,
 * its host or its port (`mayBeOllama`), so that no other server's answer is misread; asked only
 * when both integer tests pass, so a request pays two integer tests at most.
 */
import type {ProviderConfig} from '../../store/schema.js'

/** Bytes of the request for each token reported, past which the prompt was clearly cut. */
const CUT_BYTES_PER_TOKEN = 6

/** A window a user or Ollama sets: 2 048 or more, a multiple of 1 024 (4096, 40960) or of 1 000 (64000). */
const roundWindow = (tokens: number): boolean =>
  tokens >= 2048 && (tokens % 1024 === 0 || tokens % 1000 === 0)

/**
 * The context (`num_ctx`) that an answer's reported prompt (`promptTokens`) says Ollama cut a
 * request of `sentBytes` to; undefined when the count has none of the cut's shapes, or the
 * request is not clearly larger than it.
 */
export function cutWindow(promptTokens: number, sentBytes: number): number | undefined {
  if (promptTokens < 1026 || sentBytes <= promptTokens * CUT_BYTES_PER_TOKEN) return undefined
  // 0.30.11 and later: half the window and 2 (`num_keep` 4) or 3 (and the BOS)
  if (roundWindow(2 * (promptTokens - 2))) return 2 * (promptTokens - 2)
  if (roundWindow(2 * (promptTokens - 3))) return 2 * (promptTokens - 3)
  // 0.30.0 to 0.30.10: the window but one; the CGO runners before: the window
  if (roundWindow(promptTokens + 1)) return promptTokens + 1
  if (roundWindow(promptTokens)) return promptTokens
  return undefined
}

/** The last count of a cut's shape each provider's model reported (bounded: a few models each). */
const lastCut = new Map<string, number>()

/**
 * Whether a count of a cut's shape (`kept`) is the second in a row of `provider`'s `model`: a prompt
 * cut to the context keeps the same count on every turn (the window's share), where a count of
 * that shape by chance does not come twice (about one count in 80 has one; an Ollama before PR
 * #16428, June 2026, reported only a turn's new tokens, which differ from turn to turn). The
 * first cut of a conversation goes unsaid; the next turn's says it.
 */
export function cutConfirmed(provider: string, model: string, kept: number): boolean {
  const key = `${provider}\u0000${model}`
  const before = lastCut.get(key)
  if (lastCut.size >= 1000 && before === undefined) lastCut.clear()
  lastCut.set(key, kept)
  return before === kept
}

/**
 * Whether `provider`'s `model` may be an Ollama that cuts prompts: a provider named `ollama…`, a
 * base URL whose host names it (`http://ollama:11434`, a container's) or on Ollama's port 11434.
 * Not Ollama's cloud (`ollama.com`, or a `…-cloud` model a local Ollama sends there): those
 * models run at their full length. A provider named otherwise on another port is not read (an
 * Ollama behind a proxy of its own: name the provider `ollama…`).
 */
export function mayBeOllama(provider: ProviderConfig, model: string): boolean {
  if (/[-:]cloud$/i.test(model)) return false
  const host = /^https?:\/\/([^/?#]+)/i.exec(provider.baseUrl)?.[1]?.toLowerCase() ?? ''
  if (/(?:^|\.)ollama\.com(?::\d+)?$/.test(host)) return false
  return /ollama/i.test(provider.name) || host.includes('ollama') || /:11434$/.test(host)
}

/**
 * Media in the request (base64 images or documents): Ollama does not cut a prompt with media
 * (`completionPromptForRequest` returns it whole), and their bytes are not the prompt's size.
 */
export const holdsMedia = (body: Buffer): boolean => body.includes(';base64,') || body.includes('"base64"')

/** The log row's words for a cut: what happened, and what to do. */
export const cutNote = (provider: string, window: number, kept: number, sentBytes: number): string =>
  `${provider} cut the prompt to its context (num_ctx ≈ ${window}) and dropped its start: it read ` +
  `${kept} tokens of a request of ${sentBytes.toLocaleString('en-US')} bytes (the model lost its ` +
  `system prompt and tools); raise OLLAMA_CONTEXT_LENGTH (64000 or more for an agent)`
