import {readFileSync, statSync, writeFileSync} from 'node:fs'
import {createServer} from 'node:http'
import type {Server} from 'node:http'
import type {AddressInfo} from 'node:net'
import {join} from 'node:path'

import {afterAll, afterEach, beforeAll, beforeEach, describe, expect, it} from 'vitest'

import {json, runCli, tempHome} from './helpers/cli.js'
import {writeFixtureHistory} from './helpers/history.js'

/** A price list in genai-prices' data format: one provider, one model, distinctive prices. */
const PRICE_DATA = [
  {
    id: 'anthropic',
    name: 'Anthropic',
    api_pattern: 'https://api\\.anthropic\\.com',
    model_match: {starts_with: 'claude'},
    models: [
      {
        id: 'claude-sonnet-4',
        match: {starts_with: 'claude-sonnet-4'},
        prices: {input_mtok: 1000, output_mtok: 2000, cache_read_mtok: 100, cache_write_mtok: 1250},
      },
    ],
  },
]

describe('gwctl usage prices [update]', () => {
  let server: Server
  let origin: string
  /** What the next request to the fixture server gets: status and body. */
  let answer: {status: number; body: string}
  let requests = 0
  beforeAll(async () => {
    server = createServer((req, res) => {
      requests++
      res.writeHead(answer.status, {'content-type': 'application/json'}).end(answer.body)
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

  let home: {home: string; cleanup: () => void}
  beforeEach(() => {
    home = tempHome()
    writeFixtureHistory(join(home.home, 'user-home'))
    answer = {status: 200, body: JSON.stringify(PRICE_DATA)}
    requests = 0
  })
  afterEach(() => home.cleanup())
  const cli = (args: string[]) =>
    runCli(args, {home: home.home, env: {GWCTL_PRICES_URL: `${origin}/data.json`}})
  const claudeCost = async (): Promise<number | null> => {
    const r = await cli([
      'usage',
      '--source',
      'history',
      '--tool',
      'claude-code',
      '--pivot',
      'model',
      '--json',
    ])
    expect(r.exitCode).toBe(0)
    const rows = json(r).rows as Array<{key: string; costUSD: number | null}>
    return rows.find((x) => x.key === 'claude-sonnet-4-20250514')!.costUSD
  }

  it('uses the bundled table offline, and the downloaded one only after `update`, until `--reset`', async () => {
    const status = await cli(['usage', 'prices', '--json'])
    expect(status.exitCode).toBe(0)
    expect(json(status)).toMatchObject({table: 'bundled'})
    expect(json(status).models).toBeGreaterThan(100)
    const bundled = await claudeCost()
    // nothing was downloaded by reading usage or the status
    expect(requests).toBe(0)
    expect(bundled).toBeGreaterThan(0)

    const update = await cli(['usage', 'prices', 'update', '--json'])
    expect(update.exitCode).toBe(0)
    expect(requests).toBe(1)
    expect(json(update)).toMatchObject({
      table: 'updated',
      providers: 1,
      models: 1,
      source: `${origin}/data.json`,
    })
    const file = join(home.home, 'prices.json')
    expect(statSync(file).mode & 0o777).toBe(0o600)

    // the fixture's Claude rows: in 13, out 27, cache read 50, cache write 100 tokens at the
    // downloaded prices (USD per 1M tokens: 1000 / 2000 / 100 / 1250)
    expect(await claudeCost()).toBeCloseTo((13 * 1000 + 27 * 2000 + 50 * 100 + 100 * 1250) / 1e6, 9)
    const human = await cli(['usage', 'prices'])
    expect(human.stdout).toContain(`downloaded`)
    expect(human.stdout).toContain(`${origin}/data.json`)

    const reset = await cli(['usage', 'prices', 'update', '--reset'])
    expect(reset.exitCode).toBe(0)
    expect(reset.stdout).toContain('Back to the bundled price table.')
    expect(await claudeCost()).toBeCloseTo(bundled!, 12)
  })

  it('refuses data it cannot price from, a failed download and a bad URL, keeping the table in use', async () => {
    expect((await cli(['usage', 'prices', 'update'])).exitCode).toBe(0)
    const file = join(home.home, 'prices.json')
    const before = readFileSync(file, 'utf8')

    answer = {status: 200, body: '{"providers": "not a list"}'}
    const notList = await cli(['usage', 'prices', 'update'])
    expect(notList.exitCode).toBe(5)
    expect(notList.stderr).toContain('is not a list of providers')
    expect(notList.stderr).toContain('Nothing changed')

    answer = {status: 200, body: JSON.stringify([{id: 'x', name: 'X', models: 'none'}])}
    const broken = await cli(['usage', 'prices', 'update', '--json'])
    expect(broken.exitCode).toBe(5)
    expect(json(broken).error).toMatchObject({code: 'prices_invalid'})

    answer = {status: 503, body: 'down'}
    const down = await cli(['usage', 'prices', 'update'])
    expect(down.exitCode).toBe(5)
    expect(down.stderr).toContain('answered 503')

    answer = {status: 200, body: '[{"id": '}
    expect((await cli(['usage', 'prices', 'update'])).stderr).toContain('is not JSON')

    const badUrl = await cli(['usage', 'prices', 'update', '--url', 'file:///etc/passwd'])
    expect(badUrl.exitCode).toBe(2)
    expect(badUrl.stderr).toContain('must be http(s)')

    expect(readFileSync(file, 'utf8')).toBe(before)
    expect(json(await cli(['usage', 'prices', '--json']))).toMatchObject({table: 'updated', models: 1})
  })

  it('says so when prices.json is damaged, and prices from the bundled table', async () => {
    writeFileSync(join(home.home, 'prices.json'), '{"half', {mode: 0o600})
    const status = await cli(['usage', 'prices', '--json'])
    expect(status.exitCode).toBe(0)
    expect(json(status)).toMatchObject({table: 'bundled'})
    expect(json(status).problem).toContain('is not JSON')
    expect(await claudeCost()).toBeGreaterThan(0)
  })
})
