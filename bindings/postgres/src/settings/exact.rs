//! Integer settings as they are written: decimal integers only.
//!
//! PostgreSQL reads an integer setting with `strtol(…, 0)` and rounds fractions, so
//! `flakeid.node = 1.5`, `2.5`, `0x10` and `010` would silently be nodes 2, 2, 16
//! and 8, and the check hooks only ever see the number. So the text itself is
//! checked where it can be seen: the configuration files' lines at server start
//! ([`super::note_refused_values`]) and at a reload ([`file_text_refusal`]), and
//! `ALTER SYSTEM`'s value as the statement wrote it ([`install`]: from 16 the SQL
//! parser itself reads an unquoted `0x10`, `0o20` or `1_000` as a number). A value
//! that is not a plain decimal integer is refused in the engine's words, as the
//! engine refuses that text for its option.

use super::{GUCS, Value, guc_name, reason, set_options};
use crate::error::{Report, SqlFn};
use pgrx::{PgSqlErrorCode, pg_guard, pg_sys};
use std::ffi::{CStr, c_char};
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether `text` is a decimal integer that PostgreSQL reads as written: an optional
/// `-`, no leading zero, within a 32-bit setting.
pub(super) fn decimal(text: &str) -> bool {
    let t = text.trim();
    let digits = t.strip_prefix('-').unwrap_or(t);
    !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'))
        && t.parse::<i32>().is_ok()
}

/// Why `text` is refused for option `option` (not [`decimal`]), in the engine's
/// words: its refusal of that text (with `layout`'s node range for the node ids);
/// for a text it would take (a leading zero), its rule for whole numbers.
pub(super) fn refusal(option: &str, text: &str, layout: &str) -> String {
    let t = text.trim();
    let built = set_options([("layout", layout.to_string())])
        .and_then(|b| b.host_guard(false).set_text(option, t))
        .and_then(|b| match option {
            "node" | "datacenter" | "worker" => b.build().map(drop),
            _ => Ok(()),
        });
    match built {
        Err(err) => reason(err),
        Ok(()) => {
            let (min, max) = flakeid_core::generator_option(option).map_or((0, 0), |o| (o.min, o.max));
            let octal = if t.trim_start_matches('-').starts_with('0') {
                " (PostgreSQL reads a leading 0 as octal)"
            } else {
                ""
            };
            format!("{option} must be a whole number in {min}..={max}, got \"{t}\"{octal}")
        }
    }
}

/// Whether `option` is an integer setting of [`GUCS`].
fn is_int(option: &str) -> bool {
    GUCS.iter()
        .any(|g| g.option == option && matches!(g.value, Value::Int(_)))
}

static mut PREVIOUS: pg_sys::ProcessUtility_hook_type = None;

/// Set while this backend runs `ALTER SYSTEM` on a `flakeid.*` integer setting:
/// its check hook then sees the files' old text, which is not the value being set.
static IN_ALTER_SYSTEM: AtomicBool = AtomicBool::new(false);

/// At a reload: the text the configuration files give integer setting `option`,
/// why it is refused, and its `file line N` (`None`: a decimal integer, or not
/// `value`, the number PostgreSQL read and the check hook was given).
pub(super) fn file_text_refusal(option: &str, value: i32) -> Option<(String, String, String)> {
    if IN_ALTER_SYSTEM.load(Ordering::Relaxed) {
        return None;
    }
    let (text, at) = super::files::file_value_at(option)?;
    if decimal(&text) || super::files::parse_int(&text) != Some(value) {
        return None;
    }
    let layout = super::files::Pending::now()
        .layout
        .unwrap_or_else(|| "snowflake".to_string());
    Some((refusal(option, &text, &layout), text, at))
}

/// The extension's one `ProcessUtility` hook: checks the value of `ALTER SYSTEM SET
/// flakeid.<integer setting>` as written, before PostgreSQL reads it as a number,
/// and counts the statement as a command for [`crate::conflict`].
pub fn install() {
    // SAFETY: hooks are installed while the library loads, single-threaded.
    unsafe {
        PREVIOUS = pg_sys::ProcessUtility_hook;
        pg_sys::ProcessUtility_hook = Some(alter_system_hook);
    }
}

