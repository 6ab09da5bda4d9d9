//! The 128-bit generator: RFC 9562's bits, monotonic within a millisecond and
//! across threads, the clock policies, and a forked child that goes on.

#![allow(clippy::unwrap_used)]

mod common;
use common::*;
use flakeid_core::{ClockBackwards, Error, ErrorKind, ManualClock, Overflow, UuidGenerator, Wide};
use std::collections::HashSet;

const T: u64 = 1_764_000_000_000;

fn counter_of(u: u128) -> u64 {
    let (_, rand_a, rand_b) = Wide(u).decompose_uuid7().unwrap();
    u64::from(rand_a) << 4 | rand_b >> 58
}

/// A generator on a manual clock at `t` that may run 10 ms ahead of it.
fn borrowing_at(t: u64) -> UuidGenerator {
    let clock = ManualClock::new(t);
    UuidGenerator::builder().clock(clock).max_borrow_ms(10).build().unwrap()
}

#[test]
fn a_hundred_thousand_in_one_millisecond_strictly_increase() {
    let g = borrowing_at(T);
    let mut last = 0u128;
    for i in 0..100_000u64 {
        let u = g.next_uuid7().unwrap();
        assert!(u > last, "ID {i} is not above the one before it");
        assert_eq!(Wide(u).version(), 7);
        assert_eq!(u >> 62 & 0b11, 0b10, "variant");
        // The counter runs 0..=65535 in each millisecond, then the next one's.
        let ms = Wide(u).uuid7_timestamp_ms().unwrap();
        assert_eq!((ms, counter_of(u)), (T + i / 65_536, i % 65_536), "ID {i}");
        last = u;
    }
    let s = g.stats();
    assert_eq!(s.ids_issued, 100_000);
    assert_eq!(s.lead_ms, 1, "borrowed one millisecond ahead of the clock");
}

#[test]
fn the_borrow_bound_then_waits_or_refuses() {
    let clock = ManualClock::new(T);
    let g = UuidGenerator::builder()
        .clock(clock.clone())
        .max_borrow_ms(1)
        .max_wait_ms(0)
        .build()
        .unwrap();
    for _ in 0..2 * 65_536 {
        g.next_uuid7().unwrap();
    }
    // Both milliseconds used and the clock frozen: no third, never a repeat.
    let e = g.next_uuid7().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ClockMovedBackwards, "{e}");
    clock.set(T + 2);
    assert_eq!(Wide(g.next_uuid7().unwrap()).uuid7_timestamp_ms().unwrap(), T + 2);
}

#[test]
fn wait_overflow_never_runs_ahead() {
    let clock = ManualClock::new(T);
    let g = UuidGenerator::builder()
        .clock(clock.clone())
        .overflow(Overflow::Wait)
        .max_wait_ms(0)
        .build()
        .unwrap();
    for _ in 0..65_536 {
        assert_eq!(Wide(g.next_uuid7().unwrap()).uuid7_timestamp_ms().unwrap(), T);
    }
    assert!(g.next_uuid7().is_err(), "the millisecond is full and the clock frozen");
}

#[test]
fn a_clock_that_goes_back_follows_the_policy() {
    let clock = ManualClock::new(T);
    let strict = UuidGenerator::builder().clock(clock.clone()).build().unwrap();
    let before = strict.next_uuid7().unwrap();
    // Borrowing (the default) rides out a rollback within max_borrow_ms (2 s) as
    // a lead; beyond it, clock_backwards decides.
    clock.set(T - 5);
    assert_eq!(Wide(strict.next_uuid7().unwrap()).uuid7_timestamp_ms().unwrap(), T);
    clock.set(T - 5_000);
    let e = strict.next_uuid7().unwrap_err();
    assert!(matches!(e, Error::ClockMovedBackwards { by_ms: 5_000 }), "{e}");
    assert!(strict.stats().clock_rollbacks >= 1);

    clock.set(T);
    let steady = UuidGenerator::builder()
        .clock(clock.clone())
        .clock_backwards(ClockBackwards::Monotonic)
        .build()
        .unwrap();
    let a = steady.next_uuid7().unwrap();
    clock.set(T - 5_000);
    let b = steady.next_uuid7().unwrap();
    assert!(
        b > a && Wide(b).uuid7_timestamp_ms().unwrap() == T,
        "monotonic keeps the last millisecond"
    );
    // Two generators are two counters: the same (ms, counter) prefix, random tails apart.
    assert_eq!(before >> 58, a >> 58);
    assert_ne!(before, a);
}

