//! `flakeid.UuidGenerator` and the 128-bit family's functions: the core's
//! `UuidGenerator`, `parse_typeid` and friends, converted. A UUID goes out as the
//! standard library's `uuid.UUID` (Django's `UUIDField` takes it), made without
//! parsing: `UUID.__new__` and its two slots set, as `uuid.UUID(int=...)` would.

use crate::errors::{to_py, type_name, uint};
use crate::generator::PyManualClock;
use crate::layout::stats_dict;
use flakeid_core::{UUID_GENERATOR_OPTIONS, UuidGenerator, unknown_option};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyInt, PyList, PyString, PyTuple};

struct UuidType {
    class: Py<PyAny>,
    new: Py<PyAny>,
    set: Py<PyAny>,
    unknown: Py<PyAny>,
}

static UUID_TYPE: PyOnceLock<UuidType> = PyOnceLock::new();

fn uuid_type(py: Python<'_>) -> PyResult<&UuidType> {
    UUID_TYPE.get_or_try_init(py, || {
        let m = py.import("uuid")?;
        let class = m.getattr("UUID")?;
        Ok(UuidType {
            new: class.getattr("__new__")?.unbind(),
            class: class.unbind(),
            set: py
                .import("builtins")?
                .getattr("object")?
                .getattr("__setattr__")?
                .unbind(),
            unknown: m.getattr("SafeUUID")?.getattr("unknown")?.unbind(),
        })
    })
}

/// A `uuid.UUID` of the value.
fn to_uuid(py: Python<'_>, value: u128) -> PyResult<Bound<'_, PyAny>> {
    let t = uuid_type(py)?;
    let obj = t.new.bind(py).call1((t.class.bind(py),))?;
    let set = t.set.bind(py);
    set.call1((&obj, "int", int_of(py, value)?))?;
    set.call1((&obj, "is_safe", t.unknown.bind(py)))?;
    Ok(obj)
}

/// A 128-bit value from a `uuid.UUID`, an int, 16 bytes, or text: UUID text, or
/// with `any_form` also ULID and TypeID text (`field` names it in errors).
fn value_of(obj: &Bound<'_, PyAny>, field: &str, any_form: bool) -> PyResult<u128> {
    let py = obj.py();
    if obj.is_instance(uuid_type(py)?.class.bind(py))? {
        return obj.getattr("int")?.extract::<u128>();
    }
    if obj.is_instance_of::<PyInt>() {
        return obj.extract::<u128>().map_err(|_| {
            to_py(flakeid_core::Error::config(
                "uuid",
                format!(
                    "{field} must be in 0..=2^128-1, got {}",
                    obj.str().map(|s| s.to_string()).unwrap_or_default()
                ),
            ))
        });
    }
    if let Ok(b) = obj.cast::<PyBytes>() {
        return flakeid_core::uuid_from_bytes(b.as_bytes()).map_err(to_py);
    }
    if let Ok(s) = obj.cast::<PyString>() {
        let text: PyBackedStr = s.extract()?;
        return flakeid_core::Wide::from_text(&text, any_form)
            .map(u128::from)
            .map_err(to_py);
    }
    Err(PyTypeError::new_err(format!(
        "{field} must be a uuid.UUID, an int, 16 bytes or UUID/ULID/TypeID text, got {}",
        type_name(obj)
    )))
}

/// Makes UUIDv7s, ULIDs and TypeIDs (the same 128 bits): monotonic across the
/// threads that share it, and it goes on in a forked child with new random bits.
#[pyclass(name = "UuidGenerator", module = "flakeid", frozen)]
pub(crate) struct PyUuidGenerator {
    /// Boxed: the core's generator is 128-byte aligned (see `PyGenerator`).
    inner: Box<UuidGenerator>,
}

#[pymethods]
impl PyUuidGenerator {
    /// Keywords: the clock options of `Generator` (`overflow`, `clock_backwards`,
    /// `max_borrow_ms`, `max_wait_ms`) and `clock` (a `ManualClock`).
    #[new]
    #[pyo3(signature = (**options))]
    fn new(options: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let mut b = UuidGenerator::builder();
        for (k, v) in options.into_iter().flatten() {
            let key: String = k.extract()?;
            if v.is_none() {
                continue;
            }
            if key == "clock" {
                let clock = v.cast::<PyManualClock>().map_err(|_| {
                    PyTypeError::new_err(format!("clock must be a flakeid.ManualClock, got {}", type_name(&v)))
                })?;
                b = b.clock(clock.get().0.clone());
                continue;
            }
            let Some(name) = UUID_GENERATOR_OPTIONS.iter().find(|n| **n == key) else {
                let mut known = UUID_GENERATOR_OPTIONS.to_vec();
                known.push("clock");
                return Err(PyTypeError::new_err(unknown_option(&key, &known).to_string()));
            };
            let text = if v.is_instance_of::<PyInt>() {
                uint(&v, name, u64::MAX)?.to_string()
            } else {
                v.extract::<String>().map_err(|_| {
                    PyTypeError::new_err(format!("{name} must be an int or a str, got {}", type_name(&v)))
                })?
            };
            b = b.set_text(name, &text).map_err(to_py)?;
        }
        Ok(PyUuidGenerator {
            inner: Box::new(b.build().map_err(to_py)?),
        })
    }

    /// The next UUIDv7, a `uuid.UUID`.
    fn uuid7<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let u = self.next(py)?;
        to_uuid(py, u)
    }
    /// `n` fresh UUIDv7s (`uuid.UUID`), increasing and in call order with this
    /// generator's other IDs: one reservation, the interpreter's lock released
    /// while it is made; `n` as `Generator.next_ids` takes it (at most 2^27).
    fn uuid7s<'py>(&self, py: Python<'py>, n: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        let n = crate::errors::batch_size(n)?;
        let values = py.detach(|| self.inner.next_uuid7s(n)).map_err(to_py)?;
        let uuids = values
            .into_iter()
            .map(|u| to_uuid(py, u))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, uuids)
    }
    /// The next UUIDv7 as an int.
    fn uuid7_int<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        int_of(py, self.next(py)?)
    }
    /// The next UUIDv7 as 16 big-endian bytes.
    fn uuid7_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.next(py)?.to_be_bytes()))
    }
    /// The next ID as a ULID (upper-case Crockford base32).
    fn ulid(&self, py: Python<'_>) -> PyResult<String> {
        Ok(flakeid_core::format_ulid(self.next(py)?))
    }
    /// The next ID as a TypeID with `prefix` (checked first: a bad one costs no ID).
    fn typeid(&self, py: Python<'_>, prefix: PyBackedStr) -> PyResult<String> {
        flakeid_core::check_typeid_prefix(&prefix).map_err(to_py)?;
        flakeid_core::format_typeid(&prefix, self.next(py)?).map_err(to_py)
    }
    /// The engine's counters (`reseeds`: forked children that went on).
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        stats_dict!(
            py,
            self.inner.stats(),
            [
                ids_issued,
                tick_waits,
                lead_ms,
                clock_rollbacks,
                max_rollback_ms,
                reseeds,
            ]
        )
    }
    /// Stops issuing; later calls raise `ConfigError` (field `generator`).
    fn close(&self) {
        self.inner.close();
    }
}

