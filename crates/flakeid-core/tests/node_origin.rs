//! Where a node id comes from, as a build in a real process sees its surroundings
//! (src/node_origin.rs has the decision's whole table): a node id given wins over
//! everything; with none, a build where the host guard cannot see every process
//! that may share the ID space (the guard off, a container, a directory it cannot
//! use) is refused naming the fixes; a directory the user chose, or the only
//! instance declared, lets the host pick.
//!
//! Each case runs in a process of its own (this binary again, running one test
//! with `FLAKEID_ORIGIN_CHILD` set) with exactly the environment it names: the
//! `FLAKEID_*` variables the suite runs under are removed first.
#![cfg(unix)]
#![allow(clippy::unwrap_used)]

use flakeid_core::{Error, Generator, Layout, NodeOrigin};
use std::process::Command;

const CHILD: &str = "FLAKEID_ORIGIN_CHILD";

/// Runs `test` of this binary in a child with only `env` of the variables that
/// decide the origin, and returns what it printed; panics if the child failed.
fn child(test: &str, env: &[(&str, &str)]) -> String {
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.args(["--exact", test, "--nocapture", "--test-threads=1", "-q"])
        .env(CHILD, "1");
    for (var, _) in std::env::vars() {
        if var.starts_with("FLAKEID_") || var == "KUBERNETES_SERVICE_HOST" || var == "container" {
            c.env_remove(var);
        }
    }
    let out = c.env(CHILD, "1").envs(env.iter().copied()).output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success() && stdout.contains("@ok"), "{stdout}\n{stderr}");
    stdout.into_owned()
}

fn is_child() -> bool {
    std::env::var_os(CHILD).is_some()
}

fn done() {
    println!("@ok");
}

/// The refusal of a build with no node id, checked for the fixes it must name.
fn refused(why: &str) -> String {
    let message = match Generator::builder(Layout::SNOWFLAKE).build() {
        Err(Error::Config { field, message }) => {
            assert!(field == "node" || field == "lease", "{field}: {message}");
            message
        }
        Ok(g) => panic!(
            "built node {} ({}) where {why} should refuse",
            g.node(),
            g.node_origin()
        ),
        Err(other) => panic!("{other:?}"),
    };
    assert!(message.contains(why), "{why}: {message}");
    for fix in ["FLAKEID_NODE", "FLAKEID_LEASE", "lease = \"database\"", "UuidGenerator"] {
        assert!(message.contains(fix), "{fix}: {message}");
    }
    message
}

