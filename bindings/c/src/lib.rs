//! C ABI for flakeid: libflakeid.so / libflakeid.a — placeholder, filled in by its issue.
