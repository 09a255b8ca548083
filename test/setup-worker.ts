/**
 * Runs in every test worker before its tests. Ink hides the cursor of the fake terminal streams
 * the screen and app tests render to; its dependency restore-cursor then writes a raw
 * `ESC[?25h` to the worker's real stderr when the worker exits, which landed in the test output
 * (issue 25). A worker's stderr that is no terminal has no cursor to restore: that one write is
 * dropped there, nothing else.
 */
const SHOW_CURSOR = '\u001B[?25h'

if (!process.stderr.isTTY) {
  const write = process.stderr.write.bind(process.stderr) as (...args: unknown[]) => boolean
  process.stderr.write = ((chunk: unknown, ...rest: unknown[]) =>
    chunk === SHOW_CURSOR ? true : write(chunk, ...rest)) as typeof process.stderr.write
}
