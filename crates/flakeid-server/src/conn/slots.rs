//! Connection slots: the caps on connections (all, and per client address) and
//! which connection a newcomer evicts at a cap ([`crate::config::Limits`]).

use crate::budget::Grouping;
use std::collections::{BTreeSet, HashMap};
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::Notify;

/// How long a new connection has to send its first request before, at a cap, it is
/// evicted ahead of every other; and how long since its last request a served one
/// counts as in use ([`ConnsInner::victim`]). A fresh client (a probe) has sent no
/// request for the milliseconds between its accept and its request: without this,
/// under churn (clients that reconnect as soon as they are evicted) it is the oldest
/// unserved connection and the next newcomer takes its place before it is served.
pub const UNSERVED_GRACE: Duration = Duration::from_secs(1);

/// Connections admitted beyond the cap when every other connection has a request
/// in flight (`Conns::admit`): each may be answered `/healthz` and `/readyz` only
/// (anything else: `503` with `Retry-After`, and the connection closed), so that
/// probes are answered while callers that wait hold every slot. The memory budget
/// counts them as connections.
pub const PROBE_SLOTS: usize = 16;
/// Of the [`PROBE_SLOTS`], at most this many from one client address.
pub const PROBE_SLOTS_PER_CLIENT: usize = 4;

/// Long-lived calls (gRPC `Stream`, health `Watch`, reflection: calls that stay in
/// flight for as long as their client likes, and keep their connection from being
/// evicted) in flight at once: at most the connection cap divided by this, and of
/// one client address at most its connection limit divided by this. Past it a call
/// is refused at once (`RESOURCE_EXHAUSTED`) instead of held, so that such calls
/// never hold every slot: the others stay evictable, and probes and fresh clients
/// take their places rather than the probe slots.
pub const LONG_CALLS_DIVISOR: usize = 2;

/// The open connections: which have not sent a request yet (evicted first once
/// [`UNSERVED_GRACE`] old), how many each client holds (an IPv4 address or an IPv6
/// prefix, [`Grouping`]), and a signal for when the last one closes.
#[derive(Debug)]
pub(crate) struct Conns {
    cap: usize,
    per_client: usize,
    /// [`UNSERVED_GRACE`], in ns (the unit tests set their own).
    grace_ns: u64,
    /// [`PROBE_SLOTS`], or 0 (the probe listener: every slot is a probe's).
    probe_slots: usize,
    /// Which addresses are one client, for `per_client` and the eviction's choice.
    grouping: Grouping,
    inner: Mutex<ConnsInner>,
    empty: Notify,
    /// What [`SlotState::last_active`] counts from.
    epoch: std::time::Instant,
    pub(crate) evicted: AtomicU64,
    pub(crate) refused: AtomicU64,
    /// `accept` calls that failed (out of descriptors): the accept loop backs off.
    pub(crate) accept_failed: AtomicU64,
    /// Long-lived calls in flight at most, in all and per client address
    /// ([`LONG_CALLS_DIVISOR`]).
    long_cap: usize,
    long_per_client: usize,
}

#[derive(Debug, Default)]
pub(super) struct ConnsInner {
    next: u64,
    live: HashMap<u64, Arc<SlotState>>,
    /// Connections without a complete request yet, oldest first.
    waiting: BTreeSet<u64>,
    /// Open connections per client ([`Grouping::client`]).
    clients: HashMap<IpAddr, usize>,
    /// Connections in the probe slots, oldest first, and per client.
    probe_slots: BTreeSet<u64>,
    probe_clients: HashMap<IpAddr, usize>,
    /// Long-lived calls in flight, in all and per client.
    long_calls: usize,
    long_clients: HashMap<IpAddr, usize>,
}

