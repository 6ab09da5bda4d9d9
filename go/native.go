package flakeid

// The only file that calls the C library. Everything here converts; the engine
// (crates/flakeid-core through bindings/c) decides.
//
// Linking: the static library libflakeid.a is looked up in lib/<GOOS>_<GOARCH>/
// beside this file (linux_amd64, linux_arm64, darwin_amd64, darwin_arm64,
// windows_amd64). A released module carries it there (built by `make dist-go`);
// in the repository `make lib-go` links target/<host>/dist/libflakeid.a (mk/c.mk: C_LIB_DIR) into place.
// The header is include/flakeid.h (a symlink to the repository's header; a copy in
// a released module), so cgo always compiles against the header of the library.

/*
#cgo CFLAGS: -I${SRCDIR}/include
#cgo linux,amd64 LDFLAGS: -L${SRCDIR}/lib/linux_amd64
#cgo linux,arm64 LDFLAGS: -L${SRCDIR}/lib/linux_arm64
#cgo darwin,amd64 LDFLAGS: -L${SRCDIR}/lib/darwin_amd64
#cgo darwin,arm64 LDFLAGS: -L${SRCDIR}/lib/darwin_arm64
#cgo windows,amd64 LDFLAGS: -L${SRCDIR}/lib/windows_amd64
#cgo LDFLAGS: -lflakeid
// What the static library needs beside it, per OS: go/native_libs.go, generated
// from rustc's `--print native-static-libs` (scripts/native-libs.sh).
// The library never calls back into Go and keeps no pointer it is given past the
// call: pointers to Go memory (out-parameters, a slice to fill, a string's bytes)
// may then stay on the stack instead of escaping to the heap.
#cgo noescape fgo_next_id
#cgo nocallback fgo_next_id
#cgo noescape fgo_generator_new
#cgo nocallback fgo_generator_new
#cgo noescape fgo_next_ids
#cgo nocallback fgo_next_ids
#cgo noescape fgo_local_next_id
#cgo nocallback fgo_local_next_id
#cgo noescape fgo_local_next_ids
#cgo nocallback fgo_local_next_ids
#cgo noescape fgo_local_new
#cgo nocallback fgo_local_new
#cgo noescape fgo_generator_node
#cgo nocallback fgo_generator_node
#cgo noescape fgo_generator_layout
#cgo nocallback fgo_generator_layout
#cgo noescape fgo_generator_node_origin
#cgo nocallback fgo_generator_node_origin
#cgo noescape fgo_layout_preset
#cgo nocallback fgo_layout_preset
#cgo noescape fgo_layout_custom
#cgo nocallback fgo_layout_custom
#cgo noescape fgo_layout_get_limits
#cgo nocallback fgo_layout_get_limits
#cgo noescape fgo_decompose
#cgo nocallback fgo_decompose
#cgo noescape fgo_compose
#cgo nocallback fgo_compose
#cgo noescape fgo_compose_parts
#cgo nocallback fgo_compose_parts
#cgo noescape fgo_id_range
#cgo nocallback fgo_id_range
#cgo noescape fgo_encode
#cgo nocallback fgo_encode
#cgo noescape fgo_decode
#cgo nocallback fgo_decode
#cgo noescape fgo_manual_clock_new
#cgo nocallback fgo_manual_clock_new
#cgo noescape fgo_manual_clock_set
#cgo nocallback fgo_manual_clock_set
#cgo noescape fgo_manual_clock_advance
#cgo nocallback fgo_manual_clock_advance
#cgo noescape fgo_manual_clock_get
#cgo nocallback fgo_manual_clock_get
#cgo noescape fgo_sealer_new
#cgo nocallback fgo_sealer_new
#cgo noescape fgo_sealer_seal
#cgo nocallback fgo_sealer_seal
#cgo noescape fgo_sealer_unseal
#cgo nocallback fgo_sealer_unseal
#cgo nocallback flakeid_last_error_by_ms
#cgo noescape fgo_uuid_next
#cgo nocallback fgo_uuid_next
#cgo noescape fgo_uuid_parse
#cgo nocallback fgo_uuid_parse
#cgo noescape fgo_uuid_format
#cgo nocallback fgo_uuid_format
#include <stdlib.h>
#include <string.h>
#include "flakeid.h"

// A failed call's details, copied in the same C call that failed: the library
// keeps them per OS thread, and a goroutine may run its next cgo call on another
// thread, so reading them in a second call could read another call's error.
typedef struct {
  uint32_t status;
  char *message; // malloc'd copies (NULL if none), freed by errOf
  char *field;
  uint64_t by_ms;
  size_t position;
} fgo_error;

static char *fgo_dup(const char *s) { return s == NULL ? NULL : strdup(s); }

static fgo_error fgo_check(flakeid_status st) {
  fgo_error e;
  memset(&e, 0, sizeof e);
  e.status = (uint32_t)st;
  if (st != FLAKEID_OK) {
    e.message = fgo_dup(flakeid_last_error_message());
    e.field = fgo_dup(flakeid_last_error_field());
    e.by_ms = flakeid_last_error_by_ms();
    e.position = flakeid_last_error_position();
  }
  return e;
}

// The hot path returns 16 bytes by value (two registers on x86-64 and arm64): the ID
// and, only on failure, a malloc'd copy of the error details. No Go pointer crosses,
// so nothing escapes to the heap. (An earlier 48-byte result, returned through
// memory, cost about 15 ns more per call.)
typedef struct {
  uint64_t id;
  fgo_error *err; // NULL on success; free with fgo_free_error
} fgo_id;

static fgo_error fgo_no_memory = {FLAKEID_ERR_PANIC, NULL, NULL, 0, 0};

static inline fgo_id fgo_id_result(flakeid_status st, uint64_t id) {
  fgo_id r = {id, NULL};
  if (st != FLAKEID_OK) {
    r.err = malloc(sizeof *r.err);
    if (r.err == NULL) {
      r.err = &fgo_no_memory;
    } else {
      *r.err = fgo_check(st);
    }
  }
  return r;
}

static fgo_id fgo_next_id(const flakeid_generator *g) {
  uint64_t id = 0;
  flakeid_status st = flakeid_next_id(g, &id);
  return fgo_id_result(st, id);
}

// The per-thread handle's hot path, as fgo_next_id.
static fgo_id fgo_local_next_id(flakeid_local *l) {
  uint64_t id = 0;
  flakeid_status st = flakeid_local_next_id(l, &id);
  return fgo_id_result(st, id);
}

static void fgo_free_error(fgo_error *e) {
  if (e != &fgo_no_memory) free(e);
}

#define FGO(name, params, args) \
  static fgo_error fgo_##name params { return fgo_check(flakeid_##name args); }

FGO(generator_new, (const flakeid_options *o, flakeid_generator **out), (o, out))
FGO(options_set, (flakeid_options *o, const char *name, const char *value), (o, name, value))

FGO(database_lease, (const char *lease, const char *const *keys, const char *const *values, size_t n, char *buf,
    size_t len, size_t *out_len), (lease, keys, values, n, buf, len, out_len))
static fgo_error fgo_check_batch(int64_t n) { return fgo_check(flakeid_check_batch(n)); }
static fgo_error fgo_parse_id(uint32_t kind, const uint8_t *v, size_t len, uint64_t *out) {
  return fgo_check(flakeid_parse_id(NULL, kind, v, len, out));
}
FGO(next_ids, (const flakeid_generator *g, uint64_t *ids, size_t n), (g, ids, n))
FGO(uuid_next_many, (const flakeid_uuid_generator *g, uint8_t *out, size_t n), (g, out, n * FLAKEID_UUID_LEN, n))
FGO(uuid_at, (const flakeid_uuid_generator *g, int64_t ms, uint8_t *out), (g, ms, out, FLAKEID_UUID_LEN))
FGO(uuid_shifted, (const flakeid_uuid_generator *g, int64_t ms, uint8_t *out), (g, ms, out, FLAKEID_UUID_LEN))
FGO(generator_close, (const flakeid_generator *g), (g))
FGO(local_new, (const flakeid_generator *g, flakeid_local **out), (g, out))
FGO(local_next_ids, (flakeid_local *l, uint64_t *ids, size_t n), (l, ids, n))
FGO(generator_node, (const flakeid_generator *g, uint64_t *out), (g, out))
FGO(generator_layout, (const flakeid_generator *g, flakeid_layout *out), (g, out))
FGO(generator_node_origin, (const flakeid_generator *g, const char **out), (g, out))
FGO(generator_stats, (const flakeid_generator *g, flakeid_stats *out, size_t size), (g, out, size))
FGO(layout_preset, (const char *name, flakeid_layout *out), (name, out))
FGO(layout_custom,
    (uint32_t t, uint32_t dc, uint32_t w, uint32_t s, uint64_t tick, uint64_t epoch, uint32_t order,
     flakeid_layout *out),
    (t, dc, w, s, tick, epoch, order, out))
FGO(layout_get_limits, (const flakeid_layout *l, flakeid_layout_limits *out), (l, out))
FGO(decompose, (const flakeid_layout *l, uint64_t id, flakeid_parts *out), (l, id, out))
FGO(compose, (const flakeid_layout *l, uint64_t ts, uint64_t node, uint64_t seq, uint64_t *out),
    (l, ts, node, seq, out))
FGO(compose_parts,
    (const flakeid_layout *l, uint64_t ts, uint64_t dc, uint64_t w, uint64_t seq, uint64_t *out),
    (l, ts, dc, w, seq, out))
FGO(id_range, (const flakeid_layout *l, uint64_t a, uint64_t b, uint64_t *first, uint64_t *last),
    (l, a, b, first, last))
FGO(encode, (uint64_t id, uint32_t enc, char *buf, size_t len, size_t *out_len), (id, enc, buf, len, out_len))
FGO(decode, (const char *text, size_t len, uint32_t enc, uint64_t *out), (text, len, enc, out))
FGO(manual_clock_new, (uint64_t start, uint64_t step, flakeid_manual_clock **out), (start, step, out))
FGO(manual_clock_set, (const flakeid_manual_clock *c, uint64_t ms), (c, ms))
FGO(manual_clock_advance, (const flakeid_manual_clock *c, uint64_t ms), (c, ms))
FGO(manual_clock_get, (const flakeid_manual_clock *c, uint64_t *out), (c, out))
FGO(sealer_new,
    (const uint8_t *key, size_t key_len, const flakeid_layout *l, const uint8_t *tweak, size_t tweak_len,
     flakeid_sealer **out),
    (key, key_len, l, tweak, tweak_len, out))
FGO(sealer_seal, (const flakeid_sealer *s, uint64_t id, uint64_t *out), (s, id, out))
FGO(sealer_unseal, (const flakeid_sealer *s, uint64_t id, uint64_t *out), (s, id, out))

// The 128-bit family (bindings/c/src/uuid.rs). A UUID crosses as a Go [16]byte.
static fgo_error *fgo_uuid_next(const flakeid_uuid_generator *g, uint8_t *out) {
  flakeid_status st = flakeid_uuid_next(g, out, FLAKEID_UUID_LEN);
  if (st == FLAKEID_OK) return NULL;
  fgo_error *e = malloc(sizeof *e);
  if (e == NULL) return &fgo_no_memory;
  *e = fgo_check(st);
  return e;
}
FGO(uuid_options_new, (flakeid_uuid_options **out), (out))
FGO(uuid_options_set, (flakeid_uuid_options *o, const char *name, const char *value), (o, name, value))
FGO(uuid_options_set_clock, (flakeid_uuid_options *o, const flakeid_manual_clock *c), (o, c))
FGO(uuid_generator_new, (const flakeid_uuid_options *o, flakeid_uuid_generator **out), (o, out))
FGO(uuid_generator_close, (const flakeid_uuid_generator *g), (g))
FGO(uuid_generator_stats, (const flakeid_uuid_generator *g, flakeid_uuid_stats *out, size_t size), (g, out, size))
FGO(uuid_next_string, (const flakeid_uuid_generator *g, char *buf, size_t len, size_t *n), (g, buf, len, n))
FGO(ulid_next, (const flakeid_uuid_generator *g, char *buf, size_t len, size_t *n), (g, buf, len, n))
FGO(typeid_next, (const flakeid_uuid_generator *g, const char *prefix, char *buf, size_t len, size_t *n),
    (g, prefix, buf, len, n))
FGO(uuid7_compose, (uint64_t ms, uint32_t a, uint64_t b, uint8_t *out), (ms, a, b, out, FLAKEID_UUID_LEN))
FGO(uuid7_decompose, (const uint8_t *u, uint64_t *ms, uint32_t *a, uint64_t *b), (u, FLAKEID_UUID_LEN, ms, a, b))
FGO(uuid7_timestamp_ms, (const uint8_t *u, uint64_t *ms), (u, FLAKEID_UUID_LEN, ms))
FGO(ulid_timestamp_ms, (const uint8_t *u, uint64_t *ms), (u, FLAKEID_UUID_LEN, ms))
FGO(uuid7_range, (uint64_t a, uint64_t b, uint8_t *first, uint8_t *last), (a, b, first, last, FLAKEID_UUID_LEN))
FGO(uuid_version, (const uint8_t *u, uint32_t *out), (u, FLAKEID_UUID_LEN, out))
FGO(typeid_parse, (const char *t, size_t len, char *prefix, size_t plen, size_t *pn, uint8_t *out),
    (t, len, prefix, plen, pn, out, FLAKEID_UUID_LEN))
FGO(typeid_format, (const char *prefix, const uint8_t *u, char *buf, size_t len, size_t *n),
    (prefix, u, FLAKEID_UUID_LEN, buf, len, n))
// kind: 0 UUID text, 1 ULID text.
static fgo_error fgo_uuid_parse(uint32_t kind, const char *t, size_t len, uint8_t *out) {
  return fgo_check(kind == 0 ? flakeid_uuid_parse(t, len, out, FLAKEID_UUID_LEN)
                             : flakeid_ulid_parse(t, len, out, FLAKEID_UUID_LEN));
}
// kind: 0 UUID text, 1 ULID text.
static fgo_error fgo_uuid_format(uint32_t kind, const uint8_t *u, char *buf, size_t len, size_t *n) {
  return fgo_check(kind == 0 ? flakeid_uuid_format(u, FLAKEID_UUID_LEN, buf, len, n)
                             : flakeid_ulid_format(u, FLAKEID_UUID_LEN, buf, len, n));
}
*/
import "C"

