//! `flakeid.UuidGenerator` and the 128-bit family's functions: the core's
//! `UuidGenerator`, `parse_typeid` and friends, converted. A UUID goes out as the
//! standard library's `uuid.UUID` (Django's `UUIDField` takes it), made without
//! parsing: `UUID.__new__` and its two slots set, as `uuid.UUID(int=...)` would.
//! The module's `uuid7()`, `uuid7_int()`, `uuid7_bytes()`, `ulid()` and
//! `typeid()` use one generator per process, here.

use crate::errors::{to_py, type_name, uint};
use crate::generator::PyManualClock;
use crate::layout::stats_dict;
use flakeid_core::{Error, UUID_GENERATOR_OPTIONS, UuidGenerator, Wide, unknown_option};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDateTime, PyDelta, PyDict, PyInt, PyList, PyString, PyTuple, PyTzInfo};
use std::cell::RefCell;
use std::sync::OnceLock;

struct UuidType {
    class: Py<PyAny>,
    new: Py<PyAny>,
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
            unknown: m.getattr("SafeUUID")?.getattr("unknown")?.unbind(),
        })
    })
}

/// A `uuid.UUID` of the value: `UUID.__new__(UUID)` and its two slots set as
/// `object.__setattr__` would (`PyObject_GenericSetAttr`: the class's own
/// `__setattr__` refuses, the slots' descriptors do not).
fn to_uuid(py: Python<'_>, value: u128) -> PyResult<Bound<'_, PyAny>> {
    let t = uuid_type(py)?;
    let obj = t.new.bind(py).call1((t.class.bind(py),))?;
    generic_set(&obj, pyo3::intern!(py, "int"), &int_of(py, value)?)?;
    generic_set(&obj, pyo3::intern!(py, "is_safe"), t.unknown.bind(py))?;
    Ok(obj)
}

fn generic_set(obj: &Bound<'_, PyAny>, name: &Bound<'_, PyString>, value: &Bound<'_, PyAny>) -> PyResult<()> {
    // SAFETY: three live objects, the GIL held (`obj.py()`); -1 sets a Python error.
    if unsafe { pyo3::ffi::PyObject_GenericSetAttr(obj.as_ptr(), name.as_ptr(), value.as_ptr()) } == 0 {
        Ok(())
    } else {
        Err(PyErr::fetch(obj.py()))
    }
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
        return Wide::from_slice(b.as_bytes()).map(u128::from).map_err(to_py);
    }
    if let Ok(s) = obj.cast::<PyString>() {
        let text: PyBackedStr = s.extract()?;
        let read = if any_form {
            Wide::parse_any(&text)
        } else {
            Wide::parse_uuid(&text)
        };
        return read.map(u128::from).map_err(to_py);
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

    /// The next UUIDv7, a `uuid.UUID`; with `timestamp` (and `nanos`), as
    /// uuid-utils' `uuid7(timestamp, nanos)`, one at that time ([`uuid7_at`]).
    #[pyo3(signature = (timestamp=None, nanos=None, *, nanoseconds=None))]
    fn uuid7<'py>(
        &self,
        py: Python<'py>,
        timestamp: Option<&Bound<'py, PyAny>>,
        nanos: Option<&Bound<'py, PyAny>>,
        nanoseconds: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        uuid7_of(py, &self.inner, timestamp, nanos, nanoseconds)
    }
    /// A UUIDv7 at `when` (Unix ms, an int, or an aware `datetime`): outside the
    /// generator's sequence (not ordered after its earlier UUIDs, nor among
    /// others of the same ms), 74 random bits.
    fn uuid7_at<'py>(&self, py: Python<'py>, when: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        to_uuid(py, self.inner.uuid7_at(unix_ms_of(when)?).map_err(to_py)?)
    }
    /// A UUIDv7 of the generator's clock now shifted by `shift` (a
    /// `datetime.timedelta` or ms, an int; negative: the past), as PostgreSQL 18's
    /// `uuidv7(shift)`; outside the sequence as `uuid7_at`.
    fn uuid7_shifted<'py>(&self, py: Python<'py>, shift: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        to_uuid(py, self.inner.uuid7_shifted(shift_ms_of(shift)?).map_err(to_py)?)
    }
    /// `n` fresh UUIDv7s (`uuid.UUID`), increasing and in call order with this
    /// generator's other IDs: one reservation, the interpreter's lock released
    /// while it is made; `n` at most 2^20 (the core's `MAX_UUID7_BATCH`, a
    /// `ConfigError` beyond it, before anything is allocated); memory that runs
    /// out is a `MemoryError`.
    fn uuid7s<'py>(&self, py: Python<'py>, n: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        let n = crate::errors::uuid7_batch_size(n)?;
        let mut values = crate::errors::try_vec::<u128>(n)?;
        values.resize(n, 0);
        py.detach(|| self.inner.fill_uuid7(&mut values)).map_err(to_py)?;
        let mut uuids = crate::errors::try_vec(n)?;
        for u in values {
            uuids.push(to_uuid(py, u)?);
        }
        PyList::new(py, uuids)
    }
    /// The next UUIDv7 as an int.
    fn uuid7_int<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        int_of(py, next(py, &self.inner)?)
    }
    /// The next UUIDv7 as 16 big-endian bytes.
    fn uuid7_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &next(py, &self.inner)?.to_be_bytes()))
    }
    /// The next ID as a ULID (upper-case Crockford base32).
    fn ulid(&self, py: Python<'_>) -> PyResult<String> {
        Ok(Wide(next(py, &self.inner)?).to_ulid())
    }
    /// The next ID as a TypeID with `prefix` (checked first: a bad one costs no ID).
    fn typeid(&self, py: Python<'_>, prefix: PyBackedStr) -> PyResult<String> {
        typeid_of(py, &self.inner, &prefix)
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

/// The next value; a wait for the clock releases the GIL.
fn next(py: Python<'_>, g: &UuidGenerator) -> PyResult<u128> {
    match g.try_next_uuid7() {
        Ok(Some(u)) => Ok(u),
        Ok(None) => py.detach(|| g.next_uuid7()).map_err(to_py),
        Err(e) => Err(to_py(e)),
    }
}

fn typeid_of(py: Python<'_>, g: &UuidGenerator, prefix: &str) -> PyResult<String> {
    Wide::check_typeid_prefix(prefix).map_err(to_py)?;
    Wide(next(py, g)?).to_typeid(prefix).map_err(to_py)
}

/// `uuid7(timestamp=None, nanos=None, *, nanoseconds=None)`: the next UUIDv7, or
/// one at a time given as uuid-utils takes it: 0.x's `timestamp` (Unix seconds, an
/// int, or an aware `datetime`) plus `nanos` (0..=999999999, with an int
/// `timestamp` only), or 1.x's `nanoseconds` (the whole Unix time in ns, an int,
/// alone). Each error names the keyword given, in its unit.
fn uuid7_of<'py>(
    py: Python<'py>,
    g: &UuidGenerator,
    timestamp: Option<&Bound<'py, PyAny>>,
    nanos: Option<&Bound<'py, PyAny>>,
    nanoseconds: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let timestamp = timestamp.filter(|t| !t.is_none());
    let nanos = nanos.filter(|n| !n.is_none());
    if let Some(ns) = nanoseconds.filter(|n| !n.is_none()) {
        if timestamp.is_some() || nanos.is_some() {
            return Err(to_py(Error::config(
                "nanoseconds",
                "nanoseconds is the whole Unix time in ns (uuid-utils 1.x): give it alone, \
                 not with timestamp or nanos (uuid-utils 0.x)",
            )));
        }
        // Past u64: 2^48 ms is about 2.8 * 10^20 ns.
        const MAX_NS: u128 = Wide::MAX_MS as u128 * 1_000_000 + 999_999;
        if !ns.is_instance_of::<PyInt>() {
            return Err(PyTypeError::new_err(format!(
                "nanoseconds must be an int (Unix ns), got {}",
                type_name(ns)
            )));
        }
        let ns = match ns.extract::<u128>() {
            Ok(v) if v <= MAX_NS => v,
            _ => {
                return Err(to_py(Error::config(
                    "nanoseconds",
                    format!("nanoseconds must be in 0..={MAX_NS} (Unix ns), got {}", ns.str()?),
                )));
            }
        };
        return to_uuid(py, g.uuid7_at((ns / 1_000_000) as u64).map_err(to_py)?);
    }
    let Some(timestamp) = timestamp else {
        if nanos.is_some() {
            return Err(to_py(Error::config(
                "nanos",
                "nanos is the sub-second part of timestamp: pass timestamp too",
            )));
        }
        return to_uuid(py, next(py, g)?);
    };
    let ms = if timestamp.is_instance_of::<PyInt>() {
        const MAX_S: u64 = Wide::MAX_MS / 1000;
        let seconds = uint(timestamp, "timestamp", MAX_S)?;
        if seconds > MAX_S {
            return Err(to_py(Error::config(
                "timestamp",
                format!("timestamp must be in 0..={MAX_S} (Unix seconds), got {seconds}"),
            )));
        }
        let nanos = crate::errors::opt_uint(nanos, "nanos", 999_999_999)?.unwrap_or(0);
        if nanos > 999_999_999 {
            return Err(to_py(Error::out_of_range("nanos", 0, 999_999_999, nanos)));
        }
        seconds * 1000 + nanos / 1_000_000
    } else {
        if nanos.is_some() {
            return Err(to_py(Error::config(
                "nanos",
                "nanos goes with an int timestamp: a datetime carries its own microseconds",
            )));
        }
        ms_of(timestamp, "timestamp", "Unix seconds")?
    };
    to_uuid(py, g.uuid7_at(ms).map_err(to_py)?)
}

