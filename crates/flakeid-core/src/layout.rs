//! How the 64 bits are split. A [`Layout`] is a plain value passed around — never a
//! mutable global — and every preset is a `const`.

#[cfg(feature = "std")]
use crate::encoding::shown;
use crate::error::{Error, Result};
#[cfg(feature = "std")]
use crate::options::{OptionValue, unknown_option};
use alloc::vec::Vec;
use core::fmt;

/// Where the sequence sits relative to the node id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Order {
    /// `time | node | seq` — Twitter, FlakeID, Discord, Baidu, Instagram.
    TimeNodeSeq,
    /// `time | seq | node` — Sonyflake.
    TimeSeqNode,
}

impl Order {
    /// The order's name, as [`FromStr`](core::str::FromStr) reads it (also its [`Display`](fmt::Display)).
    pub fn as_str(self) -> &'static str {
        match self {
            Order::TimeNodeSeq => "time|node|seq",
            Order::TimeSeqNode => "time|seq|node",
        }
    }
}

impl core::str::FromStr for Order {
    type Err = Error;
    /// The order named `s` (`time|node|seq`, `time|seq|node`; `,`, ` `, `-` or `_`
    /// also separate, and `sequence` is `seq`).
    fn from_str(s: &str) -> Result<Order> {
        match s
            .trim()
            .to_ascii_lowercase()
            .replace([',', ' ', '-', '_'], "|")
            .as_str()
        {
            "time|node|seq" | "time|node|sequence" => Ok(Order::TimeNodeSeq),
            "time|seq|node" | "time|sequence|node" => Ok(Order::TimeSeqNode),
            _ => Err(Error::config(
                "order",
                format!("order must be \"time|node|seq\" or \"time|seq|node\", got {s:?}"),
            )),
        }
    }
}

impl fmt::Display for Order {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A bit layout. Build one with [`Layout::builder`] or take a preset
/// ([`Layout::SNOWFLAKE`], [`Layout::preset`]).
///
/// ```
/// use flakeid_core::Layout;
/// // Seed 001's worked vector.
/// let id = Layout::SNOWFLAKE.compose_parts(1505914988849, 17, 25, 0).unwrap();
/// assert_eq!(id, 910499571847892992);
/// let p = Layout::SNOWFLAKE.decompose(id);
/// assert_eq!((p.timestamp_ms, p.datacenter, p.worker, p.sequence), (1505914988849, 17, 25, 0));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Layout {
    name: Option<&'static str>,
    time_bits: u8,
    datacenter_bits: u8,
    worker_bits: u8,
    sequence_bits: u8,
    tick_ms: u64,
    epoch_ms: u64,
    order: Order,
}

/// An ID taken apart. `timestamp_ms` is Unix milliseconds (the start of the ID's
/// tick); `node = datacenter << worker_bits | worker`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
///
/// ```
/// use flakeid_core::Layout;
///
/// let parts = Layout::SNOWFLAKE.decompose(910_499_571_847_892_992);
/// assert_eq!(parts.node, parts.datacenter << 5 | parts.worker);
/// assert_eq!(Layout::SNOWFLAKE.compose(parts.timestamp_ms, parts.node, parts.sequence)?, 910_499_571_847_892_992);
/// # Ok::<(), flakeid_core::Error>(())
/// ```
pub struct Parts {
    /// Unix milliseconds: the start of the ID's tick.
    pub timestamp_ms: u64,
    /// The raw time field: ticks since the layout's epoch.
    pub ticks: u64,
    /// The whole node id (`datacenter << worker_bits | worker`).
    pub node: u64,
    /// The datacenter field (0 in layouts without one).
    pub datacenter: u64,
    /// The worker field.
    pub worker: u64,
    /// The sequence number within the tick.
    pub sequence: u64,
}

#[allow(clippy::too_many_arguments)]
const fn preset(
    name: &'static str,
    time_bits: u8,
    datacenter_bits: u8,
    worker_bits: u8,
    sequence_bits: u8,
    tick_ms: u64,
    epoch_ms: u64,
    order: Order,
) -> Layout {
    Layout {
        name: Some(name),
        time_bits,
        datacenter_bits,
        worker_bits,
        sequence_bits,
        tick_ms,
        epoch_ms,
        order,
    }
}

/// What a layout decides about a generator's slots, for one node id: how a slot
/// (`ticks << sb | sequence`) becomes an ID, the time its ticks count from, and how
/// far the counter may run ahead of the clock. Computed once by [`Layout::slots`],
/// read on every call.
#[cfg(generator)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct Slots {
    /// The counter's sequence width: the layout's.
    pub(crate) sb: u32,
    pub(crate) seq_mask: u64,
    /// The largest sequence a call of this generator takes in a tick: the layout's
    /// `seq_mask`, or less under `max_sequence` (then a tick is full for this
    /// generator past it, and its next slot is the next tick's first). A per-call
    /// rule, so generators with other `max_sequence`s share one counter.
    pub(crate) seq_cap: u64,
    pub(crate) time_shift: u32,
    pub(crate) seq_shift: u32,
    pub(crate) node: u64,
    /// The node id where the ID keeps it.
    pub(crate) node_part: u64,
    pub(crate) epoch_ms: u64,
    pub(crate) tick_ms: u64,
    pub(crate) max_ticks: u64,
    /// Ticks the counter may run ahead of the clock (0 unless borrowing).
    pub(crate) ahead: u64,
}