import (
	"math"
	"time"
	"unsafe"
)

type (
	genHandle   = *C.flakeid_generator
	localHandle = *C.flakeid_local
	clockHandle = *C.flakeid_manual_clock
	sealHandle  = *C.flakeid_sealer
)

// errOf turns a captured failure into an *Error (nil for success).
func errOf(e C.fgo_error) error {
	if e.status == C.FLAKEID_OK {
		return nil
	}
	err := &Error{Kind: Kind(e.status), ByMs: uint64(e.by_ms), Position: int(e.position)}
	if e.message != nil {
		err.Message = C.GoString(e.message)
		C.free(unsafe.Pointer(e.message))
	}
	if e.field != nil {
		err.Field = C.GoString(e.field)
		C.free(unsafe.Pointer(e.field))
	}
	return err
}

func cVersion() string { return C.GoString(C.flakeid_version()) }

func cStatusName(s uint32) string { return C.GoString(C.flakeid_status_name(C.uint32_t(s))) }

// --- layouts ---

func (l Layout) c() C.flakeid_layout {
	l = l.orDefault()
	return C.flakeid_layout{
		time_bits:       C.uint32_t(l.timeBits),
		datacenter_bits: C.uint32_t(l.datacenterBits),
		worker_bits:     C.uint32_t(l.workerBits),
		sequence_bits:   C.uint32_t(l.sequenceBits),
		tick_ms:         C.uint64_t(l.tickMs),
		epoch_ms:        C.uint64_t(l.epochMs),
		order:           C.uint32_t(l.order),
	}
}

