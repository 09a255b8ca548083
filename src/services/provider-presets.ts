/**
 * Known providers for `gwctl providers add NAME --preset P`: each one's protocol family, its base
 * URL as the vendor documents it for its SDK (joined with a request's path as daemon/router/pools.ts
 * `upstreamPath` says), and the environment variable its own tools read the key from. A vendor
 * that serves two protocols has a preset for each (`zai` for its chat completions, `zai-anthropic`
 * for its Anthropic-compatible endpoint): the second is a pass-through for Claude Code, the first a
 * translated route for it. Local servers need no key and listen on their default ports.
 */
import type {Family} from '../store/schema.js'

export interface ProviderPreset {
  name: string
  family: Family
  baseUrl: string
  /** The variable the vendor's SDKs and CLIs read the key from; none for a local server. */
  keyEnv?: string
  /** What it is, for `gwctl providers presets`. */
  about: string
  /**
   * The model names the vendor documents, where it keeps a short fixed list: only for "did you
   * mean" on a policy target's model (`model-hints.ts`), never to refuse one.
   */
  models?: readonly string[]
  /**
   * Names the vendor retired, each with the date and the name it points to now: a policy target
   * that still names one gets a warning (`model-hints.ts`), never a refusal.
   */
  retired?: Readonly<Record<string, {on: string; use: string}>>
}

/**
 * DeepSeek's V3 names, retired on 2026-07-24 for the V4 models (any-llm #1172); until then they
 * were V4 Flash without and with thinking.
 */
const DEEPSEEK_RETIRED = {
  'deepseek-chat': {on: '2026-07-24', use: 'deepseek-v4-flash'},
  'deepseek-reasoner': {on: '2026-07-24', use: 'deepseek-v4-flash'},
}

