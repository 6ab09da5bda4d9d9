//! The server's generator in SQL: `flakeid_next()`, `flakeid_next_many(n)`.

use crate::convert::ok;
use crate::error::{self, Source, to_bigint};
use crate::server::generator;
use flakeid_core::check_batch;
use pgrx::prelude::*;

/// The next ID from the server's generator (one per server, in shared memory).
#[pg_extern(volatile, parallel_safe)]
fn flakeid_next() -> i64 {
    match generator().next_id() {
        Ok(id) => to_bigint(id),
        Err(err) => error::raise(err, Source::Setting, ""),
    }
}

/// IDs a `flakeid_next_many` call reserves at once (a tick's worth for snowflake).
const MANY_CHUNK: usize = 4096;

/// `n` IDs, increasing. Made in runs of [`MANY_CHUNK`] as rows are consumed, so a
/// large `n` never holds gigabytes outside PostgreSQL's memory accounting.
#[pg_extern(volatile, parallel_safe)]
fn flakeid_next_many(n: i32) -> SetOfIterator<'static, i64> {
    let n = ok(check_batch(i128::from(n)), "n");
    let generator = generator();
    let runs = (0..n).step_by(MANY_CHUNK).map(move |start| {
        let mut run = vec![0u64; MANY_CHUNK.min(n - start)];
        ok(generator.fill(&mut run), "n");
        run.into_iter().map(to_bigint)
    });
    SetOfIterator::new(runs.flatten())
}