func layoutFromC(c *C.flakeid_layout) (Layout, error) {
	l := Layout{
		timeBits:       uint32(c.time_bits),
		datacenterBits: uint32(c.datacenter_bits),
		workerBits:     uint32(c.worker_bits),
		sequenceBits:   uint32(c.sequence_bits),
		tickMs:         uint64(c.tick_ms),
		epochMs:        uint64(c.epoch_ms),
		order:          Order(c.order),
		valid:          true,
	}
	var lim C.flakeid_layout_limits
	if err := errOf(C.fgo_layout_get_limits(c, &lim)); err != nil {
		return Layout{}, err
	}
	l.limits = LayoutLimits{
		NodeBits:      uint32(lim.node_bits),
		TotalBits:     uint32(lim.total_bits),
		MaxNode:       uint64(lim.max_node),
		MaxDatacenter: uint64(lim.max_datacenter),
		MaxWorker:     uint64(lim.max_worker),
		MaxSequence:   uint64(lim.max_sequence),
		MaxID:         ID(lim.max_id),
		LastMs:        uint64(lim.last_timestamp_ms),
		SignedUntilMs: uint64(lim.signed_until_ms),
	}
	return l, nil
}

func cPreset(name string) (Layout, error) {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	var out C.flakeid_layout
	if err := errOf(C.fgo_layout_preset(cs, &out)); err != nil {
		return Layout{}, err
	}
	return layoutFromC(&out)
}

