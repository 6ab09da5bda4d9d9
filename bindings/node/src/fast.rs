//! Per-instance `nextId` / `nextIds` / `nextBuffer` / `tryNextId`: the hot paths as raw Node-API
//! functions bound to their generator.
//!
//! napi-derive's method glue (borrow tracking through a global map, type-tag and
//! unwrap lookups on `this`) costs several times the engine's own work per ID.
//! The constructor therefore gives each `Generator` these own methods created with
//! `napi_create_function`, whose callback data is an `Arc` of the engine
//! generator (released by a finalizer when the function is collected): a call is
//! one `napi_get_cb_info`, the engine call, and the `bigint`. They ignore `this`
//! like bound methods (`const next = gen.nextId` works). The `#[napi]` methods on
//! the prototype stay the typed definitions and behave the same. The module's
//! `uuid7()` on the shared generator is such a function too ([`export_shared_uuid7`]).

use crate::{OrThrow, throw};
use flakeid_core as fc;
use napi::bindgen_prelude::{JsObjectValue, JsValue, Unknown};
use napi::{Env, sys};
use std::ffi::{CStr, c_void};
use std::ptr;
use std::sync::{Arc, OnceLock};

/// The generator a bound function was created for.
///
/// # Safety
/// `env`/`info` must be those Node passed to a callback created by [`bind`].
unsafe fn bound<'a>(env: sys::napi_env, info: sys::napi_callback_info) -> Option<&'a fc::Generator> {
    // SAFETY: forwarded contract.
    unsafe { bound_with_arg(env, info) }.map(|(g, _)| g)
}

/// [`bound`] and the first argument (`undefined` when absent).
///
/// # Safety
/// As for [`bound`].
unsafe fn bound_with_arg<'a>(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> Option<(&'a fc::Generator, sys::napi_value)> {
    let mut argc = 1usize;
    let mut arg = ptr::null_mut();
    let mut data: *mut c_void = ptr::null_mut();
    // SAFETY: valid env/info; out-pointers are live locals (room for one argument).
    let status = unsafe { sys::napi_get_cb_info(env, info, &mut argc, &mut arg, ptr::null_mut(), &mut data) };
    if argc == 0 || arg.is_null() {
        // SAFETY: valid env, live out-pointer.
        unsafe { sys::napi_get_undefined(env, &mut arg) };
    }
    // SAFETY: `bind` set `data` to an `Arc<fc::Generator>` that lives until the
    // function's finalizer, which cannot run while the function is being called.
    (status == sys::Status::napi_ok && !data.is_null()).then(|| (unsafe { &*data.cast::<fc::Generator>() }, arg))
}

/// Throws a core error; a failed callback returns NULL.
fn fail(env: sys::napi_env, e: fc::Error) -> sys::napi_value {
    drop(throw(&Env::from_raw(env), e));
    ptr::null_mut()
}

unsafe extern "C" fn next_id(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    // SAFETY: Node calls this with its env/info, for a function made by `bind`.
    let Some(g) = (unsafe { bound(env, info) }) else {
        return ptr::null_mut();
    };
    match g.next_id() {
        Ok(id) => bigint(env, id),
        Err(e) => fail(env, e),
    }
}

unsafe extern "C" fn try_next_id(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    // SAFETY: as in `next_id`.
    let Some(g) = (unsafe { bound(env, info) }) else {
        return ptr::null_mut();
    };
    match g.try_next_id() {
        Ok(Some(id)) => bigint(env, id),
        Ok(None) => {
            let mut out = ptr::null_mut();
            // SAFETY: valid env, live out-pointer.
            unsafe { sys::napi_get_null(env, &mut out) };
            out
        }
        Err(e) => fail(env, e),
    }
}

fn bigint(env: sys::napi_env, id: u64) -> sys::napi_value {
    let mut out = ptr::null_mut();
    // SAFETY: valid env, live out-pointer; on failure an exception is pending.
    unsafe { sys::napi_create_bigint_uint64(env, id, &mut out) };
    out
}

unsafe extern "C" fn next_ids(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    // SAFETY: as in `next_id`.
    let Some((g, arg)) = (unsafe { bound_with_arg(env, info) }) else {
        return ptr::null_mut();
    };
    // SAFETY: valid env and value. Any type reads; the core's rule refuses all but
    // a whole number (`nextIds('10')` used to say "got NaN").
    let checked = unsafe { crate::read(env, arg) }.map(crate::Arg);
    match checked.and_then(|n| ids_array(env, g, n)) {
        Ok(array) => array,
        Err(e) => {
            if e.status != napi::Status::PendingException {
                // SAFETY: valid env; throws a JS error built from `e`.
                unsafe { napi::JsError::from(e).throw_into(env) };
            }
            ptr::null_mut()
        }
    }
}

