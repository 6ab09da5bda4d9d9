//! Configuration from outside the program and IDs as frameworks hold them, for the
//! framework adapters (`flakeid.django`, `flakeid.sqlalchemy`, `flakeid.pydantic`):
//! the core's env list, settings names and ID parser, converted to Python values.

use crate::errors::to_py;
use crate::layout::layout_arg;
use flakeid_core::{IdValue, OptionKind, OptionValue, generator_option, option_value};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyInt, PyMapping, PyString};

/// A value as `Generator(**options)` takes it: an int, a bool or a str.
fn typed<'py>(py: Python<'py>, name: &str, text: &str) -> PyResult<Bound<'py, PyAny>> {
    let Some(option) = generator_option(name) else {
        return Ok(PyString::new(py, text).into_any());
    };
    if option.kind == OptionKind::Node
        && let Ok(flakeid_core::NodeSource::Explicit(n)) = text.parse::<flakeid_core::NodeSource>()
    {
        return Ok(n.into_pyobject(py)?.into_any());
    }
    Ok(match option_value(option, text).map_err(to_py)? {
        OptionValue::Uint(n) if option.kind == OptionKind::Bool => PyBool::new(py, n == 1).to_owned().into_any(),
        OptionValue::Uint(n) => n.into_pyobject(py)?.into_any(),
        OptionValue::Text(t) => PyString::new(py, t).into_any(),
    })
}

/// The Generator keywords the `FLAKEID_<NAME>` variables give (the core's list:
/// every option but the test clock), from `env` (default `os.environ`); numbers as
/// ints, `require_node` as a bool. A malformed number is a ConfigError naming it.
#[pyfunction]
#[pyo3(signature = (env=None))]
pub(crate) fn options_from_env<'py>(py: Python<'py>, env: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyDict>> {
    let environ;
    let env = match env {
        Some(e) => e,
        None => {
            environ = py.import("os")?.getattr("environ")?;
            &environ
        }
    };
    let read = flakeid_core::options_from_env(|var| env.get_item(var).ok()?.extract::<String>().ok());
    let out = PyDict::new(py);
    for (name, text) in read {
        out.set_item(name, typed(py, name, &text)?)?;
    }
    Ok(out)
}

/// A framework's settings mapping as Generator keywords: each key names an option
/// of the core's table (its name or flag spelling, any case: `NODE`,
/// `clock-backwards`); `None` values are left out; values are as given (or, for
/// text, converted as the environment's are). An unknown key is a ConfigError
/// naming it, with the known names.
#[pyfunction]
pub(crate) fn settings_options<'py>(settings: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
    let py = settings.py();
    let Ok(mapping) = settings.cast::<PyMapping>() else {
        return Err(to_py(flakeid_core::not_settings(
            &settings.get_type().name()?.to_cow()?,
        )));
    };
    let out = PyDict::new(py);
    for item in mapping.items()?.iter() {
        let (key, value): (Bound<'py, PyAny>, Bound<'py, PyAny>) = item.extract()?;
        let option = flakeid_core::setting_option(&key.str()?.to_cow()?).map_err(to_py)?;
        if value.is_none() {
            continue;
        }
        let value = match value.cast::<PyString>() {
            Ok(s) if matches!(option.kind, OptionKind::Uint | OptionKind::Bool) => {
                typed(py, option.name, &s.to_cow()?)?
            }
            _ => value,
        };
        out.set_item(option.name, value)?;
    }
    Ok(out)
}

/// An ID of `layout` from what a program gives: an int, decimal text, or 8
/// big-endian bytes, in `0..=layout.max_id`; else a ParseError saying what an ID is.
#[pyfunction]
#[pyo3(signature = (value, layout=None), text_signature = "(value, layout='snowflake')")]
pub(crate) fn parse_id(value: &Bound<'_, PyAny>, layout: Option<&Bound<'_, PyAny>>) -> PyResult<u64> {
    id_of(value, &layout_arg(layout)?)
}

fn id_of(value: &Bound<'_, PyAny>, layout: &flakeid_core::Layout) -> PyResult<u64> {
    let text;
    let type_name;
    let v = if value.is_instance_of::<PyBool>() {
        IdValue::Other("bool")
    } else if value.is_instance_of::<PyInt>() {
        match value.extract::<i128>() {
            Ok(n) => IdValue::Int(n),
            Err(_) => IdValue::Int(if value.lt(0)? { i128::MIN } else { i128::MAX }),
        }
    } else if let Ok(s) = value.cast::<PyString>() {
        text = s.to_cow()?.into_owned();
        IdValue::Text(&text)
    } else if let Ok(b) = value.cast::<PyBytes>() {
        IdValue::Bytes(b.as_bytes())
    } else {
        type_name = value.get_type().name()?.to_string();
        IdValue::Other(&type_name)
    };
    flakeid_core::parse_id(layout, v).map_err(to_py)
}

/// The signed BIGINT that stores an ID of `layout` (an ID from 2^63 on, in 64-bit
/// layouts, is negative: its 64 bits as they are; docs/design.md).
#[pyfunction]
#[pyo3(signature = (id, layout=None), text_signature = "(id, layout='snowflake')")]
pub(crate) fn to_bigint(id: &Bound<'_, PyAny>, layout: Option<&Bound<'_, PyAny>>) -> PyResult<i64> {
    let layout = layout_arg(layout)?;
    flakeid_core::to_bigint(&layout, id_of(id, &layout)?).map_err(to_py)
}

/// The ID a signed BIGINT holds (`to_bigint` reversed).
#[pyfunction]
#[pyo3(signature = (stored, layout=None), text_signature = "(stored, layout='snowflake')")]
pub(crate) fn from_bigint(stored: i64, layout: Option<&Bound<'_, PyAny>>) -> PyResult<u64> {
    flakeid_core::from_bigint(&layout_arg(layout)?, stored).map_err(to_py)
}

/// The ConfigError refusing a second, different configuration of the process's one
/// generator (`first`, `second`: the two settings as shown).
#[pyfunction]
pub(crate) fn configured_twice(first: &str, second: &str) -> PyErr {
    to_py(flakeid_core::configured_twice(first, second))
}

/// The lease a generator takes for the `lease` setting `lease`: `lease` itself, or
/// for `"database"` the `postgres://` URL of the app's own PostgreSQL, from the
/// connection settings a framework holds (`parts`: names to values; `None` values
/// are left out, the others taken as their text). A ConfigError on `lease` for a
/// database other than PostgreSQL (flakeid_lease_net::database_lease).
#[pyfunction]
pub(crate) fn database_lease(lease: &str, parts: &Bound<'_, PyMapping>) -> PyResult<String> {
    let mut texts = Vec::new();
    for item in parts.items()?.iter() {
        let (key, value): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item.extract()?;
        if !value.is_none() {
            texts.push((key.str()?.to_cow()?.into_owned(), value.str()?.to_cow()?.into_owned()));
        }
    }
    #[cfg(feature = "net-leases")]
    return flakeid_lease_net::database_lease(lease, &texts).map_err(to_py);
    // The lean build: the word is refused as any postgres:// URL would be.
    #[cfg(not(feature = "net-leases"))]
    return flakeid_core::lease::LeaseSpec::parse(lease)
        .map(|_| lease.to_string())
        .map_err(to_py);
}