impl ConnsInner {
    /// The connection to close to make room (of client `ip`'s only, when given), at
    /// `now` (ns since [`Conns::epoch`]): the oldest that has sent no request within
    /// `grace_ns` of its accept; else one of the client that holds the most
    /// connections (of those with one that may go: none in a probe slot or with a
    /// request in flight). Of that client's (or of clients holding as many): a served
    /// one whose last request started `grace_ns` ago or more, longest ago first;
    /// else one that has sent none yet (within its grace), oldest first; else the
    /// served one whose last request started longest ago. So a client that opens
    /// connections past the cap (churn: connect, close, connect) closes its own,
    /// and clients that keep a few connections and use them are the last to go.
    pub(super) fn victim(&self, ip: Option<IpAddr>, now: u64, grace_ns: u64) -> Option<u64> {
        let mine = |s: &SlotState| ip.is_none_or(|ip| s.client == ip);
        let unserved = self.waiting.iter().filter_map(|id| self.live.get(id)).find(|s| mine(s));
        if let Some(s) = unserved
            && now.saturating_sub(s.admitted) >= grace_ns
        {
            return Some(s.id);
        }
        self.live
            .values()
            .filter(|s| mine(s) && !s.probe_only && s.in_flight.load(Ordering::Acquire) == 0)
            .max_by_key(|s| {
                let held = self.clients.get(&s.client).copied().unwrap_or(0);
                let (idle, since) = match s.served.load(Ordering::Acquire) {
                    false => (Idle::New, s.admitted),
                    true => {
                        let last = s.last_active.load(Ordering::Relaxed);
                        let idle = match now.saturating_sub(last) >= grace_ns {
                            true => Idle::Stale,
                            false => Idle::Active,
                        };
                        (idle, last)
                    }
                };
                (held, idle, std::cmp::Reverse((since, s.id)))
            })
            .map(|s| s.id)
    }

    /// Forgets connection `id`; whether it was open.
    pub(super) fn remove(&mut self, id: u64) -> Option<Arc<SlotState>> {
        self.waiting.remove(&id);
        self.probe_slots.remove(&id);
        let state = self.live.remove(&id)?;
        let clients = match state.probe_only {
            true => &mut self.probe_clients,
            false => &mut self.clients,
        };
        if let Some(n) = clients.get_mut(&state.client) {
            *n -= 1;
            if *n == 0 {
                clients.remove(&state.client);
            }
        }
        Some(state)
    }

    /// A probe slot for `ip` ([`PROBE_SLOTS`]): free, or taken from the oldest
    /// connection in one (of `ip`'s, at its limit) accepted more than `grace_ns`
    /// ago (a probe is answered in milliseconds). `None`: none.
    fn probe_slot(&mut self, ip: IpAddr, slots: usize, now: u64, grace_ns: u64) -> Option<Option<Arc<SlotState>>> {
        let full = if self.probe_clients.get(&ip).copied().unwrap_or(0) >= PROBE_SLOTS_PER_CLIENT.min(slots) {
            Some(Some(ip))
        } else if self.probe_slots.len() >= slots {
            Some(None)
        } else {
            None
        };
        let Some(of) = full else { return Some(None) };
        let victim = self
            .probe_slots
            .iter()
            .filter_map(|id| self.live.get(id))
            .find(|s| of.is_none_or(|ip| s.client == ip) && now.saturating_sub(s.admitted) >= grace_ns)?
            .id;
        Some(self.remove(victim))
    }
}

/// Of a connection that may be evicted, how it is idle, in the order they go
/// (the last goes first, [`ConnsInner::victim`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Idle {
    /// Served, and its last request started within the grace: a client using it.
    Active,
    /// Sent no request yet, within its grace: a probe or a fresh client on its way.
    New,
    /// Served, and its last request started the grace ago or more.
    Stale,
}

