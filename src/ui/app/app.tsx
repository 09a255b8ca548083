/**
 * The terminal app: header (gateway state, port, uptime, version), view tabs, the current view,
 * a hint bar, and modal boxes (confirmation, a new key shown once, a request's details, a policy
 * picker, help). Keyboard: Tab / 1-4 switch views, arrows + Enter select, / filters requests,
 * ? help, q quits. Live: it follows the gateway's event stream and applies each event to its data.
 */
import type {Key} from 'ink'
import {Box, Text, useApp, useInput, useStdout} from 'ink'
import {useCallback, useEffect, useMemo, useRef, useState} from 'react'

import {uptimeLabel} from '../../cli/dashboard-text.js'
import type {LogRow} from '../../store/log-query.js'
import type {AppActions, UsagePivot} from './data.js'
import {USAGE_PIVOTS} from './data.js'
import type {UsageSource} from '../../store/usage-query.js'
import {USAGE_SOURCES} from '../../store/usage-query.js'
import type {AppAgent, AppData} from './model.js'
import {EMPTY_DATA, agentNames, bindingOf, cell, matchesFilter, startOfDay} from './model.js'
import {routeRows, withBreaker} from './model-routes.js'
import {applyRequest, todayCost} from './model-usage.js'
import {AgentsView} from './views/agents.js'
import {RequestDetail, RequestsView} from './views/requests.js'
import {RoutesView} from './views/routes.js'
import {UsageView} from './views/usage.js'

export const VIEWS = ['Agents', 'Routes', 'Requests', 'Usage'] as const
export type ViewName = (typeof VIEWS)[number]

type Modal =
  | {kind: 'confirm'; title: string; run: () => Promise<void>}
  | {kind: 'key'; title: string; key: string}
  | {kind: 'request'; row: LogRow}
  | {kind: 'policy'; agent: AppAgent; selected: number}
  | {kind: 'help'}
  | {kind: 'message'; text: string; error: boolean}

export interface AppProps {
  actions: AppActions
  initial?: AppData
  initialView?: ViewName
  /** Colours (false under NO_COLOR). */
  color?: boolean
  /** Size when the terminal does not say (tests). */
  columns?: number
  rows?: number
  /** The clock (tests pin it). */
  now?: () => number
}

const HINTS: Record<ViewName, string> = {
  Agents: 'e enable · d disable · r rotate key · p policy',
  Routes: '↑↓ select · Enter reorder targets',
  Requests: '↑↓ select · Enter details · / filter',
  Usage: '←→ group by · s source · ↑↓ select',
}

/** useState whose latest value is also readable at once (in a ref), before the next render. */
function useLatest<T>(initial: T): [T, (value: T) => void, {current: T}] {
  const [value, setValue] = useState<T>(initial)
  const ref = useRef<T>(initial)
  const set = useCallback((next: T) => {
    ref.current = next
    setValue(next)
  }, [])
  return [value, set, ref]
}

