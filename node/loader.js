// @flakeid/node's entry point: the napi-rs addon for this platform (index.js picks
// the matching prebuilt package, @flakeid/node-<platform>, or a local build), or —
// where no native build matches — @flakeid/wasm, the same API as WebAssembly,
// announced once through process.emitWarning (code FLAKEID_WASM_FALLBACK).
'use strict'

// napi-rs's index.js asks for @flakeid/node-win32-x64-gnu only in a MinGW-built
// Node; the official (MSVC-built) Node loads the same GNU-built addon (N-API is a C
// ABI), so it is tried here before giving up on native code.
function nativeBinding() {
  try {
    return require('./index.js')
  } catch (e) {
    if (process.platform !== 'win32' || process.arch !== 'x64') throw e
    try {
      return require('@flakeid/node-win32-x64-gnu')
    } catch {
      throw e
    }
  }
}

let binding
try {
  binding = nativeBinding()
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
// `import { Generator } from '@flakeid/node'` works. It is the lexer's own idiom.
// eslint-disable-next-line no-constant-binary-expression -- never runs, on purpose
0 && (module.exports = require('./index.js'))
