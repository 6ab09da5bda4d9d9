//! `state`: a saved high-water timestamp for a fixed node id (docs/state.md).
//!
//! The lease machinery with one node id and one holder: a [`LeaseStore`] whose
//! "lease" is an exclusive lock on `PATH.lock` (`File::try_lock`: `flock` on unix,
//! `LockFileEx` on Windows; held while the process lives, so a second process on
//! the same file is refused) and whose fence is the file `PATH` itself, a
//! timestamp no ID issued so far reaches. Acquiring reads it; the heartbeat keeps
//! it ahead of the gate's window (write `PATH.tmp`, fsync, rename over `PATH`,
//! fsync the directory: a crash leaves the old mark or the new one, never a torn
//! one); a clean release writes the exact last timestamp issued. On Windows the
//! rename is `MoveFileExW(MOVEFILE_REPLACE_EXISTING)` and no directory can be
//! fsynced: the renamed file is flushed instead (docs/leases.md, "Per operating
//! system").
//!
//! Unlike a lease, a clock behind the mark at start is left to the generator's
//! `clock_backwards` policy (the mark becomes its `resume_after_ms`), exactly as a
//! rollback inside one process.

use super::{Acquired, LeaseStore, lease_error};
use crate::error::{Error, Result};
use std::fs::{File, TryLockError};
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The heartbeat's period is a third of this; the window it keeps the file ahead by
/// is `ttl − ttl/5` (1200 ms): two renewals fit in it, and a process killed
/// mid-run leaves a mark at most that far (plus the borrow allowance) ahead.
pub(crate) const STATE_TTL_MS: u64 = 1_500;

/// The file's first line: refuses a path that is not a state file instead of
/// overwriting it.
const MAGIC: &str = "flakeid-state 1";

/// The state file of one generator.
#[derive(Debug)]
pub(crate) struct StateStore {
    path: PathBuf,
    node: u64,
    /// The lock held from `acquire` to `release` (closing it unlocks).
    lock: Option<File>,
    /// The mark last written (or read).
    written_ms: u64,
}

fn state_error(path: &Path, what: impl std::fmt::Display) -> Error {
    Error::config("state", format!("state file {}: {what}", path.display()))
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(suffix);
    PathBuf::from(s)
}

impl StateStore {
    pub(crate) fn new(path: &str, node: u64) -> Result<StateStore> {
        if path.is_empty() {
            return Err(Error::config("state", "state must be a file path, got an empty one"));
        }
        Ok(StateStore {
            path: PathBuf::from(path),
            node,
            lock: None,
            written_ms: 0,
        })
    }

    /// The mark in the file: `Ok(0)` if there is no file (a fresh start); a
    /// config error naming `state` if it cannot be read or is not a state file.
    fn read(&self) -> Result<u64> {
        let text = match std::fs::read(&self.path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(0),
            Err(e) => return Err(state_error(&self.path, format_args!("cannot be read: {e}"))),
        };
        parse(&text).ok_or_else(|| {
            state_error(
                &self.path,
                format_args!(
                    "is not a flakeid state file (expected \"{MAGIC}\" and a line \"high_water_ms N\"); refusing \
                     to start rather than forget which IDs were issued: restore it, or delete it to start afresh \
                     if no ID of this node id can be at or after this host's clock"
                ),
            )
        })
    }

    /// Writes `ms` atomically: a temporary file, fsync, rename over the file,
    /// then [`sync_rename`].
    fn write(&mut self, ms: u64) -> std::io::Result<()> {
        let tmp = with_suffix(&self.path, ".tmp");
        let mut f = super::file_options()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)?;
        f.write_all(format!("{MAGIC}\nhigh_water_ms {ms}\nnode {}\n", self.node).as_bytes())?;
        f.sync_all()?;
        drop(f);
        // Replaces an existing file on every OS (Windows: MoveFileExW with
        // MOVEFILE_REPLACE_EXISTING), atomically on one file system.
        std::fs::rename(&tmp, &self.path)?;
        sync_rename(&self.path)?;
        self.written_ms = ms;
        Ok(())
    }
}

