//! The host guard: two live generators on one host never share a static node id.
//!
//! A generator whose node id is fixed (a number, `env:VAR`, the hostname's ordinal,
//! a MAC or IPv4 address, or node 0 by default) takes an exclusive lock on one file
//! per (ID space, node id) for its lifetime. A second generator with the same layout
//! and node id, in this process or another one on the host, is refused at build time
//! with the holder's pid. Workers of one server (gunicorn `-w 4`, Node `cluster`,
//! a process pool, two JVMs) that were all given one node id would otherwise issue
//! the same IDs; a lease gives each its own.
//!
//! Why POSIX record locks (`fcntl(F_SETLK)`) on unix: the kernel drops them when
//! the process ends, however it ends (`kill -9` included), and a forked child does
//! not inherit them, so a child neither keeps its parent's guard alive nor passes
//! as its holder. Their one trap, that closing *any* descriptor of the file drops
//! the process's lock, is why a process opens each guard file once (the `HELD`
//! table) and why a forked child never closes the descriptors it inherited.
//!
//! Where: `FLAKEID_HOST_GUARD` names the directory (an absolute path), or `off`
//! turns the guard off; unset, `/tmp/flakeid-host-guard` (unix) or the temporary
//! directory (Windows). What it cannot see: other hosts, and containers or
//! services with a private `/tmp` (docs/design.md, "The host guard").

use crate::error::{Error, Result};
use crate::layout::{Layout, Order};
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The variable that moves or turns off the guard.
pub const HOST_GUARD_ENV: &str = "FLAKEID_HOST_GUARD";

/// The guards this process took, by key, with the pid that took each (a forked
/// child's copy of this table names its parent: those entries are not its), and,
/// once let go, the last ms its generator may have issued at: the next generator
/// of this process on that key starts after it, so a close and a rebuild within
/// one millisecond cannot repeat an ID.
static HELD: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

struct Entry {
    pid: u32,
    key: String,
    held: bool,
    floor_ms: Option<u64>,
}

/// A held guard on (ID space, node id); released when dropped or when the process ends.
/// Generators take theirs when built; [`HostGuard::hold`] is for a process whose
/// generators share one counter (`build_shared`) and so take none.
#[derive(Debug)]
pub struct HostGuard {
    file: Option<File>,
    key: String,
    pid: u32,
}

impl HostGuard {
    /// Holds the guard of `node` in `layout`'s ID space for as long as the value
    /// lives, as a generator does: the PostgreSQL extension's postmaster holds it for
    /// its backends, whose generators over one shared counter take none. `None` when
    /// the guard is turned off; the same refusal as a generator's when it is held.
    pub fn hold(layout: &Layout, node: u64) -> Result<Option<HostGuard>> {
        Ok(Self::acquire(layout, node)?.map(|(guard, _)| guard))
    }

    /// Takes the guard of `node` in `layout`'s ID space, or refuses with who holds it;
    /// with the ms an earlier generator of this process on it may have issued at.
    /// `None` when the guard is turned off (`FLAKEID_HOST_GUARD=off`).
    pub(crate) fn acquire(layout: &Layout, node: u64) -> Result<Option<(HostGuard, Option<u64>)>> {
        let Some(dir) = guard_dir()? else {
            return Ok(None);
        };
        let key = key(layout, node);
        let pid = std::process::id();
        let mut table = HELD.lock().unwrap_or_else(|e| e.into_inner());
        table.retain(|e| e.pid == pid);
        let entry = table.iter().position(|e| e.key == key);
        if entry.is_some_and(|i| table[i].held) {
            return Err(refusal(node, Some(pid), &dir.join(&key)));
        }
        let path = dir.join(&key);
        let file = sys::lock(&dir, &path).map_err(|e| match e {
            Locked::By(holder) => refusal(node, holder, &path),
            Locked::Io(err) => unusable(&path, &err),
        })?;
        let floor_ms = match entry {
            Some(i) => {
                table[i].held = true;
                table[i].floor_ms
            }
            None => {
                table.push(Entry {
                    pid,
                    key: key.clone(),
                    held: true,
                    floor_ms: None,
                });
                None
            }
        };
        Ok(Some((
            HostGuard {
                file: Some(file),
                key,
                pid,
            },
            floor_ms,
        )))
    }

