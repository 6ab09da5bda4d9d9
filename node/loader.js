// @flakeid/node's entry point: the napi-rs addon for this platform (index.js picks
// the matching prebuilt package, @flakeid/node-<platform>, or a local build), or —
// where no native build matches — @flakeid/wasm, the same API as WebAssembly,
// announced once through process.emitWarning (code FLAKEID_WASM_FALLBACK).
'use strict'

let binding
try {
  binding = require('./index.js')
} catch (nativeError) {
  let wasm
  try {
    wasm = require('@flakeid/wasm')
  } catch {
    throw nativeError
  }
  const reason = String(nativeError && nativeError.message).split('\n')[0]
  process.emitWarning(
    `@flakeid/node: no native build for ${process.platform}-${process.arch}; using @flakeid/wasm ` +
      `(the same API as WebAssembly, slower). Native load failed: ${reason}`,
    { code: 'FLAKEID_WASM_FALLBACK' },
  )
  binding = wasm
}
module.exports = binding
// Never runs: tells Node's ESM loader (cjs-module-lexer) the named exports, so that
// `import { Generator } from '@flakeid/node'` works.
0 && (module.exports = require('./index.js'))