func cCustom(s LayoutSpec) (Layout, error) {
	var out C.flakeid_layout
	err := errOf(C.fgo_layout_custom(C.uint32_t(s.TimeBits), C.uint32_t(s.DatacenterBits),
		C.uint32_t(s.WorkerBits), C.uint32_t(s.SequenceBits), C.uint64_t(s.TickMs),
		C.uint64_t(s.EpochMs), C.uint32_t(s.Order), &out))
	if err != nil {
		return Layout{}, err
	}
	return layoutFromC(&out)
}

func cDecompose(l Layout, id ID) (Parts, error) {
	cl := l.c()
	var p C.flakeid_parts
	if err := errOf(C.fgo_decompose(&cl, C.uint64_t(id), &p)); err != nil {
		return Parts{}, err
	}
	return Parts{
		TimestampMs: uint64(p.timestamp_ms),
		Ticks:       uint64(p.ticks),
		Node:        uint64(p.node),
		Datacenter:  uint64(p.datacenter),
		Worker:      uint64(p.worker),
		Sequence:    uint64(p.sequence),
	}, nil
}

func cCompose(l Layout, ms, node, seq uint64) (ID, error) {
	cl := l.c()
	var out C.uint64_t
	err := errOf(C.fgo_compose(&cl, C.uint64_t(ms), C.uint64_t(node), C.uint64_t(seq), &out))
	return ID(out), err
}

func cComposeParts(l Layout, ms, dc, worker, seq uint64) (ID, error) {
	cl := l.c()
	var out C.uint64_t
	err := errOf(C.fgo_compose_parts(&cl, C.uint64_t(ms), C.uint64_t(dc), C.uint64_t(worker),
		C.uint64_t(seq), &out))
	return ID(out), err
}

func cIDRange(l Layout, startMs, endMs uint64) (first, last ID, err error) {
	cl := l.c()
	var f, t C.uint64_t
	err = errOf(C.fgo_id_range(&cl, C.uint64_t(startMs), C.uint64_t(endMs), &f, &t))
	return ID(f), ID(t), err
}

// --- encodings ---

func cEncode(id ID, enc Encoding) (string, error) {
	var buf [C.FLAKEID_MAX_ENCODED_LEN + 1]C.char
	var n C.size_t
	if err := errOf(C.fgo_encode(C.uint64_t(id), C.uint32_t(enc), &buf[0], C.size_t(len(buf)), &n)); err != nil {
		return "", err
	}
	return C.GoStringN(&buf[0], C.int(n)), nil
}

func cDecode(text string, enc Encoding) (ID, error) {
	// The library takes the text with its length: no NUL, no copy for C.
	var p *C.char
	if len(text) > 0 {
		p = (*C.char)(unsafe.Pointer(unsafe.StringData(text)))
	} else {
		var empty C.char
		p = &empty
	}
	var out C.uint64_t
	err := errOf(C.fgo_decode(p, C.size_t(len(text)), C.uint32_t(enc), &out))
	return ID(out), err
}

// --- generators ---