export function App({
  actions,
  initial,
  initialView = 'Agents',
  color = true,
  columns,
  rows,
  now = Date.now,
}: AppProps) {
  const {exit} = useApp()
  const {stdout} = useStdout()
  const width = Math.max(60, columns ?? stdout?.columns ?? 80)
  const height = Math.max(16, rows ?? stdout?.rows ?? 24)
  const [data, setData] = useState<AppData>(initial ?? EMPTY_DATA)
  const [up, setUp] = useState<boolean>(Boolean(initial?.gateway))
  const [view, setView, viewRef] = useLatest<ViewName>(initialView)
  const [selected, setSelected, selectedRef] = useLatest<Record<ViewName, number>>({
    Agents: 0,
    Routes: 0,
    Requests: 0,
    Usage: 0,
  })
  const [filter, setFilter] = useState('')
  const [typing, setTyping, typingRef] = useLatest(false)
  const [pivot, setPivot] = useState<UsagePivot>('agent')
  const [source, setSource, sourceRef] = useLatest<UsageSource>('gateway')
  const [modal, setModal, modalRef] = useLatest<Modal | null>(null)
  const [editing, setEditing, editingRef] = useLatest<{targets: string[]; selected: number} | null>(null)
  const [status, setStatus] = useState<string>('')
  const [, setTick] = useState(0)
  const reloadTimer = useRef<NodeJS.Timeout | undefined>(undefined)
  const controller = useRef(new AbortController())

  const reload = useCallback(async () => {
    try {
      const next = await actions.load(controller.current.signal)
      setData(next)
      setUp(next.gateway !== null)
    } catch (error) {
      if (!controller.current.signal.aborted) setStatus((error as Error).message)
    }
  }, [actions])

  /** Coalesces bursts of events into one reload. */
  const reloadSoon = useCallback(
    (ms = 300) => {
      if (reloadTimer.current) return
      reloadTimer.current = setTimeout(() => {
        reloadTimer.current = undefined
        void reload()
      }, ms)
    },
    [reload],
  )

  useEffect(() => {
    const signal = controller.current.signal
    if (!initial) void reload()
    void actions.subscribe(
      {
        onUp: () => {
          setUp(true)
          reloadSoon(0)
        },
        onDown: () => setUp(false),
        onEvent: (event) => {
          // Each event changes only the part of the data it is about: no reload, so only the
          // lines that show it redraw (a full reload happens on connect and reconnect only).
          if (event.type === 'request') {
            // the history source does not count gateway requests
            const usage = sourceRef.current !== 'history'
            setData((d) => applyRequest(d, event.entry, actions.cost?.(event.entry), {usage}))
          } else if (event.type === 'breaker') {
            setData((d) => ({
              ...d,
              routes: withBreaker(d.routes, event.provider, event.state, event.retryAt),
            }))
          } else if (event.type === 'agent' && actions.loadAgents) {
            actions
              .loadAgents(signal)
              .then((agents) => setData((d) => ({...d, agents})))
              .catch(() => undefined)
          } else if (event.type === 'usage' && actions.loadUsage) {
            actions
              .loadUsage(signal, sourceRef.current)
              .then((usage) => setData((d) => ({...d, usage})))
              .catch(() => undefined)
          } else reloadSoon(0)
        },
      },
      signal,
    )
    return () => {
      controller.current.abort()
      if (reloadTimer.current) clearTimeout(reloadTimer.current)
    }
  }, [])

  // Uptime and open-breaker countdowns tick once a second; nothing else polls.
  useEffect(() => {
    const timer = setInterval(() => setTick((t) => t + 1), 1000)
    timer.unref?.()
    return () => clearInterval(timer)
  }, [])

  const names = useMemo(() => agentNames(data.agents), [data.agents])
  const requestRows = useMemo(
    () => data.requests.filter((r) => matchesFilter(r, filter, names)),
    [data.requests, filter, names],
  )
  const routes = useMemo(() => routeRows(data), [data])
  const day = startOfDay(now())
  const costs = useMemo(
    () => (actions.cost ? todayCost(data.history, day, actions.cost) : undefined),
    [data.history, day, actions],
  )
  const counts: Record<ViewName, number> = {
    Agents: data.agents.length,
    Routes: routes.length,
    Requests: requestRows.length,
    Usage: (data.usage[pivot] ?? []).length,
  }
  const sel = Math.min(selected[view], Math.max(0, counts[view] - 1))
  const select = (n: number) => {
    const v = viewRef.current
    setSelected({...selectedRef.current, [v]: Math.max(0, Math.min(n, counts[v] - 1))})
  }

  const run = (title: string, action: () => Promise<void>) => setModal({kind: 'confirm', title, run: action})
  const perform = async (action: () => Promise<void>) => {
    setModal(null)
    setStatus('working…')
    try {
      await action()
      setStatus((s) => (s === 'working…' ? '' : s))
      await reload()
    } catch (error) {
      setModal({kind: 'message', text: (error as Error).message, error: true})
      setStatus('')
    }
  }

  const onKey = (input: string, key: Key): void => {
    // Keys that arrive in one chunk (typed fast, pasted) are one key each, except in the filter.
    if (input.length > 1 && !typingRef.current && !key.ctrl && !key.meta) {
      for (const ch of input) onKey(ch, {...key, return: ch === '\r'})
      return
    }
    // Keys typed faster than the screen redraws must see the state the previous key left.
    const modal = modalRef.current
    const typing = typingRef.current
    const editing = editingRef.current
    const view = viewRef.current
    const sel = Math.min(selectedRef.current[view], Math.max(0, counts[view] - 1))
    if (modal) {
      if (modal.kind === 'confirm') {
        if (input === 'y' || input === 'Y') void perform(modal.run)
        else if (input === 'n' || input === 'N' || key.escape) setModal(null)
      } else if (modal.kind === 'policy') {
        if (key.upArrow) setModal({...modal, selected: Math.max(0, modal.selected - 1)})
        else if (key.downArrow)
          setModal({...modal, selected: Math.min(data.policies.length - 1, modal.selected + 1)})
        else if (key.escape) setModal(null)
        else if (key.return) {
          const policyId = data.policies[modal.selected]?.id
          const agent = modal.agent
          if (policyId)
            run(
              `Move ${agent.name} to policy ${policyId}? Its key is rotated: the new one is shown once.`,
              async () => {
                const k = await actions.setPolicy(agent, policyId)
                setModal({
                  kind: 'key',
                  title: `${agent.name} now uses policy ${policyId}. Its new key:`,
                  key: k,
                })
              },
            )
        }
      } else if (key.escape || key.return || input === 'q' || (modal.kind === 'help' && input === '?')) {
        setModal(null)
      }
      return
    }
    if (typing) {
      if (key.return || key.escape) setTyping(false)
      if (key.escape) setFilter('')
      else if (key.backspace || key.delete) setFilter((f) => f.slice(0, -1))
      else if (input && !key.ctrl && !key.meta && !key.return) setFilter((f) => f + input)
      return
    }
    if (editing) {
      const t = editing.targets
      const i = editing.selected
      if (key.escape) setEditing(null)
      else if (key.upArrow) setEditing({...editing, selected: Math.max(0, i - 1)})
      else if (key.downArrow) setEditing({...editing, selected: Math.min(t.length - 1, i + 1)})
      else if ((input === '+' || input === '-') && t.length > 1) {
        const j = input === '-' ? Math.max(0, i - 1) : Math.min(t.length - 1, i + 1)
        const next = [...t]
        ;[next[i], next[j]] = [next[j], next[i]]
        setEditing({targets: next, selected: j})
      } else if (input === 'a') {
        const r = routes[sel]
        run(
          `Write ${r.policyId}/${r.family} as ${t.join(' → ')} and restart the gateway (gateway restart: in-flight requests drain)?`,
          async () => {
            const text = await actions.reorder(r.policyId, r.family, t)
            setEditing(null)
            setStatus(text)
          },
        )
      }
      return
    }
    setStatus('')
    if (input === 'q' || (key.ctrl && input === 'c')) {
      exit()
      return
    }
    if (key.tab) {
      const i = VIEWS.indexOf(view)
      setView(VIEWS[(i + (key.shift ? VIEWS.length - 1 : 1)) % VIEWS.length])
      return
    }
    if (/^[1-4]$/.test(input)) return setView(VIEWS[Number(input) - 1])
    if (input === '?') return setModal({kind: 'help'})
    if (input === 'S' && !up)
      return run('Start the gateway (gwctl gateway start)?', async () =>
        setStatus(await actions.startGateway()),
      )
    if (key.upArrow || input === 'k') return select(sel - 1)
    if (key.downArrow || input === 'j') return select(sel + 1)
    if (key.pageUp) return select(sel - 10)
    if (key.pageDown) return select(sel + 10)
    if (view === 'Agents') {
      const agent = data.agents[sel]
      if (!agent) return
      if (input === 'e')
        run(`Enable the route binding of ${agent.name}?`, async () =>
          setStatus(await actions.setBinding(agent, true)),
        )
      else if (input === 'd')
        run(`Disable the route binding of ${agent.name}?`, async () =>
          setStatus(await actions.setBinding(agent, false)),
        )
      else if ((input === 'r' || input === 'p') && agent.keyed === false)
        setModal({
          kind: 'message',
          text: `${agent.name} holds no key yet: enable it (e) to bind it to the gateway with a key of its own.`,
          error: true,
        })
      else if (input === 'r')
        run(`Rotate the key of ${agent.name}? The old key stops working now.`, async () => {
          const k = await actions.rotateKey(agent)
          setModal({kind: 'key', title: `New key of ${agent.name} (shown once; copy it now):`, key: k})
        })
      else if (input === 'p' && data.policies.length > 0)
        setModal({
          kind: 'policy',
          agent,
          selected: Math.max(
            0,
            data.policies.findIndex((p) => p.id === agent.policyId),
          ),
        })
    } else if (view === 'Routes') {
      const r = routes[sel]
      if (key.return && r) {
        setEditing({targets: [...r.targets], selected: 0})
      }
    } else if (view === 'Requests') {
      if (input === '/') {
        setTyping(true)
        setFilter('')
      } else if (key.return && requestRows[sel]) setModal({kind: 'request', row: requestRows[sel]})
    } else if (view === 'Usage') {
      const i = USAGE_PIVOTS.indexOf(pivot)
      if (key.rightArrow || input === 'l') setPivot(USAGE_PIVOTS[(i + 1) % USAGE_PIVOTS.length])
      if (key.leftArrow || input === 'h')
        setPivot(USAGE_PIVOTS[(i + USAGE_PIVOTS.length - 1) % USAGE_PIVOTS.length])
      if (input === 's' && actions.loadUsage) {
        const next = USAGE_SOURCES[(USAGE_SOURCES.indexOf(sourceRef.current) + 1) % USAGE_SOURCES.length]
        setSource(next)
        setStatus(`loading usage from ${next}…`)
        actions
          .loadUsage(controller.current.signal, next)
          .then((usage) => {
            if (sourceRef.current !== next) return
            setData((d) => ({...d, usage}))
            setStatus('')
          })
          .catch((error: Error) => setStatus(error.message))
      }
    }
  }
  // One stable handler that calls the latest render's onKey: Ink re-subscribes a new handler in an
  // effect after the screen is drawn, and a key arriving between the two (a busy machine) went to
  // the previous render's closure, e.g. an Enter on a request row that closure had not seen yet.
  const latestOnKey = useRef(onKey)
  latestOnKey.current = onKey
  const handleKey = useCallback((input: string, key: Key) => latestOnKey.current(input, key), [])
  useInput(handleKey)

  const t = now()
  const bodyHeight = height - 4
  const viewProps = {data, width, height: bodyHeight, selected: sel, now: t, color}
  const g = data.gateway
  return (
    <Box flexDirection="column" width={width}>
      <Box>
        <Text bold>{'gwctl '}</Text>
        {up && g ? (
          <Text color={color ? 'green' : undefined}>
            {cell(
              `● running 127.0.0.1:${g.port} · up ${uptimeLabel(g.uptime_s + Math.max(0, (t - data.loadedAt) / 1000))} · v${g.version}`,
              width - 6,
            )}
          </Text>
        ) : (
          <Text color={color ? 'red' : undefined}>{cell('○ gateway stopped · S starts it', width - 6)}</Text>
        )}
      </Box>
      <Text>
        {VIEWS.map((v, i) => (
          <Text key={v} inverse={v === view && color} bold={v === view}>
            {v === view && !color ? `[${i + 1} ${v}]` : ` ${i + 1} ${v} `}
          </Text>
        ))}
        {view === 'Requests' && (filter || typing)
          ? `  filter: ${cell(filter, 20).trimEnd()}${typing ? '▏' : ''}`
          : ''}
      </Text>
      <Box flexDirection="column" height={bodyHeight} marginTop={1}>
        {modal ? (
          <ModalBox modal={modal} width={width} policies={data.policies.map((p) => p.id)} names={names} />
        ) : view === 'Agents' ? (
          <AgentsView {...viewProps} costs={costs} />
        ) : view === 'Routes' ? (
          <RoutesView {...viewProps} editing={editing} />
        ) : view === 'Requests' ? (
          <RequestsView {...viewProps} filter={filter} rows={requestRows} />
        ) : (
          <UsageView {...viewProps} pivot={pivot} source={source} />
        )}
      </Box>
      <Text dimColor={color}>
        {cell(status ? status : `${HINTS[view]} · Tab view · ? help · q quit`, width - 1)}
      </Text>
    </Box>
  )
}