    /// Lets go, leaving `floor_ms` (the last ms an ID of its generator may carry) for
    /// this process's next generator on the key.
    pub(crate) fn release(mut self, floor_ms: u64) {
        self.let_go(Some(floor_ms));
    }

    fn let_go(&mut self, floor_ms: Option<u64>) {
        let Some(file) = self.file.take() else {
            return;
        };
        if std::process::id() != self.pid {
            // A forked child's copy: closing it would drop a lock this child may
            // hold on the same file through a guard of its own.
            std::mem::forget(file);
            return;
        }
        let mut table = HELD.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(e) = table.iter_mut().find(|e| e.pid == self.pid && e.key == self.key) {
            e.held = false;
            e.floor_ms = e.floor_ms.max(floor_ms);
        }
        drop(file);
    }
}

impl Drop for HostGuard {
    fn drop(&mut self) {
        self.let_go(None);
    }
}

/// The file name of (ID space, node id): every field that makes two layouts' IDs
/// one space, so equal layouts meet whatever they are called.
fn key(layout: &Layout, node: u64) -> String {
    let order = match layout.order() {
        Order::TimeNodeSeq => "tns",
        Order::TimeSeqNode => "tsn",
    };
    format!(
        "node-{node}.t{}d{}w{}s{}.tick{}.epoch{}.{order}.lock",
        layout.time_bits(),
        layout.datacenter_bits(),
        layout.worker_bits(),
        layout.sequence_bits(),
        layout.tick_ms(),
        layout.epoch_ms(),
    )
}

fn guard_dir() -> Result<Option<PathBuf>> {
    match std::env::var_os(HOST_GUARD_ENV) {
        Some(v) if v == "off" => Ok(None),
        Some(v) if !v.is_empty() => {
            let dir = PathBuf::from(&v);
            if !dir.is_absolute() {
                return Err(Error::config(
                    "host_guard",
                    format!(
                        "{HOST_GUARD_ENV} must be an absolute directory or off, got {:?}",
                        v.to_string_lossy()
                    ),
                ));
            }
            Ok(Some(dir))
        }
        _ => Ok(Some(default_dir())),
    }
}

#[cfg(unix)]
fn default_dir() -> PathBuf {
    PathBuf::from("/tmp/flakeid-host-guard")
}

#[cfg(not(unix))]
fn default_dir() -> PathBuf {
    std::env::temp_dir().join("flakeid-host-guard")
}

fn refusal(node: u64, holder: Option<u32>, path: &Path) -> Error {
    let who = match holder {
        Some(pid) if pid == std::process::id() => format!("this process (pid {pid}) through another live generator"),
        Some(pid) => format!("process {pid}"),
        None => "another process".to_string(),
    };
    Error::config(
        "node",
        format!(
            "node id {node} of this layout is already in use on this host by {who} (host guard {}): two \
             generators on one node id issue the same IDs. Give each process its own node id: a lease (lease = \
             \"file:///var/lib/flakeid\" on one host, a Redis, PostgreSQL or etcd URL across hosts) takes a free \
             one; {HOST_GUARD_ENV}=off turns this check off",
            path.display()
        ),
    )
}

fn unusable(path: &Path, err: &io::Error) -> Error {
    Error::config(
        "host_guard",
        format!(
            "the host guard {} cannot be used ({err}): set {HOST_GUARD_ENV} to a directory of your own, or to off",
            path.display()
        ),
    )
}

enum Locked {
    /// Held by another generator: its pid where the system says.
    By(Option<u32>),
    Io(io::Error),
}

impl From<io::Error> for Locked {
    fn from(e: io::Error) -> Self {
        Locked::Io(e)
    }
}

#[cfg(unix)]
mod sys {
    use super::Locked;
    use std::fs::{self, DirBuilder, File, OpenOptions};
    use std::io;
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
    use std::path::Path;

