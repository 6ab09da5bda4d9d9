//! The host guard: a node id has one owner on a host at a time, and the next owner
//! starts above everything the last one issued.
//!
//! One file per (ID space, node id) in the guard directory, locked for as long as a
//! process has a live generator on that node id (the in-process side, one counter
//! per node id, is `crate::owner`). The file holds its owner's record, a first line
//! and a floor line: `held PROCESS AHEAD_MS` while a process holds it (`AHEAD_MS`:
//! how far its generators may run ahead of the clock), `released PROCESS FLOOR_MS`
//! once it let go (`FLOOR_MS`: the last ms any of its IDs may carry), then
//! `floor MS`: the highest floor any earlier record left, carried forward by every
//! writer, so that an owner killed before it issued (while it waited out the floor
//! it read) never hides that floor from the next. Whoever takes the file next starts
//! above all of it; after a holder that ended without letting go (a crash, `kill
//! -9`) above the clock now plus that holder's lead, since a dead process issues
//! nothing more and its IDs were never further ahead of the clock. A record that is
//! not well formed is read as the worst one: a dead holder with the largest lead
//! any generator may take.
//!
//! The file is writable by its creator's user only (0644, in a sticky directory
//! every user may create in): another user reads the record and sees the lock, so
//! it is refused a node id held or left by someone else, and cannot write a record
//! that lowers a floor.
//!
//! Why open-file-description locks on Linux (`fcntl(F_OFD_SETLK)`): the kernel
//! drops them when the last descriptor of the open file goes, which is when the
//! process ends, however it ends; and no other open of the file drops them, so code
//! in the holder's process that opens and closes the guard file (a library, a log
//! rotation) leaves the guard held. They conflict with the POSIX record locks other
//! systems (and older versions) take on the same file. A forked child inherits
//! the descriptor, and with it the lock: a fork handler closes the child's copies
//! at once (the parent's keep the lock), so a child neither keeps its parent's
//! guard alive after the parent ends nor passes as its holder; `O_CLOEXEC` does the
//! same for a spawned program. Other unix systems (macOS, the BSDs) have no
//! open-file-description `fcntl` lock and keep POSIX record locks (`F_SETLK`),
//! which also conflict with Linux's and report the holder's pid; their one trap
//! remains there: closing *any* descriptor of the file drops the process's lock, so
//! a process opens each guard file once (its owner holds it). Windows'
//! `LockFileEx` lock belongs to the handle that took it; no other handle drops it.
//!
//! A directory that cannot be used (read-only, not ours, full) is warned about once
//! for a fixed node id, which keeps the in-process rule; a build with no node id is
//! refused there (`crate::owner`, `crate::node_origin`). The guard never
//! lapses silently: a watcher thread checks every held file's identity every
//! [`WATCH_MS`]; a file removed or replaced under its holder is taken again, or,
//! when another process took the node id meanwhile, reported and the holder's
//! generators stop issuing until that process lets go (the watcher then takes the
//! file again and the counter goes on above the other's floor). Each look that
//! finds the file the holder's lets its generators claim ticks up to
//! [`CONFIRMED_MS`] (plus their lead) past it; a claim beyond looks at the file
//! itself first, so a holder whose watcher did not run (a paused process) takes no
//! new tick before it has looked. A newcomer that finds no file (a fresh one)
//! waits longer than that before its first ID, so such a holder has stopped first.
//!
//! A leaf: it takes a file's path and the numbers its records are read with
//! ([`Lead`]), and answers [`Taken`], [`Refused`] or [`Watched`]; `crate::owner`
//! names the path (`FLAKEID_HOST_GUARD`, the ID space's key) and words every
//! refusal and warning. What it cannot see: other hosts, and containers or
//! services with a private `/tmp` (docs/design.md, "Who owns a node id").

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// How often the watcher checks that every held guard file is still the one at
/// its path.
pub(crate) const WATCH_MS: u64 = 100;

/// How far past the time its file was last found its own a holder's generators
/// may issue (the ticks up to then, plus their lead) before they look at the file
/// again themselves (`crate::owner`): the watcher looks every [`WATCH_MS`], and a
/// holder whose watcher did not run (the process paused, `SIGSTOP`, a frozen VM)
/// takes no new tick before it has looked.
pub(crate) const CONFIRMED_MS: u64 = 2 * WATCH_MS;

