/**
 * Encrypted content of another provider or account in a Responses request passed through. OpenAI's
 * reasoning items (`rs_…`) carry `encrypted_content` that only the account that made it can read
 * (OpenAI key A, an Azure deployment, an OpenRouter key, a ChatGPT account: each its own). A Codex
 * conversation answered by one of them and continued on another, by a fallback of a policy with
 * two Responses targets or by `gwctl policies route`, is refused with a 400 on the next request,
 * and on every one after it, since the items stay in Codex's history:
 *
 * - OpenAI's API: `{"error":{"message":"The encrypted content gAAA...Rg== could not be verified.",
 *   "type":"invalid_request_error","param":null,"code":"invalid_encrypted_content"}}`;
 * - ChatGPT's backend: `The encrypted content for item rs_… could not be verified. Reason:
 *   Encrypted content could not be decrypted or parsed.` with `code: null`;
 * - a relay: the same words inside its own message, escaped.
 *
 * The request goes again at once to the same target without its encrypted reasoning items
 * ({@link withoutReasoningCiphertext}): the model loses its earlier reasoning, not the
 * conversation (what 9router #2667, bifrost #5892, opencodex #2269 and sub2api #999 do). Nothing is
 * learned: it is the conversation's, and every request of it that gets the refusal goes so. A
 * `compaction` item (`cmp_…`, the history OpenAI's remote compaction folded) and an `agent_message`
 * item's encrypted text cannot be left out without losing what they hold: a conversation that holds
 * one another account made is answered a 400 that says so ({@link foreignCiphertextRefusal}).
 */
import {parseJsonBytes} from '../../protocols/json-bytes.js'

/** A body's key of an encrypted value: a body without it has nothing another account encrypted. */
const ENCRYPTED_CONTENT = Buffer.from('"encrypted_content"')

/** Whether a Responses body holds an `encrypted_content` key (a byte search, for a 400 only). */
export const holdsEncryptedContent = (body: Buffer): boolean => body.indexOf(ENCRYPTED_CONTENT) !== -1

/**
 * Whether an upstream's error (its body's text) refuses encrypted content it cannot read: OpenAI's
 * code `invalid_encrypted_content`, or the words "The encrypted content … could not be verified"
 * ("… could not be decrypted or parsed") with `code: null` (ChatGPT's backend) or inside a relay's
 * message; "could not decrypt the provided encrypted_content" (GitHub Copilot's, openclaw #124465).
 */
export function refusesForeignCiphertext(errorText: string): boolean {
  return /invalid_encrypted_content|encrypted content[\s\S]{0,400}?could not be (?:verified|decrypted)|could not decrypt the provided encrypted_content/i.test(
    errorText,
  )
}

/** Whether such a refusal names a compaction item (`cmp_…`), which no stripping repairs. */
export const namesCompactionItem = (errorText: string): boolean => /\bcmp_[A-Za-z0-9]/.test(errorText)

type Item = Record<string, unknown>

/** A Responses body without the encrypted reasoning, and how many items it left out. */
export interface StrippedBody {
  body: Buffer
  /** Reasoning items left out (each held another account's ciphertext). */
  dropped: number
}

/**
 * A Responses body without the reasoning items of its `input` that carry `encrypted_content`;
 * every other item as it came. The whole item goes, not only its ciphertext: an item kept with its
 * id and summary alone is one OpenAI looks up by its id, which under `store: false` (Codex's) it
 * never kept and under another account it does not have ("Item with id 'rs_…' not found",
 * sub2api #3139 leaves them out for that), so it would be refused again. Undefined for a body that
 * is not JSON or holds no such item (sent so already: the refusal is about something else).
 */
export function withoutReasoningCiphertext(body: Buffer): StrippedBody | undefined {
  let json: unknown
  try {
    json = parseJsonBytes(body)
  } catch {
    return undefined
  }
  const request = json as {input?: unknown}
  if (!json || typeof json !== 'object' || !Array.isArray(request.input)) return undefined
  const input = (request.input as unknown[]).filter((item) => {
    const reasoning = item as Item | null
    return reasoning?.type !== 'reasoning' || reasoning.encrypted_content === undefined
  })
  const dropped = request.input.length - input.length
  if (dropped === 0) return undefined
  return {body: Buffer.from(JSON.stringify({...request, input})), dropped}
}

/** The log row's note of a request sent again so. */
export function strippedNote(provider: string, sent: StrippedBody): string {
  return `${provider} refused another account's encrypted reasoning: sent again without it (${sent.dropped} reasoning item${sent.dropped === 1 ? '' : 's'} left out)`
}

/** What encrypted content a body holds that cannot be left out. */
export type UnrepairableCiphertext = 'compaction' | 'agent_message'

/**
 * The item of a Responses body whose encrypted content cannot be left out: a `compaction` item
 * (`compaction_summary` in Codex's older name) with `encrypted_content`, or an `agent_message`
 * item with an `encrypted_content` part; undefined for a body with neither.
 */
export function unrepairableCiphertext(body: Buffer): UnrepairableCiphertext | undefined {
  if (!holdsEncryptedContent(body)) return undefined
  let json: unknown
  try {
    json = parseJsonBytes(body)
  } catch {
    return undefined
  }
  const input = (json as {input?: unknown} | null)?.input
  if (!Array.isArray(input)) return undefined
  for (const item of input as Array<Item | null>) {
    const type = item?.type
    if ((type === 'compaction' || type === 'compaction_summary') && item!.encrypted_content !== undefined)
      return 'compaction'
    if (
      type === 'agent_message' &&
      Array.isArray(item!.content) &&
      (item!.content as Array<Item | null>).some((p) => p?.type === 'encrypted_content')
    )
      return 'agent_message'
  }
  return undefined
}

/**
 * The client's 400 for a conversation that holds encrypted content another provider or account
 * made, which cannot be left out (in the words of the translation's refusal of a compaction item,
 * ../../protocols/responses.ts).
 */
export function foreignCiphertextRefusal(provider: string, held: UnrepairableCiphertext): string {
  const what =
    held === 'compaction'
      ? "a compaction item (the history OpenAI's remote compaction folded, encrypted so that only the provider and account that made it read it), which cannot be left out: the model would get the conversation without everything before it"
      : "an agent_message item (Codex's message between its agents) whose text is encrypted so that only the provider and account that made it read it, which cannot be left out: the sub-agent would run without its task"
  return `this conversation holds content encrypted by another provider or account, which ${provider} refused: ${what}. Start a new conversation, or route this one back to the provider (and account) that made it`
}