/// Makes the rename to `path` durable. On unix: fsync the directory that holds
/// the new entry (`File::sync_all`; on macOS that is `F_FULLFSYNC`).
#[cfg(unix)]
fn sync_rename(path: &Path) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    File::open(dir)?.sync_all()
}

/// On Windows a directory cannot be opened as a file, so it cannot be fsynced.
/// NTFS journals the rename; flushing the renamed file (`FlushFileBuffers`)
/// commits it with the file's own metadata, which is as far as std reaches
/// (docs/leases.md, "Per operating system").
#[cfg(not(unix))]
fn sync_rename(path: &Path) -> std::io::Result<()> {
    std::fs::OpenOptions::new().write(true).open(path)?.sync_all()
}

/// The mark in a state file's text, if it is one.
fn parse(text: &[u8]) -> Option<u64> {
    let text = std::str::from_utf8(text).ok()?;
    let mut lines = text.lines();
    if lines.next()? != MAGIC {
        return None;
    }
    let ms = lines.next()?.strip_prefix("high_water_ms ")?;
    if ms.is_empty() || !ms.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    ms.parse().ok()
}

impl LeaseStore for StateStore {
    fn describe(&self) -> String {
        format!("state file {}", self.path.display())
    }

    fn namespace(&self) -> &str {
        "state"
    }

    fn effective_ttl_ms(&self, _requested: u64) -> u64 {
        STATE_TTL_MS
    }

    /// The lock is the OS's until this process exits.
    fn held_while_alive(&self) -> bool {
        true
    }

    fn acquire(&mut self, _max_node: u64, _holder: &str, _ttl_ms: u64, _until: Instant) -> Result<Option<Acquired>> {
        let lock_path = with_suffix(&self.path, ".lock");
        let lock = super::file_options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lock_path)
            .map_err(|e| {
                state_error(
                    &self.path,
                    format_args!("cannot open its lock {}: {e}", lock_path.display()),
                )
            })?;
        if let Err(err) = lock.try_lock() {
            return Err(if let TryLockError::WouldBlock = err {
                state_error(
                    &self.path,
                    format_args!(
                        "is in use by another process (it holds {}): two generators on one state file would \
                         issue the same IDs",
                        lock_path.display()
                    ),
                )
            } else {
                state_error(&self.path, format_args!("cannot lock {}: {err}", lock_path.display()))
            });
        }
        let last_ms = self.read()?;
        self.written_ms = last_ms;
        self.lock = Some(lock);
        // No lock delay: the file is the only record, and this lock its only holder.
        Ok(Some(Acquired::new(self.node, last_ms, u64::MAX)))
    }

    fn renew(&mut self, _node: u64, _holder: &str, _ttl_ms: u64, fence_ms: u64, _until: Instant) -> Result<bool> {
        if fence_ms > self.written_ms {
            self.write(fence_ms)
                .map_err(|e| lease_error(format!("cannot write {}: {e}", self.describe())))?;
        }
        Ok(true)
    }

    fn release(&mut self, _node: u64, _holder: &str, last_ms: u64, _until: Instant) -> Result<()> {
        // The exact last timestamp issued: a restart right after a clean exit starts
        // at once, after it. Nothing later was issued; the later marks the file held
        // were reservations only.
        let result = if self.lock.is_some() && last_ms != self.written_ms {
            self.write(last_ms)
                .map_err(|e| lease_error(format!("cannot write {}: {e}", self.describe())))
        } else {
            Ok(())
        };
        self.lock = None;
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_only_state_files() {
        assert_eq!(parse(b"flakeid-state 1\nhigh_water_ms 17\nnode 3\n"), Some(17));
        assert_eq!(parse(b"flakeid-state 1\nhigh_water_ms 17"), Some(17));
        for bad in [
            &b""[..],
            b"17\n",
            b"flakeid-state 1\n",
            b"flakeid-state 1\nhigh_water_ms \n",
            b"flakeid-state 1\nhigh_water_ms -1\n",
            b"flakeid-state 1\nhigh_water_ms 1x\n",
            b"flakeid-state 1\nhigh_water_ms 99999999999999999999999\n",
            b"flakeid-state 2\nhigh_water_ms 1\n",
            b"\xff\xfe",
        ] {
            assert_eq!(parse(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }
}
