//! Write options: a handle holding ROOT's `RNTupleWriteOptions` defaults, set by name through the
//! library's option table (`WriteOptions::OPTIONS`, so every option the library declares is
//! settable here without being named again), and the per-field reduced-precision floats.

use crate::handles::{self, Object};
use crate::status::{guard, CError, CResult};
use crate::strings::{put, str_arg, write_str};
use rntuple::write::{FloatRepr, OptionKind, OptionValue, WriteOptions};
use std::ffi::c_char;
use std::sync::Mutex;

/// A set of write options.
pub struct OptionsObj {
    opts: Mutex<WriteOptions>,
}

impl Object for OptionsObj {
    const KIND: &'static str = "write options";
    const TAG: u8 = 3;
}

/// The options of a handle (validated), or the defaults for handle 0.
pub fn options_of(h: u64) -> CResult<WriteOptions> {
    if h == 0 {
        return Ok(WriteOptions::default());
    }
    let o = handles::get::<OptionsObj>(h)?;
    let opts = o.value.opts.lock().map_err(|_| CError::state("the options' lock was poisoned"))?.clone();
    opts.validate()?;
    Ok(opts)
}

fn with(h: u64, f: impl FnOnce(&mut WriteOptions) -> CResult<()>) -> CResult<()> {
    let o = handles::get::<OptionsObj>(h)?;
    let mut g = o.value.opts.lock().map_err(|_| CError::state("the options' lock was poisoned"))?;
    f(&mut g)
}

/// New write options with ROOT's defaults (compression 505, 128 MiB clusters, ...); `*out`
/// receives the handle. Handle 0 means the defaults wherever options are taken.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_write_options_new(out: *mut u64) -> i32 {
    guard("rntuple_write_options_new", || {
        crate::strings::need(out, "out")?;
        let h = handles::register(OptionsObj { opts: Mutex::new(WriteOptions::default()) })?;
        unsafe { put(out, h, "out") }
    })
}

/// Frees write options (0 is ignored). Writers made with them keep their copy.
#[unsafe(no_mangle)]
pub extern "C" fn rntuple_write_options_free(options: u64) -> i32 {
    guard("rntuple_write_options_free", || handles::free::<OptionsObj>(options).map(|_| ()))
}

/// Sets the option `name` (ROOT's names in snake case: `compression`, `approx_zipped_cluster_size`,
/// `max_unzipped_page_size`, `enable_page_checksums`, `checkpoint_clusters`, ...) from its text:
/// a non-negative integer, or `true`/`false`/`1`/`0` for switches. An unknown name or a bad value is
/// `RNTUPLE_ERR_INVALID_ARGUMENT` naming the known options or what the option takes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_write_options_set(options: u64, name: *const c_char, value: *const c_char) -> i32 {
    guard("rntuple_write_options_set", || {
        let name = unsafe { str_arg(name, "name") }?;
        let text = unsafe { str_arg(value, "value") }?;
        let info = WriteOptions::OPTIONS.iter().find(|i| i.name == name).ok_or_else(|| {
            let known: Vec<&str> = WriteOptions::OPTIONS.iter().map(|i| i.name).collect();
            CError::invalid(format!("unknown write option '{name}' (known: {})", known.join(", ")))
        })?;
        let v = match info.kind {
            OptionKind::Bool => match text.trim() {
                "true" | "1" => OptionValue::Bool(true),
                "false" | "0" => OptionValue::Bool(false),
                t => return Err(CError::invalid(format!("write option '{name}' takes true or false, not '{t}'"))),
            },
            OptionKind::UInt => OptionValue::UInt(
                text.trim().parse().map_err(|_| CError::invalid(format!("write option '{name}' takes a non-negative integer, not '{text}'")))?,
            ),
        };
        with(options, |o| o.set(name, v).map_err(CError::from))
    })
}

/// The value of the option `name` as text (`"505"`, `"true"`) into `buf`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_write_options_get(options: u64, name: *const c_char, buf: *mut c_char, cap: usize, len: *mut usize) -> i32 {
    guard("rntuple_write_options_get", || {
        let name = unsafe { str_arg(name, "name") }?;
        let o = options_of(options)?;
        let text = match o.get(name) {
            Some(OptionValue::Bool(b)) => b.to_string(),
            Some(OptionValue::UInt(u)) => u.to_string(),
            None => return Err(CError::invalid(format!("unknown write option '{name}'"))),
        };
        unsafe { write_str(&text, buf, cap, len) }
    })
}

/// The number of options `rntuple_write_options_set` knows.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_write_option_count(out: *mut usize) -> i32 {
    guard("rntuple_write_option_count", || unsafe { put(out, WriteOptions::OPTIONS.len(), "out") })
}

/// The name of the `index`-th option into `buf`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_write_option_name(index: usize, buf: *mut c_char, cap: usize, len: *mut usize) -> i32 {
    guard("rntuple_write_option_name", || {
        let info = WriteOptions::OPTIONS
            .get(index)
            .ok_or_else(|| CError::invalid(format!("option index {index} is past the {} options", WriteOptions::OPTIONS.len())))?;
        unsafe { write_str(info.name, buf, cap, len) }
    })
}

fn set_float(options: u64, path: *const c_char, repr: FloatRepr) -> CResult<()> {
    let path = unsafe { str_arg(path, "field") }?;
    repr.validate().map_err(|e| CError::invalid(format!("field '{path}': {e}")))?;
    with(options, |o| {
        o.columns.set(path, repr);
        Ok(())
    })
}

/// Stores the float or double field `field` (a path: `pt`, `jets._0.pt`; a vector of floats names
/// its items) as IEEE half precision (ROOT's `SetHalfPrecision`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_write_options_half(options: u64, field: *const c_char) -> i32 {
    guard("rntuple_write_options_half", || set_float(options, field, FloatRepr::Half))
}

/// Stores `field` with its top `bits` bits (10 to 31; ROOT's `SetTruncated`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_write_options_truncate(options: u64, field: *const c_char, bits: u32) -> i32 {
    guard("rntuple_write_options_truncate", || set_float(options, field, FloatRepr::Truncated { bits: u8::try_from(bits).unwrap_or(u8::MAX) }))
}

/// Stores `field` as a `bits`-bit integer over `[min, max]` (1 to 32 bits; ROOT's `SetQuantized`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_write_options_quantize(options: u64, field: *const c_char, min: f64, max: f64, bits: u32) -> i32 {
    guard("rntuple_write_options_quantize", || set_float(options, field, FloatRepr::Quantized { min, max, bits: u8::try_from(bits).unwrap_or(u8::MAX) }))
}