impl Layout {
    /// The slots of a generator on `node` that takes sequences up to `seq_cap` in a
    /// tick ([`Layout::counter_sequence_bits`]) and may run `ahead` ticks ahead of
    /// its clock.
    #[cfg(generator)]
    pub(crate) fn slots(&self, node: u64, seq_cap: u64, ahead: u64) -> Slots {
        let sb = self.sequence_bits();
        let (node_shift, seq_shift) = match self.order() {
            Order::TimeNodeSeq => (self.sequence_bits(), 0),
            Order::TimeSeqNode => (0, self.node_bits()),
        };
        Slots {
            sb,
            seq_mask: mask(sb),
            seq_cap,
            time_shift: self.node_bits() + self.sequence_bits(),
            seq_shift,
            node,
            node_part: node << node_shift,
            epoch_ms: self.epoch_ms(),
            tick_ms: self.tick_ms(),
            max_ticks: self.max_ticks(),
            ahead,
        }
    }

    /// Twitter Snowflake: 41 time, 5 datacenter + 5 worker, 12 sequence, epoch 2010-11-04.
    pub const SNOWFLAKE: Layout = preset("snowflake", 41, 5, 5, 12, 1, 1288834974657, Order::TimeNodeSeq);
    /// FlakeID / flake-idgen: 42 time from the Unix epoch, 10 node (5 + 5), 12 sequence.
    pub const FLAKE: Layout = preset("flake", 42, 5, 5, 12, 1, 0, Order::TimeNodeSeq);
    /// Discord: 42 time, 5 + 5 node, 12 sequence, epoch 2015-01-01.
    pub const DISCORD: Layout = preset("discord", 42, 5, 5, 12, 1, 1420070400000, Order::TimeNodeSeq);
    /// Sonyflake: 39 time in 10 ms ticks, 8 sequence, 16 machine id, `time|seq|node`.
    pub const SONYFLAKE: Layout = preset("sonyflake", 39, 0, 16, 8, 10, 1409529600000, Order::TimeSeqNode);
    /// Baidu UidGenerator: 28 bits of seconds, 22 worker, 13 sequence, epoch 2016-05-20.
    pub const BAIDU: Layout = preset("baidu", 28, 0, 22, 13, 1000, 1463702400000, Order::TimeNodeSeq);
    /// Instagram: 41 time, 13 shard, 10 sequence, epoch 2011-08-29.
    pub const INSTAGRAM: Layout = preset("instagram", 41, 0, 13, 10, 1, 1314220021721, Order::TimeNodeSeq);
    /// JavaScript-safe: 41 time, 3 node, 9 sequence (53 bits, so every ID is at most
    /// `Number.MAX_SAFE_INTEGER`), epoch 2019-12-24 (CosId's SafeJavaScriptSnowflakeId).
    /// 8 nodes × 512 IDs per millisecond.
    pub const JS53: Layout = preset("js53", 41, 0, 3, 9, 1, 1577203200000, Order::TimeNodeSeq);

    /// Every preset, default first.
    pub const PRESETS: [Layout; 7] = [
        Layout::SNOWFLAKE,
        Layout::FLAKE,
        Layout::DISCORD,
        Layout::SONYFLAKE,
        Layout::BAIDU,
        Layout::INSTAGRAM,
        Layout::JS53,
    ];

    /// A preset by name (`snowflake`, `flake`, `discord`, `sonyflake`, `baidu`, `instagram`,
    /// `js53`).
    pub fn preset(name: &str) -> Result<Layout> {
        let wanted = name.trim().to_ascii_lowercase();
        Layout::PRESETS
            .iter()
            .find(|l| l.name == Some(wanted.as_str()))
            .copied()
            .ok_or_else(|| {
                let names: Vec<&str> = Layout::PRESETS.iter().filter_map(|l| l.name).collect();
                Error::config(
                    "layout",
                    format!("layout must be one of {}, got {name:?}", names.join(", ")),
                )
            })
    }

    /// A builder for a custom layout (validated by `build`).
    pub fn builder() -> LayoutBuilder {
        LayoutBuilder::default()
    }

