//! # flakeid-core
//!
//! The engine behind flakeid: k-ordered, collision-free, decodable IDs — 64-bit
//! IDs of the Snowflake family ([`Generator`]) and the 128-bit family: UUIDv7,
//! ULID and TypeID (`UuidGenerator`, with the `uuid7` feature; [`Wide`] and the
//! text functions without). Every rule lives here; the Python, Node, WebAssembly,
//! C, Go and Java bindings only convert types and errors.
//!
//! ```
//! use flakeid_core::{Generator, Layout, Overflow, encode, Encoding};
//! // No node id: a free one on this host (across hosts, give one, or a lease).
//! let generator = Generator::builder(Layout::SNOWFLAKE).overflow(Overflow::Borrow).build()?;
//! let id = generator.next_id()?;
//! let parts = Layout::SNOWFLAKE.decompose(id);
//! assert_eq!(parts.node, generator.node());
//! assert_eq!(encode(id, Encoding::Base62).len(), 11);
//! # Ok::<(), flakeid_core::Error>(())
//! ```
//!
//! The `std` feature (on by default) brings the system clock, the host guard and
//! node sources; without it the crate is `no_std` + `alloc`, for reading, writing
//! and checking IDs (layouts, encodings, the 128-bit text forms, [`Wide`]) and, on
//! targets with 64-bit atomics (or any target, with the `portable-atomic`
//! feature), issuing them on a clock the caller gives.
//! docs/rust.md has the features.
#![warn(missing_docs)]
#![cfg_attr(not(feature = "std"), no_std)]

// `format!` and `vec!` where there is no std prelude; `String` and `Vec` come from
// `alloc` by name in each module that takes them.
#[cfg_attr(not(feature = "std"), macro_use)]
extern crate alloc;

// The feature's one promise: a generator on every target (build.rs sets the cfg).
#[cfg(all(feature = "portable-atomic", not(generator)))]
compile_error!("flakeid-core: the `portable-atomic` feature is on but the generators are not built");

/// One column of one of the core's tables as a `const` array, `[$table[0].$field,
/// $table[1].$field, ...]`: the names of its rows that an unknown one is refused
/// against.
macro_rules! column {
    ($table:expr, $field:ident) => {{
        let mut out = [""; $table.len()];
        let mut i = 0;
        while i < out.len() {
            out[i] = $table[i].$field;
            i += 1;
        }
        out
    }};
}

#[cfg(generator)]
mod builder;
#[cfg(generator)]
mod clock;
#[cfg(generator)]
mod clock_policy;
mod column;
#[cfg(generator)]
mod counter;
mod encoding;
mod error;
#[cfg(generator)]
mod fork;
#[cfg(generator)]
mod generator;
#[cfg(host_guard)]
mod host_guard;
mod layout;
#[cfg(feature = "lease")]
pub mod lease;
#[cfg(feature = "std")]
mod node_id;
#[cfg(generator)]
mod node_origin;
#[cfg(generator)]
mod options;
#[cfg(host_guard)]
mod owner;
#[cfg(generator)]
mod policy;
#[cfg(feature = "serde")]
pub mod serde;
#[cfg(host_guard)]
mod spin_flag;
#[cfg(generator)]
mod stats;
#[cfg(generator)]
mod sync;
pub mod text;
#[cfg(generator)]
mod time_range;
mod uuid7;
#[cfg(feature = "uuid7")]
mod uuid_generator;
mod wide;

#[cfg(generator)]
pub use builder::GeneratorBuilder;
#[cfg(generator)]
pub use clock::{Clock, ManualClock};
#[cfg(feature = "std")]
pub use clock::{SystemClock, precise_now_ms};
pub use column::{IdValue, from_bigint, parse_id, to_bigint};
#[cfg(generator)]
pub use counter::{CounterStorage, OwnCounter, SharedCounter};
pub use encoding::{Encoding, MAX_ENCODED_LEN, decode, decode_auto, encode, encode_into, from_bytes, shown, to_bytes};
pub use error::{Error, ErrorDetails, ErrorKind, Result};
#[cfg(generator)]
pub use generator::{AsyncSleep, Generator, LocalGenerator, MAX_BATCH, check_batch};
#[cfg(host_guard)]
pub use host_guard::HostGuard;
pub use layout::{
    LAYOUT_FIELD_NAMES, LAYOUT_FIELDS, LAYOUT_NUMBERS, Layout, LayoutBuilder, LayoutField, LayoutNumber, Order, Parts,
    layout_field,
};
#[cfg(feature = "lease")]
pub use lease::{LeaseClock, LeaseSpec, LeaseState, LeaseStore, LeaseTiming, LeaseWindow};
#[cfg(feature = "std")]
pub use node_id::{NodeSource, first_mac, first_private_ipv4, host_ordinal, hostname};
#[cfg(feature = "std")]
pub use node_origin::HOST_GUARD_ENV;
#[cfg(generator)]
pub use node_origin::NodeOrigin;
#[cfg(generator)]
pub use options::{
    DEFAULT_LEASE_TTL_MS, ENV_PREFIX, GENERATOR_OPTIONS, GeneratorOption, MAX_LEASE_TTL_MS, MIN_LEASE_TTL_MS,
    OPTION_NAMES, OptionKind, OptionValue, SETTING_NAMES, UUID_GENERATOR_OPTIONS, closest_option, configured_twice,
    generator_option, not_settings, option_value, options_from_env, setting_option, unknown_option,
};
#[cfg(generator)]
pub use policy::{ClockBackwards, DEFAULT_MAX_BORROW_MS, DEFAULT_MAX_WAIT_MS, MAX_POLICY_MS, Overflow, WaitHook};
#[cfg(generator)]
pub use stats::Stats;
#[cfg(feature = "uuid7")]
pub use uuid_generator::{UUID7_COUNTER_LAYOUT, UuidGenerator, UuidGeneratorBuilder};
pub use uuid7::WideForm;
pub use wide::{MAX_UUID7_BATCH, Wide, check_uuid7_batch};

/// The README's Rust example, compiled and run by `cargo test --doc`.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;

/// docs/rust.md's examples (the async calls on tokio and smol, serde), run by
/// `cargo test --doc` with the `serde` feature (make test-rust).
#[cfg(all(doctest, feature = "serde"))]
#[doc = include_str!("../../../docs/rust.md")]
pub struct RustDoctests;

/// The crate version, for bindings to report.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