// msOrDefault converts an option given in time units; zero keeps the library's
// default and a negative value reaches the library as an out-of-range number, so
// the error (naming the option and its range) comes from the engine.
func msOrDefault(d, unit int64, def C.uint64_t) C.uint64_t {
	switch {
	case d == 0:
		return def
	case d < 0:
		return math.MaxUint64
	default:
		return C.uint64_t((d + unit - 1) / unit) // whole milliseconds, rounded up
	}
}

func cGeneratorNew(o *Options) (genHandle, error) {
	c := C.flakeid_options_default()
	if o.Layout.valid {
		c.layout = o.Layout.c()
	}
	if o.Node != 0 {
		c.node = C.uint64_t(o.Node)
	}
	if o.Datacenter != 0 {
		c.datacenter = C.uint64_t(o.Datacenter)
	}
	if o.Worker != 0 {
		c.worker = C.uint64_t(o.Worker)
	}
	if o.NodeSource != "" {
		c.node_source = C.CString(o.NodeSource)
		defer C.free(unsafe.Pointer(c.node_source))
	}
	if o.Lease != "" {
		c.lease_url = C.CString(o.Lease)
		defer C.free(unsafe.Pointer(c.lease_url))
	}
	c.overflow = C.uint32_t(o.Overflow)
	c.clock_backwards = C.uint32_t(o.ClockBackwards)
	c.max_borrow_ms = msOrDefault(int64(o.MaxBorrow), 1e6, c.max_borrow_ms)
	c.max_wait_ms = msOrDefault(int64(o.MaxWait), 1e6, c.max_wait_ms)
	if o.Clock != nil {
		c.clock = o.Clock.handle()
	}
	if o.LeaseTTL != 0 {
		// Negative: a number the library refuses (not C.FLAKEID_UNSET, "not given").
		c.lease_ttl_ms = msOrDefault(int64(o.LeaseTTL), 1e6, c.lease_ttl_ms)
		if o.LeaseTTL < 0 {
			c.lease_ttl_ms = math.MaxUint64 - 1
		}
	}
	if o.MaxSequence != nil {
		c.max_sequence = C.uint64_t(*o.MaxSequence)
	}
	if o.State != "" {
		c.state = C.CString(o.State)
		defer C.free(unsafe.Pointer(c.state))
	}
	if o.RequireNode {
		c.require_node = 1
	}
	// Options.Set's settings, by name through the library (after the fields: they win).
	for _, s := range o.settings {
		name, value := C.CString(s[0]), C.CString(s[1])
		defer C.free(unsafe.Pointer(name))
		defer C.free(unsafe.Pointer(value)) // the struct keeps text values until the build
		if err := errOf(C.fgo_options_set(&c, name, value)); err != nil {
			return nil, err
		}
	}
	var p genHandle
	err := errOf(C.fgo_generator_new(&c, &p))
	if o.Clock != nil {
		o.Clock.keepAlive()
	}
	return p, err
}

func cGeneratorInfo(p genHandle) (node uint64, origin string, layout Layout, err error) {
	var n C.uint64_t
	var o *C.char
	var l C.flakeid_layout
	if err = errOf(C.fgo_generator_node(p, &n)); err != nil {
		return 0, "", Layout{}, err
	}
	if err = errOf(C.fgo_generator_node_origin(p, &o)); err != nil {
		return 0, "", Layout{}, err
	}
	if err = errOf(C.fgo_generator_layout(p, &l)); err != nil {
		return 0, "", Layout{}, err
	}
	layout, err = layoutFromC(&l)
	return uint64(n), C.GoString(o), layout, err
}

func cGeneratorStats(p genHandle) (Stats, error) {
	var s C.flakeid_stats
	if err := errOf(C.fgo_generator_stats(p, &s, C.size_t(unsafe.Sizeof(s)))); err != nil {
		return Stats{}, err
	}
	out := Stats{
		IDsIssued:      uint64(s.ids_issued),
		TickWaits:      uint64(s.tick_waits),
		TickWaitTime:   time.Duration(s.tick_wait_us) * time.Microsecond,
		Lead:           time.Duration(s.lead_ms) * time.Millisecond,
		ClockRollbacks: uint64(s.clock_rollbacks),
		MaxRollback:    time.Duration(s.max_rollback_ms) * time.Millisecond,
	}
	if s.lease_state != nil {
		out.LeaseState = C.GoString(s.lease_state)
		out.LeaseRemaining = time.Duration(s.lease_remaining_ms) * time.Millisecond
	}
	return out, nil
}

func cGeneratorFree(p genHandle) { C.flakeid_generator_free(p) }

func cNextID(p genHandle) (ID, error) { return cIDResult(C.fgo_next_id(p)) }

// cIDResult is a hot-path result: the ID, or the failure's details (freed here).
func cIDResult(r C.fgo_id) (ID, error) {
	if r.err == nil {
		return ID(r.id), nil
	}
	err := errOf(*r.err)
	C.fgo_free_error(r.err)
	return 0, err
}

// cOptionSet checks that the library takes value for the option name.
func cOptionSet(name, value string) error {
	c := C.flakeid_options_default()
	cn, cv := C.CString(name), C.CString(value)
	defer C.free(unsafe.Pointer(cn))
	defer C.free(unsafe.Pointer(cv))
	return errOf(C.fgo_options_set(&c, cn, cv))
}

