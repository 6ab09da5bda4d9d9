// Every case of every shared vector file (tests/vectors/*.json), on the backend
// chosen by FLAKEID_BACKEND: the proof that this build is byte-compatible with
// the Rust engine and every other binding.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import {
  Generator, Layout, ManualClock, Sealer, codeOf, compose, decode, decompose, encode, expectError, fromBytes, idRange,
  layoutOf, loadVectors, optionsOf, optionsFromEnv, settingsOptions, configuredTwice, toBytes, vectorFiles, BACKEND,
  UuidGenerator, composeUuid7, formatTypeId, formatUlid, formatUuid, parseTypeId, parseUlid, parseUuid, ulidToUuid,
  uuid7Range, uuid7TimestampMs, uuidToUlid, uuidVersion, api,
} from './backend.mjs'

const specName = (spec) => (typeof spec === 'string' ? spec : JSON.stringify(spec))

describe('layouts.json', () => {
  const v = loadVectors('layouts')
  test('presets have the contract numbers', () => {
    assert.equal(v.presets.length, 7)
    assert.deepEqual(Layout.presetNames(), v.presets.map((p) => p.name))
    for (const p of v.presets) {
      const l = Layout.preset(p.name)
      assert.deepEqual(
        {
          name: l.name, time_bits: l.timeBits, datacenter_bits: l.datacenterBits, worker_bits: l.workerBits,
          node_bits: l.nodeBits, sequence_bits: l.sequenceBits, tick_ms: l.tickMs, epoch_ms: l.epochMs,
          order: l.order, last_timestamp_ms: l.lastTimestampMs, max_id: String(l.maxId),
        },
        p,
        p.name,
      )
      assert.equal(typeof l.maxId, 'bigint')
      // The same numbers built by hand are that preset.
      const custom = layoutOf({ ...p, name: undefined })
      assert.equal(custom.name, p.name)
      assert.equal(String(custom.maxId), p.max_id)
    }
  })
  for (const c of v.invalid_layouts) {
    test(`invalid layout refused: ${c.field} (${specName(c.layout)})`, () => {
      expectError(() => layoutOf(c.layout), c.error, { field: c.field })
    })
  }
  for (const c of v.invalid_generators) {
    test(`invalid generator refused: ${JSON.stringify(c.options)} on ${specName(c.layout)}`, () => {
      expectError(() => new Generator({ layout: layoutOf(c.layout), ...optionsOf(c.options) }), c.error, { field: c.field })
    })
  }
})