/// `n` fresh IDs in a new `BigUint64Array` whose memory V8 allocates, so that its
/// garbage collector sees it (an external buffer per batch let a loop of
/// `nextIds(1e6)` grow the process by gigabytes before a collection).
pub(crate) fn ids_array(env: sys::napi_env, g: &fc::Generator, n: crate::Arg) -> napi::Result<sys::napi_value> {
    let fail = |e| throw(&Env::from_raw(env), e);
    let n = flakeid_js::js_batch(&n.0).map_err(fail)?;
    let (mut buffer, mut data, mut array) = (ptr::null_mut(), ptr::null_mut(), ptr::null_mut());
    // SAFETY: valid env; live out-pointers.
    napi::check_status!(unsafe { sys::napi_create_arraybuffer(env, n * 8, &mut data, &mut buffer) })?;
    if n > 0 {
        if data.is_null() || data.align_offset(std::mem::align_of::<u64>()) != 0 {
            return Err(napi::Error::from_reason("ArrayBuffer memory is not 8-byte aligned"));
        }
        // SAFETY: V8 just allocated `n * 8` zeroed, 8-aligned bytes that nothing else
        // references until the typed array below is returned.
        let ids = unsafe { std::slice::from_raw_parts_mut(data.cast::<u64>(), n) };
        g.fill(ids).map_err(fail)?;
    }
    // SAFETY: valid env; `buffer` holds exactly `n` u64s.
    napi::check_status!(unsafe {
        sys::napi_create_typedarray(env, sys::TypedarrayType::biguint64_array, n, buffer, 0, &mut array)
    })?;
    Ok(array)
}

/// 16 bytes in a new `Uint8Array` whose memory V8 allocates (napi-rs's `Uint8Array`
/// from a `Vec` is an external buffer: about 20x slower to make, and unseen by the
/// garbage collector's accounting).
pub(crate) fn bytes16(env: sys::napi_env, bytes: [u8; 16]) -> napi::Result<sys::napi_value> {
    let (mut buffer, mut data, mut array) = (ptr::null_mut(), ptr::null_mut(), ptr::null_mut());
    // SAFETY: valid env; live out-pointers.
    napi::check_status!(unsafe { sys::napi_create_arraybuffer(env, 16, &mut data, &mut buffer) })?;
    if data.is_null() {
        return Err(napi::Error::from_reason("napi_create_arraybuffer gave no memory"));
    }
    // SAFETY: V8 just allocated 16 bytes that nothing else references yet.
    unsafe { ptr::copy_nonoverlapping(bytes.as_ptr(), data.cast::<u8>(), 16) };
    // SAFETY: valid env; `buffer` holds exactly 16 bytes.
    napi::check_status!(unsafe {
        sys::napi_create_typedarray(env, sys::TypedarrayType::uint8_array, 16, buffer, 0, &mut array)
    })?;
    Ok(array)
}

unsafe extern "C" fn release(_env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
    // SAFETY: `data` is the `Arc::into_raw` that `bind` attached to this function.
    drop(unsafe { Arc::from_raw(data.cast::<fc::Generator>()) });
}

/// Defines non-enumerable own `nextId`, `nextIds`, `nextBuffer` and `tryNextId` on `this`, bound to `generator`.
pub(crate) fn bind(env: &Env, this: sys::napi_value, generator: &Arc<fc::Generator>) -> napi::Result<()> {
    let env = env.raw();
    let methods: [(&CStr, sys::napi_callback); 3] = [
        (c"nextId", Some(next_id)),
        (c"nextIds", Some(next_ids)),
        (c"tryNextId", Some(try_next_id)),
    ];
    let mut next_id_func = ptr::null_mut();
    for (name, cb) in methods {
        let data = Arc::into_raw(Arc::clone(generator)).cast_mut().cast::<c_void>();
        let func = function(env, name, cb, data, release)?;
        define(env, this, name, func)?;
        if name == c"nextId" {
            next_id_func = func;
        }
    }
    define(env, this, c"nextBuffer", js_next_buffer(env, next_id_func)?)
}

