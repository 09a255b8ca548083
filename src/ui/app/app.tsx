/**
 * The terminal app: header (gateway state, port, uptime, version), view tabs, the current view,
 * a hint bar, and modal boxes (`modal.tsx`: confirmation, a new key shown once, a request's
 * details, a policy picker, help). Keyboard (`use-keys.ts`): Tab / 1-5 switch views, arrows +
 * Enter select, / filters requests, ? help, q quits. The app keeps the state; the views
 * (`views/`) draw it. Live: it follows the gateway's event stream and applies each event to its data.
 */
import {homedir} from 'node:os'

import {Box, Text, useStdout} from 'ink'
import {useCallback, useEffect, useMemo, useRef, useState} from 'react'

import {uptimeLabel} from '../../cli/dashboard-text.js'
import type {AppActions, UsagePivot} from './data.js'
import type {UsageSource} from '../../store/usage-query.js'
import type {Modal} from './modal.js'
import {ModalBox} from './modal.js'
import type {AgentAction, AppAgent, AppData, ViewName} from './model.js'
import {
  EMPTY_DATA,
  VIEWS,
  agentActions,
  agentNames,
  bindingOf,
  cell,
  matchesFilter,
  startOfDay,
} from './model.js'
import {routeRows, withBreaker} from './model-routes.js'
import {applyRequest, todayCost} from './model-usage.js'
import type {Editing} from './use-keys.js'
import {useKeys} from './use-keys.js'
import {AgentsView} from './views/agents.js'
import {RequestsView} from './views/requests.js'
import {RoutesView} from './views/routes.js'
import {UsageView} from './views/usage.js'
import {BlocksTab} from './views/blocks.js'

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
  /** The user's home folder, shown as `~` in paths (tests pin it). */
  home?: string
}

const HINTS: Record<ViewName, string> = {
  Agents: '↑↓ select',
  Routes: '↑↓ select · Enter reorder targets',
  Requests: '↑↓ select · Enter details · / filter',
  Usage: '←→ group by · s source · ↑↓ select',
  Windows: '5-hour windows, burn rate, weeks',
}

/** The Agents view's hint: only the keys that apply to the selected agent. */
function agentsHint(agent: AppAgent | undefined, policies: AppData['policies']): string {
  const words: Record<AgentAction, string> = {
    bind: agent?.binding?.state === 'stale' ? 'e rebind' : 'e bind',
    unbind: 'd unbind',
    rotate: 'r rotate key',
    policy: 'p policy',
  }
  const actions = agentActions(agent, policies)
  return actions.length > 0 ? actions.map((a) => words[a]).join(' · ') : HINTS.Agents
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
  home = homedir(),
}: AppProps) {
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
    Windows: 0,
  })
  const [filter, setFilter] = useState('')
  const [typing, setTyping, typingRef] = useLatest(false)
  const [pivot, setPivot] = useState<UsagePivot>('agent')
  const [source, setSource, sourceRef] = useLatest<UsageSource>('gateway')
  const [modal, setModal, modalRef] = useLatest<Modal | null>(null)
  const [editing, setEditing, editingRef] = useLatest<Editing | null>(null)
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
    Windows: 0,
  }
  const sel = Math.min(selected[view], Math.max(0, counts[view] - 1))
  useKeys({
    actions,
    data,
    up,
    routes,
    requestRows,
    counts,
    pivot,
    setPivot,
    signal: controller.current.signal,
    reload,
    viewRef,
    setView,
    selectedRef,
    setSelected,
    typingRef,
    setTyping,
    modalRef,
    setModal,
    editingRef,
    setEditing,
    sourceRef,
    setSource,
    setFilter,
    setStatus,
    setData,
    home,
  })

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
          <AgentsView {...viewProps} costs={costs} home={home} />
        ) : view === 'Routes' ? (
          <RoutesView {...viewProps} editing={editing} />
        ) : view === 'Requests' ? (
          <RequestsView {...viewProps} filter={filter} rows={requestRows} />
        ) : view === 'Windows' ? (
          <BlocksTab {...viewProps} subscribe={actions.subscribe} />
        ) : (
          <UsageView {...viewProps} pivot={pivot} source={source} />
        )}
      </Box>
      <Text dimColor={color}>
        {cell(
          status
            ? status
            : `${view === 'Agents' ? agentsHint(data.agents[sel], data.policies) : HINTS[view]} · Tab view · ? help · q quit`,
          width - 1,
        )}
      </Text>
    </Box>
  )
}

/** A one-line label of an agent's state, for logs and tests. */
export function agentSummary(a: AppAgent): string {
  return `${a.name} ${bindingOf(a)} ${a.policyId}`
}
