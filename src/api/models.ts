/** Client of the models-list endpoint `GET {base_url}/models` (spec 4.1). */
import type {PlatformClient} from './http.js'

/**
 * One model. The spec does not show the response; the OpenAI list shape is expected, and the
 * simulator adds `context_length`, `reasoning` and `providers`.
 */
export interface ModelInfo {
  id: string
  object?: string
  created?: number
  owned_by?: string
  context_length?: number
  reasoning?: boolean
  providers?: Array<{name: string; [key: string]: unknown}>
  [key: string]: unknown
}

export interface ModelList {
  object?: string
  data: ModelInfo[]
  [key: string]: unknown
}

/** Lists the models; accepts `{data:[...]}` and a bare array. */
export async function listModels(
  client: PlatformClient,
  options: {signal?: AbortSignal} = {},
): Promise<ModelList> {
  const res = await client.request<ModelList | ModelInfo[]>('GET', '/models', {signal: options.signal})
  const body = res.body
  if (Array.isArray(body)) return {object: 'list', data: body}
  return {...body, data: Array.isArray(body?.data) ? body.data : []}
}
