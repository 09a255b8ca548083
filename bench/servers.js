// Child-process servers for the benchmark, so that load generator, upstream and proxy each get
// their own event loop. Prints `READY <port>` on stdout once listening.
//   node bench/servers.js sim
//   node bench/servers.js bare <upstream-origin>
import {createServer} from 'node:http'
import {Pool} from 'undici'

const [kind, upstream] = process.argv.slice(2)
// a clean exit on SIGTERM, so that a --cpu-prof run writes its profile
process.on('SIGTERM', () => process.exit(0))

if (kind === 'sim') {
  const {startSim} = await import('../dist/sim/server.js')
  // A huge time scale makes simulated latency and chunk gaps vanish: the bench measures transport.
  const sim = await startSim({port: 0, timeScale: 1_000_000, taskSeconds: 1})
  process.stdout.write(`READY ${sim.port}\n`)
} else if (kind === 'bare') {
  // The floor: the least a Node gateway can do. node:http in, one undici keep-alive Pool out,
  // the request body streamed up and the response streamed back chunk by chunk.
  const pool = new Pool(upstream, {connections: 128, pipelining: 1, keepAliveTimeout: 30_000})
  const server = createServer((req, res) => {
    const headers = {...req.headers}
    delete headers.host
    delete headers.connection
    pool
      .request({method: req.method, path: req.url, headers, body: req})
      .then(({statusCode, headers: upstreamHeaders, body}) => {
        delete upstreamHeaders.connection
        delete upstreamHeaders['keep-alive']
        delete upstreamHeaders['transfer-encoding']
        res.writeHead(statusCode, upstreamHeaders)
        body.on('data', (chunk) => res.write(chunk))
        body.on('end', () => res.end())
        body.on('error', () => res.destroy())
      })
      .catch(() => {
        res.writeHead(502).end()
      })
  })
  server.keepAliveTimeout = 30_000
  server.listen(0, '127.0.0.1', () => process.stdout.write(`READY ${server.address().port}\n`))
} else {
  process.stderr.write(`unknown server kind ${kind}\n`)
  process.exit(2)
}
