//! `pg_upgrade`, and a revert to the cluster it upgraded from: uncertain starts
//! whatever either cluster did before.
//!
//! `pg_upgrade` does not carry replication origins (the mark, the owner record), and
//! a cluster that took part in one cannot tell from its origins what the other
//! issued: a target smoke-tested before the upgrade has its own owner record and
//! looks restarted; the source, started again after the target issued (a revert,
//! copy or clone mode), looks restarted too. Either may meet IDs the other borrowed
//! up to its borrow window ahead of the clock, and its own configuration need not
//! say how far that was.
//!
//! So the library records, in files of the data directory (not WAL: only this
//! directory's own starts read them):
//! - [`WINDOW_FILE`]: the largest borrow window (`flakeid.max_borrow_ms` with
//!   `overflow = 'borrow'`) the server has been cleared to issue under, written by
//!   the start-up check before its first ID;
//! - [`MARKER_FILE`]: written when the server starts in binary-upgrade mode (both
//!   clusters of a `pg_upgrade`, `--check` included): the largest window either
//!   cluster recorded. The first normal start that finds it resumes after now plus
//!   that window ([`crate::startup`]), then moves the mark there and removes it.
//!
//! The two clusters meet through the one directory `pg_upgrade` gives both servers
//! for their sockets (its `--socketdir`, by default its working directory):
//! [`HANDOFF_FILE`] there lists each cluster's data directory and window. Each
//! binary-upgrade start adds itself and writes the largest window listed into the
//! marker of every data directory listed: the target learns the source's window,
//! and the source (which started first) learns the target's for a revert.

use crate::settings;
use flakeid_core::Overflow;
use pgrx::pg_sys;
use std::ffi::CStr;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// In the data directory: the largest borrow window this server was cleared to
/// issue under (ms).
pub const WINDOW_FILE: &str = "flakeid_borrow_window";
/// In the data directory: the server took part in `pg_upgrade`; the largest window
/// either cluster recorded (ms).
pub const MARKER_FILE: &str = "flakeid_pg_upgrade";
/// In `pg_upgrade`'s socket directory: `<window ms>\t<unix ms written>\t<data directory>` lines.
pub const HANDOFF_FILE: &str = "flakeid_pg_upgrade.clusters";
/// In the data directory: the 128-bit family's mark (Unix ms) beside its replication
/// origin, which `pg_upgrade` does not carry either: without it the upgraded
/// cluster's UUIDs would start at its clock, below every UUID its source issued ahead
/// of the clock (a lead after a restart onto a slower clock). Raised (never lowered)
/// by the start-up check to the mark it reads, and at the postmaster's exit to the
/// mark this start covered; a binary-upgrade start raises it to the largest of every
/// cluster the handoff lists, and the next normal start moves the UUID mark to it.
pub const UUID_FILE: &str = "flakeid_uuid_mark";
/// Handoff lines older than this are another upgrade's (a `pg_upgrade` runs its
/// servers within hours of each other).
const HANDOFF_MAX_AGE_MS: u64 = 7 * 24 * 3_600_000;

fn data_dir() -> PathBuf {
    // SAFETY: set by the postmaster before libraries load; inherited by every process.
    let dir = unsafe { pg_sys::DataDir };
    if dir.is_null() {
        return PathBuf::from(".");
    }
    // SAFETY: a NUL-terminated path.
    PathBuf::from(unsafe { CStr::from_ptr(dir) }.to_string_lossy().into_owned())
}

/// The window the settings give (0 without borrowing).
pub fn configured_window() -> u64 {
    match settings::borrowing() {
        (Overflow::Borrow, ms) => ms,
        (Overflow::Wait, _) => 0,
    }
}

/// The first line of `path` as a number of ms (`None`: no such file).
fn read_ms(path: &Path) -> Result<Option<u64>, String> {
    match fs::read_to_string(path) {
        Ok(text) => text
            .lines()
            .next()
            .and_then(|l| l.trim().parse().ok())
            .map(Some)
            .ok_or_else(|| format!("{} does not start with a number of milliseconds", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("could not read {}: {e}", path.display())),
    }
}

/// Writes `text` to `path` durably: a temporary file, fsync, rename, fsync of the
/// directory.
fn write_durably(path: &Path, text: &str) -> Result<(), String> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp = path.with_extension("tmp");
    let result = (|| {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        fs::rename(&tmp, path)?;
        fs::File::open(dir)?.sync_all()
    })();
    result.map_err(|e| format!("could not write {}: {e}", path.display()))
}

/// This server's recorded window: the larger of [`WINDOW_FILE`] and the settings.
pub fn recorded_window() -> Result<u64, String> {
    Ok(read_ms(&data_dir().join(WINDOW_FILE))?
        .unwrap_or(0)
        .max(configured_window()))
}

/// Records the settings' window if it is larger than the recorded one (the start-up
/// check, before the server's first ID).
pub fn record_window() -> Result<(), String> {
    let path = data_dir().join(WINDOW_FILE);
    let recorded = read_ms(&path)?.unwrap_or(0);
    let window = configured_window();
    if window <= recorded {
        return Ok(());
    }
    write_durably(
        &path,
        &format!(
            "{window}\n# the largest flakeid.max_borrow_ms this server issued under (flakeid; docs/postgres.md)\n"
        ),
    )
}