/// How many arguments a call that reads none was given, and its callback data;
/// `None` when napi fails or the function has no data.
///
/// # Safety
/// `env` and `info` are Node's, of the call being made.
#[inline]
unsafe fn call_data(env: sys::napi_env, info: sys::napi_callback_info) -> Option<(usize, *mut c_void)> {
    let mut argc = 0usize;
    let mut data: *mut c_void = ptr::null_mut();
    // SAFETY: valid env/info (the caller's contract); no argument is read; `data` is a
    // live out-pointer.
    let status = unsafe { sys::napi_get_cb_info(env, info, &mut argc, ptr::null_mut(), ptr::null_mut(), &mut data) };
    (status == sys::Status::napi_ok && !data.is_null()).then_some((argc, data))
}

unsafe extern "C" fn uuid7(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    // SAFETY: Node's env/info of this call.
    let Some((argc, data)) = (unsafe { call_data(env, info) }) else {
        return ptr::null_mut();
    };
    // SAFETY: `bind_uuid` set `data` to an `Arc<fc::UuidGenerator>` that lives until
    // the function's finalizer, which cannot run while the function is being called.
    let g = unsafe { &*data.cast::<fc::UuidGenerator>() };
    // SAFETY: Node's env/info of this call.
    unsafe { uuid7_of(env, info, g, argc) }
}

/// The process's shared UUID generator (the module's `uuid7`, `ulid`, `typeid`),
/// made on first use (default options).
pub(crate) fn shared(env: &Env) -> napi::Result<&'static fc::UuidGenerator> {
    static SHARED: OnceLock<fc::UuidGenerator> = OnceLock::new();
    if let Some(g) = SHARED.get() {
        return Ok(g);
    }
    let g = fc::UuidGenerator::builder().build().or_throw(env)?;
    Ok(SHARED.get_or_init(|| g))
}

/// The module's `uuid7()`: the bound functions' path on the process's shared
/// generator (napi-derive's glue for a plain function costs more than the UUID).
unsafe extern "C" fn shared_uuid7(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    let mut argc = 0usize;
    // SAFETY: valid env/info; no argument is read.
    let status =
        unsafe { sys::napi_get_cb_info(env, info, &mut argc, ptr::null_mut(), ptr::null_mut(), ptr::null_mut()) };
    if status != sys::Status::napi_ok {
        return ptr::null_mut();
    }
    match shared(&Env::from_raw(env)) {
        // SAFETY: Node's env/info of this call.
        Ok(g) => unsafe { uuid7_of(env, info, g, argc) },
        // The exception is pending (`shared` threw it).
        Err(_) => ptr::null_mut(),
    }
}

/// Replaces the module's `uuid7` export (the typed `#[napi]` definition, which
/// behaves the same) with [`shared_uuid7`].
pub(crate) fn export_shared_uuid7(env: &Env, exports: sys::napi_value) -> napi::Result<()> {
    let (env, name) = (env.raw(), c"uuid7");
    let mut func = ptr::null_mut();
    // SAFETY: valid env; the name is NUL-terminated; no callback data.
    napi::check_status!(unsafe {
        sys::napi_create_function(
            env,
            name.as_ptr(),
            name.to_bytes().len() as isize,
            Some(shared_uuid7),
            ptr::null_mut(),
            &mut func,
        )
    })?;
    // SAFETY: valid env and values; the name is NUL-terminated.
    napi::check_status!(unsafe { sys::napi_set_named_property(env, exports, name.as_ptr(), func) })
}

/// `uuid7()` or `uuid7(options)` of `g`, for a callback given `argc` arguments.
///
/// # Safety
/// `env`/`info` must be those of the callback's call.
unsafe fn uuid7_of(
    env: sys::napi_env,
    info: sys::napi_callback_info,
    g: &fc::UuidGenerator,
    argc: usize,
) -> sys::napi_value {
    if argc > 0 {
        // `uuid7(options)`: the slow path reads the options (never ignored).
        // SAFETY: valid env/info of this call.
        return unsafe { uuid7_options(env, info, g) };
    }
    match g.next_uuid7() {
        // SAFETY: valid env.
        Ok(uuid) => unsafe { latin1(env, &fc::Wide(uuid).to_uuid_ascii()) },
        Err(e) => fail(env, e),
    }
}