describe('compose.json', () => {
  const v = loadVectors('compose')
  for (const c of v.cases) {
    test(`compose/decompose ${c.id} (${specName(c.layout)})`, () => {
      const layout = layoutOf(c.layout)
      const id = BigInt(c.id)
      assert.equal(compose(c.timestamp_ms, c.node, c.sequence, layout), id)
      assert.equal(layout.compose(c.timestamp_ms, c.node, c.sequence), id)
      if (layout.datacenterBits > 0) {
        assert.equal(layout.composeParts(c.timestamp_ms, c.datacenter, c.worker, c.sequence), id)
      }
      for (const p of [decompose(id, layout), decompose(c.id, layout), layout.decompose(id)]) {
        assert.deepEqual(
          {
            timestamp_ms: p.timestampMs, ticks: p.ticks, datacenter: p.datacenter, worker: p.worker,
            node: p.node, sequence: p.sequence,
          },
          {
            timestamp_ms: c.timestamp_ms, ticks: c.ticks, datacenter: c.datacenter, worker: c.worker,
            node: c.node, sequence: c.sequence,
          },
        )
        assert.ok(p.date instanceof Date, 'parts.date is a Date')
        assert.equal(p.date.getTime(), c.timestamp_ms)
      }
      if (typeof c.layout === 'string') assert.equal(compose(c.timestamp_ms, c.node, c.sequence, c.layout), id)
    })
  }
  for (const c of v.compose_errors) {
    test(`compose refused: ${c.error} ${c.field ?? ''} (${specName(c.layout)} ${c.timestamp_ms}/${c.node}/${c.sequence})`, () => {
      const extra = c.field ? { field: c.field } : {}
      expectError(() => compose(c.timestamp_ms, c.node, c.sequence, layoutOf(c.layout)), c.error, extra)
      expectError(() => layoutOf(c.layout).compose(c.timestamp_ms, c.node, c.sequence), c.error, extra)
    })
  }
  for (const c of v.decompose_errors) {
    test(`decompose refused: ${c.id} (${specName(c.layout)})`, () => {
      expectError(() => decompose(BigInt(c.id), layoutOf(c.layout)), c.error)
      expectError(() => layoutOf(c.layout).decompose(BigInt(c.id)), c.error)
    })
  }
  for (const c of v.ranges) {
    test(`idRange ${c.start_ms}..${c.end_ms} (${specName(c.layout)})`, () => {
      const layout = layoutOf(c.layout)
      const want = [BigInt(c.first), BigInt(c.last)]
      assert.deepEqual(idRange(c.start_ms, c.end_ms, layout), want)
      assert.deepEqual(layout.idRange(c.start_ms, c.end_ms), want)
      assert.equal(layout.firstIdAt(c.start_ms), want[0])
      assert.equal(layout.lastIdAt(c.end_ms), want[1])
    })
  }
})

describe('encodings.json', () => {
  const v = loadVectors('encodings')
  for (const c of v.cases) {
    test(`encodings of ${c.id}`, () => {
      const id = BigInt(c.id)
      for (const enc of ['decimal', 'hex', 'base32', 'base62']) {
        assert.equal(encode(id, enc), c[enc], enc)
        assert.equal(decode(c[enc], enc), id, enc)
      }
      // One default in every binding (the core's): base62.
      assert.equal(encode(id), c.base62)
      assert.equal(decode(c.base62), id)
      assert.equal(Buffer.from(toBytes(id)).toString('hex'), c.bytes)
      assert.equal(fromBytes(Buffer.from(c.bytes, 'hex')), id)
      assert.equal(fromBytes(new Uint8Array(Buffer.from(c.bytes, 'hex'))), id)
    })
  }
  for (const c of v.decode_aliases) {
    test(`decode alias ${c.encoding} ${c.text}`, () => {
      assert.equal(decode(c.text, c.encoding), BigInt(c.id))
    })
  }
  for (const c of v.bad) {
    test(`decode refused: ${c.encoding} ${JSON.stringify(c.text)}`, () => {
      expectError(() => decode(c.text, c.encoding), c.error, { position: c.position })
    })
  }
})

describe('timelines.json', () => {
  const v = loadVectors('timelines')
  for (const t of v.timelines) {
    test(`timeline: ${t.name}`, () => {
      const clock = new ManualClock(t.start_ms, t.auto_advance_ms)
      const gen = new Generator({
        layout: layoutOf(t.layout),
        node: t.node,
        overflow: t.overflow,
        clockBackwards: t.clock_backwards,
        maxBorrowMs: t.max_borrow_ms,
        maxWaitMs: t.max_wait_ms,
        clock,
      })
      t.steps.forEach((s, i) => {
        const at = `step ${i} ${JSON.stringify(s)}`
        if (s.op === 'set') {
          clock.set(s.ms)
        } else if (s.op === 'next' && s.error) {
          expectError(() => gen.nextId(), s.error, s.by_ms === undefined ? {} : { byMs: s.by_ms })
        } else if (s.op === 'next') {
          assert.equal(gen.nextId(), BigInt(s.id), at)
          assert.equal(clock.nowMs(), s.clock_ms, at)
        } else if (s.op === 'next_ids') {
          const ids = gen.nextIds(s.n)
          assert.ok(ids instanceof BigUint64Array, at)
          assert.deepEqual([...ids], s.ids.map(BigInt), at)
          assert.equal(clock.nowMs(), s.clock_ms, at)
        } else {
          assert.fail(`unknown op in ${at}`)
        }
      })
    })
  }
})

