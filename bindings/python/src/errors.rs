//! The core's error table as Python exceptions. The classes are made once with
//! `type(...)` because some have two bases (`ConfigError(FlakeIdError, ValueError)`),
//! which `create_exception!` cannot express. Details (`field`, `by_ms`, `position`)
//! are instance attributes, so they survive pickling (multiprocessing).

use flakeid_core::{Error, ErrorKind};
use pyo3::exceptions::{PyException, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};

pub(crate) struct Classes {
    pub base: Py<PyType>,
    /// One class per kind, in the core's `ErrorKind::ALL` order.
    pub kinds: Vec<(ErrorKind, &'static str, Py<PyType>)>,
}

static CLASSES: PyOnceLock<Classes> = PyOnceLock::new();

/// The Python class name and extra builtin base for each kind.
fn shape(kind: ErrorKind) -> (&'static str, Option<&'static str>, &'static str) {
    match kind {
        ErrorKind::Config => (
            "ConfigError",
            Some("ValueError"),
            "A layout, node id or option is out of range (`.field` names it).",
        ),
        ErrorKind::ClockMovedBackwards => (
            "ClockMovedBackwardsError",
            None,
            "The clock went backwards by `.by_ms` milliseconds; no ID was issued.",
        ),
        ErrorKind::TimeExhausted => (
            "TimeExhaustedError",
            None,
            "The time is before the layout's epoch or past the last one it can hold.",
        ),
        ErrorKind::Parse => (
            "ParseError",
            Some("ValueError"),
            "Text, bytes or an int that is not an ID (`.position` is the bad index).",
        ),
        ErrorKind::Fork => (
            "ForkError",
            None,
            "A generator made before fork() was used in the child process.",
        ),
        ErrorKind::Lease => (
            "LeaseError",
            None,
            "A node-id lease could not be acquired, or was lost.",
        ),
        ErrorKind::Interrupted => (
            "WaitInterruptedError",
            None,
            "A wait for the clock was ended early (a signal handler raised); no ID was issued.",
        ),
        _ => ("FlakeIdError", None, "An error of a kind this build does not know."),
    }
}

fn make_class<'py>(py: Python<'py>, name: &str, bases: Bound<'py, PyTuple>, doc: &str) -> PyResult<Py<PyType>> {
    let ns = PyDict::new(py);
    ns.set_item("__module__", "flakeid")?;
    ns.set_item("__doc__", doc)?;
    let ty = py.get_type::<PyType>().call1((name, bases, ns))?;
    Ok(ty.cast_into::<PyType>()?.unbind())
}

pub(crate) fn classes(py: Python<'_>) -> PyResult<&Classes> {
    CLASSES.get_or_try_init(py, || {
        let base = make_class(
            py,
            "FlakeIdError",
            PyTuple::new(py, [py.get_type::<PyException>()])?,
            "Base class of every flakeid error.",
        )?;
        let mut kinds = Vec::with_capacity(ErrorKind::ALL.len());
        for kind in ErrorKind::ALL {
            let (name, extra, doc) = shape(kind);
            let bases = match extra {
                Some(_) => PyTuple::new(py, [base.bind(py).clone(), py.get_type::<PyValueError>()])?,
                None => PyTuple::new(py, [base.bind(py).clone()])?,
            };
            kinds.push((kind, name, make_class(py, name, bases, doc)?));
        }
        Ok(Classes { base, kinds })
    })
}

/// Converts a core error into the matching exception, message unchanged.
pub(crate) fn to_py(err: Error) -> PyErr {
    Python::attach(|py| match build(py, &err) {
        Ok(e) => e,
        Err(e) => e,
    })
}

