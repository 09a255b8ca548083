// Preloaded (`node --require bench/memory-probe.cjs`) into a process bench/memory.js measures:
// keeps, at the process's highest RSS (sampled every 100 ms), process.memoryUsage(), V8's heap
// spaces and /proc/self/smaps summed by mapping, and writes them as JSON to $GWCTL_MEMORY_PROBE
// when the process exits. Nothing of it ships: the daemon never loads it on its own.
const {readFileSync, writeFileSync} = require('node:fs')
const {setInterval} = require('node:timers')
const v8 = require('node:v8')

const MB = (bytes) => Math.round((bytes / 1048576) * 10) / 10

/** Resident MB by mapping: the node binary, native addons, shared libraries, glibc's main heap, anonymous. */
function mappings() {
  const out = {}
  let name
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \d+\s*(.*)$/.exec(line)
    if (head) {
      const path = head[1].trim()
      if (!path) name = 'anonymous (V8 heap, thread arenas, stacks)'
      else if (path === '[heap]') name = "glibc's main heap (the main thread's malloc)"
      else if (path.startsWith('[')) name = path
      else if (path.endsWith('.node')) name = `addon ${path.split('/').pop()}`
      else if (/\.so(\.|$)/.test(path)) name = 'shared libraries'
      else if (path === process.execPath || path.endsWith('/node')) name = 'node binary'
      else name = 'other files'
      continue
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line)
    if (rss && name) out[name] = (out[name] ?? 0) + Number(rss[1]) / 1024
  }
  for (const k of Object.keys(out)) out[k] = Math.round(out[k] * 10) / 10
  return out
}

function snapshot() {
  const usage = Object.fromEntries(Object.entries(process.memoryUsage()).map(([k, v]) => [k, MB(v)]))
  const spaces = {}
  for (const s of v8.getHeapSpaceStatistics())
    if (s.space_size > 0) spaces[s.space_name.replace(/_space$/, '')] = MB(s.physical_space_size)
  return {usage, spaces, mappings: mappings()}
}

const state = {peakRssMB: 0, peak: undefined}
setInterval(() => {
  const rss = process.memoryUsage.rss()
  if (rss > (state.peakRssMB + 1) * 1048576) {
    state.peakRssMB = MB(rss)
    state.peak = snapshot()
  }
}, 100).unref()
process.on('exit', () => {
  if (process.env.GWCTL_MEMORY_PROBE) writeFileSync(process.env.GWCTL_MEMORY_PROBE, JSON.stringify(state))
})