describe('seal.json', () => {
  const v = loadVectors('seal')
  const sealerOf = (c) =>
    new Sealer(Buffer.from(c.key, 'hex'), { layout: layoutOf(c.layout), tweak: Buffer.from(c.tweak ?? '', 'hex') })
  for (const g of v.groups) {
    test(`seal ${specName(g.layout)}, ${g.key.length * 4}-bit key, tweak ${JSON.stringify(g.tweak)}`, () => {
      const sealer = sealerOf(g)
      assert.equal(sealer.bits, g.bits)
      assert.ok(g.cases.length > 0)
      for (const c of g.cases) {
        assert.equal(sealer.seal(BigInt(c.id)), BigInt(c.sealed), `seal(${c.id})`)
        assert.equal(sealer.unseal(BigInt(c.sealed)), BigInt(c.id), `unseal(${c.sealed})`)
      }
    })
  }
  for (const c of v.invalid) {
    test(`seal refused: ${c.op} ${c.field} (${specName(c.layout)})`, () => {
      expectError(() => (c.op === 'new' ? sealerOf(c) : sealerOf(c)[c.op](BigInt(c.id))), c.error, { field: c.field })
    })
  }
})

describe('options.json', () => {
  const v = loadVectors('options')
  const jsName = Object.fromEntries(v.options.map((o) => [o.name, o.camel_name]))
  // What this backend lacks: the wasm build has no leases (refused, field "lease").
  const lacks = BACKEND === 'wasm' ? new Set(['lease']) : new Set()
  test('every option of the core\'s table is a key of new Generator({...})', () => {
    for (const o of v.options) {
      if (lacks.has(o.name)) continue
      // An unknown key would be refused (field "options"); a node id given, as no
      // node id builds only where this host's guard sees every process.
      const node = o.camel_name === 'node' ? { worker: 1 } : { node: 1 }
      new Generator({ ...node, [o.camel_name]: undefined })
    }
  })
  for (const c of v.cases) {
    if (Object.keys(c.options).some((k) => lacks.has(k))) continue
    const options = Object.fromEntries(Object.entries(c.options).map(([k, x]) => [jsName[k], x]))
    test(`options ${JSON.stringify(c.options)} on ${c.layout}: ${c.error ? `${c.error} ${c.field}` : 'ok'}`, () => {
      const build = () => new Generator({ layout: layoutOf(c.layout), ...options })
      if (c.error) expectError(build, c.error, { field: c.field })
      else build()
    })
  }
  // The environment's options (the engine's list, optionsFromEnv), built with requireNode.
  for (const c of v.env_cases) {
    test(`env ${JSON.stringify(c.env)}: ${c.error ? `${c.error} ${c.field}` : 'ok'}`, () => {
      const build = () => {
        const options = optionsFromEnv(c.env)
        assert.deepEqual(Object.keys(options).sort(), Object.keys(c.options).map((k) => jsName[k]).sort())
        new Generator({ ...options, requireNode: true, clock: new ManualClock(1_700_000_000_000) })
      }
      if (c.error) expectError(build, c.error, { field: c.field })
      else build()
    })
  }
  // A settings mapping by the engine's names (settingsOptions; each key's value 1).
  for (const c of v.settings_cases) {
    test(`settings ${c.keys.join(', ')}: ${c.error ? `${c.error} ${c.field}` : 'ok'}`, () => {
      const read = () => settingsOptions(Object.fromEntries(c.keys.map((k) => [k, 1])))
      if (!c.error) return assert.deepEqual(Object.keys(read()), c.names.map((n) => jsName[n]))
      assert.ok(expectError(read, c.error, { field: c.field }).message.startsWith(c.message_starts))
    })
  }
  test('every option but the test clock has its FLAKEID_ variable', () => {
    const env = Object.fromEntries(v.options.filter((o) => o.env).map((o) => [o.env, 'x']))
    assert.equal(Object.keys(env).length, v.options.length - 1)
    assert.throws(() => optionsFromEnv(env), (e) => e.code === 'FLAKEID_CONFIG') // 'x' is no number
  })
  test('a second configuration is refused with the engine\'s words', () => {
    expectError(() => configuredTwice('{"node":1}', '{"node":2}'), 'config', { field: 'settings' })
    assert.throws(() => configuredTwice('a', 'b'), /configured already, with a; another configuration asks for b/)
  })
})

