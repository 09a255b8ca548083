import {createRequire} from 'node:module'
const require = createRequire(import.meta.url)
const T=()=>performance.now(); const v=process.argv[2]; let a=T(), D
if (v==='import') D=(await import('better-sqlite3')).default
else D=require('better-sqlite3')
const b=T()
const opts = v==='native' ? {readonly:true, nativeBinding: require.resolve('better-sqlite3/build/Release/better_sqlite3.node')} : {readonly:true}
const db = new D('/tmp/prof/bh/logs.db', opts); const c=T()
console.log(v, (b-a).toFixed(1), (c-b).toFixed(1), ((c-a)).toFixed(1))
