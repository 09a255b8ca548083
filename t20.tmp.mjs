process.env.GWCTL_HOME='/tmp/prof/bh'; process.env.HOME='/tmp/prof/bh/user-home'
await import('@oclif/core'); await import('./dist/core/output.js'); await import('./dist/core/base-command.js')
const T=()=>performance.now(); const o=[]; let a=T(); const m=(n)=>{const b=T(); o.push(n+' '+(b-a).toFixed(1)); a=b}
await import('./dist/commands/usage/index.js'); m('cmd import')
const ga = await import('./dist/services/gateway-api.js'); await ga.liveGatewayPort(); m('probe')
const u = await import('./dist/services/usage.js'); m('imp usage')
const has = await u.historyHasRows({scanFirst: true}); m('hasRows+scan')
const l = await import('./dist/services/logs.js'); const r = await l.getUsage({}); m('getUsage')
const rep = await u.usageReport({source: 'gateway'}); m('usageReport')
console.log(o.join(' | '))
