//! flakeid for PostgreSQL: `CREATE EXTENSION flakeid`.
//!
//! One generator per server: its whole state is one `AtomicU64` in shared memory
//! (so the library must be in `shared_preload_libraries`), and every backend builds
//! its own [`flakeid_core::Generator`] over that word with the layout and node id
//! of the `flakeid.*` settings. The engine decides everything; this crate converts
//! SQL types and maps errors to SQLSTATEs.

mod convert;
mod error;
mod generate;
mod parts;
mod server;
mod text;
mod time_range;

::pgrx::pg_module_magic!(name, version);

#[pgrx::pg_guard]
pub extern "C-unwind" fn _PG_init() {
    server::init();
}

#[cfg(any(test, feature = "pg_test"))]
mod sql_tests;

/// Required by `cargo pgrx test`: the test cluster's settings.
#[cfg(test)]
pub mod pg_test {
    pub fn setup(_options: Vec<&str>) {}

    #[must_use]
    pub fn postgresql_conf_options() -> Vec<&'static str> {
        vec![
            "shared_preload_libraries = 'flakeid'",
            "flakeid.layout = 'snowflake'",
            "flakeid.datacenter = 3",
            "flakeid.worker = 7",
        ]
    }
}
