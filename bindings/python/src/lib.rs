//! The native module `flakeid._flakeid`, re-exported by `flakeid/__init__.py`.
//! Conversion only: every rule (ranges, encodings, waiting, fork detection) lives
//! in `flakeid-core`, and every core error becomes the matching exception.

mod errors;
mod generator;
mod layout;
#[cfg(feature = "seal")]
mod sealer;
mod settings;
#[cfg(feature = "uuid7")]
mod uuid;

use errors::{to_py, uint};
use flakeid_core::{Encoding, ErrorKind, NodeSource};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::PyBytes;

// CPython allocates objects 16-byte aligned, and a #[pyclass] holds its value inline:
// a value that needs more (the core's Generator is 128-byte aligned) is misaligned
// there, which is undefined behaviour (debug builds abort). Box such values.
const _: () = {
    assert!(std::mem::align_of::<generator::PyGenerator>() <= 16);
    assert!(std::mem::align_of::<generator::PyManualClock>() <= 16);
    assert!(std::mem::align_of::<layout::PyLayout>() <= 16);
    assert!(std::mem::align_of::<layout::PyParts>() <= 16);
};
#[cfg(feature = "seal")]
const _: () = assert!(std::mem::align_of::<sealer::PySealer>() <= 16);
#[cfg(feature = "uuid7")]
const _: () = assert!(std::mem::align_of::<uuid::PyUuidGenerator>() <= 16);

/// Takes an ID apart under a layout (a `Layout` or a preset name).
#[pyfunction]
#[pyo3(signature = (id, layout=None), text_signature = "(id, layout='snowflake')")]
fn decompose(id: &Bound<'_, PyAny>, layout: Option<&Bound<'_, PyAny>>) -> PyResult<layout::PyParts> {
    layout::decompose(&layout::layout_arg(layout)?, uint(id, "id", u64::MAX)?)
}

/// Fixed-width, sort-preserving text: "hex", "base32", "base62" (or "decimal").
#[pyfunction]
#[pyo3(signature = (id, encoding=None))]
fn encode(id: &Bound<'_, PyAny>, encoding: Option<&str>) -> PyResult<String> {
    let id = uint(id, "id", u64::MAX)?;
    Ok(flakeid_core::encode(id, encoding_arg(encoding)?))
}

/// The named encoding, or the core's default (base62) — the same in every binding.
fn encoding_arg(name: Option<&str>) -> PyResult<Encoding> {
    name.map_or(Ok(Encoding::default()), |n| n.parse::<Encoding>().map_err(to_py))
}

/// Parses text made by `encode`; `ParseError` names the bad position.
#[pyfunction]
#[pyo3(signature = (text, encoding=None))]
fn decode(text: PyBackedStr, encoding: Option<&str>) -> PyResult<u64> {
    flakeid_core::decode(&text, encoding_arg(encoding)?).map_err(to_py)
}

/// The 8 big-endian bytes of an ID (flake-idgen's format).
#[pyfunction]
fn to_bytes<'py>(py: Python<'py>, id: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    Ok(PyBytes::new(py, &flakeid_core::to_bytes(uint(id, "id", u64::MAX)?)))
}

/// The ID in 8 big-endian bytes.
#[pyfunction]
fn from_bytes(data: &[u8]) -> PyResult<u64> {
    flakeid_core::from_bytes(data).map_err(to_py)
}

/// Resolves a node-id source ("42", "env:VAR", "hostname", "mac", "ipv4") for a layout.
#[pyfunction]
#[pyo3(signature = (source, layout=None), text_signature = "(source, layout='snowflake')")]
fn resolve_node(source: &str, layout: Option<&Bound<'_, PyAny>>) -> PyResult<u64> {
    let layout = layout::layout_arg(layout)?;
    source
        .parse::<NodeSource>()
        .and_then(|s| s.resolve(&layout))
        .map_err(to_py)
}

/// The number after the last `-` of a host name (`web-3` -> 3); this host's when omitted.
#[pyfunction]
#[pyo3(signature = (host=None))]
fn host_ordinal(host: Option<&str>) -> PyResult<u64> {
    match host {
        Some(h) => flakeid_core::host_ordinal(h),
        None => flakeid_core::hostname().and_then(|h| flakeid_core::host_ordinal(&h)),
    }
    .map_err(to_py)
}

