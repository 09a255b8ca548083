import {adjacentOutputs} from '../../protocols/adjacent-outputs.js'
import {withInputMapped} from '../../protocols/responses-input.js'
import type {PreservedThinking} from '../../protocols/ir.js'
import {edited, topMembers} from '../../protocols/json-spans.js'

/**
 * Codex on a Responses server that is not OpenAI's. Codex 0.17x sends OpenAI's newest tool shapes
 * on every request: its sub-agent and MCP tools in `namespace` tools, `exec` and `apply_patch` as
 * `custom` (free-form, grammar) tools, and on the models of its catalog marked "Responses Lite"
 * every tool in an `additional_tools` input item. The Responses servers people run models on take
 * function tools only, and each fails its own way (docs/TRANSLATION.md, "Codex on a Responses
 * server that is not OpenAI's"):
 *
 * - vLLM: a 400 for a namespace (a pydantic `literal_error`, "tool type namespace not supported"
 *   on gpt-oss), a 400 or 500 for the `additional_tools` item, and where it takes namespaces, calls
 *   named `ns__tool` that Codex cannot run;
 * - llama.cpp: "'type' of tool must be 'function'";
 * - Ollama: a 500 "Unsupported tool type", or calls named `ns.tool` without their namespace;
 * - oMLX: the namespaces' tools silently dropped.
 *
 * Such a request goes to such a server through the Responses codecs (`plainTools`,
 * ../../protocols/responses-request.ts): every tool a plain function, and the calls back to Codex
 * in their namespace or as custom tool calls. Proactively to a server on this machine or the local
 * network (which is never OpenAI's), and to any other server once it refused one of the shapes
 * (learned, as other refusals are: ./adaptations.ts). A provider's `plainTools` setting overrides
 * that guess where it is wrong: `always` for a remote server that drops or mangles the shapes
 * without refusing them, `never` for a local relay in front of OpenAI (./proxy.ts, `plainWanted`).
 *
 * A hosted server that honours Codex's Lite header may refuse the Lite request as such (Azure
 * OpenAI, a model that is not Lite: {@link refusesCodexLite}): learned too, and its Lite requests go
 * as Codex sends them for a model that is not Lite ({@link withoutLiteItem}), shapes kept. Neither
 * that request nor a plain one carries Codex's `x-openai-internal-codex-*` headers (./headers.ts).
 */

/** Byte needles of the shapes: a body holding none of them is passed through as it came. */
const NAMESPACE = Buffer.from('"namespace"')
const CUSTOM = Buffer.from('"custom"')
const ADDITIONAL_TOOLS = Buffer.from('"additional_tools"')

/**
 * Whether a Responses body holds a namespace, a custom tool or an `additional_tools` item (or
 * those words). Codex writes `tools` after its whole history and the item first in `input`: the
 * tools' words are searched from the end, the item's from the start (each search of a 256 KB body
 * that finds nothing costs about 100 µs on 2 shared cores; found in Codex's tools, about 20).
 */
export function holdsOpenAiToolShapes(body: Buffer): boolean {
  return (
    body.lastIndexOf(NAMESPACE) !== -1 ||
    body.lastIndexOf(CUSTOM) !== -1 ||
    body.indexOf(ADDITIONAL_TOOLS) !== -1
  )
}

/**
 * The first of an answer's plain function calls (`called`: their names, none in a namespace) that
 * names one of Codex's custom tools, or a namespaced tool of the request by its bare name or the
 * names servers give it (`ns__tool`, `ns.tool`): a server that took the shapes without a word and
 * does not implement them (MiniMax M3's Responses API: router-for-me/CLIProxyAPI #5753; a DeepSeek
 * V4 server, antirez/ds4 #745), whose call Codex refuses ("tool apply_patch invoked with
 * incompatible payload", "unsupported call"). `body`: the request as sent. Undefined when none does.
 */