/// A JS string of ASCII `text` (NULL with an exception pending when V8 cannot make it).
///
/// # Safety
/// `env` must be the current call's.
unsafe fn latin1(env: sys::napi_env, text: &[u8]) -> sys::napi_value {
    let mut out = ptr::null_mut();
    // SAFETY: valid env; `text` is ASCII of the given length; on failure an
    // exception is pending and `out` stays NULL.
    unsafe { sys::napi_create_string_latin1(env, text.as_ptr().cast(), text.len() as isize, &mut out) };
    out
}

/// `uuid7(options, buf, offset)` on the bound function: its arguments, read as
/// `UuidGenerator.uuid7` reads them.
unsafe fn uuid7_options(env: sys::napi_env, info: sys::napi_callback_info, g: &fc::UuidGenerator) -> sys::napi_value {
    let mut argc = 3usize;
    let mut argv = [ptr::null_mut(); 3];
    // SAFETY: valid env/info; `argv` holds `argc` values.
    let status = unsafe {
        sys::napi_get_cb_info(
            env,
            info,
            &mut argc,
            argv.as_mut_ptr(),
            ptr::null_mut(),
            ptr::null_mut(),
        )
    };
    if status != sys::Status::napi_ok {
        return ptr::null_mut();
    }
    let e = Env::from_raw(env);
    // SAFETY: live values of this call (Node fills the ones not passed with `undefined`).
    let [options, buf, offset] = argv.map(|v| unsafe { Unknown::from_raw_unchecked(env, v) });
    match uuid7_call(&e, g, Some(options), Some(buf), Some(offset)) {
        Ok(out) => out,
        Err(err) => {
            if err.status != napi::Status::PendingException {
                // SAFETY: valid env; nothing is pending.
                unsafe { napi::JsError::from(err).throw_into(env) };
            }
            ptr::null_mut()
        }
    }
}

/// `uuid7(options?, buf?, offset?)`, as npm `uuid`'s `v7(options, buf, offset)`:
/// the next UUID, or one at `options.msecs` (flakeid-js's rule); as text, or, given
/// a `buf` (a `Uint8Array`), its 16 bytes written at `offset` and `buf` returned.
/// The options, `buf` and `offset` are checked before an ID is taken.
pub(crate) fn uuid7_call(
    env: &Env,
    g: &fc::UuidGenerator,
    options: Option<Unknown<'_>>,
    buf: Option<Unknown<'_>>,
    offset: Option<Unknown<'_>>,
) -> napi::Result<sys::napi_value> {
    let msecs = uuid7_msecs(env, options)?;
    let target = match buf {
        Some(b) if !matches!(crate::arg(&b)?, flakeid_js::JsArg::Undefined | flakeid_js::JsArg::Null) => {
            let (data, len) = uint8_array(env, &b)?;
            let offset = match offset {
                Some(o) => crate::arg(&o)?,
                None => flakeid_js::JsArg::Undefined,
            };
            let at = flakeid_js::js_buffer_offset(len, &offset).or_throw(env)?;
            Some((b.raw(), data, at))
        }
        _ => None,
    };
    let uuid = match msecs {
        Some(ms) => g.uuid7_at(ms),
        None => g.next_uuid7(),
    }
    .or_throw(env)?;
    match target {
        Some((buf, data, at)) => {
            // SAFETY: `uint8_array` gave `len` bytes at `data`, the view's own, and
            // `at + 16 <= len` (flakeid-js's rule); one JS thread writes them.
            unsafe { ptr::copy_nonoverlapping(uuid.to_be_bytes().as_ptr(), data.add(at), 16) };
            Ok(buf)
        }
        // SAFETY: this call's env.
        None => match unsafe { latin1(env.raw(), &fc::Wide(uuid).to_uuid_ascii()) } {
            out if out.is_null() => Err(napi::Error::from_status(napi::Status::PendingException)),
            out => Ok(out),
        },
    }
}

