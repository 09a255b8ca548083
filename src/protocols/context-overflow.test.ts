import {describe, expect, it} from 'vitest'

import {contextOverflowError, readContextOverflow, saysOverflow} from './context-overflow.js'

describe('readContextOverflow', () => {
  it("reads each vendor's words, with the prompt's tokens and the window where they are said", () => {
    const cases: Array<[string, string, {inputTokens?: number; limit?: number}]> = [
      // DeepSeek (claude-code-router #1292): the messages' part is the prompt
      [
        "This model's maximum context length is 102400 tokens. However, you requested 137837 tokens (129645 in the messages, 8192 in the completion). Please reduce the length of the messages or completion.",
        '',
        {inputTokens: 129645, limit: 102400},
      ],
      // OpenAI chat
      [
        "This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens. Please reduce the length of the messages.",
        '{"error":{"code":"context_length_exceeded"}}',
        {inputTokens: 130512, limit: 128000},
      ],
      // OpenRouter (claude-code-router #252): the output's part taken off
      [
        'This endpoint\'s maximum context length is 65536 tokens. However, you requested about 92208 tokens (60833 of text input, 10042 of tool input, 21333 in the output). Please reduce the length of either one, or use the "middle-out" transform to compress your prompt automatically.',
        '',
        {inputTokens: 70875, limit: 65536},
      ],
      // vLLM
      [
        "This model's maximum context length is 32768 tokens and your request has 40000 input tokens. Please reduce the length of the input messages.",
        '',
        {inputTokens: 40000, limit: 32768},
      ],
      // Anthropic, both wordings
      ['prompt is too long: 208000 tokens > 200000 maximum', '', {inputTokens: 208000, limit: 200000}],
      [
        'input length and `max_tokens` exceed context limit: 201000 + 21333 > 200000, decrease input length or `max_tokens` and try again',
        '',
        {inputTokens: 201000, limit: 200000},
      ],
      // SGLang
      [
        "Requested token count exceeds the model's maximum context length of 131072 tokens. You requested a total of 171897 tokens: 137897 tokens from the input messages and 34000 tokens for the completion. Please reduce the number of tokens in the input messages or the completion to fit within the limit.",
        '',
        {inputTokens: 137897, limit: 131072},
      ],
      // Gemini
      [
        'The input token count (1048577) exceeds the maximum number of tokens allowed (1048576).',
        '',
        {inputTokens: 1048577, limit: 1048576},
      ],
      // NVIDIA NIM (free-claude-code #263), Moonshot, xAI, Mistral
      [
        "The input (345516 tokens) is longer than the model's context length (262144 tokens). (request_id=req_123)",
        '',
        {inputTokens: 345516, limit: 262144},
      ],
      [
        'Invalid request: Your request exceeded model token limit: 262144 (requested: 270000)',
        '',
        {inputTokens: 270000, limit: 262144},
      ],
      [
        "This model's maximum prompt length is 131072 but the request contains 537812 tokens.",
        '',
        {inputTokens: 537812, limit: 131072},
      ],
      [
        'Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 maximum context length',
        '',
        {inputTokens: 40000, limit: 32768},
      ],
      // llama.cpp: the counts beside the message
      [
        'the request exceeds the available context size, try increasing it',
        '{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":8192}}',
        {inputTokens: 9000, limit: 8192},
      ],
      // its newer server: the counts in the message
      [
        'request (9000 tokens) exceeds the available context size (8192 tokens), try increasing it',
        '{"error":{"code":400,"message":"request (9000 tokens) exceeds the available context size (8192 tokens), try increasing it","type":"exceed_context_size_error"}}',
        {inputTokens: 9000, limit: 8192},
      ],
      // no numbers: the code, or the words
      ['Context window exceeded', '{"error":{"code":"context_length_exceeded"}}', {}],
      // Ollama with its context shift off (a DeepSeek-family model)
      ['the prompt is longer than the context length currently available to the model', '', {}],
      ['Prompt exceeds max length', '{"error":{"code":"1261"}}', {}],
      // Cerebras: its body unwrapped, the code beside the counts
      [
        'Please reduce the length of the messages or completion. Current length is 202427 while limit is 131072',
        '{"message":"Please reduce the length of the messages or completion. Current length is 202427 while limit is 131072","type":"invalid_request_error","param":"validation_error","code":"context_length_exceeded"}',
        {inputTokens: 202427, limit: 131072},
      ],
      // LM Studio's MLX engine and llama.cpp (a 500), no counts
      [
        'Context size has been exceeded.',
        '{"error":{"code":500,"message":"Context size has been exceeded.","type":"server_error"}}',
        {},
      ],
      // LM Studio 0.4.21's words, with both counts (lmstudio-bug-tracker #2322)
      [
        'Input does not fit in context length. The input has 31430 tokens, but the context length only supports 30000 tokens.',
        '',
        {inputTokens: 31430, limit: 30000},
      ],
    ]
    for (const [message, raw, want] of cases) expect(readContextOverflow(message, raw), message).toEqual(want)
  })

  it("tells the completion's room apart when the prompt fits", () => {
    // DeepSeek, SGLang, Anthropic: the prompt fits, the room for the completion does not
    expect(
      readContextOverflow(
        "This model's maximum context length is 102400 tokens. However, you requested 107837 tokens (99645 in the messages, 8192 in the completion).",
      ),
    ).toEqual({inputTokens: 99645, limit: 102400, completionTokens: 8192})
    expect(
      readContextOverflow(
        "Requested token count exceeds the model's maximum context length of 131072 tokens. You requested a total of 71897 tokens: 7897 tokens from the input messages and 64000 tokens for the completion.",
      ),
    ).toBeUndefined()
    expect(
      readContextOverflow(
        "Requested token count exceeds the model's maximum context length of 131072 tokens. You requested a total of 161897 tokens: 97897 tokens from the input messages and 64000 tokens for the completion.",
      ),
    ).toEqual({inputTokens: 97897, limit: 131072, completionTokens: 64000})
    expect(
      readContextOverflow(
        'input length and `max_tokens` exceed context limit: 196655 + 21333 > 200000, decrease input length or `max_tokens` and try again',
      ),
    ).toEqual({inputTokens: 196655, limit: 200000, completionTokens: 21333})
    // said to a Messages client only, in Anthropic's words for it (Claude Code asks again with less)
    const room = {inputTokens: 99645, limit: 102400, completionTokens: 8192}
    expect(saysOverflow('messages', room)).toBe(true)
    for (const family of ['chat', 'responses', 'gemini'] as const)
      expect(saysOverflow(family, room)).toBe(false)
    expect(contextOverflowError('messages', room, 'up').message).toBe(
      'input length and `max_tokens` exceed context limit: 99645 + 8192 > 102400, decrease input length or `max_tokens` and try again (up)',
    )
  })

  it("reads DashScope's, LM Studio's, MiniMax's, vLLM's engine's, Bedrock's and TGI's words", () => {
    const cases: Array<[string, string, {inputTokens?: number; limit?: number; completionTokens?: number}]> =
      [
        // DashScope (QwenLM/qwen-code #98): the most input it takes, nothing of the request's
        [
          '<400> InternalError.Algo.InvalidParameter: Range of input length should be [1, 129024]',
          {limit: 129024},
        ],
        // LM Studio (lmstudio-bug-tracker #546), its older wording (page-assist #356) and its n_keep one
        [
          'Trying to keep the first 111490 tokens when context the overflows. However, the model is loaded with context length of only 32768 tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input',
          {inputTokens: 111490, limit: 32768},
        ],
        [
          'Trying to keep the first 6547 tokens when context overflows. However, the model is loaded with a context length of only 4096 tokens, which is not enough.',
          {inputTokens: 6547, limit: 4096},
        ],
        [
          'The number of tokens to keep from the initial prompt is greater than the context length (n_keep: 13055>= n_ctx: 4096). Try to load the model with a larger context length, or provide a shorter input.',
          {inputTokens: 13055, limit: 4096},
        ],
        [
          'The number of tokens to keep from the initial prompt is greater than the context length. Try to load the model with a larger context length, or provide a shorter input',
          {},
        ],
        // MiniMax (MiniMax-AI/MiniMax-M2 #119): 2013 is its code for invalid params, no count
        ['invalid params, context window exceeds limit (2013)', {}],
        // vLLM's engine (openrag #128), as Xinference quotes it (deepagents #468)
        [
          'The decoder prompt (length 15983) is longer than the maximum model length of 8192. Make sure that `max_model_len` is no smaller than the number of text tokens plus multimodal tokens.',
          {inputTokens: 15983, limit: 8192},
        ],
        [
          '{"detail":"[address=0.0.0.0:43769, pid=1065] The decoder prompt (length 66501) is longer than the maximum model length of 65536. Make sure that `max_model_len` is no smaller than the number of text tokens."}',
          {inputTokens: 66501, limit: 65536},
        ],
        // Bedrock
        ['Input is too long for requested model.', {}],
        // TGI: the input alone past the total, the completion's room, the input's own limit
        [
          'Input validation error: `inputs` tokens + `max_new_tokens` must be <= 32769. Given: 40000 `inputs` tokens and 8192 `max_new_tokens`',
          {inputTokens: 40000, limit: 32769},
        ],
        [
          'Input validation error: `inputs` tokens + `max_new_tokens` must be <= 32769. Given: 30000 `inputs` tokens and 8192 `max_new_tokens`',
          {inputTokens: 30000, limit: 32769, completionTokens: 8192},
        ],
        [
          'Input validation error: `inputs` must have less than 4096 tokens. Given: 5000',
          {inputTokens: 5000, limit: 4096},
        ],
      ].map(([message, expected]) => [message as string, '', expected as object])
    for (const [message, raw, expected] of cases)
      expect(readContextOverflow(message, raw || JSON.stringify({error: {message}})), message).toEqual(
        expected,
      )
    // DashScope's other ranges are no overflow
    for (const message of [
      '<400> InternalError.Algo.InvalidParameter: Range of max_tokens should be [1, 8192]',
      'invalid params, invalid function arguments json string, tool_call_id: call_1 (2013)',
    ])
      expect(readContextOverflow(message, '{}'), message).toBeUndefined()
    // said to Claude Code in the words it compacts on, the counts where stated
    expect(contextOverflowError('messages', {limit: 129024}, 'up').message).toBe('prompt is too long: up')
    expect(contextOverflowError('messages', {inputTokens: 66501, limit: 65536}, 'up').message).toBe(
      'prompt is too long: 66501 tokens > 65536 maximum (up)',
    )
    expect(contextOverflowError('responses', {limit: 129024}, 'up')).toEqual({
      message:
        'Your input exceeds the context window of this model (129024 tokens). Please adjust your input and try again. (up)',
      code: 'context_length_exceeded',
    })
  })

  it('is no overflow for any other error', () => {
    expect(
      readContextOverflow(
        "'max_tokens' or 'max_completion_tokens' is too large: 32000. This model's maximum context length is 32768 tokens and your request has 1000 input tokens (32000 > 32768 - 1000).",
      ),
    ).toBeUndefined()
    for (const message of [
      'Invalid value for temperature',
      'The user message must not be empty.',
      'max_tokens: 64000 > 32000, which is the maximum allowed number of output tokens for claude-opus-4',
      'Rate limit reached for requests',
    ])
      expect(readContextOverflow(message, '{}'), message).toBeUndefined()
  })
})

