//! ISO-8601 UTC times: the core's (`flakeid_core::present`), kept here by name for
//! the service's users.

pub use flakeid_core::present::iso8601;
