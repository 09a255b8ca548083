process.env.GWCTL_HOME='/tmp/prof/bh'; process.env.HOME='/tmp/prof/bh/user-home'
const T=()=>performance.now(); const o=[]; let a=T(); const m=(n)=>{const b=T(); o.push(n+' '+(b-a).toFixed(1)); a=b}
const ga = await import('./dist/services/gateway-api.js'); m('imp ga')
await ga.liveGatewayPort(); m('probe')
const gk = await import('./dist/services/gateway-keys.js'); m('imp gk')
const st = await import('./dist/store/state.js'); m('imp state')
const ag = await gk.listAgents({}); m('listAgents')
await gk.listAgents({}); m('listAgents2')
const lq = await import('./dist/store/log-query.js'); m('imp lq')
const r = await lq.openLogReader('/tmp/prof/bh/logs.db'); m('open reader')
r.queryLogs({limit:5}); m('query')
console.log(o.join(' | '))
