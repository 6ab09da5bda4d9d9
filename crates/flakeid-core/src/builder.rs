//! Configuring a generator: the typed setters, the by-name path every binding
//! uses ([`GeneratorBuilder::set`]), and `build`, which checks every option against
//! the layout, takes a lease or state file if asked, and assembles the generator.

use crate::clock_policy::{ClockPolicy, clock_setters};
use crate::counter::{CounterStorage, OwnCounter, Padded, SharedCounter};
use crate::error::{Error, Result};
use crate::fork;
use crate::generator::{ClockRef, Generator, Guards, MAX_HANDLE_RUN, MAX_RUN, Runs};
use crate::layout::Layout;
#[cfg(feature = "lease")]
use crate::lease::{self, DEFAULT_LEASE_TTL_MS, LeaseGuard, LeaseSpec};
#[cfg(feature = "std")]
use crate::node_id::NodeSource;
use crate::node_origin::{self, Asked, Given, NodeOrigin, Surroundings};
use crate::options::{self, GENERATOR_OPTIONS, OptionValue, generator_option};
use crate::policy::{ClockBackwards, Overflow};
use crate::stats::Counters;
use crate::sync::AtomicU64;
use crate::sync::PlainAtomicU64;
use alloc::string::{String, ToString};
use alloc::sync::Arc;
use core::sync::atomic::Ordering;

/// Identifies generators in the per-thread table of runs; never reused.
static NEXT_UID: PlainAtomicU64 = PlainAtomicU64::new(1);

