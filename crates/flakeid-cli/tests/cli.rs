//! The `flakeid` binary as a user runs it.

#![allow(clippy::unwrap_used)]

use std::process::{Command, Output};

fn flakeid(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_flakeid"))
        .args(args)
        .output()
        .expect("run flakeid")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

#[test]
fn generate_prints_unique_increasing_ids() {
    let o = flakeid(&["generate", "-n", "20000", "--datacenter", "3", "--worker", "7"]);
    assert!(o.status.success(), "{o:?}");
    let ids: Vec<u64> = stdout(&o).lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(ids.len(), 20000);
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    assert!(ids.iter().all(|id| (id >> 12) & 0x3ff == (3 << 5 | 7)));
}

#[test]
fn generate_formats() {
    let o = flakeid(&[
        "generate", "-n", "3", "--format", "base62", "--layout", "discord", "--node", "9",
    ]);
    assert!(o.status.success());
    assert!(stdout(&o).lines().all(|l| l.len() == 11));
    let o = flakeid(&["generate", "-n", "2", "--format", "json"]);
    let text = stdout(&o);
    assert!(text.starts_with("[\"") && text.trim_end().ends_with("\"]"), "{text}");
    let o = flakeid(&["generate", "-n", "4", "--format", "bytes", "--overflow", "borrow"]);
    assert_eq!(o.stdout.len(), 32);
    let o = flakeid(&["generate", "-n", "2", "-f", "base32"]);
    assert!(stdout(&o).lines().all(|l| l.len() == 13));
}

#[test]
fn decode_prints_time_and_every_field() {
    for text in ["910499571847892992", "0ca2be895c239000", "0S8NYH5E27400", "15G63YLn9Ae"] {
        let o = flakeid(&["decode", text]);
        assert!(o.status.success(), "{o:?}");
        let out = stdout(&o);
        for want in [
            "2017-09-20T13:43:08.849Z",
            "datacenter  17",
            "worker      25",
            "sequence    0",
        ] {
            assert!(out.contains(want), "{text}: {out}");
        }
    }
    let o = flakeid(&["decode", "--json", "910499571847892992"]);
    assert!(stdout(&o).contains("\"id\":\"910499571847892992\""));
}

#[test]
fn layouts_lists_every_preset() {
    let out = stdout(&flakeid(&["layouts"]));
    for name in [
        "snowflake",
        "flake",
        "discord",
        "sonyflake",
        "baidu",
        "instagram",
        "js53",
    ] {
        assert!(out.contains(name), "{out}");
    }
    assert!(out.contains("2080-07-10"), "snowflake's last date: {out}");
    assert!(stdout(&flakeid(&["layouts", "--json"])).contains("\"tick_ms\":10"));
}

#[test]
fn errors_go_to_stderr_with_nonzero_exit() {
    for (args, code, text) in [
        (
            vec!["generate", "--worker", "32"],
            1,
            "worker must be in 0..=31, got 32",
        ),
        (vec!["generate", "--layout", "nope"], 1, "layout must be one of"),
        (vec!["decode", "12a45"], 1, "not an ID"),
        (vec!["decode", "--from", "hex", "00000000000000g0"], 1, "position 14"),
        (
            vec!["decode", "18446744073709551615"],
            1,
            "does not fit the snowflake layout",
        ),
        (vec!["frobnicate"], 2, "unknown command"),
        (vec!["generate", "--bogus"], 2, "unknown option"),
        (vec!["generate", "-n"], 2, "needs a value"),
    ] {
        let o = flakeid(&args);
        assert_eq!(o.status.code(), Some(code), "{args:?}");
        assert!(o.stdout.is_empty(), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(text), "{args:?}: {err}");
    }
}

#[test]
fn generate_with_a_file_lease() {
    let dir = std::env::temp_dir().join(format!("flakeid-cli-lease-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let url = format!("file://{}", dir.display());
    let o = flakeid(&["generate", "-n", "3", "--lease", &url, "--layout", "sonyflake"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(stdout(&o).lines().count(), 3);
    let o = flakeid(&["generate", "--lease", &url, "--node", "3"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("lease"));
    let o = flakeid(&["generate", "--lease", "ftp://x"]);
    assert_eq!(o.status.code(), Some(1));
    std::fs::remove_dir_all(&dir).ok();
}

/// A lease URL's secrets — the userinfo's password and secret query parameters —
/// never reach a message, from `generate` or from the service (`serve`).
#[test]
fn lease_url_secrets_are_never_shown() {
    for url in [
        "postgres://app:hunter51@127.0.0.1:70000/db?namespace=x",
        "postgres://app@127.0.0.1:70000/db?password=hunter52&sslpassword=hunter53",
        "redis://:hunter54@127.0.0.1:70000/0?token=hunter55",
    ] {
        for args in [
            &["generate", "--lease", url][..],
            &["serve", "--listen", "127.0.0.1:0", "--lease", url],
        ] {
            let o = flakeid(args);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
            assert!(err.contains("lease URL"), "{args:?}: {err}");
            for pw in ["hunter51", "hunter52", "hunter53", "hunter54", "hunter55"] {
                assert!(!err.contains(pw), "{args:?}: {err}");
            }
        }
    }
}

fn decode_stdin(args: &[&str], input: &str) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_flakeid"))
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

/// `generate -f hex | decode -` must read back the IDs it was given, even a hex ID
/// made of digits only: each is read back exactly, or refused as ambiguous, never
/// taken for a decimal (that would print other IDs and exit 0).
#[test]
fn hex_ids_made_of_digits_are_never_read_as_decimal() {
    let ints = flakeid(&[
        "generate",
        "-n",
        "3000",
        "--layout",
        "instagram",
        "--overflow",
        "borrow",
    ]);
    let ids: Vec<u64> = stdout(&ints).lines().map(|l| l.parse().unwrap()).collect();
    let hex: Vec<String> = ids.iter().map(|id| format!("{id:016x}")).collect();
    // With --from hex the pipeline is exact.
    let o = decode_stdin(
        &["decode", "--layout", "instagram", "--from", "hex", "--json", "-"],
        &hex.join("\n"),
    );
    assert!(o.status.success(), "{o:?}");
    let decoded: Vec<u64> = stdout(&o)
        .lines()
        .map(|l| {
            l.split("\"id\":\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect();
    assert_eq!(decoded, ids);
    // Auto-detection: one by one, the same ID or an error that asks — never another ID.
    // IDs whose hex form is all digits (the case that was misread): refused with a
    // pointer to --from, and read exactly with it.
    for id in [0x3800_0000_0000_0000u64, 0x0000_0060_0000_0000, 0x1234_5678_9012_3456] {
        let h = format!("{id:016x}");
        let o = flakeid(&["decode", "--layout", "instagram", &h]);
        // Zero-padded digits ask too: a zero-padded decimal is as likely.
        assert_eq!(o.status.code(), Some(1), "{h}: {o:?}");
        assert!(String::from_utf8_lossy(&o.stderr).contains("--from"), "{o:?}");
        let o = flakeid(&["decode", "--layout", "instagram", "--from", "hex", "--json", &h]);
        assert!(stdout(&o).contains(&format!("\"id\":\"{id}\"")), "{o:?}");
    }
}

/// Runs flakeid with a standard error whose reader has gone (a socket whose peer is
/// closed: writes fail with EPIPE, as when a log pipe dies): the error must still end
/// in its normal exit status, not a panic (101).
fn flakeid_with_dead_stderr(args: &[&str]) -> Output {
    let (ours, theirs) = std::os::unix::net::UnixStream::pair().unwrap();
    drop(ours);
    let stderr: std::os::fd::OwnedFd = theirs.into();
    Command::new(env!("CARGO_BIN_EXE_flakeid"))
        .args(args)
        .stderr(std::process::Stdio::from(stderr))
        .output()
        .unwrap()
}

#[test]
fn dead_stderr_is_not_a_panic() {
    assert_eq!(
        flakeid_with_dead_stderr(&["generate", "--layout", "nope"])
            .status
            .code(),
        Some(1)
    );
    assert_eq!(flakeid_with_dead_stderr(&["frobnicate"]).status.code(), Some(2));
}

#[test]
fn lease_ttl_without_lease_is_a_config_error() {
    // The core's refusal, as in every binding (it was clap's usage error, exit 2).
    let o = flakeid(&["generate", "--lease-ttl-ms", "5000"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("lease_ttl_ms is set but lease is not"),
        "{o:?}"
    );
}

#[test]
fn plus_signed_numbers_are_rejected() {
    for args in [
        &["generate", "--node", "+5"][..],
        &["generate", "--worker", "+5"],
        &["generate", "-n", "+2"],
    ] {
        let o = flakeid(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {o:?}");
        assert!(o.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn help_version_and_completions() {
    for sub in ["generate", "decode", "layouts", "serve", "completions"] {
        let o = flakeid(&[sub, "--help"]);
        assert!(o.status.success(), "{sub}: {o:?}");
        assert!(stdout(&o).contains("Usage: flakeid"), "{sub}");
    }
    assert!(stdout(&flakeid(&["serve", "--help"])).contains("FLAKEID_LISTEN"));
    let o = flakeid(&["--version"]);
    assert_eq!(stdout(&o).trim(), format!("flakeid {}", env!("CARGO_PKG_VERSION")));
    let o = flakeid(&["completions", "bash"]);
    assert!(o.status.success() && stdout(&o).contains("_flakeid()"), "{o:?}");
    let o = flakeid(&[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
}

#[test]
fn env_fallbacks() {
    let o = Command::new(env!("CARGO_BIN_EXE_flakeid"))
        .args(["generate", "-n", "3"])
        .env("FLAKEID_NODE", "77")
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    assert!(
        stdout(&o)
            .lines()
            .all(|l| (l.parse::<u64>().unwrap() >> 12) & 0x3ff == 77)
    );
    // The command line wins over the environment.
    let o = Command::new(env!("CARGO_BIN_EXE_flakeid"))
        .args(["generate", "--node", "5"])
        .env("FLAKEID_NODE", "77")
        .output()
        .unwrap();
    assert_eq!((stdout(&o).trim().parse::<u64>().unwrap() >> 12) & 0x3ff, 5);
    // Every option of the core's table has its FLAKEID_<NAME> (the core's list).
    let o = Command::new(env!("CARGO_BIN_EXE_flakeid"))
        .args(["generate"])
        .env_remove("FLAKEID_NODE")
        .env("FLAKEID_DATACENTER", "2")
        .env("FLAKEID_WORKER", "3")
        .output()
        .unwrap();
    assert_eq!(
        (stdout(&o).trim().parse::<u64>().unwrap() >> 12) & 0x3ff,
        2 << 5 | 3,
        "{o:?}"
    );
    let o = Command::new(env!("CARGO_BIN_EXE_flakeid"))
        .args(["generate", "--node", "1"])
        .env("FLAKEID_LEASE_TTL_MS", "5000")
        .env_remove("FLAKEID_LEASE")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("lease_ttl_ms is set but lease is not"),
        "{o:?}"
    );
    let o = Command::new(env!("CARGO_BIN_EXE_flakeid"))
        .args(["serve"])
        .env("FLAKEID_LISTEN", "not-an-address")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not-an-address"), "{o:?}");
}

#[test]
fn serve_rejects_bad_options() {
    for (args, code) in [
        (&["serve", "--listen", "nowhere"][..], 2),
        (&["serve", "--max-batch", "0", "--node", "1"], 1),
        (&["serve", "--lease-ttl-ms", "500"], 1),
        (&["serve", "--count", "5"], 2),
    ] {
        let o = flakeid(args);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {o:?}");
    }
}

/// Two replicas started without a node source would both be node 0 and issue the
/// same 64-bit IDs: `serve` given any option for 64-bit IDs but no node source
/// refuses to start, and says why (with no generator option at all it serves
/// 128-bit IDs only: tests/serve, `NoNode`).
#[test]
fn serve_requires_a_node_source() {
    for args in [
        &["serve", "--listen", "127.0.0.1:0", "--layout", "sonyflake"][..],
        &["serve", "--listen", "127.0.0.1:0", "--datacenter", "1"],
    ] {
        for empty in [false, true] {
            let mut c = Command::new(env!("CARGO_BIN_EXE_flakeid"));
            c.args(args);
            // An empty FLAKEID_NODE / FLAKEID_LEASE is no node source either.
            match empty {
                true => c.env("FLAKEID_NODE", "").env("FLAKEID_LEASE", ""),
                false => c.env_remove("FLAKEID_NODE").env_remove("FLAKEID_LEASE"),
            };
            let o = c.output().unwrap();
            assert_eq!(o.status.code(), Some(1), "{args:?}: {o:?}");
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(
                err.contains("no node id given") && err.contains("another host"),
                "{err}"
            );
        }
    }
}
