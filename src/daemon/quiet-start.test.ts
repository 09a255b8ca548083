import {afterEach, describe, expect, it} from 'vitest'

import {beginQuietStart, endQuietStart, endQuietStartAtFirst, isQuietStart} from './quiet-start.js'
import type {GatewayContext, GatewayRequest, Route} from './server.js'

afterEach(() => endQuietStart())

const route = (path: string, calls: string[]): Route => ({
  method: 'POST',
  path,
  family: 'chat',
  management: false,
  maxBodyBytes: 1,
  handler: () => void calls.push(path),
})
const call = (r: Route) => r.handler({} as GatewayRequest, {} as GatewayContext)

describe('the quiet start', () => {
  it('leaves a node given an option about the compiler as it is', () => {
    for (const option of ['--no-opt', '--jitless', '--max-opt=2', '--no_turbofan', '--turbofan'])
      expect(beginQuietStart([option], '')).toBe(false)
    expect(beginQuietStart([], '--jitless')).toBe(false)
    expect(isQuietStart()).toBe(false)
  })

  it('is only for Node 20 and 22: on Node 24 Maglev keeps what it compiled meanwhile from TurboFan', () => {
    expect(beginQuietStart([], '', 24)).toBe(false)
    expect(beginQuietStart([], '', 26)).toBe(false)
    expect(isQuietStart()).toBe(false)
    expect(beginQuietStart([], '', 22)).toBe(true)
    expect(isQuietStart()).toBe(true)
  })

  it('ends at the first request of any of the routes, which then get their own handlers back', () => {
    expect(beginQuietStart(['--trace-opt', '--max-old-space-size=100'], '')).toBe(true)
    const calls: string[] = []
    const routes = [route('/a', calls), route('/b', calls)]
    const own = routes.map((r) => r.handler)
    endQuietStartAtFirst(routes)
    expect(routes.map((r) => r.handler)).not.toEqual(own)
    void call(routes[1]!)
    expect(isQuietStart()).toBe(false)
    expect(routes.map((r) => r.handler)).toEqual(own)
    void call(routes[0]!)
    expect(calls).toEqual(['/b', '/a'])
  })

  it('wraps nothing when the start is not quiet', () => {
    const routes = [route('/a', [])]
    const own = routes[0]!.handler
    endQuietStartAtFirst(routes)
    expect(routes[0]!.handler).toBe(own)
  })
})
