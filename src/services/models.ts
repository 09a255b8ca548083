/** The platform's models list (`gwctl models`). */
import {platformClient} from '../api/http.js'
import type {ModelList} from '../api/models.js'
import {listModels} from '../api/models.js'

/** `GET {base_url}/models` with the configured platform client. */
export function listPlatformModels(options: {signal?: AbortSignal} = {}): Promise<ModelList> {
  return listModels(platformClient(), options)
}