#[test]
fn threads_sharing_one_generator_never_repeat_and_each_sees_increase() {
    let g = UuidGenerator::builder().build().unwrap();
    let per_thread: Vec<Vec<u128>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|_| s.spawn(|| (0..50_000).map(|_| g.next_uuid7().unwrap()).collect::<Vec<_>>()))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut all = HashSet::new();
    for ids in &per_thread {
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "a thread's IDs went down");
        for &u in ids {
            assert!(all.insert(u), "a repeat: {u:032x}");
            // Within one process the (ms, counter) prefix alone is unique.
            assert!(all.len() <= 200_000);
        }
    }
    let prefixes: HashSet<u128> = all.iter().map(|u| u >> 58).collect();
    assert_eq!(prefixes.len(), all.len(), "two IDs shared a (ms, counter) prefix");
}

#[test]
fn text_forms_are_one_value() {
    let g = UuidGenerator::builder().build().unwrap();
    let text = g.next_uuid7_string().unwrap();
    let u = Wide::parse_uuid(&text).unwrap();
    assert_eq!(u.version(), 7);
    let ulid = g.next_ulid().unwrap();
    assert!(Wide::parse_ulid(&ulid).unwrap() > u);
    let typeid = g.next_typeid("user").unwrap();
    let (prefix, v) = Wide::parse_typeid(&typeid).unwrap();
    assert_eq!(prefix, "user");
    assert!(v > Wide::parse_ulid(&ulid).unwrap());
    let before = g.stats().ids_issued;
    let e = g.next_typeid("User").unwrap_err();
    assert_eq!(e.details().field, Some("prefix"));
    assert_eq!(g.stats().ids_issued, before, "a bad prefix costs no ID");
    g.close();
    assert_eq!(g.next_uuid7().unwrap_err().details().field, Some("generator"));
}

