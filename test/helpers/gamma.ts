/** Shared set-up of the gamma end-to-end tests: an in-process simulator and a CLI bound to it. */
import type {Simulator} from '../../src/sim/server.js'
import {startSim} from '../../src/sim/server.js'
import type {CliResult} from './cli.js'
import {freePort, runCli, tempHome} from './cli.js'

export const GAMMA = '/api/v1/multimodal/gamma/videos'

export interface GammaEnv {
  sim: Simulator
  home: string
  run(args: string[], input?: string): Promise<CliResult>
  /** Creates a task straight on the simulator (set-up, not the thing under test). */
  create(kind: 'video_generation' | 'h3_context_ir' | 'video_regeneration', body: object): Promise<string>
  /** Requests the simulator received below the gamma API, optionally only one method. */
  gammaRequests(method?: string): Simulator['requests']
  close(): Promise<void>
}

export async function gammaEnv(taskSeconds: number): Promise<GammaEnv> {
  const sim = await startSim({port: await freePort(), taskSeconds})
  const t = tempHome()
  return {
    sim,
    home: t.home,
    run: (args, input) =>
      runCli(['gamma', ...args], {
        home: t.home,
        input,
        env: {GWCTL_BASE_URL: sim.baseUrl, GWCTL_API_KEY: 'sk-gamma-test-key'},
      }),
    async create(kind, body) {
      const res = await fetch(`${sim.origin}${GAMMA}/${kind}`, {
        method: 'POST',
        headers: {authorization: 'Bearer sk-setup', 'content-type': 'application/json'},
        body: JSON.stringify({model: 'Gamma-H3', ...body}),
      })
      const json = (await res.json()) as {task_id?: string}
      if (!res.ok || !json.task_id) throw new Error(`set-up create failed: ${JSON.stringify(json)}`)
      return json.task_id
    },
    gammaRequests: (method) =>
      sim.requests.filter((r) => r.path.startsWith(GAMMA) && (method === undefined || r.method === method)),
    async close() {
      await sim.close()
      t.cleanup()
    },
  }
}

export const textToVideo = (prompt = 'a red fox in snow', ratio = '16:9') => ({
  content: [{type: 'text', text: prompt}],
  resolution: '768P',
  duration: 5,
  ratio,
})
