//! IDs by time range, at microsecond precision (what databases and most languages'
//! datetimes hold): the rule behind the PostgreSQL extension's `flakeid_range`.

use crate::layout::Layout;
use core::ops::Bound;

impl Layout {
    /// The IDs whose time — the start of their tick, as [`Layout::decompose`] gives it
    /// — lies between `start` and `end` (Unix microseconds, each bound included,
    /// excluded or unbounded), as `(first, last)`: `first <= id <= last` exactly when
    /// the ID's time is in the range. `None` when no tick of this layout starts in it.
    ///
    /// ```
    /// use flakeid_core::Layout;
    /// use core::ops::Bound::{Excluded, Included};
    /// let day = Layout::SNOWFLAKE.ids_with_time_in(Included(1_700_000_000_000_000), Excluded(1_700_086_400_000_000));
    /// let (first, last) = day.unwrap();
    /// assert_eq!(first, Layout::SNOWFLAKE.first_id_at(1_700_000_000_000)?);
    /// assert_eq!(last, Layout::SNOWFLAKE.last_id_at(1_700_086_399_999)?);
    /// # Ok::<(), flakeid_core::Error>(())
    /// ```
    pub fn ids_with_time_in(&self, start: Bound<i128>, end: Bound<i128>) -> Option<(u64, u64)> {
        let epoch_us = i128::from(self.epoch_ms()) * 1000;
        let tick_us = i128::from(self.tick_ms()) * 1000;
        let max_ticks = i128::from(self.max_ticks());
        // The first tick starting at or after `start` (after, when excluded).
        let first = match start {
            Bound::Unbounded => 0,
            Bound::Included(t) => ceil_div(t - epoch_us, tick_us).max(0),
            Bound::Excluded(t) => ((t - epoch_us).div_euclid(tick_us) + 1).max(0),
        };
        // The last tick starting at or before `end` (before, when excluded).
        let last = match end {
            Bound::Unbounded => max_ticks,
            Bound::Included(t) => (t - epoch_us).div_euclid(tick_us),
            Bound::Excluded(t) => ceil_div(t - epoch_us, tick_us) - 1,
        }
        .min(max_ticks);
        if first > last {
            return None;
        }
        // In 0..=max_ticks, so they fit u64 and are representable ticks.
        let (first, last) = (first as u64, last as u64);
        Some((
            self.assemble(first, 0, 0),
            self.assemble(last, self.max_node(), self.max_sequence()),
        ))
    }
}

fn ceil_div(a: i128, b: i128) -> i128 {
    -(-a).div_euclid(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::ops::Bound::{Excluded, Included, Unbounded};
    use core::ops::RangeBounds;

    /// Brute force: the ID of every tick start near the bounds, checked against the range.
    #[test]
    fn exactly_the_ids_whose_time_is_in_the_range() {
        for layout in [Layout::SNOWFLAKE, Layout::SONYFLAKE, Layout::BAIDU] {
            let base = 1_700_000_000_000_000i128; // Unix µs
            let tick_us = i128::from(layout.tick_ms()) * 1000;
            let offsets = [
                -2 * tick_us - 1,
                -tick_us,
                -1,
                0,
                1,
                250,
                tick_us - 1,
                tick_us,
                tick_us + 1,
                3 * tick_us,
            ];
            let bounds = |t: i128| [Included(t), Excluded(t), Unbounded];
            for &a in &offsets {
                for &b in &offsets {
                    for lo in bounds(base + a) {
                        for hi in bounds(base + b) {
                            let range = layout.ids_with_time_in(lo, hi);
                            for k in -4i128..=5 {
                                let tick_start_us = base.div_euclid(tick_us) * tick_us + k * tick_us;
                                let ms = (tick_start_us / 1000) as u64;
                                let id = layout.first_id_at(ms).unwrap();
                                let in_time = (lo, hi).contains(&tick_start_us);
                                let in_ids = range.is_some_and(|(f, l)| f <= id && id <= l);
                                assert_eq!(in_time, in_ids, "{layout:?} {lo:?}..{hi:?} tick at {tick_start_us}");
                                let last = layout.last_id_at(ms).unwrap();
                                assert_eq!(in_time, range.is_some_and(|(f, l)| f <= last && last <= l));
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn edges() {
        let l = Layout::SNOWFLAKE;
        assert_eq!(l.ids_with_time_in(Unbounded, Unbounded), Some((0, l.max_id())));
        let epoch_us = i128::from(l.epoch_ms()) * 1000;
        assert_eq!(l.ids_with_time_in(Unbounded, Excluded(epoch_us)), None);
        assert_eq!(
            l.ids_with_time_in(Unbounded, Included(epoch_us)),
            Some((0, l.last_id_at(l.epoch_ms()).unwrap()))
        );
        assert_eq!(
            l.ids_with_time_in(Included(i128::from(i64::MIN)), Included(epoch_us - 1)),
            None
        );
        let end_us = i128::from(l.last_timestamp_ms()) * 1000;
        assert_eq!(l.ids_with_time_in(Excluded(end_us), Unbounded), None);
        assert_eq!(
            l.ids_with_time_in(Included(end_us + 5_000_000), Included(end_us + 9_000_000)),
            None
        );
        assert_eq!(l.ids_with_time_in(Included(5), Excluded(5)), None);
    }
}