#[derive(Debug)]
pub(crate) struct SlotState {
    id: u64,
    pub(super) ip: IpAddr,
    /// The client it counts for ([`Grouping::client`] of `ip`).
    client: IpAddr,
    /// When it was accepted, in ns since [`Conns::epoch`].
    admitted: u64,
    pub(super) served: AtomicBool,
    pub(super) evict: Notify,
    /// Requests whose response is not handed over yet (streamed bodies: not
    /// finished); a connection with none may be evicted.
    in_flight: AtomicU32,
    /// When the connection's last request started, in ns since [`Conns::epoch`].
    last_active: AtomicU64,
    /// Counts requests started and body frames moved, for the idle timeout.
    pub(super) progress: AtomicU64,
    /// In a probe slot ([`PROBE_SLOTS`]): `/healthz` and `/readyz` only.
    pub(crate) probe_only: bool,
    /// Its requests come over HTTP/1.x: a drain leaves it open to answer the next
    /// one (`/readyz`: 503) with `Connection: close`, rather than closing it idle.
    pub(super) http1: AtomicBool,
    /// Of [`SlotState::in_flight`], the requests whose response is tracked: they
    /// stay unfinished until the last of their bytes is written, which their flows
    /// tell ([`Conns::unfinished`]).
    tracked: AtomicU32,
    /// The connection answers the requests it has and takes no more (HTTP/2:
    /// GOAWAY): a probe slot after its first request (conn/watchdog.rs).
    pub(super) done: Notify,
    /// The connection's tracked responses ([`Conns::unfinished`]), set once it is
    /// served.
    pub(super) streams: std::sync::OnceLock<std::sync::Weak<crate::budget::Streams>>,
}

impl SlotState {
    /// Something moved on the connection: a request, a body frame.
    pub(crate) fn moved(&self) {
        self.progress.fetch_add(1, Ordering::Relaxed);
    }
}

impl crate::budget::Activity for SlotState {
    fn moved(&self) {
        SlotState::moved(self);
    }
}

impl crate::scrape::ConnGauges for Conns {
    fn open(&self) -> usize {
        Conns::open(self)
    }
    fn evicted(&self) -> u64 {
        self.evicted.load(Ordering::Relaxed)
    }
    fn refused(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }
    fn accept_failed(&self) -> u64 {
        self.accept_failed.load(Ordering::Relaxed)
    }
}

/// One admitted connection; dropping it frees its place.
#[derive(Debug)]
pub(crate) struct Slot {
    conns: Arc<Conns>,
    pub(super) state: Arc<SlotState>,
}

impl Conns {
    /// `probe_slots`: [`PROBE_SLOTS`] beyond the cap, or 0.
    pub(crate) fn new(cap: usize, per_client: usize, probe_slots: usize, grouping: Grouping) -> Arc<Conns> {
        Conns::build(cap, per_client, probe_slots, UNSERVED_GRACE, grouping)
    }

    /// IPv6 clients by /64, and a grace of the tests' choosing.
    #[cfg(test)]
    pub(super) fn with_grace(cap: usize, per_client: usize, probe_slots: usize, grace: Duration) -> Arc<Conns> {
        Conns::build(cap, per_client, probe_slots, grace, Grouping::new(64))
    }

