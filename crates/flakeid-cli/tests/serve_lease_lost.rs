//! `flakeid serve` exits (1, with a lease error) once its lease is lost for good,
//! so that a supervisor starts a replica that leases a free id — instead of staying
//! up answering 503 for ever (found by the fault suite, docs/faults.md). A file
//! lease is lost when its directory is removed under it: its next renewal finds
//! the lock file unlinked.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

#[test]
fn serve_exits_when_its_lease_is_lost() {
    let dir = std::env::temp_dir().join(format!("flakeid-serve-lost-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let url = format!("file://{}", dir.display());
    let mut child = Command::new(env!("CARGO_BIN_EXE_flakeid"))
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--lease",
            &url,
            "--lease-ttl-ms",
            "1000",
        ])
        .env("FLAKEID_LOG", "info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("flakeid serve starts");
    let stderr = child.stderr.take().expect("stderr");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut log = String::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    // Listening: the lease is held.
    while !log.contains("listening") {
        let line = rx
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .unwrap_or_else(|_| panic!("flakeid serve did not start:\n{log}"));
        log.push_str(&line);
        log.push('\n');
    }
    std::fs::remove_dir_all(&dir).expect("remove the lease directory");
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("flakeid serve was still running 20 s after its lease was lost:\n{log}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    while let Ok(line) = rx.recv_timeout(Duration::from_secs(1)) {
        log.push_str(&line);
        log.push('\n');
    }
    assert_eq!(status.code(), Some(1), "{log}");
    assert!(log.contains("lease was lost"), "{log}");
}
