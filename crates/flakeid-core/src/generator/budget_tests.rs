//! A strict call beside a borrowing generator on one node id (one counter,
//! crate::owner): its whole wait, from entry to return, is at most its
//! `max_wait_ms`, or it returns its documented error (`ClockMovedBackwards`),
//! however often the borrowing one moves the tick the call waits for.
//!
//! The clock is scripted, and so is the borrowing one: every turn of the strict
//! call's wait moves the time on, and the borrowing generator then fills its window
//! again, up to its new end, as busy borrowing threads do between two looks of a
//! waiting thread. The call's "real" time is the scripted clock's, so the wait is
//! counted in the clock's ms: no timing, one thread, the same turns every run.
#![cfg(host_guard)]

use super::*;
use crate::clock::ManualClock;
use std::sync::Mutex;
use std::sync::atomic::AtomicU64 as StdAtomicU64;

/// Where the script starts (Unix ms).
const T0: u64 = 1_800_000_000_000;
/// The borrowing generator's window, ms (1 ms ticks).
const LEAD_MS: u64 = 10;
/// The strict generator's `max_wait_ms`.
const MAX_WAIT_MS: u64 = 30;
/// IDs the borrowing one issues to fill its window before a call: its window's
/// 11 ticks of 4 slots.
const ENTRY_FILL: usize = 44;

/// What the borrowing generator does at each turn of the strict call's wait.
#[derive(Clone, Copy)]
struct Script {
    /// How far the clock moves in a turn (a waiting thread that looks every
    /// `step_ms`).
    step_ms: u64,
    /// The turn on which it leaves one slot of its window free (0: never).
    leaves_one_at: u64,
    /// The turn from which it issues no more, so that a call that would wait on
    /// without bound ends (and the test says how long it waited).
    stops_at: u64,
}

/// Keeps the window full for 1,000 turns of 1 ms.
const BUSY: Script = Script {
    step_ms: 1,
    leaves_one_at: 0,
    stops_at: 1_000,
};

/// The strict generator's clock: the manual clock, whose every wait turn moves it
/// on and lets the borrowing generator fill its window again.
struct Scripted {
    clock: ManualClock,
    borrowing: Arc<Generator>,
    script: Script,
    turns: StdAtomicU64,
    /// IDs the borrowing generator issued.
    issued: Mutex<Vec<u64>>,
}

impl fmt::Debug for Scripted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Scripted")
    }
}

impl Clock for Scripted {
    fn now_ms(&self) -> u64 {
        self.clock.get()
    }

    fn pause(&self) {
        let turn = self.turns.fetch_add(1, Ordering::Relaxed) + 1;
        self.clock.advance(self.script.step_ms);
        if turn < self.script.stops_at {
            self.fill(turn == self.script.leaves_one_at);
        }
    }

    fn monotonic_ms(&self) -> Option<u64> {
        Some(self.clock.get())
    }
}

impl Scripted {
    /// Issues from the borrowing generator until its window is full (or one slot
    /// short of it).
    fn fill(&self, leave_one: bool) {
        let mut issued = self.issued.lock().unwrap();
        loop {
            if leave_one && self.free_in_window() == 1 {
                return;
            }
            match self.borrowing.try_next_id() {
                Ok(Some(id)) => issued.push(id),
                Ok(None) => return,
                Err(e) => panic!("the borrowing generator: {e}"),
            }
        }
    }

    /// Slots left in the borrowing generator's window at the clock's tick.
    fn free_in_window(&self) -> u64 {
        let g = &self.borrowing;
        let t = g.ticks(self.clock.get()).unwrap();
        g.limit(t).saturating_sub(g.state.get().load(Ordering::Relaxed))
    }
}