describe('contextOverflowError', () => {
  const said =
    'deepseek (chat, translated): upstream answered 400: This model’s maximum context length is ...'
  it("says it in each entrance's words, the upstream's after them", () => {
    const both = {inputTokens: 129645, limit: 102400}
    expect(contextOverflowError('messages', both, said)).toEqual({
      message: `prompt is too long: 129645 tokens > 102400 maximum (${said})`,
    })
    expect(contextOverflowError('responses', both, said)).toEqual({
      message: `Your input exceeds the context window of this model (102400 tokens; this request has 129645). Please adjust your input and try again. (${said})`,
      code: 'context_length_exceeded',
    })
    expect(contextOverflowError('chat', both, said)).toEqual({
      message: `This model's maximum context length is 102400 tokens. However, your messages resulted in 129645 tokens. Please reduce the length of the messages. (${said})`,
      code: 'context_length_exceeded',
    })
    expect(contextOverflowError('gemini', both, said).message).toBe(
      `The input token count (129645) exceeds the maximum number of tokens allowed (102400). (${said})`,
    )
    // without the numbers, the words still
    expect(contextOverflowError('messages', {}, said).message).toBe(`prompt is too long: ${said}`)
    expect(contextOverflowError('responses', {}, said).code).toBe('context_length_exceeded')
  })
})
