/**
 * The shared full-screen render: the alternate screen around the app (restored on exit), an
 * aborted signal unmounts, NO_COLOR / FORCE_COLOR=0 turn colours off.
 */
import {PassThrough} from 'node:stream'

import {Text} from 'ink'
import {describe, expect, it} from 'vitest'

import {colorEnabled, runScreen} from './screen.js'

function fakeTerminal() {
  const stream = Object.assign(new PassThrough(), {isTTY: true, columns: 40, rows: 10})
  let written = ''
  stream.on('data', (chunk: Buffer) => (written += chunk.toString()))
  return {stream: stream as unknown as NodeJS.WriteStream, written: () => written}
}

describe('runScreen', () => {
  it('draws on the alternate screen and gives the shell its screen back when the signal aborts', async () => {
    const t = fakeTerminal()
    const controller = new AbortController()
    const done = runScreen(<Text>hello app</Text>, {
      signal: controller.signal,
      stdout: t.stream,
      patchConsole: false,
    })
    await new Promise((resolve) => setTimeout(resolve, 50))
    controller.abort()
    await done
    const out = t.written()
    expect(out.startsWith('\u001b[?1049h\u001b[H')).toBe(true)
    expect(out).toContain('hello app')
    expect(out.endsWith('\u001b[?1049l')).toBe(true)
  })

  it('stays inline when asked (the live dashboard), and ends with a newline', async () => {
    const t = fakeTerminal()
    const controller = new AbortController()
    const done = runScreen(<Text>inline</Text>, {
      signal: controller.signal,
      stdout: t.stream,
      alternateScreen: false,
      patchConsole: false,
    })
    await new Promise((resolve) => setTimeout(resolve, 50))
    controller.abort()
    await done
    expect(t.written()).toContain('inline')
    expect(t.written()).not.toContain('\u001b[?1049')
    // the shell's prompt goes on a line of its own, not glued to the last frame's last line
    expect(t.written().endsWith('\n')).toBe(true)
  })
})

describe('colorEnabled', () => {
  it('is off under NO_COLOR (non-empty) and FORCE_COLOR=0, on otherwise', () => {
    expect(colorEnabled({})).toBe(true)
    expect(colorEnabled({NO_COLOR: '1'})).toBe(false)
    expect(colorEnabled({NO_COLOR: ''})).toBe(true)
    expect(colorEnabled({FORCE_COLOR: '0'})).toBe(false)
  })
})