    /// The preset's name, or `None` for a custom layout.
    pub fn name(&self) -> Option<&'static str> {
        self.name
    }
    /// Bits of the time field.
    pub fn time_bits(&self) -> u32 {
        self.time_bits.into()
    }
    /// Bits of the datacenter field (0: none).
    pub fn datacenter_bits(&self) -> u32 {
        self.datacenter_bits.into()
    }
    /// Bits of the worker field.
    pub fn worker_bits(&self) -> u32 {
        self.worker_bits.into()
    }
    /// `datacenter_bits + worker_bits`.
    pub fn node_bits(&self) -> u32 {
        u32::from(self.datacenter_bits) + u32::from(self.worker_bits)
    }
    /// Bits of the sequence field.
    pub fn sequence_bits(&self) -> u32 {
        self.sequence_bits.into()
    }
    /// Milliseconds per tick of the time field.
    pub fn tick_ms(&self) -> u64 {
        self.tick_ms
    }
    /// The epoch, Unix milliseconds.
    pub fn epoch_ms(&self) -> u64 {
        self.epoch_ms
    }
    /// The order of the fields within an ID.
    pub fn order(&self) -> Order {
        self.order
    }
    /// Bits used in all; IDs of this layout are below `2^total_bits`.
    pub fn total_bits(&self) -> u32 {
        self.time_bits() + self.node_bits() + self.sequence_bits()
    }
    /// Whether a layout has a single node field (`datacenter` is always 0).
    pub fn single_node_field(&self) -> bool {
        self.datacenter_bits == 0
    }

    /// The largest node id.
    pub fn max_node(&self) -> u64 {
        mask(self.node_bits())
    }
    /// The largest datacenter id.
    pub fn max_datacenter(&self) -> u64 {
        mask(self.datacenter_bits())
    }
    /// The largest worker id.
    pub fn max_worker(&self) -> u64 {
        mask(self.worker_bits())
    }
    /// The largest sequence number of one tick.
    pub fn max_sequence(&self) -> u64 {
        mask(self.sequence_bits())
    }
    /// The sequence width of a generator's counter (`tick << bits | sequence`) under
    /// the option `max_sequence`: the layout's own sequence bits when it is not given,
    /// `k` when it is `2^k - 1` within the sequence field; any other value is refused,
    /// naming `max_sequence`. The IDs keep the layout's field either way.
    pub fn counter_sequence_bits(&self, max_sequence: Option<u64>) -> Result<u32> {
        match max_sequence {
            None => Ok(self.sequence_bits()),
            Some(n) if n <= self.max_sequence() && (n + 1).is_power_of_two() => Ok((n + 1).trailing_zeros()),
            Some(n) => Err(Error::config(
                "max_sequence",
                format!(
                    "max_sequence must be 2^k - 1 in 0..={} (a mask of the sequence field), got {n}",
                    self.max_sequence()
                ),
            )),
        }
    }
    /// The largest tick count the time field holds.
    pub fn max_ticks(&self) -> u64 {
        mask(self.time_bits())
    }
    /// IDs a generator may issue per tick (`2^sequence_bits`).
    pub fn ids_per_tick(&self) -> u64 {
        1u64 << self.sequence_bits
    }
    /// The largest ID this layout can produce.
    pub fn max_id(&self) -> u64 {
        mask(self.total_bits())
    }

    /// The last Unix millisecond this layout can represent.
    pub fn last_timestamp_ms(&self) -> u64 {
        let end = u128::from(self.epoch_ms) + (u128::from(self.max_ticks()) + 1) * u128::from(self.tick_ms) - 1;
        u64::try_from(end).unwrap_or(u64::MAX)
    }

    /// The last Unix millisecond whose IDs leave bit 63 clear (fit a signed BIGINT).
    pub fn signed_until_ms(&self) -> u64 {
        if self.total_bits() <= 63 {
            self.last_timestamp_ms()
        } else {
            self.timestamp_of_ticks(1u64 << (self.time_bits - 1)).saturating_sub(1)
        }
    }

    /// Ticks since the epoch for a Unix-ms time, or `TimeExhausted` when the layout
    /// cannot hold it.
    pub fn ticks_at(&self, timestamp_ms: u64) -> Result<u64> {
        if timestamp_ms < self.epoch_ms {
            return Err(Error::TimeExhausted {
                message: format!(
                    "timestamp {timestamp_ms} ms is before the {} layout's epoch {} ms",
                    self.display_name(),
                    self.epoch_ms
                ),
            });
        }
        let ticks = (timestamp_ms - self.epoch_ms) / self.tick_ms;
        if ticks > self.max_ticks() {
            return Err(Error::TimeExhausted {
                message: format!(
                    "timestamp {timestamp_ms} ms is past the last time the {} layout can hold \
                     ({} ms, {} time bits of {} ms from epoch {} ms)",
                    self.display_name(),
                    self.last_timestamp_ms(),
                    self.time_bits,
                    self.tick_ms,
                    self.epoch_ms
                ),
            });
        }
        Ok(ticks)
    }

    /// The Unix-ms start of a tick.
    pub fn timestamp_of_ticks(&self, ticks: u64) -> u64 {
        let ms = u128::from(self.epoch_ms) + u128::from(ticks) * u128::from(self.tick_ms);
        u64::try_from(ms).unwrap_or(u64::MAX)
    }

    /// The preset's name, or `custom`: how the CLI, the service, the bindings'
    /// `repr`s and the core's own messages name a layout.
    pub fn display_name(&self) -> &'static str {
        self.name.unwrap_or("custom")
    }

    fn time_shift(&self) -> u32 {
        self.node_bits() + self.sequence_bits()
    }
    fn node_shift(&self) -> u32 {
        match self.order {
            Order::TimeNodeSeq => self.sequence_bits(),
            Order::TimeSeqNode => 0,
        }
    }
    fn sequence_shift(&self) -> u32 {
        match self.order {
            Order::TimeNodeSeq => 0,
            Order::TimeSeqNode => self.node_bits(),
        }
    }

    /// Takes an ID apart. Bits above [`Layout::total_bits`] (which this layout never
    /// sets) land in `ticks`; use [`Layout::try_decompose`] to reject them.
    pub fn decompose(&self, id: u64) -> Parts {
        let ticks = shr(id, self.time_shift());
        let node = (id >> self.node_shift()) & self.max_node();
        let sequence = (id >> self.sequence_shift()) & self.max_sequence();
        Parts {
            timestamp_ms: self.timestamp_of_ticks(ticks),
            ticks,
            node,
            datacenter: node >> self.worker_bits,
            worker: node & self.max_worker(),
            sequence,
        }
    }

    /// [`Layout::decompose`], refusing IDs this layout cannot have produced (bits set
    /// above its width).
    pub fn try_decompose(&self, id: u64) -> Result<Parts> {
        if id > self.max_id() {
            return Err(Error::parse(
                0,
                format!(
                    "id {id} does not fit the {} layout: it uses {} bits, so IDs are at most {}",
                    self.display_name(),
                    self.total_bits(),
                    self.max_id()
                ),
            ));
        }
        Ok(self.decompose(id))
    }

    /// Builds an ID from a Unix-ms time (floored to its tick), a node id and a sequence.
    pub fn compose(&self, timestamp_ms: u64, node: u64, sequence: u64) -> Result<u64> {
        let ticks = self.ticks_at(timestamp_ms)?;
        self.check_node(node)?;
        if sequence > self.max_sequence() {
            return Err(Error::out_of_range("sequence", 0, self.max_sequence(), sequence));
        }
        Ok(self.assemble(ticks, node, sequence))
    }

    /// [`Layout::compose`] with the node given as datacenter and worker.
    pub fn compose_parts(&self, timestamp_ms: u64, datacenter: u64, worker: u64, sequence: u64) -> Result<u64> {
        let node = self.node_of(datacenter, worker)?;
        self.compose(timestamp_ms, node, sequence)
    }

    /// `datacenter << worker_bits | worker`, each checked against its range.
    pub fn node_of(&self, datacenter: u64, worker: u64) -> Result<u64> {
        if datacenter > self.max_datacenter() {
            return Err(if self.single_node_field() {
                Error::config(
                    "datacenter",
                    format!(
                        "datacenter must be 0: the {} layout has a single {}-bit node field (use node or worker), got {datacenter}",
                        self.display_name(),
                        self.node_bits()
                    ),
                )
            } else {
                Error::out_of_range("datacenter", 0, self.max_datacenter(), datacenter)
            });
        }
        if worker > self.max_worker() {
            return Err(Error::out_of_range("worker", 0, self.max_worker(), worker));
        }
        Ok(datacenter << self.worker_bits | worker)
    }

    pub(crate) fn check_node(&self, node: u64) -> Result<()> {
        if node > self.max_node() {
            return Err(Error::out_of_range("node", 0, self.max_node(), node));
        }
        Ok(())
    }

    /// Assembles fields already known to be in range.
    pub(crate) fn assemble(&self, ticks: u64, node: u64, sequence: u64) -> u64 {
        shl(ticks, self.time_shift()) | node << self.node_shift() | sequence << self.sequence_shift()
    }

    /// The smallest ID whose time is `timestamp_ms`'s tick (for `id >= first` queries).
    pub fn first_id_at(&self, timestamp_ms: u64) -> Result<u64> {
        Ok(shl(self.ticks_at(timestamp_ms)?, self.time_shift()))
    }

    /// The largest ID whose time is `timestamp_ms`'s tick.
    pub fn last_id_at(&self, timestamp_ms: u64) -> Result<u64> {
        Ok(self.first_id_at(timestamp_ms)? | mask(self.time_shift()))
    }

    /// `(first, last)`: every ID made from `start_ms` to `end_ms` (inclusive) lies in
    /// `first..=last`.
    pub fn id_range(&self, start_ms: u64, end_ms: u64) -> Result<(u64, u64)> {
        if end_ms < start_ms {
            return Err(Error::config(
                "end_ms",
                format!("end_ms must be at least start_ms ({start_ms}), got {end_ms}"),
            ));
        }
        Ok((self.first_id_at(start_ms)?, self.last_id_at(end_ms)?))
    }
}