    fn build(cap: usize, per_client: usize, probe_slots: usize, grace: Duration, grouping: Grouping) -> Arc<Conns> {
        Arc::new(Conns {
            cap,
            per_client: per_client.min(cap).max(1),
            probe_slots,
            grouping,
            grace_ns: u64::try_from(grace.as_nanos()).unwrap_or(u64::MAX),
            inner: Mutex::new(ConnsInner::default()),
            empty: Notify::new(),
            epoch: std::time::Instant::now(),
            evicted: AtomicU64::new(0),
            refused: AtomicU64::new(0),
            accept_failed: AtomicU64::new(0),
            long_cap: (cap / LONG_CALLS_DIVISOR).max(1),
            long_per_client: (per_client.min(cap) / LONG_CALLS_DIVISOR).max(1),
        })
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, ConnsInner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Open connections now.
    pub(crate) fn open(&self) -> usize {
        self.lock().live.len()
    }

    /// A place for a new connection from `ip`: free, or taken from the connection
    /// [`ConnsInner::victim`] names (its client's own at the per-client limit);
    /// when every candidate has a request in flight, a probe slot
    /// ([`PROBE_SLOTS`]); `None` when there is none either.
    pub(super) fn admit(self: &Arc<Self>, ip: IpAddr) -> Option<Slot> {
        let now = u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX);
        let client = self.grouping.client(ip);
        let mut inner = self.lock();
        let full = if inner.clients.get(&client).copied().unwrap_or(0) >= self.per_client {
            Some(Some(client))
        } else if inner.live.len() - inner.probe_slots.len() >= self.cap {
            Some(None)
        } else {
            None
        };
        let mut probe_only = false;
        if let Some(of) = full {
            let victim = inner.victim(of, now, self.grace_ns).and_then(|id| inner.remove(id));
            let victim = match victim {
                Some(v) => Some(v),
                None => match inner.probe_slot(client, self.probe_slots, now, self.grace_ns) {
                    Some(v) => {
                        probe_only = true;
                        v
                    }
                    None => {
                        self.refused.fetch_add(1, Ordering::Relaxed);
                        return None;
                    }
                },
            };
            if let Some(victim) = victim {
                victim.evict.notify_one();
                self.evicted.fetch_add(1, Ordering::Relaxed);
            }
        }
        let id = inner.next;
        inner.next += 1;
        let state = Arc::new(SlotState {
            id,
            ip,
            client,
            admitted: now,
            served: AtomicBool::new(false),
            evict: Notify::new(),
            in_flight: AtomicU32::new(0),
            last_active: AtomicU64::new(0),
            progress: AtomicU64::new(0),
            probe_only,
            http1: AtomicBool::new(false),
            tracked: AtomicU32::new(0),
            done: Notify::new(),
            streams: std::sync::OnceLock::new(),
        });
        inner.live.insert(id, state.clone());
        if probe_only {
            inner.probe_slots.insert(id);
            *inner.probe_clients.entry(client).or_insert(0) += 1;
        } else {
            inner.waiting.insert(id);
            *inner.clients.entry(client).or_insert(0) += 1;
        }
        Some(Slot {
            conns: self.clone(),
            state,
        })
    }

    /// Connections with a response unfinished now, and those responses: a request
    /// in flight, or a tracked response (a gRPC call, a streamed body) whose last
    /// bytes are not written yet — HTTP/2 holds a body's bytes after the body has
    /// ended, until its client makes room for them.
    pub(super) fn unfinished(&self) -> (usize, usize) {
        let inner = self.lock();
        let counts = inner.live.values().map(|s| {
            let untracked = (s.in_flight.load(Ordering::Acquire)).saturating_sub(s.tracked.load(Ordering::Acquire));
            let flows = s
                .streams
                .get()
                .and_then(std::sync::Weak::upgrade)
                .map_or(0, |streams| streams.lock().1.len());
            untracked as usize + flows
        });
        counts.fold((0, 0), |(c, r), n| (c + usize::from(n > 0), r + n))
    }

    /// Until no connection has a response unfinished (checked every 20 ms).
    pub(super) async fn wait_quiet(&self) {
        while self.unfinished().0 > 0 {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }

    pub(super) async fn wait_empty(&self) {
        loop {
            let notified = self.empty.notified();
            if self.open() == 0 {
                return;
            }
            notified.await;
        }
    }
}

impl Slot {
    /// The connection sent a complete request: it is no longer evicted before the
    /// served ones, and has a request in flight until [`Active`] is dropped.
    pub(super) fn request(&self, started: std::time::Instant) -> Active {
        let s = &self.state;
        if !s.served.swap(true, Ordering::AcqRel) {
            self.conns.lock().waiting.remove(&s.id);
        }
        s.in_flight.fetch_add(1, Ordering::AcqRel);
        let since = started.saturating_duration_since(self.conns.epoch).as_nanos();
        s.last_active
            .store(u64::try_from(since).unwrap_or(u64::MAX), Ordering::Relaxed);
        s.moved();
        Active {
            state: self.state.clone(),
            tracked: false,
            _long: None,
        }
    }