// cOptionNames lists the names Options.Set takes (the core's table).
func cOptionNames() []string {
	return cNames(func(i C.size_t) *C.char { return C.flakeid_option_name(i) })
}

// cNames reads a list of the library's names: name(0), name(1), ... up to the
// first NULL.
func cNames(name func(C.size_t) *C.char) []string {
	var names []string
	for i := C.size_t(0); ; i++ {
		n := name(i)
		if n == nil {
			return names
		}
		names = append(names, C.GoString(n))
	}
}

// cDatabaseLease is the engine's lease for the setting lease: itself, or for
// "database" the URL of the app's PostgreSQL from parts (key, value pairs).
func cDatabaseLease(lease string, parts [][2]string) (string, error) {
	cs := make([]*C.char, 0, 2*len(parts)+1)
	defer func() {
		for _, c := range cs {
			C.free(unsafe.Pointer(c))
		}
	}()
	cLease := C.CString(lease)
	cs = append(cs, cLease)
	keys := (*[1 << 20]*C.char)(C.malloc(C.size_t(len(parts)+1) * C.size_t(unsafe.Sizeof(cLease))))[: len(parts)+1 : len(parts)+1]
	values := (*[1 << 20]*C.char)(C.malloc(C.size_t(len(parts)+1) * C.size_t(unsafe.Sizeof(cLease))))[: len(parts)+1 : len(parts)+1]
	defer C.free(unsafe.Pointer(&keys[0]))
	defer C.free(unsafe.Pointer(&values[0]))
	for i, kv := range parts {
		keys[i], values[i] = C.CString(kv[0]), C.CString(kv[1])
		cs = append(cs, keys[i], values[i])
	}
	for size := C.size_t(256); ; {
		buf := (*C.char)(C.malloc(size))
		var n C.size_t
		err := errOf(C.fgo_database_lease(cLease, &keys[0], &values[0], C.size_t(len(parts)), buf, size, &n))
		out := ""
		if err == nil {
			out = C.GoString(buf)
		}
		C.free(unsafe.Pointer(buf))
		if e, ok := err.(*Error); ok && e.Kind == Kind(C.FLAKEID_ERR_BUFFER_TOO_SMALL) && n+1 > size {
			size = n + 1
			continue
		}
		return out, err
	}
}

func cCheckBatch(n int) error { return errOf(C.fgo_check_batch(C.int64_t(n))) }

// What cParseID's v holds (the C enum flakeid_id_value).
const (
	idText  uint32 = C.FLAKEID_ID_TEXT
	idBytes uint32 = C.FLAKEID_ID_BYTES
	idOther uint32 = C.FLAKEID_ID_OTHER
)

// cParseID is the core's ID parser (any 64-bit value): kind is C.FLAKEID_ID_TEXT,
// _BYTES or _OTHER (v then names the type, always refused).
func cParseID(kind uint32, v []byte) (ID, error) {
	var id C.uint64_t
	var p *C.uint8_t
	if len(v) > 0 {
		p = (*C.uint8_t)(unsafe.Pointer(&v[0]))
	}
	err := errOf(C.fgo_parse_id(C.uint32_t(kind), p, C.size_t(len(v)), &id))
	return ID(id), err
}

func cNextIDs(p genHandle, ids []ID) error {
	if len(ids) == 0 {
		return errOf(C.fgo_next_ids(p, nil, 0))
	}
	return errOf(C.fgo_next_ids(p, (*C.uint64_t)(unsafe.Pointer(&ids[0])), C.size_t(len(ids))))
}

func cUUIDNextMany(p uuidHandle, us []UUID) error {
	if len(us) == 0 {
		return errOf(C.fgo_uuid_next_many(p, nil, 0))
	}
	return errOf(C.fgo_uuid_next_many(p, u8(&us[0]), C.size_t(len(us))))
}

// cUUIDAt is a UUIDv7 of Unix ms `ms` (outside the sequence).
func cUUIDAt(p uuidHandle, ms int64) (UUID, error) {
	var u UUID
	err := errOf(C.fgo_uuid_at(p, C.int64_t(ms), u8(&u)))
	return u, err
}

// cUUIDShifted is a UUIDv7 of the generator's clock shifted by `ms`.
func cUUIDShifted(p uuidHandle, ms int64) (UUID, error) {
	var u UUID
	err := errOf(C.fgo_uuid_shifted(p, C.int64_t(ms), u8(&u)))
	return u, err
}

// cGeneratorClose is the core's close: the generator and its handles stop issuing,
// its node id is let go; nothing is freed.
func cGeneratorClose(p genHandle) error { return errOf(C.fgo_generator_close(p)) }

// --- per-thread handles ---

func cLocalNew(g genHandle) (localHandle, error) {
	var p localHandle
	err := errOf(C.fgo_local_new(g, &p))
	return p, err
}

func cLocalFree(p localHandle) { C.flakeid_local_free(p) }

func cLocalNextID(p localHandle) (ID, error) { return cIDResult(C.fgo_local_next_id(p)) }

func cLocalNextIDs(p localHandle, ids []ID) error {
	if len(ids) == 0 {
		return errOf(C.fgo_local_next_ids(p, nil, 0))
	}
	return errOf(C.fgo_local_next_ids(p, (*C.uint64_t)(unsafe.Pointer(&ids[0])), C.size_t(len(ids))))
}

