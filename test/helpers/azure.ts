/** Helpers of the tests of Azure OpenAI's own hosts, served by the simulator. */
import type {ProxyGatewayOptions} from '../../src/daemon/router/proxy-fixture.js'
import {ProxyGateway} from '../../src/daemon/router/proxy-fixture.js'
import type {Simulator} from '../../src/sim/server.js'
import {startSim} from '../../src/sim/server.js'

/** An Azure OpenAI resource's origin (one of Azure's own hosts, as the gateway tells them). */
export const AZURE = 'https://my-res.openai.azure.com'

/**
 * A simulator and a `ProxyGateway` over `route` whose requests to `AZURE` go to the simulator
 * (nothing leaves this machine), both listening; `close` closes both.
 */
export async function azureSimGateway(
  route: ProxyGatewayOptions['route'],
): Promise<{sim: Simulator; gateway: ProxyGateway; close: () => Promise<void>}> {
  const sim = await startSim({timeScale: 100})
  const gateway = new ProxyGateway({route})
  // Azure's origin, served by the simulator (nothing leaves this machine)
  const get = gateway.pools.get.bind(gateway.pools)
  gateway.pools.get = (origin, timeouts) => get(origin === AZURE ? sim.origin : origin, timeouts)
  await gateway.listen()
  return {
    sim,
    gateway,
    close: async () => {
      await gateway.close()
      await sim.close()
    },
  }
}
