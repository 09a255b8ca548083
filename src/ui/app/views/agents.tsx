/** The Agents view: the agents, their binding, policy and tokens today, and the selected one's route. */
import {Box, Text} from 'ink'

import type {DashboardRoute} from '../../../services/dashboard.js'
import type {AppAgent} from '../model.js'
import {ago, agentLabel, agentNames, bindable, bindingOf, cell, compact, shortPath} from '../model.js'
import {breakerOf, circuitText} from '../model-routes.js'
import {costText, lastRequest, todayTokens} from '../model-usage.js'
import {columnsLine, fitColumns} from '../../columns.js'
import type {ViewProps} from './shared.js'
import {Row, stateColor, windowOf} from './shared.js'

export function AgentsView({
  data,
  width,
  height,
  selected,
  now,
  color,
  costs,
  home = '',
}: ViewProps & {costs?: Map<string, Parameters<typeof costText>[0]>; home?: string}) {
  const w = width - 1
  if (data.agents.length === 0) {
    return (
      <Box flexDirection="column">
        <Text>{' No agents yet.'}</Text>
        <Text dimColor={color}>
          {' Issue a key: gwctl key issue --agent-name NAME --agent-type claude_code'}
        </Text>
      </Box>
    )
  }
  const names = agentNames(data.agents)
  const today = todayTokens(data.history, now)
  const last = lastRequest(data.history)
  const columns = fitColumns<AppAgent>(
    [
      {header: 'NAME', value: (a) => a.name, min: 8, max: 24},
      {header: 'KIND', value: (a) => a.type, min: 6, max: 20, drop: 2},
      {header: 'BINDING', value: bindingOf},
      {header: 'POLICY', value: (a) => a.policyId, min: 8, max: 24, drop: 1},
      {header: 'TODAY', value: (a) => compact(today.get(a.agentId) ?? 0), right: true},
      {
        header: 'ROUTE',
        value: (a) => a.route.targets.map((t) => t.provider).join('→') || '(none)',
        min: 8,
      },
    ],
    data.agents,
    w,
  )
  const listH = Math.max(1, height - 7)
  const [from, to] = windowOf(data.agents.length, selected, listH)
  const agent: AppAgent | undefined = data.agents[selected]
  const lines = data.agents.slice(from, to).map((a, i) => ({
    key: a.agentId,
    selected: from + i === selected,
    text: columnsLine(columns, a, w),
  }))
  const seen = agent ? (last.get(agent.agentId) ?? (agent.lastSeenAt ? agent.lastSeenAt * 1000 : null)) : null
  const children = agent?.childAgentIds.map((id) => agentLabel(id, names)).join(', ') || '-'
  return (
    <Box flexDirection="column">
      <Text bold>{' ' + columnsLine(columns, undefined, w)}</Text>
      {lines.map((l) => (
        <Row key={l.key} text={cell(l.text, w)} selected={l.selected} color={color} />
      ))}
      {agent && (
        <Box flexDirection="column" marginTop={1}>
          <Text>
            {' ' + cell(`${agent.name} · ${agent.agentId} · key ${agent.keyPrefix ?? '(none)'}`, w)}
          </Text>
          <Text>
            {' ' +
              cell(
                `parent ${agent.parentAgentName ?? '-'} · children ${children} · last request ${ago(seen, now)}${costs?.has(agent.agentId) ? ` · today ${costText(costs.get(agent.agentId)!)}` : ''}`,
                w,
              )}
          </Text>
          {routeLine(agent, data.routes, now, w, color)}
          {bindable(agent) && <Text>{' ' + cell(bindingLine(agent, home), w)}</Text>}
        </Box>
      )}
    </Box>
  )
}

function routeLine(
  agent: AppAgent,
  routes: readonly DashboardRoute[],
  now: number,
  w: number,
  color: boolean,
) {
  const head = ` route ${agent.route.family}: `
  if (agent.route.targets.length === 0) return <Text>{cell(`${head}(no target)`, w + 1)}</Text>
  return (
    <Text>
      {head}
      {agent.route.targets.map((t, i) => {
        const state = circuitText(breakerOf(routes, t.provider), now)
        const label = cell(t.model ? `${t.provider}:${t.model}` : t.provider, 40).trimEnd()
        return (
          <Text key={i}>
            {`${i > 0 ? ' → ' : ''}${label} [`}
            <Text color={stateColor(state, color)}>{state}</Text>]
          </Text>
        )
      })}
    </Text>
  )
}

/** Where the agent's own config points: `config bound: ~/.claude/settings.json`, or why it is stale. */
function bindingLine(agent: AppAgent, home: string): string {
  const b = agent.binding
  const files = (b?.files ?? []).map((f) => shortPath(f, home)).join(', ')
  if (b?.state === 'bound') return `config bound to the gateway: ${files}`
  if (b?.state === 'stale')
    return `config stale: ${b.problems?.map((p) => p.problem).join('; ') ?? 'see gwctl doctor'} (e rebinds)`
  return `config not bound: e points ${agent.tool ?? agent.name} at the gateway`
}
