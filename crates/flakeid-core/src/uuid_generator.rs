//! The 128-bit generator: UUIDv7 (and the same bits as ULID and TypeID) from the
//! 64-bit engine.
//!
//! **How (RFC 9562 §6.2, Method 1, a 16-bit counter).** A [`Generator`] of the
//! layout [`UUID7_COUNTER_LAYOUT`] (47 bits of Unix milliseconds, no node, a 16-bit
//! sequence, epoch 1970) hands out (ms, counter) pairs: its shared counter, its
//! clock, its rollback and borrow policies, its waits and its `stats()`, unchanged.
//! The pair becomes the UUID's `unix_ts_ms`, then `rand_a` (the counter's top 12
//! bits) and the top 4 bits of `rand_b` (its low 4); the 58 bits after them are
//! drawn per ID from a ChaCha12 generator (the `rand` crate's `StdRng`) kept per
//! thread and seeded from the operating system. The counter starts at 0 in each
//! millisecond; the 65,537th ID of a millisecond is the next millisecond's first
//! (the `overflow` policy's borrow, at most `max_borrow_ms` ahead of the clock,
//! `Stats::lead_ms`), so the UUIDs one generator returns strictly increase, across
//! its threads too: the 64-bit counter they come from does, and the mapping keeps
//! its order. The counter never wraps within a millisecond.
//!
//! **Fork.** A UUID needs no node id, so a forked child goes on: its engine goes on
//! from the state it inherited (its IDs stay above every ID the parent had
//! returned before the fork), and each thread's random generator reseeds from the
//! operating system before its next draw in the child, so the child's random bits
//! are not the parent's. Parent and child may then issue the same (ms, counter)
//! prefix; their 58 random bits keep them apart, as any two UUIDv7 generators'.
//! `Stats::reseeds` counts the children that went on.
//!
//! Time: the 47-bit engine runs until the year 6429 (Unix ms 2^47 − 1); the UUID's
//! field holds 48 bits.

use crate::builder::GeneratorBuilder;
use crate::clock_policy::{ClockPolicy, clock_setters};
use crate::counter::{CounterStorage, OwnCounter, SharedCounter};
use crate::error::{Error, Result};
use crate::fork;
use crate::generator::Generator;
use crate::layout::Layout;
use crate::options::{UUID_GENERATOR_OPTIONS, generator_option, option_value, unknown_option, wrong_value};
use crate::stats::Stats;
use crate::uuid7::check_typeid_prefix;
use crate::uuid7::{
    UUID7_MAX_MS, UUID7_RAND_A_BITS, UUID7_RAND_B_BITS, compose_uuid7, format_typeid, format_ulid, format_uuid,
};
use rand::SeedableRng;
use rand::rngs::{StdRng, SysRng};
use rand_core::Rng;
use std::cell::RefCell;
use std::sync::atomic::AtomicU64;

/// The engine under the UUIDs: 47 bits of Unix ms, a 16-bit counter, no node.
pub const UUID7_COUNTER_LAYOUT: (u32, u32, u64, u64) = (47, 16, 1, 0);
const RANDOM_BITS: u32 = 58;

fn counter_layout() -> Result<Layout> {
    let (time_bits, sequence_bits, tick_ms, epoch_ms) = UUID7_COUNTER_LAYOUT;
    Layout::builder()
        .time_bits(time_bits)
        .node_bits(0)
        .sequence_bits(sequence_bits)
        .tick_ms(tick_ms)
        .epoch_ms(epoch_ms)
        // Checked as of its own epoch (1970: never later than any clock) rather than
        // the system clock's now, which a WebAssembly module has not (it panics).
        .build_at(epoch_ms)
}

/// Options of a [`UuidGenerator`]: the clock policies of the 64-bit generator
/// (one struct both builders hold; the option table's rows marked
/// `applies_128`), borrowing by default.
#[derive(Debug)]
pub struct UuidGeneratorBuilder {
    policy: ClockPolicy,
    clock: Option<std::sync::Arc<dyn crate::clock::Clock>>,
    resume_after_ms: Option<u64>,
}

impl Default for UuidGeneratorBuilder {
    fn default() -> Self {
        UuidGeneratorBuilder {
            policy: ClockPolicy::borrowing(),
            clock: None,
            resume_after_ms: None,
        }
    }
}

impl UuidGeneratorBuilder {
    clock_setters!();

    /// UUIDs of times up to and including this Unix ms were already issued (by an
    /// earlier process over the same sequence: a server before its restart): the
    /// UUIDs start after it, as the 64-bit builder's `resume_after_ms`. A clock
    /// behind it is then handled by the `clock_backwards` policy like any rollback.
    pub fn resume_after_ms(mut self, unix_ms: u64) -> Self {
        self.resume_after_ms = Some(unix_ms);
        self
    }

