//! `file:///dir?namespace=NAME` — one exclusive lock per node id, for processes
//! on one host: the standard library's `File::try_lock` (`flock` on Linux and
//! macOS, `LockFileEx` on Windows; docs/leases.md, "Per operating system"). The OS drops a dead process's locks at once, so there is
//! no expiry: the heartbeat only rewrites the fence timestamp in the lock file
//! (which is why the TTL is capped at [`FILE_TTL_CAP_MS`]: a killed holder's
//! successor waits at most that long for its clock to pass the fence).
//!
//! Lock files are `DIR/NAMESPACE.NODE.lease`, holding `LAST_MS HOLDER`. Deleting
//! them while holders run (a wiped directory) is survived safely: a lock on a
//! deleted file protects nothing, so a holder whose file was removed or replaced
//! reports the lease lost at its next renewal, and `DIR/NAMESPACE.incarnation` (the
//! marker: the Unix ms the namespace was first used here, re-checked after the lock
//! is taken) goes with the lock files, so a newcomer waits out the lock delay.
//! On Windows lease files are opened without `FILE_SHARE_DELETE`: while anyone has
//! one open it cannot be deleted or replaced at all, so the check that the locked
//! file is still the one at its path only asks that it still be there.

use super::{Acquired, LeaseStore, lease_error};
use crate::error::Result;
use std::fs::{File, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Longest TTL of a file lease: how often (a third of it) the fence is written.
pub const FILE_TTL_CAP_MS: u64 = 600;

/// Advisory-lock leases in a directory.
#[derive(Debug)]
pub struct FileStore {
    dir: PathBuf,
    namespace: String,
    held: Option<(u64, File)>,
}

impl FileStore {
    /// Leases in `dir` (created if missing), in `namespace`.
    pub fn new(dir: impl AsRef<Path>, namespace: &str) -> Result<FileStore> {
        super::check_namespace(namespace)?;
        let dir = dir.as_ref().to_path_buf();
        std::fs::create_dir_all(&dir)
            .map_err(|e| lease_error(format!("cannot create the lease directory {}: {e}", dir.display())))?;
        Ok(FileStore {
            dir,
            namespace: namespace.to_string(),
            held: None,
        })
    }

    fn path_of(&self, node: u64) -> PathBuf {
        self.dir.join(format!("{}.{node}.lease", self.namespace))
    }

    fn marker_path(&self) -> PathBuf {
        self.dir.join(format!("{}.incarnation", self.namespace))
    }

    /// The marker's creation time and identity, creating it when missing. An empty
    /// or unreadable marker (another process is writing it) reads as created now.
    fn marker(&self) -> Result<(u64, MarkerId)> {
        let path = self.marker_path();
        let now = crate::clock::precise_now_ms();
        match create_new(&path) {
            Ok(mut f) => {
                f.write_all(format!("{now}\n").as_bytes())
                    .map_err(|e| lease_error(format!("cannot write {}: {e}", path.display())))?;
                Ok((now, marker_id(&path)))
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let id = marker_id(&path);
                Ok((id.text.trim().parse().unwrap_or(now), id))
            }
            Err(e) => Err(lease_error(format!("cannot create {}: {e}", path.display()))),
        }
    }

    fn held(&mut self, node: u64) -> Result<&mut File> {
        match &mut self.held {
            Some((n, f)) if *n == node => Ok(f),
            _ => Err(lease_error(format!("file lease on node id {node} is not held here"))),
        }
    }

    /// Whether the locked file is still the one at its path (not deleted or replaced).
    #[cfg(unix)]
    fn still_linked(&self, node: u64, file: &File) -> bool {
        use std::os::unix::fs::MetadataExt;
        match (file.metadata(), std::fs::metadata(self.path_of(node))) {
            (Ok(a), Ok(b)) => a.ino() == b.ino() && a.dev() == b.dev(),
            _ => false,
        }
    }

    /// Whether the locked file is still at its path: opened without
    /// `FILE_SHARE_DELETE`, it cannot be deleted, renamed or replaced while open.
    #[cfg(not(unix))]
    fn still_linked(&self, node: u64, _file: &File) -> bool {
        std::fs::metadata(self.path_of(node)).is_ok_and(|m| m.is_file())
    }
}

/// What tells one incarnation marker from the next: its text (the ms it was
/// created) and, on unix, its inode.
#[derive(Debug, PartialEq, Eq)]
struct MarkerId {
    text: String,
    inode: u64,
}

fn marker_id(path: &Path) -> MarkerId {
    #[cfg(unix)]
    let inode = std::fs::metadata(path).map_or(0, |m| std::os::unix::fs::MetadataExt::ino(&m));
    // No inode in stable std there; a recreated marker holds another time.
    #[cfg(not(unix))]
    let inode = 0;
    MarkerId {
        text: std::fs::read_to_string(path).unwrap_or_default(),
        inode,
    }
}

fn create_new(path: &Path) -> std::io::Result<File> {
    super::file_options().write(true).create_new(true).open(path)
}

fn write_record(file: &mut File, last_ms: u64, holder: &str) -> std::io::Result<()> {
    let text = format!("{last_ms} {holder}\n");
    file.seek(SeekFrom::Start(0))?;
    file.write_all(text.as_bytes())?;
    file.set_len(text.len() as u64)
}

fn read_last(file: &mut File) -> u64 {
    let mut text = String::new();
    if file.seek(SeekFrom::Start(0)).is_err() || file.read_to_string(&mut text).is_err() {
        return 0;
    }
    text.split_whitespace().next().and_then(|n| n.parse().ok()).unwrap_or(0)
}

impl LeaseStore for FileStore {
    fn describe(&self) -> String {
        format!("file://{} namespace {:?}", self.dir.display(), self.namespace)
    }

    fn namespace(&self) -> &str {
        &self.namespace
    }

    fn effective_ttl_ms(&self, requested: u64) -> u64 {
        requested.min(FILE_TTL_CAP_MS)
    }

    /// The lock is the OS's until this process exits: no one else can be given the
    /// id meanwhile, however long the process is stopped.
    fn held_while_alive(&self) -> bool {
        true
    }

    fn acquire(&mut self, max_node: u64, _holder: &str, _ttl_ms: u64, until: Instant) -> Result<Option<Acquired>> {
        let (created, marker) = self.marker()?;
        for node in 0..=max_node {
            if node % 1024 == 1023 && Instant::now() >= until {
                return Err(lease_error(format!(
                    "timed out scanning {} for a free node id",
                    self.describe()
                )));
            }
            let path = self.path_of(node);
            // std opens files close-on-exec: a child process does not inherit the lock.
            let mut file = super::file_options()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .map_err(|e| lease_error(format!("cannot open the lease file {}: {e}", path.display())))?;
            match file.try_lock() {
                Ok(()) => {}
                Err(TryLockError::WouldBlock) => continue,
                Err(TryLockError::Error(err)) => {
                    return Err(lease_error(format!("cannot lock {}: {err}", path.display())));
                }
            }
            if !self.still_linked(node, &file) {
                // Deleted between open and lock: try this id again next time round.
                continue;
            }
            let last_ms = read_last(&mut file);
            // The marker must still be the one read before the lock: if the
            // directory was wiped meanwhile, our file may be new: count it as brand new.
            let same = marker_id(&self.marker_path()) == marker;
            let incarnation_age_ms = if same {
                crate::clock::precise_now_ms().saturating_sub(created)
            } else {
                0
            };
            self.held = Some((node, file));
            // One host, one clock: no store clock to check ours against.
            return Ok(Some(Acquired::new(node, last_ms, incarnation_age_ms)));
        }
        Ok(None)
    }

    fn renew(&mut self, node: u64, holder: &str, _ttl_ms: u64, fence_ms: u64, _until: Instant) -> Result<bool> {
        let ok = {
            let file = self.held(node)?;
            let stored = read_last(file);
            write_record(file, stored.max(fence_ms), holder)
                .map_err(|e| lease_error(format!("cannot write the lease file for node id {node}: {e}")))?;
            true
        };
        let linked = match &self.held {
            Some((_, f)) => self.still_linked(node, f),
            None => false,
        };
        Ok(ok && linked)
    }

    fn release(&mut self, node: u64, holder: &str, last_ms: u64, _until: Instant) -> Result<()> {
        let result = self
            .held(node)
            .and_then(|f| write_record(f, last_ms, holder).map_err(|e| lease_error(e.to_string())));
        // Closing the descriptor drops the lock (after the record is written).
        self.held = None;
        result
    }
}