impl PyUuidGenerator {
    /// The next value; a wait for the clock releases the GIL.
    fn next(&self, py: Python<'_>) -> PyResult<u128> {
        match self.inner.try_next_uuid7() {
            Ok(Some(u)) => Ok(u),
            Ok(None) => py.detach(|| self.inner.next_uuid7()).map_err(to_py),
            Err(e) => Err(to_py(e)),
        }
    }
}

/// The UUIDv7 of Unix millisecond `ms` with `rand_a` (12 bits) and `rand_b` (62).
#[pyfunction]
pub(crate) fn compose_uuid7<'py>(
    py: Python<'py>,
    ms: &Bound<'py, PyAny>,
    rand_a: &Bound<'py, PyAny>,
    rand_b: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let a = uint(rand_a, "rand_a", 0xfff)?;
    let a = u16::try_from(a).map_err(|_| to_py(flakeid_core::Error::out_of_range("rand_a", 0, 0xfff, a)))?;
    let u =
        flakeid_core::compose_uuid7(uint(ms, "ms", u64::MAX)?, a, uint(rand_b, "rand_b", u64::MAX)?).map_err(to_py)?;
    to_uuid(py, u)
}

/// `(prefix, uuid.UUID)` of a TypeID; `ParseError` names the position.
#[pyfunction]
pub(crate) fn parse_typeid<'py>(py: Python<'py>, text: PyBackedStr) -> PyResult<Bound<'py, PyTuple>> {
    let (prefix, u) = flakeid_core::parse_typeid(&text).map_err(to_py)?;
    (prefix, to_uuid(py, u)?).into_pyobject(py)
}

/// The TypeID of `prefix` and a UUID (a `uuid.UUID`, int, 16 bytes or text).
#[pyfunction]
pub(crate) fn format_typeid(prefix: PyBackedStr, value: &Bound<'_, PyAny>) -> PyResult<String> {
    flakeid_core::format_typeid(&prefix, value_of(value, "value", false)?).map_err(to_py)
}

/// The UUID (text) of a ULID's 128 bits: a byte copy.
#[pyfunction]
pub(crate) fn ulid_to_uuid<'py>(py: Python<'py>, ulid: PyBackedStr) -> PyResult<Bound<'py, PyAny>> {
    to_uuid(py, flakeid_core::parse_ulid(&ulid).map_err(to_py)?)
}

/// The ULID of a UUID's 128 bits (a `uuid.UUID`, int, 16 bytes or text): a byte copy.
#[pyfunction]
pub(crate) fn uuid_to_ulid(value: &Bound<'_, PyAny>) -> PyResult<String> {
    Ok(flakeid_core::format_ulid(value_of(value, "value", false)?))
}

/// The Unix millisecond a UUIDv7 carries (a `uuid.UUID`, int, bytes, or UUID /
/// ULID / TypeID text; a UUID of another version is a `ParseError`).
#[pyfunction]
pub(crate) fn uuid7_timestamp_ms(value: &Bound<'_, PyAny>) -> PyResult<u64> {
    if let Ok(s) = value.extract::<PyBackedStr>() {
        return flakeid_core::Wide::timestamp_ms_of_text(&s).map_err(to_py);
    }
    flakeid_core::uuid7_timestamp_ms(value_of(value, "value", true)?).map_err(to_py)
}

/// A Python int of 128 bits from two 64-bit halves: under the stable ABI pyo3
/// converts a `u128` through `int.from_bytes` (a method call); `hi << 64 | lo` is
/// three C calls.
fn int_of(py: Python<'_>, value: u128) -> PyResult<Bound<'_, PyAny>> {
    let lo = ((value as u64).into_pyobject(py)?).into_any();
    let hi = (value >> 64) as u64;
    if hi == 0 {
        return Ok(lo);
    }
    let hi = hi.into_pyobject(py)?.into_any();
    hi.lshift(64)?.bitor(lo)
}