describe('uuid.json', () => {
  const v = loadVectors('uuid')
  const hex = (bytes) => Buffer.from(bytes).toString('hex')
  const bytesOf = (h) => Uint8Array.from(Buffer.from(h, 'hex'))
  for (const c of v.uuid7) {
    test(`UUIDv7 ${c.uuid}: compose, its forms, its time`, () => {
      const u = composeUuid7(c.ms, c.rand_a, BigInt(c.rand_b))
      assert.equal(u, c.uuid)
      assert.equal(composeUuid7(c.ms, c.rand_a, c.rand_b), c.uuid)
      assert.equal(hex(parseUuid(u)), c.bytes)
      assert.equal(formatUuid(bytesOf(c.bytes)), c.uuid)
      assert.equal(formatUuid(BigInt(`0x${c.bytes}`)), c.uuid)
      assert.equal(uuidToUlid(u), c.ulid)
      assert.equal(formatUlid(u), c.ulid)
      assert.equal(ulidToUuid(c.ulid), c.uuid)
      assert.equal(hex(parseUlid(c.ulid)), c.bytes)
      assert.equal(formatTypeId('user', u), c.typeid)
      assert.deepEqual({ ...parseTypeId(c.typeid) }, { prefix: 'user', uuid: c.uuid })
      assert.equal(uuidVersion(u), 7)
      for (const form of [u, bytesOf(c.bytes), BigInt(`0x${c.bytes}`), c.ulid, c.typeid]) {
        assert.equal(uuid7TimestampMs(form), c.ms, String(form))
      }
    })
  }
  for (const c of v.compose_errors) {
    test(`composeUuid7 refuses ${c.field}`, () => {
      expectError(() => composeUuid7(c.ms, c.rand_a, BigInt(c.rand_b)), c.error, { field: c.field })
    })
  }
  test('conversions are byte copies', () => {
    for (const c of v.conversions) {
      assert.equal(ulidToUuid(c.ulid), c.uuid)
      assert.equal(uuidToUlid(c.uuid), c.ulid)
    }
  })
  test('text aliases read as the same bits', () => {
    for (const c of v.text_aliases) {
      const bytes = c.kind === 'uuid' ? parseUuid(c.text) : parseUlid(c.text)
      assert.equal(formatUuid(bytes), c.uuid, c.text)
      if (c.kind === 'ulid') assert.equal(ulidToUuid(c.text), c.uuid, c.text)
    }
  })
  for (const c of v.bad) {
    test(`bad ${c.kind} ${JSON.stringify(c.text)}: position ${c.position}`, () => {
      const parse = c.kind === 'uuid' ? parseUuid : parseUlid
      const convert = c.kind === 'uuid' ? uuidToUlid : ulidToUuid
      for (const f of [parse, convert]) expectError(() => f(c.text), c.error, { position: c.position })
    })
  }
  for (const c of v.typeid_valid) {
    test(`TypeID valid: ${c.name}`, () => {
      assert.deepEqual({ ...parseTypeId(c.typeid) }, { prefix: c.prefix, uuid: c.uuid })
      assert.equal(formatTypeId(c.prefix, c.uuid), c.typeid)
    })
  }
  for (const c of v.typeid_invalid) {
    test(`TypeID invalid: ${c.name}`, () => {
      expectError(() => parseTypeId(c.typeid), c.error, { position: c.position })
    })
  }
  for (const c of v.prefix_errors) {
    test(`TypeID prefix refused: ${c.prefix.slice(0, 12)}`, () => {
      expectError(() => formatTypeId(c.prefix, '00000000-0000-7000-8000-000000000000'), c.error, { field: c.field })
      const g = new UuidGenerator()
      expectError(() => g.typeid(c.prefix), c.error, { field: c.field })
      assert.equal(g.stats().idsIssued, 0, 'a bad prefix cost an ID')
    })
  }
  for (const c of v.ranges) {
    test(`uuid7Range(${c.start_ms}, ${c.end_ms})`, () => {
      assert.deepEqual(uuid7Range(c.start_ms, c.end_ms), [c.first, c.last])
      // (As ULIDs: a bound's version and variant bits are not a UUIDv7's.)
      assert.equal(uuid7TimestampMs(uuidToUlid(c.first)), c.start_ms)
      assert.equal(uuid7TimestampMs(uuidToUlid(c.last)), c.end_ms)
    })
  }
})

