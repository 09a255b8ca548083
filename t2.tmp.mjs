const T=()=>performance.now(); const out=[]
for (const m of ['node:child_process','node:net','node:timers/promises','node:fs','./dist/core/errors.js','./dist/core/output.js','./dist/store/paths.js','./dist/store/settings.js','./dist/core/process.js','./dist/daemon/pidfile.js','./dist/daemon/port-holder.js','./dist/core/loopback-probe.js','./dist/services/gateway.js','./dist/services/gateway-api.js']) { const a=T(); await import(m); out.push(`${m.replace(/.*\//,'')} ${(T()-a).toFixed(1)}`) }
console.log(out.join(' | '))
