//! The shared vectors: generated here, checked here, and run by every binding.
//!
//! `make vectors` (`FLAKEID_REGENERATE_VECTORS=1 cargo test -p flakeid-core --test
//! vectors`) rewrites `tests/vectors/*.json`. Expected IDs and encodings are computed
//! below by plain arithmetic from the preset table in this file — not by the
//! engine's `compose`/`encode` — so the engine is checked against an independent
//! statement of the contract. Timelines are scripts with the (tick, sequence) each
//! step must produce, written out by hand from API.md §2.

#![allow(clippy::unwrap_used)]

use flakeid_core::{
    ClockBackwards, Encoding, Error, GENERATOR_OPTIONS, Generator, Layout, ManualClock, OptionKind, OptionValue,
    Overflow, decode, decode_auto, encode, from_bytes, to_bytes,
};
use serde_json::{Value, json};

#[path = "vectors/files.rs"]
mod files;
#[path = "vectors/uuid.rs"]
mod uuid;
#[path = "vectors/wide.rs"]
mod wide;

use files::{layout_of, load};

// ---------------------------------------------------------------- the contract table

#[derive(Clone, Copy)]
struct Spec {
    name: Option<&'static str>,
    time: u32,
    dc: u32,
    worker: u32,
    seq: u32,
    tick: u64,
    epoch: u64,
    time_seq_node: bool,
}

/// API.md §1, typed in again on purpose.
const PRESETS: [Spec; 7] = [
    spec(Some("snowflake"), [41, 5, 5, 12], 1, 1288834974657, false),
    spec(Some("flake"), [42, 5, 5, 12], 1, 0, false),
    spec(Some("discord"), [42, 5, 5, 12], 1, 1420070400000, false),
    spec(Some("sonyflake"), [39, 0, 16, 8], 10, 1409529600000, true),
    spec(Some("baidu"), [28, 0, 22, 13], 1000, 1463702400000, false),
    spec(Some("instagram"), [41, 0, 13, 10], 1, 1314220021721, false),
    spec(Some("js53"), [41, 0, 3, 9], 1, 1577203200000, false),
];

/// A tiny custom layout (4 IDs per tick) that makes exhaustion easy to script.
const SMALL: Spec = spec(None, [41, 5, 5, 2], 1, 1288834974657, false);

const fn spec(
    name: Option<&'static str>,
    [time, dc, worker, seq]: [u32; 4],
    tick: u64,
    epoch: u64,
    time_seq_node: bool,
) -> Spec {
    Spec {
        name,
        time,
        dc,
        worker,
        seq,
        tick,
        epoch,
        time_seq_node,
    }
}

fn m(bits: u32) -> u64 {
    if bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 }
}

impl Spec {
    fn node_bits(&self) -> u32 {
        self.dc + self.worker
    }
    fn shift(&self) -> u32 {
        self.node_bits() + self.seq
    }
    fn max_ticks(&self) -> u64 {
        m(self.time)
    }
    fn last_ms(&self) -> u64 {
        self.epoch + (self.max_ticks() + 1) * self.tick - 1
    }
    fn ms_of(&self, ticks: u64) -> u64 {
        self.epoch + ticks * self.tick
    }
    fn id(&self, ticks: u64, node: u64, seq: u64) -> u64 {
        let t = if self.shift() >= 64 { 0 } else { ticks << self.shift() };
        if self.time_seq_node {
            t | seq << self.node_bits() | node
        } else {
            t | node << self.seq | seq
        }
    }
    fn id_at(&self, ms: u64, node: u64, seq: u64) -> u64 {
        self.id((ms - self.epoch) / self.tick, node, seq)
    }
    fn json(&self) -> Value {
        match self.name {
            Some(n) => json!(n),
            None => json!({
                "time_bits": self.time, "datacenter_bits": self.dc, "worker_bits": self.worker,
                "sequence_bits": self.seq, "tick_ms": self.tick, "epoch_ms": self.epoch,
                "order": if self.time_seq_node { "time|seq|node" } else { "time|node|seq" },
            }),
        }
    }
}

fn s(id: u64) -> Value {
    json!(id.to_string())
}

// ---------------------------------------------------------------- generation

fn layouts_json() -> Value {
    let presets: Vec<Value> = PRESETS
        .iter()
        .map(|p| {
            json!({
                "name": p.name, "time_bits": p.time, "datacenter_bits": p.dc, "worker_bits": p.worker,
                "node_bits": p.node_bits(), "sequence_bits": p.seq, "tick_ms": p.tick, "epoch_ms": p.epoch,
                "order": if p.time_seq_node { "time|seq|node" } else { "time|node|seq" },
                "last_timestamp_ms": p.last_ms(), "max_id": s(m(p.time + p.node_bits() + p.seq)),
            })
        })
        .collect();
    let base = |f: &dyn Fn(&mut Spec)| {
        let mut sp = SMALL;
        sp.seq = 12;
        f(&mut sp);
        sp.json()
    };
    let invalid_layouts = vec![
        json!({"layout": base(&|s| s.time = 0), "error": "config", "field": "time_bits"}),
        json!({"layout": base(&|s| s.seq = 0), "error": "config", "field": "sequence_bits"}),
        json!({"layout": base(&|s| s.tick = 0), "error": "config", "field": "tick_ms"}),
        json!({"layout": base(&|s| s.time = 43), "error": "config", "field": "time_bits"}),
        json!({"layout": base(&|s| { s.time = 45; s.dc = 0; s.worker = 0; s.seq = 19 }), "error": "config", "field": "sequence_bits"}),
        json!({"layout": base(&|s| s.epoch = 4_000_000_000_000), "error": "config", "field": "epoch_ms"}),
        json!({"layout": base(&|s| s.worker = 63), "error": "config", "field": "worker_bits"}),
    ];
    let invalid_generators = vec![
        json!({"layout": "snowflake", "options": {"worker": 32}, "error": "config", "field": "worker"}),
        json!({"layout": "snowflake", "options": {"datacenter": 32}, "error": "config", "field": "datacenter"}),
        json!({"layout": "snowflake", "options": {"node": 1024}, "error": "config", "field": "node"}),
        json!({"layout": "flake", "options": {"node": 1024}, "error": "config", "field": "node"}),
        json!({"layout": "sonyflake", "options": {"datacenter": 1}, "error": "config", "field": "datacenter"}),
        json!({"layout": "sonyflake", "options": {"node": 65536}, "error": "config", "field": "node"}),
        json!({"layout": "baidu", "options": {"worker": 4194304}, "error": "config", "field": "worker"}),
        json!({"layout": "instagram", "options": {"node": 8192}, "error": "config", "field": "node"}),
        json!({"layout": "js53", "options": {"node": 8}, "error": "config", "field": "node"}),
        json!({"layout": "js53", "options": {"datacenter": 1}, "error": "config", "field": "datacenter"}),
        json!({"layout": "snowflake", "options": {"overflow": "sometimes"}, "error": "config", "field": "overflow"}),
        json!({"layout": "snowflake", "options": {"clock_backwards": "ignore"}, "error": "config", "field": "clock_backwards"}),
        json!({"layout": "snowflake", "options": {"max_wait_ms": 86_400_001u64}, "error": "config", "field": "max_wait_ms"}),
        json!({"layout": "snowflake", "options": {"max_borrow_ms": 86_400_001u64}, "error": "config", "field": "max_borrow_ms"}),
    ];
    json!({
        "_comment": "Presets with their numbers, and configurations that must be refused with a config error naming the field. Generated by crates/flakeid-core/tests/vectors.rs; regenerate with `make vectors`.",
        "presets": presets,
        "invalid_layouts": invalid_layouts,
        "invalid_generators": invalid_generators,
    })
}

