//! What a generator does when the clock does not cooperate: the overflow and
//! clock-going-backwards policies, their defaults and bounds, and the hook a
//! waiting call runs.

use crate::error::{Error, Result};
use alloc::sync::Arc;
use core::fmt;

/// Called while a call waits for the clock (see [`GeneratorBuilder::wait_hook`](crate::GeneratorBuilder::wait_hook)).
pub type WaitHook = Arc<dyn Fn() -> Result<()> + Send + Sync>;

#[derive(Clone)]
pub(crate) struct Hook(pub(crate) WaitHook);

impl fmt::Debug for Hook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("WaitHook")
    }
}

/// What to do when a tick's sequence numbers are used up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
///
/// ```
/// use flakeid_core::Overflow;
///
/// assert_eq!("borrow".parse::<Overflow>()?, Overflow::Borrow);
/// assert_eq!(Overflow::Borrow.to_string(), "borrow");
/// # Ok::<(), flakeid_core::Error>(())
/// ```
pub enum Overflow {
    /// Spin on the clock until the next tick (never `sleep(1 ms)`).
    #[default]
    Wait,
    /// Move to the next tick at once, at most `max_borrow_ms` ahead of the clock.
    Borrow,
}

impl Overflow {
    /// The policy's name, as [`FromStr`](core::str::FromStr) reads it (also its [`Display`](fmt::Display)).
    pub fn as_str(self) -> &'static str {
        match self {
            Overflow::Wait => "wait",
            Overflow::Borrow => "borrow",
        }
    }
}

impl core::str::FromStr for Overflow {
    type Err = Error;
    /// The policy named `s` (`wait`, `borrow`; case and surrounding spaces ignored).
    fn from_str(s: &str) -> Result<Overflow> {
        match s.trim().to_ascii_lowercase().as_str() {
            "wait" => Ok(Overflow::Wait),
            "borrow" => Ok(Overflow::Borrow),
            _ => Err(Error::config(
                "overflow",
                format!("overflow must be \"wait\" or \"borrow\", got {s:?}"),
            )),
        }
    }
}

impl fmt::Display for Overflow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What to do when the clock reads earlier than IDs already issued.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ClockBackwards {
    /// Refuse with [`Error::ClockMovedBackwards`]; the sequence is left as it was.
    #[default]
    Error,
    /// Wait for the clock to catch up if that takes at most `max_wait_ms`, else refuse.
    Wait,
    /// Keep issuing from the last tick (never going back); once its sequence is
    /// used up, wait as for `Wait`.
    Monotonic,
}

impl ClockBackwards {
    /// The policy's name, as [`FromStr`](core::str::FromStr) reads it (also its [`Display`](fmt::Display)).
    pub fn as_str(self) -> &'static str {
        match self {
            ClockBackwards::Error => "error",
            ClockBackwards::Wait => "wait",
            ClockBackwards::Monotonic => "monotonic",
        }
    }
}

impl core::str::FromStr for ClockBackwards {
    type Err = Error;
    /// The policy named `s` (`error`, `wait`, `monotonic`; case and surrounding spaces ignored).
    fn from_str(s: &str) -> Result<ClockBackwards> {
        match s.trim().to_ascii_lowercase().as_str() {
            "error" => Ok(ClockBackwards::Error),
            "wait" => Ok(ClockBackwards::Wait),
            "monotonic" => Ok(ClockBackwards::Monotonic),
            _ => Err(Error::config(
                "clock_backwards",
                format!("clock_backwards must be \"error\", \"wait\" or \"monotonic\", got {s:?}"),
            )),
        }
    }
}

impl fmt::Display for ClockBackwards {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How far a borrowing generator may run ahead of the clock by default. A process
/// that restarts with the same node id sooner than this after a burst could reissue
/// borrowed IDs; leases record the last time issued and close that hole.
pub const DEFAULT_MAX_BORROW_MS: u64 = 2_000;
/// How long `ClockBackwards::Wait` (and `Monotonic`, once its tick is used up) waits.
pub const DEFAULT_MAX_WAIT_MS: u64 = 1_000;
/// Upper bound for `max_borrow_ms` and `max_wait_ms` (one day).
pub const MAX_POLICY_MS: u64 = 86_400_000;
