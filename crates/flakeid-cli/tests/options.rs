//! tests/vectors/options.json through `flakeid generate` and `flakeid serve`: each
//! option is a flag (the core's table names it), and a refused case exits 1 with
//! the core's config error naming the field.

#![allow(clippy::unwrap_used)]

use serde_json::Value;
use std::process::{Command, Output};

fn vectors() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/vectors/options.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn run(args: &[String]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_flakeid"))
        .args(args)
        .env_remove("FLAKEID_NODE")
        .env_remove("FLAKEID_LEASE")
        .output()
        .unwrap()
}

/// The case's options as flags, by the table's `flag` names.
fn flags(v: &Value, case: &Value) -> Vec<String> {
    let mut out = vec!["--layout".to_string(), case["layout"].as_str().unwrap().to_string()];
    for (name, value) in case["options"].as_object().unwrap() {
        let option = v["options"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["name"] == *name)
            .unwrap();
        out.push(format!("--{}", option["flag"].as_str().unwrap()));
        out.push(match value {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        });
    }
    out
}

fn check(what: &str, o: &Output, case: &Value) {
    let err = String::from_utf8_lossy(&o.stderr);
    match case.get("field") {
        None => assert!(o.status.success(), "{what}: {o:?}"),
        Some(field) => {
            assert_eq!(o.status.code(), Some(1), "{what}: {err}");
            let field = field.as_str().unwrap();
            assert!(
                err.contains("invalid configuration") && err.contains(field),
                "{what}: want a config error naming {field}: {err}"
            );
        }
    }
}

#[test]
fn every_option_is_a_flag() {
    let v = vectors();
    let help = String::from_utf8(run(&["generate".into(), "--help".into()]).stdout).unwrap();
    for o in v["options"].as_array().unwrap() {
        // The test clock is not a CLI option (the CLI always runs on the system clock).
        if o["name"] == "clock" {
            continue;
        }
        assert!(
            help.contains(&format!("--{}", o["flag"].as_str().unwrap())),
            "{o}: {help}"
        );
    }
}

#[test]
fn generate_and_serve_refuse_as_every_binding() {
    let v = vectors();
    for case in v["cases"].as_array().unwrap() {
        let mut args = vec!["generate".to_string(), "-n".into(), "1".into()];
        args.extend(flags(&v, case));
        check(&format!("generate {args:?}"), &run(&args), case);
        // serve: refused cases only (a good one would serve); a node source is
        // required there, so cases without one get --node 1.
        // serve always requires a node source: the require_node cases say nothing new there.
        if case.get("error").is_some() && !case["options"].as_object().unwrap().contains_key("require_node") {
            let mut args = vec!["serve".to_string(), "--listen".into(), "127.0.0.1:1".into()];
            args.extend(flags(&v, case));
            let o = case["options"].as_object().unwrap();
            if !["node", "datacenter", "worker", "lease"]
                .iter()
                .any(|k| o.contains_key(*k))
            {
                args.extend(["--node".to_string(), "1".into()]);
            }
            check(&format!("serve {args:?}"), &run(&args), case);
        }
    }
}