impl fmt::Debug for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Layout")
            .field("name", &self.name)
            .field("time_bits", &self.time_bits)
            .field("datacenter_bits", &self.datacenter_bits)
            .field("worker_bits", &self.worker_bits)
            .field("sequence_bits", &self.sequence_bits)
            .field("tick_ms", &self.tick_ms)
            .field("epoch_ms", &self.epoch_ms)
            .field("order", &self.order.as_str())
            .finish()
    }
}

impl fmt::Display for Layout {
    /// `snowflake (41 time | 5 datacenter + 5 worker | 12 seq, 1 ms ticks, epoch 1288834974657)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let node = if self.single_node_field() {
            format!("{} node", self.worker_bits)
        } else {
            format!("{} datacenter + {} worker", self.datacenter_bits, self.worker_bits)
        };
        let (mid, last) = match self.order {
            Order::TimeNodeSeq => (node, format!("{} seq", self.sequence_bits)),
            Order::TimeSeqNode => (format!("{} seq", self.sequence_bits), node),
        };
        write!(
            f,
            "{} ({} time | {} | {}, {} ms ticks, epoch {})",
            self.display_name(),
            self.time_bits,
            mid,
            last,
            self.tick_ms,
            self.epoch_ms
        )
    }
}

/// Builds and validates a custom [`Layout`]. Starts from Snowflake's numbers.
///
/// ```
/// use flakeid_core::{Layout, Order};
/// let l = Layout::builder().time_bits(39).node_bits(16).sequence_bits(8)
///     .tick_ms(10).epoch_ms(1409529600000).order(Order::TimeSeqNode).build().unwrap();
/// assert_eq!(l.decompose(l.compose(1409529600000 + 25, 7, 3).unwrap()).node, 7);
/// let err = Layout::builder().time_bits(50).build().unwrap_err();
/// assert!(err.to_string().contains("at most 64"));
/// ```
#[derive(Debug, Clone, Copy)]
pub struct LayoutBuilder {
    time_bits: u32,
    datacenter_bits: u32,
    worker_bits: u32,
    sequence_bits: u32,
    tick_ms: u64,
    epoch_ms: u64,
    order: Order,
    /// `node_bits` was given (a single node field), and whether `datacenter_bits` or
    /// `worker_bits` were too: giving both is an error, decided here for every binding.
    node_field: Option<u32>,
    split_given: bool,
}

impl Default for LayoutBuilder {
    fn default() -> Self {
        let s = Layout::SNOWFLAKE;
        LayoutBuilder {
            time_bits: s.time_bits(),
            datacenter_bits: s.datacenter_bits(),
            worker_bits: s.worker_bits(),
            sequence_bits: s.sequence_bits(),
            tick_ms: s.tick_ms,
            epoch_ms: s.epoch_ms,
            order: s.order,
            node_field: None,
            split_given: false,
        }
    }
}

/// The latest timestamp a layout may reach: 9999-12-31T23:59:59.999Z, the end of
/// Python's `datetime` and well inside JavaScript's `Date` and exact `number`s, so
/// every binding can show every timestamp of every layout.
pub const MAX_TIMESTAMP_MS: u64 = 253_402_300_799_999;

