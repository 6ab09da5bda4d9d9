//! The core without std on a Cortex-M4 under qemu: what docs/rust.md, "Without the
//! standard library", promises, run where it is meant to run. Every check is an
//! assertion; a failed one panics, and panic-semihosting prints it and makes qemu
//! exit with a failure status, so make check-ports fails.
#![no_std]
#![no_main]

extern crate alloc;

mod generator;
#[cfg(feature = "interrupts")]
mod interrupts;
mod vectors;

use core::mem::MaybeUninit;
use cortex_m_rt::entry;
use cortex_m_semihosting::{debug, hprintln};
use embedded_alloc::LlffHeap as Heap;
use panic_semihosting as _;

#[global_allocator]
static HEAP: Heap = Heap::empty();

/// Room for the largest vector file's parsed tree.
const HEAP_BYTES: usize = 1 << 20;

/// The checks, each a name and a function that panics on a failure.
const CHECKS: &[(&str, fn())] = &[
    (
        "generator: in order across ticks on the caller's clock",
        generator::in_order_across_ticks,
    ),
    ("generator: batches", generator::batches),
    ("generator: local()", generator::local_handle),
    (
        "generator: try_next_id and the waits' errors without real time",
        generator::waits_without_real_time,
    ),
    ("generator: refused without a clock or a node", generator::refusals),
    #[cfg(feature = "interrupts")]
    (
        "generator: shared with an interrupt handler",
        interrupts::shared_with_a_handler,
    ),
    ("vectors: compose.json", vectors::compose),
    ("vectors: encodings.json", vectors::encodings),
    ("vectors: uuid.json", vectors::uuid),
];

#[entry]
fn main() -> ! {
    static mut HEAP_MEM: [MaybeUninit<u8>; HEAP_BYTES] = [MaybeUninit::uninit(); HEAP_BYTES];
    // SAFETY: called once, before anything allocates; `HEAP_MEM` is ours alone
    // (cortex-m-rt hands `entry`'s statics out as unique references).
    unsafe { HEAP.init(HEAP_MEM.as_mut_ptr() as usize, HEAP_BYTES) }

    for (name, check) in CHECKS {
        check();
        hprintln!("ok: {}", name);
    }
    hprintln!(
        "flakeid-core without std on thumbv7em: {} passed, 0 failed",
        CHECKS.len()
    );
    debug::exit(debug::EXIT_SUCCESS);
    #[allow(clippy::empty_loop)]
    loop {}
}