export function calledAsFunction(body: Buffer, called: readonly string[]): string | undefined {
  if (called.length === 0 || !holdsOpenAiToolShapes(body)) return undefined
  // only the request's `tools` array is parsed, unless the body holds an `additional_tools` item
  // (Codex's Lite request): then the whole body
  const lite = body.indexOf(ADDITIONAL_TOOLS) !== -1
  let json: {tools?: unknown; input?: unknown}
  try {
    const tools = lite ? undefined : firstArray(body, TOOLS_KEY)
    json = tools !== undefined ? {tools} : (JSON.parse(body.toString('utf8')) as typeof json)
  } catch {
    return undefined
  }
  const names = new Set<string>()
  const read = (tools: unknown): void => {
    if (!Array.isArray(tools)) return
    for (const t of tools as Array<{type?: unknown; name?: unknown; tools?: unknown}>) {
      if (t?.type === 'custom' && typeof t.name === 'string') names.add(t.name)
      else if (t?.type === 'namespace' && typeof t.name === 'string' && Array.isArray(t.tools))
        for (const inner of t.tools as Array<{name?: unknown}>)
          if (typeof inner?.name === 'string')
            for (const n of [inner.name, `${t.name}__${inner.name}`, `${t.name}.${inner.name}`]) names.add(n)
    }
  }
  read(json.tools)
  if (Array.isArray(json.input))
    for (const item of json.input as Array<{type?: unknown; tools?: unknown}>)
      if (item?.type === 'additional_tools') read(item.tools)
  // (a plain function of the same name as a custom or namespaced one: Codex runs it as it came)
  if (Array.isArray(json.tools))
    for (const t of json.tools as Array<{type?: unknown; name?: unknown}>)
      if (t?.type === 'function' && typeof t.name === 'string') names.delete(t.name)
  return called.find((name) => names.has(name))
}

const TOOLS_KEY = Buffer.from('"tools":[')

/**
 * The JSON array that follows the first `key` (`"name":[`) of `body`, parsed; undefined when there
 * is none, it does not end where its brackets say, or the key comes again after it (then the
 * caller reads the whole body). Its end is found by counting brackets outside strings: the array's
 * bytes only are read twice. (The first: a namespace's own `tools` come inside the request's; a key
 * in a string is escaped.)
 */
function firstArray(body: Buffer, key: Buffer): unknown[] | undefined {
  const at = body.indexOf(key)
  if (at === -1) return undefined
  const end = arrayEnd(body, at + key.length - 1)
  // another such key after it: the first was an input item's (a tool search's output, an MCP
  // listing), the request's own comes later: the caller reads the whole body
  if (end === -1 || body.indexOf(key, end) !== -1) return undefined
  const parsed: unknown = JSON.parse(body.toString('utf8', at + key.length - 1, end + 1))
  return Array.isArray(parsed) ? parsed : undefined
}

/** Where the JSON array or object that opens at `start` closes (brackets outside strings); -1 if it does not. */
function arrayEnd(body: Buffer, start: number): number {
  let depth = 0
  let inString = false
  for (let i = start; i < body.length; i++) {
    const c = body[i]
    if (inString) {
      if (c === 0x5c) i++
      else if (c === 0x22) inString = false
    } else if (c === 0x22) inString = true
    else if (c === 0x5b || c === 0x7b) depth++
    else if ((c === 0x5d || c === 0x7d) && --depth === 0) return i
  }
  return -1
}

const AGENT_MESSAGE = Buffer.from('"agent_message"')

/**
 * Whether a Responses body holds Codex's `agent_message` item (or the word): multi-agent v2's task
 * for a sub-agent, and a sub-agent's report to its parent. Only OpenAI's Responses API takes the
 * item: Ollama refuses it (400 `unknown input item type: "agent_message"`), xAI too (a 422, "did not
 * match any variant of untagged enum"), a relay with "Invalid input type 'agent_message'", and
 * DeepSeek drops it without a word, so the sub-agent runs with no task. Searched from the start,
 * where a sub-agent's task is; a body without it is searched whole (21 µs for 64 KB, 73 µs for 256 KB: bench/README.md, stop 45).
 */
export function holdsAgentMessage(body: Buffer): boolean {
  return body.indexOf(AGENT_MESSAGE) !== -1
}

/**
 * Whether `baseUrl` is a host that serves OpenAI's own Responses API, which reads Codex's
 * `agent_message` items: OpenAI's API, ChatGPT's backend (Codex signed in with ChatGPT), Azure
 * OpenAI. Any other Responses server gets the items as user messages ({@link holdsAgentMessage}).
 */
