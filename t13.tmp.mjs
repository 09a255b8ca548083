await import('@oclif/core')
import {connect} from 'node:net'
const T=()=>performance.now(); let a=T()
const r = await new Promise((res, rej) => { const s = connect(45777, '127.0.0.1'); const chunks=[]; s.on('connect', () => s.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nAccept: application/json\r\n\r\n')); s.on('data', c => chunks.push(c)); s.on('end', () => res(Buffer.concat(chunks).toString())); s.on('error', rej) })
console.log('raw', (T()-a).toFixed(1)); console.log(JSON.stringify(r))
