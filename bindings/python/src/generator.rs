//! `flakeid.Generator` and `flakeid.ManualClock`: the core's generator, converted.

use crate::errors::{batch_size, opt_uint, to_py, type_name, uint};
use crate::layout::{PyLayout, layout_arg, pymethods_with_getters, stats_dict};
use flakeid_core::{
    GENERATOR_OPTIONS, Generator, GeneratorBuilder, GeneratorOption, Layout, ManualClock, OPTION_NAMES, OptionKind,
    OptionValue, to_bytes, unknown_option,
};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyInt, PyList};

/// Batches at least this large release the GIL while the core fills them.
const DETACH_AT: usize = 256;

/// A clock that moves only when told to, for deterministic tests. Pass it as
/// `Generator(clock=...)`; with `auto_advance_ms`, every turn of a generator's wait
/// loop advances it by that much, so waits finish without real time passing.
#[pyclass(name = "ManualClock", module = "flakeid", frozen)]
pub(crate) struct PyManualClock(pub(crate) ManualClock);

#[pymethods]
impl PyManualClock {
    #[new]
    #[pyo3(signature = (start_ms, auto_advance_ms=None))]
    fn new(start_ms: &Bound<'_, PyAny>, auto_advance_ms: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let start = uint(start_ms, "start_ms", u64::MAX)?;
        let step = opt_uint(auto_advance_ms, "auto_advance_ms", u64::MAX)?.unwrap_or(0);
        Ok(PyManualClock(ManualClock::new(start).with_auto_advance(step)))
    }
    /// Sets the time (Unix ms); it may go backwards.
    fn set(&self, ms: &Bound<'_, PyAny>) -> PyResult<()> {
        self.0.set(uint(ms, "ms", u64::MAX)?);
        Ok(())
    }
    /// Moves the time forward by `ms` (saturating, never wrapping).
    fn advance(&self, ms: &Bound<'_, PyAny>) -> PyResult<()> {
        self.0.advance(uint(ms, "ms", u64::MAX)?);
        Ok(())
    }
    /// The current reading (Unix ms).
    fn now_ms(&self) -> u64 {
        self.0.get()
    }
    #[getter]
    fn auto_advance_ms(&self) -> u64 {
        self.0.auto_advance_ms()
    }
    fn __repr__(&self) -> String {
        format!(
            "ManualClock({}, auto_advance_ms={})",
            self.0.get(),
            self.0.auto_advance_ms()
        )
    }
}

/// Issues unique, k-ordered 64-bit IDs. Thread-safe: share one per node id.
#[pyclass(name = "Generator", module = "flakeid", frozen)]
pub(crate) struct PyGenerator {
    /// Boxed: the generator is 128-byte aligned (its counter gets a cache line of its
    /// own), and CPython allocates objects 16-byte aligned, so inline in the Python
    /// object it would be misaligned (undefined behaviour; debug builds abort in
    /// pyo3's `pyclass_init.rs`). The Rust allocator honours the alignment.
    inner: Box<Generator>,
    layout: Py<PyLayout>,
}

/// `state=` takes a str or an `os.PathLike` (`pathlib.Path`).
fn state_path(obj: &Bound<'_, PyAny>) -> PyResult<String> {
    let path = obj
        .py()
        .import("os")?
        .getattr("fspath")?
        .call1((obj,))
        .map_err(|_| PyTypeError::new_err(format!("state must be a str or a path, got {}", type_name(obj))))?;
    path.extract::<String>()
        .map_err(|_| PyTypeError::new_err("state must be a text path (str), not bytes"))
}

/// The range of a node field under `layout`, for ints no `u64` holds.
fn node_max(name: &str, layout: &Layout) -> u64 {
    match name {
        "datacenter" => layout.max_datacenter(),
        "worker" => layout.max_worker(),
        "node" => layout.max_node(),
        _ => u64::MAX,
    }
}

/// The refusal of a Python value of the wrong type for `option`.
fn wrong_type(option: &GeneratorOption, value: &Bound<'_, PyAny>) -> PyErr {
    let wants = match option.kind {
        OptionKind::Uint => "an int",
        OptionKind::Node => "an int or a str like \"env:FLAKEID_NODE\"",
        OptionKind::Clock => "a flakeid.ManualClock",
        OptionKind::Bool => "a bool",
        _ => "a str",
    };
    PyTypeError::new_err(format!("{} must be {wants}, got {}", option.name, type_name(value)))
}

/// `**options` as (name, value) pairs (Python makes sure the keys are str).
fn keywords<'py>(options: Option<&Bound<'py, PyDict>>) -> PyResult<Vec<(String, Bound<'py, PyAny>)>> {
    options
        .into_iter()
        .flatten()
        .map(|(k, v)| Ok((k.extract()?, v)))
        .collect()
}

