//! Each connection's watchdog task: the timeouts no request enforces (header read,
//! idleness, stalled streams), eviction and the server's shutdown, checked every
//! quarter of the shortest timeout.

use super::SlotState;
use crate::budget::Streams;
use crate::config::Limits;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;
/// What a connection's watchdog asks of its connection's task.
#[derive(Debug, Default)]
pub(super) struct Ctl {
    /// [`Ctl::SHUT_DOWN`] and [`Ctl::CLOSE`], set by the watchdog, never cleared.
    pub(super) cmd: std::sync::atomic::AtomicU8,
    /// The connection's task, woken when `cmd` changes and on every watchdog tick
    /// (which polls hyper's header-read deadline, [`WatchdogTimer`]).
    pub(super) waker: atomic_waker::AtomicWaker,
}

impl Ctl {
    /// Finish the requests in flight, then close (HTTP/2 GOAWAY).
    pub(super) const SHUT_DOWN: u8 = 1;
    /// Close now.
    pub(super) const CLOSE: u8 = 2;
    /// Close now with a reset ([`super::Stop::Cut`]).
    pub(super) const RESET: u8 = 4;

    pub(super) fn send(&self, cmd: u8) {
        self.cmd.fetch_or(cmd, Ordering::AcqRel);
        self.waker.wake();
    }
}

/// Aborts a task when dropped: a connection's watchdog ends with its connection.
#[derive(Debug)]
pub(super) struct AbortOnDrop(pub(super) tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The limits of one connection that no request enforces: the header-read timeout
/// (an HTTP/2 connection, or one whose protocol is not known yet, that sends no
/// request), eviction, the server's shutdown, stalled streams and idleness.
#[derive(Debug)]
pub(super) struct Watchdog {
    pub(super) ctl: Arc<Ctl>,
    pub(super) state: Arc<SlotState>,
    pub(super) streams: Arc<Streams>,
    pub(super) limits: Limits,
    pub(super) stop: watch::Receiver<super::Stop>,
    pub(super) addr: std::net::SocketAddr,
}

impl Watchdog {
    pub(super) async fn run(mut self) {
        let limits = &self.limits;
        let started = Instant::now();
        let tick = watchdog_tick(limits);
        // Set when a stalled stream made us close the connection (GOAWAY).
        let mut stalled: Option<Instant> = None;
        let mut last_progress = (0u64, started);
        let mut closing: Option<Instant> = None;
        let mut stopped = false;
        let mut done = false;
        self.stop.mark_changed();
        let mut next = started + tick;
        loop {
            tokio::select! {
                () = self.state.evict.notified() => return self.ctl.send(Ctl::CLOSE),
                // A probe slot's request: finish it, take no more (HTTP/2: GOAWAY).
                () = self.state.done.notified(), if !done => {
                    done = true;
                    self.ctl.send(Ctl::SHUT_DOWN);
                }
                r = self.stop.changed(), if !stopped => {
                    let Ok(()) = r else {
                        stopped = true;
                        continue;
                    };
                    use super::Stop;
                    match *self.stop.borrow_and_update() {
                        Stop::Serving => {}
                        // An HTTP/1.1 connection answers its next request (`/readyz`:
                        // 503) with `Connection: close` (requests.rs).
                        Stop::Draining if self.state.http1.load(Ordering::Acquire) => {}
                        Stop::Draining | Stop::Closing => self.ctl.send(Ctl::SHUT_DOWN),
                        Stop::Cut => return self.ctl.send(Ctl::RESET),
                    }
                }
                () = tokio::time::sleep_until(next) => {
                    next += tick;
                    let now = Instant::now();
                    // hyper's HTTP/1.1 header-read deadline is polled on this wake-up.
                    self.ctl.waker.wake();
                    if !self.state.served.load(Ordering::Acquire)
                        && now.duration_since(started) >= limits.header_read_timeout
                    {
                        // No complete request in time: a slow or silent client.
                        return self.ctl.send(Ctl::CLOSE);
                    }
                    match stalled {
                        None => {
                            let waited = self.streams.longest_wait();
                            if waited >= limits.stream_idle_timeout {
                                tracing::info!(
                                    peer = %self.addr,
                                    "a streamed response's client made no room for {waited:?}: closing its connection"
                                );
                                self.ctl.send(Ctl::SHUT_DOWN);
                                stalled = Some(now);
                            }
                        }
                        // A second after GOAWAY: the stalled stream never lets it finish.
                        Some(t) if now.duration_since(t) >= Duration::from_secs(1) => {
                            return self.ctl.send(Ctl::CLOSE);
                        }
                        Some(_) => {}
                    }
                    let p = self.state.progress.load(Ordering::Relaxed);
                    if p != last_progress.0 {
                        last_progress = (p, now);
                        closing = None;
                    } else if now.duration_since(last_progress.1) >= limits.idle_timeout {
                        match closing {
                            None => {
                                self.ctl.send(Ctl::SHUT_DOWN);
                                closing = Some(now);
                            }
                            // Still not done a second after GOAWAY: a peer that reads
                            // nothing never lets it finish.
                            Some(t) if now.duration_since(t) >= Duration::from_secs(1) => {
                                return self.ctl.send(Ctl::CLOSE);
                            }
                            Some(_) => {}
                        }
                    }
                }
            }
        }
    }
}

/// How often a connection's watchdog looks: a quarter of the shortest timeout,
/// at least every 50 ms.
pub(super) fn watchdog_tick(limits: &Limits) -> Duration {
    (limits
        .header_read_timeout
        .min(limits.idle_timeout)
        .min(limits.stream_idle_timeout)
        / 4)
    .max(Duration::from_millis(50))
}

/// hyper's timer for HTTP/1.1's header-read timeout, which hyper sets anew for
/// every request: a deadline compared with the clock when hyper polls it, with no
/// timer-wheel entry to register and remove. What wakes the connection's task to
/// poll it is its watchdog's tick ([`watchdog_tick`]), so the timeout fires at most
/// a tick late.
#[derive(Debug, Clone, Copy)]
pub(super) struct WatchdogTimer;

/// A deadline of [`WatchdogTimer`].
#[derive(Debug)]
pub(super) struct Deadline(std::time::Instant);

impl std::future::Future for Deadline {
    type Output = ();
    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        if std::time::Instant::now() >= self.0 {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

impl hyper::rt::Sleep for Deadline {}

impl hyper::rt::Timer for WatchdogTimer {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn hyper::rt::Sleep>> {
        self.sleep_until(std::time::Instant::now() + duration)
    }
    fn sleep_until(&self, deadline: std::time::Instant) -> Pin<Box<dyn hyper::rt::Sleep>> {
        Box::pin(Deadline(deadline))
    }
    fn reset(&self, sleep: &mut Pin<Box<dyn hyper::rt::Sleep>>, new_deadline: std::time::Instant) {
        match sleep.as_mut().downcast_mut_pin::<Deadline>() {
            Some(d) => d.get_mut().0 = new_deadline,
            None => *sleep = self.sleep_until(new_deadline),
        }
    }
}