export const PROVIDER_PRESETS: readonly ProviderPreset[] = [
  // the three vendors whose protocols the agents speak
  {
    name: 'anthropic',
    family: 'messages',
    baseUrl: 'https://api.anthropic.com',
    keyEnv: 'ANTHROPIC_API_KEY',
    about: "Anthropic's Messages API",
  },
  {
    name: 'openai',
    family: 'responses',
    baseUrl: 'https://api.openai.com/v1',
    keyEnv: 'OPENAI_API_KEY',
    about: "OpenAI's Responses API",
  },
  {
    name: 'gemini',
    family: 'gemini',
    baseUrl: 'https://generativelanguage.googleapis.com',
    keyEnv: 'GEMINI_API_KEY',
    about: 'Google AI Studio (Gemini API)',
  },
  // hosted OpenAI-compatible chat completions
  {
    name: 'deepseek',
    family: 'chat',
    baseUrl: 'https://api.deepseek.com',
    keyEnv: 'DEEPSEEK_API_KEY',
    about: 'DeepSeek',
    models: ['deepseek-v4-flash', 'deepseek-v4-pro'],
    retired: DEEPSEEK_RETIRED,
  },
  {
    name: 'deepseek-anthropic',
    family: 'messages',
    baseUrl: 'https://api.deepseek.com/anthropic',
    keyEnv: 'DEEPSEEK_API_KEY',
    about: "DeepSeek's Anthropic-compatible endpoint",
    models: ['deepseek-v4-flash', 'deepseek-v4-pro'],
    retired: DEEPSEEK_RETIRED,
  },
  {
    name: 'zai',
    family: 'chat',
    baseUrl: 'https://api.z.ai/api/paas/v4',
    keyEnv: 'ZAI_API_KEY',
    about: 'Z.AI (GLM), pay as you go',
  },
  {
    name: 'zai-coding',
    family: 'chat',
    baseUrl: 'https://api.z.ai/api/coding/paas/v4',
    keyEnv: 'ZAI_API_KEY',
    about: 'Z.AI (GLM) Coding Plan',
  },
  {
    name: 'zai-anthropic',
    family: 'messages',
    baseUrl: 'https://api.z.ai/api/anthropic',
    keyEnv: 'ZAI_API_KEY',
    about: "Z.AI's Anthropic-compatible endpoint (GLM)",
  },
  {
    name: 'bigmodel',
    family: 'chat',
    baseUrl: 'https://open.bigmodel.cn/api/paas/v4',
    keyEnv: 'ZHIPUAI_API_KEY',
    about: 'Zhipu BigModel (GLM, mainland China)',
  },
  {
    name: 'moonshot',
    family: 'chat',
    baseUrl: 'https://api.moonshot.ai/v1',
    keyEnv: 'MOONSHOT_API_KEY',
    about: 'Moonshot AI (Kimi)',
  },
  {
    name: 'moonshot-anthropic',
    family: 'messages',
    baseUrl: 'https://api.moonshot.ai/anthropic',
    keyEnv: 'MOONSHOT_API_KEY',
    about: "Moonshot's Anthropic-compatible endpoint (Kimi)",
  },
  {
    name: 'dashscope',
    family: 'chat',
    baseUrl: 'https://dashscope-intl.aliyuncs.com/compatible-mode/v1',
    keyEnv: 'DASHSCOPE_API_KEY',
    about: 'Alibaba Model Studio (Qwen), international',
  },
  {
    name: 'minimax',
    family: 'chat',
    baseUrl: 'https://api.minimax.io/v1',
    keyEnv: 'MINIMAX_API_KEY',
    about: 'MiniMax',
  },
  {
    name: 'minimax-anthropic',
    family: 'messages',
    baseUrl: 'https://api.minimax.io/anthropic',
    keyEnv: 'MINIMAX_API_KEY',
    about: "MiniMax's Anthropic-compatible endpoint",
  },
  {
    name: 'openrouter',
    family: 'chat',
    baseUrl: 'https://openrouter.ai/api/v1',
    keyEnv: 'OPENROUTER_API_KEY',
    about: 'OpenRouter',
  },
  {
    name: 'groq',
    family: 'chat',
    baseUrl: 'https://api.groq.com/openai/v1',
    keyEnv: 'GROQ_API_KEY',
    about: 'Groq',
  },
  {
    name: 'mistral',
    family: 'chat',
    baseUrl: 'https://api.mistral.ai/v1',
    keyEnv: 'MISTRAL_API_KEY',
    about: 'Mistral AI',
  },
  // xAI's Responses API: its reasoning models' thinking comes back only there, as a reasoning item
  // with `encrypted_content` the next turn sends back (xAI's docs call chat completions deprecated and
  // return no reasoning content on it; without it Grok 4.7 stops reasoning from about the third round
  // and loops: codex-router #888, pi PR #8124). `xai-chat` for a setup that wants chat completions.
  {
    name: 'xai',
    family: 'responses',
    baseUrl: 'https://api.x.ai/v1',
    keyEnv: 'XAI_API_KEY',
    about: "xAI's Responses API (Grok)",
  },
  {
    name: 'xai-chat',
    family: 'chat',
    baseUrl: 'https://api.x.ai/v1',
    keyEnv: 'XAI_API_KEY',
    about: "xAI's chat completions (Grok; deprecated by xAI, no reasoning carried)",
  },
  {
    name: 'together',
    family: 'chat',
    baseUrl: 'https://api.together.xyz/v1',
    keyEnv: 'TOGETHER_API_KEY',
    about: 'Together AI',
  },
  {
    name: 'fireworks',
    family: 'chat',
    baseUrl: 'https://api.fireworks.ai/inference/v1',
    keyEnv: 'FIREWORKS_API_KEY',
    about: 'Fireworks AI',
  },
  {
    name: 'cerebras',
    family: 'chat',
    baseUrl: 'https://api.cerebras.ai/v1',
    keyEnv: 'CEREBRAS_API_KEY',
    about: 'Cerebras',
  },
  // servers on this machine, on their default ports
  {name: 'ollama', family: 'chat', baseUrl: 'http://127.0.0.1:11434/v1', about: 'Ollama on this machine'},
  {name: 'lmstudio', family: 'chat', baseUrl: 'http://127.0.0.1:1234/v1', about: 'LM Studio on this machine'},
  {name: 'vllm', family: 'chat', baseUrl: 'http://127.0.0.1:8000/v1', about: 'vLLM on this machine'},
  {name: 'sglang', family: 'chat', baseUrl: 'http://127.0.0.1:30000/v1', about: 'SGLang on this machine'},
  {
    name: 'llamacpp',
    family: 'chat',
    baseUrl: 'http://127.0.0.1:8080/v1',
    about: 'llama.cpp (llama-server) on this machine',
  },
]

/** The preset of that name, if any. */
export function providerPreset(name: string): ProviderPreset | undefined {
  return PROVIDER_PRESETS.find((p) => p.name === name)
}