/// How long a newcomer that created a guard file waits before it issues: longer
/// than a holder of a removed file may issue past its last look at it (a tick
/// more, whose IDs all carry that tick's ms), so the newcomer's first tick is
/// past the holder's last, paused or not.
fn fresh_wait_ms(tick_ms: u64) -> u64 {
    CONFIRMED_MS + tick_ms + 50
}

/// The length every record is written at (spaces pad its floor line): one write
/// replaces the whole of the last record, so a writer killed before it cuts the
/// file to length leaves whole lines behind it, never the tail of a longer one.
const RECORD_LEN: usize = 128;

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
    /// The highest floor any record read so far left: written on in every record.
    carried_ms: u64,
    /// The numbers records are read with.
    lead: Lead,
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
    /// Another process holds it (its pid where the record or the system says).
    Held(Option<u32>),
    /// Another user's file (uid), which no process holds now: left by a process
    /// that ended, with a floor this user can read but never rewrite, so it
    /// cannot take the node id.
    #[cfg_attr(not(unix), allow(dead_code))]
    Left(u32),
    /// Something else went wrong: the directory cannot be used.
    Unusable(io::Error),
}

/// What the watcher found for one held guard.
pub(crate) enum Watched {
    /// Still the file at its path.
    Same,
    /// Removed or replaced, and taken again; the floor a process that held the
    /// new file meanwhile left, if any.
    Retaken(Option<u64>),
    /// Removed or replaced, and another process holds the new file.
    Lost(Option<u32>),
}

/// What a guard's numbers are: the ms of one tick, how far its holder's IDs may run
/// ahead of the clock, the most any holder's may (a record not well formed), and
/// the last ms an ID of the space can carry (no floor is above it: nothing was
/// issued past it).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Lead {
    pub(crate) tick_ms: u64,
    pub(crate) ahead_ms: u64,
    pub(crate) max_ms: u64,
    pub(crate) last_ms: u64,
}

impl HostGuard {
    /// The node id this guard is of.
    pub fn node(&self) -> u64 {
        self.node
    }

    /// Rewrites the held record with a larger lead (a generator with a larger
    /// borrow window joined this node id's counter).
    pub(crate) fn set_ahead(&mut self, ahead_ms: u64) {
        let carried = self.carried_ms;
        if let Some(file) = &mut self.file {
            let _ = write_record(file, &held_line(ahead_ms), carried);
        }
    }

    /// Lets go, leaving `floor_ms` (the last ms an ID of this process on the node
    /// id may carry), or a higher floor it read, for the next owner.
    pub(crate) fn release(mut self, floor_ms: u64) {
        let floor = floor_ms.max(self.carried_ms);
        if let Some(file) = &mut self.file
            && self.pid == std::process::id()
        {
            let _ = write_record(file, &format!("released {} {floor}", process_tag()), floor);
        }
        self.let_go();
    }

    /// Whether the held file is still the one at its path; if not, takes the path
    /// again (with the floor a process that held it meanwhile left), or reports who
    /// holds it now (then leaves `floor_ms` in the new file for its holder, which
    /// reads it after its fresh-file wait).
    pub(crate) fn watch(&mut self, ahead_ms: u64, floor_ms: impl FnOnce() -> u64) -> Watched {
        if self.pid != std::process::id() || sys::identity(&self.path).ok() == Some(self.id) {
            return Watched::Same;
        }
        match sys::lock(&self.path) {
            Ok(mut file) => {
                let read = Record::read(&mut file, self.lead);
                self.carried_ms = self.carried_ms.max(read.carried_ms);
                let _ = write_record(&mut file, &held_line(ahead_ms), self.carried_ms);
                self.id = sys::file_identity(&file).unwrap_or_default();
                // The old descriptor's lock protects nothing now; the new one is held.
                if let Some(old) = self.file.replace(file) {
                    sys::close(old);
                }
                Watched::Retaken(read.floor_ms)
            }
            Err(Refused::Held(pid)) => {
                let _ = sys::append_lost(&self.path, floor_ms());
                Watched::Lost(pid)
            }
            Err(Refused::Left(_) | Refused::Unusable(_)) => Watched::Lost(None),
        }
    }

