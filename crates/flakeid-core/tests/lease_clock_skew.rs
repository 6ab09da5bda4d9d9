//! A store that reports its clock: an acquirer whose clock is behind it by more
//! than the margin refuses to start (docs/leases.md, point 6; docs/faults.md, bug
//! 3: with a clock that far behind, a holder of an id the store forgot repeated
//! IDs its old holder had issued). Also: a custom store builds `Acquired` through
//! its constructor (the struct is `#[non_exhaustive]`).
#![cfg(feature = "lease")]
#![allow(clippy::unwrap_used)]

use flakeid_core::lease::{Acquired, LeaseSpec, LeaseStore};
use flakeid_core::{Error, Generator, Layout, ManualClock, Result, precise_now_ms};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Grants node 5 and every renewal; its clock is this host's shifted by `ahead_ms`
/// (`None`: it reports no clock). Counts releases.
#[derive(Debug)]
struct SkewedStore {
    ahead_ms: Option<i64>,
    released: Arc<AtomicU64>,
}

impl LeaseStore for SkewedStore {
    fn describe(&self) -> String {
        "skewed test store".into()
    }
    fn namespace(&self) -> &str {
        "skew"
    }
    fn acquire(&mut self, _: u64, _: &str, _: u64, _: Instant) -> Result<Option<Acquired>> {
        // An old namespace (no lock delay) and no fence.
        let got = Acquired::new(5, 0, u64::MAX / 2);
        Ok(Some(match self.ahead_ms {
            Some(a) => got.with_store_now_ms(precise_now_ms().saturating_add_signed(a)),
            None => got,
        }))
    }
    fn renew(&mut self, _: u64, _: &str, _: u64, _: u64, _: Instant) -> Result<bool> {
        Ok(true)
    }
    fn release(&mut self, _: u64, _: &str, _: u64, _: Instant) -> Result<()> {
        self.released.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

fn build(ahead_ms: Option<i64>, clock: Option<ManualClock>) -> (Result<Generator>, u64) {
    let released = Arc::new(AtomicU64::new(0));
    let r = released.clone();
    let spec = LeaseSpec::custom(move || {
        Ok(Box::new(SkewedStore {
            ahead_ms,
            released: r.clone(),
        }))
    });
    let mut b = Generator::builder(Layout::SNOWFLAKE).lease(spec).lease_ttl_ms(1_000); // margin 200 ms
    if let Some(c) = clock {
        b = b.clock(c);
    }
    let g = b.build();
    let n = released.load(Ordering::SeqCst);
    (g, n)
}

#[test]
fn a_store_clock_ahead_by_more_than_the_margin_is_refused() {
    let (g, released) = build(Some(8_000), None);
    let e = g.unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, Error::Lease { .. }), "{msg}");
    for want in [
        "node id 5",
        "this host's clock reads",
        "the store's",
        "behind",
        "200 ms margin",
    ] {
        assert!(msg.contains(want), "{want:?} missing from: {msg}");
    }
    // The id taken is given back at once, not left to expire.
    assert_eq!(released, 1, "{msg}");
}

#[test]
fn a_host_clock_behind_the_store_is_refused() {
    // This host's clock (injected) 8 s behind; the store's is the real one.
    let clock = ManualClock::new(precise_now_ms() - 8_000);
    let (g, _) = build(Some(0), Some(clock));
    let msg = g.unwrap_err().to_string();
    assert!(msg.contains("behind") && msg.contains("Fix this host's clock"), "{msg}");
    let lag: u64 = msg
        .split(": ")
        .find_map(|p| p.strip_suffix(" ms behind, more than the 200 ms margin that leases allow between clocks (with a clock that far behind, IDs could repeat ones issued before the store lost its data). Fix this host's clock (NTP)"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no lag in: {msg}"));
    assert!((8_000..9_000).contains(&lag), "{msg}");
}

#[test]
fn clocks_within_the_margin_or_no_store_clock_build() {
    for (ahead, clock) in [
        (Some(100), None),                                         // store 100 ms ahead: within 200
        (Some(-5_000), None),                                      // this host ahead: harmless
        (None, Some(ManualClock::new(precise_now_ms() - 60_000))), // no store clock: nothing to check
    ] {
        let (g, _) = build(ahead, clock);
        let g = g.unwrap_or_else(|e| panic!("{ahead:?}: {e}"));
        assert_eq!(g.node(), 5);
    }
}

#[test]
fn acquired_builds_through_its_constructor() {
    let a = Acquired::new(3, 1_700_000_000_000, 42);
    assert_eq!(
        (a.node, a.last_ms, a.incarnation_age_ms, a.store_now_ms),
        (3, 1_700_000_000_000, 42, None)
    );
    assert_eq!(a.with_store_now_ms(7).store_now_ms, Some(7));
}