/// This machine's host name.
#[pyfunction]
fn hostname() -> PyResult<String> {
    flakeid_core::hostname().map_err(to_py)
}

/// The first non-loopback MAC address, as a 48-bit int.
#[pyfunction]
fn first_mac() -> PyResult<u64> {
    flakeid_core::first_mac().map_err(to_py)
}

/// The first private IPv4 address, dotted.
#[pyfunction]
fn first_private_ipv4() -> PyResult<String> {
    flakeid_core::first_private_ipv4()
        .map(|ip| ip.to_string())
        .map_err(to_py)
}

#[pymodule]
fn _flakeid(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    // redis://, postgres://, etcd:// lease URLs (the `net-leases` feature, on in every wheel).
    #[cfg(feature = "net-leases")]
    flakeid_lease_net::install();
    m.add("__version__", flakeid_core::VERSION)?;
    m.add_class::<layout::PyLayout>()?;
    m.add_class::<layout::PyParts>()?;
    m.add_class::<generator::PyGenerator>()?;
    m.add_class::<generator::PyManualClock>()?;
    #[cfg(feature = "seal")]
    m.add_class::<sealer::PySealer>()?;
    m.add_function(wrap_pyfunction!(decompose, m)?)?;
    m.add_function(wrap_pyfunction!(encode, m)?)?;
    m.add_function(wrap_pyfunction!(decode, m)?)?;
    m.add_function(wrap_pyfunction!(to_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(from_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(resolve_node, m)?)?;
    m.add_function(wrap_pyfunction!(host_ordinal, m)?)?;
    m.add_function(wrap_pyfunction!(hostname, m)?)?;
    m.add_function(wrap_pyfunction!(first_mac, m)?)?;
    m.add_function(wrap_pyfunction!(first_private_ipv4, m)?)?;
    #[cfg(feature = "uuid7")]
    {
        m.add_class::<uuid::PyUuidGenerator>()?;
        m.add_function(wrap_pyfunction!(uuid::compose_uuid7, m)?)?;
        m.add_function(wrap_pyfunction!(uuid::parse_typeid, m)?)?;
        m.add_function(wrap_pyfunction!(uuid::format_typeid, m)?)?;
        m.add_function(wrap_pyfunction!(uuid::ulid_to_uuid, m)?)?;
        m.add_function(wrap_pyfunction!(uuid::uuid_to_ulid, m)?)?;
        m.add_function(wrap_pyfunction!(uuid::uuid7_timestamp_ms, m)?)?;
        m.add_function(wrap_pyfunction!(uuid::process_uuid7, m)?)?;
        m.add_function(wrap_pyfunction!(uuid::process_uuid7_int, m)?)?;
        m.add_function(wrap_pyfunction!(uuid::process_uuid7_bytes, m)?)?;
        m.add_function(wrap_pyfunction!(uuid::process_ulid, m)?)?;
        m.add_function(wrap_pyfunction!(uuid::process_typeid, m)?)?;
    }
    m.add_function(wrap_pyfunction!(settings::options_from_env, m)?)?;
    m.add_function(wrap_pyfunction!(settings::settings_options, m)?)?;
    m.add_function(wrap_pyfunction!(settings::parse_id, m)?)?;
    m.add_function(wrap_pyfunction!(settings::to_bigint, m)?)?;
    m.add_function(wrap_pyfunction!(settings::from_bigint, m)?)?;
    m.add_function(wrap_pyfunction!(settings::configured_twice, m)?)?;
    m.add_function(wrap_pyfunction!(settings::database_lease, m)?)?;
    m.add_function(wrap_pyfunction!(generator::check_options, m)?)?;
    let classes = errors::classes(py)?;
    m.add("FlakeIdError", classes.base.clone_ref(py))?;
    for (kind, name, cls) in &classes.kinds {
        debug_assert!(ErrorKind::ALL.contains(kind));
        m.add(*name, cls.clone_ref(py))?;
    }
    Ok(())
}
