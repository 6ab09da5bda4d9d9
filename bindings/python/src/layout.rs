//! `flakeid.Layout` and `flakeid.Parts`: the core's `Layout` and `Parts`, converted.

use crate::errors::{opt_uint, to_py, type_name, uint};
use flakeid_core::{LAYOUT_FIELD_NAMES, LAYOUT_FIELDS, Layout, OptionValue, unknown_option};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyType};

/// How an ID's 64 bits are split. `Layout.preset("flake")` or a custom split;
/// unspecified fields take Snowflake's values.
#[pyclass(name = "Layout", module = "flakeid", frozen, eq, hash)]
#[derive(PartialEq, Eq, Hash)]
pub(crate) struct PyLayout(pub Layout);

/// `layout=` accepts a `Layout` or a preset name; `None` means `"snowflake"`.
pub(crate) fn layout_arg(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Layout> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else {
        return Ok(Layout::SNOWFLAKE);
    };
    if let Ok(l) = obj.cast::<PyLayout>() {
        return Ok(l.get().0);
    }
    match obj.extract::<PyBackedStr>() {
        Ok(name) => Layout::preset(&name).map_err(to_py),
        Err(_) => Err(PyTypeError::new_err(format!(
            "layout must be a flakeid.Layout or a preset name (str), got {}",
            obj.get_type().name()?
        ))),
    }
}

/// One `#[pymethods]` block (pyo3 takes one per class) with a getter for each
/// accessor of the wrapped core value (`self.$field.$name()`), then `$rest`.
macro_rules! pymethods_with_getters {
    ($ty:ident . $field:tt { $($name:ident: $ret:ty),* $(,)? } $($rest:tt)*) => {
        #[pymethods]
        impl $ty {
            $(
                #[getter]
                fn $name(&self) -> $ret {
                    self.$field.$name()
                }
            )*
            $($rest)*
        }
    };
}
pub(crate) use pymethods_with_getters;

/// A core stats struct as a dict keyed by its field names: the one conversion of every
/// handle kind's `stats()` (the 64-bit generator's, the UUID generator's).
macro_rules! stats_dict {
    ($py:expr, $stats:expr, [$($field:ident),* $(,)?]) => {{
        let stats = $stats;
        let dict = pyo3::types::PyDict::new($py);
        $(dict.set_item(stringify!($field), stats.$field)?;)*
        Ok(dict)
    }};
}
pub(crate) use stats_dict;