/// Unix ms from an int (ms) or an aware `datetime` (floored to its millisecond).
fn unix_ms_of(when: &Bound<'_, PyAny>) -> PyResult<u64> {
    if when.is_instance_of::<PyInt>() {
        return uint(when, "unix_ms", Wide::MAX_MS);
    }
    ms_of(when, "unix_ms", "Unix ms")
}

/// Unix ms from an aware `datetime`; anything else is a `TypeError` naming the
/// argument `field` the caller gave and the `unit` an int there is in.
fn ms_of(when: &Bound<'_, PyAny>, field: &'static str, unit: &str) -> PyResult<u64> {
    let py = when.py();
    if !when.is_instance_of::<PyDateTime>() {
        return Err(PyTypeError::new_err(format!(
            "{field} must be an int ({unit}) or a datetime, got {}",
            type_name(when)
        )));
    }
    if when.call_method0("utcoffset")?.is_none() {
        return Err(to_py(Error::config(
            field,
            "a naive datetime has no time zone: pass an aware one (tzinfo=datetime.timezone.utc)",
        )));
    }
    let epoch = PyDateTime::from_timestamp(py, 0.0, Some(&PyTzInfo::utc(py)?.to_owned()))?;
    let ms: i128 = when
        .sub(epoch)?
        .floor_div(PyDelta::new(py, 0, 0, 1000, false)?)?
        .extract()?;
    u64::try_from(ms).map_err(|_| to_py(Error::out_of_range(field, 0, Wide::MAX_MS, ms)))
}