fn compose_json() -> Value {
    let mut cases = Vec::new();
    let mut errors = Vec::new();
    let mut decompose_errors = Vec::new();
    let mut ranges = Vec::new();
    let mut case = |p: &Spec, ticks: u64, dc: u64, worker: u64, seq: u64| {
        let node = dc << p.worker | worker;
        cases.push(json!({
            "layout": p.json(), "timestamp_ms": p.ms_of(ticks), "ticks": ticks, "datacenter": dc,
            "worker": worker, "node": node, "sequence": seq, "id": s(p.id(ticks, node, seq)),
        }));
    };
    for p in PRESETS.iter().chain([&SMALL]) {
        let mid = (1_700_000_000_000 - p.epoch) / p.tick;
        case(p, 0, 0, 0, 0);
        case(p, 1, 0, 1, 1);
        case(p, mid, m(p.dc).min(1), m(p.worker).min(2), m(p.seq).min(7));
        case(p, p.max_ticks(), m(p.dc), m(p.worker), m(p.seq));
        case(p, p.max_ticks(), 0, 0, 0);
        if p.dc == 5 {
            case(p, (1_505_914_988_849 - p.epoch) / p.tick, 17, 25, 0);
        }
        let t = p.ms_of(mid);
        errors.push(json!({"layout": p.json(), "timestamp_ms": t, "node": m(p.node_bits()) + 1, "sequence": 0, "error": "config", "field": "node"}));
        errors.push(json!({"layout": p.json(), "timestamp_ms": t, "node": 0, "sequence": m(p.seq) + 1, "error": "config", "field": "sequence"}));
        errors.push(json!({"layout": p.json(), "timestamp_ms": p.last_ms() + 1, "node": 0, "sequence": 0, "error": "time_exhausted"}));
        if p.epoch > 0 {
            errors.push(json!({"layout": p.json(), "timestamp_ms": p.epoch - 1, "node": 0, "sequence": 0, "error": "time_exhausted"}));
        }
        let total = p.time + p.node_bits() + p.seq;
        if total < 64 {
            decompose_errors.push(json!({"layout": p.json(), "id": s(1u64 << total), "error": "parse"}));
            decompose_errors.push(json!({"layout": p.json(), "id": s(u64::MAX), "error": "parse"}));
        }
        let (a, b) = (1_700_000_000_000u64, 1_700_000_000_999u64);
        let first = ((a - p.epoch) / p.tick) << p.shift();
        let last = ((b - p.epoch) / p.tick) << p.shift() | m(p.shift());
        ranges.push(json!({"layout": p.json(), "start_ms": a, "end_ms": b, "first": s(first), "last": s(last)}));
    }
    json!({
        "_comment": "compose(timestamp_ms, node, sequence) == id and decompose(id) == the fields, for every preset and a 2-sequence-bit custom layout: zero, small, typical, maximum fields at the last representable tick, and seed 001's vector (snowflake: 1505914988849, dc 17, worker 25 -> 910499571847892992). Generated by crates/flakeid-core/tests/vectors.rs; regenerate with `make vectors`.",
        "cases": cases,
        "compose_errors": errors,
        "decompose_errors": decompose_errors,
        "ranges": ranges,
    })
}

fn radix(mut id: u64, alphabet: &[u8], width: usize) -> String {
    let base = alphabet.len() as u64;
    let mut out = vec![b'0'; width];
    for slot in out.iter_mut().rev() {
        *slot = alphabet[(id % base) as usize];
        id /= base;
    }
    String::from_utf8(out).unwrap()
}

