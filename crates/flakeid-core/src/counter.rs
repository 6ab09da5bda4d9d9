//! Where a generator keeps its next free slot: its own padded word, or a word the
//! caller shares between generators (threads, or processes mapping one segment).

use crate::sync::AtomicU64;
use alloc::sync::Arc;
use core::fmt;

/// The counter on a cache line of its own (128 bytes: two lines, for adjacent-line
/// prefetchers), so threads hammering it do not also contend on the generator's
/// read-only fields. Not on wasm32-unknown-unknown: single-threaded there, and a
/// 128-aligned allocation per generator made creating many of them superlinear.
///
/// Beside it, on the same line, the host guard's bound (`crate::owner`): the first
/// slot no claim may take until the node id's guard file is confirmed again, so
/// that a process paused past it (`SIGSTOP`, a frozen VM) takes no new tick on
/// resuming before it has looked at its file; `u64::MAX` where no guard is held.
#[cfg_attr(not(all(target_family = "wasm", target_os = "unknown")), repr(align(128)))]
pub(crate) struct Padded(pub(crate) AtomicU64, pub(crate) AtomicU64);

impl Padded {
    /// A counter at `first`, with no guard's bound.
    pub(crate) fn new(first: u64) -> Padded {
        Padded(AtomicU64::new(first), AtomicU64::new(u64::MAX))
    }
}

mod sealed {
    pub trait Sealed {}
}

/// Where a [`Generator`](crate::Generator) keeps its next free slot: [`OwnCounter`] (the default) or
/// [`SharedCounter`] ([`GeneratorBuilder::build_shared`](crate::GeneratorBuilder::build_shared)). Sealed.
pub trait CounterStorage: Send + Sync + sealed::Sealed {
    #[doc(hidden)]
    fn get(&self) -> &AtomicU64;
    /// Whether other generators move this counter too (then this one cannot tell
    /// its own IDs from theirs: [`Stats::ids_issued`](crate::Stats::ids_issued) is 0).
    #[doc(hidden)]
    const SHARED: bool = false;
    /// The first slot a claim may not take until the host guard is confirmed
    /// again (`u64::MAX`: no bound).
    #[doc(hidden)]
    #[inline(always)]
    fn guard_end(&self) -> u64 {
        u64::MAX
    }
}

/// The process's counter of the generator's node id, on its own cache line: shared
/// by every generator built in this process on that node id and layout (a
/// generator on an injected clock, or with a lease, has one of its own).
pub struct OwnCounter(pub(crate) Arc<Padded>);

/// A counter word the caller owns and shares ([`GeneratorBuilder::build_shared`](crate::GeneratorBuilder::build_shared)).
#[derive(Debug)]
pub struct SharedCounter(pub(crate) &'static AtomicU64);

impl sealed::Sealed for OwnCounter {}
impl sealed::Sealed for SharedCounter {}

impl CounterStorage for OwnCounter {
    #[inline(always)]
    fn get(&self) -> &AtomicU64 {
        &self.0.0
    }

    #[inline(always)]
    fn guard_end(&self) -> u64 {
        self.0.1.load(core::sync::atomic::Ordering::Relaxed)
    }
}

impl CounterStorage for SharedCounter {
    const SHARED: bool = true;
    #[inline(always)]
    fn get(&self) -> &AtomicU64 {
        self.0
    }
}

impl fmt::Debug for OwnCounter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("OwnCounter")
    }
}
