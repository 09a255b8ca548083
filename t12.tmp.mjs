process.env.GWCTL_HOME='/tmp/prof/bh2'; process.env.HOME='/tmp/prof/bh2/user-home'; process.env.GWCTL_GATEWAY_PORT='45777'
await import('@oclif/core'); await import('./dist/core/output.js')
const T=()=>performance.now(); const o=[]; let a=T(); const m=(n)=>{const b=T(); o.push(n+' '+(b-a).toFixed(1)); a=b}
const g = await import('./dist/services/gateway.js'); m('imp gateway')
const pf = await import('./dist/daemon/pidfile.js'); pf.runningDaemon(); m('runningDaemon')
const lp = await import('./dist/core/loopback-probe.js'); await lp.probeHealth(45777); m('probeHealth')
await lp.probeHealth(45777); m('probeHealth2')
await g.getGatewayInfo({}); m('gwinfo')
await g.getGatewayInfo({}); m('gwinfo2')
console.log(o.join(' | '))
