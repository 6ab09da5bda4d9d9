// Package bench times flakeid beside its Go peers (bwmarrin/snowflake and
// sony/sonyflake v2) in one run: `make bench-go`. A module of its own, so that
// the peers never become requirements of flakeid's module.
package bench

// static void fgo_bench_noop(void) {}
import "C"

// Noop is an empty cgo call: what crossing into C costs by itself.
func Noop() { C.fgo_bench_noop() }
