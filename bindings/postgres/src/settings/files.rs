//! The configuration the next server start applies, and where a value is set: for
//! the hooks (checked against the files, not the running values) and for messages
//! (hints naming the file that holds a value).

use super::{DATACENTER, LAYOUT, LEASE, NODE, WORKER, guc_name, preloading, text};
use pgrx::pg_sys;
use std::ffi::{CStr, CString};

/// A node setting's value and where it is set.
#[derive(Debug, Clone)]
pub(super) struct Entry {
    option: &'static str,
    pub(super) value: i32,
    /// `file:line`, when set in a configuration file.
    source: Option<String>,
}

impl Entry {
    pub(super) fn describe(&self) -> String {
        match &self.source {
            Some(at) => format!("{} = {} ({at})", guc_name(self.option), self.value),
            None => format!("{} = {}", guc_name(self.option), self.value),
        }
    }
}

/// The layout and node settings that the next server start would apply.
#[derive(Debug, Clone)]
pub(super) struct Pending {
    pub(super) layout: Option<String>,
    pub(super) node: Entry,
    pub(super) datacenter: Entry,
    pub(super) worker: Entry,
    /// `flakeid.lease` (empty: unset) and where it is set.
    pub(super) lease: (String, Option<String>),
}

impl Pending {
    /// At server start: the values being applied (in definition order). Otherwise:
    /// the configuration files' (the last line for each name wins, as PostgreSQL
    /// reads them), unless the running value came from the command line.
    pub(super) fn now() -> Pending {
        let entry = |option: &'static str, value: i32| Entry {
            option,
            value,
            source: None,
        };
        let mut p = Pending {
            layout: Some(text(&LAYOUT)),
            node: entry("node", NODE.get()),
            datacenter: entry("datacenter", DATACENTER.get()),
            worker: entry("worker", WORKER.get()),
            lease: (text(&LEASE), None),
        };
        if preloading() {
            return p;
        }
        let files = config_file_values();
        for (option, slot) in [
            ("node", &mut p.node),
            ("datacenter", &mut p.datacenter),
            ("worker", &mut p.worker),
        ] {
            if from_command_line(option) {
                continue;
            }
            *slot = match files.iter().find(|f| f.name == guc_name(option)) {
                Some(f) => Entry {
                    option,
                    value: parse_int(&f.value).unwrap_or(-1),
                    source: Some(f.at()),
                },
                None => entry(option, -1),
            };
        }
        if !from_command_line("lease") {
            p.lease = files
                .iter()
                .find(|f| f.name == "flakeid.lease")
                .map_or((String::new(), None), |f| (f.value.clone(), Some(f.at())));
        }
        if !from_command_line("layout") {
            p.layout = Some(
                files
                    .iter()
                    .find(|f| f.name == "flakeid.layout")
                    .map_or_else(|| "snowflake".to_string(), |f| f.value.clone()),
            );
        }
        p
    }

    /// Whether `flakeid.lease` is set, described with where (`None`: unset).
    pub(super) fn lease_described(&self) -> Option<String> {
        let (url, at) = &self.lease;
        if url.trim().is_empty() {
            return None;
        }
        Some(match at {
            Some(at) => format!("flakeid.lease ({at})"),
            None => "flakeid.lease".to_string(),
        })
    }

    pub(super) fn entry(&self, option: &str) -> Option<&Entry> {
        match option {
            "node" => Some(&self.node),
            "datacenter" => Some(&self.datacenter),
            "worker" => Some(&self.worker),
            _ => None,
        }
    }
}

/// One `flakeid.*` line of the configuration files.
#[derive(Debug, Clone)]
struct FileValue {
    name: String,
    value: String,
    file: String,
    line: i32,
}

impl FileValue {
    /// `file line N`: the whole path (for hooks, whose messages go to ALTER SYSTEM's
    /// superuser or to the server log).
    fn at(&self) -> String {
        format!("{} line {}", self.file, self.line)
    }
}

/// The last `flakeid.*` line for each name in postgresql.conf (with its includes)
/// and then postgresql.auto.conf, as PostgreSQL's own reload reads them.
fn config_file_values() -> Vec<FileValue> {
    let mut out: Vec<FileValue> = Vec::new();
    // SAFETY: PostgreSQL's configuration parser, as ProcessConfigFile calls it; the
    // list is read, then freed.
    unsafe {
        let mut head: *mut pg_sys::ConfigVariable = std::ptr::null_mut();
        let mut tail: *mut pg_sys::ConfigVariable = std::ptr::null_mut();
        let main = pg_sys::ConfigFileName;
        if !main.is_null() {
            pg_sys::ParseConfigFile(
                main,
                true,
                std::ptr::null(),
                0,
                0,
                pg_sys::DEBUG1 as i32,
                &mut head,
                &mut tail,
            );
        }
        pg_sys::ParseConfigFile(
            c"postgresql.auto.conf".as_ptr(),
            false,
            std::ptr::null(),
            0,
            0,
            pg_sys::DEBUG1 as i32,
            &mut head,
            &mut tail,
        );
        let mut item = head;
        while !item.is_null() {
            let v = &*item;
            if !v.name.is_null() && !v.value.is_null() {
                let name = CStr::from_ptr(v.name).to_string_lossy().to_ascii_lowercase();
                if name.starts_with("flakeid.") {
                    let value = FileValue {
                        name,
                        value: CStr::from_ptr(v.value).to_string_lossy().into_owned(),
                        file: if v.filename.is_null() {
                            String::new()
                        } else {
                            CStr::from_ptr(v.filename).to_string_lossy().into_owned()
                        },
                        line: v.sourceline,
                    };
                    out.retain(|o| o.name != value.name);
                    out.push(value);
                }
            }
            item = v.next;
        }
        pg_sys::FreeConfigVariables(head);
    }
    out
}

