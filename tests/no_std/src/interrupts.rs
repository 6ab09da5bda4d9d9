//! One generator shared by the main loop and an interrupt handler (SysTick) that
//! preempts it: call order holds across both, and no ID repeats.
use crate::generator::on_timer;
use alloc::vec::Vec;
use core::cell::{Cell, RefCell};
use core::sync::atomic::{AtomicPtr, Ordering};
use cortex_m::interrupt::{self, Mutex};
use cortex_m::peripheral::syst::SystClkSource;
use cortex_m_rt::exception;
use flakeid_core::Generator;

/// The generator both sides call, set before the timer starts.
static SHARED: AtomicPtr<Generator> = AtomicPtr::new(core::ptr::null_mut());
/// The largest ID a finished call returned, on either side.
static LAST: Mutex<Cell<u64>> = Mutex::new(Cell::new(0));
/// The IDs the handler issued (room reserved before the timer starts: no allocation
/// in the handler).
static FROM_HANDLER: Mutex<RefCell<Vec<u64>>> = Mutex::new(RefCell::new(Vec::new()));
/// How many calls the handler makes before it stops the timer.
const HANDLER_CALLS: usize = 300;
/// SysTick's reload in core clock cycles: an interrupt every few main-loop calls
/// (qemu's clock counts instructions: `-icount` in .cargo/config.toml).
const RELOAD: u32 = 2_000;
/// Room for the main loop's IDs, reserved before the timer starts: the run takes about
/// 1,100 calls, the same on every run (`-icount`). Filling it fails the check rather
/// than growing the heap.
const MAIN_CALLS_MAX: usize = 16_384;

/// A call that starts after another returned gets a larger ID.
fn issue(g: &Generator) -> u64 {
    let before = interrupt::free(|cs| LAST.borrow(cs).get());
    let id = g.next_id().unwrap();
    assert!(id > before, "{id} after {before}");
    interrupt::free(|cs| {
        let last = LAST.borrow(cs);
        last.set(last.get().max(id));
    });
    id
}

#[exception]
fn SysTick() {
    // SAFETY: set to a leaked generator before the timer was enabled; never freed.
    let g = unsafe { &*SHARED.load(Ordering::Acquire) };
    let id = issue(g);
    let done = interrupt::free(|cs| {
        let mut ids = FROM_HANDLER.borrow(cs).borrow_mut();
        ids.push(id);
        ids.len() >= HANDLER_CALLS
    });
    if done {
        // SAFETY: only the SYST control register's enable bit is written, from the
        // one handler that owns the timer once it runs.
        unsafe { (*cortex_m::peripheral::SYST::PTR).csr.modify(|c| c & !1) };
    }
}

pub fn shared_with_a_handler() {
    let g: &'static Generator = alloc::boxed::Box::leak(alloc::boxed::Box::new(on_timer(9)));
    SHARED.store(core::ptr::from_ref(g).cast_mut(), Ordering::Release);
    interrupt::free(|cs| FROM_HANDLER.borrow(cs).borrow_mut().reserve_exact(HANDLER_CALLS));
    let mut syst = cortex_m::Peripherals::take().expect("taken once").SYST;
    syst.set_clock_source(SystClkSource::Core);
    syst.set_reload(RELOAD);
    syst.clear_current();
    syst.enable_interrupt();
    syst.enable_counter();
    let mut mine = Vec::with_capacity(MAIN_CALLS_MAX);
    loop {
        let handled = interrupt::free(|cs| FROM_HANDLER.borrow(cs).borrow().len());
        if handled >= HANDLER_CALLS {
            break;
        }
        assert!(
            mine.len() < MAIN_CALLS_MAX,
            "the handler ran {handled} times in {MAIN_CALLS_MAX} main-loop calls"
        );
        mine.push(issue(g));
    }
    let mut all = interrupt::free(|cs| FROM_HANDLER.borrow(cs).replace(Vec::new()));
    all.extend_from_slice(&mine);
    let n = all.len();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), n, "an ID repeated");
}