#[derive(Debug, Clone)]
enum NodeChoice {
    Unset,
    Node(u64),
    Parts {
        datacenter: Option<u64>,
        worker: Option<u64>,
    },
    #[cfg(feature = "std")]
    Source(NodeSource),
    /// A lease URL, parsed at build time (so the builder stays infallible).
    #[cfg_attr(not(feature = "lease"), allow(dead_code))]
    LeaseUrl(String),
    #[cfg(feature = "lease")]
    Lease(LeaseSpec),
    Conflict(&'static str),
}

/// Configures a [`Generator`]; see [`Generator::builder`].
#[derive(Debug, Clone)]
///
/// ```
/// use flakeid_core::{ClockBackwards, Generator, Layout, Overflow};
///
/// let ids = Generator::builder(Layout::SNOWFLAKE)
///     .datacenter(2)
///     .worker(2)
///     .overflow(Overflow::Borrow) // run up to max_borrow_ms ahead instead of waiting
///     .clock_backwards(ClockBackwards::Wait)
///     .build()?;
/// assert_eq!(ids.node(), 2 << 5 | 2);
/// # Ok::<(), flakeid_core::Error>(())
/// ```
pub struct GeneratorBuilder {
    layout: Layout,
    node: NodeChoice,
    policy: ClockPolicy,
    /// The time source; the system clock when `None`.
    clock: Option<alloc::sync::Arc<dyn crate::clock::Clock>>,
    resume_after_ms: Option<u64>,
    max_sequence: Option<u64>,
    lease_ttl_ms: Option<u64>,
    state: Option<String>,
    require_node: bool,
    single_instance: bool,
    host_guard: bool,
    forks_continue: bool,
}

impl GeneratorBuilder {
    /// The whole node id (`datacenter << worker_bits | worker`).
    pub fn node(mut self, node: u64) -> Self {
        self.node = match self.node {
            NodeChoice::Unset | NodeChoice::Node(_) => NodeChoice::Node(node),
            _ => NodeChoice::Conflict("node"),
        };
        self
    }
    /// The datacenter id (layouts with a datacenter field); with [`worker`](Self::worker), instead of [`node`](Self::node).
    pub fn datacenter(mut self, datacenter: u64) -> Self {
        self.node = match self.node {
            NodeChoice::Unset => NodeChoice::Parts {
                datacenter: Some(datacenter),
                worker: None,
            },
            NodeChoice::Parts { worker, .. } => NodeChoice::Parts {
                datacenter: Some(datacenter),
                worker,
            },
            _ => NodeChoice::Conflict("datacenter"),
        };
        self
    }
    /// The worker id; with [`datacenter`](Self::datacenter), instead of [`node`](Self::node).
    pub fn worker(mut self, worker: u64) -> Self {
        self.node = match self.node {
            NodeChoice::Unset => NodeChoice::Parts {
                datacenter: None,
                worker: Some(worker),
            },
            NodeChoice::Parts { datacenter, .. } => NodeChoice::Parts {
                datacenter,
                worker: Some(worker),
            },
            _ => NodeChoice::Conflict("worker"),
        };
        self
    }
    /// Take the node id from an environment variable, the host name, the MAC or IP.
    #[cfg(feature = "std")]
    pub fn node_source(mut self, source: NodeSource) -> Self {
        self.node = match self.node {
            NodeChoice::Unset => NodeChoice::Source(source),
            _ => NodeChoice::Conflict("node"),
        };
        self
    }
    /// Lease the node id from a store: `file:///dir`, `redis[s]://host:port/db`,
    /// `postgres://user:password@host:port/dbname`, `etcd[s]://host:2379[,host2:2379]/`,
    /// each with an optional `?namespace=NAME` (TLS parameters: docs/leases.md). The generator takes the lowest free id of the layout's
    /// node range, renews it in the background, releases it when dropped, and
    /// refuses IDs ([`Error::Lease`]) once the lease may have expired. See
    /// `LeaseSpec` and `docs/leases.md`. Needs the cargo feature `lease` (and a
    /// backend feature); without it, `build()` refuses with a config error.
    pub fn lease_url(mut self, url: &str) -> Self {
        self.node = match self.node {
            NodeChoice::Unset => NodeChoice::LeaseUrl(url.to_string()),
            _ => NodeChoice::Conflict("lease"),
        };
        self
    }
    /// Lease the node id as [`lease_url`](Self::lease_url) does, from a parsed
    /// [`LeaseSpec`] (or a custom store, [`LeaseSpec::custom`]).
    #[cfg(feature = "lease")]
    pub fn lease(mut self, spec: LeaseSpec) -> Self {
        self.node = match self.node {
            NodeChoice::Unset => NodeChoice::Lease(spec),
            _ => NodeChoice::Conflict("lease"),
        };
        self
    }
    /// Refuse to build without a node source (`node`, `worker`, `node_source` or a
    /// lease) instead of taking one from the platform's coordinator or a free one on
    /// this host. A library generator takes one (processes on one host never share
    /// it); a process that may run as one replica of several across hosts (the ID
    /// service, a database server) must not: replicas on two hosts may pick the
    /// same. `FLAKEID_REQUIRE_NODE=true` turns it on for every build of the process.
    pub fn require_node(mut self) -> Self {
        self.require_node = true;
        self
    }
    /// Declares this process the only instance of its app, so that with no node id
    /// it takes a free one on this host even in a container, whose `/tmp` (the
    /// host guard's directory) its replicas would not share
    /// (`FLAKEID_SINGLE_INSTANCE=true` does the same for every build).
    pub fn single_instance(mut self, on: bool) -> Self {
        self.single_instance = on;
        self
    }
    /// The lease's time-to-live (`DEFAULT_LEASE_TTL_MS`, 10 s, when not set): it is
    /// renewed every third of it, and IDs stop a fifth of it before it can expire.
    pub fn lease_ttl_ms(mut self, ms: u64) -> Self {
        self.lease_ttl_ms = Some(ms);
        self
    }
    /// Keep a high-water timestamp in the file `path` across restarts, for a fixed
    /// node id (docs/state.md): at build the generator starts after the file's mark
    /// (a clock behind it meets the `clock_backwards` policy, as a rollback in one
    /// process would), and while it runs a background thread keeps the file ahead of
    /// every ID (write, fsync, rename), locked against a second process. A missing
    /// file is a fresh start; an unreadable or corrupt one is a config error naming
    /// `state`. Not with a lease (which keeps its own mark). Needs the cargo feature
    /// `lease` on unix or Windows.
    pub fn state(mut self, path: &str) -> Self {
        self.state = Some(path.to_string());
        self
    }
    clock_setters!();