    /// Opens (creating if need be) and locks `path` in `dir`.
    pub(super) fn lock(dir: &Path, path: &Path) -> Result<File, Locked> {
        ready_dir(dir)?;
        let file = open(path)?;
        let meta = file.metadata()?;
        if !meta.file_type().is_file() {
            return Err(io::Error::other("not a regular file").into());
        }
        let mut lock = whole_file();
        // SAFETY: fcntl on a descriptor this function owns, with a flock it owns.
        if unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETLK, &lock) } == 0 {
            return Ok(file);
        }
        let err = io::Error::last_os_error();
        if !matches!(err.raw_os_error(), Some(libc::EACCES | libc::EAGAIN)) {
            return Err(err.into());
        }
        // SAFETY: as above; F_GETLK writes the holder into `lock`.
        let holder = match unsafe { libc::fcntl(file.as_raw_fd(), libc::F_GETLK, &mut lock) } {
            0 if lock.l_type != short(libc::F_UNLCK) && lock.l_pid > 0 => Some(lock.l_pid as u32),
            _ => None,
        };
        Err(Locked::By(holder))
    }

    /// An exclusive lock on the whole file.
    fn whole_file() -> libc::flock {
        // SAFETY: flock is plain data; zero is a valid value of every field.
        let mut lock: libc::flock = unsafe { std::mem::zeroed() };
        lock.l_type = short(libc::F_WRLCK);
        lock.l_whence = short(libc::SEEK_SET);
        lock
    }

    /// The lock constants are `c_int` on Linux and `c_short` on macOS; `flock`'s
    /// fields are `c_short` on both.
    #[allow(clippy::unnecessary_cast)]
    fn short(v: impl Into<libc::c_int>) -> libc::c_short {
        v.into() as libc::c_short
    }

    /// The guard directory: a real directory (never a link), made sticky and
    /// writable by every user when this process creates it, so that every user's
    /// generators meet there and none can remove another's files.
    fn ready_dir(dir: &Path) -> io::Result<()> {
        let meta = match fs::symlink_metadata(dir) {
            Ok(meta) => meta,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
                // Made here, or by another process just now (then the checks below
                // decide, and this may fail harmlessly).
                let _ = fs::set_permissions(dir, fs::Permissions::from_mode(0o1777));
                fs::symlink_metadata(dir)?
            }
            Err(e) => return Err(e),
        };
        if !meta.file_type().is_dir() {
            return Err(io::Error::other("not a directory (a link is refused)"));
        }
        // SAFETY: geteuid cannot fail.
        let me = unsafe { libc::geteuid() };
        let sticky = meta.mode() & 0o1000 != 0;
        if meta.uid() != me && meta.uid() != 0 && !sticky {
            return Err(io::Error::other(format!(
                "owned by uid {} and not sticky: its owner could remove the guard files",
                meta.uid()
            )));
        }
        Ok(())
    }

    /// Opens an existing guard file, else creates it (exclusively, so that a link
    /// planted in between is never followed) readable and writable by every user.
    fn open(path: &Path) -> io::Result<File> {
        let flags = libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC;
        loop {
            match OpenOptions::new().read(true).write(true).custom_flags(flags).open(path) {
                Ok(file) => return Ok(file),
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
            match OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .mode(0o600)
                .custom_flags(flags)
                .open(path)
            {
                Ok(file) => {
                    file.set_permissions(fs::Permissions::from_mode(0o666))?;
                    return Ok(file);
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }
}

#[cfg(not(unix))]
mod sys {
    use super::Locked;
    use std::fs::{self, File, OpenOptions, TryLockError};
    use std::path::Path;

    /// Opens and locks `path`; the system does not say who holds a lock here.
    pub(super) fn lock(dir: &Path, path: &Path) -> Result<File, Locked> {
        fs::create_dir_all(dir)?;
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)?;
        match file.try_lock() {
            Ok(()) => Ok(file),
            Err(TryLockError::WouldBlock) => Err(Locked::By(None)),
            Err(TryLockError::Error(e)) => Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_name_the_space_not_the_preset_name() {
        let custom = Layout::builder().build().unwrap();
        assert_eq!(key(&Layout::SNOWFLAKE, 5), key(&custom, 5));
        assert_ne!(key(&Layout::SNOWFLAKE, 5), key(&Layout::SNOWFLAKE, 6));
        assert_ne!(key(&Layout::SNOWFLAKE, 5), key(&Layout::SONYFLAKE, 5));
    }
}