pymethods_with_getters! { PyLayout.0 {
    name: Option<&'static str>, time_bits: u32, datacenter_bits: u32, worker_bits: u32, node_bits: u32,
    sequence_bits: u32, tick_ms: u64, epoch_ms: u64, total_bits: u32, max_node: u64, max_datacenter: u64,
    max_worker: u64, max_sequence: u64, ids_per_tick: u64, max_id: u64, last_timestamp_ms: u64, signed_until_ms: u64,
}

    /// Keywords are the core's layout fields (`flakeid_core::LAYOUT_FIELDS`, by
    /// their snake_case names): their ranges and rules are the core's.
    #[new]
    #[pyo3(signature = (**fields))]
    fn new(fields: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let mut b = Layout::builder();
        for (key, value) in fields.into_iter().flatten() {
            let key: PyBackedStr = key.extract()?;
            let Some(f) = LAYOUT_FIELDS.iter().find(|f| f.name == &*key) else {
                return Err(PyTypeError::new_err(unknown_option(&key, &LAYOUT_FIELD_NAMES).to_string()));
            };
            if value.is_none() {
                continue;
            }
            let text;
            let v = if f.name == "order" {
                let wrong = |_| PyTypeError::new_err(format!("order must be a str, got {}", type_name(&value)));
                text = value.extract::<PyBackedStr>().map_err(wrong)?;
                OptionValue::Text(&text)
            } else {
                OptionValue::Uint(uint(&value, f.name, f.max)?)
            };
            b = b.set(f.name, v).map_err(to_py)?;
        }
        b.build().map(PyLayout).map_err(to_py)
    }

    /// A preset by name: snowflake, flake, discord, sonyflake, baidu, instagram, js53.
    #[staticmethod]
    fn preset(name: PyBackedStr) -> PyResult<Self> {
        Layout::preset(&name).map(PyLayout).map_err(to_py)
    }

    /// Every preset, default (snowflake) first.
    #[staticmethod]
    fn presets() -> Vec<Self> {
        Layout::PRESETS.into_iter().map(PyLayout).collect()
    }

    #[getter]
    fn order(&self) -> &'static str {
        self.0.order().as_str()
    }

    /// The ID for a Unix-ms time (floored to its tick), a node id and a sequence.
    #[pyo3(signature = (timestamp_ms, node, sequence=None), text_signature = "(self, timestamp_ms, node, sequence=0)")]
    fn compose(
        &self,
        timestamp_ms: &Bound<'_, PyAny>,
        node: &Bound<'_, PyAny>,
        sequence: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<u64> {
        let l = &self.0;
        l.compose(
            uint(timestamp_ms, "timestamp_ms", l.last_timestamp_ms())?,
            uint(node, "node", l.max_node())?,
            opt_uint(sequence, "sequence", l.max_sequence())?.unwrap_or(0),
        )
        .map_err(to_py)
    }

    /// `compose` with the node id given as datacenter and worker.
    #[pyo3(
        signature = (timestamp_ms, datacenter, worker, sequence=None),
        text_signature = "(self, timestamp_ms, datacenter, worker, sequence=0)"
    )]
    fn compose_parts(
        &self,
        timestamp_ms: &Bound<'_, PyAny>,
        datacenter: &Bound<'_, PyAny>,
        worker: &Bound<'_, PyAny>,
        sequence: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<u64> {
        let l = &self.0;
        l.compose_parts(
            uint(timestamp_ms, "timestamp_ms", l.last_timestamp_ms())?,
            uint(datacenter, "datacenter", l.max_datacenter())?,
            uint(worker, "worker", l.max_worker())?,
            opt_uint(sequence, "sequence", l.max_sequence())?.unwrap_or(0),
        )
        .map_err(to_py)
    }

    /// `datacenter << worker_bits | worker`, each checked against its range.
    fn node_of(&self, datacenter: &Bound<'_, PyAny>, worker: &Bound<'_, PyAny>) -> PyResult<u64> {
        let l = &self.0;
        l.node_of(
            uint(datacenter, "datacenter", l.max_datacenter())?,
            uint(worker, "worker", l.max_worker())?,
        )
        .map_err(to_py)
    }

    /// Takes an ID apart; `ParseError` if it has bits this layout never sets.
    fn decompose(&self, id: &Bound<'_, PyAny>) -> PyResult<PyParts> {
        decompose(&self.0, uint(id, "id", u64::MAX)?)
    }

    /// The smallest ID of `timestamp_ms`'s tick (for `id >= first` queries).
    fn first_id_at(&self, timestamp_ms: &Bound<'_, PyAny>) -> PyResult<u64> {
        let ms = uint(timestamp_ms, "timestamp_ms", u64::MAX)?;
        self.0.first_id_at(ms).map_err(to_py)
    }

    /// The largest ID of `timestamp_ms`'s tick.
    fn last_id_at(&self, timestamp_ms: &Bound<'_, PyAny>) -> PyResult<u64> {
        let ms = uint(timestamp_ms, "timestamp_ms", u64::MAX)?;
        self.0.last_id_at(ms).map_err(to_py)
    }

    /// `(first, last)`: every ID made from `start_ms` to `end_ms` lies in `first..=last`.
    fn id_range(&self, start_ms: &Bound<'_, PyAny>, end_ms: &Bound<'_, PyAny>) -> PyResult<(u64, u64)> {
        let (a, b) = (uint(start_ms, "start_ms", u64::MAX)?, uint(end_ms, "end_ms", u64::MAX)?);
        self.0.id_range(a, b).map_err(to_py)
    }

    fn __repr__(&self) -> String {
        let l = &self.0;
        match l.name() {
            Some(name) => format!("Layout.preset({name:?})"),
            None => format!(
                "Layout(time_bits={}, datacenter_bits={}, worker_bits={}, sequence_bits={}, tick_ms={}, epoch_ms={}, order={:?})",
                l.time_bits(),
                l.datacenter_bits(),
                l.worker_bits(),
                l.sequence_bits(),
                l.tick_ms(),
                l.epoch_ms(),
                l.order().as_str()
            ),
        }
    }

    fn __str__(&self) -> String {
        self.0.to_string()
    }
}

pub(crate) fn decompose(layout: &Layout, id: u64) -> PyResult<PyParts> {
    let p = layout.try_decompose(id).map_err(to_py)?;
    Ok(PyParts {
        timestamp_ms: p.timestamp_ms,
        ticks: p.ticks,
        datacenter: p.datacenter,
        worker: p.worker,
        node: p.node,
        sequence: p.sequence,
    })
}

/// An ID taken apart: the core's `Parts`. `timestamp_ms` is Unix ms (the start of
/// the ID's tick); `ticks` is the raw time field (ticks since the layout's epoch).
#[pyclass(name = "Parts", module = "flakeid", frozen, eq, hash, get_all)]
#[derive(PartialEq, Eq, Hash)]
pub(crate) struct PyParts {
    timestamp_ms: u64,
    ticks: u64,
    datacenter: u64,
    worker: u64,
    node: u64,
    sequence: u64,
}

static UNIX_EPOCH: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static TIMEDELTA: PyOnceLock<Py<PyType>> = PyOnceLock::new();

#[pymethods]
impl PyParts {
    /// `timestamp_ms` as an aware UTC `datetime` (exact: integer arithmetic).
    #[getter]
    fn datetime<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let epoch = UNIX_EPOCH.get_or_try_init(py, || -> PyResult<_> {
            let dt = py.import("datetime")?;
            let utc = dt.getattr("timezone")?.getattr("utc")?;
            Ok(dt
                .getattr("datetime")?
                .call_method1("fromtimestamp", (0, utc))?
                .unbind())
        })?;
        let delta = TIMEDELTA.import(py, "datetime", "timedelta")?;
        let kwargs = pyo3::types::PyDict::new(py);
        kwargs.set_item("milliseconds", self.timestamp_ms)?;
        epoch.bind(py).add(delta.call((), Some(&kwargs))?)
    }

    fn __repr__(&self) -> String {
        let p = self;
        format!(
            "Parts(timestamp_ms={}, datacenter={}, worker={}, node={}, sequence={})",
            p.timestamp_ms, p.datacenter, p.worker, p.node, p.sequence
        )
    }
}
