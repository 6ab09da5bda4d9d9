// The optional peer dependencies (drizzle-orm, kysely, pg) are the app's: resolved
// from the app first (its main module's folder, else the working directory), so that
// a linked install (`npm install ./node` makes a symlink, and Node resolves a module's
// requires from its real path, outside the app) finds them, and the app and these
// adapters share one copy; then from this package itself (the usual install).
'use strict'

const { createRequire } = require('node:module')
const path = require('node:path')

function peer(name) {
  const bases = []
  if (require.main && require.main.filename) bases.push(require.main.filename)
  bases.push(path.join(process.cwd(), 'package.json'))
  for (const base of bases) {
    try {
      return createRequire(base)(name)
    } catch (err) {
      // Only "this app has no such package"; an error inside the package is its own.
      if (err.code !== 'MODULE_NOT_FOUND' || !String(err.message).includes(`'${name}'`)) throw err
    }
  }
  return require(name)
}

module.exports = { peer }