/// Signed ms from an int or a `datetime.timedelta` (floored to its millisecond).
fn shift_ms_of(shift: &Bound<'_, PyAny>) -> PyResult<i64> {
    let py = shift.py();
    let ms: i128 = if shift.is_instance_of::<PyInt>() {
        shift.extract().unwrap_or(i128::MAX)
    } else if shift.is_instance_of::<PyDelta>() {
        shift.floor_div(PyDelta::new(py, 0, 0, 1000, false)?)?.extract()?
    } else {
        return Err(PyTypeError::new_err(format!(
            "shift_ms must be an int (ms) or a datetime.timedelta, got {}",
            type_name(shift)
        )));
    };
    i64::try_from(ms).map_err(|_| {
        to_py(Error::config(
            "shift_ms",
            format!("shift_ms must be in -2^63..=2^63-1 ms, got {ms}"),
        ))
    })
}

/// The process's UuidGenerator (`flakeid.uuid7()` and its siblings): one for the
/// process, made on first use; a forked child goes on with it (new random bits).
fn process() -> PyResult<&'static UuidGenerator> {
    static PROCESS: OnceLock<UuidGenerator> = OnceLock::new();
    if let Some(g) = PROCESS.get() {
        return Ok(g);
    }
    let built = UuidGenerator::builder().build().map_err(to_py)?;
    Ok(PROCESS.get_or_init(|| built))
}

/// The next UUIDv7 of the process's generator, a `uuid.UUID`; with `timestamp`
/// (and `nanos`) or `nanoseconds`, one at that time, as `UuidGenerator.uuid7`.
#[pyfunction(name = "uuid7")]
#[pyo3(signature = (timestamp=None, nanos=None, *, nanoseconds=None))]
pub(crate) fn process_uuid7<'py>(
    py: Python<'py>,
    timestamp: Option<&Bound<'py, PyAny>>,
    nanos: Option<&Bound<'py, PyAny>>,
    nanoseconds: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    uuid7_of(py, process()?, timestamp, nanos, nanoseconds)
}

/// The next UUIDv7 of the process's generator, as an int.
#[pyfunction(name = "uuid7_int")]
pub(crate) fn process_uuid7_int(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    int_of(py, next(py, process()?)?)
}

