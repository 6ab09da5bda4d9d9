//! `flakeid serve`: runs the ID service of `flakeid-server` until SIGTERM or SIGINT
//! (each drains; a second one exits at once). SIGHUP reloads the TLS and token
//! files.

use crate::Failure;
use crate::args::ServeArgs;
use flakeid_server::Supervision;
use flakeid_server::{Config, Limits, SecurityFiles, Service};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The allocator of a CLI built with `jemalloc` (the release archives'), on x86_64
/// Linux: jemalloc with its background thread, which hands freed pages back to the
/// system a second after they were freed (`dirty_decay_ms`), with no call needed on
/// the service's side. musl's malloc keeps freed memory in its heap and glibc's in its
/// arenas: after an attack that filled the response budget, half the peak stayed
/// resident for good.
#[cfg(all(feature = "jemalloc", target_os = "linux", target_arch = "x86_64"))]
#[global_allocator]
static ALLOC: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// jemalloc's options, read at its first allocation (`_rjem_` is tikv-jemalloc-sys's
/// symbol prefix): the purging thread; dirty pages purged after one second and not
/// kept as muzzy; one arena per CPU, a thread using the one of the CPU it runs on
/// (jemalloc's default, four per CPU, kept 0.3 MiB more at rest and 0.5 MiB more after
/// an attack, on two CPUs); thread caches of objects up to 1 KiB, 32 of a size at
/// most. An idle thread never flushes its own cache (`flush_idle_cache` has the
/// workers do it when they go idle): the defaults (32 KiB, 200 a size) kept 5 MiB after
/// an attack with no flush, and with it still 0.4 MiB more than these, at the same
/// instructions per `GET /v1/id`. Objects of 2 KiB 16 to a slab of 8 pages instead of
/// 2 to a page: a gRPC call waiting for room holds one (tonic's call future), and an
/// attack's thousands of them made an extent for each two, whose records jemalloc keeps
/// for good (docs/service.md, "Memory budget").
#[cfg(all(feature = "jemalloc", target_os = "linux", target_arch = "x86_64"))]
#[allow(non_upper_case_globals)]
#[unsafe(export_name = "_rjem_malloc_conf")]
pub static malloc_conf: &[u8; 146] = b"background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0,\
    percpu_arena:percpu,tcache_max:1024,tcache_nslots_small_max:32,slab_sizes:1537-2048:8\0";

/// How many bytes a tokio worker frees between two flushes of its jemalloc thread
/// cache, at least.
#[cfg(all(feature = "jemalloc", target_os = "linux", target_arch = "x86_64"))]
const FLUSH_AFTER_FREED: u64 = 64 << 10;

/// Run by each tokio worker as it goes idle: flushes its jemalloc thread cache when
/// it freed [`FLUSH_AFTER_FREED`] bytes or more since its last flush. jemalloc collects
/// a thread's cache only as that thread allocates, so a worker left idle by an
/// attack's end kept the slabs its cached objects pinned for good; flushed, they go
/// back to the arena, whose background thread purges them. Counted in bytes, not
/// time: a worker that freed an attack's answers flushes at its next park however
/// soon it comes, and a light load, which parks between requests, flushes once in
/// [`FLUSH_AFTER_FREED`] freed rather than at every park, where the caches would
/// refill at every request. jemalloc counts a thread's freed bytes in any build
/// (`thread.deallocatedp` gives the counter's address once), so a park reads one number
/// (docs/service.md, "Memory budget").
#[cfg(all(feature = "jemalloc", target_os = "linux", target_arch = "x86_64"))]
fn flush_idle_cache() {
    use std::cell::Cell;
    use std::ptr::{null, null_mut};
    use tikv_jemalloc_sys::mallctl;
    thread_local! {
        // jemalloc's count of the bytes this thread freed, and its value at the last flush.
        static FREED: Cell<(*const u64, u64)> = const { Cell::new((null(), 0)) };
    }
    let (mut counter, flushed_at) = FREED.get();
    if counter.is_null() {
        let mut len = size_of::<*const u64>();
        // SAFETY: a NUL-terminated name; "thread.deallocatedp" writes a `uint64_t *`
        // into `counter`, whose size `len` gives.
        let failed = unsafe {
            mallctl(
                c"thread.deallocatedp".as_ptr(),
                (&raw mut counter).cast(),
                &mut len,
                null_mut(),
                0,
            )
        };
        if failed != 0 || counter.is_null() {
            return;
        }
    }
    // SAFETY: the counter is in this thread's jemalloc state, which lives as long as
    // the thread; only this thread writes it.
    let freed = unsafe { counter.read() };
    if freed.wrapping_sub(flushed_at) < FLUSH_AFTER_FREED {
        FREED.set((counter, flushed_at));
        return;
    }
    // SAFETY: a NUL-terminated name; "thread.tcache.flush" reads and writes nothing.
    unsafe { mallctl(c"thread.tcache.flush".as_ptr(), null_mut(), null_mut(), null_mut(), 0) };
    FREED.set((counter, freed));
}

pub fn serve(args: ServeArgs) -> Result<(), Failure> {
    let listen = &args.listen;
    let addr: SocketAddr = listen.parse().map_err(|_| {
        Failure::Usage(format!(
            "--listen expects ADDR:PORT (e.g. 127.0.0.1:7676), got {listen:?}"
        ))
    })?;
    let probe_addr: Option<SocketAddr> = match &args.probe_listen {
        None => None,
        Some(text) => Some(text.parse().map_err(|_| {
            Failure::Usage(format!(
                "--probe-listen expects ADDR:PORT (e.g. 0.0.0.0:7677), got {text:?}"
            ))
        })?),
    };
    let config = Config {
        max_batch: usize::try_from(args.max_batch).unwrap_or(usize::MAX),
        limits: limits(&args),
        security: SecurityFiles {
            tls_cert: args.tls_cert.clone(),
            tls_key: args.tls_key.clone(),
            tls_client_ca: args.tls_client_ca.clone(),
            auth_token_file: args.auth_token_file.clone(),
            metrics_auth: args.metrics_auth,
        },
        sealer: match &args.seal_key_file {
            Some(path) => Some(crate::seal::from_key_file(
                path,
                &crate::layout_arg(args.generator.layout())?,
                args.seal_tweak.as_deref(),
            )?),
            None => None,
        },
        access_log: args.access_log,
    };
    config.validate()?;
    // Certificates, keys and tokens before the port and the lease: a bad file must
    // not hold a node id.
    config.security.check()?;
    let max_connections = config.limits.connection_cap();
    let args_tls = config.security.tls_cert.is_some();
    // A service is run as replicas: node 0 by default would give every replica the
    // same IDs, so 64-bit IDs need a node source (the core refuses to build without).
    // Given no generator option at all, the service issues 128-bit IDs only, which
    // need none; anything given for 64-bit IDs without a node source is refused.
    let wide_only = args.generator.given.is_empty();
    let builder = crate::generator_options(&args.generator)?.require_node();
    // A request costs microseconds: the clock cache's thread, waking every
    // millisecond, took more from the request path than it saved (core: SystemClock).
    flakeid_core::SystemClock::disable_cache();
    init_logging();
    let supervision = Supervision {
        liveness_timeout: Duration::from_millis(args.liveness_timeout_ms),
        ..Supervision::default()
    };
    // The blocking pool makes batches and chunks (and lease round trips): 64
    // threads are plenty, and bound what the threads hold (tokio's default is 512).
    let mut runtime = tokio::runtime::Builder::new_multi_thread();
    runtime.enable_all().max_blocking_threads(64);
    #[cfg(all(feature = "jemalloc", target_os = "linux", target_arch = "x86_64"))]
    runtime.on_thread_park(flush_idle_cache);
    let runtime = runtime.build()?;
    runtime.block_on(async move {
        // Before anything else: SIGHUP must not kill the process (its default).
        let mut signals = Signals::new()?;
        let listener = bind(addr)
            .map_err(|e| Failure::Io(std::io::Error::new(e.kind(), format!("cannot listen on {addr}: {e}"))))?;
        let probes = match probe_addr {
            None => None,
            Some(p) => Some(bind(p).map_err(|e| {
                Failure::Io(std::io::Error::new(
                    e.kind(),
                    format!("cannot listen on {p} (--probe-listen): {e}"),
                ))
            })?),
        };
        let probe_local = probes.as_ref().and_then(|l| l.local_addr().ok());
        // Acquire the node id (a lease may take a network round trip) only once the
        // port is ours, so a busy port never holds a lease.
        let service = if wide_only {
            Service::wide(config)?
        } else {
            let first = builder.clone();
            let generator = tokio::task::spawn_blocking(move || first.build())
                .await
                .map_err(|e| Failure::Io(std::io::Error::other(e)))??;
            Service::new(generator, config)?
        };
        let local = listener.local_addr()?;
        let g = service.generator();
        tracing::info!(
            listen = %local,
            probes = probe_local.map(|a| a.to_string()),
            node = g.as_ref().map(|g| g.node()),
            leased = g.as_ref().is_some_and(|g| g.is_leased()),
            state = g.as_ref().is_some_and(|g| g.has_state()),
            families = service.families(),
            max_connections,
            tls = args_tls,
            sealed = service.is_sealing(),
            "flakeid serve: listening"
        );
        drop(g);
        // A lost lease (taken over, or forgotten by a store that lost its data) is
        // leased again, any free node id, with backoff; /healthz fails after the
        // liveness timeout without a lease (flakeid_server::lease).
        tokio::spawn(flakeid_server::supervise(
            service.clone(),
            move || builder.clone().build(),
            supervision,
        ));
        // Set by a second signal before it gives the lease back. Giving it back cuts
        // the in-flight responses short, which can end the drain first: the exit is
        // then still the forced one (1), not a drained 0.
        let forced = Arc::new(AtomicBool::new(false));
        let shutdown = {
            let service = service.clone();
            let forced = forced.clone();
            async move {
                let first = signals.next(&service).await;
                tracing::info!("{first}: draining (a second SIGTERM or SIGINT exits at once)");
                // A second signal: give the lease back and exit without draining.
                tokio::spawn(async move {
                    let second = signals.next(&service).await;
                    forced.store(true, Ordering::SeqCst);
                    tracing::warn!("{second} while draining: releasing the lease and exiting now");
                    let _ = tokio::task::spawn_blocking(move || service.shutdown()).await;
                    std::process::exit(1);
                });
            }
        };
        flakeid_server::serve_with_probes(listener, probes, service, shutdown).await?;
        if forced.load(Ordering::SeqCst) {
            // The forced exit is under way (releasing the lease): let it finish.
            std::future::pending::<()>().await;
        }
        Ok(())
    })
}

/// The signals the service answers: SIGTERM and SIGINT drain; SIGHUP (`systemctl
/// reload`) reloads the TLS and token files and keeps serving.
#[cfg(unix)]
struct Signals {
    term: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
    hup: tokio::signal::unix::Signal,
}

#[cfg(unix)]
impl Signals {
    fn new() -> std::io::Result<Signals> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Signals {
            term: signal(SignalKind::terminate())?,
            int: signal(SignalKind::interrupt())?,
            hup: signal(SignalKind::hangup())?,
        })
    }

    /// The next signal that stops the service, reloading `service`'s files on
    /// each SIGHUP meanwhile.
    async fn next(&mut self, service: &Arc<Service>) -> &'static str {
        loop {
            tokio::select! {
                _ = self.term.recv() => return "SIGTERM",
                _ = self.int.recv() => return "SIGINT",
                _ = self.hup.recv() => {
                    let s = service.clone();
                    let _ = tokio::task::spawn_blocking(move || s.reload_files()).await;
                }
            }
        }
    }
}

