//! The clock policies as one struct that both builders hold ([`ClockPolicy`]),
//! and their typed setters, written once ([`clock_setters`]). A floor above the
//! option table (crate::options) and the policies' types (crate::policy).

use crate::error::Result;
use crate::policy::{ClockBackwards, DEFAULT_MAX_BORROW_MS, DEFAULT_MAX_WAIT_MS, Hook, Overflow};

/// The clock policies, one struct that both builders and the generator hold: what a
/// used-up tick does (`overflow`, `max_borrow_ms`), what a clock behind the last
/// ID does (`clock_backwards`, `max_wait_ms`) and the hook a waiting call runs.
/// The options it reads are the option table's rows marked `applies_128`
/// (crate::options); the typed setters are [`clock_setters`]'s, written once for
/// both builders.
#[derive(Clone, Debug)]
pub(crate) struct ClockPolicy {
    pub(crate) overflow: Overflow,
    pub(crate) max_borrow_ms: u64,
    pub(crate) clock_backwards: ClockBackwards,
    pub(crate) max_wait_ms: u64,
    pub(crate) wait_hook: Option<Hook>,
}

impl ClockPolicy {
    /// The option table's defaults (the 64-bit generator's): wait, 2000 ms, error,
    /// 1000 ms.
    pub(crate) fn new() -> Self {
        ClockPolicy {
            overflow: Overflow::Wait,
            max_borrow_ms: DEFAULT_MAX_BORROW_MS,
            clock_backwards: ClockBackwards::Error,
            max_wait_ms: DEFAULT_MAX_WAIT_MS,
            wait_hook: None,
        }
    }

    /// The 128-bit generator's defaults: the table's, but borrowing (a UUID's
    /// millisecond has 65,536 and a caller expects no wait).
    #[cfg_attr(not(feature = "uuid7"), allow(dead_code))]
    pub(crate) fn borrowing() -> Self {
        ClockPolicy {
            overflow: Overflow::Borrow,
            ..Self::new()
        }
    }

    /// Sets the clock option `name` (the table's snake_case name) from a converted
    /// value; `None` when `name` is not one of them (a value of the wrong type is
    /// the table's error for that option).
    pub(crate) fn set(&mut self, name: &str, value: crate::options::OptionValue<'_>) -> Option<Result<()>> {
        use crate::options::OptionValue::{Text, Uint};
        let option = crate::options::generator_option(name).filter(|o| o.applies_128 && o.from_outside())?;
        Some((|| {
            match (option.name, value) {
                ("overflow", Text(s)) => self.overflow = s.parse()?,
                ("clock_backwards", Text(s)) => self.clock_backwards = s.parse()?,
                ("max_borrow_ms", Uint(v)) => self.max_borrow_ms = v,
                ("max_wait_ms", Uint(v)) => self.max_wait_ms = v,
                _ => return Err(crate::options::wrong_value(option, value)),
            }
            Ok(())
        })())
    }
}

/// The clock policies' typed setters, written once and expanded into both
/// builders' `impl` blocks (each holds its [`ClockPolicy`] as `policy`, and its clock
/// as `clock`).
macro_rules! clock_setters {
    () => {
        /// Time source (a [`ManualClock`](crate::ManualClock) in tests); the
        /// system clock when not set.
        pub fn clock(mut self, clock: impl crate::clock::Clock + 'static) -> Self {
            self.clock = Some(alloc::sync::Arc::new(clock));
            self
        }
        /// Time source, shared: the same clock behind several generators.
        pub fn clock_arc(mut self, clock: alloc::sync::Arc<dyn crate::clock::Clock>) -> Self {
            self.clock = Some(clock);
            self
        }
        /// What to do when a tick's sequence is used up: wait for the next tick,
        /// or borrow from the future (`overflow`; the 64-bit generator waits by
        /// default, the 128-bit one borrows).
        pub fn overflow(mut self, overflow: crate::policy::Overflow) -> Self {
            self.policy.overflow = overflow;
            self
        }
        /// How far a borrowing generator may run ahead of the clock
        /// (`max_borrow_ms`, default 2000 ms).
        pub fn max_borrow_ms(mut self, ms: u64) -> Self {
            self.policy.max_borrow_ms = ms;
            self
        }
        /// What to do when the clock reads earlier than IDs issued: error (the
        /// default), wait or monotonic (`clock_backwards`).
        pub fn clock_backwards(mut self, policy: crate::policy::ClockBackwards) -> Self {
            self.policy.clock_backwards = policy;
            self
        }
        /// How long the wait policies wait for the clock (`max_wait_ms`, default
        /// 1000 ms).
        pub fn max_wait_ms(mut self, ms: u64) -> Self {
            self.policy.max_wait_ms = ms;
            self
        }
        /// Runs `hook` about every 10 ms of real time while a call waits for the
        /// clock (a used-up tick, a full borrow window, a clock being waited out).
        /// An `Err` ends the wait and is what the call returns; no ID is issued.
        /// Bindings use it to let signal handlers run (Python's Ctrl-C) during
        /// long waits.
        pub fn wait_hook(mut self, hook: crate::policy::WaitHook) -> Self {
            self.policy.wait_hook = Some(crate::policy::Hook(hook));
            self
        }
    };
}
pub(crate) use clock_setters;