/// Raises [`UUID_FILE`] in `dir` to `ms` (never lowers it).
fn raise_uuid_mark_in(dir: &Path, ms: u64) -> Result<(), String> {
    let path = dir.join(UUID_FILE);
    if ms == 0 || ms <= read_ms(&path)?.unwrap_or(0) {
        return Ok(());
    }
    write_durably(
        &path,
        &format!(
            "{ms}\n# flakeid's UUID high-water mark (Unix ms), which pg_upgrade does not carry (docs/postgres.md)\n"
        ),
    )
}

/// Raises this data directory's [`UUID_FILE`] to `ms`.
pub fn raise_uuid_mark(ms: u64) -> Result<(), String> {
    raise_uuid_mark_in(&data_dir(), ms)
}

/// This data directory's [`UUID_FILE`] (0: none).
pub fn recorded_uuid_mark() -> Result<u64, String> {
    Ok(read_ms(&data_dir().join(UUID_FILE))?.unwrap_or(0))
}

/// The window of a pending `pg_upgrade` marker: this server took part in one and
/// has not yet resumed after it.
pub fn pending() -> Result<Option<u64>, String> {
    read_ms(&data_dir().join(MARKER_FILE))
}

/// The marker is dealt with: the mark covers its window.
pub fn resolved() -> Result<(), String> {
    let dir = data_dir();
    match fs::remove_file(dir.join(MARKER_FILE)) {
        Ok(()) => fs::File::open(&dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| format!("could not sync {}: {e}", dir.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(format!("could not remove {}: {e}", dir.join(MARKER_FILE).display())),
    }
}

/// Raises the marker in `dir` to `window` (never lowers it).
fn mark_upgraded(dir: &Path, window: u64) -> Result<(), String> {
    let path = dir.join(MARKER_FILE);
    let window = window.max(read_ms(&path)?.unwrap_or(0));
    write_durably(
        &path,
        &format!(
            "{window}\n# this cluster took part in pg_upgrade: its next start resumes after now + {window} ms, \
             the largest borrow window either cluster recorded (flakeid; docs/postgres.md)\n"
        ),
    )
}

/// The first directory of `unix_socket_directories` (pg_upgrade's socket directory
/// in binary-upgrade mode).
fn socket_dir() -> Option<PathBuf> {
    // SAFETY: a setting fixed at server start, NUL-terminated when set.
    let dirs = unsafe { pg_sys::Unix_socket_directories };
    if dirs.is_null() {
        return None;
    }
    // SAFETY: as above.
    let dirs = unsafe { CStr::from_ptr(dirs) }.to_string_lossy().into_owned();
    let first = dirs.split(',').next()?.trim().trim_matches('"').to_string();
    (!first.is_empty() && !first.starts_with('@')).then(|| PathBuf::from(first))
}

/// In the postmaster of a server started in binary-upgrade mode (`pg_upgrade`):
/// records that this cluster took part, with the largest window of every cluster
/// the socket directory's handoff lists. An error stops the server (and with it
/// `pg_upgrade`): without the marker its next start could repeat IDs.
pub fn in_binary_upgrade() -> Result<(), String> {
    let me = data_dir();
    let me = fs::canonicalize(&me).unwrap_or(me);
    let own = recorded_window()?;
    let Some(sockets) = socket_dir() else {
        pgrx::warning!(
            "flakeid: pg_upgrade with no socket directory: the other cluster's borrow window is not known here \
             (this cluster's next start resumes after now + {own} ms)"
        );
        return mark_upgraded(&me, own);
    };
    let handoff = sockets.join(HANDOFF_FILE);
    let now = flakeid_core::precise_now_ms();
    let text = match fs::read_to_string(&handoff) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(format!("could not read {}: {e}", handoff.display())),
    };
    let mut clusters: Vec<(u64, u64, PathBuf)> = text
        .lines()
        .filter_map(|line| {
            let mut f = line.splitn(3, '\t');
            let window = f.next()?.parse().ok()?;
            let written: u64 = f.next()?.parse().ok()?;
            let dir = PathBuf::from(f.next()?);
            (now.saturating_sub(written) < HANDOFF_MAX_AGE_MS && dir != me).then_some((window, written, dir))
        })
        .collect();
    clusters.push((own, now, me.clone()));
    let window = clusters.iter().map(|c| c.0).max().unwrap_or(own);
    let listed: String = clusters
        .iter()
        .map(|(w, t, d)| format!("{w}\t{t}\t{}\n", d.display()))
        .collect();
    write_durably(&handoff, &listed)?;
    mark_upgraded(&me, window)?;
    // The UUID mark of every cluster listed (the source's, seen by the target).
    let uuid_mark = clusters
        .iter()
        .map(|c| read_ms(&c.2.join(UUID_FILE)).ok().flatten().unwrap_or(0))
        .max()
        .unwrap_or(0);
    raise_uuid_mark_in(&me, uuid_mark)?;
    for (_, _, dir) in clusters.iter().filter(|c| c.2 != me) {
        // Another cluster of this upgrade (the source, seen by the target): its
        // next start, a revert, must clear what this one may borrow.
        if dir.join("PG_VERSION").is_file()
            && let Err(e) = mark_upgraded(dir, window)
        {
            pgrx::warning!("flakeid: pg_upgrade: {e}");
        }
    }
    pgrx::log!(
        "flakeid: binary-upgrade mode (pg_upgrade): the next normal start of {} resumes after now + {window} ms, \
         the largest borrow window of {}",
        me.display(),
        clusters
            .iter()
            .map(|c| c.2.display().to_string())
            .collect::<Vec<_>>()
            .join(" and ")
    );
    Ok(())
}