    /// Sets an option by its name in the 64-bit table (`GENERATOR_OPTIONS`), from
    /// text: only the clock policies apply ([`UUID_GENERATOR_OPTIONS`]); a node,
    /// layout or lease option is a `Config` error naming it (a UUID needs no node).
    pub fn set_text(mut self, name: &str, text: &str) -> Result<Self> {
        let Some(option) = generator_option(name) else {
            return Err(unknown_option(name, &UUID_GENERATOR_OPTIONS));
        };
        if !UUID_GENERATOR_OPTIONS.contains(&option.name) {
            return Err(Error::config(
                option.name,
                format!(
                    "{} does not apply to the 128-bit generator (its IDs need no node id); it reads {}",
                    option.name,
                    UUID_GENERATOR_OPTIONS.join(", ")
                ),
            ));
        }
        let value = option_value(option, text)?;
        match self.policy.set(option.name, value) {
            Some(set) => set?,
            None => return Err(wrong_value(option, value)),
        }
        Ok(self)
    }

    /// Builds the generator (a bad option is a `Config` error naming it).
    pub fn build(self) -> Result<UuidGenerator> {
        Ok(UuidGenerator {
            engine: self.engine()?.build()?,
        })
    }

    /// Builds a generator over a counter word others share (one sequence by
    /// design: the PostgreSQL extension's backends, each with its own generator
    /// over one word in shared memory), so that the UUIDs of all of them strictly
    /// increase together. The word only ever moves forward.
    pub fn build_shared(self, counter: &'static AtomicU64) -> Result<UuidGenerator<SharedCounter>> {
        Ok(UuidGenerator {
            engine: self.engine()?.build_shared(counter)?,
        })
    }

    fn engine(self) -> Result<GeneratorBuilder> {
        let builder = Generator::builder(counter_layout()?)
            .node(0)
            .host_guard(false)
            .forks_continue()
            .clock_policy(self.policy, self.clock);
        Ok(match self.resume_after_ms {
            Some(ms) => builder.resume_after_ms(ms),
            None => builder,
        })
    }
}

/// Makes UUIDv7s (and ULIDs and TypeIDs of the same bits); `Sync`: share it.
#[derive(Debug)]
pub struct UuidGenerator<C: CounterStorage = OwnCounter> {
    engine: Generator<C>,
}

thread_local! {
    /// This thread's random generator and the fork generation it was seeded in.
    static RNG: RefCell<Option<(u64, StdRng)>> = const { RefCell::new(None) };
}

fn random_u64() -> Result<u64> {
    RNG.with(|cell| {
        let mut slot = cell.borrow_mut();
        let generation = fork::generation();
        if slot.as_ref().is_none_or(|(g, _)| *g != generation) {
            let rng = StdRng::try_from_rng(&mut SysRng)
                .map_err(|e| Error::config("random", format!("the operating system's random source failed: {e}")))?;
            *slot = Some((generation, rng));
        }
        let (_, rng) = slot.as_mut().expect("seeded above");
        Ok(rng.next_u64())
    })
}

/// The 58 random bits after a UUID's counter.
fn random_bits() -> Result<u64> {
    Ok(random_u64()? >> (64 - RANDOM_BITS))
}

/// A UUIDv7 of `ms` with all 74 of its other bits random.
fn uuid_at(ms: u64) -> Result<u128> {
    if ms > UUID7_MAX_MS {
        return Err(Error::out_of_range("unix_ms", 0, UUID7_MAX_MS, ms));
    }
    let (a, b) = (random_u64()?, random_u64()?);
    compose_uuid7(
        ms,
        (a >> (64 - UUID7_RAND_A_BITS)) as u16,
        b >> (64 - UUID7_RAND_B_BITS),
    )
}

/// The UUID of one (ms, counter) pair of the engine, with fresh random bits.
/// IDs [`UuidGenerator::fill_uuid7`] reserves at once: its counter pairs on the
/// stack (8 KiB), not a second allocation the size of the batch.
const FILL_CHUNK: usize = 1024;

fn uuid_of(pair: u64) -> Result<u128> {
    let (ms, counter) = (pair >> 16, pair & 0xffff);
    compose_uuid7(
        ms,
        (counter >> 4) as u16,
        (counter & 0xf) << RANDOM_BITS | random_bits()?,
    )
}

impl UuidGenerator {
    /// The options, then [`UuidGeneratorBuilder::build`].
    pub fn builder() -> UuidGeneratorBuilder {
        UuidGeneratorBuilder::default()
    }
}

impl<C: CounterStorage> UuidGenerator<C> {
    /// The next UUIDv7 as its 128-bit value.
    pub fn next_uuid7(&self) -> Result<u128> {
        self.engine.next_id().and_then(uuid_of)
    }

    /// [`next_uuid7`](Self::next_uuid7) for async code: a wait for the clock awaits
    /// `sleep` instead of holding the thread ([`Generator::next_id_async`]).
    pub async fn next_uuid7_async(&self, sleep: &impl crate::AsyncSleep) -> Result<u128> {
        uuid_of(self.engine.next_id_async(sleep).await?)
    }