impl LayoutBuilder {
    /// Bits of the time field.
    pub fn time_bits(mut self, bits: u32) -> Self {
        self.time_bits = bits;
        self
    }
    /// A single node field of `bits` (no datacenter part). Not together with
    /// `datacenter_bits`/`worker_bits`.
    pub fn node_bits(mut self, bits: u32) -> Self {
        self.datacenter_bits = 0;
        self.worker_bits = bits;
        self.node_field = Some(bits);
        self
    }
    /// Bits of the datacenter field (0: none, the node id is the worker).
    pub fn datacenter_bits(mut self, bits: u32) -> Self {
        self.datacenter_bits = bits;
        self.split_given = true;
        self
    }
    /// Bits of the worker field.
    pub fn worker_bits(mut self, bits: u32) -> Self {
        self.worker_bits = bits;
        self.split_given = true;
        self
    }
    /// Bits of the sequence field.
    pub fn sequence_bits(mut self, bits: u32) -> Self {
        self.sequence_bits = bits;
        self
    }
    /// Milliseconds per tick (1 for most layouts, 10 for sonyflake).
    pub fn tick_ms(mut self, ms: u64) -> Self {
        self.tick_ms = ms;
        self
    }
    /// The epoch, Unix milliseconds.
    pub fn epoch_ms(mut self, ms: u64) -> Self {
        self.epoch_ms = ms;
        self
    }
    /// The order of the fields within an ID.
    pub fn order(mut self, order: Order) -> Self {
        self.order = order;
        self
    }

    /// Validates against the system clock (an epoch must not be in the future).
    ///
    /// A preset's numbers are that preset, returned without reading the clock (so
    /// callers that rebuild layouts from plain fields, as the C ABI does on every
    /// call, pay nothing for presets). With the `std` feature; without it,
    /// [`build_at`](Self::build_at) takes the time to check against.
    #[cfg(feature = "std")]
    pub fn build(self) -> Result<Layout> {
        if let Some(preset) = self.preset() {
            return Ok(preset);
        }
        self.build_at(crate::clock::precise_now_ms())
    }

    /// The preset with exactly these numbers, if any.
    fn preset(&self) -> Option<Layout> {
        Layout::PRESETS.iter().copied().find(|p| {
            (
                p.time_bits(),
                p.datacenter_bits(),
                p.worker_bits(),
                p.sequence_bits(),
                p.tick_ms,
                p.epoch_ms,
                p.order,
            ) == (
                self.time_bits,
                self.datacenter_bits,
                self.worker_bits,
                self.sequence_bits,
                self.tick_ms,
                self.epoch_ms,
                self.order,
            )
        })
    }

    /// Validates with `now_ms` as the present (for tests and vectors).
    pub fn build_at(self, now_ms: u64) -> Result<Layout> {
        let b = self;
        b.check_widths()?;
        b.check_times(now_ms)?;
        let layout = Layout {
            name: None,
            time_bits: b.time_bits as u8,
            datacenter_bits: b.datacenter_bits as u8,
            worker_bits: b.worker_bits as u8,
            sequence_bits: b.sequence_bits as u8,
            tick_ms: b.tick_ms,
            epoch_ms: b.epoch_ms,
            order: b.order,
        };
        // A layout whose time has run out is still valid: it decodes its old IDs,
        // and a generator on it reports TimeExhausted.
        // A custom layout equal to a preset is that preset.
        Ok(b.preset().unwrap_or(layout))
    }

    /// The field widths: each in its range, and together within 64 bits.
    fn check_widths(&self) -> Result<()> {
        let b = self;
        if let Some(bits) = b.node_field {
            if b.split_given {
                return Err(Error::config(
                    "node_bits",
                    "give either node_bits or datacenter_bits + worker_bits, not both",
                ));
            }
            if bits > 62 {
                return Err(Error::out_of_range("node_bits", 0, 62, bits));
            }
        }
        if !(1..=63).contains(&b.time_bits) {
            return Err(Error::out_of_range("time_bits", 1, 63, b.time_bits));
        }
        if !(1..=62).contains(&b.sequence_bits) {
            return Err(Error::out_of_range("sequence_bits", 1, 62, b.sequence_bits));
        }
        if b.datacenter_bits > 62 {
            return Err(Error::out_of_range("datacenter_bits", 0, 62, b.datacenter_bits));
        }
        if b.worker_bits > 62 {
            return Err(Error::out_of_range("worker_bits", 0, 62, b.worker_bits));
        }
        let total = b.time_bits + b.datacenter_bits + b.worker_bits + b.sequence_bits;
        if total > 64 {
            return Err(Error::config(
                "time_bits",
                format!(
                    "time_bits + datacenter_bits + worker_bits + sequence_bits must be at most 64, \
                     got {} + {} + {} + {} = {total}",
                    b.time_bits, b.datacenter_bits, b.worker_bits, b.sequence_bits
                ),
            ));
        }
        if b.time_bits + b.sequence_bits > 63 {
            // The generator's (time, sequence) counter is one u64 with a spare bit.
            return Err(Error::config(
                "sequence_bits",
                format!(
                    "time_bits + sequence_bits must be at most 63, got {} + {} = {}",
                    b.time_bits,
                    b.sequence_bits,
                    b.time_bits + b.sequence_bits
                ),
            ));
        }
        Ok(())
    }

