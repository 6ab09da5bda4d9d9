//! The command line of the suites' Rust programs: `--name value` pairs, read by name.
//! flakeid-lease-holder's, and flakeid-faults-driver's through `#[path]`.

/// This process's arguments, without the program name.
pub fn args() -> Vec<String> {
    std::env::args().skip(1).collect()
}

/// The value after `name` in `args`, if `name` is there.
pub fn value(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
}
