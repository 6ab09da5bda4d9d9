//! `flakeid seal`, `flakeid unseal` and `generate --seal-key-file` as a user runs
//! them: tests/vectors/seal.json through the command line, the key's sources and
//! their errors, and docs/sealing.md's command-line example.

#![allow(clippy::unwrap_used)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const KEY: &str = "2b7e151628aed2a6abf7158809cf4f3c";

fn run(args: &[&str], env: &[(&str, &str)], input: &str) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_flakeid"));
    cmd.args(args)
        .env_remove("FLAKEID_SEAL_KEY")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("flakeid-cli-seal-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn key_file(dir: &Path, contents: &str) -> String {
    let path = dir.join("seal.key");
    std::fs::write(&path, contents).unwrap();
    path.display().to_string()
}

fn vectors() -> serde_json::Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/vectors/seal.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn unhex_text(hex: &str) -> String {
    let bytes: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect();
    String::from_utf8(bytes).unwrap()
}

/// Every group on a preset layout (the command line names layouts by preset), its
/// IDs on standard input, its key from a file and from the environment.
#[test]
fn seal_json_through_the_command_line() {
    let dir = temp_dir("vectors");
    let mut groups = 0;
    for g in vectors()["groups"].as_array().unwrap() {
        let Some(layout) = g["layout"].as_str() else { continue };
        let key = g["key"].as_str().unwrap();
        let tweak = unhex_text(g["tweak"].as_str().unwrap());
        let cases = g["cases"].as_array().unwrap();
        let ids: String = cases
            .iter()
            .map(|c| format!("{}\n", c["id"].as_str().unwrap()))
            .collect();
        let sealed: String = cases
            .iter()
            .map(|c| format!("{}\n", c["sealed"].as_str().unwrap()))
            .collect();
        let file = key_file(&dir, &format!("{key}\n"));
        let mut args = vec!["seal", "--layout", layout, "--key-file", &file];
        if !tweak.is_empty() {
            args.extend(["--tweak", &tweak]);
        }
        let o = run(&args, &[], &ids);
        assert!(o.status.success(), "{}", text(&o.stderr));
        assert_eq!(text(&o.stdout), sealed, "{layout} {key} {tweak:?}");
        args[0] = "unseal";
        args.retain(|a| *a != "--key-file" && *a != file.as_str());
        let o = run(&args, &[("FLAKEID_SEAL_KEY", key)], &sealed);
        assert!(o.status.success(), "{}", text(&o.stderr));
        assert_eq!(text(&o.stdout), ids);
        groups += 1;
    }
    assert!(groups >= 27, "{groups} groups on presets");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn ids_as_arguments_in_any_text_form_and_formats_out() {
    let env = [("FLAKEID_SEAL_KEY", KEY)];
    let o = run(&["seal", "910499571847892992", "0ca2be895c239000"], &env, "");
    assert_eq!(text(&o.stdout), "575246358720680725\n575246358720680725\n");
    let o = run(&["seal", "-f", "base62", "910499571847892992"], &env, "");
    let b62 = text(&o.stdout);
    assert_eq!(b62.trim().len(), 11);
    let o = run(&["unseal", "--from", "base62", b62.trim()], &env, "");
    assert_eq!(text(&o.stdout), "910499571847892992\n");
    // A sealed ID of 16 digits (about one in a thousand) reads as hex too: refused as
    // ambiguous, unless --from says which (docs/sealing.md).
    let o = run(&["unseal", "1141196023926750"], &env, "");
    assert!(
        !o.status.success() && text(&o.stderr).contains("ambiguous"),
        "{}",
        text(&o.stderr)
    );
    let o = run(&["unseal", "--from", "int", "1141196023926750"], &env, "");
    assert!(o.status.success(), "{}", text(&o.stderr));
}

#[test]
fn generate_prints_sealed_ids() {
    let dir = temp_dir("generate");
    let file = key_file(&dir, &format!("  {}\n{}\n", &KEY[..16], &KEY[16..]));
    let o = run(
        &[
            "generate",
            "-n",
            "50",
            "--node",
            "3",
            "--seal-key-file",
            &file,
            "--seal-tweak",
            "orders",
        ],
        &[],
        "",
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let sealed = text(&o.stdout);
    assert_eq!(sealed.lines().count(), 50);
    // --from int: about one sealed ID in a thousand has 16 digits, which also read as
    // hex (refused as ambiguous without it).
    let o = run(
        &["unseal", "--key-file", &file, "--tweak", "orders", "--from", "int"],
        &[],
        &sealed,
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let ids: Vec<u64> = text(&o.stdout).lines().map(|l| l.parse().unwrap()).collect();
    assert!(
        ids.windows(2).all(|w| w[0] < w[1]),
        "unsealed IDs are the generator's, in order"
    );
    assert!(ids.iter().all(|id| (id >> 12) & 0x3ff == 3));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn key_errors_name_the_key_and_never_show_it() {
    let dir = temp_dir("errors");
    // No key at all: a usage error.
    let o = run(&["seal", "1"], &[], "");
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("--key-file") && text(&o.stderr).contains("FLAKEID_SEAL_KEY"));
    // The key never comes from an argument.
    let o = run(&["seal", "--key", KEY, "1"], &[], "");
    assert_eq!(o.status.code(), Some(2));
    let secret = "abcdefabcdefabcdefabcdefabcdefabcdef"; // 36 digits: a bad length
    for (args, env) in [
        (vec!["seal".to_string(), "1".into()], vec![("FLAKEID_SEAL_KEY", secret)]),
        (
            vec!["seal".into(), "--key-file".into(), key_file(&dir, secret), "1".into()],
            vec![],
        ),
        (
            vec!["seal".into(), "--key-file".into(), key_file(&dir, "zz"), "1".into()],
            vec![],
        ),
    ] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = run(&args, &env, "");
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        let err = text(&o.stderr);
        assert!(err.contains("key must be"), "{err}");
        assert!(!err.contains("abcdef") && !err.contains("zz"), "{err}");
    }
    let o = run(&["seal", "--key-file", "/nonexistent/seal.key", "1"], &[], "");
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("/nonexistent/seal.key"));
    // Out of range for the layout: refused naming id.
    let o = run(&["seal", "9223372036854775808"], &[("FLAKEID_SEAL_KEY", KEY)], "");
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("id must be in 0..=9223372036854775807"),
        "{}",
        text(&o.stderr)
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_docs_example_runs() {
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/sealing.md")).unwrap();
    let section = docs.split("### Command line").nth(1).expect("a Command line section");
    let block = section.split("```sh\n").nth(1).unwrap().split("```").next().unwrap();
    let dir = temp_dir("docs");
    key_file(&dir, &format!("{KEY}{KEY}\n"));
    let bin = Path::new(env!("CARGO_BIN_EXE_flakeid")).parent().unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let o = Command::new("bash")
        .args(["-euo", "pipefail", "-c", block])
        .current_dir(&dir)
        .env("PATH", path)
        .env_remove("FLAKEID_SEAL_KEY")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}\n{}", text(&o.stdout), text(&o.stderr));
    assert!(text(&o.stdout).contains("worker      1"), "{}", text(&o.stdout));
    std::fs::remove_dir_all(&dir).ok();
}