    /// The tick, the epoch (not in the future: `now_ms`), and the last tick's end
    /// (a time every binding can represent).
    fn check_times(&self, now_ms: u64) -> Result<()> {
        let b = self;
        if !(1..=MAX_TICK_MS).contains(&b.tick_ms) {
            return Err(Error::out_of_range("tick_ms", 1, MAX_TICK_MS, b.tick_ms));
        }
        if b.epoch_ms > now_ms {
            return Err(Error::out_of_range(
                "epoch_ms",
                0,
                now_ms,
                format_args!("{} (in the future)", b.epoch_ms),
            ));
        }
        // The last tick's end must be a time every binding can represent.
        let end = u128::from(b.epoch_ms) + u128::from(b.tick_ms) * (1u128 << b.time_bits) - 1;
        if end > u128::from(MAX_TIMESTAMP_MS) {
            return Err(Error::config(
                "time_bits",
                format!(
                    "time_bits = {} ticks of tick_ms = {} from epoch_ms = {} run past 9999-12-31 \
                     (timestamps must stay at most {MAX_TIMESTAMP_MS} ms so that every language can represent them): \
                     use fewer time_bits or a shorter tick_ms",
                    b.time_bits, b.tick_ms, b.epoch_ms
                ),
            ));
        }
        Ok(())
    }
}

/// One field of a custom layout, as every binding's layout constructor takes it
/// (Python keywords, JS `LayoutOptions` keys, the C struct's fields, the vectors'
/// layout specs): set by name through [`LayoutBuilder::set`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LayoutField {
    /// snake_case: Python keywords, C fields, vectors, error fields.
    pub name: &'static str,
    /// camelCase: the keys of `new Layout({...})` in the JS packages.
    pub camel_name: &'static str,
    /// The smallest value (numeric fields).
    pub min: u64,
    /// The largest value (numeric fields; `epoch_ms` is also at most now).
    pub max: u64,
    /// Snowflake's value, as text (`""`: none, `node_bits` is not set by default).
    pub default: &'static str,
    /// One line for help texts.
    pub doc: &'static str,
}

const fn field(
    name: &'static str,
    camel_name: &'static str,
    range: (u64, u64),
    default: &'static str,
    doc: &'static str,
) -> LayoutField {
    LayoutField {
        name,
        camel_name,
        min: range.0,
        max: range.1,
        default,
        doc,
    }
}

const MAX_BITS: (u64, u64) = (0, 62);
const MAX_TICK_MS: u64 = 86_400_000;

/// Every field of [`Layout::builder`], in the order the constructors list them.
#[rustfmt::skip]
pub const LAYOUT_FIELDS: [LayoutField; 8] = [
    field("time_bits", "timeBits", (1, 63), "41", "bits of the time field"),
    field("node_bits", "nodeBits", MAX_BITS, "",
        "a single node field of this width (instead of datacenter_bits + worker_bits)"),
    field("datacenter_bits", "datacenterBits", MAX_BITS, "5", "bits of the datacenter field (0: none)"),
    field("worker_bits", "workerBits", MAX_BITS, "5", "bits of the worker field"),
    field("sequence_bits", "sequenceBits", (1, 62), "12", "bits of the sequence field"),
    field("tick_ms", "tickMs", (1, MAX_TICK_MS), "1", "milliseconds per tick of the time field"),
    field("epoch_ms", "epochMs", (0, u64::MAX), "1288834974657", "the epoch, Unix milliseconds (not in the future)"),
    field("order", "order", (0, 0), "time|node|seq", "the order of the fields: time|node|seq or time|seq|node"),
];

/// The fields' snake_case names, for messages.
pub const LAYOUT_FIELD_NAMES: [&str; LAYOUT_FIELDS.len()] = column!(LAYOUT_FIELDS, name);

/// The layout field named `name` (snake_case or camelCase).
pub fn layout_field(name: &str) -> Option<&'static LayoutField> {
    LAYOUT_FIELDS.iter().find(|f| f.name == name || f.camel_name == name)
}

/// A number every layout has, derived or not: what bindings show as getters.
#[derive(Clone, Copy)]
pub struct LayoutNumber {
    /// snake_case (Python, C's `flakeid_layout_limits`, vectors).
    pub name: &'static str,
    /// camelCase (the JS packages).
    pub camel_name: &'static str,
    /// The accessor.
    pub get: fn(&Layout) -> u64,
}

impl fmt::Debug for LayoutNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

macro_rules! numbers {
    ($($name:ident / $js:literal),* $(,)?) => {
        [$(LayoutNumber { name: stringify!($name), camel_name: $js, get: |l| l.$name().into() }),*]
    };
}

/// A layout's numbers, each with its accessor: its fields, then what follows from
/// them. Every one fits a JS `number` except `max_id`.
pub const LAYOUT_NUMBERS: [LayoutNumber; 16] = numbers![
    time_bits / "timeBits",
    datacenter_bits / "datacenterBits",
    worker_bits / "workerBits",
    node_bits / "nodeBits",
    sequence_bits / "sequenceBits",
    tick_ms / "tickMs",
    epoch_ms / "epochMs",
    total_bits / "totalBits",
    max_node / "maxNode",
    max_datacenter / "maxDatacenter",
    max_worker / "maxWorker",
    max_sequence / "maxSequence",
    ids_per_tick / "idsPerTick",
    max_id / "maxId",
    last_timestamp_ms / "lastTimestampMs",
    signed_until_ms / "signedUntilMs",
];