fn encodings_json() -> Value {
    const B32: &[u8] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    const B62: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let mut ids = vec![
        0u64,
        1,
        31,
        32,
        61,
        62,
        (1 << 53) - 1,
        1 << 53,
        (1 << 53) + 1,
        910_499_571_847_892_992,
        (1 << 63) - 1,
        1 << 63,
        u64::MAX - 1,
        u64::MAX,
    ];
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    for _ in 0..12 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        ids.push(x);
    }
    let cases: Vec<Value> = ids
        .iter()
        .map(|&id| {
            json!({
                "id": s(id), "decimal": id.to_string(), "hex": format!("{id:016x}"),
                "base32": radix(id, B32, 13), "base62": radix(id, B62, 11),
                "bytes": format!("{id:016x}"),
            })
        })
        .collect();
    let seed = 910_499_571_847_892_992u64;
    let aliases = vec![
        json!({"encoding": "base32", "text": radix(seed, B32, 13).to_lowercase(), "id": s(seed)}),
        json!({"encoding": "base32", "text": "0000000000OIL", "id": s(33)}),
        json!({"encoding": "base32", "text": "0000000000oil", "id": s(33)}),
        json!({"encoding": "hex", "text": format!("{seed:016X}"), "id": s(seed)}),
    ];
    let bad = vec![
        json!({"encoding": "hex", "text": "00000000000000g0", "error": "parse", "position": 14}),
        json!({"encoding": "hex", "text": "abc", "error": "parse", "position": 3}),
        json!({"encoding": "hex", "text": "00000000000000000", "error": "parse", "position": 16}),
        json!({"encoding": "base32", "text": "000000000000U", "error": "parse", "position": 12}),
        json!({"encoding": "base32", "text": "G000000000000", "error": "parse", "position": 12}),
        json!({"encoding": "base32", "text": "0000000000000U", "error": "parse", "position": 13}),
        json!({"encoding": "base62", "text": "0000000000_", "error": "parse", "position": 10}),
        json!({"encoding": "base62", "text": "LygHa16AHYG", "error": "parse", "position": 10}),
        json!({"encoding": "base62", "text": "zzzzzzzzzzz", "error": "parse", "position": 10}),
        json!({"encoding": "base62", "text": "", "error": "parse", "position": 0}),
        json!({"encoding": "decimal", "text": "18446744073709551616", "error": "parse", "position": 19}),
        json!({"encoding": "decimal", "text": "12a", "error": "parse", "position": 2}),
        json!({"encoding": "decimal", "text": "-1", "error": "parse", "position": 0}),
        json!({"encoding": "decimal", "text": "", "error": "parse", "position": 0}),
        json!({"encoding": "decimal", "text": " 1", "error": "parse", "position": 0}),
    ];
    json!({
        "_comment": "Every encoding of edge and sample IDs: decimal, hex (16 lowercase), Crockford base32 (13), base62 (11, 0-9A-Za-z), 8 bytes big-endian (given as hex). Fixed-width forms sort like the integer. bad[] must fail with a parse error at `position` (0-based). Generated by crates/flakeid-core/tests/vectors.rs; regenerate with `make vectors`.",
        "cases": cases,
        "decode_aliases": aliases,
        "bad": bad,
    })
}

/// `decode_auto`: text in any form, read only when exactly one form reads it (issue
/// 21). Zero-padded digits and text that reads as two forms ask for `from`.
fn decode_auto_json() -> Value {
    const B32: &[u8] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    const B62: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let seed = 910_499_571_847_892_992u64;
    let ok = |text: &str, id: u64, encoding: &str| json!({"text": text, "id": s(id), "encoding": encoding});
    let bad = |text: &str, position: u64, ambiguous: bool| json!({"text": text, "error": "parse", "position": position, "ambiguous": ambiguous});
    // A base62 ID whose text begins "0X": not hex (y, H, L... are no hex digits).
    let b62_0x = "0X2yHLOz5Rg";
    let b62_0x_id = b62_0x.bytes().fold(0u64, |acc, c| {
        acc * 62 + B62.iter().position(|&b| b == c).unwrap() as u64
    });
    let cases = vec![
        ok("42", 42, "decimal"),
        ok("0", 0, "decimal"),
        ok(&seed.to_string(), seed, "decimal"),
        ok("0x2a", 42, "hex"),
        ok("0X2A", 42, "hex"),
        ok("0x0000000000000001", 1, "hex"),
        ok(&format!("{seed:016x}"), seed, "hex"),
        ok(&format!("{seed:016X}"), seed, "hex"),
        ok(&radix(seed, B32, 13), seed, "base32"),
        ok(&radix(seed, B32, 13).to_lowercase(), seed, "base32"),
        ok(&radix(seed, B62, 11), seed, "base62"),
        ok(b62_0x, b62_0x_id, "base62"),
        // Surrounding whitespace is trimmed.
        ok(" 42 ", 42, "decimal"),
        ok("\t0x2a\n", 42, "hex"),
        ok(&format!(" {} ", radix(seed, B62, 11)), seed, "base62"),
        // Zero-padded digits: hex, a fixed-width form, or a zero-padded decimal?
        bad("0000000000000042", 0, true),
        bad("0000006000000000", 0, true),
        bad("042", 0, true),
        bad("00", 0, true),
        bad("00000000000000000042", 0, true),
        bad(" 042 ", 0, true),
        // All digits at a fixed width: hex or decimal, base62 or decimal.
        bad("1000000000000000", 0, true),
        bad("12345678901", 0, true),
        // Not an ID in any form.
        bad("", 0, false),
        bad("   ", 0, false),
        bad("18446744073709551616", 19, false),
        bad("99999999999999999999", 19, false),
        bad("00000000000000g0", 14, false),
        bad("000000000000U", 12, false),
        bad("0000000000_", 10, false),
        bad("0x", 0, false),
        bad("0x12g", 0, false),
        bad("0x00000000000000001", 0, false),
        bad("zz", 0, false),
        bad("-1", 0, false),
        bad("12a", 0, false),
    ];
    json!({
        "_comment": "decode_auto: text in whichever form it is (0x + 1-16 hex digits; hex 16, base32 13, base62 11 characters; decimal), surrounding whitespace trimmed, read only when exactly one form reads it. Zero-padded digits and text that reads as two forms are a parse error at position 0 that names the ambiguity and asks which form (`ambiguous`: the message says \"ambiguous\" and \"from\"). Run by the core (decode_auto), the CLI (`flakeid decode TEXT`) and the service (`GET /v1/decode/TEXT`); the bindings have no auto-detecting decode. IDs fit the snowflake layout (below 2^63). Generated by crates/flakeid-core/tests/vectors.rs; regenerate with `make vectors`.",
        "cases": cases,
    })
}

/// Builds one timeline's steps.
struct Script {
    sp: Spec,
    node: u64,
    steps: Vec<Value>,
}

impl Script {
    fn new(sp: Spec, node: u64) -> Script {
        Script {
            sp,
            node,
            steps: vec![],
        }
    }
    fn id(&self, ms: u64, seq: u64) -> Value {
        s(self.sp.id_at(ms, self.node, seq))
    }
    /// `next_id()` must return the ID of tick `ms` with `seq`; the clock then reads `clock`.
    fn next(&mut self, ms: u64, seq: u64, clock: u64) -> &mut Self {
        let id = self.id(ms, seq);
        self.steps.push(json!({"op": "next", "id": id, "clock_ms": clock}));
        self
    }
    fn backwards(&mut self, by_ms: u64) -> &mut Self {
        self.steps
            .push(json!({"op": "next", "error": "clock_backwards", "by_ms": by_ms}));
        self
    }
    fn exhausted(&mut self) -> &mut Self {
        self.steps.push(json!({"op": "next", "error": "time_exhausted"}));
        self
    }
    fn set(&mut self, ms: u64) -> &mut Self {
        self.steps.push(json!({"op": "set", "ms": ms}));
        self
    }
    fn batch(&mut self, ids: &[(u64, u64)], clock: u64) -> &mut Self {
        let ids: Vec<Value> = ids.iter().map(|&(ms, seq)| self.id(ms, seq)).collect();
        self.steps
            .push(json!({"op": "next_ids", "n": ids.len(), "ids": ids, "clock_ms": clock}));
        self
    }
}