/// The value the configuration files give `option` (the last line that sets it).
pub(super) fn file_value(option: &str) -> Option<String> {
    file_value_at(option).map(|(value, _)| value)
}

/// The value the configuration files give `option`, and its `file line N`.
pub(super) fn file_value_at(option: &str) -> Option<(String, String)> {
    config_file_values()
        .into_iter()
        .find(|f| f.name == guc_name(option))
        .map(|f| (f.value.clone(), f.at()))
}

pub(super) fn parse_int(text: &str) -> Option<i32> {
    let c = CString::new(text).ok()?;
    let mut value = 0i32;
    // SAFETY: PostgreSQL's own integer parser for settings (accepts what it accepts).
    let ok = unsafe { pg_sys::parse_int(c.as_ptr(), &mut value, 0, std::ptr::null_mut()) };
    ok.then_some(value)
}

/// The running value's origin (of option `name`'s GUC): `(source file, line)` when
/// it came from a file.
pub(super) fn guc_origin(name: &str) -> Option<(pg_sys::GucSource::Type, Option<(String, i32)>)> {
    let name = guc_name(name);
    // SAFETY: the GUC table, read-only, in the process that owns it.
    unsafe {
        for &var in crate::majors::guc_variables() {
            let var = &*var;
            if var.name.is_null() || !CStr::from_ptr(var.name).to_string_lossy().eq_ignore_ascii_case(&name) {
                continue;
            }
            let file = (!var.sourcefile.is_null()).then(|| {
                (
                    CStr::from_ptr(var.sourcefile).to_string_lossy().into_owned(),
                    var.sourceline,
                )
            });
            return Some((var.source, file));
        }
    }
    None
}

fn from_command_line(option: &str) -> bool {
    matches!(guc_origin(option), Some((source, _)) if source == pg_sys::GucSource::PGC_S_ARGV)
}

/// Whether the current user may read every setting (superusers,
/// pg_read_all_settings). Only called inside a transaction.
pub fn may_read_all_settings() -> bool {
    // SAFETY: privilege checks of the current user, inside a transaction.
    unsafe {
        pg_sys::superuser()
            || pg_sys::has_privs_of_role(
                pg_sys::GetUserId(),
                pg_sys::Oid::from(pg_sys::ROLE_PG_READ_ALL_SETTINGS),
            )
    }
}

/// A configuration file's path as the current user may see it: whole for those who
/// may read every setting's source (superusers, pg_read_all_settings), its name
/// otherwise. Only called inside a transaction (an SQL function's error).
pub(super) fn shown_path(path: &str) -> String {
    if may_read_all_settings() {
        path.to_string()
    } else {
        std::path::Path::new(path)
            .file_name()
            .map_or_else(|| path.to_string(), |f| f.to_string_lossy().into_owned())
    }
}

/// Where a setting's running value comes from, and how to change it there.
pub(super) fn how_to_change(option: &str) -> String {
    let name = guc_name(option);
    match guc_origin(option).and_then(|(_, file)| file) {
        Some((file, line)) if file.ends_with("postgresql.auto.conf") => format!(
            "{name} was set with ALTER SYSTEM ({} line {line}): change it with ALTER SYSTEM SET {name} = ... \
             (or ALTER SYSTEM RESET {name}) and restart the server",
            shown_path(&file),
        ),
        Some((file, line)) => format!(
            "{name} is set in {} line {line}: change it there and restart the server",
            shown_path(&file)
        ),
        None => format!("set {name} with ALTER SYSTEM or in postgresql.conf and restart the server"),
    }
}

/// Where the configuration files set `setting` now (for values refused at start,
/// whose running value is the default).
pub(super) fn where_in_files(option: &str) -> Option<String> {
    config_file_values()
        .into_iter()
        .find(|f| f.name == guc_name(option))
        .map(|f| format!("{} line {}", shown_path(&f.file), f.line))
}

/// `flakeid.x = v (file line n)`: a running value and where it is set.
pub(super) fn described(option: &str, value: i32) -> String {
    let name = guc_name(option);
    match guc_origin(option).and_then(|(_, f)| f) {
        Some((file, line)) => format!("{name} = {value} ({} line {line})", shown_path(&file)),
        None => format!("{name} = {value}"),
    }
}