/// The core's builder from `Generator` keywords: the layout first (node ids are read
/// against it, and it may be a `Layout`), then every other option by name
/// (`GeneratorBuilder::set`, which checks its value).
fn builder_from(given: &[(String, Bound<'_, PyAny>)]) -> PyResult<(GeneratorBuilder, Layout)> {
    let layout = layout_arg(given.iter().find(|(k, _)| k == "layout").map(|(_, v)| v))?;
    let mut b = Generator::builder(layout);
    for (key, value) in given {
        let Some(option) = GENERATOR_OPTIONS.iter().find(|o| o.name == key) else {
            return Err(PyTypeError::new_err(unknown_option(key, &OPTION_NAMES).to_string()));
        };
        if value.is_none() || option.kind == OptionKind::Layout {
            continue;
        }
        b = match option.kind {
            OptionKind::Clock => {
                let clock = value.cast::<PyManualClock>().map_err(|_| wrong_type(option, value))?;
                b.clock(clock.get().0.clone())
            }
            kind => {
                let text;
                let v = match kind {
                    OptionKind::Path => {
                        text = state_path(value)?;
                        OptionValue::Text(&text)
                    }
                    OptionKind::Bool if value.is_instance_of::<PyBool>() => {
                        OptionValue::Uint(u64::from(value.is_truthy()?))
                    }
                    _ if value.is_instance_of::<PyInt>() && matches!(kind, OptionKind::Uint | OptionKind::Node) => {
                        OptionValue::Uint(uint(value, option.name, node_max(option.name, &layout))?)
                    }
                    OptionKind::Uint => return Err(wrong_type(option, value)),
                    _ => {
                        text = value.extract::<String>().map_err(|_| wrong_type(option, value))?;
                        OptionValue::Text(&text)
                    }
                };
                b.set(option.name, v).map_err(to_py)?
            }
        };
    }
    Ok((b, layout))
}

/// Checks `Generator` keywords as `Generator(**options)` does, and raises its error,
/// without taking anything a generator holds (no node id on this host, no lease,
/// no state file: `GeneratorBuilder::check`). The framework adapters check their
/// settings so at start-up, in a process that may fork its workers afterwards.
#[pyfunction]
#[pyo3(signature = (**options))]
pub(crate) fn check_options(options: Option<&Bound<'_, PyDict>>) -> PyResult<()> {
    let (b, _) = builder_from(&keywords(options)?)?;
    b.check().map(drop).map_err(to_py)
}

pymethods_with_getters! { PyGenerator.inner {
    node: u64, datacenter: u64, worker: u64, max_borrow_ms: u64, max_wait_ms: u64, last_issued_ms: Option<u64>,
}
    /// Keywords are the core's options (`flakeid_core::GENERATOR_OPTIONS`, by their
    /// snake_case names): their defaults, ranges and rules are the core's.
    #[new]
    #[pyo3(signature = (datacenter=None, worker=None, **options))]
    fn new(
        py: Python<'_>,
        datacenter: Option<&Bound<'_, PyAny>>,
        worker: Option<&Bound<'_, PyAny>>,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let mut given: Vec<(String, Bound<'_, PyAny>)> = [("datacenter", datacenter), ("worker", worker)]
            .into_iter()
            .filter_map(|(k, v)| Some((k.to_string(), v?.clone())))
            .collect();
        given.extend(keywords(options)?);
        let (mut b, layout) = builder_from(&given)?;
        // Long waits (a clock waited out, a frozen clock) let Python's signal
        // handlers run every 10 ms: Ctrl-C interrupts them with KeyboardInterrupt.
        b = b.wait_hook(std::sync::Arc::new(check_signals));
        // Acquiring a lease talks to its store: let other threads run meanwhile.
        let inner = py.detach(|| b.build()).map_err(to_py)?;
        Ok(PyGenerator {
            inner: Box::new(inner),
            layout: Py::new(py, PyLayout(layout))?,
        })
    }

    /// The next ID. Waiting for the clock (a used-up tick, a rollback policy)
    /// happens with the GIL released; `try_next_id` is served as `next_id` is (a
    /// thread's lone run included), so this path keeps call order too.
    fn next_id(&self, py: Python<'_>) -> PyResult<u64> {
        match self.inner.try_next_id() {
            Ok(Some(id)) => Ok(id),
            Ok(None) => py.detach(|| self.inner.next_id()).map_err(raise),
            Err(e) => Err(to_py(e)),
        }
    }

    /// `n` fresh IDs, increasing (the GIL is released while large batches are made).
    fn next_ids<'py>(&self, py: Python<'py>, n: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, self.batch(py, batch_size(n)?)?)
    }

    /// `n` fresh IDs, increasing, as an `array.array('Q')`: the bulk path. No
    /// Python `int` is made per ID (that allocation is what bounds `next_ids`), and
    /// the array shares its buffer with numpy: `np.frombuffer(a, dtype=np.uint64)`.
    fn next_ids_array<'py>(&self, py: Python<'py>, n: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let ids = self.batch(py, batch_size(n)?)?;
        let raw = PyBytes::new_with(py, ids.len() * 8, |buf| {
            for (chunk, id) in buf.chunks_exact_mut(8).zip(&ids) {
                chunk.copy_from_slice(&id.to_ne_bytes());
            }
            Ok(())
        })?;
        py.import("array")?.getattr("array")?.call1(("Q", raw))
    }

    /// The next ID as 8 big-endian bytes (flake-idgen's format).
    fn next_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let id = self.next_id(py)?;
        Ok(PyBytes::new(py, &to_bytes(id)))
    }

    #[getter]
    fn layout(&self, py: Python<'_>) -> Py<PyLayout> {
        self.layout.clone_ref(py)
    }
    #[getter]
    fn overflow(&self) -> &'static str {
        self.inner.overflow().as_str()
    }
    #[getter]
    fn clock_backwards(&self) -> &'static str {
        self.inner.clock_backwards().as_str()
    }
    /// Whether the node id comes from a lease (`lease=` URL).
    #[getter]
    fn leased(&self) -> bool {
        self.inner.is_leased()
    }
    /// "held", "unreachable", "lost" or "released"; None without a lease.
    #[getter]
    fn lease_state(&self) -> Option<&'static str> {
        self.inner.lease_state().map(|s| s.as_str())
    }
    /// Where the node id came from: "explicit", "leased", "coordinator" or "host".
    #[getter]
    fn node_origin(&self) -> &'static str {
        self.inner.node_origin().as_str()
    }
    /// What this generator has done since it was built, as a dict: ids_issued,
    /// tick_waits, tick_wait_us, lead_ms, clock_rollbacks, max_rollback_ms,
    /// lease_state and lease_remaining_ms (None without a lease), node_origin.
    /// The core's `Stats`; the keys are its field names.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let stats = py.detach(|| self.inner.stats());
        let dict: PyResult<Bound<'py, PyDict>> = stats_dict!(py, stats, [
            ids_issued,
            tick_waits,
            tick_wait_us,
            lead_ms,
            clock_rollbacks,
            max_rollback_ms,
            lease_state,
            lease_remaining_ms,
        ]);
        let dict = dict?;
        dict.set_item("node_origin", stats.node_origin.as_str())?;
        Ok(dict)
    }

    /// Stops issuing IDs and gives the leased node id back now (also done when the
    /// generator is garbage-collected). A no-op without a lease.
    fn release_lease(&self, py: Python<'_>) {
        py.detach(|| self.inner.release_lease());
    }

    /// Lets go of the node id now rather than when the generator is collected: its
    /// lease, or the host guard of a fixed node id, so another generator can be
    /// built on it at once. Later calls raise `ConfigError` (field `generator`).
    fn close(&self, py: Python<'_>) {
        py.detach(|| self.inner.close());
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __exit__(&self, py: Python<'_>, _kind: Py<PyAny>, _value: Py<PyAny>, _tb: Py<PyAny>) {
        self.close(py);
    }

    /// Refused: an unpickled (or copied) generator would issue the same IDs.
    fn __reduce__(&self) -> PyResult<()> {
        Err(PyTypeError::new_err(
            "a flakeid.Generator cannot be pickled or copied: the copy would issue the same IDs \
             as the original; create one generator per process (after fork, with its own node id)",
        ))
    }

    fn __repr__(&self) -> String {
        let g = &self.inner;
        let layout = g.layout();
        // A preset's name quoted (`layout="flake"`), a custom layout's bare.
        let name = match layout.name() {
            Some(n) => format!("{n:?}"),
            None => layout.display_name().to_string(),
        };
        format!(
            "Generator(datacenter={}, worker={}, node={}, layout={name}, overflow={:?}, clock_backwards={:?})",
            g.datacenter(),
            g.worker(),
            g.node(),
            g.overflow().as_str(),
            g.clock_backwards().as_str()
        )
    }
}

