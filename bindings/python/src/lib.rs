//! Python binding for flakeid (pyo3) — placeholder, filled in by its issue.
