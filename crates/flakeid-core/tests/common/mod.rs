//! What the core's integration tests share: a forked child and its exit code,
//! generators on a manual clock, a clock the test keeps a hand on, a file lease in a directory of its own, and
//! the rounds a long test takes by default or by hand. Each test binary includes
//! this module (`mod common;`) and uses its own part of it.
#![allow(dead_code)]

use flakeid_core::{Clock, Error, Generator, GeneratorBuilder, Layout, ManualClock, Overflow, Result};
use std::sync::Arc;

/// Forks; the child runs `child` and exits with the code it returns (101 if it
/// panics) without running the parent's destructors. The parent gets the child's
/// pid, for [`exit_code`] once it has done its part.
#[cfg(unix)]
pub fn fork(child: impl FnOnce() -> i32) -> libc::pid_t {
    // SAFETY: a test's child touches only what survives a fork (atomics, plain
    // memory, its own descriptors) and ends in _exit.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(child)).unwrap_or(101);
        // SAFETY: ends the child without running the parent's destructors.
        unsafe { libc::_exit(code) };
    }
    pid
}

/// Waits for the child `pid` (from [`fork`]) to end and returns its exit code.
#[cfg(unix)]
pub fn exit_code(pid: libc::pid_t) -> i32 {
    let mut status = 0;
    // SAFETY: waits for our own child.
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    assert!(libc::WIFEXITED(status), "the child did not exit: status {status}");
    libc::WEXITSTATUS(status)
}

/// [`fork`] and [`exit_code`]: the exit code of `child` run in a forked child.
#[cfg(unix)]
pub fn in_child(child: impl FnOnce() -> i32) -> i32 {
    exit_code(fork(child))
}

/// 0 when every call was refused as `refused` says, else 1 + the index of the
/// first that was not: a child's exit code naming the call that got through.
pub fn first_not_refused(calls: &[Result<()>], refused: impl Fn(&Error) -> bool) -> i32 {
    calls
        .iter()
        .position(|r| !r.as_ref().is_err_and(&refused))
        .map_or(0, |i| i as i32 + 1)
}

/// The builder of a generator of `layout` on node `node`, on `clock`: the test
/// keeps its hand on the generator's time.
pub fn on_clock(layout: Layout, node: u64, clock: &ManualClock) -> GeneratorBuilder {
    Generator::builder(layout).node(node).clock(clock.clone())
}

/// [`on_clock`], borrowing up to `max_borrow_ms` ahead of the clock.
pub fn borrowing(layout: Layout, node: u64, max_borrow_ms: u64, clock: &ManualClock) -> GeneratorBuilder {
    on_clock(layout, node, clock)
        .overflow(Overflow::Borrow)
        .max_borrow_ms(max_borrow_ms)
}

/// A clock that the test moves while the generator owns a clone of it.
#[derive(Debug)]
pub struct Shared<C>(pub Arc<C>);

impl<C> Clone for Shared<C> {
    fn clone(&self) -> Self {
        Shared(Arc::clone(&self.0))
    }
}

impl<C: Clock> Clock for Shared<C> {
    fn now_ms(&self) -> u64 {
        self.0.now_ms()
    }
    fn now_ms_precise(&self) -> u64 {
        self.0.now_ms_precise()
    }
}

/// A fresh directory under the temp dir, named for the test and this process,
/// with the `file://` lease URL of it: file:///tmp/x, or on Windows
/// file:///C:/x (RFC 8089's drive letter). The caller removes the directory.
pub fn file_lease(name: &str) -> (std::path::PathBuf, String) {
    let dir = std::env::temp_dir().join(format!("flakeid-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.to_str().unwrap().replace('\\', "/");
    let slash = if path.starts_with('/') { "" } else { "/" };
    let url = format!("file://{slash}{path}");
    (dir, url)
}

/// The rounds a long test takes: `default`, or more by hand through the
/// environment variable `var`.
pub fn rounds(var: &str, default: usize) -> usize {
    std::env::var(var).ok().and_then(|r| r.parse().ok()).unwrap_or(default)
}