/// The next UUIDv7 of the process's generator, as 16 big-endian bytes.
#[pyfunction(name = "uuid7_bytes")]
pub(crate) fn process_uuid7_bytes(py: Python<'_>) -> PyResult<Bound<'_, PyBytes>> {
    Ok(PyBytes::new(py, &next(py, process()?)?.to_be_bytes()))
}

/// The next ULID of the process's generator.
#[pyfunction(name = "ulid")]
pub(crate) fn process_ulid(py: Python<'_>) -> PyResult<String> {
    Ok(Wide(next(py, process()?)?).to_ulid())
}

/// The next TypeID with `prefix` from the process's generator.
#[pyfunction(name = "typeid")]
pub(crate) fn process_typeid(py: Python<'_>, prefix: PyBackedStr) -> PyResult<String> {
    typeid_of(py, process()?, &prefix)
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
    let u = Wide::compose_uuid7(uint(ms, "ms", u64::MAX)?, a, uint(rand_b, "rand_b", u64::MAX)?).map_err(to_py)?;
    to_uuid(py, u.0)
}

/// `(prefix, uuid.UUID)` of a TypeID; `ParseError` names the position.
#[pyfunction]
pub(crate) fn parse_typeid<'py>(py: Python<'py>, text: PyBackedStr) -> PyResult<Bound<'py, PyTuple>> {
    let (prefix, u) = Wide::parse_typeid(&text).map_err(to_py)?;
    (prefix, to_uuid(py, u.0)?).into_pyobject(py)
}

/// The TypeID of `prefix` and a UUID (a `uuid.UUID`, int, 16 bytes or text).
#[pyfunction]
pub(crate) fn format_typeid(prefix: PyBackedStr, value: &Bound<'_, PyAny>) -> PyResult<String> {
    Wide(value_of(value, "value", false)?).to_typeid(&prefix).map_err(to_py)
}

/// The UUID (text) of a ULID's 128 bits: a byte copy.
#[pyfunction]
pub(crate) fn ulid_to_uuid<'py>(py: Python<'py>, ulid: PyBackedStr) -> PyResult<Bound<'py, PyAny>> {
    to_uuid(py, Wide::parse_ulid(&ulid).map_err(to_py)?.0)
}

/// The ULID of a UUID's 128 bits (a `uuid.UUID`, int, 16 bytes or text): a byte copy.
#[pyfunction]
pub(crate) fn uuid_to_ulid(value: &Bound<'_, PyAny>) -> PyResult<String> {
    Ok(Wide(value_of(value, "value", false)?).to_ulid())
}

/// The Unix millisecond a UUIDv7 carries (a `uuid.UUID`, int, bytes, or UUID /
/// ULID / TypeID text; a UUID of another version is a `ParseError`).
#[pyfunction]
pub(crate) fn uuid7_timestamp_ms(value: &Bound<'_, PyAny>) -> PyResult<u64> {
    if let Ok(s) = value.extract::<PyBackedStr>() {
        return Wide::timestamp_ms_of_text(&s).map_err(to_py);
    }
    Wide(value_of(value, "value", true)?)
        .uuid7_timestamp_ms()
        .map_err(to_py)
}

thread_local! {
    /// The last high half's `hi << 64` and `hi`: consecutive UUIDs share it (the
    /// millisecond, the version and the counter's top 12 bits: 16 IDs in a row).
    static HIGH: RefCell<Option<(u64, Py<PyAny>)>> = const { RefCell::new(None) };
}

/// A Python int of 128 bits: `hi << 64` (kept from the last call while `hi` is
/// the same) plus `lo`. Under the stable ABI pyo3 converts a `u128` through
/// `int.from_bytes` (a method call), and `hi << 64 | lo` makes four objects;
/// with the high half kept this makes two.
fn int_of(py: Python<'_>, value: u128) -> PyResult<Bound<'_, PyAny>> {
    let (hi, lo) = ((value >> 64) as u64, value as u64);
    if hi == 0 {
        return Ok(lo.into_pyobject(py)?.into_any());
    }
    let high = HIGH.with(|cell| -> PyResult<Py<PyAny>> {
        let mut kept = cell.borrow_mut();
        if let Some((h, shifted)) = kept.as_ref()
            && *h == hi
        {
            return Ok(shifted.clone_ref(py));
        }
        let shifted = hi.into_pyobject(py)?.lshift(64)?.unbind();
        *kept = Some((hi, shifted.clone_ref(py)));
        Ok(shifted)
    })?;
    high.bind(py).add(lo.into_pyobject(py)?)
}