export function isOpenAiResponsesHost(baseUrl: string): boolean {
  return /^https:\/\/(?:api\.openai\.com|chatgpt\.com)(?:[:/?#]|$)/i.test(baseUrl) || isAzureHost(baseUrl)
}

/**
 * The simulator's quirks that stand for a Responses server which is not OpenAI's (docs/SIMULATOR.md):
 * `adjacent-outputs` and `reasoning-text`, DeepSeek's `/v1/responses`; `plain-tools`, vLLM's,
 * llama.cpp's and Ollama's; `custom-as-function`, MiniMax's; `xai-params`, xAI's; `ollama-effort`,
 * Ollama's; `text-tool-results`, LM Studio's.
 */
const NOT_OPENAI_QUIRKS = new Set([
  'adjacent-outputs',
  'reasoning-text',
  'plain-tools',
  'custom-as-function',
  'xai-params',
  'ollama-effort',
  'text-tool-results',
])

/**
 * Whether a request to the simulator's Responses provider stands for a server that is not OpenAI's,
 * by the quirks it names (the `+` suffixes of `model`, the client's `x-sim-quirk` header, as the
 * simulator reads them): such a request gets what the gateway sends that server (a
 * mid-conversation system message folded, as real DeepSeek gets it); any other stands for OpenAI's
 * API, as before.
 */
export function simStandsForOtherServer(model: string, quirkHeader: string | string[] | undefined): boolean {
  const header = Array.isArray(quirkHeader) ? quirkHeader.join(',') : (quirkHeader ?? '')
  const names = [...header.split(','), ...model.split('+').slice(1)]
  return names.some((name) => NOT_OPENAI_QUIRKS.has(name.trim()))
}

/** Whether `baseUrl` is OpenAI's own API (`https://api.openai.com`, any path after it). */
export function isOpenAiApi(baseUrl: string): boolean {
  return /^https:\/\/api\.openai\.com(?:[:/?#]|$)/i.test(baseUrl)
}

/**
 * Moonshot's API (Kimi: `api.moonshot.ai`, `api.moonshot.cn`, `api.kimi.com/coding`), whose chat
 * completions take a conversation's `prompt_cache_key` as OpenAI's do (its own SDK and kimi-cli
 * send the session's id so: MoonshotAI/kimi-cli #12, Kilo Code #5722).
 */
export function isMoonshotApi(baseUrl: string): boolean {
  return /^https:\/\/api\.(?:moonshot\.(?:ai|cn)|kimi\.com)(?:[:/?#]|$)/i.test(baseUrl)
}

/**
 * Alibaba's DashScope (Model Studio: `dashscope.aliyuncs.com`, `dashscope-intl`, `dashscope-us`, the
 * Coding Plan's `coding.dashscope.aliyuncs.com`), whose OpenAI-compatible chat completions cache a
 * Qwen model's prompt explicitly where a content part carries `cache_control` (Model Studio's
 * "Context cache" guide): without the marks only its implicit cache holds, hits not guaranteed.
 */
export function isDashScopeApi(baseUrl: string): boolean {
  return /^https:\/\/(?:[\w-]+\.)*dashscope(?:-[a-z]+)?\.aliyuncs\.com(?:[:/?#]|$)/i.test(baseUrl)
}

/** Z.AI's API (`api.z.ai`, its Coding Plan's route too) and Zhipu's BigModel (`open.bigmodel.cn`): GLM. */
export function isZaiApi(baseUrl: string): boolean {
  return /^https:\/\/(?:api\.z\.ai|open\.bigmodel\.cn)(?:[:/?#]|$)/i.test(baseUrl)
}

/** {@link isZaiApi}'s hosts, by host name and memoized per base URL ({@link byHost}). */
const zaiHost = byHost((host) => host === 'api.z.ai' || host === 'open.bigmodel.cn')

/**
 * Whether a provider is Z.AI's or BigModel's API ({@link isZaiApi}), found once per base URL: a
 * map lookup for every later request.
 */
export const zaiProvider = (provider: {baseUrl: string}): boolean => zaiHost(provider.baseUrl)

/**
 * Whether GLM `model` (GLM-4.6, 4.7, 5.x and later, any case, any `vendor/` prefix) streams a tool
 * call's arguments on Z.AI or BigModel only when asked, `"tool_stream": true` beside `"stream":
 * true` (docs.z.ai "Stream Tool Call": glm-4.6, glm-4.7, glm-5): without it the model writes the
 * whole of a call's arguments in silence and sends them in one chunk at the end, and a long one (a
 * file Claude Code writes, Codex's patch) outlasts api.z.ai's 30 s idle cut, the connection reset
 * mid-call and the agent's retry doing the same long generation again (hermes-agent PR #12758,
 * opencrabs #1347, weave-os/router PR #1099). GLM-4.5 and earlier, and the vision models
 * (`glm-4.6v`, `glm-5v-turbo`), are not named for it.
 */
export function asksToolStream(model: string): boolean {
  const name = model.slice(model.lastIndexOf('/') + 1).toLowerCase()
  return /^glm-(?:4\.(?:[6-9]|\d{2,})|(?:[5-9]|\d{2,})(?:\.\d+)?)(?:-|$)/.test(name)
}

const TOOLS = Buffer.from('"tools"')
const TOOL_STREAM_NAME = Buffer.from('"tool_stream"')
const TOOL_STREAM = Buffer.from(',"tool_stream":true')

/**
 * A streamed chat body passed through (a chat client's: OpenCode, Qwen Code, Kilo on GLM) to a
 * model that streams its calls' arguments only when asked ({@link asksToolStream}), with
 * `"tool_stream":true` added as its last member, every other byte as it came (the server's prompt
 * cache matches the bytes of the turn before): only where it offers one tool or more (a top-level
 * `tools` array that is not empty) and names no `tool_stream` of its own anywhere (the client's
 * choice, `false` included, stands). Undefined when nothing is added. A byte search for each name
 * first; the body's top-level members scanned only for a body that holds `"tools"`.
 */
export function withToolStream(body: Buffer): Buffer | undefined {
  if (body.indexOf(TOOLS) === -1 || body.indexOf(TOOL_STREAM_NAME) !== -1) return undefined
  const members = topMembers(body)
  const tools = members?.find((m) => m.name === 'tools')
  if (!members || !tools || body[tools.value] !== 0x5b) return undefined
  let i = tools.value + 1
  while (i < tools.end && (body[i] === 0x20 || body[i] === 0x0a || body[i] === 0x0d || body[i] === 0x09)) i++
  if (body[i] === 0x5d) return undefined
  const end = members.at(-1)!.end
  return edited(body, [{from: end, to: end, bytes: TOOL_STREAM}])
}

/**
 * Whether `model` on the host of `baseUrl` drops the reasoning of earlier turns from its input
 * unless the request asks to keep it, and in which vendor's words (chat.ts
 * `preservedThinkingFields`): Qwen3.6 and later (`qwen3.6-plus`, `qwen3.7-max`) and Kimi K2.6 on
 * DashScope; GLM-4.7 and GLM-5.x on Z.AI or BigModel; Kimi K2.6 on Moonshot's API. The name first
 * (any `vendor/` prefix aside), then the host; undefined for any other model or host (the same
 * model served elsewhere, a vLLM with its own chat template, goes as before).
 */
export function preservedThinkingOf(model: string, baseUrl: string): PreservedThinking | undefined {
  const name = model.slice(model.lastIndexOf('/') + 1).toLowerCase()
  if (/^qwen3\.(?:[6-9]|\d{2,})(?:[-.]|$)/.test(name))
    return isDashScopeApi(baseUrl) ? 'dashscope' : undefined
  if (/^kimi-k2\.6(?:-|$)/.test(name))
    return isDashScopeApi(baseUrl) ? 'dashscope' : isMoonshotApi(baseUrl) ? 'moonshot' : undefined
  if (/^glm-(?:4\.7|5)(?:[.-]|$)/.test(name)) return isZaiApi(baseUrl) ? 'zai' : undefined
  return undefined
}

/**
 * xAI's API (`api.x.ai`): its prompt cache holds a conversation's prefix on one machine when the
 * requests name it in the `x-grok-conv-id` header (xAI's prompt caching guide; codex-router #265
 * measured 3.9 % cached without it, 99.6 % with it).
 */
export function isXaiApi(baseUrl: string): boolean {
  return /^https:\/\/api\.x\.ai(?:[:/?#]|$)/i.test(baseUrl)
}

/**
 * `test` of a base URL's host name (lowercased, as a URL parser writes it; false for a base URL
 * that does not parse), memoized per base URL: a provider's base URL is tested on its requests
 * by one lookup.
 */
function byHost(test: (host: string) => boolean): (baseUrl: string) => boolean {
  const known = new Map<string, boolean>()
  return (baseUrl) => {
    let is = known.get(baseUrl)
    if (is === undefined) {
      let host: string | undefined
      try {
        host = new URL(baseUrl).hostname.toLowerCase()
      } catch {
        host = undefined
      }
      is = host !== undefined && test(host)
      if (known.size > 256) known.clear()
      known.set(baseUrl, is)
    }
    return is
  }
}

/**
 * Whether `baseUrl` names a server on this machine or the local network: loopback, a private or
 * link-local address, `localhost`, a `.local`, `.lan`, `.internal` or `.home.arpa` name, or a
 * name of one label (a container's, `http://vllm:8000`). Memoized per base URL.
 */
export const isLocalServer = byHost(localHost)

/**
 * Amazon Bedrock's runtime and Mantle endpoints: `bedrock-runtime.<region>.amazonaws.com` (`.cn`
 * in China), its `-fips` twin, `bedrock-mantle.<region>.api.aws`, and an interface VPC endpoint's
 * own name for either (AWS PrivateLink: `vpce-<id>.bedrock-runtime.<region>.vpce.amazonaws.com`,
 * `bedrock-mantle` the Mantle one's service suffix; with private DNS on, the plain name is
 * answered by the endpoint): OpenAI's chat and Responses APIs and Anthropic's Messages API on
 * Bedrock.
 */
const BEDROCK_HOST =
  /^(?:vpce-[a-z0-9-]+\.bedrock-(?:runtime(?:-fips)?|mantle)\.[a-z0-9-]+\.vpce\.amazonaws\.com(?:\.cn)?|bedrock-runtime(?:-fips)?\.[a-z0-9-]+\.amazonaws\.com(?:\.cn)?|bedrock-mantle\.[a-z0-9-]+\.api\.aws)$/

export const isAmazonBedrock = byHost((host) => BEDROCK_HOST.test(host))

function localHost(host: string): boolean {
  if (host.startsWith('[')) {
    const v6 = host.slice(1, -1)
    // loopback, unique local (fc00::/7), link-local (fe80::/10), an IPv4-mapped one
    if (v6 === '::1' || /^f[cd]/.test(v6) || /^fe[89ab]/.test(v6)) return true
    // (the URL parser writes an IPv4-mapped address in hex: `[::ffff:127.0.0.1]` is `[::ffff:7f00:1]`)
    const mapped = /^::ffff:([\da-f]{1,4}):([\da-f]{1,4})$/.exec(v6)
    if (!mapped) return false
    const high = parseInt(mapped[1]!, 16)
    const low = parseInt(mapped[2]!, 16)
    return privateV4(`${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`)
  }
  if (/^\d+\.\d+\.\d+\.\d+$/.test(host)) return privateV4(host)
  if (host === 'localhost' || !host.includes('.')) return true
  return /\.(?:localhost|local|lan|internal|home\.arpa)$/.test(host)
}

function privateV4(host: string): boolean {
  const [a, b] = host.split('.').map(Number)
  return (
    a === 127 ||
    a === 10 ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 169 && b === 254) ||
    (a === 100 && b >= 64 && b <= 127) // carrier-grade NAT: Tailscale's addresses
  )
}

/**
 * Whether an upstream's error (its body's text) refuses one of the shapes: vLLM's ("tool type
 * namespace not supported", a `literal_error` whose input is `namespace` or `custom`, "Unsupported
 * Responses API input item type: 'additional_tools'"), llama.cpp's ("'type' of tool must be
 * 'function'"), Ollama's ("Unsupported tool type"), xAI's 422 for an input item it has no variant
 * of ("did not match any variant of untagged enum"); a hosted server's refusal of Codex's
 * "Responses Lite" request ({@link refusesCodexLite}); a refusal of Codex's `agent_message` item
 * by name (Ollama's `unknown input item type: "agent_message"`, a relay's "Invalid input type
 * 'agent_message' at index 17"), which the plain request sends as a user message; OpenRouter's schema error for a tool that is
 * neither a function nor one of its own (a zod `invalid_union` at `["tools", N]` whose variants
 * expected `openrouter:datetime` and the like), its words nested in a JSON string, so its quotes
 * escaped and its line breaks `\n`.
 */
export function refusesOpenAiToolShapes(errorText: string): boolean {
  return (
    /namespace|additional_tools|'custom'|"custom"|tool type|type' of tool|untagged enum|agent_message/i.test(
      errorText,
    ) ||
    refusesCodexLite(errorText) ||
    (errorText.includes('invalid_union') &&
      /expected\W*openrouter:/.test(errorText) &&
      /path(?:\W|\\n)*tools(?:\W|\\n)*\d/.test(errorText))
  )
}

/**
 * Whether an upstream's error refuses a tool call's turn without the reasoning the model gave in
 * it as `reasoning_text` (DeepSeek's Responses API in thinking mode: "The `reasoning_text` in the
 * thinking mode must be passed back to the API.", lidge-jun/opencodex #1594), which Codex does not
 * send back on a pass-through (it keeps a reasoning item's summary and encrypted content only).
 */
export function refusesReasoningTextLoss(errorText: string): boolean {
  return /the \\?`?reasoning_text\\?`? in the thinking mode must be passed back/i.test(errorText)
}

/**
 * Whether an upstream's error refuses Codex's "Responses Lite" request as such (the header
 * `x-openai-internal-codex-responses-lite` honoured): Azure OpenAI's 400 for a tool of its item
 * that is not a function, a custom tool or the client-run tool search ("X-OpenAI-Internal-Codex-
 * Responses-Lite only supports function tools, custom tools, and client-executed tool search."),
 * and OpenAI's for a model that is not a Lite one, which a route's model rewrite gives ("This model
 * is not supported when using X-OpenAI-Internal-Codex-Responses-Lite.").
 */
export function refusesCodexLite(errorText: string): boolean {
  return /X-OpenAI-Internal-Codex-Responses-Lite only supports|not supported when using X-OpenAI-Internal-Codex-Responses-Lite/i.test(
    errorText,
  )
}

/**
 * Codex's Lite request as Codex sends it for a model of its catalog that is not Lite (what its
 * `use_responses_lite: false` gives): the tools of its `additional_tools` item in `tools` (after
 * any there), namespaces and custom tools as they came, the item left out. For a server that
 * refused the Lite request as such ({@link refusesCodexLite}), which takes those shapes without
 * the Lite header: OpenAI's API for any model, Azure OpenAI. Undefined for a body that is not
 * JSON or holds no such item.
 */
export function withoutLiteItem(body: Buffer): Buffer | undefined {
  if (body.indexOf(ADDITIONAL_TOOLS) === -1) return undefined
  let json: unknown
  try {
    json = JSON.parse(body.toString('utf8'))
  } catch {
    return undefined
  }
  const request = json as {input?: unknown; tools?: unknown}
  if (!json || typeof json !== 'object' || !Array.isArray(request.input)) return undefined
  const tools: unknown[] = Array.isArray(request.tools) ? [...(request.tools as unknown[])] : []
  const input = (request.input as unknown[]).filter((item) => {
    const lite = item as {type?: unknown; tools?: unknown} | null
    if (lite?.type !== 'additional_tools') return true
    if (Array.isArray(lite.tools)) tools.push(...(lite.tools as unknown[]))
    return false
  })
  if (input.length === request.input.length) return undefined
  return Buffer.from(JSON.stringify({...request, input, tools}))
}

/**
 * Whether `baseUrl` is Azure OpenAI's (or Azure AI Foundry's) Responses API, which keeps no item
 * of a request sent with `store: false` and then refuses any later request that names one of its
 * items by id: "Item with id 'rs_…' not found. Items are not persisted when `store` is set to
 * false." Codex sends every item with its id since 0.146 (openai/codex PR #34645) and `store:
 * true` only to a provider it knows is Azure, by its name or host (PR #3528), which a provider
 * behind gwctl never is to Codex ({@link withStoreTrue}).
 */
export function isAzureHost(baseUrl: string): boolean {
  return /^https:\/\/[^/?#]*\.(?:openai\.azure\.com|cognitiveservices\.azure\.com|services\.ai\.azure\.com)(?:[:/?#]|$)/i.test(
    baseUrl,
  )
}

const azure = new WeakMap<object, boolean>()

/**
 * {@link isAzureHost} of a provider's base URL, found once per provider (the routing engine keeps
 * its providers' objects from one request to the next): a map lookup for every later request.
 */
export function azureProvider(provider: {baseUrl: string}): boolean {
  let known = azure.get(provider)
  if (known === undefined) azure.set(provider, (known = isAzureHost(provider.baseUrl)))
  return known
}

const STORE_FALSE = Buffer.from('"store":false')
const STORE_TRUE = Buffer.from('"store":true')

/**
 * A Responses body with its `"store":false` as `"store":true` (what Codex sends a provider it
 * knows is Azure), its items and their ids as they came: Azure then keeps the items and finds
 * them by their ids on the next turn. Searched from the end, where Codex writes the field (after
 * its history and tools), in the compact form every client writes; undefined for a body that does
 * not hold it (a client that asked for `store: true` itself, or left it out).
 */
export function withStoreTrue(body: Buffer): Buffer | undefined {
  const at = body.lastIndexOf(STORE_FALSE)
  if (at === -1) return undefined
  return Buffer.concat([body.subarray(0, at), STORE_TRUE, body.subarray(at + STORE_FALSE.length)])
}

/**
 * Whether an upstream's error is Azure OpenAI's refusal of an item named by its id in a request
 * sent with `store: false` ("Item with id 'rs_…' not found. Items are not persisted when `store`
 * is set to false. Try again with `store` set to true, or remove this item from your input."):
 * learned per provider and model, the request sent again with `store: true` (an Azure behind a
 * custom domain or an API gateway, which {@link isAzureHost} does not know).
 */
export function refusesStoreFalse(errorText: string): boolean {
  return /Item with id '[^']{1,200}' not found\. Items are not persisted when .store. is set to false/.test(
    errorText,
  )
}

/**
 * A namespace tool with an empty description, as Codex 0.147 and later sends its `functions`
 * namespace (in the Lite item, or in `tools`): `"type":"namespace","name":"functions",
 * "description":""` (openai/codex #37380, #37952), in Codex's order of the fields.
 */
const EMPTY_NAMESPACE_DESCRIPTION =
  /("type"\s*:\s*"namespace"\s*,\s*"name"\s*:\s*"((?:[^"\\]|\\.){1,200})"\s*,\s*"description"\s*:\s*)""/g

/**
 * Codex's body with each namespace tool's empty `description` given the words Codex gives every
 * other namespace, `Tools in the <name> namespace.`, and nothing else changed (the same bytes each
 * turn, so the server's prompt cache holds). Azure OpenAI refuses the empty string, and the field
 * left out ("Invalid 'input[0].tools[0].description': empty string. Expected a string with minimum
 * length 1", `code: empty_string`; openai/codex #37380, #37432, #37675; maximhq/bifrost #6047;
 * BerriAI/litellm #36366), on every request of a Lite model. Undefined for a body without one.
 */
export function withNamespaceDescriptions(body: Buffer): Buffer | undefined {
  // (byte searches first: a body is decoded only where Codex's empty description stands)
  if (
    body.indexOf('"namespace"') === -1 ||
    (body.indexOf('"description":""') === -1 && body.indexOf('"description": ""') === -1)
  )
    return undefined
  const text = body.toString('utf8')
  const filled = text.replace(
    EMPTY_NAMESPACE_DESCRIPTION,
    (_all, head: string, name: string) => `${head}"Tools in the ${name} namespace."`,
  )
  return filled === text ? undefined : Buffer.from(filled)
}

/**
 * Whether an upstream's error refuses an empty tool description (Azure OpenAI's `empty_string` at
 * `…tools[N].description`): learned per provider and model where its host does not say Azure.
 */
export function refusesEmptyDescription(errorText: string): boolean {
  return (
    /tools\[\d+\]\.description'?: empty string/.test(errorText) ||
    (/"empty_string"/.test(errorText) && /tools\[\d+\]\.description/.test(errorText))
  )
}

const CALL_OUTPUT = Buffer.from('_call_output"')

/** Whether a Responses body holds a tool call's output (or the words): one a refusal of their order may be about. */
export const holdsCallOutput = (body: Buffer): boolean => body.lastIndexOf(CALL_OUTPUT) !== -1

/**
 * A Responses body with each batch of tool calls followed directly by their outputs
 * (../../protocols/adjacent-outputs.ts), for a server that refused a call and its output that were
 * not next to each other (DeepSeek's `/v1/responses`, a Codex hook's developer message between
 * them). Undefined for a body that is not JSON, holds no output, or is so already: it goes as it came.
 */
export function withAdjacentOutputs(body: Buffer): Buffer | undefined {
  if (!holdsCallOutput(body)) return undefined
  return withInputMapped(body, adjacentOutputs)
}
