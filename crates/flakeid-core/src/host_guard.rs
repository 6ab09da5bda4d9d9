//! The host guard: a node id has one owner on a host at a time, and the next owner
//! starts above everything the last one issued.
//!
//! One file per (ID space, node id) in the guard directory, locked for as long as a
//! process has a live generator on that node id (the in-process side, one counter
//! per node id, is `crate::owner`). The file holds a one-line record of its owner:
//! `held PROCESS AHEAD_MS` while a process holds it (`AHEAD_MS`: how far its
//! generators may run ahead of the clock), `released PROCESS FLOOR_MS` once it let
//! go (`FLOOR_MS`: the last ms any of its IDs may carry). Whoever takes the file next
//! starts above the floor; after a holder that ended without letting go (a crash,
//! `kill -9`) it starts above the clock now plus that holder's lead, since a dead
//! process issues nothing more and its IDs were never further ahead of the clock.
//!
//! Why POSIX record locks (`fcntl(F_SETLK)`) on unix: the kernel drops them when
//! the process ends, however it ends, and a forked child does not inherit them, so
//! a child neither keeps its parent's guard alive nor passes as its holder. Their
//! one trap, that closing *any* descriptor of the file drops the process's lock, is
//! why a process opens each guard file once (its owner holds it) and why a forked
//! child never closes the descriptors it inherited.
//!
//! A directory that cannot be used (read-only, not ours, full) is warned about once
//! for a fixed node id, which keeps the in-process rule; a build with no node id is
//! refused there (`crate::owner`, `crate::node_origin`). The guard never
//! lapses silently: a watcher thread checks every held file's identity every
//! [`WATCH_MS`]; a file removed or replaced under its holder is taken again, or,
//! when another process took the node id meanwhile, reported and the holder's
//! generators stop issuing. A newcomer that finds no file (a fresh one) waits out
//! two of those periods before its first ID, so such a holder has stopped first.
//!
//! Where: `FLAKEID_HOST_GUARD` names the directory (an absolute path), or `off`
//! turns the cross-process check off (never the in-process one); unset,
//! `/tmp/flakeid-host-guard` (unix) or the temporary directory (Windows). What it
//! cannot see: other hosts, and containers or services with a private `/tmp`
//! (docs/design.md, "Who owns a node id").

use crate::error::{Error, Result};
use crate::layout::{Layout, Order};
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The variable that moves or turns off the guard.
pub const HOST_GUARD_ENV: &str = "FLAKEID_HOST_GUARD";

/// How often the watcher checks that every held guard file is still the one at
/// its path.
pub(crate) const WATCH_MS: u64 = 100;

/// How long a newcomer that created a guard file waits before it issues: a holder
/// of a removed file notices within one watch period and stops.
const FRESH_WAIT_MS: u64 = 2 * WATCH_MS + 50;

/// A held guard on (ID space, node id); let go when dropped, released (its floor
/// written) when its owner lets go (`crate::owner`), dropped by the system when the process ends.
#[derive(Debug)]
pub struct HostGuard {
    file: Option<File>,
    path: PathBuf,
    /// The file's identity when locked (unix: device and inode).
    id: (u64, u64),
    node: u64,
    pid: u32,
}

/// What taking a guard found: the guard, and the floor its previous owner left.
#[derive(Debug)]
pub(crate) struct Taken {
    pub(crate) guard: HostGuard,
    /// The last ms an ID of an earlier owner may carry (`None`: no earlier owner,
    /// or this very process).
    pub(crate) floor_ms: Option<u64>,
}

/// Why a guard file could not be taken.
pub(crate) enum Refused {
    /// Another live process holds it (its pid where the system says).
    Held(Option<u32>),
    /// Something else went wrong: the directory cannot be used.
    Unusable(io::Error),
}

/// What the watcher found for one held guard.
pub(crate) enum Watched {
    /// Still the file at its path.
    Same,
    /// Removed or replaced, and taken again.
    Retaken,
    /// Removed or replaced, and another process holds the new file.
    Lost(Option<u32>),
}

