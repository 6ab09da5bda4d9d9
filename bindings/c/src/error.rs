//! Status codes, the per-thread last error, and the panic boundary every export
//! goes through.

use flakeid_core::{Error, ErrorKind};
use std::any::Any;
use std::cell::RefCell;
use std::ffi::{CString, c_char};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// What every fallible call returns. The numbers are ABI: they never change, and a
/// retired number is never reused. 1..=99 are the engine's error kinds (the same
/// numbers as Rust's `ErrorKind`); 100 and up belong to the C layer.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum flakeid_status {
    /// Success: the out-parameters were written.
    FLAKEID_OK = 0,
    /// A layout, node id or option is out of range; `flakeid_last_error_field()`
    /// names it.
    FLAKEID_ERR_CONFIG = 1,
    /// The clock reads earlier than IDs already issued (`flakeid_last_error_by_ms()`
    /// says by how much); no ID was issued.
    FLAKEID_ERR_CLOCK_BACKWARDS = 2,
    /// The time is before the layout's epoch or past the last tick it can hold.
    FLAKEID_ERR_TIME_EXHAUSTED = 3,
    /// Text that does not decode, or an ID with bits above the layout's width;
    /// `flakeid_last_error_position()` gives the 0-based offending position.
    FLAKEID_ERR_PARSE = 4,
    /// The generator was created before `fork()` and used in the child.
    FLAKEID_ERR_FORK = 5,
    /// A node-id lease could not be acquired, or was lost.
    FLAKEID_ERR_LEASE = 6,
    /// A wait for the clock was ended by a wait hook; no ID was issued.
    FLAKEID_ERR_INTERRUPTED = 7,
    /// A required pointer argument was NULL.
    FLAKEID_ERR_NULL = 100,
    /// A bug inside flakeid (a Rust panic, caught at the boundary), or an error kind
    /// newer than this header. The process is unharmed; the message says more.
    FLAKEID_ERR_PANIC = 101,
    /// The caller's output buffer is too small; the message gives the needed size.
    FLAKEID_ERR_BUFFER_TOO_SMALL = 102,
}

use flakeid_status::*;

/// The C status for an engine error kind (same number).
pub(crate) fn status_of(kind: ErrorKind) -> flakeid_status {
    match kind {
        ErrorKind::Config => FLAKEID_ERR_CONFIG,
        ErrorKind::ClockMovedBackwards => FLAKEID_ERR_CLOCK_BACKWARDS,
        ErrorKind::TimeExhausted => FLAKEID_ERR_TIME_EXHAUSTED,
        ErrorKind::Parse => FLAKEID_ERR_PARSE,
        ErrorKind::Fork => FLAKEID_ERR_FORK,
        ErrorKind::Lease => FLAKEID_ERR_LEASE,
        ErrorKind::Interrupted => FLAKEID_ERR_INTERRUPTED,
        // A kind added to the engine after this table: the test
        // `every_error_kind_has_its_own_status` fails until it is mapped here.
        _ => FLAKEID_ERR_PANIC,
    }
}

/// Why a call failed, before it becomes a status and a message.
#[derive(Debug)]
pub(crate) enum Fail {
    Core(Error),
    Null(&'static str),
    BufferTooSmall { needed: usize, given: usize },
}

impl From<Error> for Fail {
    fn from(e: Error) -> Fail {
        Fail::Core(e)
    }
}

#[derive(Debug)]
struct LastError {
    message: CString,
    field: Option<CString>,
    by_ms: u64,
    position: usize,
}

thread_local! {
    static LAST: RefCell<Option<LastError>> = const { RefCell::new(None) };
}

fn c_string(text: String) -> CString {
    // Messages never contain NUL (user text is quoted with escapes); stay total anyway.
    CString::new(text.replace('\0', "\\0")).unwrap_or_default()
}

#[cold]
fn record(fail: Fail) -> flakeid_status {
    let (status, message, field, by_ms, position) = match fail {
        Fail::Core(e) => {
            // Which error carries which detail is the core's (Error::details).
            let d = e.details();
            let field = d.field.map(|f| c_string(f.to_string()));
            (
                status_of(e.kind()),
                e.to_string(),
                field,
                d.by_ms.unwrap_or(0),
                d.position.unwrap_or(0),
            )
        }
        Fail::Null(arg) => (
            FLAKEID_ERR_NULL,
            format!("argument `{arg}` must not be NULL"),
            None,
            0,
            0,
        ),
        Fail::BufferTooSmall { needed, given } => (
            FLAKEID_ERR_BUFFER_TOO_SMALL,
            format!("the output buffer holds {given} bytes; {needed} are needed (text and its NUL)"),
            None,
            0,
            0,
        ),
    };
    let last = LastError {
        message: c_string(message),
        field,
        by_ms,
        position,
    };
    // During thread teardown the slot may be gone: the status still tells the story.
    let _ = LAST.try_with(|slot| slot.try_borrow_mut().map(|mut s| *s = Some(last)));
    status
}

#[cold]
fn record_panic(payload: Box<dyn Any + Send>) -> flakeid_status {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string());
    // A payload whose destructor panics must not unwind out of here either.
    let _ = catch_unwind(AssertUnwindSafe(move || drop(payload)));
    let _ = LAST.try_with(|slot| {
        slot.try_borrow_mut().map(|mut s| {
            *s = Some(LastError {
                message: c_string(format!("internal error in flakeid (please report it): {what}")),
                field: None,
                by_ms: 0,
                position: 0,
            })
        })
    });
    FLAKEID_ERR_PANIC
}