    /// IDs up to and including this Unix-ms time were already issued under this
    /// node id (by an earlier holder): start after it. A clock behind it is then
    /// handled by the `clock_backwards` policy like any rollback.
    pub fn resume_after_ms(mut self, unix_ms: u64) -> Self {
        self.resume_after_ms = Some(unix_ms);
        self
    }
    /// Issue at most `max_sequence + 1` IDs per tick (sequence `0..=max_sequence`),
    /// like flake-idgen's `seqMask`: `max_sequence + 1` must be a power of two no
    /// larger than the layout's sequence field allows. The ID layout is unchanged.
    pub fn max_sequence(mut self, max_sequence: u64) -> Self {
        self.max_sequence = Some(max_sequence);
        self
    }

    /// Whether the node id's host guard is taken (default: yes): while a generator
    /// of this process lives on the node id, no other process on this host can
    /// build one on it, and the next process that does starts above this one's
    /// IDs. Off, the generator still shares its node id's counter with every
    /// generator of this process on it (the in-process rule), and a build with no
    /// node id or lease is refused: nothing would keep two processes apart. Turn it
    /// off only where something else keeps processes apart (for every binding,
    /// `FLAKEID_HOST_GUARD=off` does the same). See docs/design.md, "Who owns a
    /// node id".
    pub fn host_guard(mut self, on: bool) -> Self {
        self.host_guard = on;
        self
    }

    /// A generator whose IDs need no node id (the 128-bit one's engine) goes on in
    /// a forked child instead of refusing; `Stats::reseeds` counts the children.
    #[cfg_attr(not(feature = "uuid7"), allow(dead_code))]
    pub(crate) fn forks_continue(mut self) -> Self {
        self.forks_continue = true;
        self
    }

    /// Every clock policy and the clock at once (the 128-bit generator's builder
    /// hands its own).
    #[cfg_attr(not(feature = "uuid7"), allow(dead_code))]
    pub(crate) fn clock_policy(
        mut self,
        policy: ClockPolicy,
        clock: Option<alloc::sync::Arc<dyn crate::clock::Clock>>,
    ) -> Self {
        self.policy = policy;
        self.clock = clock;
        self
    }

    /// Sets the option `name` (snake_case, camelCase or flag spelling; see
    /// [`GENERATOR_OPTIONS`](crate::GENERATOR_OPTIONS)) from a binding's converted
    /// value: the one path by which bindings whose options arrive by name (the CLI,
    /// GUCs, C strings) set them. A value of the wrong type, or an option nobody
    /// reads, is a config error naming it; ranges are checked by `build`.
    pub fn set(mut self, name: &str, value: OptionValue<'_>) -> Result<Self> {
        let Some(option) = generator_option(name) else {
            return Err(options::unknown_option(name, &options::NAMES));
        };
        if let Some(set) = self.policy.set(option.name, value) {
            set?;
            return Ok(self);
        }
        use OptionValue::{Text, Uint};
        Ok(match (option.name, value) {
            ("datacenter", Uint(v)) => self.datacenter(v),
            ("worker", Uint(v)) => self.worker(v),
            ("node", Uint(v)) => self.node(v),
            #[cfg(feature = "std")]
            ("node", Text(s)) => match s.parse::<NodeSource>()? {
                NodeSource::Explicit(n) => self.node(n),
                source => self.node_source(source),
            },
            ("layout", Text(s)) => {
                self.layout = Layout::preset(s)?;
                self
            }
            ("lease", Text(s)) => self.lease_url(s),
            ("lease_ttl_ms", Uint(v)) => self.lease_ttl_ms(v),
            ("max_sequence", Uint(v)) => self.max_sequence(v),
            ("state", Text(s)) => self.state(s),
            ("require_node", Uint(v @ (0 | 1))) => Self {
                require_node: v == 1,
                ..self
            },
            ("single_instance", Uint(v @ (0 | 1))) => self.single_instance(v == 1),
            ("require_node" | "single_instance", Text(s)) => return self.set_text(option.name, s),
            _ => return Err(options::wrong_value(option, value)),
        })
    }

