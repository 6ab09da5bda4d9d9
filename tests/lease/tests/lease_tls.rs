//! TLS and logins on the Redis and PostgreSQL stores, against the servers
//! tests/env/testenv.py starts (make test-lease) with certificates it made for this run
//! (FLAKEID_TEST_CERTS): the lease scenarios over TLS, every PostgreSQL login
//! method, and a clear error for a wrong password, a wrong CA and a wrong host name.
#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns
mod common;
use common::*;

const TTL_MS: u64 = 1500;

fn rediss() -> Option<String> {
    store_url("FLAKEID_TEST_REDISS_URL")
}

fn pg_tls() -> Option<String> {
    store_url("FLAKEID_TEST_POSTGRES_TLS_URL")
}

fn certs() -> String {
    std::env::var("FLAKEID_TEST_CERTS").unwrap()
}

fn pg_port() -> String {
    std::env::var("FLAKEID_TEST_POSTGRES_PORT").unwrap()
}

#[test]
fn rediss_scenarios() {
    let Some(u) = rediss() else { return };
    let _s = serial();
    tls_scenarios(&u, TTL_MS, &freeze_redis);
}

#[test]
fn postgres_tls_scenarios() {
    let Some(u) = pg_tls() else { return };
    let _s = serial();
    tls_scenarios(&u, TTL_MS, &freeze_postgres);
}

#[test]
fn rediss_without_client_certificate_and_with_system_roots() {
    let Some(u) = rediss() else { return };
    // tls-auth-clients optional: a client certificate is not needed.
    let plain_tls = u.split("&cert=").next().unwrap().to_string();
    probe(&with_ns(&plain_tls, &fresh_ns("nocert")), TTL_MS, 10).unwrap();
    // No ca=: the system's roots, which do not include this run's CA.
    let system = u.split('?').next().unwrap().to_string();
    let e = lease_error_of(&system, TTL_MS);
    assert!(e.contains("unknown CA"), "{e}");
}

#[test]
fn rediss_wrong_password_wrong_ca_wrong_host_each_say_so() {
    let Some(u) = rediss() else { return };
    let e = lease_error_of(&u.replace(":s3cret@", ":nope@"), TTL_MS);
    assert!(e.contains("wrong user or password") && !e.contains("nope"), "{e}");
    wrong_ca_and_wrong_host_say_so(&u, "@127.0.0.1:", TTL_MS);
    let e = lease_error_of(&u.replace("/ca.pem", "/missing.pem"), TTL_MS);
    assert!(e.contains("ca= file") && e.contains("missing.pem"), "{e}");
}

#[test]
fn postgres_wrong_password_wrong_ca_wrong_host_each_say_so() {
    let Some(u) = pg_tls() else { return };
    let _s = serial();
    let e = lease_error_of(&u.replace(":secret@", ":nope@"), TTL_MS);
    assert!(e.contains("wrong user or password") && !e.contains("nope"), "{e}");
    wrong_ca_and_wrong_host_say_so(&u, "@127.0.0.1:", TTL_MS);
    // verify-ca checks the chain only: the same wrong name is accepted.
    let ca_only = u
        .replace("@127.0.0.1:", "@localhost:")
        .replace("verify-full", "verify-ca");
    probe(&with_ns(&ca_only, &fresh_ns("verifyca")), TTL_MS, 10).unwrap();
}

/// Every login the client supports, each its own role in pg_hba.conf.
#[test]
fn postgres_every_login_method() {
    let Some(_) = pg_tls() else { return };
    let _s = serial(); // not while the restart test has the server down
    let (c, port) = (certs(), pg_port());
    let ca = format!("{c}/ca.pem");
    for (what, url) in [
        (
            "trust",
            format!("postgres://flakeid_trust@127.0.0.1:{port}/postgres?sslmode=disable"),
        ),
        (
            "password",
            format!("postgres://flakeid_password:plain-pw@127.0.0.1:{port}/postgres?sslmode=require"),
        ),
        (
            "md5",
            format!("postgres://flakeid_md5:md5-pw@127.0.0.1:{port}/postgres?sslmode=disable"),
        ),
        (
            "scram",
            format!("postgres://postgres:secret@127.0.0.1:{port}/postgres?sslmode=disable"),
        ),
        (
            "scram-sha-256-plus (channel binding)",
            format!(
                "postgres://postgres:secret@127.0.0.1:{port}/postgres?sslmode=verify-full&sslrootcert={ca}&channel_binding=require"
            ),
        ),
        (
            "client certificate",
            format!(
                "postgres://flakeid_cert@127.0.0.1:{port}/postgres?sslmode=verify-full&sslrootcert={ca}&sslcert={c}/client.pem&sslkey={c}/client.key"
            ),
        ),
    ] {
        let g = probe(&with_ns(&url, &fresh_ns("login")), TTL_MS, 10).unwrap_or_else(|e| panic!("{what}: {e}"));
        g.next_id().unwrap_or_else(|e| panic!("{what}: {e}"));
    }
    // Channel binding needs TLS: required without it, the login is refused.
    let e = lease_error_of(
        &format!("postgres://postgres:secret@127.0.0.1:{port}/postgres?sslmode=disable&channel_binding=require"),
        TTL_MS,
    );
    assert!(e.contains("postgres"), "{e}");
}

