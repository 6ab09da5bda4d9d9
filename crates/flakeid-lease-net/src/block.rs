//! Runs the async store clients (tokio-postgres, etcd-client) from the lease
//! machinery's plain threads: each store owns a single-threaded tokio runtime and
//! every call is bounded by its deadline.

use crate::lease_error;
use flakeid_core::Result;
use std::future::Future;
use std::time::Instant;

#[derive(Debug)]
pub(crate) struct Blocking {
    rt: tokio::runtime::Runtime,
}

impl Blocking {
    pub fn new() -> Result<Blocking> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()
            .map_err(|e| lease_error(format!("cannot start the lease client's runtime: {e}")))?;
        Ok(Blocking { rt })
    }

    /// Runs `fut` to completion, or gives up at `until` (`None`). A caller already
    /// inside a tokio runtime (a generator built in an async `main`) cannot block
    /// its thread on another runtime, so the call then runs on a scoped thread.
    pub fn within<F>(&self, until: Instant, fut: F) -> Option<F::Output>
    where
        F: Future + Send,
        F::Output: Send,
    {
        // Boxed: the client futures are large, and this may run on a small stack.
        let fut = Box::pin(fut);
        let run = || {
            self.rt.block_on(async {
                tokio::time::timeout_at(tokio::time::Instant::from_std(until), fut)
                    .await
                    .ok()
            })
        };
        if tokio::runtime::Handle::try_current().is_ok() {
            std::thread::scope(|s| s.spawn(run).join().ok().flatten())
        } else {
            run()
        }
    }

    pub fn spawn<F>(&self, fut: F) -> tokio::task::JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.rt.spawn(fut)
    }
}