/// A `Uint8Array`'s (or `Buffer`'s) bytes: where its view starts, and its length;
/// anything else is refused naming `buf`.
fn uint8_array(env: &Env, value: &Unknown<'_>) -> napi::Result<(*mut u8, usize)> {
    let (raw_env, raw) = (env.raw(), value.raw());
    let mut is_typed = false;
    // SAFETY: valid env and value; live out-pointer.
    napi::check_status!(unsafe { sys::napi_is_typedarray(raw_env, raw, &mut is_typed) })?;
    let (mut kind, mut len, mut data, mut buffer, mut byte_offset) = (
        sys::TypedarrayType::int8_array,
        0usize,
        ptr::null_mut(),
        ptr::null_mut(),
        0usize,
    );
    if is_typed {
        // SAFETY: valid env; `raw` is a typed array; live out-pointers.
        napi::check_status!(unsafe {
            sys::napi_get_typedarray_info(
                raw_env,
                raw,
                &mut kind,
                &mut len,
                &mut data,
                &mut buffer,
                &mut byte_offset,
            )
        })?;
    }
    if !is_typed || kind != sys::TypedarrayType::uint8_array {
        let name = if is_typed {
            "another typed array"
        } else {
            crate::arg(value)?.type_name()
        };
        return Err(crate::throw(env, flakeid_js::js_not_a_buffer(name)));
    }
    // A detached buffer's view has no bytes (and no data pointer).
    if data.is_null() {
        len = 0;
    }
    Ok((data.cast::<u8>(), len))
}

/// `options.msecs`, if given (flakeid-js's rule: any other member is refused).
fn uuid7_msecs(env: &Env, options: Option<Unknown<'_>>) -> napi::Result<Option<u64>> {
    let Some(obj) = crate::options_object(env, options)? else {
        return Ok(None);
    };
    let mut members = Vec::new();
    for key in crate::keys(&obj)? {
        let v = obj.get_named_property::<Unknown>(&key)?;
        members.push((key, crate::arg(&v)?));
    }
    flakeid_js::js_uuid7_options(members.iter().map(|(k, v)| (k.as_str(), v))).or_throw(env)
}

unsafe extern "C" fn release_uuid(_env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
    // SAFETY: `data` is the `Arc::into_raw` that `bind_uuid` attached to this function.
    drop(unsafe { Arc::from_raw(data.cast::<fc::UuidGenerator>()) });
}

/// What the native half of `uuid7Bytes` writes with: the generator, and the 16
/// bytes of the ArrayBuffer its JS half copies out of.
struct BytesSlot {
    generator: Arc<fc::UuidGenerator>,
    out: *mut u8,
}

/// The native half of `uuid7Bytes`: the next UUIDv7 into the slot's 16 bytes; no
/// object made here (a `Uint8Array` made in native code costs ~1 µs).
unsafe extern "C" fn uuid7_into_slot(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    // SAFETY: Node's env/info of this call.
    let Some((_, data)) = (unsafe { call_data(env, info) }) else {
        return ptr::null_mut();
    };
    // SAFETY: `bind_uuid` set `data` to a `BytesSlot` that lives until the
    // function's finalizer; its `out` is the 16 bytes of the ArrayBuffer that the JS
    // half (the only holder of this function) keeps alive.
    let slot = unsafe { &*data.cast::<BytesSlot>() };
    match slot.generator.next_uuid7_bytes() {
        Ok(bytes) => {
            // SAFETY: as above: 16 writable bytes nothing else writes meanwhile (one JS thread).
            unsafe { ptr::copy_nonoverlapping(bytes.as_ptr(), slot.out, 16) };
            ptr::null_mut()
        }
        Err(e) => fail(env, e),
    }
}

unsafe extern "C" fn release_slot(_env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
    // SAFETY: `data` is the `Box::into_raw` that `bind_uuid` attached to this function.
    drop(unsafe { Box::from_raw(data.cast::<BytesSlot>()) });
}

/// `uuid7Bytes`, made in JS around the native [`uuid7_into_slot`]: V8 makes the
/// 16-byte `Uint8Array` and copies the slot into it (the bytes come from the engine).
fn js_uuid7_bytes(env: sys::napi_env, fill: sys::napi_value, slot: sys::napi_value) -> napi::Result<sys::napi_value> {
    const FACTORY: &str = "(function (fill, slot) { const view = new Uint8Array(slot); \
        return function uuid7Bytes() { fill(); return view.slice(); }; })";
    js_made(env, FACTORY, &[fill, slot])
}

