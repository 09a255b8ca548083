/**
 * Which process listens on a TCP port, where that can be found: Linux `/proc/net/tcp{,6}` and
 * `/proc/<pid>/fd`, else `lsof`. Only processes of the same user are visible without root.
 */
import {spawnSync} from 'node:child_process'
import {createServer} from 'node:net'
import {readFileSync, readdirSync, readlinkSync} from 'node:fs'

export interface PortHolder {
  pid: number
  command: string
}

function listeningInodes(port: number): Set<string> {
  const inodes = new Set<string>()
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0')
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string
    try {
      text = readFileSync(file, 'utf8')
    } catch {
      continue
    }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/)
      // cols: sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
      if (cols.length < 10 || cols[3] !== '0A') continue
      if (cols[1].split(':')[1] === hexPort) inodes.add(cols[9])
    }
  }
  return inodes
}

function commandOf(pid: number): string {
  try {
    const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ')
    return cmd || readFileSync(`/proc/${pid}/comm`, 'utf8').trim()
  } catch {
    return ''
  }
}

function fromProc(port: number): PortHolder | undefined {
  const inodes = listeningInodes(port)
  if (inodes.size === 0) return undefined
  let pids: string[]
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d))
  } catch {
    return undefined
  }
  for (const pid of pids) {
    let fds: string[]
    try {
      fds = readdirSync(`/proc/${pid}/fd`)
    } catch {
      continue
    }
    for (const fd of fds) {
      let link: string
      try {
        link = readlinkSync(`/proc/${pid}/fd/${fd}`)
      } catch {
        continue
      }
      const m = /^socket:\[(\d+)\]$/.exec(link)
      if (m && inodes.has(m[1])) return {pid: Number(pid), command: commandOf(Number(pid))}
    }
  }
  return undefined
}

function fromLsof(port: number): PortHolder | undefined {
  const result = spawnSync('lsof', ['-nP', `-iTCP:${port}`, '-sTCP:LISTEN', '-Fpc'], {
    encoding: 'utf8',
    timeout: 3000,
  })
  if (result.status !== 0 || !result.stdout) return undefined
  const pid = /^p(\d+)$/m.exec(result.stdout)?.[1]
  const command = /^c(.+)$/m.exec(result.stdout)?.[1] ?? ''
  return pid ? {pid: Number(pid), command} : undefined
}

function fromSs(port: number): PortHolder | undefined {
  const result = spawnSync('ss', ['-Hltnp', `sport = :${port}`], {encoding: 'utf8', timeout: 3000})
  if (result.status !== 0 || !result.stdout) return undefined
  const m = /users:\(\("([^"]*)",pid=(\d+)/.exec(result.stdout)
  return m ? {pid: Number(m[2]), command: m[1]} : undefined
}

/** The process listening on `port`, when it can be found. */
export function findPortHolder(port: number): PortHolder | undefined {
  return process.platform === 'linux' ? (fromProc(port) ?? fromSs(port) ?? fromLsof(port)) : fromLsof(port)
}

/** True when nothing accepts a listen on 127.0.0.1:`port` right now. */
export async function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer()
    server.once('error', () => resolve(false))
    server.listen({port, host: '127.0.0.1', exclusive: true}, () => server.close(() => resolve(true)))
  })
}

/** "port 4317 is taken by pid 123 (node server.js)" or "port 4317 is taken by another process". */
export function describePortTaken(port: number): string {
  const holder = findPortHolder(port)
  if (!holder) return `Port ${port} on 127.0.0.1 is taken by another process.`
  const oneLine = holder.command.replace(/\s+/g, ' ').trim()
  const command = oneLine.length > 120 ? oneLine.slice(0, 117) + '...' : oneLine
  return `Port ${port} on 127.0.0.1 is taken by pid ${holder.pid}${command ? ` (${command})` : ''}.`
}
