//! `flakeid.Sealer`: the core's `flakeid_seal::Sealer` (docs/sealing.md), converted.

use crate::errors::{to_py, uint};
use crate::layout::layout_arg;
use flakeid_seal::Sealer;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes};

/// Seals IDs: a keyed, reversible permutation of a layout's IDs (FF1 with AES), so
/// that public IDs stop telling when, where and how busily they were made.
/// Immutable and thread-safe; the key is wiped from memory when it is dropped, and
/// `repr()` shows only its size.
#[pyclass(name = "Sealer", module = "flakeid", frozen)]
pub(crate) struct PySealer {
    inner: Sealer,
    /// For `repr()`: sizes only.
    key_len: usize,
    tweak_len: usize,
}

/// `bytes` or `bytearray`, borrowed for the call (the core copies what it keeps).
/// Anything else (a hex `str`, a list) is a `TypeError` naming `field`.
fn with_bytes<T>(obj: &Bound<'_, PyAny>, field: &str, f: impl FnOnce(&[u8]) -> PyResult<T>) -> PyResult<T> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return f(b.as_bytes());
    }
    if let Ok(b) = obj.cast::<PyByteArray>() {
        // SAFETY: no Python code runs while `f` reads the buffer (it only copies it),
        // so nothing can resize the bytearray under the borrow.
        return f(unsafe { b.as_bytes() });
    }
    Err(PyTypeError::new_err(format!(
        "{field} must be bytes or bytearray (bytes.fromhex(...) for hex text), got {}",
        obj.get_type().name()?
    )))
}

#[pymethods]
impl PySealer {
    #[new]
    #[pyo3(signature = (key, layout=None, tweak=None), text_signature = "(key, layout='snowflake', tweak=b'')")]
    fn new(
        key: &Bound<'_, PyAny>,
        layout: Option<&Bound<'_, PyAny>>,
        tweak: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let layout = layout_arg(layout)?;
        let (sealer, key_len) = with_bytes(key, "key", |k| Ok((Sealer::new(k, &layout).map_err(to_py)?, k.len())))?;
        let (inner, tweak_len) = match tweak.filter(|t| !t.is_none()) {
            Some(t) => with_bytes(t, "tweak", |t| Ok((sealer.tweak(t), t.len())))?,
            None => (sealer, 0),
        };
        Ok(PySealer {
            inner,
            key_len,
            tweak_len,
        })
    }

    /// The sealed form of `id`, an int in `[0, 2**bits)` like `id`.
    fn seal(&self, id: &Bound<'_, PyAny>) -> PyResult<u64> {
        self.inner.seal(uint(id, "id", self.inner.max_id())?).map_err(to_py)
    }

    /// The ID that `seal` turned into `id`. Every int in range unseals to some ID:
    /// sealing does not authenticate.
    fn unseal(&self, id: &Bound<'_, PyAny>) -> PyResult<u64> {
        self.inner.unseal(uint(id, "id", self.inner.max_id())?).map_err(to_py)
    }

    /// The width of the IDs it takes and gives (the layout's total bits).
    #[getter]
    fn bits(&self) -> u32 {
        self.inner.bits()
    }

    /// The largest ID it takes and gives, `2**bits - 1`.
    #[getter]
    fn max_id(&self) -> u64 {
        self.inner.max_id()
    }

    fn __repr__(&self) -> String {
        // Sizes only: never the key's or the tweak's bytes.
        format!(
            "flakeid.Sealer(bits={}, key=<{}-bit AES key>, tweak_len={})",
            self.inner.bits(),
            self.key_len * 8,
            self.tweak_len
        )
    }
}
