process.env.GWCTL_HOME='/tmp/prof/bh'; process.env.HOME='/tmp/prof/bh/user-home'
const T=()=>performance.now()
const ga = await import('./dist/services/gateway-api.js')
const o=[]; for (let i=0;i<4;i++){const a=T(); await ga.liveGatewayPort(); o.push((T()-a).toFixed(2))}
console.log('probes', o.join(' '))