    fn let_go(&mut self) {
        let Some(file) = self.file.take() else {
            return;
        };
        if std::process::id() != self.pid {
            // A forked child's copy: the fork handler closed its descriptor already
            // (a number this child may have opened again since).
            std::mem::forget(file);
            return;
        }
        sys::close(file);
    }
}

impl Drop for HostGuard {
    fn drop(&mut self) {
        self.let_go();
    }
}

/// Takes the guard file at `path` (of `node`) and reads what its last owner left.
pub(crate) fn take(path: &Path, node: u64, lead: Lead) -> std::result::Result<Taken, Refused> {
    let mut file = sys::lock(path)?;
    let mut record = Record::read(&mut file, lead);
    write_record(&mut file, &held_line(lead.ahead_ms), record.carried_ms).map_err(Refused::Unusable)?;
    if record.fresh {
        // A holder of a removed file at this path stops within a watch period and
        // leaves its floor here.
        std::thread::sleep(std::time::Duration::from_millis(fresh_wait_ms(lead.tick_ms)));
        let again = Record::read(&mut file, lead);
        record.floor_ms = record.floor_ms.max(again.floor_ms);
        record.carried_ms = record.carried_ms.max(again.carried_ms);
        write_record(&mut file, &held_line(lead.ahead_ms), record.carried_ms).map_err(Refused::Unusable)?;
    }
    let id = sys::file_identity(&file).map_err(Refused::Unusable)?;
    Ok(Taken {
        guard: HostGuard {
            file: Some(file),
            path: path.to_path_buf(),
            id,
            node,
            pid: std::process::id(),
            carried_ms: record.carried_ms,
            lead,
        },
        floor_ms: record.floor_ms,
    })
}

/// What a record leaves its next owner.
#[derive(Debug, PartialEq)]
struct Record {
    /// Empty: a file just created (by this process or one about to write it).
    fresh: bool,
    /// The floor to start above: none after this process's own record (its counter
    /// goes on), but for floors a process that lost the file left in it.
    floor_ms: Option<u64>,
    /// The highest floor in it, this process's own too: carried into its next record.
    carried_ms: u64,
}

impl Record {
    fn read(file: &mut File, lead: Lead) -> Record {
        let text = match read_text(file) {
            Ok(text) => text,
            // Unreadable: not well formed.
            Err(_) => "\u{0}".to_string(),
        };
        let mut record = Record::parse(&text, lead.tick_ms, lead.max_ms);
        record.floor_ms = record.floor_ms.map(|f| f.min(lead.last_ms));
        record.carried_ms = record.carried_ms.min(lead.last_ms);
        record
    }

    /// A record is a `held` or `released` line, then `floor` and `lost` lines.
    /// Anything else is read as the worst record: a dead holder with the largest
    /// lead (and still every floor it holds that can be read).
    fn parse(text: &str, tick_ms: u64, max_lead_ms: u64) -> Record {
        if text.trim().is_empty() {
            return Record {
                fresh: true,
                floor_ms: None,
                carried_ms: 0,
            };
        }
        let now = crate::clock::precise_now_ms();
        let dead = |ahead: u64| now.saturating_add(ahead).saturating_add(tick_ms);
        let me = process_tag();
        let mut lines = text
            .lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .peekable();
        let mut well_formed = true;
        // The first line: whose, and its floor (a dead holder's, or a release's);
        // none in a file just created that a holder which lost its file wrote to.
        let (mine, first) = match lines.peek().map(Vec::as_slice) {
            Some(["released", who, ms]) if is_tag(who) => (*who == me, number(ms)),
            // This very process holds it (read again after the fresh-file wait): alive,
            // its lead no floor.
            Some(["held", who, ahead]) if *who == me => (true, number(ahead).map(|_| 0)),
            Some(["held", who, ahead]) if is_tag(who) => (false, number(ahead).map(dead)),
            Some(["lost", _]) => (false, Some(0)),
            _ => (false, None),
        };
        let fresh = matches!(lines.peek().map(Vec::as_slice), Some(["lost", _]));
        if !fresh {
            lines.next();
        }
        well_formed &= first.is_some();
        let mut carried: u64 = 0;
        let mut lost: Option<u64> = None;
        for words in lines {
            match words.as_slice() {
                [] => {}
                ["floor", ms] if number(ms).is_some() => carried = carried.max(number(ms).unwrap_or(0)),
                ["lost", ms] if number(ms).is_some() => lost = lost.max(number(ms)),
                _ => well_formed = false,
            }
        }
        let worst = (!well_formed).then(|| dead(max_lead_ms));
        let others = if mine {
            None
        } else {
            first.max(Some(carried).filter(|&c| c > 0))
        };
        let floor_ms = others.max(lost).max(worst);
        Record {
            fresh: fresh && well_formed,
            floor_ms,
            carried_ms: floor_ms.unwrap_or(0).max(carried).max(first.unwrap_or(0)),
        }
    }
}

