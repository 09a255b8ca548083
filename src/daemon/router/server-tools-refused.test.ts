/**
 * A server tool of a Messages body passed through refused by its tag (Claude Code's advisor on a
 * host without it: sifxprime/krouter PR #16): learned from the words only for a tool the body sent
 * and could go without, and the body goes without it and its records from then on.
 */
import {describe, expect, it} from 'vitest'

import {ADVISOR_TOOL as ADVISOR, BASH_TOOL as BASH} from '../../../test/helpers/claude-code.js'
import {adaptPassedMessages, sentOfPassedMessages} from '../../protocols/translate.js'
import {rewritesMessagesBody, UpstreamAdaptations} from './adaptations.js'

const anthropic = (message: string) =>
  JSON.stringify({type: 'error', error: {type: 'invalid_request_error', message}})
const TAG_REFUSED = anthropic(
  "tools.1: Input tag 'advisor_20260301' found using 'type' does not match any of the expected tags: 'bash_20250124', 'custom', 'text_editor_20250728', 'web_search_20250305'",
)

const body = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  model: 'claude-sonnet-4-5',
  max_tokens: 4096,
  tools: [BASH, ADVISOR],
  messages: [{role: 'user', content: 'hi'}],
  ...extra,
})

describe('a server tool refused by its tag', () => {
  it('is learned for a tool sent beside others, and says so', () => {
    const a = new UpstreamAdaptations()
    expect(a.learn('relay', 'claude', TAG_REFUSED, sentOfPassedMessages(body()))).toBe(
      'refused its advisor_20260301 tool: sent again without it',
    )
    expect(a.get('relay', 'claude')).toEqual({refusedServerTools: ['advisor_20260301']})
    expect(rewritesMessagesBody(a.get('relay', 'claude'))).toBe(true)
    expect(a.list()[0].rules).toEqual(['advisor_20260301 tools left out (refused)'])
    // a relay's own words
    const b = new UpstreamAdaptations()
    expect(
      b.learn('r', 'm', anthropic('unknown tool type: advisor_20260301'), sentOfPassedMessages(body())),
    ).toBe('refused its advisor_20260301 tool: sent again without it')
  })

  it('teaches nothing of a tool not sent, one forced or the only one, or a block of the history', () => {
    const a = new UpstreamAdaptations()
    expect(a.learn('r', 'm', TAG_REFUSED, sentOfPassedMessages(body({tools: [BASH]})))).toBeUndefined()
    expect(a.learn('r', 'm', TAG_REFUSED, sentOfPassedMessages(body({tools: [ADVISOR]})))).toBeUndefined()
    expect(
      a.learn(
        'r',
        'm',
        TAG_REFUSED,
        sentOfPassedMessages(body({tool_choice: {type: 'tool', name: 'advisor'}})),
      ),
    ).toBeUndefined()
    const history = anthropic(
      "messages.1.content.2: Input tag 'advisor_tool_result' found using 'type' does not match any of the expected tags: 'text'",
    )
    expect(a.learn('r', 'm', history, sentOfPassedMessages(body()))).toBeUndefined()
    expect(a.get('r', 'm')).toBeUndefined()
  })

  it('the body goes without the tool, its call, and a redacted result; the advice as text, its cache mark kept', () => {
    const sent = body({
      messages: [
        {role: 'user', content: 'hi'},
        {
          role: 'assistant',
          content: [
            {type: 'server_tool_use', id: 'srvtoolu_1', name: 'advisor', input: {}},
            {
              type: 'advisor_tool_result',
              tool_use_id: 'srvtoolu_1',
              content: {type: 'advisor_redacted_result', encrypted_content: 'e'},
            },
          ],
        },
        {role: 'user', content: 'more'},
        {
          role: 'assistant',
          content: [
            {type: 'text', text: 'Asking.'},
            {type: 'server_tool_use', id: 'srvtoolu_2', name: 'advisor', input: {}},
            {
              type: 'advisor_tool_result',
              tool_use_id: 'srvtoolu_2',
              content: {type: 'advisor_result', text: 'Do X.'},
              cache_control: {type: 'ephemeral'},
            },
          ],
        },
        {role: 'user', content: 'go on'},
      ],
    })
    const out = JSON.parse(
      adaptPassedMessages(sent, {refusedServerTools: ['advisor_20260301']}).toString(),
    ) as Record<string, unknown>
    expect(out.tools).toEqual([BASH])
    expect(out.messages).toEqual([
      {role: 'user', content: 'hi'},
      // (the turn keeps its place: two user turns side by side are refused by a host that needs
      // the roles to alternate, review77 #1)
      {role: 'assistant', content: [{type: 'text', text: '(advisor consulted)'}]},
      {role: 'user', content: 'more'},
      {
        role: 'assistant',
        content: [
          {type: 'text', text: 'Asking.'},
          {type: 'text', text: "Advisor's advice: Do X.", cache_control: {type: 'ephemeral'}},
        ],
      },
      {role: 'user', content: 'go on'},
    ])
  })

  const call = (id: string, extra: Record<string, unknown> = {}) => ({
    type: 'server_tool_use',
    id,
    name: 'advisor',
    input: {},
    ...extra,
  })
  const redacted = (id: string, extra: Record<string, unknown> = {}) => ({
    type: 'advisor_tool_result',
    tool_use_id: id,
    content: {type: 'advisor_redacted_result', encrypted_content: 'e'},
    ...extra,
  })
  const MARK = {cache_control: {type: 'ephemeral'}}
  const adapted = (sent: Record<string, unknown>) =>
    JSON.parse(adaptPassedMessages(sent, {refusedServerTools: ['advisor_20260301']}).toString()) as {
      tools?: unknown[]
      tool_choice?: unknown
      messages: unknown[]
    }

  it("a dropped block's cache mark goes on the nearest block that takes one, never on a thinking block (review77 #2)", () => {
    const thinking = {type: 'thinking', thinking: 't', signature: 's'}
    // an emptied turn: on its text
    expect(
      adapted(
        body({
          messages: [
            {role: 'user', content: 'hi'},
            {role: 'assistant', content: [call('srvtoolu_1'), redacted('srvtoolu_1', MARK)]},
            {role: 'user', content: 'more'},
          ],
        }),
      ).messages[1],
    ).toEqual({role: 'assistant', content: [{type: 'text', text: '(advisor consulted)', ...MARK}]})
    // past a thinking block, onto the text before it
    expect(
      adapted(
        body({
          messages: [
            {role: 'user', content: 'hi'},
            {
              role: 'assistant',
              content: [
                {type: 'text', text: 'A.'},
                thinking,
                call('srvtoolu_1'),
                redacted('srvtoolu_1', MARK),
              ],
            },
            {role: 'user', content: 'more'},
          ],
        }),
      ).messages[1],
    ).toEqual({role: 'assistant', content: [{type: 'text', text: 'A.', ...MARK}, thinking]})
    // only a thinking block before it: the previous message's last block
    expect(
      adapted(
        body({
          messages: [
            {role: 'user', content: 'hi'},
            {role: 'assistant', content: [thinking, call('srvtoolu_1'), redacted('srvtoolu_1', MARK)]},
            {role: 'user', content: 'more'},
          ],
        }),
      ).messages.slice(0, 2),
    ).toEqual([
      {role: 'user', content: [{type: 'text', text: 'hi', ...MARK}]},
      {role: 'assistant', content: [thinking]},
    ])
  })

  it('a body that forces the advisor or offers only it goes with it, learned or not (review77 #3)', () => {
    const forced = body({tool_choice: {type: 'tool', name: 'advisor'}})
    expect(adapted(forced)).toEqual(forced)
    const alone = body({tools: [ADVISOR]})
    expect(adapted(alone)).toEqual(alone)
  })

  it('the advisor records go from a history whose body no longer offers the tool (review77 #4)', () => {
    const sent = body({
      tools: [BASH],
      messages: [
        {role: 'user', content: 'hi'},
        {
          role: 'assistant',
          content: [
            {type: 'text', text: 'Asking.'},
            call('srvtoolu_1'),
            {
              type: 'advisor_tool_result',
              tool_use_id: 'srvtoolu_1',
              content: {type: 'advisor_result', text: 'Do X.'},
            },
          ],
        },
        {role: 'user', content: 'more'},
      ],
    })
    expect(adapted(sent).messages[1]).toEqual({
      role: 'assistant',
      content: [
        {type: 'text', text: 'Asking.'},
        {type: 'text', text: "Advisor's advice: Do X."},
      ],
    })
    // and from one without tools at all
    const {tools: _, ...none} = sent
    expect(adapted(none).messages[1]).toEqual(adapted(sent).messages[1])
  })

  it('another server tool refused (a web search, a fetch, code execution): its results as text too, an emptied turn naming it, not the advisor', () => {
    const SEARCH = {type: 'web_search_20250305', name: 'web_search', max_uses: 5}
    const FETCH = {type: 'web_fetch_20250910', name: 'web_fetch', max_uses: 5}
    const CODE = {type: 'code_execution_20250825', name: 'code_execution'}
    const refused = (type: string) =>
      anthropic(
        `tools.1: Input tag '${type}' found using 'type' does not match any of the expected tags: 'custom'`,
      )
    const a = new UpstreamAdaptations()
    expect(
      a.learn('r', 'm', refused('web_search_20250305'), sentOfPassedMessages(body({tools: [BASH, SEARCH]}))),
    ).toBe('refused its web_search_20250305 tool: sent again without it')
    const sent = body({
      tools: [BASH, SEARCH, FETCH, CODE],
      messages: [
        {role: 'user', content: 'when did node 20 come out?'},
        {
          role: 'assistant',
          content: [
            {type: 'text', text: 'Looking.'},
            {
              type: 'server_tool_use',
              id: 'srvtoolu_1',
              name: 'web_search',
              input: {query: 'node 20 release'},
            },
            {
              type: 'web_search_tool_result',
              tool_use_id: 'srvtoolu_1',
              content: [
                {
                  type: 'web_search_result',
                  title: 'Node.js 20 is now available',
                  url: 'https://nodejs.org/en/blog/announcements/v20-release-announce',
                  encrypted_content: 'EqgfCioIARgBIiQ3',
                  page_age: 'April 18, 2023',
                },
              ],
              ...MARK,
            },
            {
              type: 'server_tool_use',
              id: 'srvtoolu_2',
              name: 'web_fetch',
              input: {url: 'https://example.com'},
            },
            {
              type: 'web_fetch_tool_result',
              tool_use_id: 'srvtoolu_2',
              content: {
                type: 'web_fetch_result',
                url: 'https://example.com',
                content: {
                  type: 'document',
                  source: {type: 'text', media_type: 'text/plain', data: 'Example Domain'},
                  title: 'Example',
                },
                retrieved_at: '2026-11-30T03:00:00Z',
              },
            },
            {
              type: 'server_tool_use',
              id: 'srvtoolu_3',
              name: 'bash_code_execution',
              input: {command: 'node -v'},
            },
            {
              type: 'bash_code_execution_tool_result',
              tool_use_id: 'srvtoolu_3',
              content: {
                type: 'bash_code_execution_result',
                stdout: 'v20.20.2',
                stderr: '',
                return_code: 0,
                content: [],
              },
            },
            // (code execution's text editor: a file viewed, a string replaced)
            {
              type: 'server_tool_use',
              id: 'srvtoolu_5',
              name: 'text_editor_code_execution',
              input: {command: 'view', path: '/tmp/a.js'},
            },
            {
              type: 'text_editor_code_execution_tool_result',
              tool_use_id: 'srvtoolu_5',
              content: {
                type: 'text_editor_code_execution_view_result',
                file_type: 'text',
                content: 'const a = 1\nconsole.log(a)',
                num_lines: 2,
                start_line: 1,
                total_lines: 2,
              },
            },
            {
              type: 'server_tool_use',
              id: 'srvtoolu_6',
              name: 'text_editor_code_execution',
              input: {command: 'str_replace', path: '/tmp/a.js', old_str: '= 1', new_str: '= 2'},
            },
            {
              type: 'text_editor_code_execution_tool_result',
              tool_use_id: 'srvtoolu_6',
              content: {
                type: 'text_editor_code_execution_str_replace_result',
                old_start: 1,
                old_lines: 1,
                new_start: 1,
                new_lines: 1,
                lines: ['-const a = 1', '+const a = 2'],
              },
            },
            {type: 'text', text: 'April 2023.'},
          ],
        },
        {role: 'user', content: 'and 22?'},
        {
          role: 'assistant',
          content: [
            {
              type: 'server_tool_use',
              id: 'srvtoolu_4',
              name: 'web_search',
              input: {query: 'node 22 release'},
            },
            {
              type: 'web_search_tool_result',
              tool_use_id: 'srvtoolu_4',
              content: {type: 'web_search_tool_result_error', error_code: 'max_uses_exceeded'},
            },
          ],
        },
        {role: 'user', content: 'go on'},
      ],
    })
    const out = JSON.parse(
      adaptPassedMessages(sent, {
        refusedServerTools: ['web_search_20250305', 'web_fetch_20250910', 'code_execution_20250825'],
      }).toString(),
    ) as {tools: unknown[]; messages: unknown[]}
    expect(out.tools).toEqual([BASH])
    expect(out.messages[1]).toEqual({
      role: 'assistant',
      content: [
        {type: 'text', text: 'Looking.'},
        {
          type: 'text',
          text: 'Result of the web_search server tool {"query":"node 20 release"}:\ntitle: Node.js 20 is now available\nurl: https://nodejs.org/en/blog/announcements/v20-release-announce\npage_age: April 18, 2023',
          ...MARK,
        },
        {
          type: 'text',
          text: 'Result of the web_fetch server tool {"url":"https://example.com"}:\nurl: https://example.com\ntitle: Example\nExample Domain',
        },
        {
          type: 'text',
          text: 'Result of the bash_code_execution server tool {"command":"node -v"}:\nstdout: v20.20.2\nreturn_code: 0',
        },
        {
          type: 'text',
          text: 'Result of the text_editor_code_execution server tool {"command":"view","path":"/tmp/a.js"}:\nfile_type: text\nconst a = 1\nconsole.log(a)',
        },
        {
          type: 'text',
          text: 'Result of the text_editor_code_execution server tool {"command":"str_replace","path":"/tmp/a.js","old_str":"= 1","new_str":"= 2"}:\n-const a = 1\n+const a = 2',
        },
        {type: 'text', text: 'April 2023.'},
      ],
    })
    // (a failed search: left out, as a failed advisor call is; its turn keeps its place, named)
    expect(out.messages[3]).toEqual({
      role: 'assistant',
      content: [{type: 'text', text: '(server tool used: web_search)'}],
    })
  })
})