    /// [`set`](Self::set) from text: a whole number for numeric options.
    pub fn set_text(self, name: &str, text: &str) -> Result<Self> {
        let Some(option) = generator_option(name) else {
            return Err(options::unknown_option(name, &options::NAMES));
        };
        let value = options::option_value(option, text)?;
        self.set(option.name, value)
    }

    /// The value of a numeric option, where it is set.
    fn uint_option(&self, name: &str) -> Option<u64> {
        match name {
            "max_borrow_ms" => Some(self.policy.max_borrow_ms),
            "max_wait_ms" => Some(self.policy.max_wait_ms),
            "lease_ttl_ms" => self.lease_ttl_ms,
            _ => None,
        }
    }

    fn is_set(&self, name: &str) -> bool {
        match name {
            "lease" => match &self.node {
                NodeChoice::LeaseUrl(_) | NodeChoice::Conflict("lease") => true,
                #[cfg(feature = "lease")]
                NodeChoice::Lease(_) => true,
                _ => false,
            },
            _ => self.uint_option(name).is_some(),
        }
    }

    /// The table's static rules (crate::options): requirements, then ranges. What
    /// depends on the layout (node ids, `max_sequence`) is checked where it is used.
    fn check_options(&self) -> Result<()> {
        for option in &GENERATOR_OPTIONS {
            let Some(v) = self.uint_option(option.name) else {
                continue;
            };
            if let Some(needed) = option.requires
                && !self.is_set(needed)
            {
                return Err(Error::config(
                    option.name,
                    format!(
                        "{} is set but {needed} is not: {} means nothing without {needed}",
                        option.name, option.name
                    ),
                ));
            }
            if !(option.min..=option.max).contains(&v) {
                return Err(Error::out_of_range(option.name, option.min, option.max, v));
            }
        }
        Ok(())
    }

    /// Checks every option against the layout and builds the generator (with a
    /// lease: takes one, which may wait out the lock delay). On the system clock
    /// without a lease it issues from this process's counter of its node id, shared
    /// with every other generator built here on that node id and layout; with no
    /// node id given it takes the one this process already has for the layout, or a
    /// free one on this host (docs/design.md, "Who owns a node id").
    pub fn build(self) -> Result<Generator> {
        self.build_with(true, |initial, shared| match shared {
            Some(counter) => {
                counter.0.fetch_max(initial, Ordering::AcqRel);
                OwnCounter(counter.clone())
            }
            None => OwnCounter(Arc::new(Padded::new(initial))),
        })
    }

    /// Builds a generator whose whole state — the next free `(tick, sequence)`
    /// slot — is `counter` instead of a word inside the generator: every generator
    /// built over the same word (threads, or processes mapping one shared-memory
    /// segment, as the PostgreSQL extension does) draws from one sequence, so
    /// together they never repeat an ID and each stays increasing. They must all use
    /// the same layout, node id and `max_sequence`; the word starts at 0 (or at a
    /// value one of them left). The protocol is lock-free, so it works across
    /// processes. A separate type, so the default generator pays nothing for it.
    pub fn build_shared(self, counter: &'static AtomicU64) -> Result<Generator<SharedCounter>> {
        // No host guard: generators over one shared word are one sequence by design
        // (the PostgreSQL extension's backends); whoever shares the word guards it.
        self.build_with(false, |initial, _| {
            // Others may be issuing from it already: only ever move it forward.
            counter.fetch_max(initial, Ordering::AcqRel);
            SharedCounter(counter)
        })
    }