#[cfg(feature = "std")]
impl LayoutBuilder {
    /// Sets the field `name` (snake_case or camelCase; see [`LAYOUT_FIELDS`]) from a
    /// binding's converted value: the one path by which every binding's layout
    /// constructor sets fields. A width past `u32` is refused with the field's range
    /// here; every other range is checked by `build`.
    pub fn set(self, name: &str, value: OptionValue<'_>) -> Result<Self> {
        let Some(f) = layout_field(name) else {
            return Err(unknown_option(name, &LAYOUT_FIELD_NAMES));
        };
        let bits = |v: u64| u32::try_from(v).map_err(|_| Error::out_of_range(f.name, f.min, f.max, v));
        Ok(match (f.name, value) {
            ("time_bits", OptionValue::Uint(v)) => self.time_bits(bits(v)?),
            ("node_bits", OptionValue::Uint(v)) => self.node_bits(bits(v)?),
            ("datacenter_bits", OptionValue::Uint(v)) => self.datacenter_bits(bits(v)?),
            ("worker_bits", OptionValue::Uint(v)) => self.worker_bits(bits(v)?),
            ("sequence_bits", OptionValue::Uint(v)) => self.sequence_bits(bits(v)?),
            ("tick_ms", OptionValue::Uint(v)) => self.tick_ms(v),
            ("epoch_ms", OptionValue::Uint(v)) => self.epoch_ms(v),
            ("order", OptionValue::Text(s)) => self.order(s.parse()?),
            (_, OptionValue::Uint(v)) => {
                return Err(Error::config(
                    f.name,
                    format!("{} must be a string, got the number {v}", f.name),
                ));
            }
            (_, OptionValue::Text(s)) => {
                return Err(Error::config(
                    f.name,
                    format!("{} must be a whole number, got the text {}", f.name, shown(s)),
                ));
            }
        })
    }

    /// [`set`](Self::set) from text: a whole number for the numeric fields.
    pub fn set_text(self, name: &str, text: &str) -> Result<Self> {
        match layout_field(name) {
            Some(f) if f.name != "order" => {
                let v = text.trim().parse().map_err(|_| {
                    Error::config(
                        f.name,
                        format!(
                            "{} must be a whole number in {}..={}, got {}",
                            f.name,
                            f.min,
                            f.max,
                            shown(text)
                        ),
                    )
                })?;
                self.set(f.name, OptionValue::Uint(v))
            }
            _ => self.set(name, OptionValue::Text(text)),
        }
    }
}

#[inline]
pub(crate) const fn mask(bits: u32) -> u64 {
    if bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 }
}

#[inline]
const fn shl(v: u64, by: u32) -> u64 {
    if by >= 64 { 0 } else { v << by }
}

