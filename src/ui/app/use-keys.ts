/**
 * The terminal app's keyboard: one handler for every key, by what is on screen (a modal box, the
 * requests filter being typed, a route being reordered, else the current view). The app keeps
 * its state and passes it in; keys typed faster than the screen redraws read the state the
 * previous key left through the refs of that state.
 */
import type {Key} from 'ink'
import {useApp, useInput} from 'ink'
import type {Dispatch, SetStateAction} from 'react'
import {useCallback, useRef} from 'react'

import type {LogRow} from '../../store/log-query.js'
import type {UsageSource} from '../../store/usage-query.js'
import {USAGE_SOURCES} from '../../store/usage-query.js'
import type {ActionResult, AppActions, StartPlan, UsagePivot} from './data.js'
import {USAGE_PIVOTS} from './data.js'
import type {Modal} from './modal.js'
import type {AgentAction, AppAgent, AppData, ViewName} from './model.js'
import {VIEWS, agentActions, bindable, isBound, shortPath} from './model.js'
import type {RouteRow} from './model-routes.js'

/** A route's targets being reordered, and the selected one. */
export interface Editing {
  targets: string[]
  selected: number
}

/** What the keys read and change of the app's state. */
export interface KeyContext {
  actions: AppActions
  data: AppData
  /** Whether the gateway runs. */
  up: boolean
  routes: RouteRow[]
  /** The requests the filter lets through. */
  requestRows: LogRow[]
  /** Rows of each view (to keep the selection on one). */
  counts: Record<ViewName, number>
  pivot: UsagePivot
  setPivot: (pivot: UsagePivot) => void
  /** Aborted when the app ends. */
  signal: AbortSignal
  reload: () => Promise<void>
  viewRef: {current: ViewName}
  setView: (view: ViewName) => void
  selectedRef: {current: Record<ViewName, number>}
  setSelected: (selected: Record<ViewName, number>) => void
  typingRef: {current: boolean}
  setTyping: (typing: boolean) => void
  modalRef: {current: Modal | null}
  setModal: (modal: Modal | null) => void
  editingRef: {current: Editing | null}
  setEditing: (editing: Editing | null) => void
  sourceRef: {current: UsageSource}
  setSource: (source: UsageSource) => void
  setFilter: Dispatch<SetStateAction<string>>
  setStatus: Dispatch<SetStateAction<string>>
  setData: Dispatch<SetStateAction<AppData>>
  /** The user's home folder, shown as `~` in paths. */
  home?: string
}

const AGENT_KEYS: Record<string, AgentAction | undefined> = {e: 'bind', d: 'unbind', r: 'rotate', p: 'policy'}

/** Why a key does nothing on this agent (said in the hint bar). */
function notApplicable(agent: AppAgent, action: AgentAction): string {
  const name = agent.name
  if (action === 'bind' || action === 'unbind') {
    if (agent.parentAgentName) return `${name} is a sub-agent: it uses ${agent.parentAgentName}'s config.`
    if (!bindable(agent)) return `${name} only holds a key: gwctl binds only the coding agents it finds here.`
    return action === 'bind'
      ? `${name} is already bound; r rotates its key.`
      : `${name} is not bound: nothing to undo.`
  }
  if (agent.keyed === false) return `${name} holds no key yet: e binds it, with a key of its own.`
  return `${name} already uses the only policy, ${agent.policyId}.`
}

/** The confirmation of a move to another policy: what changes on disk. */
function moveText(agent: AppAgent, policyId: string, home: string): string {
  if (!isBound(agent))
    return `Move ${agent.name} to policy ${policyId}? Its key is rotated: the new one is shown once (no file on disk changes); the old key stops working now.`
  const tool = agent.tool ?? agent.name
  const files = (agent.binding?.files ?? []).map((f) => shortPath(f, home)).join(', ')
  return `Move ${agent.name} to policy ${policyId} (gwctl agents enable ${tool} --policy ${policyId})? It gets a new key, which gwctl writes into ${files}; the old key stops working now.`
}

