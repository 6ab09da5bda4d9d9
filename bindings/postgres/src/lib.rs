//! flakeid for PostgreSQL: `CREATE EXTENSION flakeid`.
//!
//! One generator per server: its whole state is one `AtomicU64` in shared memory
//! (so the library must be in `shared_preload_libraries`), and every backend builds
//! its own [`flakeid_core::Generator`] over that word with the layout and node id
//! of the `flakeid.*` settings. The engine decides everything about IDs; this crate
//! converts SQL types, maps errors to SQLSTATEs, and keeps the server's promise
//! across its own events: a WAL-logged high-water mark ([`mark`]), standbys and
//! read-only transactions refused, a promotion or a copied data directory detected
//! ([`startup`], [`identity`]), one server per node id on a host ([`host_guard`]), and with
//! `flakeid.lease` its node id leased and fenced like every other generator's
//! ([`lease`]), and a duplicate key on an ID it just issued advises moving its floor
//! ([`conflict`]). Sealed IDs ([`seal`]) are flakeid-seal's.

mod conflict;
mod convert;
mod convert_sequence;
mod error;
mod generate;
mod host_guard;
mod identity;
mod lease;
mod majors;
mod mark;
mod parts;
mod restore;
mod seal;
mod server;
mod settings;
mod shmem;
mod startup;
mod time_range;
mod upgrade;
mod uuid;

::pgrx::pg_module_magic!(name, version);

#[pgrx::pg_guard]
pub extern "C-unwind" fn _PG_init() {
    // pgrx puts a captured Rust backtrace into an error's DETAIL, which goes to the
    // client: never capture one (std reads this once, before any capture).
    // SAFETY: _PG_init runs single-threaded, before any of our code reads the
    // environment.
    unsafe { std::env::set_var("RUST_LIB_BACKTRACE", "0") };
    // SAFETY: reading a flag PostgreSQL sets while it loads preload libraries.
    let preloading = unsafe { pgrx::pg_sys::process_shared_preload_libraries_in_progress };
    // redis://, postgres:// and etcd:// lease URLs (before the settings' check hooks).
    flakeid_lease_net::install();
    settings::define(preloading);
    if preloading {
        shmem::init();
        startup::register();
        conflict::install();
    }
}
