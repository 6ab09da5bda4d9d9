//! The per-thread handle ([`Generator::local`]): a run of slots reserved from the
//! shared counter and served with plain arithmetic, so that a thread issuing
//! alone pays no atomic read-modify-write per ID (docs/design.md, "The per-thread
//! handle").

use super::{CLOSED, Claim, Generator, MAX_BATCH, batch_error};
use crate::counter::{CounterStorage, OwnCounter};
use crate::error::Result;
use crate::fork;
use alloc::vec::Vec;
use core::cell::Cell;
use core::fmt;
use core::marker::PhantomData;
use core::sync::atomic::Ordering;

/// Slots the first run of a handle asks for; each run spent whole doubles it
/// (up to the generator's handle run size), each run passed over with more than
/// half of it unused halves it (with half or less unused, the next is as large: a
/// thread issuing the same burst every tick takes one run a tick).
const FIRST_RUN: u64 = 2;

/// A per-thread handle on a [`Generator`], from [`Generator::local`]: it reserves
/// runs of slots from the generator's counter (one compare-and-swap each) and
/// issues IDs from them with no atomic step, under every rule of the generator:
/// the same layout and node id, the fork, close and lease checks on every call,
/// the borrow bound and the `clock_backwards` policy on the call's own clock
/// reading, and [`Generator::stats`]. No ID repeats one of the generator's or of
/// another handle's; each handle's IDs strictly increase.
///
/// `Send` but not `Sync`: one per thread (or task); calls take `&mut self`.
///
/// ```
/// use flakeid_core::{Generator, Layout};
/// let g = Generator::builder(Layout::SNOWFLAKE).node(7).build()?;
/// let mut local = g.local();
/// let a = local.next_id()?;
/// let b = local.next_id()?;
/// assert!(b > a);
/// assert_ne!(g.next_id()?, b);
/// assert_eq!(Layout::SNOWFLAKE.decompose(b).node, 7);
/// # Ok::<(), flakeid_core::Error>(())
/// ```
pub struct LocalGenerator<'g, C: CounterStorage = OwnCounter> {
    generator: &'g Generator<C>,
    /// The run: the next slot to serve and the run's exclusive end (`next == end`:
    /// no run).
    next: u64,
    end: u64,
    /// The run's first slot: its size is `end - run_start`.
    run_start: u64,
    /// Slots the next run asks for.
    want: u64,
    /// The fast state: the clock reading (ms) the last call served from; the ID
    /// of the run's next slot and the end (exclusive, as an ID) of what the run may
    /// serve while the clock reads it without leaving that slot's tick (the run's
    /// end, the window's, the tick's). Every slot in between is at or above that
    /// reading's tick, and one slot more is one `step` more in the ID (the
    /// sequence's place), so a call that reads the same millisecond needs only
    /// `id < id_stop`. `id_base` is the ID of slot `next` when the fast state was
    /// set: [`settle`](Self::settle) brings `next` up to date from it.
    seen_ms: u64,
    /// The clock reading the fast state is for, of any clock (`seen_ms` only of
    /// the system clock's cache, which the inline fast path reads).
    fast_ms: u64,
    id: u64,
    id_stop: u64,
    id_base: u64,
    step: u64,
    shift: u32,
    /// The generator's fork generation when this handle last checked it: a fork or
    /// a `close()` changes one of the two loads compared with it.
    born: u64,
    /// The handles' epoch when this handle last made every check (`checked_now`).
    epoch: u64,
    /// Not `Sync`: the run is plain memory.
    _not_sync: PhantomData<Cell<()>>,
}

impl<C: CounterStorage> Generator<C> {
    /// A per-thread handle that issues this generator's IDs without an atomic step
    /// per ID ([`LocalGenerator`]). Take one per thread that issues many IDs; the
    /// generator itself stays usable, by this thread and others.
    pub fn local(&self) -> LocalGenerator<'_, C> {
        LocalGenerator {
            generator: self,
            next: 0,
            end: 0,
            run_start: 0,
            want: FIRST_RUN / 2,
            seen_ms: u64::MAX,
            fast_ms: u64::MAX,
            id: 0,
            id_stop: 0,
            id_base: 0,
            step: 1 << self.slots.seq_shift,
            shift: self.slots.seq_shift,
            born: self.fork_generation.load(Ordering::Relaxed),
            epoch: fork::handle_epoch().wrapping_sub(1),
            _not_sync: PhantomData,
        }
    }
}