/// The text of `uuid7s(n)`: `n` UUIDs' 36 characters each, end to end (flakeid-js's
/// rule for `n`, checked before anything is allocated). An allocation that fails is
/// a `RangeError`, as V8's own are, never an abort.
pub(crate) fn uuid7s_text(env: &Env, g: &fc::UuidGenerator, n: &flakeid_js::JsArg) -> napi::Result<Vec<u8>> {
    let n = flakeid_js::js_uuid7_batch(n).or_throw(env)?;
    let out_of_memory = |what: &str| {
        let message = format!("uuid7s({n}): {what} could not be allocated");
        // The message is ours: it has no NUL.
        let message = std::ffi::CString::new(message).unwrap_or_default();
        // SAFETY: valid env; a NUL-terminated message; no code (NULL).
        unsafe { sys::napi_throw_range_error(env.raw(), ptr::null(), message.as_ptr()) };
        napi::Error::from_status(napi::Status::PendingException)
    };
    let mut values = Vec::new();
    values
        .try_reserve_exact(n)
        .map_err(|_| out_of_memory("its 16-byte values"))?;
    values.resize(n, 0u128);
    g.fill_uuid7(&mut values).or_throw(env)?;
    let mut text = Vec::new();
    text.try_reserve_exact(n * fc::Wide::UUID_TEXT_LEN)
        .map_err(|_| out_of_memory("its text"))?;
    for &uuid in &values {
        text.extend_from_slice(&fc::Wide(uuid).to_uuid_ascii());
    }
    Ok(text)
}

/// The native half of an instance's `uuid7s`: the batch's text as one string (one
/// V8 string instead of `n`, each made through Node-API: that was most of a batch's
/// cost per ID).
unsafe extern "C" fn uuid7s_joined(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    let mut argc = 1usize;
    let mut arg = ptr::null_mut();
    let mut data: *mut c_void = ptr::null_mut();
    // SAFETY: valid env/info; out-pointers are live locals (room for one argument).
    let status = unsafe { sys::napi_get_cb_info(env, info, &mut argc, &mut arg, ptr::null_mut(), &mut data) };
    if status != sys::Status::napi_ok || data.is_null() {
        return ptr::null_mut();
    }
    if argc == 0 || arg.is_null() {
        // SAFETY: valid env, live out-pointer.
        unsafe { sys::napi_get_undefined(env, &mut arg) };
    }
    // SAFETY: `bind_uuid` set `data` to an `Arc<fc::UuidGenerator>` that lives until
    // the function's finalizer, which cannot run while the function is being called.
    let g = unsafe { &*data.cast::<fc::UuidGenerator>() };
    let e = Env::from_raw(env);
    // SAFETY: a live value of this call.
    let read = unsafe { crate::read(env, arg) };
    match read.and_then(|n| uuid7s_text(&e, g, &n)) {
        // SAFETY: this call's env.
        Ok(text) => unsafe { latin1(env, &text) },
        Err(err) => {
            if err.status != napi::Status::PendingException {
                // SAFETY: valid env; nothing is pending.
                unsafe { napi::JsError::from(err).throw_into(env) };
            }
            ptr::null_mut()
        }
    }
}

/// `uuid7s`, made in JS around the native [`uuid7s_joined`]: V8 cuts the one string
/// into the UUIDs (a substring costs ~15 ns in JS, a string made through Node-API
/// several times that). Each is a slice of the batch's text, which stays in memory
/// while any of them does (36 bytes per ID of the batch).
fn js_uuid7s(env: sys::napi_env, joined: sys::napi_value) -> napi::Result<sys::napi_value> {
    const FACTORY: &str = "(function (joined) { return function uuid7s(n) { \
        const text = joined(n); const out = new Array(text.length / 36); \
        for (let i = 0, at = 0; i < out.length; i++, at += 36) out[i] = text.slice(at, at + 36); \
        return out; }; })";
    js_made(env, FACTORY, &[joined])
}

/// Defines non-enumerable own `uuid7` (the text form, the hot path), `uuid7s` and
/// `uuid7Bytes` on `this`, bound to `generator`; the other forms stay prototype
/// methods.
pub(crate) fn bind_uuid(env: &Env, this: sys::napi_value, generator: &Arc<fc::UuidGenerator>) -> napi::Result<()> {
    let env = env.raw();
    let data = Arc::into_raw(Arc::clone(generator)).cast_mut().cast::<c_void>();
    let func = function(env, c"uuid7", Some(uuid7), data, release_uuid)?;
    define(env, this, c"uuid7", func)?;
    let data = Arc::into_raw(Arc::clone(generator)).cast_mut().cast::<c_void>();
    let joined = function(env, c"uuid7sJoined", Some(uuid7s_joined), data, release_uuid)?;
    define(env, this, c"uuid7s", js_uuid7s(env, joined)?)?;
    let (mut buffer, mut out) = (ptr::null_mut(), ptr::null_mut());
    // SAFETY: valid env; live out-pointers.
    napi::check_status!(unsafe { sys::napi_create_arraybuffer(env, 16, &mut out, &mut buffer) })?;
    if out.is_null() {
        return Err(napi::Error::from_reason("napi_create_arraybuffer gave no memory"));
    }
    let slot = Box::new(BytesSlot {
        generator: Arc::clone(generator),
        out: out.cast::<u8>(),
    });
    let fill = function(
        env,
        c"uuid7IntoSlot",
        Some(uuid7_into_slot),
        Box::into_raw(slot).cast(),
        release_slot,
    )?;
    define(env, this, c"uuid7Bytes", js_uuid7_bytes(env, fill, buffer)?)
}

