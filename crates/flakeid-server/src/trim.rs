//! Memory given back after a burst. glibc's malloc keeps what a burst freed in its
//! arenas (one per thread that met contention, up to eight per core), so without
//! help the process's RSS can stay near its peak for good: 1.1 GB an idle quarter
//! of an hour after a 1 GB burst of request bodies. `malloc_trim(0)` hands every
//! arena's free pages back (measurements in docs/service.md, "Memory budget").
//!
//! Once a second the watch looks at the budgets in use and the RSS: a burst (more
//! than [`BUSY`] of the budgets in use, or RSS [`SLACK`] above what the last trim
//! left) arms it, and the first quiet second after (less than [`BUSY`] in use)
//! trims, once. A steady load never trims; an idle server never does. Other C
//! libraries (musl) return freed memory by themselves: nothing runs.

// The watch runs on glibc only; elsewhere these are unused.
/// Budgets in use above this: busy; below: quiet.
#[cfg_attr(not(all(target_os = "linux", target_env = "gnu")), allow(dead_code))]
pub const BUSY: usize = 1024 * 1024;
/// RSS growth since the last trim that arms one.
#[cfg_attr(not(all(target_os = "linux", target_env = "gnu")), allow(dead_code))]
pub const SLACK: usize = 16 * 1024 * 1024;

/// Watches and trims until `in_use` says the service is gone (`None`); `in_use`
/// reads the bytes of the budgets in use now.
pub(crate) async fn run(in_use: impl Fn() -> Option<usize> + Send + 'static) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let mut armed = false;
        let mut floor = rss().unwrap_or(0);
        loop {
            tokio::time::sleep(std::time::Duration::from_secs(1)).await;
            let Some(used) = in_use() else { return };
            let now = rss().unwrap_or(0);
            if used > BUSY || now > floor.saturating_add(SLACK) {
                armed = true;
            }
            if armed && used <= BUSY {
                armed = false;
                // Walks the arenas under their locks: on the blocking pool.
                let after = tokio::task::spawn_blocking(|| {
                    // SAFETY: malloc_trim only gives free pages back to the system.
                    unsafe { libc::malloc_trim(0) };
                    rss()
                })
                .await;
                floor = after.ok().flatten().unwrap_or(now);
                tracing::debug!(before = now, after = floor, "malloc_trim: memory given back");
            }
        }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    drop(in_use);
}

/// The process's resident set, in bytes (`/proc/self/statm`).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn rss() -> Option<usize> {
    let text = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: usize = text.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages * usize::try_from(page).unwrap_or(4096))
}