/// A forked child goes on (no node id to keep apart): above everything the parent
/// had returned, and with random bits of its own, so that parent and child, which
/// share the (ms, counter) prefixes from the fork on, never give the same ID.
#[cfg(unix)]
#[test]
fn a_forked_child_goes_on_with_random_bits_of_its_own() {
    use std::io::{Read, Write};
    let clock = ManualClock::new(T);
    let g = UuidGenerator::builder().clock(clock.clone()).build().unwrap();
    let before: Vec<u128> = (0..100).map(|_| g.next_uuid7().unwrap()).collect();
    let mut fds = [0i32; 2];
    // SAFETY: a plain pipe for the child's IDs.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // The child calls into the generator and writes to the pipe.
    let pid = fork(|| {
        // SAFETY: the child's copy of the pipe's write end.
        let mut w = unsafe { <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(fds[1]) };
        let mut out = Vec::new();
        let mut code = 0;
        for _ in 0..1_000 {
            match g.next_uuid7() {
                Ok(u) => out.extend_from_slice(&u.to_be_bytes()),
                Err(_) => code = 1,
            }
        }
        if g.stats().reseeds != 1 {
            code = 2;
        }
        if w.write_all(&out).is_err() {
            code = 3;
        }
        drop(w);
        code
    });
    // SAFETY: the parent closes its copy of the write end.
    unsafe { libc::close(fds[1]) };
    let after: Vec<u128> = (0..1_000).map(|_| g.next_uuid7().unwrap()).collect();
    // SAFETY: the read end, owned from here.
    let mut r = unsafe { <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(fds[0]) };
    let mut bytes = Vec::new();
    r.read_to_end(&mut bytes).unwrap();
    assert_eq!(exit_code(pid), 0, "1: the child refused; 2: stats().reseeds was not 1");
    let child: Vec<u128> = bytes
        .chunks(16)
        .map(|c| u128::from_be_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(child.len(), 1_000);
    let last_before = *before.last().unwrap();
    assert!(
        child.iter().all(|&u| u > last_before),
        "the child went below the parent's IDs"
    );
    assert!(child.windows(2).all(|w| w[0] < w[1]));
    // Same clock, same inherited counter: the prefixes are the parent's...
    assert_eq!(child[0] >> 58, after[0] >> 58);
    // ...and the random bits are not.
    let parent: HashSet<u128> = after.iter().copied().collect();
    let shared = child.iter().filter(|u| parent.contains(u)).count();
    assert_eq!(shared, 0, "the child repeated {shared} of the parent's IDs");
    assert_eq!(g.stats().reseeds, 0, "the parent did not fork");
}

#[cfg(feature = "uuid")]
#[test]
fn the_uuid_crates_type_reads_the_same_bits() {
    let g = UuidGenerator::builder().build().unwrap();
    let a = g.next_uuid().unwrap();
    assert_eq!(a.get_version_num(), 7);
    assert_eq!(a.get_variant(), uuid::Variant::RFC4122);
    let (secs, nanos) = a.get_timestamp().unwrap().to_unix();
    assert_eq!(
        secs * 1000 + u64::from(nanos) / 1_000_000,
        Wide(a.as_u128()).uuid7_timestamp_ms().unwrap()
    );
    assert!(g.next_uuid7().unwrap() > a.as_u128());
}

#[test]
fn generators_over_one_shared_word_strictly_increase_together() {
    // The PostgreSQL extension's shape: one word in shared memory, a generator
    // per backend (thread here) over it, their UUIDs one increasing sequence.
    static WORD: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let clock = ManualClock::new(T);
    let make = || {
        UuidGenerator::builder()
            .clock(clock.clone())
            .build_shared(&WORD)
            .unwrap()
    };
    let (a, b) = (make(), make());
    let mut last = 0u128;
    for i in 0..70_000u32 {
        let g = if i % 3 == 0 { &a } else { &b };
        let u = g.next_uuid7().unwrap();
        assert!(u > last, "ID {i}: the two generators over one word went back");
        last = u;
    }
    // Threads, each with its own generator over the word: no repeats, and each
    // thread's IDs increase.
    let all: Vec<Vec<u128>> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(|| {
                    let g = make();
                    (0..20_000).map(|_| g.next_uuid7().unwrap()).collect::<Vec<_>>()
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut seen = HashSet::new();
    for ids in &all {
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
        assert!(ids.iter().all(|u| *u > last));
        // The (ms, counter) prefix is unique too: the word hands each pair out once.
        assert!(
            ids.iter()
                .all(|u| seen.insert(*u >> 58 << 58 | u128::from(counter_of(*u))))
        );
    }
}

/// A batch: strictly increasing, in order with the single calls around it, each a
/// UUIDv7 with bits of its own; the 64-bit batches' limit and error on `n`.
#[test]
fn a_batch_follows_the_calls_before_it_and_precedes_those_after() {
    let g = borrowing_at(T);
    let before = g.next_uuid7().unwrap();
    let batch = g.next_uuid7s(70_000).unwrap();
    let after = g.next_uuid7().unwrap();
    assert!(before < batch[0] && batch[batch.len() - 1] < after);
    assert!(batch.windows(2).all(|w| w[0] < w[1]), "the batch increases");
    assert!(batch.iter().all(|&u| Wide(u).version() == 7 && u >> 62 & 0b11 == 0b10));
    // Across a millisecond: the counter starts again in the next one.
    assert_eq!(Wide(batch[69_999]).uuid7_timestamp_ms().unwrap(), T + 1);
    assert_eq!(g.stats().ids_issued, 70_002);
    assert!(g.next_uuid7s(0).unwrap().is_empty());
    let over = flakeid_core::MAX_BATCH + 1;
    match g.next_uuid7s(over) {
        Err(Error::Config { field, .. }) => assert_eq!(field, "n"),
        other => panic!("{other:?}"),
    }
    assert_eq!(g.stats().ids_issued, 70_002, "a refused batch costs no ID");
}

/// An explicit time: the UUID carries it, its other 74 bits are random, and it is
/// outside the sequence (no ID counted, the next call still follows the last).
#[test]
fn an_explicit_time_is_carried_and_stays_outside_the_sequence() {
    let clock = ManualClock::new(T);
    let g = UuidGenerator::builder().clock(clock.clone()).build().unwrap();
    let first = g.next_uuid7().unwrap();
    let past: Vec<u128> = (0..1_000).map(|_| g.uuid7_at(1_000).unwrap()).collect();
    assert!(
        past.iter()
            .all(|&u| Wide(u).uuid7_timestamp_ms().unwrap() == 1_000 && Wide(u).version() == 7)
    );
    assert!(past.iter().all(|&u| u >> 62 & 0b11 == 0b10), "RFC 9562's variant");
    assert_eq!(past.iter().collect::<HashSet<_>>().len(), 1_000);
    // 74 random bits: every one of them is set in some UUID and clear in another.
    let (or, and) = past.iter().fold((0u128, !0u128), |(o, a), &u| (o | u, a & u));
    assert_eq!((or ^ and) & !(!0u128 << 80), (0xfff << 64) | ((1 << 62) - 1));
    let second = g.next_uuid7().unwrap();
    assert!(first < second, "the sequence goes on past the explicit times");
    assert_eq!(
        g.stats().ids_issued,
        2,
        "an explicit time is not one of the sequence's IDs"
    );
    let last = (1u64 << 48) - 1;
    assert_eq!(Wide(g.uuid7_at(last).unwrap()).uuid7_timestamp_ms().unwrap(), last);
    match g.uuid7_at(last + 1) {
        Err(Error::Config { field, message }) => {
            assert_eq!(field, "unix_ms");
            assert!(message.contains("0..=281474976710655"), "{message}");
        }
        other => panic!("{other:?}"),
    }
}

/// A shifted now: the generator's clock plus the shift, refused past either end of
/// the 48-bit field naming `shift_ms`; a closed generator refuses both forms.
#[test]
fn a_shift_moves_the_generators_clock_and_is_bounded() {
    let clock = ManualClock::new(T);
    let g = UuidGenerator::builder().clock(clock.clone()).build().unwrap();
    let day = 86_400_000;
    assert_eq!(
        Wide(g.uuid7_shifted(-day).unwrap()).uuid7_timestamp_ms().unwrap(),
        T - day as u64
    );
    assert_eq!(
        Wide(g.uuid7_shifted(day).unwrap()).uuid7_timestamp_ms().unwrap(),
        T + day as u64
    );
    assert_eq!(Wide(g.uuid7_shifted(0).unwrap()).uuid7_timestamp_ms().unwrap(), T);
    for shift in [-(T as i64) - 1, i64::MIN, i64::MAX, (1i64 << 48) - T as i64] {
        match g.uuid7_shifted(shift) {
            Err(Error::Config { field, .. }) => assert_eq!(field, "shift_ms"),
            other => panic!("{shift}: {other:?}"),
        }
    }
    g.close();
    for result in [g.uuid7_at(T), g.uuid7_shifted(0)] {
        match result {
            Err(Error::Config { field, .. }) => assert_eq!(field, "generator"),
            other => panic!("{other:?}"),
        }
    }
}

/// A floor from an earlier process: the UUIDs start after it, with a clock behind
/// it handled by the `clock_backwards` policy.
#[test]
fn a_resumed_generator_starts_after_its_floor() {
    let clock = ManualClock::new(T);
    let g = UuidGenerator::builder()
        .clock(clock.clone())
        .resume_after_ms(T + 5)
        .clock_backwards(ClockBackwards::Wait)
        .max_wait_ms(1_000)
        .build()
        .unwrap();
    let waiter = {
        let clock = clock.clone();
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(50));
            clock.set(T + 6);
        })
    };
    let u = g.next_uuid7().unwrap();
    waiter.join().unwrap();
    assert!(
        Wide(u).uuid7_timestamp_ms().unwrap() > T + 5,
        "{}",
        Wide(u).uuid7_timestamp_ms().unwrap()
    );
}