// --- manual clocks ---

func cClockNew(startMs, stepMs uint64) (clockHandle, error) {
	var p clockHandle
	err := errOf(C.fgo_manual_clock_new(C.uint64_t(startMs), C.uint64_t(stepMs), &p))
	return p, err
}

func cClockSet(p clockHandle, ms uint64) error {
	return errOf(C.fgo_manual_clock_set(p, C.uint64_t(ms)))
}

func cClockAdvance(p clockHandle, ms uint64) error {
	return errOf(C.fgo_manual_clock_advance(p, C.uint64_t(ms)))
}

func cClockGet(p clockHandle) (uint64, error) {
	var out C.uint64_t
	err := errOf(C.fgo_manual_clock_get(p, &out))
	return uint64(out), err
}

func cClockFree(p clockHandle) { C.flakeid_manual_clock_free(p) }

// --- sealing ---

// bytesArg passes b's bytes for the duration of a call (the library copies what
// it keeps): NULL for an empty slice.
func bytesArg(b []byte) (*C.uint8_t, C.size_t) {
	if len(b) == 0 {
		return nil, 0
	}
	return (*C.uint8_t)(unsafe.Pointer(&b[0])), C.size_t(len(b))
}

func cSealerNew(key []byte, l Layout, tweak []byte) (sealHandle, error) {
	cl := l.c()
	k, kn := bytesArg(key)
	if kn == 0 {
		// The library takes a non-NULL key; an empty one is refused there, naming key.
		var empty C.uint8_t
		k = &empty
	}
	tw, twn := bytesArg(tweak)
	var out sealHandle
	if err := errOf(C.fgo_sealer_new(k, kn, &cl, tw, twn, &out)); err != nil {
		return nil, err
	}
	return out, nil
}

func cSeal(p sealHandle, id ID) (ID, error) {
	var out C.uint64_t
	err := errOf(C.fgo_sealer_seal(p, C.uint64_t(id), &out))
	return ID(out), err
}

func cUnseal(p sealHandle, id ID) (ID, error) {
	var out C.uint64_t
	err := errOf(C.fgo_sealer_unseal(p, C.uint64_t(id), &out))
	return ID(out), err
}

func cSealerFree(p sealHandle) { C.flakeid_sealer_free(p) }

// cNoop is the cheapest call into the library (a thread-local read), for
// measuring what a cgo call itself costs (BenchmarkCgoCall).
func cNoop() uint64 { return uint64(C.flakeid_last_error_by_ms()) }

// --- the 128-bit family ---

type uuidHandle = *C.flakeid_uuid_generator

// textArg passes a Go string's bytes for the duration of a call (the library
// takes text with its length: no NUL, no copy); an empty one as a non-NULL pointer.
func textArg(s string) (*C.char, C.size_t) {
	if len(s) == 0 {
		var empty C.char
		return &empty, 0
	}
	return (*C.char)(unsafe.Pointer(unsafe.StringData(s))), C.size_t(len(s))
}

func u8(u *UUID) *C.uint8_t { return (*C.uint8_t)(unsafe.Pointer(&u[0])) }

func cUUIDGeneratorNew(o *UUIDOptions) (uuidHandle, error) {
	var opts *C.flakeid_uuid_options
	if err := errOf(C.fgo_uuid_options_new(&opts)); err != nil {
		return nil, err
	}
	defer C.flakeid_uuid_options_free(opts)
	for _, s := range o.settings {
		name, value := C.CString(s[0]), C.CString(s[1])
		err := errOf(C.fgo_uuid_options_set(opts, name, value))
		C.free(unsafe.Pointer(name))
		C.free(unsafe.Pointer(value))
		if err != nil {
			return nil, err
		}
	}
	if o.Clock != nil {
		if err := errOf(C.fgo_uuid_options_set_clock(opts, o.Clock.handle())); err != nil {
			return nil, err
		}
		defer o.Clock.keepAlive()
	}
	var p uuidHandle
	err := errOf(C.fgo_uuid_generator_new(opts, &p))
	return p, err
}

// cUUIDOptionSet checks that the library takes value for the option name.
func cUUIDOptionSet(name, value string) error {
	var opts *C.flakeid_uuid_options
	if err := errOf(C.fgo_uuid_options_new(&opts)); err != nil {
		return err
	}
	defer C.flakeid_uuid_options_free(opts)
	cn, cv := C.CString(name), C.CString(value)
	defer C.free(unsafe.Pointer(cn))
	defer C.free(unsafe.Pointer(cv))
	return errOf(C.fgo_uuid_options_set(opts, cn, cv))
}

// cUUIDOptionNames lists the names UUIDOptions.Set takes (the core's).
func cUUIDOptionNames() []string {
	return cNames(func(i C.size_t) *C.char { return C.flakeid_uuid_option_name(i) })
}

func cUUIDGeneratorFree(p uuidHandle) { C.flakeid_uuid_generator_free(p) }

func cUUIDClose(p uuidHandle) error { return errOf(C.fgo_uuid_generator_close(p)) }

func cUUIDNext(p uuidHandle) (UUID, error) {
	var u UUID
	e := C.fgo_uuid_next(p, u8(&u))
	if e == nil {
		return u, nil
	}
	defer C.fgo_free_error(e)
	return UUID{}, errOf(*e)
}