fn build(py: Python<'_>, err: &Error) -> PyResult<PyErr> {
    let classes = classes(py)?;
    let kind = err.kind();
    let cls = classes
        .kinds
        .iter()
        .find(|(k, _, _)| *k == kind)
        .map_or(&classes.base, |(_, _, c)| c);
    let exc = cls.bind(py).call1((err.to_string(),))?;
    exc.setattr("code", kind.code())?;
    // Which error carries which detail is the core's (Error::details).
    let d = err.details();
    if let Some(field) = d.field {
        exc.setattr("field", field)?;
    }
    if let Some(by_ms) = d.by_ms {
        exc.setattr("by_ms", by_ms)?;
    }
    if let Some(position) = d.position {
        exc.setattr("position", position)?;
    }
    Ok(PyErr::from_value(exc))
}

/// A Python int as `u64`. One that no `u64` can hold (negative, or ≥ 2**64) is a
/// `ConfigError` naming `field` and its range `0..=max`, as the core words it —
/// pyo3 alone would raise a bare `OverflowError` naming neither. Values that fit
/// are range-checked by the core itself.
pub(crate) fn uint(obj: &Bound<'_, PyAny>, field: &'static str, max: u64) -> PyResult<u64> {
    if let Ok(v) = obj.extract::<u64>() {
        return Ok(v);
    }
    if obj.is_instance_of::<pyo3::types::PyInt>() {
        // An int no u64 holds (negative, huge): refused with the option's own range
        // where the core's table gives one (the core checks the others).
        let (lo, hi) = match (flakeid_core::generator_option(field), flakeid_core::layout_field(field)) {
            (Some(o), _) if o.kind == flakeid_core::OptionKind::Uint && o.max < u64::MAX => (o.min, o.max),
            (None, Some(f)) => (f.min, f.max),
            _ => (0, max),
        };
        return Err(to_py(Error::out_of_range(field, lo, hi, obj.str()?)));
    }
    Err(not_int(field, obj))
}

/// The `TypeError` for a value that is not an int.
fn not_int(field: &str, obj: &Bound<'_, PyAny>) -> PyErr {
    PyTypeError::new_err(format!("{field} must be an int, got {}", type_name(obj)))
}

/// A batch size: any Python int, checked by the core's one rule (`n` in
/// `0..=MAX_BATCH`), so `next_ids(10**12)` or `next_ids(-1)` is a `ConfigError`,
/// not an aborted interpreter or a bare `OverflowError`.
pub(crate) fn batch_size(obj: &Bound<'_, PyAny>) -> PyResult<usize> {
    flakeid_core::check_batch(batch_int(obj)?).map_err(to_py)
}

/// A batch size of `uuid7s`: the core's rule for a batch of UUIDv7 objects
/// (`n` in `0..=MAX_UUID7_BATCH`, what a list of `uuid.UUID` holds in a
/// constrained process).
#[cfg(feature = "uuid7")]
pub(crate) fn uuid7_batch_size(obj: &Bound<'_, PyAny>) -> PyResult<usize> {
    flakeid_core::check_uuid7_batch(batch_int(obj)?).map_err(to_py)
}

fn batch_int(obj: &Bound<'_, PyAny>) -> PyResult<i128> {
    match obj.extract::<i128>() {
        Ok(n) => Ok(n),
        Err(_) if obj.is_instance_of::<pyo3::types::PyInt>() => Ok(i128::MAX),
        Err(_) => Err(not_int("n", obj)),
    }
}

/// An empty `Vec` with room for `n`, or a `MemoryError` when the allocator has
/// none: a batch that does not fit raises, as CPython's own lists do, instead of
/// aborting the interpreter.
#[cfg(feature = "uuid7")]
pub(crate) fn try_vec<T>(n: usize) -> PyResult<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|e| pyo3::exceptions::PyMemoryError::new_err(format!("a batch of {n}: {e}")))?;
    Ok(v)
}

/// [`uint`] for an optional argument (`None` stays `None`).
pub(crate) fn opt_uint(obj: Option<&Bound<'_, PyAny>>, field: &'static str, max: u64) -> PyResult<Option<u64>> {
    obj.filter(|o| !o.is_none()).map(|o| uint(o, field, max)).transpose()
}

/// A Python value's type name, for messages.
pub(crate) fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type().name().map(|n| n.to_string()).unwrap_or_default()
}
