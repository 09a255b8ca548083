/** The Agents view: the agents, their binding, policy and tokens today, and the selected one's route. */
import {Box, Text} from 'ink'

import type {DashboardRoute} from '../../../services/dashboard.js'
import type {AppAgent} from '../model.js'
import {ago, agentLabel, agentNames, bindingOf, cell, compact} from '../model.js'
import {breakerOf, circuitText} from '../model-routes.js'
import {costText, lastRequest, todayTokens} from '../model-usage.js'
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
}: ViewProps & {costs?: Map<string, Parameters<typeof costText>[0]>}) {
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
  const fixed = 16 + 1 + 12 + 1 + 8 + 1 + 12 + 1 + 8 + 1
  const routeW = Math.max(8, w - fixed)
  const header = `${cell('NAME', 16)} ${cell('KIND', 12)} ${cell('BOUND', 8)} ${cell('POLICY', 12)} ${cell('TODAY', 8, true)} ${cell('ROUTE', routeW)}`
  const listH = Math.max(1, height - 7)
  const [from, to] = windowOf(data.agents.length, selected, listH)
  const agent: AppAgent | undefined = data.agents[selected]
  const lines = data.agents.slice(from, to).map((a, i) => {
    const targets = a.route.targets.map((t) => t.provider).join('→') || '(none)'
    return {
      key: a.agentId,
      selected: from + i === selected,
      text: `${cell(a.name, 16)} ${cell(a.type, 12)} ${cell(bindingOf(a), 8)} ${cell(a.policyId, 12)} ${cell(compact(today.get(a.agentId) ?? 0), 8, true)} ${cell(targets, routeW)}`,
    }
  })
  const seen = agent ? (last.get(agent.agentId) ?? (agent.lastSeenAt ? agent.lastSeenAt * 1000 : null)) : null
  const children = agent?.childAgentIds.map((id) => agentLabel(id, names)).join(', ') || '-'
  return (
    <Box flexDirection="column">
      <Text bold>{' ' + cell(header, w)}</Text>
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