/// A native function `name` calling `cb` with `data`, which `free` releases when the
/// function is collected (or at once when the function cannot be made).
fn function(
    env: sys::napi_env,
    name: &CStr,
    cb: sys::napi_callback,
    data: *mut c_void,
    free: unsafe extern "C" fn(sys::napi_env, *mut c_void, *mut c_void),
) -> napi::Result<sys::napi_value> {
    let mut func = ptr::null_mut();
    // SAFETY: valid env; `name` is NUL-terminated; `data` stays valid until `free`
    // runs (or is reclaimed here if the function was not created).
    unsafe {
        let len = name.to_bytes().len() as isize;
        let created = sys::napi_create_function(env, name.as_ptr(), len, cb, data, &mut func);
        if created != sys::Status::napi_ok
            || sys::napi_add_finalizer(env, func, data, Some(free), ptr::null_mut(), ptr::null_mut())
                != sys::Status::napi_ok
        {
            free(env, data, ptr::null_mut());
            napi::check_status!(created)?;
            return Err(napi::Error::from_reason("napi_add_finalizer failed"));
        }
    }
    Ok(func)
}

/// Defines `this[name] = value`, writable and configurable but not enumerable (as
/// a method is).
fn define(env: sys::napi_env, this: sys::napi_value, name: &CStr, value: sys::napi_value) -> napi::Result<()> {
    let prop = sys::napi_property_descriptor {
        utf8name: name.as_ptr(),
        name: ptr::null_mut(),
        method: None,
        getter: None,
        setter: None,
        value,
        attributes: sys::PropertyAttributes::writable | sys::PropertyAttributes::configurable,
        data: ptr::null_mut(),
    };
    // SAFETY: valid env, object and descriptor.
    napi::check_status!(unsafe { sys::napi_define_properties(env, this, 1, &prop) })
}

/// `nextBuffer`, made in JS around the bound native `nextId`: Node builds a Buffer
/// from JS (a pooled slice) ~10x faster than from native code
/// (`napi_create_buffer_copy` costs ~800 ns). Only the bytes are packed here; the ID
/// comes from the engine.
fn js_next_buffer(env: sys::napi_env, next_id: sys::napi_value) -> napi::Result<sys::napi_value> {
    const FACTORY: &str = "(function (nextId) { return function nextBuffer() { \
        const b = Buffer.allocUnsafe(8); b.writeBigUInt64BE(nextId()); return b; }; })";
    js_made(env, FACTORY, &[next_id])
}

/// The function that the JS `factory` (a function expression's source) returns
/// when called with `args`.
fn js_made(env: sys::napi_env, factory_source: &str, args: &[sys::napi_value]) -> napi::Result<sys::napi_value> {
    let (mut source, mut factory, mut global, mut func) =
        (ptr::null_mut(), ptr::null_mut(), ptr::null_mut(), ptr::null_mut());
    // SAFETY: valid env; the source is valid UTF-8 of the given length; `args` holds
    // its length of live values; every out pointer is live; on failure an exception
    // is pending and the status says so.
    unsafe {
        napi::check_status!(sys::napi_create_string_utf8(
            env,
            factory_source.as_ptr().cast(),
            factory_source.len() as isize,
            &mut source
        ))?;
        napi::check_status!(sys::napi_run_script(env, source, &mut factory))?;
        napi::check_status!(sys::napi_get_global(env, &mut global))?;
        napi::check_status!(sys::napi_call_function(
            env,
            global,
            factory,
            args.len(),
            args.as_ptr(),
            &mut func
        ))?;
    }
    Ok(func)
}