/// Windows has no signals: its console control events drain instead (Ctrl-C,
/// Ctrl-Break, the console closing, a logoff or shutdown). None reloads the TLS and
/// token files, which there take a restart.
#[cfg(windows)]
struct Signals {
    c: tokio::signal::windows::CtrlC,
    brk: tokio::signal::windows::CtrlBreak,
    close: tokio::signal::windows::CtrlClose,
    shutdown: tokio::signal::windows::CtrlShutdown,
}

#[cfg(windows)]
impl Signals {
    fn new() -> std::io::Result<Signals> {
        use tokio::signal::windows;
        Ok(Signals {
            c: windows::ctrl_c()?,
            brk: windows::ctrl_break()?,
            close: windows::ctrl_close()?,
            shutdown: windows::ctrl_shutdown()?,
        })
    }

    /// The next control event, all of which stop the service.
    async fn next(&mut self, _service: &Arc<Service>) -> &'static str {
        tokio::select! {
            _ = self.c.recv() => "CTRL_C_EVENT",
            _ = self.brk.recv() => "CTRL_BREAK_EVENT",
            _ = self.close.recv() => "CTRL_CLOSE_EVENT",
            _ = self.shutdown.recv() => "CTRL_SHUTDOWN_EVENT",
        }
    }
}