impl HostGuard {
    /// Holds the guard of `node` in `layout`'s ID space for as long as the value
    /// lives: the PostgreSQL extension's postmaster holds it for its backends, whose
    /// generators over one shared counter take none. `None` when the guard is
    /// turned off or its directory cannot be used (warned once); a refusal naming
    /// the holder when another process holds it.
    pub fn hold(layout: &Layout, node: u64) -> Result<Option<HostGuard>> {
        let Some(dir) = guard_dir()? else {
            return Ok(None);
        };
        match take(&dir, layout, node, 0) {
            Ok(taken) => Ok(Some(taken.guard)),
            Err(Refused::Held(pid)) => Err(refusal(node, pid, &dir.join(key(layout, node)))),
            Err(Refused::Unusable(e)) => {
                warn_unusable(&dir, &e);
                Ok(None)
            }
        }
    }

    /// The node id this guard is of.
    pub fn node(&self) -> u64 {
        self.node
    }

    /// Rewrites the held record with a larger lead (a generator with a larger
    /// borrow window joined this node id's counter).
    pub(crate) fn set_ahead(&mut self, ahead_ms: u64) {
        if let Some(file) = &mut self.file {
            let _ = write_record(file, &format!("held {} {ahead_ms}", process_tag()));
        }
    }

    /// Lets go, leaving `floor_ms` (the last ms an ID of this process on the node
    /// id may carry) for the next owner.
    pub(crate) fn release(mut self, floor_ms: u64) {
        if let Some(file) = &mut self.file
            && self.pid == std::process::id()
        {
            let _ = write_record(file, &format!("released {} {floor_ms}", process_tag()));
        }
        self.let_go();
    }

    /// Whether the held file is still the one at its path; if not, takes the path
    /// again, or reports who holds it now (then leaves `floor_ms` in the new file
    /// for its holder, which reads it after its fresh-file wait).
    pub(crate) fn watch(&mut self, ahead_ms: u64, floor_ms: impl FnOnce() -> u64) -> Watched {
        if self.pid != std::process::id() || sys::identity(&self.path).ok() == Some(self.id) {
            return Watched::Same;
        }
        let dir = self.path.parent().map(Path::to_path_buf).unwrap_or_default();
        match sys::lock(&dir, &self.path) {
            Ok(mut file) => {
                let _ = write_record(&mut file, &format!("held {} {ahead_ms}", process_tag()));
                self.id = sys::file_identity(&file).unwrap_or_default();
                // The old descriptor's lock protects nothing now; the new one is held.
                if let Some(old) = self.file.replace(file) {
                    drop(old);
                }
                Watched::Retaken
            }
            Err(Refused::Held(pid)) => {
                let _ = sys::append_lost(&self.path, floor_ms());
                Watched::Lost(pid)
            }
            Err(Refused::Unusable(_)) => Watched::Lost(None),
        }
    }

    fn let_go(&mut self) {
        let Some(file) = self.file.take() else {
            return;
        };
        if std::process::id() != self.pid {
            // A forked child's copy: closing it would drop a lock this child may
            // hold on the same file through a guard of its own.
            std::mem::forget(file);
            return;
        }
        drop(file);
    }
}

impl Drop for HostGuard {
    fn drop(&mut self) {
        self.let_go();
    }
}

/// Takes the guard file of `node` in `dir` and reads what its last owner left.
pub(crate) fn take(dir: &Path, layout: &Layout, node: u64, ahead_ms: u64) -> std::result::Result<Taken, Refused> {
    let path = dir.join(key(layout, node));
    let mut file = sys::lock(dir, &path)?;
    let mut record = read_record(&mut file);
    let fresh = record.trim().is_empty();
    write_record(&mut file, &format!("held {} {ahead_ms}", process_tag())).map_err(Refused::Unusable)?;
    if fresh {
        // A holder of a removed file at this path stops within a watch period and
        // leaves its floor here.
        std::thread::sleep(std::time::Duration::from_millis(FRESH_WAIT_MS));
        record = read_record(&mut file);
        write_record(&mut file, &format!("held {} {ahead_ms}", process_tag())).map_err(Refused::Unusable)?;
    }
    let floor_ms = floor_of(&record, layout.tick_ms());
    let id = sys::file_identity(&file).map_err(Refused::Unusable)?;
    Ok(Taken {
        guard: HostGuard {
            file: Some(file),
            path,
            id,
            node,
            pid: std::process::id(),
        },
        floor_ms,
    })
}

