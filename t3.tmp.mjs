process.env.GWCTL_HOME='/tmp/prof/bh'; process.env.HOME='/tmp/prof/bh/user-home'
const T=()=>performance.now(); const o=[]; let a=T(); const m=(n)=>{const b=T(); o.push(n+' '+(b-a).toFixed(1)); a=b}
await import('better-sqlite3'); m('bsql')
const {HistoryStore} = await import('./dist/store/history-store.js'); m('import hs')
const s = await HistoryStore.open('/tmp/prof/bh/logs.db'); m('open')
const {scanHistory} = await import('./dist/scanners/history/scan.js'); m('import scan')
const r = await scanHistory(s, {}); m('scan')
s.db.prepare('SELECT 1 FROM history LIMIT 1').get(); m('q')
s.close(); m('close')
const [{usageGroups}, {createPricer}, {timeMatchedHistoryKeys}] = await Promise.all([import('./dist/store/usage-query.js'), import('./dist/services/usage-cost.js'), import('./dist/store/reconcile-query.js')]); m('import report')
const s2 = await HistoryStore.open('/tmp/prof/bh/logs.db'); m('open2')
const g = usageGroups(s2.db, {source:'gateway'}, []); m('groups')
const p = await createPricer(); m('pricer')
console.log(o.join(' | '))