    /// Builds over the counter `storage` makes from the counter's first value and,
    /// for a generator of this process's counter of its node id (`own`), that
    /// counter.
    fn build_with<C: CounterStorage>(
        self,
        own: bool,
        storage: impl FnOnce(u64, Option<&Arc<Padded>>) -> C,
    ) -> Result<Generator<C>> {
        let layout = self.layout;
        let Plan { origin, node, lease } = self.plan(own)?;
        // The counter counts the layout's sequence; `max_sequence` caps what a call
        // of this generator takes in a tick.
        let sb = layout.sequence_bits();
        let seq_cap = (1u64 << layout.counter_sequence_bits(self.max_sequence)?) - 1;
        let ahead = match self.policy.overflow {
            Overflow::Wait => 0,
            Overflow::Borrow => self.policy.max_borrow_ms / layout.tick_ms(),
        };
        #[cfg(host_guard)]
        let (share, node, resume_after_ms) = self.share_owner(own, origin, node, ahead)?;
        #[cfg(not(host_guard))]
        let resume_after_ms = self.resume_after_ms;
        let hold = self.hold(&lease, node, resume_after_ms, ahead * layout.tick_ms())?;
        // Monotonic keeps issuing in its last tick while the clock is behind. After a
        // state file's mark that is the tick after the mark (the file's fences cover
        // it): its first slot counts as issued, so the counter's last tick is that one.
        let monotonic = hold.after_state_mark && self.policy.clock_backwards == ClockBackwards::Monotonic;
        let initial = initial_counter(&layout, sb, hold.resume_after_ms, monotonic)?;
        let slots = layout.slots(hold.node, seq_cap, ahead);
        fork::register();
        #[cfg(host_guard)]
        let shared = share.as_ref().map(|s| &s.owner.counter);
        #[cfg(not(host_guard))]
        let shared = None;
        let state = storage(initial, shared);
        // Another generator on the counter may have moved it past `initial`.
        let initial = state.get().load(Ordering::Acquire);
        let clock = match self.clock {
            Some(c) => ClockRef::Custom(c),
            #[cfg(feature = "std")]
            None => ClockRef::System,
            #[cfg(not(feature = "std"))]
            None => return Err(node_origin::no_clock()),
        };
        Ok(Generator {
            state,
            slots,
            runs: Runs {
                uid: NEXT_UID.fetch_add(1, Ordering::Relaxed),
                // No thread-locals without std: no lone runs.
                lone: cfg!(feature = "std") && !self.forks_continue,
                run: MAX_RUN.min((seq_cap + 1) / 16).max(2),
                handle_run: MAX_HANDLE_RUN.min((seq_cap + 1) / 4).max(2),
                contended: PlainAtomicU64::new(0),
            },
            counters: Counters::new(initial.saturating_sub(1) >> sb),
            initial,
            clock,
            fork_generation: PlainAtomicU64::new(fork::generation()),
            layout,
            origin,
            policy: self.policy,
            guards: Guards {
                #[cfg(feature = "lease")]
                lease_gate: hold.lease.as_ref().map(LeaseGuard::gate),
                #[cfg(feature = "lease")]
                lease: hold.lease,
                #[cfg(host_guard)]
                owner: share.map(crate::owner::Share::keep),
                #[cfg(host_guard)]
                left: core::sync::atomic::AtomicBool::new(false),
            },
        })
    }

    /// Runs every check `build` runs before it takes anything (a lease, a state
    /// file, a node id on this host, the host guard), and returns the node id's
    /// origin: the bindings' and adapters' check of options at start-up, in a
    /// process that may fork its workers afterwards.
    ///
    /// ```
    /// use flakeid_core::{Generator, Layout, NodeOrigin};
    /// let b = Generator::builder(Layout::SNOWFLAKE).node(3);
    /// assert_eq!(b.check()?, NodeOrigin::Explicit);
    /// assert!(Generator::builder(Layout::SNOWFLAKE).worker(32).check().is_err());
    /// # Ok::<(), flakeid_core::Error>(())
    /// ```
    pub fn check(&self) -> Result<NodeOrigin> {
        self.plan(true).map(|plan| plan.origin)
    }