#[allow(clippy::too_many_arguments)]
/// Every timeline waits at most 5 ms, its clock moving 1 ms on each turn of a wait
/// loop; a borrowing one may run 2 ms ahead of the clock.
fn timeline(name: &str, sc: &Script, overflow: &str, backwards: &str, start_ms: u64) -> Value {
    let max_borrow_ms = if overflow == "borrow" { 2 } else { 0 };
    json!({
        "name": name, "layout": sc.sp.json(), "node": sc.node, "overflow": overflow,
        "clock_backwards": backwards, "max_borrow_ms": max_borrow_ms, "max_wait_ms": 5,
        "start_ms": start_ms, "auto_advance_ms": 1, "steps": sc.steps,
    })
}

/// A timeline named for its policies (one per overflow x clock_backwards).
fn policy_timeline(sc: &Script, overflow: &str, backwards: &str, start_ms: u64) -> Value {
    let name = format!("overflow={overflow}, clock_backwards={backwards}");
    timeline(&name, sc, overflow, backwards, start_ms)
}

fn timelines_json() -> Value {
    const T0: u64 = 1_700_000_000_000;
    let mut out = Vec::new();

    let mut a = Script::new(SMALL, 5);
    a.next(T0, 0, T0).next(T0, 1, T0).next(T0, 2, T0).next(T0, 3, T0);
    a.next(T0 + 1, 0, T0 + 1); // used up: spin to the next tick
    a.set(T0).backwards(1); // refused, nothing issued...
    a.set(T0 + 1).next(T0 + 1, 1, T0 + 1); // ...and the sequence goes on (Twitter #6)
    a.batch(
        &[(T0 + 1, 2), (T0 + 1, 3), (T0 + 2, 0), (T0 + 2, 1), (T0 + 2, 2)],
        T0 + 2,
    );
    a.set(T0 + 10).next(T0 + 10, 0, T0 + 10);
    out.push(policy_timeline(&a, "wait", "error", T0));

    let mut b = Script::new(SMALL, 5);
    b.next(T0 + 10, 0, T0 + 10);
    b.set(T0 + 7).next(T0 + 10, 1, T0 + 10); // 3 ms behind <= 5: wait it out
    b.set(T0).backwards(10); // 10 ms behind > 5: refuse at once
    b.set(T0 + 4).backwards(6);
    b.set(T0 + 5).next(T0 + 10, 2, T0 + 10);
    out.push(policy_timeline(&b, "wait", "wait", T0 + 10));

    let mut c = Script::new(SMALL, 5);
    c.next(T0 + 10, 0, T0 + 10);
    c.set(T0).next(T0 + 10, 1, T0).next(T0 + 10, 2, T0).next(T0 + 10, 3, T0); // keep the last tick
    c.backwards(10); // its sequence is used up and the next tick is 11 ms away (> 5)
    c.set(T0 + 7).next(T0 + 11, 0, T0 + 11); // 4 ms away: wait for it
    out.push(policy_timeline(&c, "wait", "monotonic", T0 + 10));

    let mut d = Script::new(SMALL, 5);
    let window: Vec<(u64, u64)> = (0..3).flat_map(|t| (0..4).map(move |q| (T0 + t, q))).collect();
    d.batch(&window, T0); // 2 ms of borrowed time, no wait
    d.next(T0 + 3, 0, T0 + 1); // window used up: wait until the clock lets T0+3 in
    d.next(T0 + 3, 1, T0 + 1);
    d.set(T0 - 1).backwards(4);
    d.set(T0).backwards(3);
    d.set(T0 + 1).next(T0 + 3, 2, T0 + 1);
    out.push(policy_timeline(&d, "borrow", "error", T0));

    let mut e = Script::new(SMALL, 5);
    e.next(T0 + 10, 0, T0 + 10);
    e.set(T0 + 9).next(T0 + 10, 1, T0 + 9); // within the borrow window: no rollback at all
    e.set(T0 + 3).next(T0 + 10, 2, T0 + 8); // 5 ms until the window reaches T0+10: wait
    e.set(T0).backwards(10);
    out.push(policy_timeline(&e, "borrow", "wait", T0 + 10));

    let mut f = Script::new(SMALL, 5);
    f.next(T0 + 10, 0, T0 + 10);
    f.set(T0).next(T0 + 10, 1, T0).next(T0 + 10, 2, T0).next(T0 + 10, 3, T0);
    f.backwards(10);
    f.set(T0 + 5).next(T0 + 11, 0, T0 + 9);
    out.push(policy_timeline(&f, "borrow", "monotonic", T0 + 10));

    let sf = PRESETS[0];
    let mut g = Script::new(sf, 0);
    g.next(sf.epoch + 1, 0, sf.epoch + 1)
        .next(sf.epoch + 1, 1, sf.epoch + 1);
    g.set(sf.epoch).backwards(1);
    g.set(sf.epoch + 1).next(sf.epoch + 1, 2, sf.epoch + 1);
    out.push(timeline(
        "Twitter snowflake issue #6: a refused rollback keeps the sequence",
        &g,
        "wait",
        "error",
        sf.epoch + 1,
    ));

    let mut h = Script::new(SMALL, 31);
    let last = SMALL.last_ms();
    h.exhausted(); // before the epoch
    h.set(last);
    for q in 0..4 {
        h.next(last, q, last);
    }
    h.exhausted(); // the last tick is used up and there is no next one
    h.set(last + 1).exhausted();
    out.push(timeline(
        "before the epoch and past the last tick",
        &h,
        "wait",
        "error",
        SMALL.epoch - 1,
    ));

    let sony = PRESETS[3];
    let mut i = Script::new(sony, 0x1234);
    i.next(T0 + 3, 0, T0 + 3).next(T0 + 3, 1, T0 + 3);
    i.set(T0 + 9).next(T0 + 9, 2, T0 + 9); // same 10 ms tick
    i.set(T0 + 10).next(T0 + 10, 0, T0 + 10);
    i.set(T0 + 5).backwards(5);
    out.push(timeline(
        "sonyflake: 10 ms ticks, time|seq|node",
        &i,
        "wait",
        "error",
        T0 + 3,
    ));

    let baidu = PRESETS[4];
    let mut j = Script::new(baidu, 4_000_000);
    j.next(T0, 0, T0).next(T0, 1, T0);
    j.set(T0 + 999).next(T0 + 999, 2, T0 + 999);
    j.set(T0 + 1000).next(T0 + 1000, 0, T0 + 1000);
    out.push(timeline("baidu: one-second ticks", &j, "wait", "error", T0));

    json!({
        "_comment": "Scripted manual-clock timelines, one per overflow x clock_backwards policy plus edge cases: each step's exact ID or error. The clock advances by auto_advance_ms on every turn of a wait loop, so waits end deterministically; clock_ms is its reading after the step. Generated by crates/flakeid-core/tests/vectors.rs; regenerate with `make vectors`.",
        "timelines": out,
    })
}