    /// The next UUIDv7 if one can be had without waiting for the clock; `None`
    /// where [`Self::next_uuid7`] would wait (a binding then waits without its
    /// interpreter's lock).
    pub fn try_next_uuid7(&self) -> Result<Option<u128>> {
        self.engine.try_next_id()?.map(uuid_of).transpose()
    }

    /// The next UUIDv7 as the `uuid` crate's `Uuid` (feature `uuid`).
    #[cfg(feature = "uuid")]
    pub fn next_uuid(&self) -> Result<uuid::Uuid> {
        self.next_uuid7().map(uuid::Uuid::from_u128)
    }

    /// The next UUIDv7 as 16 big-endian bytes.
    pub fn next_uuid7_bytes(&self) -> Result<[u8; 16]> {
        self.next_uuid7().map(u128::to_be_bytes)
    }

    /// The next UUIDv7 as lowercase `8-4-4-4-12` text.
    pub fn next_uuid7_string(&self) -> Result<String> {
        self.next_uuid7().map(format_uuid)
    }

    /// The next ID as a ULID (the same 128 bits as [`Self::next_uuid7`], in
    /// upper-case Crockford base32).
    pub fn next_ulid(&self) -> Result<String> {
        self.next_uuid7().map(format_ulid)
    }

    /// The next ID as a TypeID with `prefix` (checked first: a bad prefix costs no ID).
    pub fn next_typeid(&self, prefix: &str) -> Result<String> {
        check_typeid_prefix(prefix)?;
        format_typeid(prefix, self.next_uuid7()?)
    }

    /// Fills `out` with fresh UUIDv7s, increasing and in call order with the
    /// generator's other IDs: the engine's batch (one reservation per
    /// 1024 IDs while the window allows), each with fresh random bits.
    /// It allocates nothing: a binding that reserved `out` fallibly reports an
    /// allocation failure as its runtime's own error, never an abort.
    pub fn fill_uuid7(&self, out: &mut [u128]) -> Result<()> {
        let mut pairs = [0u64; FILL_CHUNK];
        for chunk in out.chunks_mut(FILL_CHUNK) {
            let pairs = &mut pairs[..chunk.len()];
            self.engine.fill(pairs)?;
            for (slot, &pair) in chunk.iter_mut().zip(pairs.iter()) {
                *slot = uuid_of(pair)?;
            }
        }
        Ok(())
    }

    /// `n` fresh UUIDv7s, increasing ([`fill_uuid7`](Self::fill_uuid7)); `n` at
    /// most [`MAX_BATCH`](crate::MAX_BATCH), as for 64-bit batches (the same
    /// `Config` error on `n`).
    pub fn next_uuid7s(&self, n: usize) -> Result<Vec<u128>> {
        crate::check_batch(n as i128)?;
        let mut v = vec![0u128; n];
        self.fill_uuid7(&mut v)?;
        Ok(v)
    }

    /// A UUIDv7 of the Unix millisecond `unix_ms` (0..=2^48 − 1, else a `Config`
    /// error on `unix_ms`) and 74 random bits: an explicit time, **outside the
    /// generator's sequence** (RFC 9562 §6.2 orders the UUIDs a generator makes of
    /// its own clock). It is not ordered after the generator's earlier UUIDs, nor
    /// among others of the same millisecond; any two are kept apart by their 74
    /// random bits, as two UUIDv7 generators' are. For backfills and imports:
    /// rows that carry their original creation time.
    pub fn uuid7_at(&self, unix_ms: u64) -> Result<u128> {
        self.engine.check_open()?;
        uuid_at(unix_ms)
    }

    /// A UUIDv7 of the generator's clock now shifted by `shift_ms` (negative: into
    /// the past), as PostgreSQL 18's `uuidv7(shift)`: a `Config` error on
    /// `shift_ms` when the shifted time is outside 0..=2^48 − 1 ms. Outside the
    /// sequence, as [`Self::uuid7_at`].
    pub fn uuid7_shifted(&self, shift_ms: i64) -> Result<u128> {
        let now = self.engine.checked_now_ms()?;
        let at = i128::from(now) + i128::from(shift_ms);
        match u64::try_from(at) {
            Ok(ms) if ms <= UUID7_MAX_MS => uuid_at(ms),
            _ => Err(Error::config(
                "shift_ms",
                format!(
                    "shift_ms must keep the time in 0..={UUID7_MAX_MS} ms; the clock reads {now}, shifted by {shift_ms} it is {at}"
                ),
            )),
        }
    }

    /// The engine's counters, and `reseeds`: the forked children that went on.
    pub fn stats(&self) -> Stats {
        self.engine.stats()
    }

    /// Stops issuing (idempotent); later calls are a `Config` error on `generator`.
    pub fn close(&self) {
        self.engine.close();
    }
}