thread_local! {
    /// The exception a signal handler raised during a wait, re-raised by the call.
    static PENDING_SIGNAL: std::cell::RefCell<Option<PyErr>> = const { std::cell::RefCell::new(None) };
}

/// The wait hook: runs Python's signal handlers (taking the GIL, which a waiting
/// call has released) and ends the wait if one raised.
fn check_signals() -> flakeid_core::Result<()> {
    Python::attach(|py| match py.check_signals() {
        Ok(()) => Ok(()),
        Err(e) => {
            PENDING_SIGNAL.with(|p| *p.borrow_mut() = Some(e));
            Err(flakeid_core::Error::Interrupted)
        }
    })
}

/// A core error as a Python exception — the signal handler's own exception when
/// a wait was interrupted (KeyboardInterrupt for Ctrl-C).
fn raise(e: flakeid_core::Error) -> PyErr {
    if let flakeid_core::Error::Interrupted = e
        && let Some(err) = PENDING_SIGNAL.with(|p| p.borrow_mut().take())
    {
        return err;
    }
    to_py(e)
}

impl PyGenerator {
    /// `n` fresh IDs; large batches are made with the GIL released.
    fn batch(&self, py: Python<'_>, n: usize) -> PyResult<Vec<u64>> {
        if n >= DETACH_AT {
            py.detach(|| self.inner.next_ids(n))
        } else {
            self.inner.next_ids(n)
        }
        .map_err(raise)
    }
}