// What cUUIDText makes: the next ID's text form.
const (
	textUUID = iota
	textULID
	textTypeID
)

func cUUIDText(p uuidHandle, form int, prefix string) (string, error) {
	var buf [C.FLAKEID_TYPEID_MAX_LEN + 1]C.char
	var n C.size_t
	var err error
	switch form {
	case textUUID:
		err = errOf(C.fgo_uuid_next_string(p, &buf[0], C.size_t(len(buf)), &n))
	case textULID:
		err = errOf(C.fgo_ulid_next(p, &buf[0], C.size_t(len(buf)), &n))
	default:
		cp := C.CString(prefix)
		defer C.free(unsafe.Pointer(cp))
		err = errOf(C.fgo_typeid_next(p, cp, &buf[0], C.size_t(len(buf)), &n))
	}
	if err != nil {
		return "", err
	}
	return C.GoStringN(&buf[0], C.int(n)), nil
}

func cUUIDStats(p uuidHandle) (UUIDStats, error) {
	var s C.flakeid_uuid_stats
	if err := errOf(C.fgo_uuid_generator_stats(p, &s, C.size_t(unsafe.Sizeof(s)))); err != nil {
		return UUIDStats{}, err
	}
	return UUIDStats{
		IDsIssued:      uint64(s.ids_issued),
		TickWaits:      uint64(s.tick_waits),
		Lead:           time.Duration(s.lead_ms) * time.Millisecond,
		ClockRollbacks: uint64(s.clock_rollbacks),
		MaxRollback:    time.Duration(s.max_rollback_ms) * time.Millisecond,
		Reseeds:        uint64(s.reseeds),
	}, nil
}

// cUUIDParse reads UUID (kind 0) or ULID (kind 1) text.
func cUUIDParse(kind uint32, text string) (UUID, error) {
	var u UUID
	t, n := textArg(text)
	err := errOf(C.fgo_uuid_parse(C.uint32_t(kind), t, n, u8(&u)))
	return u, err
}

// cUUIDFormat writes UUID (kind 0) or ULID (kind 1) text.
func cUUIDFormat(kind uint32, u UUID) string {
	var buf [C.FLAKEID_UUID_TEXT_LEN + 1]C.char
	var n C.size_t
	if err := errOf(C.fgo_uuid_format(C.uint32_t(kind), u8(&u), &buf[0], C.size_t(len(buf)), &n)); err != nil {
		panic(err) // 16 bytes always have both forms
	}
	return C.GoStringN(&buf[0], C.int(n))
}

func cTypeIDParse(text string) (string, UUID, error) {
	var u UUID
	var prefix [C.FLAKEID_TYPEID_PREFIX_MAX + 1]C.char
	var n C.size_t
	t, tn := textArg(text)
	if err := errOf(C.fgo_typeid_parse(t, tn, &prefix[0], C.size_t(len(prefix)), &n, u8(&u))); err != nil {
		return "", UUID{}, err
	}
	return C.GoStringN(&prefix[0], C.int(n)), u, nil
}

func cTypeIDFormat(prefix string, u UUID) (string, error) {
	var buf [C.FLAKEID_TYPEID_MAX_LEN + 1]C.char
	var n C.size_t
	cp := C.CString(prefix)
	defer C.free(unsafe.Pointer(cp))
	if err := errOf(C.fgo_typeid_format(cp, u8(&u), &buf[0], C.size_t(len(buf)), &n)); err != nil {
		return "", err
	}
	return C.GoStringN(&buf[0], C.int(n)), nil
}

func cUUID7Compose(ms uint64, randA uint32, randB uint64) (UUID, error) {
	var u UUID
	err := errOf(C.fgo_uuid7_compose(C.uint64_t(ms), C.uint32_t(randA), C.uint64_t(randB), u8(&u)))
	return u, err
}

func cUUID7Decompose(u UUID) (ms uint64, randA uint16, randB uint64, err error) {
	var m, b C.uint64_t
	var a C.uint32_t
	err = errOf(C.fgo_uuid7_decompose(u8(&u), &m, &a, &b))
	return uint64(m), uint16(a), uint64(b), err
}

func cUUID7TimestampMs(u UUID) (uint64, error) {
	var m C.uint64_t
	err := errOf(C.fgo_uuid7_timestamp_ms(u8(&u), &m))
	return uint64(m), err
}

func cULIDTimestampMs(u UUID) uint64 {
	var m C.uint64_t
	if err := errOf(C.fgo_ulid_timestamp_ms(u8(&u), &m)); err != nil {
		panic(err) // 16 bytes always have a first 48 bits
	}
	return uint64(m)
}

func cUUIDVersion(u UUID) int {
	var v C.uint32_t
	if err := errOf(C.fgo_uuid_version(u8(&u), &v)); err != nil {
		panic(err) // 16 bytes always have a version field
	}
	return int(v)
}

func cUUID7Range(startMs, endMs uint64) (first, last UUID, err error) {
	err = errOf(C.fgo_uuid7_range(C.uint64_t(startMs), C.uint64_t(endMs), u8(&first), u8(&last)))
	return first, last, err
}