    /// A place for a long-lived call ([`LONG_CALLS_DIVISOR`]) of this connection's
    /// client, held until dropped; `None`: the server's or the client's are all
    /// taken. Refused on a probe slot.
    pub(super) fn long_call(&self) -> Option<LongCall> {
        let ip = self.state.client;
        let mut inner = self.conns.lock();
        let mine = inner.long_clients.get(&ip).copied().unwrap_or(0);
        if self.state.probe_only || inner.long_calls >= self.conns.long_cap || mine >= self.conns.long_per_client {
            return None;
        }
        inner.long_calls += 1;
        *inner.long_clients.entry(ip).or_insert(0) += 1;
        Some(LongCall {
            conns: self.conns.clone(),
            ip,
        })
    }

    /// The most long-lived calls in flight: in all, and from one client address.
    pub(super) fn long_limits(&self) -> (usize, usize) {
        (self.conns.long_cap, self.conns.long_per_client)
    }
}

/// A long-lived call's place ([`Slot::long_call`]), until dropped.
#[derive(Debug)]
pub(crate) struct LongCall {
    conns: Arc<Conns>,
    ip: IpAddr,
}

impl Drop for LongCall {
    fn drop(&mut self) {
        let mut inner = self.conns.lock();
        inner.long_calls -= 1;
        if let Some(n) = inner.long_clients.get_mut(&self.ip) {
            *n -= 1;
            if *n == 0 {
                inner.long_clients.remove(&self.ip);
            }
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut inner = self.conns.lock();
        if inner.remove(self.state.id).is_some() && inner.live.is_empty() {
            self.conns.empty.notify_waiters();
        }
    }
}

/// A request in flight on its connection (see [`Slot::request`]), until dropped;
/// and a long-lived call's place, when it is one.
#[derive(Debug)]
pub(crate) struct Active {
    state: Arc<SlotState>,
    tracked: bool,
    _long: Option<LongCall>,
}

impl Active {
    /// Its response is tracked: its flow says when it is finished.
    pub(super) fn tracked(&mut self) {
        if !std::mem::replace(&mut self.tracked, true) {
            self.state.tracked.fetch_add(1, Ordering::AcqRel);
        }
    }

