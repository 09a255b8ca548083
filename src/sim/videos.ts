/** Simulator module of `/api/v1/videos` (filled in by the video work). */
import type {SimModule} from './server.js'

export const videosModule: SimModule = {
  name: 'videos',
  register() {},
}