function ModalBox({
  modal,
  width,
  policies,
  names,
}: {
  modal: Modal
  width: number
  policies: string[]
  names: Map<string, string>
}) {
  const w = Math.min(width - 4, 76)
  if (modal.kind === 'request') return <RequestDetail row={modal.row} names={names} width={w + 4} />
  const lines: string[] = []
  let title = ''
  let footer = ''
  if (modal.kind === 'confirm') {
    title = 'Confirm'
    lines.push(modal.title)
    footer = 'y yes · n no'
  } else if (modal.kind === 'key') {
    title = 'New key'
    lines.push(modal.title, '', modal.key)
    footer = 'Enter or Esc dismisses; the key is not shown again'
  } else if (modal.kind === 'message') {
    title = modal.error ? 'Error' : 'Done'
    lines.push(modal.text)
    footer = 'Enter or Esc closes'
  } else if (modal.kind === 'help') {
    title = 'Keys'
    lines.push(
      'Tab / Shift-Tab, 1-4   switch view (Agents, Routes, Requests, Usage)',
      '↑ ↓ (j k), PgUp PgDn   select',
      'Enter                  open / reorder',
      '/                      filter requests: 2xx 4xx 5xx fallback or text',
      'e d                    enable / disable the agent’s route binding',
      'r                      rotate the agent’s key',
      'p                      change the agent’s policy',
      '← → (h l)              usage: group by agent, model, provider, tool, day, …',
      's                      usage: source gateway, history (agents’ logs), all',
      'S                      start the gateway when it is stopped',
      '?                      this help · q quit',
    )
    footer = 'Esc or ? closes'
  } else if (modal.kind === 'policy') {
    title = `Policy of ${modal.agent.name}`
    policies.forEach((p, i) =>
      lines.push(`${i === modal.selected ? '›' : ' '} ${p}${p === modal.agent.policyId ? ' (current)' : ''}`),
    )
    footer = '↑↓ select · Enter choose · Esc cancel'
  }
  const wrap = (text: string) => {
    const out: string[] = []
    for (let s = text; ;) {
      if (s.length <= w) {
        out.push(s)
        break
      }
      const cut = s.lastIndexOf(' ', w) > w / 2 ? s.lastIndexOf(' ', w) : w
      out.push(s.slice(0, cut))
      s = s.slice(cut).trimStart()
    }
    return out
  }
  return (
    <Box
      flexDirection="column"
      borderStyle={modal.kind === 'key' ? 'double' : 'single'}
      paddingX={1}
      width={w + 4}
    >
      <Text bold>{cell(title, w)}</Text>
      {lines.flatMap(wrap).map((l, i) => (
        <Text key={i}>{modal.kind === 'key' && l.startsWith('gw-') ? l : cell(l, w)}</Text>
      ))}
      <Text dimColor>{cell(footer, w)}</Text>
    </Box>
  )
}

/** A one-line label of an agent's state, for logs and tests. */
export function agentSummary(a: AppAgent): string {
  return `${a.name} ${bindingOf(a)} ${a.policyId}`
}