#[pg_guard]
#[allow(clippy::too_many_arguments)]
unsafe extern "C-unwind" fn alter_system_hook(
    pstmt: *mut pg_sys::PlannedStmt,
    query: *const c_char,
    read_only_tree: bool,
    context: pg_sys::ProcessUtilityContext::Type,
    params: pg_sys::ParamListInfo,
    env: *mut pg_sys::QueryEnvironment,
    dest: *mut pg_sys::DestReceiver,
    qc: *mut pg_sys::QueryCompletion,
) {
    crate::conflict::next_command();
    // SAFETY: PostgreSQL passes a valid statement; an AlterSystemStmt's setstmt and
    // its name are valid, and ExtractSetVariableArgs flattens its arguments as
    // ALTER SYSTEM itself does (NULL for RESET).
    unsafe {
        let stmt = (*pstmt).utilityStmt;
        if !stmt.is_null() && (*stmt).type_ == pg_sys::NodeTag::T_AlterSystemStmt {
            let set = (*stmt.cast::<pg_sys::AlterSystemStmt>()).setstmt;
            if !set.is_null() && !(*set).name.is_null() && (*set).kind == pg_sys::VariableSetKind::VAR_SET_VALUE {
                let name = CStr::from_ptr((*set).name).to_string_lossy().to_ascii_lowercase();
                if let Some(option) = name.strip_prefix("flakeid.").filter(|o| is_int(o)) {
                    let text = pg_sys::ExtractSetVariableArgs(set);
                    if !text.is_null() {
                        check_value(option, &CStr::from_ptr(text).to_string_lossy());
                    }
                    if !query.is_null() {
                        let query = CStr::from_ptr(query).to_string_lossy();
                        for arg in pgrx::PgList::<pg_sys::Node>::from_pg((*set).args).iter_ptr() {
                            if !arg.is_null() && (*arg).type_ == pg_sys::NodeTag::T_A_Const {
                                let at = (*arg.cast::<pg_sys::A_Const>()).location;
                                if let Some(written) = usize::try_from(at).ok().and_then(|at| number_at(&query, at)) {
                                    check_value(option, &written);
                                }
                            }
                        }
                    }
                    IN_ALTER_SYSTEM.store(true, Ordering::Relaxed);
                }
            }
        }
        let run = || match PREVIOUS {
            Some(previous) => pg_sys::ffi::pg_guard_ffi_boundary(|| {
                previous(pstmt, query, read_only_tree, context, params, env, dest, qc)
            }),
            None => pg_sys::standard_ProcessUtility(pstmt, query, read_only_tree, context, params, env, dest, qc),
        };
        pgrx::PgTryBuilder::new(std::panic::AssertUnwindSafe(run))
            .finally(|| IN_ALTER_SYSTEM.store(false, Ordering::Relaxed))
            .execute();
    }
}

/// The unquoted number written at byte `at` of `query` (a sign, then digits with
/// whatever letters, `_` and `.` follow them), as the statement wrote it; `None`
/// for a quoted string or a name.
fn number_at(query: &str, at: usize) -> Option<String> {
    let rest = query.get(at..)?;
    let sign = if rest.starts_with('-') { "-" } else { "" };
    let body = rest.trim_start_matches(['+', '-']).trim_start();
    if !body.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
        return None;
    }
    let end = body
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
        .unwrap_or(body.len());
    Some(format!("{sign}{}", &body[..end]))
}

/// Refuses `ALTER SYSTEM SET flakeid.<option> = text` unless `text` is [`decimal`].
fn check_value(option: &str, text: &str) {
    if decimal(text) {
        return;
    }
    let layout = super::files::Pending::now()
        .layout
        .unwrap_or_else(|| "snowflake".to_string());
    Report::new(
        PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
        format!(
            "invalid value for parameter \"{}\": {}",
            guc_name(option),
            refusal(option, text, &layout)
        ),
    )
    .hint("integer settings take decimal integers only")
    .raise(SqlFn("ALTER SYSTEM"))
}