#[inline]
const fn shr(v: u64, by: u32) -> u64 {
    if by >= 64 { 0 } else { v >> by }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_round_trip_through_their_names() {
        for o in [Order::TimeNodeSeq, Order::TimeSeqNode] {
            assert_eq!(o.to_string(), o.as_str());
            assert_eq!(o.to_string().parse::<Order>().ok(), Some(o));
            assert_eq!(o.to_string().replace('|', ",").parse::<Order>().ok(), Some(o));
        }
        match "nope".parse::<Order>() {
            Err(Error::Config { field, message }) => assert_eq!(
                (field, message.as_str()),
                (
                    "order",
                    r#"order must be "time|node|seq" or "time|seq|node", got "nope""#
                )
            ),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn seed_001_vector() {
        let id = Layout::SNOWFLAKE.compose_parts(1505914988849, 17, 25, 0).unwrap();
        assert_eq!(id, 910499571847892992);
        let p = Layout::SNOWFLAKE.decompose(id);
        assert_eq!(p.timestamp_ms, 1505914988849);
        assert_eq!((p.datacenter, p.worker, p.node, p.sequence), (17, 25, 17 << 5 | 25, 0));
    }

    #[test]
    fn presets_have_the_contract_numbers() {
        let rows: Vec<_> = Layout::PRESETS
            .iter()
            .map(|l| {
                (
                    l.name().unwrap(),
                    l.time_bits(),
                    l.node_bits(),
                    l.sequence_bits(),
                    l.tick_ms(),
                    l.epoch_ms(),
                )
            })
            .collect();
        assert_eq!(
            rows,
            vec![
                ("snowflake", 41, 10, 12, 1, 1288834974657),
                ("flake", 42, 10, 12, 1, 0),
                ("discord", 42, 10, 12, 1, 1420070400000),
                ("sonyflake", 39, 16, 8, 10, 1409529600000),
                ("baidu", 28, 22, 13, 1000, 1463702400000),
                ("instagram", 41, 13, 10, 1, 1314220021721),
                ("js53", 41, 3, 9, 1, 1577203200000),
            ]
        );
        // js53's every ID is a safe JavaScript integer (at most 2^53 - 1).
        assert_eq!(Layout::JS53.max_id(), (1 << 53) - 1);
        for l in Layout::PRESETS {
            assert_eq!(Layout::preset(l.name().unwrap()).unwrap(), l);
            // A preset's numbers, given field by field, are that preset (baidu's too,
            // whose time has run out), whether validated now or at its own epoch.
            let b = Layout::builder()
                .time_bits(l.time_bits())
                .datacenter_bits(l.datacenter_bits())
                .worker_bits(l.worker_bits())
                .sequence_bits(l.sequence_bits())
                .tick_ms(l.tick_ms())
                .epoch_ms(l.epoch_ms())
                .order(l.order());
            assert_eq!(b.build().unwrap().name(), l.name());
            assert_eq!(b.build_at(l.epoch_ms()).unwrap().name(), l.name());
            // snowflake, sonyflake and baidu never set the sign bit; discord and
            // instagram use 64 bits by their published numbers, so theirs stays 0 only
            // until 2084 and 2046; flake (Unix epoch) until 2039.
            let signed_until_year = 1970 + l.signed_until_ms() / 31_556_952_000;
            let want = match l.name().unwrap() {
                "flake" => 2039,
                "discord" => 2084,
                "instagram" => 2046,
                _ => 1970 + l.last_timestamp_ms() / 31_556_952_000,
            };
            assert_eq!(signed_until_year, want, "{l}");
        }
        assert_eq!(Layout::SONYFLAKE.order(), Order::TimeSeqNode);
    }

    #[test]
    fn builder_errors_name_the_field_and_range() {
        let cases: Vec<(LayoutBuilder, &str, &str)> = vec![
            (Layout::builder().time_bits(0), "time_bits", "1..=63"),
            (Layout::builder().sequence_bits(0), "sequence_bits", "1..=62"),
            (Layout::builder().tick_ms(0), "tick_ms", "1..=86400000"),
            (Layout::builder().time_bits(43), "time_bits", "at most 64"),
            (Layout::builder().epoch_ms(u64::MAX / 2), "epoch_ms", "in the future"),
        ];
        for (b, field, text) in cases {
            match b.build() {
                Err(Error::Config { field: f, message }) => {
                    assert_eq!(f, field, "{message}");
                    assert!(message.contains(text), "{message:?} should contain {text:?}");
                }
                other => panic!("expected a config error for {field}, got {other:?}"),
            }
        }
    }

    /// The table's defaults are Snowflake's, its ranges the builder's, and every
    /// field set by name (either spelling) is the typed setter.
    #[test]
    fn layout_fields_are_the_builders() {
        let field = |r: Result<Layout>| match r {
            Err(Error::Config { field, message }) => (field, message),
            other => panic!("{other:?}"),
        };
        for f in LAYOUT_FIELDS {
            assert_eq!(f.name.replace('_', ""), f.camel_name.to_ascii_lowercase());
            assert_eq!(layout_field(f.camel_name), Some(&f));
            let default = Layout::builder().set_text(f.name, f.default);
            if f.default.is_empty() {
                continue;
            }
            assert_eq!(default.and_then(|b| b.build()).ok(), Some(Layout::SNOWFLAKE), "{f:?}");
            if f.name == "order" {
                continue;
            }
            // Past the range, and past a u32 (refused by `set` with the same range).
            for bad in [f.max.saturating_add(1), u64::from(u32::MAX) + 1] {
                if f.name != "epoch_ms" {
                    let r = Layout::builder().set(f.camel_name, OptionValue::Uint(bad));
                    let (name, message) = field(r.and_then(|b| b.build()));
                    assert_eq!(name, f.name);
                    assert!(message.contains(&format!("{}..={}", f.min, f.max)), "{message}");
                }
            }
        }
        let b = Layout::builder()
            .set("nodeBits", OptionValue::Uint(16))
            .and_then(|b| b.set_text("sequenceBits", " 8 ")?.set_text("timeBits", "39"))
            .and_then(|b| b.set_text("order", "time,seq,node"));
        let l = b.and_then(|b| b.build_at(u64::MAX)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            (l.node_bits(), l.datacenter_bits(), l.order()),
            (16, 0, Order::TimeSeqNode)
        );
        assert_eq!(
            field(
                Layout::builder()
                    .set("timebits", OptionValue::Uint(1))
                    .and_then(|b| b.build())
            )
            .0,
            "options"
        );
        assert_eq!(
            field(Layout::builder().set_text("tick_ms", "x").and_then(|b| b.build())).0,
            "tick_ms"
        );
        assert_eq!(
            field(
                Layout::builder()
                    .set("order", OptionValue::Uint(1))
                    .and_then(|b| b.build())
            )
            .0,
            "order"
        );
        assert_eq!(
            field(
                Layout::builder()
                    .set("time_bits", OptionValue::Text("1"))
                    .and_then(|b| b.build())
            )
            .0,
            "time_bits"
        );
        let s = Layout::SNOWFLAKE;
        let numbers: Vec<(&str, u64)> = LAYOUT_NUMBERS.iter().map(|n| (n.name, (n.get)(&s))).collect();
        assert_eq!(
            numbers[..3],
            [("time_bits", 41), ("datacenter_bits", 5), ("worker_bits", 5)]
        );
        assert_eq!(numbers.last(), Some(&("signed_until_ms", s.signed_until_ms())));
        for n in LAYOUT_NUMBERS {
            assert_eq!(n.name.replace('_', ""), n.camel_name.to_ascii_lowercase());
        }
    }

    #[test]
    fn compose_rejects_every_out_of_range_part() {
        let l = Layout::SNOWFLAKE;
        let t = 1_600_000_000_000;
        assert!(matches!(
            l.compose(t, 1024, 0),
            Err(Error::Config { field: "node", .. })
        ));
        assert!(matches!(
            l.compose(t, 0, 4096),
            Err(Error::Config { field: "sequence", .. })
        ));
        assert!(matches!(
            l.compose_parts(t, 32, 0, 0),
            Err(Error::Config {
                field: "datacenter",
                ..
            })
        ));
        assert!(matches!(
            l.compose_parts(t, 0, 32, 0),
            Err(Error::Config { field: "worker", .. })
        ));
        assert!(matches!(
            l.compose(l.epoch_ms() - 1, 0, 0),
            Err(Error::TimeExhausted { .. })
        ));
        assert!(matches!(
            l.compose(l.last_timestamp_ms() + 1, 0, 0),
            Err(Error::TimeExhausted { .. })
        ));
        assert_eq!(l.compose(l.last_timestamp_ms(), 1023, 4095).unwrap(), (1 << 63) - 1);
        assert!(Layout::SONYFLAKE.compose_parts(t, 1, 0, 0).is_err());
    }

    #[test]
    fn id_range_brackets_every_id_of_the_interval() {
        let l = Layout::SONYFLAKE;
        let (lo, hi) = l.id_range(1_700_000_000_000, 1_700_000_000_999).unwrap();
        for (t, n, s) in [
            (1_700_000_000_000, 0, 0),
            (1_700_000_000_999, 65535, 255),
            (1_700_000_000_500, 3, 7),
        ] {
            let id = l.compose(t, n, s).unwrap();
            assert!(lo <= id && id <= hi);
        }
        assert!(l.compose(1_700_000_001_000, 0, 0).unwrap() > hi);
        assert!(l.compose(1_699_999_999_999, 65535, 255).unwrap() < lo);
    }
}
