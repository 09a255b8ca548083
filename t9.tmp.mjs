process.env.GWCTL_HOME='/tmp/prof/bh'; process.env.HOME='/tmp/prof/bh/user-home'
await import('@oclif/core'); await import('./dist/core/output.js')
const T=()=>performance.now(); const o=[]; let a=T(); const m=(n)=>{const b=T(); o.push(n+' '+(b-a).toFixed(1)); a=b}
const g = await import('./dist/services/gateway.js'); m('imp gateway')
const info = await g.getGatewayInfo({}); m('gwinfo')
const d = await import('./dist/scanners/discovery.js'); m('imp disc')
d.discoverAgents(); m('discover')
const {StateStore} = await import('./dist/store/state.js'); m('imp state')
const s = await StateStore.open('/tmp/prof/bh/state.json'); m('open state')
const v = await import('./dist/daemon/views.js'); v.agentViews(s.data); m('views')
console.log(o.join(' | '))
