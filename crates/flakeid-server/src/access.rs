//! Access logs (`--access-log`, off by default): one JSON line per answered
//! request on standard output, apart from the diagnostic log on standard error.
//!
//! ```text
//! {"ts":"2026-11-24T11:52:01.123Z","request_id":"18b2c4d5e6f7a8b9-1","peer":"127.0.0.1:50412","method":"GET","path":"/v1/ids","query":"n=5","version":"HTTP/1.1","status":200,"duration_seconds":0.000182,"route":"/v1/ids"}
//! ```
//!
//! `request_id` is the request's `X-Request-Id` when it sends a usable one (1 to 64
//! of `A-Z a-z 0-9 . _ : -`), else one made here (the process's start, in hex, and a
//! count); the response carries it back in `X-Request-Id`, so that a client's log
//! and this one meet.
//!
//! `duration_seconds` runs from the request's head to the response's head, as the
//! latency histogram does (metrics.rs). Requests never wait for the log: lines go
//! through a bounded queue to a writer thread, and a line that finds the queue
//! full is dropped and counted (`flakeid_access_log_dropped_total`).

use flakeid_core::text::{iso8601, json_string};
use std::fmt::Write as _;
use std::io::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};

/// Lines queued for the writer at most.
pub const QUEUE: usize = 16 * 1024;

/// The sending side of the access log.
#[derive(Debug)]
pub(crate) struct AccessLog {
    tx: SyncSender<String>,
    pub(crate) dropped: AtomicU64,
    /// The prefix of the request IDs made here, and their count.
    prefix: String,
    made: AtomicU64,
}

/// What one line says about a request (taken from its head when it arrives).
#[derive(Debug)]
pub(crate) struct Entry {
    pub request_id: String,
    pub method: String,
    pub path: String,
    pub query: Option<String>,
    pub version: &'static str,
}

impl AccessLog {
    /// Starts the writer thread (standard output).
    pub(crate) fn start() -> std::io::Result<AccessLog> {
        let (tx, rx) = sync_channel(QUEUE);
        std::thread::Builder::new()
            .name("flakeid-access-log".into())
            .spawn(move || write_lines(rx))?;
        let start = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        Ok(AccessLog {
            tx,
            dropped: AtomicU64::new(0),
            prefix: format!("{start:x}"),
            made: AtomicU64::new(0),
        })
    }

    /// The request's ID: its `X-Request-Id` if usable, else a new one.
    pub(crate) fn request_id(&self, given: Option<&axum::http::HeaderValue>) -> String {
        let usable = |v: &&axum::http::HeaderValue| {
            (1..=64).contains(&v.len())
                && v.as_bytes()
                    .iter()
                    .all(|b| b.is_ascii_alphanumeric() || b".:_-".contains(b))
        };
        match given.filter(usable).and_then(|v| v.to_str().ok()) {
            Some(id) => id.to_owned(),
            None => format!("{}-{}", self.prefix, self.made.fetch_add(1, Ordering::Relaxed) + 1),
        }
    }

    /// Queues the line for one answered request.
    pub(crate) fn log(&self, e: &Entry, peer: std::net::SocketAddr, status: u16, seconds: f64, route: &str) {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let mut line = String::with_capacity(256);
        let _ = write!(
            line,
            "{{\"ts\":\"{}\",\"request_id\":{},\"peer\":\"{peer}\",\"method\":{},\"path\":{}",
            iso8601(now),
            json_string(&e.request_id),
            json_string(&e.method),
            json_string(&e.path)
        );
        if let Some(q) = &e.query {
            let _ = write!(line, ",\"query\":{}", json_string(q));
        }
        let _ = writeln!(
            line,
            ",\"version\":\"{}\",\"status\":{status},\"duration_seconds\":{seconds:.6},\"route\":{}}}",
            e.version,
            json_string(route)
        );
        match self.tx.try_send(line) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => {
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

/// Writes lines as they come, flushing whenever the queue is empty.
fn write_lines(rx: Receiver<String>) {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(64 * 1024, stdout.lock());
    while let Ok(line) = rx.recv() {
        let mut ok = out.write_all(line.as_bytes()).is_ok();
        while let Ok(more) = rx.try_recv() {
            ok &= out.write_all(more.as_bytes()).is_ok();
        }
        if !(ok && out.flush().is_ok()) {
            // Standard output is gone (a closed pipe): keep draining, write nothing.
            while rx.recv().is_ok() {}
            return;
        }
    }
}