impl<'g, C: CounterStorage> LocalGenerator<'g, C> {
    /// The generator this handle issues for.
    pub fn generator(&self) -> &'g Generator<C> {
        self.generator
    }

    /// The next ID: from the handle's run when the clock allows its next slot,
    /// else from a new run (which may wait, as [`Generator::next_id`] does).
    ///
    /// The fast path is three comparisons: the handles' epoch (which a fork, a
    /// `close()` or a lost node id moves, see `fork::end_handle_epoch`) with the
    /// handle's copy, the system clock's cached reading with the fast state's
    /// millisecond, and the next ID with the fast state's end; plus the lease's
    /// check at that reading. A custom clock's fast state is served after the full
    /// checks (its reading is a call, not a load).
    #[inline]
    pub fn next_id(&mut self) -> Result<u64> {
        if fork::handle_epoch_unchanged(self.epoch) {
            let now = crate::clock::cached_raw();
            if now == self.seen_ms && self.id < self.id_stop {
                self.generator.check_lease(now)?;
                let id = self.id;
                self.id = id + self.step;
                return Ok(id);
            }
        }
        self.next_id_slow()
    }

    /// [`next_id`](Self::next_id) at a new clock reading, past the run's end, or
    /// after the epoch moved: every check, then the run or a new one.
    #[inline(never)]
    fn next_id_slow(&mut self) -> Result<u64> {
        let now = self.checked_now()?;
        // The fast state on the call's own reading: a custom clock's, or the
        // system clock's after the epoch moved.
        if now == self.fast_ms && self.id < self.id_stop {
            let id = self.id;
            self.id = id + self.step;
            return Ok(id);
        }
        // The fast path reads the clock without telling the ticker; every new
        // reading comes here at least once.
        self.generator.clock.touch();
        match self.take(now)? {
            Ok(slot) => Ok(self.generator.id_of(slot)),
            Err(t) => self.next_run(now, t),
        }
    }

    /// The run's next slot the clock reading `now` allows (the tick's first, or
    /// later, below the window's end), or `Err(tick)` when the run has none.
    fn take(&mut self, now: u64) -> Result<core::result::Result<u64, u64>> {
        self.settle();
        let g = self.generator;
        let (mut now, mut t) = (now, g.ticks(now)?);
        let mut slot = self.next.max(t << g.slots.sb);
        let mut stop = self.end.min(g.limit(t));
        if stop <= slot && slot < self.end {
            // The run is ahead of what this reading allows; the cached clock may lag
            // the clock by the ticker's latency (just after a tick, when the run was
            // reserved on a precise reading): a precise reading decides, as on the
            // generator's path, and the run is kept for it. Checked (the lease) as
            // the call's reading.
            let precise = g.clock.now_ms_precise();
            if precise > now {
                g.check_lease(precise)?;
                (now, t) = (precise, g.ticks(precise)?);
                slot = self.next.max(t << g.slots.sb);
                stop = self.end.min(g.limit(t));
            }
        }
        if slot < stop {
            // A run from an earlier tick: its slots before this one are older than
            // the clock, passed over.
            g.counters.skip(slot - self.next);
            self.next = slot + 1;
            // The fast state, up to `stop` within this slot's tick; the tick's last
            // ID of the layout's last tick may be `u64::MAX`: then that slot is
            // left to this path.
            let stop = stop.min(((slot >> g.slots.sb) + 1) << g.slots.sb);
            let last = g.id_of(stop - 1);
            // The fast path reads the system clock's cache: a custom clock's
            // reading is never compared there (u64::MAX matches no cache).
            self.seen_ms = if g.clock.is_system() { now } else { u64::MAX };
            self.fast_ms = now;
            self.id = g.id_of(slot) + self.step;
            self.id_base = self.id;
            self.id_stop = last.checked_add(self.step).unwrap_or(last).max(self.id);
            return Ok(Ok(slot));
        }
        Ok(Err(t))
    }

    /// [`next_id`](Self::next_id) that never waits: `Ok(None)` where it would.
    pub fn try_next_id(&mut self) -> Result<Option<u64>> {
        let now = self.checked_now()?;
        self.generator.clock.touch();
        match self.take(now)? {
            Ok(slot) => Ok(Some(self.generator.id_of(slot))),
            Err(t) => self.try_next_run(t),
        }
    }

    /// Fills `out` with fresh IDs, increasing and above every ID this handle issued
    /// before: from the run when it can give all of `out`, else (the run dropped)
    /// from the counter, as [`Generator::fill`] does.
    pub fn fill(&mut self, out: &mut [u64]) -> Result<()> {
        if out.is_empty() {
            return Ok(());
        }
        self.settle();
        let g = self.generator;
        let t = g.ticks(self.checked_now()?)?;
        g.clock.touch();
        let first = self.next.max(t << g.slots.sb);
        if self.end.min(g.limit(t)).saturating_sub(first) >= out.len() as u64 {
            g.counters.skip(first - self.next);
            for (i, slot) in out.iter_mut().enumerate() {
                *slot = g.id_of(first + i as u64);
            }
            self.next = first + out.len() as u64;
            return Ok(());
        }
        self.drop_run();
        let mut done = 0usize;
        while done < out.len() {
            let (start, count) = g.reserve((out.len() - done) as u64)?;
            for (i, slot) in out[done..done + count as usize].iter_mut().enumerate() {
                *slot = g.id_of(start + i as u64);
            }
            done += count as usize;
        }
        Ok(())
    }

    /// `n` fresh IDs, increasing ([`fill`](Self::fill)); `n` at most [`MAX_BATCH`].
    pub fn next_ids(&mut self, n: usize) -> Result<Vec<u64>> {
        if n > MAX_BATCH {
            return Err(batch_error(n));
        }
        let mut v = vec![0u64; n];
        self.fill(&mut v)?;
        Ok(v)
    }

    /// Forgets the handle's run (its unused slots are passed over, and no longer
    /// count in [`Stats::ids_issued`](crate::Stats::ids_issued)).
    pub fn drop_run(&mut self) {
        self.settle();
        self.generator.counters.skip(self.end.saturating_sub(self.next));
        self.next = 0;
        self.end = 0;
    }

    /// Brings `next` up to date with the IDs the fast path served, and ends the
    /// fast state: every path but the fast one starts here.
    #[inline(always)]
    fn settle(&mut self) {
        self.next += (self.id - self.id_base) >> self.shift;
        self.id = 0;
        self.id_base = 0;
        self.id_stop = 0;
    }

    /// The call's reading of the cached clock, after the checks every ID passes:
    /// not forked nor closed (two relaxed loads against the handle's copy), the
    /// node id not lost, the lease valid at that reading. The handles' epoch is read first: an event
    /// after these checks moves it again, and the next call checks again.
    #[inline(always)]
    fn checked_now(&mut self) -> Result<u64> {
        let g = self.generator;
        self.epoch = fork::handle_epoch();
        let generation = g.fork_generation.load(Ordering::Relaxed);
        if generation != self.born || fork::generation() != generation {
            self.reborn()?;
        }
        // A node id lost to another process: the run's slots are refused too.
        g.check_owner()?;
        let now = g.clock.now_ms_untouched();
        g.check_lease(now)?;
        Ok(now)
    }

    /// In a forked child or after `close()`: the generator's refusal. A generator
    /// that goes on in a child (no node id to keep apart) goes on, and the handle
    /// drops the run it held in the parent, whose slots the parent still serves.
    #[cold]
    #[inline(never)]
    fn reborn(&mut self) -> Result<()> {
        self.generator.check_alive()?;
        let generation = self.generator.fork_generation.load(Ordering::Relaxed);
        if generation == CLOSED {
            // Closed between the check and the load.
            return self.generator.check_alive();
        }
        self.drop_run();
        self.born = generation;
        Ok(())
    }

    /// A new run reserved while the clock reads `now`, tick `t` (waiting as
    /// [`Generator::next_id`] does); its first slot is the ID returned.
    #[cold]
    #[inline(never)]
    fn next_run(&mut self, now: u64, t: u64) -> Result<u64> {
        match self.claim_run(t) {
            // Claimed on this reading's tick: served as a run's slots are, which
            // sets the fast state, so the run's next call takes the fast path.
            Some(run) => {
                self.keep(run);
                self.next = run.0;
                match self.take(now)? {
                    Ok(slot) => Ok(self.generator.id_of(slot)),
                    // Not reached (the run lies in `now`'s tick, below its window's
                    // end); the run's first slot is still this handle's.
                    Err(_) => Ok(self.keep(run)),
                }
            }
            // Behind the clock (a monotonic rollback), one slot: a run never holds
            // slots past what the clock allows, which the next call would pass over.
            None => Ok(self.keep(self.generator.reserve_slow(self.want, 1)?)),
        }
    }

    /// [`next_run`](Self::next_run) that never waits: `None` where it would.
    #[cold]
    #[inline(never)]
    fn try_next_run(&mut self, t: u64) -> Result<Option<u64>> {
        let run = match self.claim_run(t) {
            Some(run) => run,
            None => match self.generator.try_reserve_now(self.want, 1)? {
                Some(run) => run,
                None => return Ok(None),
            },
        };
        Ok(Some(self.keep(run)))
    }

    /// Drops the old run (first, so that a failing reservation leaves none), sizes
    /// the next, and makes one attempt at it on the counter: `None` when the slow
    /// path must decide (a lost race, a full window, the clock behind).
    fn claim_run(&mut self, t: u64) -> Option<(u64, u64)> {
        self.settle();
        let g = self.generator;
        let rest = self.end.saturating_sub(self.next);
        let size = self.end.saturating_sub(self.run_start);
        self.want = if rest == 0 {
            (self.want * 2).min(g.runs.handle_run)
        } else if rest * 2 > size {
            (self.want / 2).max(1)
        } else {
            self.want
        };
        self.drop_run();
        match g.claim(t, self.want) {
            Claim::Won(first, count) => Some((first, count)),
            Claim::Raced | Claim::Blocked(_) => None,
        }
    }

    /// Keeps the run `(first, count)` and returns its first slot's ID.
    fn keep(&mut self, (first, count): (u64, u64)) -> u64 {
        self.settle();
        self.run_start = first;
        self.next = first + 1;
        self.end = first + count;
        self.generator.id_of(first)
    }
}