/// A lease URL that the cases below never reach: every rule they break is checked
/// before a store is touched.
const UNUSED_LEASE: &str = "file:///nonexistent/flakeid-options-vectors";
/// A state file the cases below never reach.
const UNUSED_STATE: &str = "/nonexistent/flakeid-options-vectors.state";

fn options_json() -> Value {
    // The table itself (from the core: the list each binding checks it exposes).
    let table: Vec<Value> = GENERATOR_OPTIONS
        .iter()
        .map(|o| {
            let mut v = json!({
                "name": o.name, "camel_name": o.camel_name, "flag": o.flag, "kind": kind_name(o.kind),
                "default": o.default, "unset": o.unset, "requires": o.requires, "doc": o.doc, "default_128": o.default_128,
                "env": o.from_outside().then(|| o.env_var()), "setting": o.from_outside(),
                "applies_128": o.applies_128,
            });
            if let OptionKind::Choice(words) = o.kind {
                v["choices"] = json!(words);
            }
            if o.kind == OptionKind::Uint && o.max < u64::MAX {
                v["min"] = json!(o.min);
                v["max"] = json!(o.max);
            }
            v
        })
        .collect();
    // The cases: written out by hand from API.md and the table's ranges, one broken rule each.
    let ok = |o: Value| json!({"layout": "snowflake", "options": o});
    let bad = |o: Value, field: &str| json!({"layout": "snowflake", "options": o, "error": "config", "field": field});
    let bad_in = |layout: &str, o: Value, field: &str| json!({"layout": layout, "options": o, "error": "config", "field": field});
    // A case that builds gives a node id: with none, whether a build may take one
    // depends on where it runs (node_origin.rs), not on the options.
    let cases = vec![
        ok(json!({"node": 1})),
        ok(json!({"datacenter": 31, "worker": 31})),
        ok(json!({"node": 1023})),
        ok(json!({"node": 1, "overflow": "borrow", "max_borrow_ms": 86_400_000u64})),
        ok(json!({"node": 1, "clock_backwards": "monotonic", "max_wait_ms": 0})),
        ok(json!({"node": 1, "max_sequence": 0})),
        ok(json!({"node": 1, "max_sequence": 4095})),
        bad(json!({"lease_ttl_ms": 10_000}), "lease_ttl_ms"),
        bad(json!({"lease_ttl_ms": 5}), "lease_ttl_ms"),
        bad(json!({"node": 3, "lease_ttl_ms": 10_000}), "lease_ttl_ms"),
        bad(json!({"lease": UNUSED_LEASE, "lease_ttl_ms": 999}), "lease_ttl_ms"),
        // state keeps a fixed node id's mark; a lease keeps its own (refused before
        // either is touched). A binding without files (wasm) refuses state alone too.
        bad(json!({"lease": UNUSED_LEASE, "state": UNUSED_STATE}), "state"),
        bad(
            json!({"lease": UNUSED_LEASE, "lease_ttl_ms": 3_600_001u64}),
            "lease_ttl_ms",
        ),
        bad(json!({"max_sequence": 1000}), "max_sequence"),
        bad(json!({"max_sequence": 8191}), "max_sequence"),
        bad(json!({"max_wait_ms": 86_400_001u64}), "max_wait_ms"),
        bad(json!({"max_borrow_ms": 86_400_001u64}), "max_borrow_ms"),
        bad(json!({"overflow": "sometimes"}), "overflow"),
        bad(json!({"clock_backwards": "ignore"}), "clock_backwards"),
        bad(json!({"datacenter": 32}), "datacenter"),
        bad(json!({"worker": 32}), "worker"),
        bad(json!({"node": 1024}), "node"),
        bad_in("sonyflake", json!({"datacenter": 1}), "datacenter"),
        bad_in("sonyflake", json!({"max_sequence": 511}), "max_sequence"),
        bad_in("baidu", json!({"worker": 4_194_304}), "worker"),
        ok(json!({"node": 1, "require_node": false})),
        ok(json!({"node": 1, "single_instance": true})),
        ok(json!({"require_node": true, "worker": 30})),
        bad(json!({"require_node": true}), "node"),
        bad(json!({"require_node": true, "datacenter": 1}), "node"),
    ];
    json!({
        "_comment": "The generator's options. options[]: the core's table (crates/flakeid-core/src/options.rs): name (snake_case: Python, C, GUCs), camel_name (Node, wasm), flag (CLI and service: --flag), kind, default (\"\" = unset), min/max for fixed ranges (node ids and max_sequence depend on the layout), requires, doc (one line for help texts), unset (what leaving an option with no default unset means, \"\" for nothing more), default_128 (the 128-bit generator's default where it differs, \"\" for the same), env (the variable that sets it, null for none), setting (whether a framework's settings may give it), applies_128 (whether the 128-bit generator reads it too: the clock policies; those with a setting are the names UuidGenerator options take). cases[]: layout (preset) and options by snake_case name (numbers, booleans or strings) -> built fine (no error), or refused with error (ErrorKind name) and field. env_cases[]: environment variables -> the options read (name -> text) and, built on snowflake with require_node, fine or refused with error and field. settings_cases[]: a settings mapping's keys -> the options they name, or refused (error, field, message_starts). A binding that lacks an option (wasm: lease) skips the cases that use it. Generated by crates/flakeid-core/tests/vectors.rs; regenerate with `make vectors`.",
        "options": table,
        "cases": cases,
        "env_cases": env_cases(),
        "settings_cases": settings_cases(),
    })
}