// The JS packages' own refusals (tests/vectors/js/, flakeid-js's words): the native
// addon and the wasm build must throw each with the same code, field and message.
describe('js/refusals.json', () => {
  const v = loadVectors('js/refusals')
  const value = (x) => {
    if (Array.isArray(x)) return x.map(value)
    if (x === null || typeof x !== 'object') return x
    if (x.$ === 'object') return {}
    if (x.$ === 'key') return new Uint8Array(16)
    return Object.fromEntries(Object.entries(x).map(([k, y]) => [k, value(y)]))
  }
  const calls = {
    idRange: (...a) => idRange(...a),
    'Layout.idRange': (...a) => Layout.preset('snowflake').idRange(...a),
    nextIds: (...a) => new Generator({ node: 0, clock: new ManualClock(1_700_000_000_000) }).nextIds(...a),
    Generator: (...a) => new Generator(...a),
    Sealer: (...a) => new Sealer(...a),
    decompose: (...a) => decompose(...a),
    fromBytes: (...a) => fromBytes(...a),
    'Layout.preset': (...a) => Layout.preset(...a),
    Layout: (...a) => new Layout(...a),
  }
  for (const c of v.refusals) {
    test(`${c.call}(${JSON.stringify(c.args).slice(1, -1)}): ${c.message}`, () => {
      const err = expectError(() => calls[c.call](...value(c.args)), c.error, { field: c.field ?? undefined })
      assert.equal(err.message, c.message)
    })
  }
})

describe('wide.json', () => {
  // The core's table of the 128-bit family's functions: the node column names an
  // export of this package, or Class.method (and of the wasm package: the same suite
  // runs on both).
  for (const f of loadVectors('wide').functions) {
    test(`128-bit: ${f.what}: ${f.node ?? `none (${f.note})`}`, () => {
      if (f.node === null) return assert.ok(f.note)
      // A function, or Class.method (a method of the class's prototype).
      const [name, method] = f.node.split('.')
      const found = method === undefined ? api[name] : api[name]?.prototype?.[method]
      assert.equal(typeof found, 'function', `${f.node} is not exported`)
    })
  }
})