impl<C: CounterStorage> Drop for LocalGenerator<'_, C> {
    fn drop(&mut self) {
        // The run's unused slots are never issued: stats() stops counting them.
        self.drop_run();
    }
}

impl<C: CounterStorage> fmt::Debug for LocalGenerator<'_, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalGenerator")
            .field("generator", self.generator)
            .field(
                "run_left",
                &self
                    .end
                    .saturating_sub(self.next + ((self.id - self.id_base) >> self.shift)),
            )
            .finish()
    }
}

#[cfg(all(test, unix, not(loom)))]
mod tests {
    use crate::{Error, Generator, Layout, Overflow};

    /// A forked child whose cached clock reads the very millisecond its copy of a
    /// handle last served (set here, as the child's ticker would once started) calls
    /// that handle: the fork moved the handles' epoch, so the call takes the full
    /// checks and refuses, never serving the parent's next IDs from the fast state.
    /// The child only touches atomics and plain memory before `_exit`, as a child of
    /// a threaded process must.
    #[test]
    fn a_forked_childs_handle_at_the_parents_millisecond_refuses() {
        let g = Generator::builder(Layout::SNOWFLAKE)
            .host_guard(false)
            .node(902)
            .overflow(Overflow::Borrow)
            .max_borrow_ms(60_000)
            .build()
            .unwrap();
        let mut h = g.local();
        // Until the handle has a fast state on the system clock with IDs left in it.
        let mut calls = 0;
        while !(h.id < h.id_stop && h.seen_ms == h.fast_ms && h.seen_ms != u64::MAX) {
            h.next_id().unwrap();
            calls += 1;
            assert!(calls < 100_000, "the handle never kept a fast state");
        }
        let seen = h.seen_ms;
        // SAFETY: the child touches atomics and the handle's memory, then _exit.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            crate::clock::set_cache_for_test(seen);
            let code = match h.next_id() {
                Err(Error::Fork) => 0,
                Ok(_) => 1,
                Err(_) => 2,
            };
            // SAFETY: ends the child without running the parent's destructors.
            unsafe { libc::_exit(code) };
        }
        let mut status = 0;
        // SAFETY: waits for the child just forked.
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        assert!(libc::WIFEXITED(status));
        assert_eq!(
            libc::WEXITSTATUS(status),
            0,
            "1: the child was served from the parent's fast state; 2: another error"
        );
    }
}