/// The environment's cases: what `options_from_env` reads, and what building on
/// them says (every adapter builds with require_node).
fn env_cases() -> Vec<Value> {
    let envs: Vec<Vec<(&str, &str)>> = vec![
        vec![("FLAKEID_NODE", "7")],
        vec![
            ("FLAKEID_DATACENTER", "1"),
            ("FLAKEID_WORKER", "2"),
            ("FLAKEID_LAYOUT", "snowflake"),
        ],
        vec![
            ("FLAKEID_WORKER", "4"),
            ("FLAKEID_OVERFLOW", "borrow"),
            ("FLAKEID_MAX_BORROW_MS", "500"),
        ],
        vec![("FLAKEID_NODE", "env:FLAKEID_VECTORS_UNSET_VARIABLE")],
        vec![("FLAKEID_NODE", "5"), ("FLAKEID_CLOCK", "1"), ("FLAKEID_LEASE", " ")],
        vec![],
        vec![("FLAKEID_DATACENTER", "3")],
        vec![("FLAKEID_NODE", "seven")],
        vec![("FLAKEID_WORKER", "x")],
        vec![("FLAKEID_NODE", "6"), ("FLAKEID_WORKER", "6")],
        vec![("FLAKEID_NODE", "8"), ("FLAKEID_LEASE_TTL_MS", "5000")],
        vec![("FLAKEID_NODE", "9"), ("FLAKEID_OVERFLOW", "sometimes")],
        vec![("FLAKEID_NODE", "9"), ("FLAKEID_REQUIRE_NODE", "maybe")],
        vec![("FLAKEID_LAYOUT", "twitter"), ("FLAKEID_NODE", "3")],
    ];
    envs.into_iter()
        .map(|env| {
            let read =
                flakeid_core::options_from_env(|k| env.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string()));
            let built = (|| {
                let mut b = Generator::builder(Layout::SNOWFLAKE)
                    .require_node()
                    .clock(ManualClock::new(1_700_000_000_000));
                for (name, text) in &read {
                    b = b.set_text(name, text)?;
                }
                b.build().map(|_| ())
            })();
            let env: serde_json::Map<String, Value> = env.iter().map(|(k, v)| (k.to_string(), json!(v))).collect();
            let options: serde_json::Map<String, Value> = read.iter().map(|(k, v)| (k.to_string(), json!(v))).collect();
            let mut case = json!({"env": env, "options": options});
            if let Err(e) = built {
                case["error"] = json!(e.kind().name());
                case["field"] = json!(e.details().field);
            }
            case
        })
        .collect()
}

/// A settings mapping's keys, as framework adapters take them (any case; the
/// flag's spelling): the options they name, or the refusal.
fn settings_cases() -> Vec<Value> {
    let keys: Vec<Vec<&str>> = vec![
        vec!["node", "LAYOUT", "clock-backwards", "Lease_Ttl_Ms", "require_node"],
        vec!["NODE", "DATACENTER", "WORKER", "OVERFLOW", "MAX_SEQUENCE", "STATE"],
        vec!["node", "workerId"],
        vec!["clock"],
        vec!["nodes"],
    ];
    keys.into_iter()
        .map(|keys| {
            let mut names = Vec::new();
            let mut case = json!({"keys": keys});
            for key in &keys {
                match flakeid_core::setting_option(key) {
                    Ok(o) => names.push(o.name),
                    Err(e) => {
                        case["error"] = json!(e.kind().name());
                        case["field"] = json!(e.details().field);
                        let message = e.to_string();
                        case["message_starts"] = json!(
                            message
                                .split(" (did you mean")
                                .next()
                                .unwrap_or(&message)
                                .split(';')
                                .next()
                        );
                        return case;
                    }
                }
            }
            case["names"] = json!(names);
            case
        })
        .collect()
}

fn kind_name(kind: OptionKind) -> &'static str {
    match kind {
        OptionKind::Uint => "uint",
        OptionKind::Node => "node",
        OptionKind::Choice(_) => "choice",
        OptionKind::Layout => "layout",
        OptionKind::LeaseUrl => "lease_url",
        OptionKind::Clock => "clock",
        OptionKind::Path => "path",
        OptionKind::Bool => "bool",
        _ => "other",
    }
}

fn all_vectors() -> Vec<(&'static str, Value)> {
    vec![
        ("layouts.json", layouts_json()),
        ("compose.json", compose_json()),
        ("encodings.json", encodings_json()),
        ("decode_auto.json", decode_auto_json()),
        ("timelines.json", timelines_json()),
        ("options.json", options_json()),
        ("uuid.json", uuid::uuid_json()),
        ("wide.json", wide_json()),
    ]
}

/// The 128-bit family's functions, each runtime's name (`wide::WIDE_FUNCTIONS`).
fn wide_json() -> Value {
    let functions = wide::functions_json();
    json!({
        "explicit_times": explicit_time_cases(),
        "shifts": shift_cases(),
        "_comment": "The 128-bit family's functions (a generator's calls, the process's shortcuts, then those that make no ID), one row each, with each runtime's name: the vectors program's table (crates/flakeid-core/tests/vectors/wide.rs, WIDE_FUNCTIONS; as Markdown in wide.md). null: the runtime has none (note says why, or what does it there). Each runtime's vector test checks that every name of its column is one of its exports: python (the flakeid module: a function or Class.method), node (the Node and wasm packages: a function or Class.method), c (include/flakeid.h), go (a function, or UUID.Method / UUIDGenerator.Method), java (Class.method), sql (the extension's functions). explicit_times: UuidGenerator::uuid7_at(unix_ms) in each runtime's spelling (the row 'a UUIDv7 at a given time'): time_hex is the UUID's first 12 hex digits, with version 7 and RFC 9562's variant; or the error's kind and field. shifts: uuid7_shifted(shift_ms): without error, the UUID's ms is within [clock before the call + shift_ms, clock after + shift_ms]; or the error's kind and field. Numbers past 2^53 are for runtimes with 64-bit integers (a JSON.parse reader skips those rows). Generated by crates/flakeid-core/tests/vectors.rs; regenerate with `make vectors`.",
        "functions": functions,
    })
}

/// Without the `uuid7` feature (no 128-bit generator to make them) the rows below
/// are the committed file's.
#[cfg(not(feature = "uuid7"))]
fn committed_wide(section: &str) -> Vec<Value> {
    load("wide.json")[section].as_array().cloned().unwrap_or_default()
}