describe('wide.json explicit times and shifts', () => {
  // JSON.parse cannot hold the rows past 2^53 exactly: they are for 64-bit runtimes.
  const exact = (n) => Number.isSafeInteger(n)
  // A test per exact row of `section`, each on a fresh generator: a row with an error
  // expects `g[method](row[key])` to throw it, the others go to `check(g, row)`.
  const eachRow = (section, key, method, check) => {
    for (const c of loadVectors('wide')[section].filter((c) => exact(c[key]))) {
      test(`${method}(${c[key]})`, () => {
        const g = new UuidGenerator()
        if (c.error) {
          expectError(() => g[method](c[key]), c.error, { field: c.field })
          return
        }
        check(g, c)
      })
    }
  }
  eachRow('explicit_times', 'unix_ms', 'uuid7At', (g, c) => {
    for (const u of [g.uuid7At(c.unix_ms), g.uuid7({ msecs: c.unix_ms })]) {
      const hex = u.replaceAll('-', '')
      assert.equal(hex.slice(0, 12), c.time_hex)
      assert.ok(hex[12] === '7' && '89ab'.includes(hex[16]), u)
    }
    assert.equal(g.stats().idsIssued, 0, 'an explicit time took a slot of the sequence')
  })
  eachRow('shifts', 'shift_ms', 'uuid7Shifted', (g, c) => {
    const before = Date.now()
    const u = g.uuid7Shifted(c.shift_ms)
    const after = Date.now()
    const ms = uuid7TimestampMs(u)
    assert.ok(ms >= before + c.shift_ms && ms <= after + c.shift_ms, `${ms} not in [${before}, ${after}] + shift`)
  })
  test('uuid7(options) takes msecs and refuses every other option (none ignored)', () => {
    const g = new UuidGenerator()
    for (const call of [(o) => g.uuid7(o), (o) => api.uuid7(o)]) {
      assert.equal(uuid7TimestampMs(call({ msecs: 1_700_000_000_000 })), 1_700_000_000_000)
      assert.equal(uuid7TimestampMs(call({ msecs: undefined })) > 1_700_000_000_000, true)
      expectError(() => call({ seq: 1 }), 'config', { field: 'options' })
      expectError(() => call({ msecs: 1.5 }), 'config', { field: 'msecs' })
      expectError(() => call({ msecs: -1 }), 'config', { field: 'msecs' })
      expectError(() => call(5), 'config', {})
    }
    const a = g.uuid7()
    g.uuid7At(0)
    assert.ok(g.uuid7() > a, 'an explicit time moved the sequence')
  })
})

test('every vector file, and every section of it, is run here', () => {
  const sections = {
    compose: ['cases', 'compose_errors', 'decompose_errors', 'ranges'],
    encodings: ['bad', 'cases', 'decode_aliases'],
    layouts: ['invalid_generators', 'invalid_layouts', 'presets'],
    options: ['cases', 'env_cases', 'options', 'settings_cases'],
    seal: ['groups', 'invalid'],
    timelines: ['timelines'],
    uuid: ['bad', 'compose_errors', 'conversions', 'prefix_errors', 'ranges', 'text_aliases', 'typeid_invalid',
      'typeid_valid', 'uuid7'],
    wide: ['explicit_times', 'functions', 'shifts'],
  }
  // decode_auto.json: run by the core, the CLI and the service only (no auto-detecting decode here).
  assert.deepEqual(vectorFiles().filter((f) => f !== 'decode_auto'), Object.keys(sections))
  // js/: the JS packages' own (the other languages read the top level only).
  assert.deepEqual(vectorFiles('js'), ['refusals'])
  assert.deepEqual(Object.keys(loadVectors('js/refusals')).sort(), ['_comment', 'refusals'])
  for (const [name, keys] of Object.entries(sections)) {
    assert.deepEqual(Object.keys(loadVectors(name)).filter((k) => k !== '_comment').sort(), keys, `${name}.json`)
  }
})

test('every vector error kind is a known code', () => {
  const kinds = new Set()
  const walk = (x) => {
    if (Array.isArray(x)) x.forEach(walk)
    else if (x && typeof x === 'object') {
      if (typeof x.error === 'string') kinds.add(x.error)
      Object.values(x).forEach(walk)
    }
  }
  for (const f of vectorFiles()) walk(loadVectors(f))
  assert.ok(kinds.size >= 4)
  for (const k of kinds) assert.ok(codeOf(k).startsWith('FLAKEID_'))
})