/// The connection limits from the command line (the defaults of [`Limits`]).
/// The listen backlog (the kernel caps it at `net.core.somaxconn`, 4096 on Linux
/// since 5.4). tokio's `TcpListener::bind` listens with std's 128: a burst of
/// connections (300 health watchers at once, the abuse suite's
/// `LongCallsHoldNoProbeSlot`) overflowed the accept queue on a busy host, and a
/// client whose SYN was dropped retries only a second later: `/healthz` took 1.1 s.
const BACKLOG: u32 = 4096;

/// A listener on `addr` with [`BACKLOG`] (and, off Windows, `SO_REUSEADDR`, as
/// tokio's own `bind` sets it).
fn bind(addr: SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    #[cfg(not(windows))]
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(BACKLOG)
}

fn limits(args: &ServeArgs) -> Limits {
    let d = Limits::default();
    let clamp32 = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
    let size = |v: u64| usize::try_from(v).unwrap_or(usize::MAX);
    Limits {
        header_read_timeout: args
            .header_timeout_ms
            .map_or(d.header_read_timeout, Duration::from_millis),
        idle_timeout: args.idle_timeout_ms.map_or(d.idle_timeout, Duration::from_millis),
        max_connections: args
            .max_connections
            .map_or(d.max_connections, |n| usize::try_from(n).unwrap_or(usize::MAX)),
        max_streams: args.max_streams.map_or(d.max_streams, clamp32),
        stream_window: args.stream_window.map_or(d.stream_window, clamp32),
        connection_window: args.connection_window.map_or(d.connection_window, clamp32),
        stream_idle_timeout: args
            .stream_idle_timeout_ms
            .map_or(d.stream_idle_timeout, Duration::from_millis),
        // One rule for a request's head and its body unless said otherwise.
        body_timeout: args
            .body_timeout_ms
            .or(args.header_timeout_ms)
            .map_or(d.body_timeout, Duration::from_millis),
        max_connections_per_client: args
            .max_connections_per_client
            .map_or(d.max_connections_per_client, size),
        request_memory: args.request_memory.map(size),
        response_memory: args.response_memory.map(size),
        connection_response_memory: args.connection_response_memory.map(size),
        client_response_memory: args.client_response_memory.map(size),
        client_ipv6_prefix: args
            .client_ipv6_prefix
            .map_or(d.client_ipv6_prefix, |p| u32::try_from(p).unwrap_or(u32::MAX)),
        reserve_timeout: args.reserve_timeout_ms.map_or(d.reserve_timeout, Duration::from_millis),
    }
}

/// Logs to standard error, filtered by `FLAKEID_LOG` (`info` when unset or
/// invalid): a level, or `target=level` directives separated by commas
/// (`warn,flakeid_server=debug`). `Targets` reads them without the regex engine
/// that `EnvFilter`'s span and field filters need.
fn init_logging() {
    use tracing_subscriber::filter::Targets;
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let filter = std::env::var("FLAKEID_LOG")
        .ok()
        .and_then(|v| v.parse::<Targets>().ok())
        .unwrap_or_else(|| Targets::new().with_default(tracing::Level::INFO));
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .finish()
        .with(filter)
        .try_init();
}