/** Handles the app's keys (Ink's useInput) with the latest render's context. */
export function useKeys(context: KeyContext): void {
  const {exit} = useApp()
  const {
    actions,
    data,
    up,
    routes,
    requestRows,
    counts,
    pivot,
    setPivot,
    signal,
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
    home = '',
  } = context

  const select = (n: number) => {
    const v = viewRef.current
    setSelected({...selectedRef.current, [v]: Math.max(0, Math.min(n, counts[v] - 1))})
  }

  const run = (title: string, action: () => Promise<void>) => setModal({kind: 'confirm', title, run: action})
  /** An action's result in a box: a new key no file holds is shown once. */
  const shown = (result: ActionResult) =>
    setModal(
      result.key
        ? {kind: 'key', title: result.text, key: result.key}
        : {kind: 'message', text: result.text, error: false},
    )
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
          if (policyId === agent.policyId) {
            setModal(null)
            setStatus(`${agent.name} already uses policy ${policyId}; nothing changed.`)
          } else if (policyId)
            run(moveText(agent, policyId, home), async () => shown(await actions.setPolicy(agent, policyId)))
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
    if (/^[1-5]$/.test(input)) return setView(VIEWS[Number(input) - 1])
    if (input === '?') return setModal({kind: 'help'})
    if (input === 'S' && !up) {
      let plan: StartPlan | undefined
      try {
        plan = actions.startPlan?.()
      } catch {
        plan = undefined // a bad port setting: the start itself says so, in a box
      }
      return run(
        plan
          ? `Start the gateway ${plan.last ? 'as it last ran' : 'with the defaults'}: ${plan.command} (port ${plan.port}${plan.sim ? ', the offline simulator as upstream' : ', real providers'})?`
          : 'Start the gateway (gwctl gateway start)?',
        async () => setStatus(await actions.startGateway()),
      )
    }
    if (key.upArrow || input === 'k') return select(sel - 1)
    if (key.downArrow || input === 'j') return select(sel + 1)
    if (key.pageUp) return select(sel - 10)
    if (key.pageDown) return select(sel + 10)
    if (view === 'Agents') {
      const agent = data.agents[sel]
      const action = AGENT_KEYS[input]
      if (!agent || !action) return
      if (!agentActions(agent, data.policies).includes(action)) return setStatus(notApplicable(agent, action))
      const tool = agent.tool ?? agent.name
      const files = (agent.binding?.files ?? []).map((f) => shortPath(f, home)).join(', ')
      if (action === 'bind') {
        const stale = agent.binding?.state === 'stale'
        void (async () => {
          const plan = await actions.bindingPlan?.(agent).catch(() => undefined)
          const writes = plan ? plan.files.map((f) => shortPath(f, home)).join(', ') : `${tool}'s config`
          run(
            stale
              ? `Rebind ${tool} (gwctl agents enable ${tool})? Its binding is stale: ${agent.binding?.problems?.[0]?.problem ?? 'see gwctl doctor'}. gwctl rewrites ${writes} to point at ${plan?.baseUrl ?? 'the gateway'} with a live key of its own.`
              : `Bind ${tool} to the gateway (gwctl agents enable ${tool})? gwctl writes ${writes} to point it at ${plan?.baseUrl ?? 'the gateway'} with a key of its own; d (agents disable) puts the file back exactly.`,
            async () => setStatus(await actions.setBinding(agent, true)),
          )
        })()
      } else if (action === 'unbind')
        run(
          `Unbind ${tool} (gwctl agents disable ${tool})? gwctl restores ${files || 'its config'} as before binding and revokes its key.`,
          async () => setStatus(await actions.setBinding(agent, false)),
        )
      else if (action === 'rotate')
        run(
          isBound(agent)
            ? `Rotate the key of ${agent.name} (gwctl agents enable ${tool} --rotate)? gwctl writes the new key into ${files}; the old key stops working now.`
            : `Rotate the key of ${agent.name}? The old key stops working now. No file on disk changes: the new key is shown once, for whoever uses this agent.`,
          async () => shown(await actions.rotateKey(agent)),
        )
      else if (action === 'policy')
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
          .loadUsage(signal, next)
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
}