/// Runs an export's body: a panic becomes `FLAKEID_ERR_PANIC`, an error becomes its
/// status and the thread's last error. Success leaves the last error untouched.
#[inline(always)]
pub(crate) fn guard(body: impl FnOnce() -> Result<(), Fail>) -> flakeid_status {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => FLAKEID_OK,
        Ok(Err(fail)) => record(fail),
        Err(payload) => record_panic(payload),
    }
}

/// Reads the last error without ever panicking; `None` when there is none.
fn with_last<T>(read: impl FnOnce(&LastError) -> T) -> Option<T> {
    catch_unwind(AssertUnwindSafe(|| {
        LAST.try_with(|slot| slot.try_borrow().ok().and_then(|s| s.as_ref().map(read)))
            .ok()
            .flatten()
    }))
    .ok()
    .flatten()
}

/// The message of the last call that failed on this thread ("" if none did). The
/// text names the field, its allowed range and the value given. The pointer is
/// owned by flakeid and stays valid until the next failing call on this thread.
#[unsafe(no_mangle)]
pub extern "C" fn flakeid_last_error_message() -> *const c_char {
    with_last(|e| e.message.as_ptr()).unwrap_or(c"".as_ptr())
}

/// For `FLAKEID_ERR_CONFIG`: the name of the offending option or layout field
/// (`"worker"`, `"time_bits"`, ...); NULL after any other error. Same lifetime as
/// `flakeid_last_error_message()`.
#[unsafe(no_mangle)]
pub extern "C" fn flakeid_last_error_field() -> *const c_char {
    with_last(|e| e.field.as_ref().map_or(std::ptr::null(), |f| f.as_ptr())).unwrap_or(std::ptr::null())
}

/// For `FLAKEID_ERR_CLOCK_BACKWARDS`: how many ms the clock is behind; else 0.
#[unsafe(no_mangle)]
pub extern "C" fn flakeid_last_error_by_ms() -> u64 {
    with_last(|e| e.by_ms).unwrap_or(0)
}

/// For `FLAKEID_ERR_PARSE`: the 0-based position of the offending character (the
/// text's length when it is too short or too long); else 0.
#[unsafe(no_mangle)]
pub extern "C" fn flakeid_last_error_position() -> usize {
    with_last(|e| e.position).unwrap_or(0)
}

/// A status's stable lowercase name: `"ok"`, `"config"`, `"clock_backwards"`,
/// `"time_exhausted"`, `"parse"`, `"fork"`, `"lease"`, `"interrupted"` (the names the shared test
/// vectors use), `"null"`, `"panic"`, `"buffer_too_small"`; `"unknown"` for any other
/// number. A static string.
#[unsafe(no_mangle)]
pub extern "C" fn flakeid_status_name(status: u32) -> *const c_char {
    let name = match status {
        0 => c"ok",
        1 => c"config",
        2 => c"clock_backwards",
        3 => c"time_exhausted",
        4 => c"parse",
        5 => c"fork",
        6 => c"lease",
        7 => c"interrupted",
        100 => c"null",
        101 => c"panic",
        102 => c"buffer_too_small",
        _ => c"unknown",
    };
    name.as_ptr()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    fn text(p: *const c_char) -> String {
        unsafe { CStr::from_ptr(p) }.to_str().unwrap().to_string()
    }

    #[test]
    fn every_error_kind_has_its_own_status() {
        for kind in ErrorKind::ALL {
            let status = status_of(kind);
            assert_eq!(status as u32, kind as u32, "{kind:?}");
            assert_eq!(text(flakeid_status_name(status as u32)), kind.name());
        }
    }

    #[test]
    fn a_panic_becomes_a_status_and_a_message() {
        let status = guard(|| panic!("boom {}", 42));
        assert_eq!(status, FLAKEID_ERR_PANIC);
        assert!(text(flakeid_last_error_message()).contains("boom 42"));
        assert!(flakeid_last_error_field().is_null());
        assert_eq!(guard(|| Ok(())), FLAKEID_OK);
        assert!(
            text(flakeid_last_error_message()).contains("boom 42"),
            "success keeps it"
        );
    }
}