    /// It holds `long` until it ends.
    pub(super) fn hold(&mut self, long: LongCall) {
        self._long = Some(long);
    }
}

impl Drop for Active {
    fn drop(&mut self) {
        if self.tracked {
            self.state.tracked.fetch_sub(1, Ordering::AcqRel);
        }
        self.state.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::super::bodies::Tracked;
    use super::*;
    use crate::budget::{MIN_TAKEN, Shares, Streams};
    use axum::body::Body;
    use std::pin::Pin;

    fn ip(n: u8) -> IpAddr {
        IpAddr::from([127, 0, 0, n])
    }

    fn open(conns: &Conns, slot: &Slot) -> bool {
        conns.lock().live.contains_key(&slot.state.id)
    }

    #[tokio::test]
    async fn a_frame_holds_its_reservation_until_written_and_waits_for_its_client() {
        use hyper::body::{Body as _, Buf as _};
        let conns = Conns::with_grace(1, 1, 0, Duration::ZERO);
        let slot = conns.admit(ip(1)).unwrap();
        let all = 1 << 20;
        let total = Arc::new(tokio::sync::Semaphore::new(all));
        let shares = Arc::new(Shares::new(all));
        let streams = Arc::new(Streams::new(
            all,
            total.clone(),
            shares,
            Duration::from_secs(1),
            slot.state.ip,
            slot.state.clone(),
        ));
        let flow = streams.open(None);
        let r = flow.reserve(100_000).await.unwrap();
        flow.made(r);
        let mut body = Tracked {
            inner: Body::from(vec![7u8; 3 * MIN_TAKEN]),
            flow,
            rest: None,
            rpc: None,
            _active: None,
        };
        let mut pieces = Vec::new();
        while let Some(frame) = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {
            pieces.push(frame.unwrap().into_data().unwrap());
        }
        assert_eq!(pieces.iter().map(|p| p.len()).collect::<Vec<_>>(), [MIN_TAKEN; 3]);
        // The body is done; HTTP/2 still holds the pieces, and they the frame's room.
        drop(body);
        assert_eq!(total.available_permits(), all - 100_000);
        assert_eq!(streams.longest_wait(), Duration::ZERO, "a wait starts when first seen");
        std::thread::sleep(Duration::from_millis(20));
        assert!(streams.longest_wait() >= Duration::from_millis(20));
        // A part of a piece written is not progress; a piece written (MIN_TAKEN) is.
        let mut first = pieces.remove(0);
        first.advance(MIN_TAKEN - 1);
        assert!(streams.longest_wait() >= Duration::from_millis(20));
        drop(first);
        assert_eq!(streams.longest_wait(), Duration::ZERO);
        assert_eq!(total.available_permits(), all - 100_000);
        // All written (or dropped with their stream): the room is given back.
        drop(pieces);
        assert_eq!(total.available_permits(), all);
        assert_eq!(streams.longest_wait(), Duration::ZERO);
        assert!(streams.lock().1.is_empty());
    }

    #[test]
    fn at_the_cap_the_unserved_go_first_then_the_idle_served_longest_ago() {
        let conns = Conns::with_grace(3, 3, 0, Duration::ZERO);
        let t = std::time::Instant::now();
        let a = conns.admit(ip(1)).unwrap();
        let b = conns.admit(ip(1)).unwrap();
        let c = conns.admit(ip(1)).unwrap();
        drop(a.request(t + Duration::from_millis(1)));
        let _in_flight = b.request(t);
        drop(c.request(t + Duration::from_millis(2)));
        // Every one served: the idle one whose last request is oldest goes.
        let d = conns.admit(ip(2)).unwrap();
        assert!(!open(&conns, &a) && open(&conns, &b) && open(&conns, &c));
        // An unserved one goes before any served one.
        let e = conns.admit(ip(2)).unwrap();
        assert!(!open(&conns, &d) && open(&conns, &c) && open(&conns, &e));
        let _e_busy = e.request(t);
        let _c_busy = c.request(t);
        // Every one has a request in flight: the new one is refused.
        assert!(conns.admit(ip(3)).is_none());
        assert_eq!(conns.evicted.load(Ordering::Relaxed), 2);
        assert_eq!(conns.refused.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn when_every_slot_is_in_flight_the_probe_slots_take_newcomers() {
        let conns = Conns::with_grace(2, 2, 3, Duration::from_millis(20));
        let t = std::time::Instant::now();
        let a = conns.admit(ip(1)).unwrap();
        let b = conns.admit(ip(2)).unwrap();
        let (_a, _b) = (a.request(t), b.request(t));
        // Both busy: newcomers get probe slots.
        let p1 = conns.admit(ip(3)).unwrap();
        let p2 = conns.admit(ip(3)).unwrap();
        let p3 = conns.admit(ip(4)).unwrap();
        assert!(p1.state.probe_only && p2.state.probe_only && p3.state.probe_only);
        assert!(!a.state.probe_only);
        // Full, and every one in them younger than the grace: refused.
        assert!(conns.admit(ip(5)).is_none());
        // A probe slot held past the grace goes to a newcomer (a probe is answered
        // in milliseconds), the oldest first, whatever it does.
        let _p3_busy = p3.request(t);
        std::thread::sleep(Duration::from_millis(40));
        let p4 = conns.admit(ip(5)).unwrap();
        assert!(p4.state.probe_only && !open(&conns, &p1) && open(&conns, &p2));
        drop((p1, p2, p3, p4));
        assert_eq!(conns.open(), 2);
        let inner = conns.lock();
        assert!(inner.probe_slots.is_empty() && inner.probe_clients.is_empty());
        assert_eq!(inner.clients.len(), 2);
    }

    #[test]
    fn long_lived_calls_take_half_the_slots_and_none_of_the_probe_slots() {
        use crate::metrics::Route;
        let long: Vec<&str> = [
            "/flakeid.v1.Flakeid/Stream",
            "/grpc.health.v1.Health/Watch",
            "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
            "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
        ]
        .into();
        for path in [
            "/v1/id",
            "/v1/ids",
            "/healthz",
            "/flakeid.v1.Flakeid/Batch",
            "/grpc.health.v1.Health/Check",
        ] {
            assert!(!Route::of(path).is_long_lived(), "{path}");
        }
        assert!(long.iter().all(|p| Route::of(p).is_long_lived()));
        // 8 slots (4 per address): 4 long calls at most, 2 from one address.
        let conns = Conns::with_grace(8, 4, 2, Duration::ZERO);
        let a = conns.admit(ip(1)).unwrap();
        let b = conns.admit(ip(2)).unwrap();
        let c = conns.admit(ip(3)).unwrap();
        let (a1, a2) = (a.long_call().unwrap(), a.long_call().unwrap());
        assert!(a.long_call().is_none(), "one address past its half");
        let b2 = (b.long_call().unwrap(), b.long_call().unwrap());
        assert!(c.long_call().is_none(), "the server past its half");
        drop(a1);
        let c1 = c.long_call().unwrap();
        assert!(a.long_call().is_none());
        drop((a2, c1));
        assert!(a.long_call().is_some());
        // A probe slot takes none.
        let t = std::time::Instant::now();
        let busy: Vec<_> = (0..8)
            .map(|i| conns.admit(ip(10 + i)).map(|s| (s.request(t), s)))
            .collect();
        let probe = conns.admit(ip(30)).unwrap();
        assert!(probe.state.probe_only && probe.long_call().is_none());
        drop((busy, b2));
        assert_eq!(conns.lock().long_calls, 0);
        assert!(conns.lock().long_clients.is_empty());
    }

    #[test]
    fn one_address_is_held_to_its_limit_by_its_own_connections() {
        let conns = Conns::with_grace(10, 2, 0, Duration::ZERO);
        let t = std::time::Instant::now();
        let a = conns.admit(ip(1)).unwrap();
        let b = conns.admit(ip(1)).unwrap();
        let other = conns.admit(ip(2)).unwrap();
        let (_a, _b) = (a.request(t), b.request(t));
        // Its two are busy: refused, though the server has room; others get in.
        assert!(conns.admit(ip(1)).is_none());
        assert!(conns.admit(ip(3)).is_some());
        drop(_a);
        // One of its own is idle: that one makes room, not another client's.
        let c = conns.admit(ip(1)).unwrap();
        assert!(!open(&conns, &a) && open(&conns, &other) && open(&conns, &c));
        assert_eq!(conns.lock().clients[&ip(1)], 2);
    }

    #[test]
    fn at_the_cap_the_client_holding_the_most_connections_gives_one_up() {
        let conns = Conns::with_grace(5, 5, 0, Duration::from_secs(3600));
        let t = std::time::Instant::now();
        // Two keep-alive clients, served and idle between requests.
        let k1 = conns.admit(ip(1)).unwrap();
        let k2 = conns.admit(ip(2)).unwrap();
        drop((k1.request(t), k2.request(t)));
        // A client that connects and says nothing (within its grace), again and again:
        // each newcomer closes one of its own, never a keep-alive client's.
        let mut churn: Vec<_> = (0..3).map(|_| conns.admit(ip(3)).unwrap()).collect();
        for _ in 0..10 {
            churn.push(conns.admit(ip(3)).unwrap());
            assert!(open(&conns, &k1) && open(&conns, &k2));
        }
        assert!(!open(&conns, &churn[0]) && open(&conns, &churn[12]));
        // A newcomer from another address closes the churner's too.
        let other = conns.admit(ip(4)).unwrap();
        assert!(open(&conns, &k1) && open(&conns, &k2) && open(&conns, &other));
        // Each holding one: the new ones go before the served ones in use, oldest
        // first.
        drop(churn);
        let probe = conns.admit(ip(5)).unwrap();
        let newcomers: Vec<_> = (6..9).map(|i| conns.admit(ip(i)).unwrap()).collect();
        assert!(open(&conns, &k1) && open(&conns, &k2) && !open(&conns, &other) && !open(&conns, &probe));
        assert!(newcomers.iter().all(|c| open(&conns, c)));
        assert_eq!(conns.evicted.load(Ordering::Relaxed), 13);
    }

    #[test]
    fn an_ipv6_prefix_is_one_client_for_the_connection_limits() {
        let conns = Conns::build(100, 2, 0, Duration::ZERO, Grouping::new(64));
        let v6 = |s: &str| s.parse::<IpAddr>().unwrap();
        let t = std::time::Instant::now();
        let a = conns.admit(v6("2001:db8:0:1::a")).unwrap();
        let b = conns.admit(v6("2001:db8:0:1::b")).unwrap();
        let (_a, _b) = (a.request(t), b.request(t));
        // A third address of the same /64 is the same client, at its limit.
        assert!(conns.admit(v6("2001:db8:0:1:ffff::c")).is_none());
        // Another /64 is another client; an IPv4 client seen through a dual-stack
        // listener is its IPv4 address.
        assert!(conns.admit(v6("2001:db8:0:2::a")).is_some());
        let mapped = conns.admit(v6("::ffff:10.0.0.1")).unwrap();
        let _mapped = mapped.request(t);
        let v4 = conns.admit(IpAddr::from([10, 0, 0, 1])).unwrap();
        let _v4 = v4.request(t);
        assert!(conns.admit(IpAddr::from([10, 0, 0, 1])).is_none());
        // /128: each address is its own client.
        let conns = Conns::build(100, 1, 0, Duration::ZERO, Grouping::new(128));
        let a = conns.admit(v6("2001:db8:0:1::a")).unwrap();
        let _a = a.request(t);
        assert!(conns.admit(v6("2001:db8:0:1::b")).is_some());
    }

    #[test]
    fn the_client_holding_more_gives_one_up_before_another_clients_stale_one() {
        let grace = Duration::from_secs(1);
        let g = u64::try_from(grace.as_nanos()).unwrap();
        let conns = Conns::with_grace(10, 10, 0, grace);
        // A keep-alive client between requests, its last one long ago.
        let idle = conns.admit(ip(1)).unwrap();
        drop(idle.request(conns.epoch));
        // Another client's two new connections, within their grace.
        let churn = [conns.admit(ip(2)).unwrap(), conns.admit(ip(2)).unwrap()];
        let now = churn[0].state.admitted + g - 1;
        assert!(now >= g, "the keep-alive one is stale at `now`");
        assert_eq!(conns.lock().victim(None, now, g), Some(churn[0].state.id));
    }

    #[test]
    fn of_clients_holding_as_many_a_stale_served_one_goes_then_a_new_one_then_one_in_use() {
        let grace = Duration::from_secs(1);
        let g = u64::try_from(grace.as_nanos()).unwrap();
        let conns = Conns::with_grace(10, 10, 0, grace);
        let served = conns.admit(ip(1)).unwrap();
        drop(served.request(conns.epoch));
        let fresh = conns.admit(ip(2)).unwrap();
        let inner = conns.lock();
        // At `now`, the fresh one is within its grace by a nanosecond (it was
        // accepted after the epoch).
        let now = fresh.state.admitted + g - 1;
        assert!(fresh.state.admitted > 0);
        // The served one's last request started at the epoch: the grace ago or more.
        assert_eq!(inner.victim(None, now, g), Some(served.state.id));
        // Its last request started within the grace: in use; the fresh one goes.
        served.state.last_active.store(fresh.state.admitted, Ordering::Relaxed);
        assert_eq!(inner.victim(None, now, g), Some(fresh.state.id));
        // The fresh one past its grace goes first whatever the others do.
        assert_eq!(inner.victim(None, now + 1, g), Some(fresh.state.id));
    }
}