#[test]
fn redis_restarted_store_stops_ids_then_leases_again() {
    if rediss().is_none() {
        return;
    }
    let r = PrivateRedis::start_persistent();
    let u = r.url();
    drop(probe(&with_ns(&u, "warm"), TTL_MS, 10).unwrap());
    store_restart(&u, TTL_MS, &|| r.kill9(), &|| r.start_again());
}

/// The private TLS cluster, driven with `pg_ctl -D DATA -w` as the postgres user.
struct PgCtl {
    data: String,
    /// The options the running postmaster was started with (postmaster.opts: the
    /// binary, then each argument quoted), without `-D DATA`, as one `-o` string.
    opts: String,
}

impl PgCtl {
    fn new() -> PgCtl {
        let data = std::env::var("FLAKEID_TEST_PG_DATA").unwrap();
        let opts = std::fs::read_to_string(format!("{data}/postmaster.opts")).unwrap();
        let opts = opts
            .split('"')
            .skip(1)
            .step_by(2)
            .filter(|a| *a != "-D" && *a != data)
            .collect::<Vec<_>>()
            .join(" ");
        PgCtl { data, opts }
    }

    fn run(&self, args: &[&str]) {
        run(std::process::Command::new("runuser")
            .args([
                "-u",
                "postgres",
                "--",
                "/usr/lib/postgresql/15/bin/pg_ctl",
                "-D",
                &self.data,
                "-w",
            ])
            .args(args));
    }

    /// Starts the cluster with its original options plus `extra`.
    fn start(&self, extra: &str, log: &str) {
        let o = format!("{} {extra}", self.opts);
        self.run(&["-o", &o, "-l", &format!("{}/../{log}", self.data), "start"]);
    }
}

#[test]
fn postgres_restarted_store_stops_ids_then_leases_again() {
    let Some(u) = pg_tls() else { return };
    let _s = serial();
    let pg = PgCtl::new();
    store_restart(&u, TTL_MS, &|| pg.run(&["-m", "immediate", "stop"]), &|| {
        pg.start("", "log.restarted")
    });
    let pm = std::fs::read_to_string(format!("{}/postmaster.pid", pg.data)).unwrap();
    assert!(!pm.is_empty());
}

/// A server that is up but not yet accepting connections refuses logins with
/// SQLSTATE 57P03 (while it starts up or recovers, for seconds after a crash on a
/// busy database). Forced here for as long as the test likes: the cluster starts
/// as a standby with `hot_standby=off` and is promoted 1.5 s later. `build()`
/// meanwhile waits for it, within the 10 s acquire bound, instead of failing.
#[test]
fn postgres_starting_up_build_waits_for_it() {
    let Some(u) = pg_tls() else { return };
    let _s = serial();
    let pg = PgCtl::new();
    pg.run(&["-m", "fast", "stop"]);
    run(std::process::Command::new("runuser").args([
        "-u",
        "postgres",
        "--",
        "touch",
        &format!("{}/standby.signal", pg.data),
    ]));
    pg.start("-c hot_standby=off", "log.standby");
    let took = build_waits_until_ready(&with_ns(&u, &fresh_ns("starting")), TTL_MS, &|| pg.run(&["promote"]));
    // Back to the options the other tests expect (a primary, as before).
    pg.run(&["-m", "fast", "stop"]);
    pg.start("", "log.restarted");
    eprintln!("build() against a server starting up returned after {took:?}");
}

#[test]
fn rediss_frozen_store_at_build_is_a_lease_error_in_bounded_time() {
    let Some(u) = rediss() else { return };
    let _s = serial();
    frozen_at_build(&u, TTL_MS, &freeze_redis);
}
