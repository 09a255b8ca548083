import {appendFileSync, mkdtempSync, readFileSync, rmSync, statSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {PlatformClient} from '../api/http.js'
import type {Simulator} from '../sim/server.js'
import {startSim} from '../sim/server.js'
import {
  appendBatchEvent,
  batchJournalPath,
  batchKey,
  parseVideoManifest,
  readBatchJournal,
  runVideoBatch,
} from './video-batch.js'

describe('video batch manifest', () => {
  it('reads JSON Lines in flag, snake and camel case, skipping blanks and comments', () => {
    const text = [
      '# three clips',
      '{"id":"a","model":"Alpha2.6-I2V","prompt":"p","img_url":"https://x/a.png","size":"720P"}',
      '',
      '{"model":"BetaQ2-Pro-Reference2Video","prompt":"d","refImages":["https://x/1.png","https://x/2.png"],"duration":0}',
      '{"model":"Alpha2.6-T2V","prompt":"q","seconds":3,"no-prompt-extend":true,"param":{"n":2}}',
    ].join('\n')
    const {entries, errors, format} = parseVideoManifest(text)
    expect(errors).toEqual([])
    expect(format).toBe('jsonl')
    expect(entries.map((e) => [e.line, e.name])).toEqual([
      [2, 'a'],
      [4, 'line-4'],
      [5, 'line-5'],
    ])
    expect(entries[0].request).toMatchObject({imgUrl: 'https://x/a.png', size: '720P'})
    expect(entries[1].request.refImages).toEqual(['https://x/1.png', 'https://x/2.png'])
    expect(entries[2].request).toMatchObject({promptExtend: false, params: ['n=2']})
  })

  it('reads CSV with quoted commas, quotes and newlines, and "|" lists; line numbers are the rows\' first lines', () => {
    const text =
      'id,model,prompt,ref-image,resolution\n' +
      'a,BetaQ2-Pro-Reference2Video,"one, ""two""\nthree",https://x/1.png|https://x/2.png,720P\n' +
      'b,BetaQ2-Pro-Reference2Video,x,,720P\n'
    const {entries, errors} = parseVideoManifest(text, {name: 'm.csv'})
    expect(entries).toHaveLength(1)
    expect(entries[0].request).toMatchObject({
      prompt: 'one, "two"\nthree',
      refImages: ['https://x/1.png', 'https://x/2.png'],
    })
    expect(errors).toEqual([
      {line: 4, code: expect.any(String), message: expect.stringMatching(/reference/i)},
    ])
  })

  it('names the line and the rule of every bad line', () => {
    const text = [
      '{"model":"Alpha2.6-T2V","promt":"typo"}',
      '{"prompt":"no model"}',
      '[1,2]',
      '{"id":"a b","model":"Alpha2.6-T2V","prompt":"x"}',
      '{"id":"same","model":"Alpha2.6-T2V","prompt":"x"}',
      '{"id":"same","model":"Alpha2.6-T2V","prompt":"y"}',
      '{"model":"BetaQ2-Text2Video","prompt":"x","duration":12}',
      '{"model":"Alpha2.6-T2V","prompt":"x","audio":"maybe"}',
    ].join('\n')
    const {entries, errors} = parseVideoManifest(text)
    expect(entries.map((e) => e.line)).toEqual([5])
    expect(errors.map((e) => [e.line, e.code])).toEqual([
      [1, 'unknown_field'],
      [2, 'missing_field'],
      [3, 'not_an_object'],
      [4, 'bad_id'],
      [6, 'duplicate_id'],
      [7, expect.stringMatching(/duration/)],
      [8, 'bad_field_type'],
    ])
    expect(errors[0].message).toContain('did you mean "prompt"')
  })

  it('keys a manifest by its tasks and their lines, not spacing or field order', () => {
    const a = parseVideoManifest('{"model":"Alpha2.6-T2V","prompt":"x"}\n').entries
    const b = parseVideoManifest('{ "prompt": "x", "model": "Alpha2.6-T2V" }\n').entries
    const c = parseVideoManifest('{"model":"Alpha2.6-T2V","prompt":"y"}\n').entries
    expect(batchKey(a)).toBe(batchKey(b))
    expect(batchKey(a)).not.toBe(batchKey(c))
  })
})

describe('video batch journal and run', () => {
  let home: string
  let sim: Simulator | undefined
  const saved = process.env.GWCTL_HOME
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), 'gwctl-batch-'))
    process.env.GWCTL_HOME = home
  })
  afterEach(async () => {
    await sim?.close()
    sim = undefined
    process.env.GWCTL_HOME = saved
    rmSync(home, {recursive: true, force: true})
  })

  it('skips a torn line and starts the next event on a fresh line', () => {
    const path = join(home, 'j.jsonl')
    appendBatchEvent(path, {type: 'submitted', line: 1, task_id: 't1', at: 'x'})
    appendFileSync(path, '{"type":"submitted","line":2,"task_')
    appendBatchEvent(path, {type: 'submitted', line: 3, task_id: 't3', at: 'x'})
    const known = readBatchJournal(path)
    expect([...known.keys()]).toEqual([1, 3])
    expect(readFileSync(path, 'utf8').split('\n').at(-2)).toContain('"t3"')
    expect(statSync(path).mode & 0o777).toBe(0o600)
  })

  it('never sends again a line whose create was on the wire when the last run died (uncertain)', async () => {
    sim = await startSim({taskSeconds: 1})
    const client = new PlatformClient({baseUrl: sim.baseUrl, apiKey: 'k'})
    const {entries} = parseVideoManifest(
      ['{"model":"Alpha2.6-T2V","prompt":"one"}', '{"model":"Alpha2.6-T2V","prompt":"two"}'].join('\n'),
    )
    // a run killed after writing `sending` for line 1, before any answer
    const {mkdirSync} = await import('node:fs')
    mkdirSync(join(home, 'video-batches'), {recursive: true})
    appendBatchEvent(batchJournalPath(batchKey(entries)), {type: 'sending', line: 1, at: 'x'})
    const summary = await runVideoBatch(entries, {client, intervalSeconds: 1, download: false})
    const posts = sim.requests.filter((r) => r.method === 'POST')
    expect(posts.map((p) => (p.body as {prompt: string}).prompt)).toEqual(['two'])
    expect(summary).toMatchObject({completed: 1, failed: 1, failures: [{line: 1, status: 'uncertain'}]})
  })

  it('a create answered 400 is sent again by the rerun; one answered 500 (maybe created) is not', async () => {
    sim = await startSim({
      taskSeconds: 1,
      faults: ['status=400,times=1,path=/videos,method=POST', 'status=500,times=1,path=/videos,method=POST'],
    })
    const client = new PlatformClient({baseUrl: sim.baseUrl, apiKey: 'k', attempts: 1})
    const {entries} = parseVideoManifest(
      ['{"model":"Alpha2.6-T2V","prompt":"one"}', '{"model":"Alpha2.6-T2V","prompt":"two"}'].join('\n'),
    )
    const first = await runVideoBatch(entries, {client, intervalSeconds: 1, download: false, concurrency: 1})
    expect(first.failures.map((f) => [f.line, f.status])).toEqual([
      [1, 'refused'],
      [2, 'uncertain'],
    ])
    const second = await runVideoBatch(entries, {client, intervalSeconds: 1, download: false, concurrency: 1})
    expect(second.failures.map((f) => [f.line, f.status])).toEqual([[2, 'uncertain']])
    expect(second).toMatchObject({completed: 1, submitted: 1})
    const answered = sim.requests.filter((r) => r.method === 'POST')
    // line 1 twice (400, then created), line 2 once (500): never a second create of line 2
    expect(answered.map((p) => (p.body as {prompt: string}).prompt)).toEqual(['one', 'two', 'one'])
  })
})
