//! Which server wrote the owner record: a fingerprint of its system identifier, host
//! name and data directory, kept beside the record ([`crate::mark`]).
//!
//! Every physical copy of a data directory carries the owner record of the server it
//! was copied from: a base backup started as a primary, a standby made a primary by
//! removing `standby.signal` (both stay on the original's timeline), a file-level
//! copy. None carries the original's host name and data directory, so the start-up
//! check tells such a copy from a restart of the server that wrote the record. What
//! no fingerprint can tell apart is a copy with the same host name and path (a VM
//! snapshot restored in place): docs/postgres.md says so.
//!
//! Hashed with PostgreSQL's `hash_bytes_extended`, whose results PostgreSQL keeps
//! stable across releases (hash partitioning stores them), so a new library or a new
//! minor release reads an old fingerprint the same. The host name and the directory
//! are hashed separately (32 bits each), so a refusal can say which of them differs.

use pgrx::pg_sys;
use std::ffi::CStr;

/// This server, as the fingerprint sees it.
#[derive(Debug, Clone)]
pub struct Identity {
    pub host: String,
    /// The data directory, with symbolic links resolved.
    pub dir: String,
    pub fingerprint: u64,
}

/// What differs between a recorded fingerprint and this server's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Difference {
    Host,
    Directory,
    Both,
}

impl Difference {
    /// For messages: what differs from the server that recorded the owner.
    pub fn describe(self) -> &'static str {
        match self {
            Difference::Host => "its host name differs",
            Difference::Directory => "its data directory (or system identifier) differs",
            Difference::Both => "its host name and data directory differ",
        }
    }
}

fn hash(bytes: &[u8], seed: u64) -> u32 {
    let len = i32::try_from(bytes.len()).unwrap_or(i32::MAX);
    // SAFETY: a pure function reading `len` bytes of `bytes`.
    let h = unsafe { pg_sys::hash_bytes_extended(bytes.as_ptr(), len, seed) };
    // Folded, so every bit of the 64-bit hash counts.
    (h ^ (h >> 32)) as u32
}

fn host_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: writes at most buf.len() bytes into buf.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return String::new();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

fn data_dir() -> String {
    // SAFETY: set by the postmaster at start (an absolute path), never freed.
    let ptr = unsafe { pg_sys::DataDir };
    if ptr.is_null() {
        return String::new();
    }
    // SAFETY: a NUL-terminated string, as above.
    let given = unsafe { CStr::from_ptr(ptr) }.to_string_lossy().into_owned();
    std::fs::canonicalize(&given)
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or(given)
}

/// This server's identity (reads the host name and resolves the data directory).
pub fn this_server() -> Identity {
    let host = host_name();
    let dir = data_dir();
    // SAFETY: reads the control file's copy in shared memory.
    let sysid = unsafe { pg_sys::GetSystemIdentifier() };
    let mut place = sysid.to_le_bytes().to_vec();
    place.extend_from_slice(dir.as_bytes());
    let fingerprint = (u64::from(hash(host.as_bytes(), 0x666c_616b_6569_6401)) << 32)
        | u64::from(hash(&place, 0x666c_616b_6569_6402));
    Identity {
        host,
        dir,
        // 0 stands for "none recorded".
        fingerprint: fingerprint.max(1),
    }
}

/// What differs between `recorded` and `ours` (`None`: the same server).
pub fn difference(recorded: u64, ours: u64) -> Option<Difference> {
    let host = recorded >> 32 != ours >> 32;
    let dir = recorded & 0xffff_ffff != ours & 0xffff_ffff;
    match (host, dir) {
        (false, false) => None,
        (true, false) => Some(Difference::Host),
        (false, true) => Some(Difference::Directory),
        (true, true) => Some(Difference::Both),
    }
}
