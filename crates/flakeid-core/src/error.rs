//! The one error table. Every binding maps [`ErrorKind`] exhaustively: Python
//! exception classes, JS `Error.code`, C status numbers.

use alloc::string::String;
use core::fmt;

/// What went wrong, without the details. The discriminants are stable: the C
/// binding exposes them as `flakeid_status` numbers and they never change
/// (retired numbers stay reserved).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u32)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A layout, node id or option is out of range.
    Config = 1,
    /// The clock is earlier than the last tick an ID was issued at.
    ClockMovedBackwards = 2,
    /// The clock is before the layout's epoch, or past the last tick it can hold.
    TimeExhausted = 3,
    /// Text or bytes that do not decode to an ID.
    Parse = 4,
    /// The generator was created in a parent process and used after `fork()`.
    Fork = 5,
    /// A node-id lease could not be acquired, or was lost.
    Lease = 6,
    /// A wait for the clock was ended by the caller's wait hook (e.g. a signal).
    Interrupted = 7,
}

impl ErrorKind {
    /// Every kind, in discriminant order (bindings iterate this to stay exhaustive).
    pub const ALL: [ErrorKind; 7] = [
        ErrorKind::Config,
        ErrorKind::ClockMovedBackwards,
        ErrorKind::TimeExhausted,
        ErrorKind::Parse,
        ErrorKind::Fork,
        ErrorKind::Lease,
        ErrorKind::Interrupted,
    ];

    /// The stable code JS errors carry in `err.code` (`FLAKEID_CONFIG`, ...).
    pub const fn code(self) -> &'static str {
        match self {
            ErrorKind::Config => "FLAKEID_CONFIG",
            ErrorKind::ClockMovedBackwards => "FLAKEID_CLOCK_BACKWARDS",
            ErrorKind::TimeExhausted => "FLAKEID_TIME_EXHAUSTED",
            ErrorKind::Parse => "FLAKEID_PARSE",
            ErrorKind::Fork => "FLAKEID_FORK",
            ErrorKind::Lease => "FLAKEID_LEASE",
            ErrorKind::Interrupted => "FLAKEID_INTERRUPTED",
        }
    }

    /// The name used in test vectors and for Python exception classes' stems.
    pub const fn name(self) -> &'static str {
        match self {
            ErrorKind::Config => "config",
            ErrorKind::ClockMovedBackwards => "clock_backwards",
            ErrorKind::TimeExhausted => "time_exhausted",
            ErrorKind::Parse => "parse",
            ErrorKind::Fork => "fork",
            ErrorKind::Lease => "lease",
            ErrorKind::Interrupted => "interrupted",
        }
    }
}

/// Every failure flakeid reports. Messages name the field, its allowed range and
/// the offending value, so that a user can fix the call without reading code.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
///
/// ```
/// use flakeid_core::{Error, ErrorKind, Generator, Layout};
///
/// let err = Generator::builder(Layout::SNOWFLAKE).worker(32).build().unwrap_err();
/// assert!(matches!(err, Error::Config { field: "worker", .. }));
/// assert_eq!(err.kind(), ErrorKind::Config);
/// assert_eq!(err.to_string(), "invalid configuration: worker must be in 0..=31, got 32");
/// ```
pub enum Error {
    /// A configuration value is out of range. `field` is the option's name.
    Config {
        /// The option's name (`worker`, `lease_ttl_ms`, ...).
        field: &'static str,
        /// What is wrong: the allowed range and the value given.
        message: String,
    },
    /// The clock went backwards by `by_ms` milliseconds; no ID was issued.
    ClockMovedBackwards {
        /// How far back, in milliseconds.
        by_ms: u64,
    },
    /// The time cannot be represented by the layout (before its epoch or past its end).
    TimeExhausted {
        /// Which end was passed, and when.
        message: String,
    },
    /// Text or bytes did not decode. `position` is the 0-based index of the bad
    /// character (or the length, when the text is too short or too long).
    Parse {
        /// The 0-based index of the bad character.
        position: usize,
        /// What was expected.
        message: String,
    },
    /// Used in a child process after `fork()`.
    Fork,
    /// A node-id lease failed or was lost.
    Lease {
        /// What failed, with the store's own words.
        message: String,
    },
    /// The clock did not reach the next tick within `tick_ms + max_wait_ms` of
    /// real time (it is frozen, or keeps being set back). Kind
    /// [`ErrorKind::ClockMovedBackwards`]: it has fallen behind real time.
    ClockStalled {
        /// How long the generator waited, in real milliseconds.
        waited_ms: u64,
    },
    /// The wait hook ended a wait for the clock; no ID was issued.
    Interrupted,
}