/// Builds on the system clock (so that both join the process's owner of the node
/// id, which an injected clock does not), then puts the script's clock in.
fn on_one_counter(node: u64, policy: ClockBackwards, script: Script) -> (Generator, Arc<Scripted>) {
    let layout = Layout::builder()
        .time_bits(41)
        .node_bits(10)
        .sequence_bits(2)
        .epoch_ms(1_700_000_000_000)
        .build()
        .unwrap();
    let clock = ManualClock::new(T0);
    let build = |overflow| {
        Generator::builder(layout)
            .node(node)
            .host_guard(false)
            .overflow(overflow)
            .max_borrow_ms(LEAD_MS)
            .clock_backwards(policy)
            .max_wait_ms(MAX_WAIT_MS)
            .build()
            .unwrap()
    };
    let mut borrowing = build(Overflow::Borrow);
    let mut strict = build(Overflow::Wait);
    assert!(strict.guards.owner.is_some(), "both on the process's counter");
    borrowing.clock = ClockRef::Custom(Arc::new(clock.clone()));
    let scripted = Arc::new(Scripted {
        clock,
        borrowing: Arc::new(borrowing),
        script,
        turns: StdAtomicU64::new(0),
        issued: Mutex::new(Vec::new()),
    });
    strict.clock = ClockRef::Custom(Arc::clone(&scripted) as Arc<dyn Clock>);
    (strict, scripted)
}

/// One strict call with the borrowing one's window full at its entry: what it
/// returned and how long it waited (the clock's ms).
fn one_call(strict: &Generator, scripted: &Scripted) -> (Result<u64>, u64) {
    scripted.fill(false);
    assert_eq!(scripted.issued.lock().unwrap().len(), ENTRY_FILL);
    let entry = scripted.clock.get();
    let got = strict.next_id();
    (got, scripted.clock.get() - entry)
}

/// Asserts that the call ended within its `max_wait_ms` with the documented error.
fn refused_in_time(policy: ClockBackwards, script: Script, node: u64) -> u64 {
    let (strict, scripted) = on_one_counter(node, policy, script);
    let (got, waited) = one_call(&strict, &scripted);
    let turns = scripted.turns.load(Ordering::Relaxed);
    assert!(
        waited <= MAX_WAIT_MS,
        "{policy}: waited {waited} ms (max_wait_ms {MAX_WAIT_MS}), {turns} turns, got {got:?}"
    );
    assert!(
        matches!(got, Err(Error::ClockMovedBackwards { .. })),
        "{policy}: {got:?}"
    );
    turns
}

#[test]
fn a_strict_call_waits_at_most_max_wait_ms_beside_a_busy_borrowing_one() {
    // The window never has a free slot: the documented error, whatever the policy.
    for (node, policy) in [
        (901, ClockBackwards::Error),
        (902, ClockBackwards::Wait),
        (903, ClockBackwards::Monotonic),
    ] {
        let turns = refused_in_time(policy, BUSY, node);
        // The borrowing one did move the tick the call waited for, turn after turn.
        assert!(turns >= MAX_WAIT_MS - LEAD_MS, "{policy}: {turns} turns");
    }
}

#[test]
fn a_strict_call_takes_a_slot_it_can_return_within_max_wait_ms() {
    // A slot left free on turn 15 is due in 25 ms: within the call's 30.
    let script = Script {
        leaves_one_at: 15,
        ..BUSY
    };
    let (strict, scripted) = on_one_counter(904, ClockBackwards::Error, script);
    let (got, waited) = one_call(&strict, &scripted);
    let id = got.unwrap();
    assert!(waited <= MAX_WAIT_MS, "waited {waited} ms");
    // Strict: returned once the clock got to it, above every ID the borrowing one
    // issued before the call began.
    assert!(strict.layout().decompose(id).timestamp_ms <= scripted.clock.get());
    let before = &scripted.issued.lock().unwrap()[..ENTRY_FILL];
    assert!(
        before.iter().all(|&b| b < id),
        "an earlier ID of the borrowing one above it"
    );
    // A call of the borrowing one that starts after it returned is above it.
    scripted.clock.advance(LEAD_MS + 1);
    assert!(scripted.borrowing.try_next_id().unwrap().unwrap() > id);
}

#[test]
fn a_free_slot_due_after_max_wait_ms_is_not_taken() {
    // A thread that looks every 3 ms: on turn 7 (21 ms in) the slot left free is in
    // the tick 31 ms after the call's entry, past its 30.
    let script = Script {
        step_ms: 3,
        leaves_one_at: 7,
        ..BUSY
    };
    refused_in_time(ClockBackwards::Error, script, 905);
}

#[test]
fn a_window_full_up_to_the_deadline_is_refused_at_once() {
    // On turn 20 the borrowing one has taken every slot up to the tick the call
    // could still return (30 ms after its entry), and stops: a slot of the next
    // tick would be late, so the call does not wait for one.
    let script = Script { stops_at: 21, ..BUSY };
    assert_eq!(refused_in_time(ClockBackwards::Error, script, 906), 20);
}
