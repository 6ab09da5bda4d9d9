//! `flakeid serve` after its lease is lost for good: it stays up, logs
//! each state change, keeps trying to lease again with backoff, fails its liveness
//! check (`/healthz` 503) after `--liveness-timeout-ms` without a lease, and issues
//! again — ready, live — once a lease can be taken, rather than staying up refusing
//! or exiting: either leaves a replica that cannot recover by itself.
//!
//! A file lease is lost when its directory is removed under it: its next renewal
//! finds the lock file unlinked. A regular file in the directory's place makes every
//! attempt to lease again fail, until it is removed.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// `GET path` over HTTP/1.0: (status, body).
fn get(port: u16, path: &str) -> (u16, String) {
    let mut c = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    c.set_read_timeout(Some(Duration::from_secs(5))).expect("timeout");
    write!(c, "GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n").expect("send");
    let mut out = String::new();
    c.read_to_string(&mut out).expect("read");
    let status = out.get(9..12).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = out.split_once("\r\n\r\n").map_or("", |(_, b)| b).to_string();
    (status, body)
}

struct Serve {
    child: Child,
    lines: mpsc::Receiver<String>,
    log: String,
    port: u16,
}

impl Serve {
    fn start(url: &str) -> Serve {
        let mut child = Command::new(env!("CARGO_BIN_EXE_flakeid"))
            .args(["serve", "--listen", "127.0.0.1:0", "--lease", url])
            .args(["--lease-ttl-ms", "1000", "--liveness-timeout-ms", "1500"])
            .env("FLAKEID_LOG", "info")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("flakeid serve starts");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let mut s = Serve {
            child,
            lines,
            log: String::new(),
            port: 0,
        };
        s.wait_log("listening", Duration::from_secs(20));
        let at = s.log.find("listen=127.0.0.1:").expect("listen address") + "listen=127.0.0.1:".len();
        s.port = s.log[at..]
            .split(|c: char| !c.is_ascii_digit())
            .next()
            .and_then(|p| p.parse().ok())
            .expect("port");
        s
    }

    fn wait_log(&mut self, what: &str, within: Duration) {
        let deadline = Instant::now() + within;
        while !self.log.contains(what) {
            match self
                .lines
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            {
                Ok(line) => {
                    self.log.push_str(&line);
                    self.log.push('\n');
                }
                Err(_) => {
                    let _ = self.child.kill();
                    panic!("no {what:?} in the log within {within:?}:\n{}", self.log);
                }
            }
        }
    }

    /// Waits until `path` answers `status`.
    fn wait_status(&mut self, path: &str, status: u16, within: Duration) -> String {
        let deadline = Instant::now() + within;
        loop {
            let (st, body) = get(self.port, path);
            if st == status {
                return body;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!(
                    "{path} answered {st} ({body}), not {status}, for {within:?}:\n{}",
                    self.log
                );
            }
            assert!(self.child.try_wait().expect("wait").is_none(), "exited:\n{}", self.log);
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

#[test]
fn serve_leases_again_after_its_lease_is_lost() {
    let dir = std::env::temp_dir().join(format!("flakeid-serve-lost-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_file(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let mut s = Serve::start(&format!("file://{}", dir.display()));
    let layout = s.wait_status("/v1/layout", 200, Duration::from_secs(5));
    assert!(layout.contains("\"lease\":\"held\""), "{layout}");
    assert!(layout.contains("\"lease_epoch\":0"), "{layout}");

    // Lost, and no lease can be taken again while a file blocks the directory.
    std::fs::remove_dir_all(&dir).expect("remove the lease directory");
    std::fs::write(&dir, b"not a directory").expect("block the directory");
    s.wait_log("lease lost", Duration::from_secs(10));
    s.wait_log("leasing again failed", Duration::from_secs(10));
    s.wait_status("/readyz", 503, Duration::from_secs(5));
    let why = s.wait_status("/healthz", 503, Duration::from_secs(10));
    assert!(why.contains("not_live"), "{why}");
    s.wait_log("liveness failure", Duration::from_secs(5));

    // The store is usable again: leased, ready and live, without a restart.
    std::fs::remove_file(&dir).expect("unblock");
    s.wait_log("taken again", Duration::from_secs(40));
    s.wait_status("/readyz", 200, Duration::from_secs(5));
    s.wait_status("/healthz", 200, Duration::from_secs(5));
    let layout = s.wait_status("/v1/layout", 200, Duration::from_secs(5));
    assert!(layout.contains("\"lease\":\"held\""), "{layout}");
    assert!(layout.contains("\"lease_epoch\":1"), "{layout}");
    assert!(s.wait_status("/v1/id", 200, Duration::from_secs(5)).trim().len() > 5);

    // SIGTERM still drains, releases and exits 0.
    let sent = Command::new("kill").args(["-TERM", &s.child.id().to_string()]).status();
    assert!(sent.expect("kill").success());
    let status = s.child.wait().expect("wait");
    assert_eq!(status.code(), Some(0), "{}", s.log);
    let _ = std::fs::remove_dir_all(&dir);
}