impl Error {
    /// The error's kind: its stable number and name, shared by every binding.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Config { .. } => ErrorKind::Config,
            Error::ClockMovedBackwards { .. } => ErrorKind::ClockMovedBackwards,
            Error::TimeExhausted { .. } => ErrorKind::TimeExhausted,
            Error::Parse { .. } => ErrorKind::Parse,
            Error::Fork => ErrorKind::Fork,
            Error::Lease { .. } => ErrorKind::Lease,
            Error::ClockStalled { .. } => ErrorKind::ClockMovedBackwards,
            Error::Interrupted => ErrorKind::Interrupted,
        }
    }

    /// The error's structured details (`field`, `by_ms`, `position`), decided here
    /// once: every binding attaches them to its own error value as they are (Python
    /// attributes, JS `field`/`byMs`/`position`, the C `flakeid_last_error_*` calls),
    /// instead of matching on the variants itself.
    ///
    /// ```
    /// use flakeid_core::{Error, Layout};
    /// let e = Layout::preset("twitter").unwrap_err();
    /// assert_eq!(e.details().field, Some("layout"));
    /// assert_eq!(Error::ClockMovedBackwards { by_ms: 7 }.details().by_ms, Some(7));
    /// ```
    pub fn details(&self) -> ErrorDetails {
        let mut d = ErrorDetails::default();
        match self {
            Error::Config { field, .. } => d.field = Some(field),
            Error::ClockMovedBackwards { by_ms } => d.by_ms = Some(*by_ms),
            // A stall is reported as the clock falling behind: by how long it waited.
            Error::ClockStalled { waited_ms } => d.by_ms = Some(*waited_ms),
            Error::Parse { position, .. } => d.position = Some(*position),
            Error::TimeExhausted { .. } | Error::Fork | Error::Lease { .. } | Error::Interrupted => {}
        }
        d
    }

    /// A configuration error naming `field`: what bindings report about their own
    /// arguments (a C struct's size, a JS value that is not a `ManualClock`).
    pub fn config(field: &'static str, message: impl Into<String>) -> Error {
        Error::Config {
            field,
            message: message.into(),
        }
    }

    /// "`field` must be in lo..=hi, got v" — the shape of most range errors (public
    /// so that bindings report values their language cannot even pass as `u64`).
    pub fn out_of_range(field: &'static str, lo: u64, hi: u64, got: impl fmt::Display) -> Error {
        Error::config(field, format!("{field} must be in {lo}..={hi}, got {got}"))
    }

    pub(crate) fn parse(position: usize, message: impl Into<String>) -> Error {
        Error::Parse {
            position,
            message: message.into(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Config { message, .. } => write!(f, "invalid configuration: {message}"),
            Error::ClockMovedBackwards { by_ms } => write!(
                f,
                "clock moved backwards by {by_ms} ms; refusing to issue an ID until it catches up \
                 (choose clock_backwards=\"wait\" or \"monotonic\" to ride it out)"
            ),
            Error::TimeExhausted { message } => write!(f, "time exhausted: {message}"),
            Error::Parse { message, .. } => write!(f, "parse error: {message}"),
            Error::Fork => f.write_str(
                "this generator was created before fork() and is being used in the child process; \
                 issuing IDs here would duplicate the parent's. Give each process a generator with its \
                 own node id: a lease takes a free one in each process (file:///dir on one host, a store \
                 across hosts); a generator built again after the fork with the parent's fixed node id \
                 is refused while the parent holds it",
            ),
            Error::Lease { message } => write!(f, "lease error: {message}"),
            Error::ClockStalled { waited_ms } => write!(
                f,
                "the clock did not reach the next tick in {waited_ms} ms of real time (is it frozen or \
                 being set back?); refusing to wait longer than tick_ms + max_wait_ms"
            ),
            Error::Interrupted => f.write_str("interrupted while waiting for the clock; no ID was issued"),
        }
    }
}

impl core::error::Error for Error {}

/// What an [`Error`] says beyond its kind and message ([`Error::details`]). Each
/// binding converts these fields as they are; which error carries which is decided
/// in the core alone.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ErrorDetails {
    /// The option or argument at fault (configuration errors): `worker`,
    /// `lease_ttl_ms`, `id`, ...
    pub field: Option<&'static str>,
    /// How far the clock went back, or how long it stalled, in milliseconds.
    pub by_ms: Option<u64>,
    /// The 0-based index of the offending character or byte (parse errors).
    pub position: Option<usize>,
}

/// `Result` with flakeid's [`Error`].
pub type Result<T, E = Error> = core::result::Result<T, E>;
