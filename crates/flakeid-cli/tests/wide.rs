//! `flakeid generate --kind uuid7|ulid|typeid:PREFIX` and `flakeid decode` of the
//! 128-bit forms, as a user runs them; decode is checked on tests/vectors/uuid.json.

#![allow(clippy::unwrap_used)]

use flakeid_core::Wide;
use std::process::{Command, Output};

fn flakeid(args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_flakeid"))
        .args(args)
        .envs(env.iter().copied())
        .output()
        .expect("run flakeid")
}

fn lines(o: &Output) -> Vec<String> {
    assert!(o.status.success(), "{o:?}");
    String::from_utf8(o.stdout.clone())
        .unwrap()
        .lines()
        .map(String::from)
        .collect()
}

#[test]
fn generate_each_kind() {
    let uuids: Vec<Wide> = lines(&flakeid(&["generate", "--kind", "uuid7", "-n", "70000"], &[]))
        .iter()
        .map(|l| Wide::parse_uuid(l).unwrap())
        .collect();
    assert_eq!(uuids.len(), 70_000);
    assert!(uuids.windows(2).all(|w| w[0] < w[1]), "uuid7s went down");
    assert!(uuids.iter().all(|u| u.version() == 7));
    let ulids = lines(&flakeid(&["generate", "--kind", "ulid", "-n", "3"], &[]));
    assert!(
        ulids
            .iter()
            .all(|l| l.len() == 26 && Wide::parse_ulid(l).is_ok() && *l == l.to_uppercase())
    );
    let typeids = lines(&flakeid(&["generate", "--kind", "typeid:user_account", "-n", "3"], &[]));
    for t in &typeids {
        assert_eq!(Wide::parse_typeid(t).unwrap().0, "user_account");
    }
    let json = lines(&flakeid(&["generate", "--kind", "ulid", "-n", "2", "-f", "json"], &[]));
    assert!(json[0].starts_with("[\"") && json[0].ends_with("\"]"), "{json:?}");
    let o = flakeid(&["generate", "--kind", "uuid7", "-n", "5", "-f", "bytes"], &[]);
    assert_eq!(o.stdout.len(), 80);
}

#[test]
fn a_deployment_node_is_ignored_a_flag_is_refused() {
    // FLAKEID_NODE is the 64-bit IDs' (set for the whole host): no reason to fail.
    lines(&flakeid(&["generate", "--kind", "uuid7"], &[("FLAKEID_NODE", "3")]));
    for (args, says) in [
        (
            &["generate", "--kind", "uuid7", "--node", "3"][..],
            "node does not apply",
        ),
        (&["generate", "--kind", "typeid:User"][..], "TypeID prefix"),
        (&["generate", "--kind", "uuid9"][..], "--kind must be"),
        (
            &["generate", "--kind", "ulid", "-f", "hex"][..],
            "--format for --kind ulid",
        ),
        (
            &["generate", "--kind", "uuid7", "--max-borrow-ms", "999999999"][..],
            "max_borrow_ms must be in",
        ),
    ] {
        let o = flakeid(args, &[]);
        assert!(!o.status.success(), "{args:?}");
        let err = String::from_utf8(o.stderr).unwrap();
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

#[test]
fn decode_reads_the_vectors() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/vectors/uuid.json");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    for c in v["uuid7"].as_array().unwrap() {
        for form in ["uuid", "ulid", "typeid"] {
            let o = flakeid(&["decode", "--json", c[form].as_str().unwrap()], &[]);
            let got: serde_json::Value = serde_json::from_str(&lines(&o)[0]).unwrap();
            assert_eq!(got["uuid"], c["uuid"], "{form}");
            assert_eq!(got["ulid"], c["ulid"], "{form}");
            assert_eq!(got["timestamp_ms"], c["ms"], "{form}");
            assert_eq!(got["version"], 7);
        }
    }
    // The TypeID spec's invalid file, every case (spaces around the ID included):
    // refused as the libraries' Wide::parse_typeid refuses it.
    for c in v["typeid_invalid"].as_array().unwrap() {
        let text = c["typeid"].as_str().unwrap();
        assert!(Wide::parse_typeid(text).is_err(), "{text:?}");
        let o = flakeid(&["decode", text], &[]);
        assert!(!o.status.success(), "{text:?}: {o:?}");
    }
    for c in v["typeid_valid"].as_array().unwrap() {
        let o = flakeid(&["decode", "--json", c["typeid"].as_str().unwrap()], &[]);
        let got: serde_json::Value = serde_json::from_str(&lines(&o)[0]).unwrap();
        assert_eq!(got["uuid"], c["uuid"], "{}", c["name"]);
    }
}