/// The floor a record leaves its next owner: a released owner's floor (none when
/// it was this process: its counter goes on), a dead holder's clock plus its lead,
/// and any floor a holder that lost the file left.
fn floor_of(record: &str, tick_ms: u64) -> Option<u64> {
    let me = process_tag();
    let mut floor: Option<u64> = None;
    for line in record.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        let at = match words.as_slice() {
            ["released", who, ms] if *who != me => ms.parse().ok(),
            ["held", who, ahead] if *who != me => ahead
                .parse::<u64>()
                .ok()
                .map(|a| crate::clock::precise_now_ms() + a + tick_ms),
            ["lost", ms] => ms.parse().ok(),
            _ => None,
        };
        floor = floor.max(at);
    }
    floor
}

/// This process in guard records: its pid and the ns its first record was
/// written, so that a later process given the same pid is another owner.
fn process_tag() -> String {
    static TAG: OnceLock<(u32, String)> = OnceLock::new();
    let pid = std::process::id();
    let (of, tag) = TAG.get_or_init(|| (pid, format!("{pid}.{}", crate::clock::precise_now_ns())));
    if *of == pid {
        tag.clone()
    } else {
        // A forked child: its own tag (the static is the parent's copy).
        format!("{pid}.{}", crate::clock::precise_now_ns())
    }
}

fn read_record(file: &mut File) -> String {
    let mut text = String::new();
    if file.seek(SeekFrom::Start(0)).is_err() || file.read_to_string(&mut text).is_err() {
        return String::new();
    }
    text
}

fn write_record(file: &mut File, line: &str) -> io::Result<()> {
    let text = format!("{line}\n");
    file.seek(SeekFrom::Start(0))?;
    file.write_all(text.as_bytes())?;
    file.set_len(text.len() as u64)
}

/// The file name of (ID space, node id): every field that makes two layouts' IDs
/// one space, so equal layouts meet whatever they are called.
pub(crate) fn key(layout: &Layout, node: u64) -> String {
    format!("node-{node}.{}.lock", space(layout))
}

/// The ID space of a layout: bits, tick, epoch and order.
pub(crate) fn space(layout: &Layout) -> String {
    let order = match layout.order() {
        Order::TimeNodeSeq => "tns",
        Order::TimeSeqNode => "tsn",
    };
    format!(
        "t{}d{}w{}s{}.tick{}.epoch{}.{order}",
        layout.time_bits(),
        layout.datacenter_bits(),
        layout.worker_bits(),
        layout.sequence_bits(),
        layout.tick_ms(),
        layout.epoch_ms(),
    )
}