#[cfg(not(feature = "uuid7"))]
fn explicit_time_cases() -> Vec<Value> {
    committed_wide("explicit_times")
}

#[cfg(not(feature = "uuid7"))]
fn shift_cases() -> Vec<Value> {
    committed_wide("shifts")
}

/// A UUIDv7 at an explicit Unix ms: its first 12 hex digits (the 48-bit time), or
/// the refusal. The other 74 bits are random; a runtime checks version 7 and the
/// variant besides.
#[cfg(feature = "uuid7")]
fn explicit_time_cases() -> Vec<Value> {
    let g = flakeid_core::UuidGenerator::builder().build().unwrap();
    [0u64, 1, 1_000, 1_700_000_000_000, (1 << 48) - 1, 1 << 48, u64::MAX]
        .into_iter()
        .map(|ms| match g.uuid7_at(ms) {
            Ok(u) => json!({"unix_ms": ms, "time_hex": format!("{:012x}", u >> 80)}),
            Err(e) => json!({"unix_ms": ms, "error": e.kind().name(), "field": e.details().field}),
        })
        .collect()
}

/// A shifted now: the UUID's time is the clock's before the call plus the shift at
/// least, and after it plus the shift at most; or the refusal.
#[cfg(feature = "uuid7")]
fn shift_cases() -> Vec<Value> {
    let g = flakeid_core::UuidGenerator::builder().build().unwrap();
    [0i64, -86_400_000, 3_600_000, i64::MIN, i64::MAX, 1 << 48]
        .into_iter()
        .map(|shift| match g.uuid7_shifted(shift) {
            Ok(_) => json!({"shift_ms": shift}),
            Err(e) => json!({"shift_ms": shift, "error": e.kind().name(), "field": e.details().field}),
        })
        .collect()
}

#[test]
fn vectors_are_fresh() {
    let json = all_vectors()
        .into_iter()
        .map(|(name, value)| (name, serde_json::to_string_pretty(&value).unwrap() + "\n"));
    for (name, text) in json.chain([("wide.md", wide::functions_markdown())]) {
        files::check_fresh("flakeid-core", name, &text);
    }
}

// ---------------------------------------------------------------- running them

#[test]
fn uuid_vectors() {
    uuid::check_uuid(&load("uuid.json"));
}

fn id_of(v: &Value) -> u64 {
    v.as_str().unwrap().parse().unwrap()
}

fn assert_error(result: Result<impl std::fmt::Debug, Error>, want: &Value, what: &str) {
    let err = match result {
        Ok(v) => panic!("{what}: expected {want}, got Ok({v:?})"),
        Err(e) => e,
    };
    assert_eq!(err.kind().name(), want["error"].as_str().unwrap(), "{what}: {err}");
    if let Some(field) = want.get("field") {
        match &err {
            Error::Config { field: f, .. } => assert_eq!(f, &field.as_str().unwrap(), "{what}: {err}"),
            other => panic!("{what}: {other:?} has no field"),
        }
    }
    if let Some(by) = want.get("by_ms") {
        assert_eq!(
            err,
            Error::ClockMovedBackwards {
                by_ms: by.as_u64().unwrap()
            },
            "{what}"
        );
    }
    if let Some(pos) = want.get("position") {
        match &err {
            Error::Parse { position, .. } => assert_eq!(*position as u64, pos.as_u64().unwrap(), "{what}: {err}"),
            other => panic!("{what}: {other:?} has no position"),
        }
    }
}

#[test]
fn layout_vectors() {
    let v = load("layouts.json");
    for p in v["presets"].as_array().unwrap() {
        let l = Layout::preset(p["name"].as_str().unwrap()).unwrap();
        assert_eq!(u64::from(l.time_bits()), p["time_bits"].as_u64().unwrap());
        assert_eq!(u64::from(l.datacenter_bits()), p["datacenter_bits"].as_u64().unwrap());
        assert_eq!(u64::from(l.worker_bits()), p["worker_bits"].as_u64().unwrap());
        assert_eq!(u64::from(l.sequence_bits()), p["sequence_bits"].as_u64().unwrap());
        assert_eq!(l.tick_ms(), p["tick_ms"].as_u64().unwrap());
        assert_eq!(l.epoch_ms(), p["epoch_ms"].as_u64().unwrap());
        assert_eq!(l.order().as_str(), p["order"].as_str().unwrap());
        assert_eq!(l.last_timestamp_ms(), p["last_timestamp_ms"].as_u64().unwrap());
        assert_eq!(l.max_id(), id_of(&p["max_id"]));
    }
    for case in v["invalid_layouts"].as_array().unwrap() {
        assert_error(layout_of(&case["layout"]), case, &case.to_string());
    }
    for case in v["invalid_generators"].as_array().unwrap() {
        let r = (|| {
            let mut b = Generator::builder(layout_of(&case["layout"])?);
            let o = &case["options"];
            if let Some(n) = o.get("node") {
                b = b.node(n.as_u64().unwrap());
            }
            if let Some(n) = o.get("datacenter") {
                b = b.datacenter(n.as_u64().unwrap());
            }
            if let Some(n) = o.get("worker") {
                b = b.worker(n.as_u64().unwrap());
            }
            if let Some(x) = o.get("overflow") {
                b = b.overflow(x.as_str().unwrap().parse::<Overflow>()?);
            }
            if let Some(x) = o.get("clock_backwards") {
                b = b.clock_backwards(x.as_str().unwrap().parse::<ClockBackwards>()?);
            }
            if let Some(n) = o.get("max_borrow_ms") {
                b = b.max_borrow_ms(n.as_u64().unwrap());
            }
            if let Some(n) = o.get("max_wait_ms") {
                b = b.max_wait_ms(n.as_u64().unwrap());
            }
            b.build()
        })();
        assert_error(r, case, &case.to_string());
    }
}