fn number(word: &str) -> Option<u64> {
    word.bytes()
        .all(|b| b.is_ascii_digit())
        .then(|| word.parse().ok())
        .flatten()
}

/// A process tag: `PID.NS`.
fn is_tag(word: &str) -> bool {
    word.split_once('.')
        .is_some_and(|(pid, ns)| number(pid).is_some() && number(ns).is_some())
}

/// The pid of the process a record says holds the file.
#[cfg_attr(not(unix), allow(dead_code))]
fn holder_of(text: &str) -> Option<u32> {
    match text.split_whitespace().take(3).collect::<Vec<_>>().as_slice() {
        ["held", who, _] => who.split_once('.').and_then(|(pid, _)| pid.parse().ok()),
        _ => None,
    }
}

fn held_line(ahead_ms: u64) -> String {
    format!("held {} {ahead_ms}", process_tag())
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

fn read_text(file: &mut File) -> io::Result<String> {
    let mut text = String::new();
    file.seek(SeekFrom::Start(0))?;
    file.read_to_string(&mut text)?;
    Ok(text)
}

/// How long a refusal waits for the record of a file locked but still empty (its
/// holder made it and has not written it yet) to name the holder.
#[cfg_attr(not(unix), allow(dead_code))]
const RECORD_WAIT: std::time::Duration = std::time::Duration::from_millis(200);

/// Writes `first` and the floor line, padded to [`RECORD_LEN`], in one write.
fn write_record(file: &mut File, first: &str, floor_ms: u64) -> io::Result<()> {
    let mut text = format!("{first}\nfloor {floor_ms}");
    let pad = RECORD_LEN.saturating_sub(text.len() + 1);
    text.extend(std::iter::repeat_n(' ', pad));
    text.push('\n');
    file.seek(SeekFrom::Start(0))?;
    file.write_all(text.as_bytes())?;
    file.set_len(text.len() as u64)
}

#[cfg(unix)]
mod sys {
    use super::{Refused, holder_of, read_text};
    use crate::spin_flag::SpinFlag;
    use std::cell::UnsafeCell;
    use std::fs::{self, DirBuilder, File, OpenOptions};
    use std::io;
    use std::os::fd::{AsRawFd, RawFd};
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
    use std::path::Path;
    use std::sync::Once;

    /// Open-file-description locks where the system has them (see the module doc).
    #[cfg(target_os = "linux")]
    const SET_LOCK: libc::c_int = libc::F_OFD_SETLK;
    #[cfg(target_os = "linux")]
    const GET_LOCK: libc::c_int = libc::F_OFD_GETLK;
    #[cfg(not(target_os = "linux"))]
    const SET_LOCK: libc::c_int = libc::F_SETLK;
    #[cfg(not(target_os = "linux"))]
    const GET_LOCK: libc::c_int = libc::F_GETLK;

    /// The descriptors of every guard file this process holds open, for the fork
    /// handler to close in a child: opened, registered, closed and unregistered
    /// behind the `busy` flag, which the handler takes before every fork, so a
    /// child's copy of the list names exactly the guard descriptors it inherited.
    struct Held {
        busy: SpinFlag,
        fds: UnsafeCell<Vec<RawFd>>,
    }

    // SAFETY: `fds` is reached only while `busy` is taken (Acquire, let go with
    // Release), by one thread at a time.
    unsafe impl Sync for Held {}

    static HELD: Held = Held {
        busy: SpinFlag::new(),
        fds: UnsafeCell::new(Vec::new()),
    };

    /// Runs `f` on the list of held descriptors, no fork in between.
    fn with_held<R>(f: impl FnOnce(&mut Vec<RawFd>) -> R) -> R {
        static HANDLERS: Once = Once::new();
        HANDLERS.call_once(|| {
            extern "C" fn before() {
                HELD.busy.take();
            }
            extern "C" fn in_parent() {
                HELD.busy.give();
            }
            extern "C" fn in_child() {
                // SAFETY: the flag is this thread's (taken before the fork); close is
                // async-signal-safe. The parent's descriptors keep its locks.
                let fds = unsafe { &mut *HELD.fds.get() };
                for &fd in fds.iter() {
                    unsafe { libc::close(fd) };
                }
                fds.clear();
                HELD.busy.give();
            }
            // SAFETY: handlers that touch an atomic flag, the list and close().
            unsafe { libc::pthread_atfork(Some(before), Some(in_parent), Some(in_child)) };
        });
        HELD.busy.take();
        // SAFETY: the flag is taken.
        let r = f(unsafe { &mut *HELD.fds.get() });
        HELD.busy.give();
        r
    }

    /// Closes a held guard file (its lock goes with it).
    pub(super) fn close(file: File) {
        with_held(|fds| {
            let fd = file.as_raw_fd();
            fds.retain(|&f| f != fd);
            drop(file);
        });
    }

    /// Opens (creating if need be) and locks `path`; registered for the fork
    /// handler while held.
    pub(super) fn lock(path: &Path) -> Result<File, Refused> {
        ready_dir(path.parent().unwrap_or(Path::new("/"))).map_err(Refused::Unusable)?;
        with_held(|fds| {
            let file = match open(path) {
                Ok(file) => file,
                Err(e) if e.kind() == io::ErrorKind::PermissionDenied => return Err(foreign(path)),
                Err(e) => return Err(Refused::Unusable(e)),
            };
            let meta = file.metadata().map_err(Refused::Unusable)?;
            if !meta.file_type().is_file() {
                return Err(Refused::Unusable(io::Error::other("not a regular file")));
            }
            let lock = whole_file(libc::F_WRLCK);
            // SAFETY: fcntl on a descriptor this function owns, with a flock it owns.
            if unsafe { libc::fcntl(file.as_raw_fd(), SET_LOCK, &lock) } == 0 {
                fds.push(file.as_raw_fd());
                return Ok(file);
            }
            let err = io::Error::last_os_error();
            if !matches!(err.raw_os_error(), Some(libc::EACCES | libc::EAGAIN)) {
                return Err(Refused::Unusable(err));
            }
            Err(Refused::Held(holder(file)))
        })
    }

    /// Who holds the lock on `file`: the system says for a record lock; an
    /// open-file-description lock has no process, so the record says.
    fn holder(mut file: File) -> Option<u32> {
        let mut lock = whole_file(libc::F_WRLCK);
        // SAFETY: F_GETLK writes the holder into `lock`, which this function owns.
        let rc = unsafe { libc::fcntl(file.as_raw_fd(), GET_LOCK, &mut lock) };
        if rc != 0 || lock.l_type == short(libc::F_UNLCK) {
            return None;
        }
        if lock.l_pid > 0 {
            return Some(lock.l_pid as u32);
        }
        // A holder writes its record just after it locks the file it made: a file
        // still empty is read again for a while (a refusal's cost, not a call's).
        let deadline = std::time::Instant::now() + super::RECORD_WAIT;
        loop {
            let text = read_text(&mut file).ok()?;
            if !text.is_empty() || std::time::Instant::now() >= deadline {
                return holder_of(&text);
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    /// Another user's guard file, which this one may read but not hold: refused
    /// whether or not it is held now, since this process could neither lock it nor
    /// leave a floor in it; held, its holder named, else its owner.
    fn foreign(path: &Path) -> Refused {
        let file = match OpenOptions::new().read(true).custom_flags(FLAGS).open(path) {
            Ok(file) => file,
            Err(e) => return Refused::Unusable(e),
        };
        let uid = match file.metadata() {
            Ok(meta) => meta.uid(),
            Err(e) => return Refused::Unusable(e),
        };
        let mut lock = whole_file(libc::F_WRLCK);
        // SAFETY: F_GETLK writes into `lock`, which this function owns.
        let rc = unsafe { libc::fcntl(file.as_raw_fd(), GET_LOCK, &mut lock) };
        if rc == 0 && lock.l_type == short(libc::F_UNLCK) {
            return Refused::Left(uid);
        }
        Refused::Held(holder(file))
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
        let mut f = OpenOptions::new().append(true).custom_flags(FLAGS).open(path)?;
        f.write_all(format!("lost {floor_ms}\n").as_bytes())
    }

    /// Never a link; never left to a program this process runs.
    const FLAGS: libc::c_int = libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC;

    /// An exclusive (`F_WRLCK`) lock on the whole file.
    fn whole_file(kind: impl Into<libc::c_int>) -> libc::flock {
        // SAFETY: flock is plain data; zero is a valid value of every field (and
        // `l_pid` must be 0 for an open-file-description lock).
        let mut lock: libc::flock = unsafe { std::mem::zeroed() };
        lock.l_type = short(kind);
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
    /// `S_ISVTX`, the sticky bit (`mode_t` is 16 bits wide on macOS, 32 on Linux).
    const STICKY: u32 = 0o1000;

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
        // Another user's directory with the sticky bit (as the default one is, made
        // by whichever user came first: a database server, an app) is shared: only
        // a file's owner, the directory's and root remove files there, and a file
        // removed under its holder is taken again or stops the holder, paused or
        // not (the watcher, the guard's bound), never issued on by two processes.
        // Without the bit, any user could.
        if meta.uid() != me && meta.uid() != 0 && meta.mode() & STICKY == 0 {
            return Err(io::Error::other(format!(
                "owned by uid {} without the sticky bit: other users could remove the guard files",
                meta.uid()
            )));
        }
        Ok(())
    }

    /// Opens an existing guard file, else creates it (exclusively, so that a link
    /// planted in between is never followed) readable by every user and writable by
    /// this one only: no other user can write a record into it.
    fn open(path: &Path) -> io::Result<File> {
        let mode = fs::Permissions::from_mode(0o644);
        loop {
            match OpenOptions::new().read(true).write(true).custom_flags(FLAGS).open(path) {
                Ok(file) => {
                    // One made writable by every user: this user's to close.
                    let meta = file.metadata()?;
                    // SAFETY: geteuid cannot fail.
                    if meta.uid() == unsafe { libc::geteuid() } && meta.mode() & 0o022 != 0 {
                        file.set_permissions(mode)?;
                    }
                    return Ok(file);
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
            match OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .mode(0o600)
                .custom_flags(FLAGS)
                .open(path)
            {
                Ok(file) => {
                    file.set_permissions(mode)?;
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

    /// Opens and locks `path`; the system does not say who holds a lock here. The
    /// lock is the handle's: no other handle of the file drops it.
    pub(super) fn lock(path: &Path) -> Result<File, Refused> {
        fs::create_dir_all(path.parent().unwrap_or(Path::new("."))).map_err(Refused::Unusable)?;
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

    pub(super) fn close(file: File) {
        drop(file);
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

    fn parse(text: &str) -> Record {
        Record::parse(text, 1, 86_400_000)
    }

    /// What a record leaves the next owner: a release's floor, a dead holder's
    /// clock plus its lead, a lost holder's floor, the floor every writer carries;
    /// nothing of this process's own but what a lost holder left.
    #[test]
    fn a_record_leaves_its_floor() {
        let me = process_tag();
        assert!(parse("").fresh && parse("").floor_ms.is_none());
        assert_eq!(parse("released 1.2 500\nfloor 400\n").floor_ms, Some(500));
        assert_eq!(parse("released 1.2 500\nfloor 700\n").floor_ms, Some(700));
        let own = parse(&format!("released {me} 500\nfloor 600   \n"));
        assert_eq!((own.floor_ms, own.carried_ms), (None, 600));
        let now = crate::clock::precise_now_ms();
        let dead = parse("held 1.2 2000\nfloor 5\n").floor_ms.unwrap();
        assert!(dead >= now + 2001 && dead < now + 3001, "{dead} vs {now}");
        // A holder killed while it waited out a floor it read: that floor stands.
        let waiting = parse(&format!("held 1.2 0\nfloor {}\n", now + 9_000));
        assert_eq!(waiting.floor_ms, Some(now + 9_000));
        assert_eq!(waiting.carried_ms, now + 9_000);
        assert_eq!(parse(&format!("held {me} 0\nfloor 0\nlost 900\n")).floor_ms, Some(900));
        // This process's own held record, read again: its lead is no floor.
        let own = parse(&format!("held {me} 3600000\nfloor 70\n"));
        assert_eq!((own.floor_ms, own.carried_ms), (None, 70));
        // A file just created, where a holder that lost its file left its floor.
        let lost = parse("lost 900\nlost 800\n");
        assert!(lost.fresh);
        assert_eq!((lost.floor_ms, lost.carried_ms), (Some(900), 900));
        // The previous version's record (no floor line) reads as before.
        assert_eq!(parse("released 1.2 500\n").floor_ms, Some(500));
    }

    /// A record that is not well formed (truncated, forged, of another program) is
    /// read as a dead holder with the largest lead, and never below a floor in it.
    #[test]
    fn a_record_not_well_formed_is_the_worst_one() {
        let now = crate::clock::precise_now_ms();
        for text in [
            "released 1.1",
            "released 1.1 0 0\n",
            "released x 0\n",
            "released 1 0\n",
            "held 1.2 -5\n",
            "held 1.2 5\nfloor\n",
            "held 1.2 5\nfloor 1e9\n",
            "\u{0}",
            "lost 5\nheld 1.2 5\n",
            "rel",
            "held 1.2 5\nfloor 5\ngarbage\n",
        ] {
            let r = parse(text);
            let floor = r.floor_ms.unwrap_or(0);
            assert!(!r.fresh, "{text:?}");
            assert!(floor > now + 86_400_000, "{text:?}: {floor}");
            assert_eq!(r.carried_ms, floor, "{text:?}");
        }
        let far = now + 10 * 86_400_000;
        assert_eq!(parse(&format!("held 1.2 5\nfloor {far}\njunk\n")).floor_ms, Some(far));
    }

    /// Every record is one write of the same length: a longer one before it leaves
    /// no tail, and the floor line carries the highest floor.
    #[test]
    fn records_are_written_whole() {
        let dir = std::env::temp_dir().join(format!("flakeid-record-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let path = dir.join("r");
        let mut file = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        write_record(&mut file, "released 1.2 18446744073709551615", 7).unwrap();
        file.write_all(b"lost 9\n").unwrap();
        write_record(&mut file, "held 3.4 0", 9).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.len(), RECORD_LEN);
        let r = Record::parse(&text, 1, 1);
        assert_eq!(r.carried_ms, 9.max(r.floor_ms.unwrap()));
        assert_eq!(holder_of(&text), Some(3));
        // No floor past the last ms the space can carry (a layout whose time ran
        // out): nothing was issued there.
        let lead = Lead {
            tick_ms: 1000,
            ahead_ms: 0,
            max_ms: 86_400_000,
            last_ms: 1_000,
        };
        let read = Record::read(&mut file, lead);
        assert_eq!((read.floor_ms, read.carried_ms), (Some(1_000), 1_000));
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A file locked and still empty (its holder made it and writes its record next):
    /// the refusal names the holder once the record is there, not "another process".
    /// With open-file-description locks (Linux) the lock names no process; two
    /// descriptions in one process stand for two processes.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_refusal_names_the_holder_that_has_not_written_its_record_yet() {
        let dir = std::env::temp_dir().join(format!("flakeid-unwritten-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("node-1.lock");
        let mut held = sys::lock(&path).map_err(|_| "lock").unwrap();
        let writer = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(5));
            write_record(&mut held, "held 4242.1 0", 0).unwrap();
            held
        });
        let refused = sys::lock(&path).err();
        let held = writer.join().unwrap();
        let said = match refused {
            Some(Refused::Held(pid)) => format!("held by {pid:?}"),
            Some(_) => "refused otherwise".to_string(),
            None => "taken".to_string(),
        };
        assert_eq!(said, "held by Some(4242)");
        sys::close(held);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
