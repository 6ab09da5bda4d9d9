//! Calls that wait on an async runtime's timer instead of the calling thread
//! (`next_id_async`, `next_ids_async`): a blocking call at a used-up tick, or one
//! waiting out a clock behind its IDs, spins and yields its thread until the clock
//! moves, and under tokio or smol that thread is a worker every other task needs.
//!
//! The engine stays runtime-neutral and free of dependencies: the runtime's sleep
//! comes in as an [`AsyncSleep`], which any `Fn(Duration) -> impl Future` is
//! (`|d| tokio::time::sleep(d)`, `|d| async move { smol::Timer::after(d).await; }`).
//! A call decides exactly as the blocking one does ([`Generator::reserve_now`], the
//! same verdicts and the same bound on a wait, [`Generator::waited_out`]); between
//! two decisions it awaits the runtime's timer until the clock can have moved.

use super::{Generator, NEXT_ID_ASYNC, Pending, Reserve};
use crate::counter::CounterStorage;
use crate::error::Result;
use crate::stats::Episode;
use alloc::boxed::Box;
use alloc::vec::Vec;
use core::future::Future;
use core::time::Duration;

/// A runtime's timer: what an async call awaits while the clock must move. Any
/// `Fn(Duration) -> F` where `F: Future<Output = ()> + Send` is one.
pub trait AsyncSleep {
    /// A future that completes after about `d`.
    fn sleep(&self, d: Duration) -> impl Future<Output = ()> + Send;
}

impl<F, Fut> AsyncSleep for F
where
    F: Fn(Duration) -> Fut,
    Fut: Future<Output = ()> + Send,
{
    fn sleep(&self, d: Duration) -> impl Future<Output = ()> + Send {
        self(d)
    }
}

/// The step of a runtime's timer (tokio's, async-io's: a millisecond): a wait
/// shorter than it yields instead (`reserve_async`).
const TIMER_GRAIN: Duration = Duration::from_millis(1);

/// Returns to the executor once, woken at once: its other ready tasks run, then
/// this one again (futures-lite's `yield_now`, which needs no runtime).
struct YieldNow(bool);

impl Future for YieldNow {
    type Output = ();
    fn poll(mut self: core::pin::Pin<&mut Self>, cx: &mut core::task::Context<'_>) -> core::task::Poll<()> {
        if self.0 {
            return core::task::Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        core::task::Poll::Pending
    }
}

impl<C: CounterStorage> Generator<C> {
    /// [`next_id`](Generator::next_id) for async code: the same ID and the same
    /// errors, but a wait for the clock (a used-up tick, a full borrow window, a
    /// clock behind IDs issued under `clock_backwards = "wait"`) awaits `sleep`
    /// instead of holding the thread. Without a wait it returns at once, having
    /// done what `next_id` does (a thread's lone run serves it too). Call order holds across tasks as across threads:
    /// a call that starts after another returned gets a larger ID.
    ///
    /// ```
    /// use flakeid_core::{Generator, Layout};
    ///
    /// let ids = Generator::builder(Layout::SNOWFLAKE).node(5).host_guard(false).build()?;
    /// let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    /// let id = rt.block_on(ids.next_id_async(&|d| tokio::time::sleep(d)))?;
    /// assert_eq!(Layout::SNOWFLAKE.decompose(id).node, 5);
    /// # Ok::<(), flakeid_core::Error>(())
    /// ```
    pub async fn next_id_async(&self, sleep: &impl AsyncSleep) -> Result<u64> {
        if let Some(id) = self.next_id_unless_waiting::<NEXT_ID_ASYNC>()? {
            return Ok(id);
        }
        // The wait's state (the runtime's timer, the episode) boxed: in place, it
        // would make every call's future as large as a waiting one's, and the
        // caller's future carries it (docs/performance.md, "The async call").
        let (first, _) = Box::pin(self.reserve_async(1, 1, sleep)).await?;
        Ok(self.id_of(first))
    }

    /// [`next_ids`](Generator::next_ids) for async code, waiting as
    /// [`next_id_async`](Self::next_id_async) does: `n` fresh IDs, increasing.
    pub async fn next_ids_async(&self, n: usize, sleep: &impl AsyncSleep) -> Result<Vec<u64>> {
        super::check_batch(n as i128)?;
        self.end_own_lone_run();
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            let want = (n - out.len()) as u64;
            let (start, count) = match self.reserve_cached(want)? {
                Some(run) => run,
                None => self.reserve_async(want, want, sleep).await?,
            };
            out.extend((start..start + count).map(|slot| self.id_of(slot)));
        }
        Ok(out)
    }

    /// Up to `n` slots, deciding as `reserve_slow` does; between two decisions
    /// that say wait, `sleep` until the clock can have moved.
    async fn reserve_async(&self, n: u64, behind: u64, sleep: &impl AsyncSleep) -> Result<(u64, u64)> {
        let mut ep = Episode::default();
        let mut seen = None;
        let r = loop {
            let mono = self.clock.monotonic_ms();
            let pending = match self.reserve_now(n, behind, &mut ep, None) {
                Ok(Reserve::Won { first, count }) => break Ok((first, count)),
                Ok(Reserve::Wait(pending)) => pending,
                Err(e) => break Err(e),
            };
            if let Pending::NextTick { .. } = pending
                && ep.wait_started_us.is_none()
            {
                ep.wait_started_us = Some(self.wait_clock_us());
            }
            if let Some(e) = self.waited_out(pending, &mut seen, mono) {
                break Err(e);
            }
            let wait = self.until_moved(pending);
            if wait.is_zero() {
                continue;
            }
            if wait < TIMER_GRAIN && self.clock.is_system() {
                // Inside the last millisecond before the next tick: a runtime's
                // timer would fire on its own millisecond grid, often a whole tick
                // late; yield to the runtime's other tasks until the tick comes.
                YieldNow(false).await;
            } else {
                sleep.sleep(wait).await;
            }
        };
        let now_us = if ep.wait_started_us.is_some() {
            self.wait_clock_us()
        } else {
            0
        };
        self.counters.record(ep, now_us);
        r
    }

    /// How long until the clock can have moved as `pending` needs: to the start of
    /// the next tick, or by as much as it is behind (at most `max_wait_ms`).
    ///
    /// On the system clock the next tick is waited for to the nanosecond (zero once
    /// it has come): a runtime's timer fires on a millisecond grid of its own, and a
    /// whole millisecond asked from inside a tick ends past the next tick's start,
    /// often in the tick after it. At the cap that skipped every other tick: half
    /// the blocking call's IDs a second (2.1 M against 4.1 M on one runtime thread).
    /// Other clocks read whole milliseconds: at least 1.
    fn until_moved(&self, pending: Pending) -> Duration {
        let most = self.policy.max_wait_ms.max(1);
        #[cfg(feature = "std")]
        if let Pending::NextTick { t } = pending
            && self.clock.is_system()
        {
            let next_ns = self
                .layout
                .timestamp_of_ticks(t.saturating_add(1))
                .saturating_mul(1_000_000);
            let left = next_ns.saturating_sub(crate::clock::precise_now_ns());
            return Duration::from_nanos(left).min(Duration::from_millis(most));
        }
        let now = self.clock.now_ms_precise();
        let wanted = match pending {
            Pending::NextTick { t } => self.layout.timestamp_of_ticks(t.saturating_add(1)),
            Pending::Behind { by_ms, .. } => now.saturating_add(by_ms),
        };
        Duration::from_millis(wanted.saturating_sub(now).clamp(1, most))
    }
}
