//! Memory given back after a burst. glibc's malloc keeps what a burst freed in its
//! arenas (one per thread that met contention, up to eight per core), so without
//! help the process's RSS stays at its peak for good: 1.1 GB an idle quarter of an
//! hour after a 1 GB burst of request bodies. `malloc_trim(0)` hands every arena's
//! free pages back; measured against the alternatives in docs/service.md ("Memory
//! budget"). It runs on a watch of the arenas' free bytes (`mallinfo2`, once a
//! second), when they have grown [`SLACK`] past what the last trim left, so a
//! steady load never trims and a burst is handed back within about a second of its
//! end. Other C libraries (musl) return freed memory by themselves: nothing runs.

use std::sync::Weak;

/// How far the arenas' free bytes may grow past what the last trim left.
pub const SLACK: usize = 16 * 1024 * 1024;

/// Watches and trims until the service is dropped.
pub(crate) async fn run(svc: Weak<crate::Service>) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let mut floor = 0usize;
        loop {
            tokio::time::sleep(std::time::Duration::from_secs(1)).await;
            if svc.strong_count() == 0 {
                return;
            }
            // Both walk the arenas under their locks: on the blocking pool.
            let trimmed = tokio::task::spawn_blocking(move || {
                let free = free_bytes();
                if free < floor.saturating_add(SLACK) {
                    return None;
                }
                // SAFETY: malloc_trim only gives free pages back to the system.
                unsafe { libc::malloc_trim(0) };
                Some((free, free_bytes()))
            })
            .await;
            if let Ok(Some((before, after))) = trimmed {
                tracing::debug!(before, after, "malloc_trim: free memory given back");
                floor = after;
            }
        }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    drop(svc);
}

/// Bytes free in glibc's arenas (not given back to the system).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn free_bytes() -> usize {
    // SAFETY: mallinfo2 reads the allocator's statistics and has no preconditions.
    let m = unsafe { libc::mallinfo2() };
    m.fordblks
}
