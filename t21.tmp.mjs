await import('@oclif/core')
const {connect} = await import('node:net')
const T=()=>performance.now()
for (let i=0;i<3;i++){ const a=T(); await new Promise(r=>{const s=connect({host:'127.0.0.1',port:1}); s.once('error',()=>r()); s.once('connect',()=>{s.destroy();r()})}); console.log('connect refused', (T()-a).toFixed(2)) }