    /// What a build is to do, every option checked: the node id's origin, the node
    /// id given (0 when a lease or the host will choose it) and the lease to take.
    fn plan(&self, own: bool) -> Result<Plan> {
        self.check_options()?;
        self.check_state_file()?;
        let lease = self.lease_choice()?;
        let node = self.given_node()?;
        self.layout.counter_sequence_bits(self.max_sequence)?;
        let asked = self.asked();
        let around = match asked.given {
            // Without std the surroundings cannot be read: nothing is known of them,
            // so a generator with no node id given is refused.
            #[cfg(feature = "std")]
            Given::Nothing if asked.needs_node => Surroundings::read()?,
            _ => Surroundings::default(),
        };
        let origin = node_origin::decide(&asked, &around)?;
        // A host pick is this process's counter of a node id the guard keeps: the
        // host's clock, one counter per node id.
        if origin == NodeOrigin::Host && self.clock.is_some() {
            return Err(node_origin::on_injected_clock());
        }
        if origin == NodeOrigin::Host && !own {
            return Err(Error::config(
                "node",
                "no node id given for a generator over a shared counter: give the node id its sharers agree on",
            ));
        }
        let lease = match origin {
            NodeOrigin::Coordinator => coordinator()?,
            _ => lease,
        };
        #[cfg(feature = "lease")]
        if lease.is_some() {
            lease::LeaseTiming::for_ttl(self.lease_ttl_ms.unwrap_or(DEFAULT_LEASE_TTL_MS))?;
        }
        Ok(Plan { origin, node, lease })
    }

    /// The decision's inputs from this builder.
    fn asked(&self) -> Asked {
        Asked {
            given: match self.node {
                NodeChoice::Unset => Given::Nothing,
                NodeChoice::LeaseUrl(_) => Given::Lease,
                #[cfg(feature = "lease")]
                NodeChoice::Lease(_) => Given::Lease,
                _ => Given::NodeId,
            },
            needs_node: !self.forks_continue,
            require_node: self.require_node,
            single_instance: self.single_instance,
            host_guard: self.host_guard,
        }
    }

    /// A state file is refused beside a lease (which keeps the last timestamp in its
    /// store already), and in builds without files.
    fn check_state_file(&self) -> Result<()> {
        if self.state.is_some() && self.is_set("lease") {
            return Err(Error::config(
                "state",
                "give either state or lease, not both: a lease already keeps the last timestamp of its node id in \
                 its store",
            ));
        }
        #[cfg(not(all(feature = "lease", any(unix, windows))))]
        if self.state.is_some() {
            return Err(Error::config(
                "state",
                "state files are not in this build of flakeid (they need files and file locks, unix or Windows: cargo feature \
                 \"lease\" of flakeid-core; the WebAssembly package has no files)",
            ));
        }
        Ok(())
    }

    /// The lease to take, its URL parsed (a bad URL fails here, before anything is held).
    #[cfg(feature = "lease")]
    fn lease_choice(&self) -> Result<LeaseChoice> {
        Ok(match &self.node {
            NodeChoice::LeaseUrl(url) => Some(LeaseSpec::parse(url)?),
            NodeChoice::Lease(spec) => Some(spec.clone()),
            _ => None,
        })
    }

    /// Without the lease feature a lease URL is refused.
    #[cfg(not(feature = "lease"))]
    fn lease_choice(&self) -> Result<LeaseChoice> {
        match &self.node {
            NodeChoice::LeaseUrl(_) => Err(Error::config(
                "lease",
                "leases are not compiled into this build of flakeid (cargo feature \"lease\" of flakeid-core)",
            )),
            _ => Ok(NoLease),
        }
    }

    /// The node id given (0 when a lease will choose it), checked against the layout;
    /// none at all is refused when `require_node` is on.
    fn given_node(&self) -> Result<u64> {
        let layout = &self.layout;
        Ok(match &self.node {
            // A datacenter alone is no node id either (with none at all, the origin's decision refuses).
            // An out-of-range datacenter is named as such first.
            NodeChoice::Parts {
                datacenter,
                worker: None,
            } if self.require_node => {
                layout.node_of(datacenter.unwrap_or(0), 0)?;
                return Err(node_origin::required());
            }
            NodeChoice::Unset => 0,
            NodeChoice::Node(n) => {
                layout.check_node(*n)?;
                *n
            }
            NodeChoice::Parts { datacenter, worker } => layout.node_of(datacenter.unwrap_or(0), worker.unwrap_or(0))?,
            #[cfg(feature = "std")]
            NodeChoice::Source(src) => src.resolve(layout)?,
            NodeChoice::LeaseUrl(_) => 0,
            #[cfg(feature = "lease")]
            NodeChoice::Lease(_) => 0,
            NodeChoice::Conflict("lease") => {
                return Err(Error::config(
                    "lease",
                    "give either a lease or a node id (node, datacenter + worker, node source), not both",
                ));
            }
            NodeChoice::Conflict(field) => {
                return Err(Error::config(
                    field,
                    "give either node or datacenter + worker, not both",
                ));
            }
        })
    }