fn fresh_dir(name: &str) -> String {
    let d = std::env::temp_dir().join(format!("flakeid-origin-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d.to_string_lossy().into_owned()
}

#[test]
fn a_node_id_given_is_explicit_wherever_it_runs() {
    if is_child() {
        let g = Generator::builder(Layout::SNOWFLAKE).node(3).build().unwrap();
        assert_eq!(
            (g.node_origin(), g.stats().node_origin),
            (NodeOrigin::Explicit, NodeOrigin::Explicit)
        );
        return done();
    }
    child(
        "a_node_id_given_is_explicit_wherever_it_runs",
        &[
            ("FLAKEID_HOST_GUARD", "off"),
            ("container", "podman"),
            ("FLAKEID_REQUIRE_NODE", "true"),
        ],
    );
}

#[test]
fn off_with_no_node_id_is_refused() {
    if is_child() {
        refused("the host guard is off");
        return done();
    }
    child("off_with_no_node_id_is_refused", &[("FLAKEID_HOST_GUARD", "off")]);
}

#[test]
fn a_container_with_the_default_directory_is_refused() {
    if is_child() {
        refused("runs in a container (");
        return done();
    }
    child(
        "a_container_with_the_default_directory_is_refused",
        &[("container", "podman")],
    );
}

#[test]
fn a_container_picks_in_a_directory_its_replicas_share() {
    if is_child() {
        let g = Generator::builder(Layout::SNOWFLAKE).build().unwrap();
        assert_eq!(
            (g.node_origin(), g.stats().node_origin),
            (NodeOrigin::Host, NodeOrigin::Host)
        );
        assert_eq!(g.node(), Layout::SNOWFLAKE.max_node());
        return done();
    }
    let dir = fresh_dir("shared");
    child(
        "a_container_picks_in_a_directory_its_replicas_share",
        &[("container", "podman"), ("FLAKEID_HOST_GUARD", &dir)],
    );
}

#[test]
fn the_only_instance_picks_in_a_container() {
    if is_child() {
        let g = Generator::builder(Layout::SNOWFLAKE).build().unwrap();
        assert_eq!(g.node_origin(), NodeOrigin::Host);
        drop(g);
        let g = Generator::builder(Layout::SNOWFLAKE)
            .set_text("single_instance", "true")
            .unwrap()
            .build()
            .unwrap();
        assert_eq!(g.node_origin(), NodeOrigin::Host);
        return done();
    }
    // The variable, then the option (the guard directory is this test's: the
    // decision reads only whether FLAKEID_HOST_GUARD is set, so it is left unset).
    child(
        "the_only_instance_picks_in_a_container",
        &[("container", "podman"), ("FLAKEID_SINGLE_INSTANCE", "true")],
    );
}

#[test]
fn a_guard_directory_owned_by_another_user_is_refused() {
    if is_child() {
        refused("cannot be used (owned by uid 4242");
        // A fixed node id still builds (warned once): the in-process rule holds.
        Generator::builder(Layout::SNOWFLAKE).node(5).build().unwrap();
        return done();
    }
    let dir = fresh_dir("foreign");
    // Only root can give a directory away; a user's run has no other account's directory to make.
    if std::os::unix::fs::chown(&dir, Some(4242), Some(4242)).is_err() {
        eprintln!("not root: the foreign directory cannot be made; the read-only case is tests/host_guard.rs's");
        return;
    }
    child(
        "a_guard_directory_owned_by_another_user_is_refused",
        &[("FLAKEID_HOST_GUARD", &dir)],
    );
}

/// The default directory as another user made it first (a database server's, an
/// app's): sticky and writable by all, it is shared, and a build with no node id
/// picks there.
#[test]
fn another_users_shared_sticky_directory_is_used() {
    if is_child() {
        let g = Generator::builder(Layout::SNOWFLAKE).build().unwrap();
        assert_eq!(g.node_origin(), NodeOrigin::Host);
        return done();
    }
    let dir = fresh_dir("sticky");
    if std::os::unix::fs::chown(&dir, Some(4242), Some(4242)).is_err() {
        eprintln!("not root: another user's directory cannot be made");
        return;
    }
    std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o1777)).unwrap();
    child(
        "another_users_shared_sticky_directory_is_used",
        &[("FLAKEID_HOST_GUARD", &dir)],
    );
}

#[test]
fn a_pod_without_the_kubernetes_store_is_refused_not_picked() {
    if is_child() {
        let message = refused("Kubernetes pod");
        assert!(message.contains("install()"), "{message}");
        return done();
    }
    let dir = fresh_dir("pod");
    child(
        "a_pod_without_the_kubernetes_store_is_refused_not_picked",
        &[("KUBERNETES_SERVICE_HOST", "10.0.0.1"), ("FLAKEID_HOST_GUARD", &dir)],
    );
}

#[test]
fn require_node_from_the_environment_is_honoured() {
    if is_child() {
        refused("require_node");
        return done();
    }
    let dir = fresh_dir("required");
    child(
        "require_node_from_the_environment_is_honoured",
        &[("FLAKEID_REQUIRE_NODE", "true"), ("FLAKEID_HOST_GUARD", &dir)],
    );
}

#[test]
fn check_takes_nothing() {
    if is_child() {
        let dir = std::env::var("FLAKEID_HOST_GUARD").unwrap();
        let files = || std::fs::read_dir(&dir).map_or(0, Iterator::count);
        let b = Generator::builder(Layout::SNOWFLAKE);
        assert_eq!(b.check().unwrap(), NodeOrigin::Host);
        assert_eq!(
            Generator::builder(Layout::SNOWFLAKE).node(7).check().unwrap(),
            NodeOrigin::Explicit
        );
        assert_eq!(files(), 0, "a check took a guard file");
        assert_eq!(b.build().unwrap().node(), Layout::SNOWFLAKE.max_node());
        assert_eq!(files(), 1);
        return done();
    }
    let dir = fresh_dir("check");
    std::fs::remove_dir(&dir).unwrap();
    child("check_takes_nothing", &[("FLAKEID_HOST_GUARD", &dir)]);
}