/// The guard directory (`None`: turned off).
pub(crate) fn guard_dir() -> Result<Option<PathBuf>> {
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

/// The refusal of a fixed node id that another live process on this host holds.
pub(crate) fn refusal(node: u64, holder: Option<u32>, path: &Path) -> Error {
    let who = match holder {
        Some(pid) => format!("process {pid}"),
        None => "another process".to_string(),
    };
    Error::config(
        "node",
        format!(
            "node id {node} of this layout is already in use on this host by {who} (host guard {}): two processes on one \
             node id would issue the same IDs. Fixes, in order: in one process, build generators freely (they share \
             one counter) or close the other process's; give each worker process its own node id; leave the node id \
             unset, so that each process takes a free one on this host (test runners' workers too); across hosts, a \
             lease (a Redis, PostgreSQL or etcd URL)",
            path.display()
        ),
    )
}

/// Says once per process that the guard directory cannot be used, and what that
/// means; the generator is built all the same.
pub(crate) fn warn_unusable(dir: &Path, err: &io::Error) {
    static WARNED: OnceLock<()> = OnceLock::new();
    WARNED.get_or_init(|| {
        eprintln!(
            "flakeid: warning: the host guard directory {} cannot be used ({err}): generators on a fixed node id \
             are not checked against other processes on this host (one with no node id is refused); set \
             {HOST_GUARD_ENV} to a writable directory of your own",
            dir.display()
        );
    });
}

#[cfg(unix)]
mod sys {
    use super::Refused;
    use std::fs::{self, DirBuilder, File, OpenOptions};
    use std::io;
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
    use std::path::Path;

    /// Opens (creating if need be) and locks `path` in `dir`.
    pub(super) fn lock(dir: &Path, path: &Path) -> Result<File, Refused> {
        ready_dir(dir).map_err(Refused::Unusable)?;
        let file = open(path).map_err(Refused::Unusable)?;
        let meta = file.metadata().map_err(Refused::Unusable)?;
        if !meta.file_type().is_file() {
            return Err(Refused::Unusable(io::Error::other("not a regular file")));
        }
        let mut lock = whole_file();
        // SAFETY: fcntl on a descriptor this function owns, with a flock it owns.
        if unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETLK, &lock) } == 0 {
            return Ok(file);
        }
        let err = io::Error::last_os_error();
        if !matches!(err.raw_os_error(), Some(libc::EACCES | libc::EAGAIN)) {
            return Err(Refused::Unusable(err));
        }
        // SAFETY: as above; F_GETLK writes the holder into `lock`.
        let holder = match unsafe { libc::fcntl(file.as_raw_fd(), libc::F_GETLK, &mut lock) } {
            0 if lock.l_type != short(libc::F_UNLCK) && lock.l_pid > 0 => Some(lock.l_pid as u32),
            _ => None,
        };
        Err(Refused::Held(holder))
    }

    /// The identity (device, inode) of the file at `path`, not following a link.
    pub(super) fn identity(path: &Path) -> io::Result<(u64, u64)> {
        let m = fs::symlink_metadata(path)?;
        Ok((m.dev(), m.ino()))
    }

    pub(super) fn file_identity(file: &File) -> io::Result<(u64, u64)> {
        let m = file.metadata()?;
        Ok((m.dev(), m.ino()))
    }

    /// Adds a lost holder's floor to the file at `path`, for its new holder.
    pub(super) fn append_lost(path: &Path, floor_ms: u64) -> io::Result<()> {
        use std::io::Write;
        let flags = libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC;
        let mut f = OpenOptions::new().append(true).custom_flags(flags).open(path)?;
        f.write_all(format!("lost {floor_ms}\n").as_bytes())
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
    /// generators meet there and none can remove another's files. One owned by
    /// another user who is not root is not trusted: its owner can remove any file
    /// in it, sticky or not.
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
        if meta.uid() != me && meta.uid() != 0 {
            return Err(io::Error::other(format!(
                "owned by uid {}, who could remove the guard files",
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
    use super::Refused;
    use std::fs::{self, File, OpenOptions, TryLockError};
    use std::io;
    use std::path::Path;

    /// Opens and locks `path`; the system does not say who holds a lock here.
    pub(super) fn lock(dir: &Path, path: &Path) -> Result<File, Refused> {
        fs::create_dir_all(dir).map_err(Refused::Unusable)?;
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(Refused::Unusable)?;
        match file.try_lock() {
            Ok(()) => Ok(file),
            Err(TryLockError::WouldBlock) => Err(Refused::Held(None)),
            Err(TryLockError::Error(e)) => Err(Refused::Unusable(e)),
        }
    }

    /// Opened without `FILE_SHARE_DELETE` (std's default), a locked file cannot be
    /// removed or replaced while it is open: its identity is its being there.
    pub(super) fn identity(path: &Path) -> io::Result<(u64, u64)> {
        fs::metadata(path).map(|_| (0, 0))
    }

    pub(super) fn file_identity(_file: &File) -> io::Result<(u64, u64)> {
        Ok((0, 0))
    }

    pub(super) fn append_lost(path: &Path, floor_ms: u64) -> io::Result<()> {
        use std::io::Write;
        let mut f = OpenOptions::new().append(true).open(path)?;
        f.write_all(format!("lost {floor_ms}\n").as_bytes())
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

    /// What a record leaves the next owner: a release's floor, a dead holder's
    /// clock plus its lead, a lost holder's floor; nothing of this process's own.
    #[test]
    fn a_record_leaves_its_floor() {
        let me = process_tag();
        assert_eq!(floor_of("", 1), None);
        assert_eq!(floor_of("released 1.2 500\n", 1), Some(500));
        assert_eq!(floor_of(&format!("released {me} 500\n"), 1), None);
        let now = crate::clock::precise_now_ms();
        let dead = floor_of("held 1.2 2000\n", 1).unwrap();
        assert!(dead >= now + 2001 && dead < now + 3001, "{dead} vs {now}");
        assert_eq!(floor_of(&format!("held {me} 0\nlost 900\n"), 1), Some(900));
    }
}
