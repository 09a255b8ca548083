process.env.GWCTL_HOME='/tmp/prof/bh'; process.env.HOME='/tmp/prof/bh/user-home'
const T=()=>performance.now(); const o=[]; let a=T(); const m=(n)=>{const b=T(); o.push(n+' '+(b-a).toFixed(2)); a=b}
const pf = await import('./dist/daemon/pidfile.js'); const g = await import('./dist/services/gateway.js'); const lp = await import('./dist/core/loopback-probe.js'); m('imports')
pf.runningDaemon(); m('runningDaemon')
const port = g.resolvePort(); m('resolvePort')
await lp.probeHealth(port, {}); m('probe')
await lp.probeHealth(port, {}); m('probe2')
console.log(o.join(' | '))
