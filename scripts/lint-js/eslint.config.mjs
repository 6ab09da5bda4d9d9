// make lint's JS check (mk/node.mk, lint-js): ESLint's recommended rules over the
// repository's hand-written JS, with the globals of where each file runs. The
// generated files (node/index.js, node/index.d.ts, bindings/wasm/pkg) are napi's and
// wasm-bindgen's, not ours.
import js from '@eslint/js'
import globals from 'globals'
import { fileURLToPath } from 'node:url'

// The repository's root: the patterns below are relative to it.
const root = fileURLToPath(new URL('../..', import.meta.url))

export default [
  {
    basePath: root,
    ignores: ['node/index.js', 'bindings/wasm/pkg/**', '**/node_modules/**', 'target/**'],
  },
  {
    basePath: root,
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    ...js.configs.recommended,
    languageOptions: {
      ecmaVersion: 2022,
      globals: { ...globals.node },
    },
    rules: {
      ...js.configs.recommended.rules,
      // An unused argument may name what a callback receives; `_` marks one on purpose.
      'no-unused-vars': ['error', { argsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    basePath: root,
    files: ['**/*.cjs', 'node/loader.js', 'node/flake-idgen.js', 'node/frameworks/*.js'],
    languageOptions: { sourceType: 'commonjs' },
  },
  {
    basePath: root,
    files: ['bindings/wasm/browser-test/page.js', 'bindings/wasm/js/*.js'],
    languageOptions: { globals: { ...globals.browser } },
  },
]