    /// A generator whose node id is given or picked on the host issues from this
    /// process's counter of its node id (crate::owner), and the process holds the
    /// node id's host guard meanwhile; on an injected clock it issues a test's IDs,
    /// whose ticks are not the host's, from a counter of its own. A leased one is
    /// kept by its lease, and the 128-bit engine needs no node id. The previous owner of the node id on the host may have
    /// issued up to a floor: the counter starts after it, waited out here as far
    /// as this generator cannot borrow past it. Returns the share, the node id and
    /// where the counter resumes.
    #[cfg(host_guard)]
    fn share_owner(
        &self,
        own: bool,
        origin: NodeOrigin,
        node: u64,
        ahead: u64,
    ) -> Result<(Option<crate::owner::Share>, u64, Option<u64>)> {
        let joins = own && matches!(origin, NodeOrigin::Explicit | NodeOrigin::Host) && self.clock.is_none();
        if !joins {
            return Ok((None, node, self.resume_after_ms));
        }
        let share = crate::owner::join(&crate::owner::Ask {
            layout: &self.layout,
            node: (origin == NodeOrigin::Explicit).then_some(node),
            ahead_ticks: ahead,
            state: self.state.as_deref(),
            guard: self.host_guard,
        })?;
        let node = share.owner.node();
        if let Some(floor) = share.floor_ms {
            wait_past(
                floor.saturating_sub(ahead * self.layout.tick_ms()),
                self.policy.max_wait_ms.max(floor_wait_ms(floor)),
            );
        }
        let resume_after_ms = self.resume_after_ms.max(share.floor_ms);
        Ok((Some(share), node, resume_after_ms))
    }

    /// Takes the lease, or the state file, when asked: last, once every other option
    /// is valid, so a lease is never taken only to be dropped for a configuration
    /// error. A state file is the same machinery with this node id and the file as
    /// its store.
    #[cfg(feature = "lease")]
    fn hold(&self, lease: &LeaseChoice, node: u64, resume_after_ms: Option<u64>, ahead_ms: u64) -> Result<Hold> {
        let acquire = |spec: &LeaseSpec, ttl_ms: u64| {
            lease::acquire(lease::AcquireOptions {
                spec,
                ttl_ms,
                layout: &self.layout,
                clock: self.clock.clone(),
                ahead_ms,
                max_wait_ms: self.policy.max_wait_ms,
            })
        };
        let mut hold = Hold {
            node,
            resume_after_ms,
            after_state_mark: false,
            lease: None,
        };
        if let Some(spec) = lease {
            let ttl_ms = self.lease_ttl_ms.unwrap_or(DEFAULT_LEASE_TTL_MS);
            lease::LeaseTiming::for_ttl(ttl_ms)?;
            let got = acquire(spec, ttl_ms)?;
            hold.node = got.node;
            hold.resume_after_ms = hold.resume_after_ms.max(got.resume_after_ms);
            hold.lease = Some(got.guard);
        }
        #[cfg(any(unix, windows))]
        if let Some(path) = &self.state {
            let got = acquire(&LeaseSpec::state(path, hold.node), DEFAULT_LEASE_TTL_MS)?;
            hold.after_state_mark = got.resume_after_ms.is_some();
            hold.resume_after_ms = hold.resume_after_ms.max(got.resume_after_ms);
            hold.lease = Some(got.guard);
        }
        Ok(hold)
    }

