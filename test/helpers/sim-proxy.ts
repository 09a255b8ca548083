/**
 * The proxy in front of the simulator, in the test's process: a helper of the router tests that
 * drive `proxyRequest` against the simulator's upstreams and faults (src/daemon/ may not import
 * src/sim/, a test helper may).
 */
import type {ProxyTarget} from '../../src/daemon/router/proxy.js'
import type {ProxyGatewayOptions} from '../../src/daemon/router/proxy-fixture.js'
import {ProxyGateway} from '../../src/daemon/router/proxy-fixture.js'
import type {RecordedRequest, Simulator} from '../../src/sim/server.js'
import {startSim} from '../../src/sim/server.js'
import type {Family} from '../../src/store/schema.js'

/** The simulator behind a `ProxyGateway`: what the tests of the proxy against it share. */
export interface SimProxy {
  /** The gateway, made at once, listening after `start()`. */
  gateway: ProxyGateway
  /** Starts the simulator, then the gateway (each on a free port of 127.0.0.1); the simulator. */
  start: () => Promise<Simulator>
  /** Forgets the simulator's faults and requests and the gateway's results (between tests). */
  clear: () => void
  /** Closes the gateway (its pools too) and the simulator. */
  close: () => Promise<void>
  /** The simulator as a provider of `family` (`sim-<family>` unless named: several names may share it), `extra` over the target. */
  target: (family: Family, extra?: Partial<ProxyTarget>, name?: string) => ProxyTarget
  /** The requests the simulator got on a path that holds `path`, since the last `clear()`. */
  upstreamCalls: (path: string) => RecordedRequest[]
}

/**
 * The simulator behind a `ProxyGateway` (src/daemon/router/proxy-fixture.ts) over `options`.
 * Made at once, so a test file may destructure it at its top.
 */
export function simProxy(options: ProxyGatewayOptions): SimProxy {
  const gateway = new ProxyGateway(options)
  let sim: Simulator | undefined
  const started = (): Simulator => {
    if (!sim) throw new Error('the simulator is not listening: call start() first')
    return sim
  }
  return {
    gateway,
    start: async () => {
      sim = await startSim()
      await gateway.listen()
      return sim
    },
    clear: () => {
      gateway.results.length = 0
      started().faults.clear()
      started().requests.length = 0
    },
    close: async () => {
      await gateway.close()
      await sim?.close()
    },
    target: (family, extra = {}, name = `sim-${family}`) => ({
      provider: {name, family, baseUrl: started().origin, credential: {secret: 'upstream-key'}},
      ...extra,
    }),
    upstreamCalls: (path) => started().requests.filter((r) => r.path.includes(path)),
  }
}
