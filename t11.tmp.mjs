await import('@oclif/core')
const T=()=>performance.now(); let a=T()
const http = await import('node:http'); const b=T()
console.log('import http', (b-a).toFixed(1))