    /// Without the lease feature there is nothing to take.
    #[cfg(not(feature = "lease"))]
    fn hold(&self, _: &LeaseChoice, node: u64, resume_after_ms: Option<u64>, _: u64) -> Result<Hold> {
        Ok(Hold {
            node,
            resume_after_ms,
            after_state_mark: false,
        })
    }
}

/// What a build is to do ([`GeneratorBuilder::plan`]).
struct Plan {
    origin: NodeOrigin,
    node: u64,
    lease: LeaseChoice,
}

/// The platform's coordinator: in a Kubernetes pod, the `k8s://` Lease store
/// (flakeid-lease-net registers it); a build without it refuses, naming the fixes,
/// rather than falling back to a pick that the pod's replicas would all make.
#[cfg(feature = "lease")]
fn coordinator() -> Result<LeaseChoice> {
    LeaseSpec::parse("k8s://")
        .map(Some)
        .map_err(|e| node_origin::no_coordinator(&e))
}

/// Builds without leases cannot lease from a coordinator.
#[cfg(not(feature = "lease"))]
fn coordinator() -> Result<LeaseChoice> {
    Err(node_origin::no_coordinator(&Error::config(
        "lease",
        "leases are not compiled into this build of flakeid",
    )))
}

/// The lease a build takes, if any ([`GeneratorBuilder::lease_choice`]).
#[cfg(feature = "lease")]
type LeaseChoice = Option<LeaseSpec>;
/// Builds without leases take none.
#[cfg(not(feature = "lease"))]
struct NoLease;
#[cfg(not(feature = "lease"))]
type LeaseChoice = NoLease;

/// What a build's lease or state file decided: the node id, where the counter
/// resumes, and the guard that keeps the lease.
struct Hold {
    node: u64,
    resume_after_ms: Option<u64>,
    /// A state file's mark was read: the counter starts in the tick after it.
    after_state_mark: bool,
    #[cfg(feature = "lease")]
    lease: Option<LeaseGuard>,
}

/// The counter's first value: 0, or past `resume_after_ms` (the first slot of the
/// tick after it; with `monotonic`, that tick's first slot counts as issued).
fn initial_counter(layout: &Layout, sb: u32, resume_after_ms: Option<u64>, monotonic: bool) -> Result<u64> {
    Ok(match resume_after_ms {
        None => 0,
        Some(ms) if ms < layout.epoch_ms() => 0,
        Some(ms) => {
            let ticks = layout.ticks_at(ms)?;
            ((ticks + 1) << sb) + u64::from(monotonic && ticks < layout.max_ticks())
        }
    })
}

impl<C: CounterStorage> Generator<C> {
    /// Where this generator's node id came from (API.md §10): the builder's decision.
    pub fn node_origin(&self) -> NodeOrigin {
        self.origin
    }
}

impl Generator {
    /// A builder for a generator of `layout`'s IDs. With no node id or lease, the
    /// node id comes from the platform's coordinator (a Kubernetes pod), else a free
    /// one on this host where the host guard sees every process that may share it;
    /// elsewhere (a container, the guard off) the build is refused, naming the fixes
    /// (docs/design.md, "A node id across a fleet"). [`Generator::node_origin`] says
    /// which.
    pub fn builder(layout: Layout) -> GeneratorBuilder {
        GeneratorBuilder {
            layout,
            node: NodeChoice::Unset,
            policy: ClockPolicy::new(),
            clock: None,
            resume_after_ms: None,
            lease_ttl_ms: None,
            state: None,
            max_sequence: None,
            require_node: false,
            single_instance: false,
            host_guard: true,
            forks_continue: false,
        }
    }
}

/// How long a start may wait for a floor left by the node id's previous owner: up
/// to it, 10 s at most (past that the first calls meet the `clock_backwards`
/// policy, as after any clock behind IDs already issued).
#[cfg(host_guard)]
fn floor_wait_ms(floor_ms: u64) -> u64 {
    floor_ms.saturating_sub(crate::clock::precise_now_ms()).min(10_000) + 1
}

/// Sleeps until the system clock is past `floor_ms`, for at most `max_wait_ms`.
#[cfg(host_guard)]
fn wait_past(floor_ms: u64, max_wait_ms: u64) {
    let now = crate::clock::precise_now_ms();
    if now > floor_ms || floor_ms - now >= max_wait_ms {
        return;
    }
    // Bounded in real time too: a clock stepped back meanwhile must not hold the build.
    let deadline = crate::sync::monotonic_ms() + max_wait_ms;
    while crate::clock::precise_now_ms() <= floor_ms && crate::sync::monotonic_ms() < deadline {
        std::thread::sleep(std::time::Duration::from_micros(200));
    }
}
