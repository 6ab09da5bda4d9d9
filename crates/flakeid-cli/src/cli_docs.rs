//! docs/cli.md and docs/man/*.1 are generated from the clap declaration in args.rs
//! (clap-markdown, clap_mangen: dev-dependencies, never in the CLI's own build) and
//! committed; this test fails when they are stale, like include/flakeid.h.
//! Regenerate with `make cli-docs` (FLAKEID_REGENERATE_CLI_DOCS=1).

use crate::args::Cli;
use clap::CommandFactory;
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn markdown() -> String {
    let options = clap_markdown::MarkdownOptions::new()
        .title("The flakeid command".to_string())
        .show_footer(false)
        .show_table_of_contents(true);
    let body = clap_markdown::help_markdown_custom::<Cli>(&options);
    format!(
        "<!-- Generated from crates/flakeid-cli/src/args.rs by `make cli-docs`: do not edit. -->\n\n{}\n",
        body.trim_end()
    )
}

/// One page per command (flakeid.1, flakeid-generate.1, ...), as `man` expects.
fn man_pages() -> Vec<(String, Vec<u8>)> {
    let dir = std::env::temp_dir().join(format!("flakeid-man-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    clap_mangen::generate_to(Cli::command(), &dir).expect("render the man pages");
    let mut pages: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .expect("read the pages back")
        .map(|e| {
            let path = e.expect("a page").path();
            let name = path.file_name().expect("a name").to_string_lossy().into_owned();
            (name, std::fs::read(&path).expect("read a page"))
        })
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    pages.sort();
    pages
}

fn check(path: &str, want: &[u8], stale: &mut Vec<String>) {
    let file = root().join(path);
    if std::env::var_os("FLAKEID_REGENERATE_CLI_DOCS").is_some() {
        std::fs::write(&file, want).expect("write the generated file");
    } else if std::fs::read(&file).ok().as_deref() != Some(want) {
        stale.push(path.to_string());
    }
}

#[test]
fn cli_docs_are_fresh() {
    let mut stale = Vec::new();
    check("docs/cli.md", markdown().as_bytes(), &mut stale);
    let pages = man_pages();
    for (name, page) in &pages {
        check(&format!("docs/man/{name}"), page, &mut stale);
    }
    // A page of a command that is gone is stale too.
    if let Ok(dir) = std::fs::read_dir(root().join("docs/man")) {
        for e in dir.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if !pages.iter().any(|(n, _)| *n == name) {
                stale.push(format!("docs/man/{name} (no such command)"));
            }
        }
    }
    assert!(
        stale.is_empty(),
        "{} stale: regenerate with `make cli-docs` (FLAKEID_REGENERATE_CLI_DOCS=1 cargo test -p flakeid-cli --bin flakeid cli_docs)",
        stale.join(" and ")
    );
}

#[test]
fn help_names_exit_status_and_environment() {
    let md = markdown();
    for needle in [
        "Exit status:",
        "FLAKEID_NODE",
        "FLAKEID_LEASE",
        "FLAKEID_LISTEN",
        "FLAKEID_LOG",
        "--from",
    ] {
        assert!(md.contains(needle), "docs/cli.md lacks {needle}");
    }
}