#[test]
fn compose_vectors() {
    let v = load("compose.json");
    let cases = v["cases"].as_array().unwrap();
    assert!(
        cases
            .iter()
            .any(|c| c["id"] == "910499571847892992" && c["layout"] == "snowflake")
    );
    for c in cases {
        let l = layout_of(&c["layout"]).unwrap();
        let id = id_of(&c["id"]);
        let n = |k: &str| c[k].as_u64().unwrap();
        assert_eq!(
            l.compose(n("timestamp_ms"), n("node"), n("sequence")).unwrap(),
            id,
            "{c}"
        );
        assert_eq!(
            l.compose_parts(n("timestamp_ms"), n("datacenter"), n("worker"), n("sequence"))
                .unwrap(),
            id,
            "{c}"
        );
        let p = l.try_decompose(id).unwrap();
        assert_eq!(
            (p.timestamp_ms, p.ticks, p.node, p.datacenter, p.worker, p.sequence),
            (
                n("timestamp_ms"),
                n("ticks"),
                n("node"),
                n("datacenter"),
                n("worker"),
                n("sequence")
            ),
            "{c}"
        );
    }
    for c in v["compose_errors"].as_array().unwrap() {
        let l = layout_of(&c["layout"]).unwrap();
        let n = |k: &str| c[k].as_u64().unwrap();
        assert_error(
            l.compose(n("timestamp_ms"), n("node"), n("sequence")),
            c,
            &c.to_string(),
        );
    }
    for c in v["decompose_errors"].as_array().unwrap() {
        let l = layout_of(&c["layout"]).unwrap();
        assert_error(l.try_decompose(id_of(&c["id"])), c, &c.to_string());
    }
    for c in v["ranges"].as_array().unwrap() {
        let l = layout_of(&c["layout"]).unwrap();
        let (first, last) = l
            .id_range(c["start_ms"].as_u64().unwrap(), c["end_ms"].as_u64().unwrap())
            .unwrap();
        assert_eq!((first, last), (id_of(&c["first"]), id_of(&c["last"])), "{c}");
    }
}

#[test]
fn encoding_vectors() {
    let v = load("encodings.json");
    for c in v["cases"].as_array().unwrap() {
        let id = id_of(&c["id"]);
        for enc in Encoding::ALL {
            let text = c[enc.name()].as_str().unwrap();
            assert_eq!(encode(id, enc), text, "{enc} of {id}");
            assert_eq!(decode(text, enc).unwrap(), id, "{enc} {text}");
        }
        let hex = c["bytes"].as_str().unwrap();
        let bytes: Vec<u8> = (0..8)
            .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap())
            .collect();
        assert_eq!(to_bytes(id).to_vec(), bytes);
        assert_eq!(from_bytes(&bytes).unwrap(), id);
    }
    for c in v["decode_aliases"].as_array().unwrap() {
        let enc = c["encoding"].as_str().unwrap().parse::<Encoding>().unwrap();
        assert_eq!(
            decode(c["text"].as_str().unwrap(), enc).unwrap(),
            id_of(&c["id"]),
            "{c}"
        );
    }
    for c in v["bad"].as_array().unwrap() {
        let enc = c["encoding"].as_str().unwrap().parse::<Encoding>().unwrap();
        assert_error(decode(c["text"].as_str().unwrap(), enc), c, &c.to_string());
    }
}

#[test]
fn decode_auto_vectors() {
    let v = load("decode_auto.json");
    for c in v["cases"].as_array().unwrap() {
        let text = c["text"].as_str().unwrap();
        let got = decode_auto(text);
        if c.get("error").is_some() {
            if c["ambiguous"] == true
                && let Err(Error::Parse { message, .. }) = &got
            {
                assert!(
                    message.contains("ambiguous") && message.contains("from"),
                    "{c}: {message}"
                );
            }
            assert_error(got, c, &c.to_string());
        } else {
            let enc = c["encoding"].as_str().unwrap().parse::<Encoding>().unwrap();
            assert_eq!(got.unwrap(), (id_of(&c["id"]), enc), "{c}");
        }
    }
}

#[test]
fn timeline_vectors() {
    let v = load("timelines.json");
    for tl in v["timelines"].as_array().unwrap() {
        let name = tl["name"].as_str().unwrap();
        let n = |k: &str| tl[k].as_u64().unwrap();
        let clock = ManualClock::new(n("start_ms")).with_auto_advance(n("auto_advance_ms"));
        let g = Generator::builder(layout_of(&tl["layout"]).unwrap())
            .node(n("node"))
            .overflow(tl["overflow"].as_str().unwrap().parse::<Overflow>().unwrap())
            .clock_backwards(
                tl["clock_backwards"]
                    .as_str()
                    .unwrap()
                    .parse::<ClockBackwards>()
                    .unwrap(),
            )
            .max_borrow_ms(n("max_borrow_ms"))
            .max_wait_ms(n("max_wait_ms"))
            .clock(clock.clone())
            .build()
            .unwrap();
        for (i, step) in tl["steps"].as_array().unwrap().iter().enumerate() {
            let what = format!("{name}, step {i}: {step}");
            match step["op"].as_str().unwrap() {
                "set" => clock.set(step["ms"].as_u64().unwrap()),
                "next" if step.get("error").is_some() => assert_error(g.next_id(), step, &what),
                "next" => assert_eq!(g.next_id().unwrap(), id_of(&step["id"]), "{what}"),
                "next_ids" => {
                    let want: Vec<u64> = step["ids"].as_array().unwrap().iter().map(id_of).collect();
                    assert_eq!(
                        g.next_ids(step["n"].as_u64().unwrap() as usize).unwrap(),
                        want,
                        "{what}"
                    );
                }
                op => panic!("unknown op {op}"),
            }
            if let Some(ms) = step.get("clock_ms") {
                assert_eq!(clock.get(), ms.as_u64().unwrap(), "clock after {what}");
            }
        }
    }
}

#[test]
fn option_vectors() {
    let v = load("options.json");
    let names: Vec<&str> = v["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, GENERATOR_OPTIONS.map(|o| o.name));
    for case in v["cases"].as_array().unwrap() {
        let r = (|| {
            let mut b = Generator::builder(layout_of(&case["layout"])?);
            for (name, value) in case["options"].as_object().unwrap() {
                b = match (value.as_u64(), value.as_bool()) {
                    (Some(n), _) => b.set(name, OptionValue::Uint(n))?,
                    (_, Some(on)) => b.set(name, OptionValue::Uint(u64::from(on)))?,
                    _ => b.set(name, OptionValue::Text(value.as_str().unwrap()))?,
                };
            }
            b.build()
        })();
        if case.get("error").is_some() {
            assert_error(r, case, &case.to_string());
        } else if let Err(e) = r {
            panic!("{case}: {e}");
        }
    }
}
