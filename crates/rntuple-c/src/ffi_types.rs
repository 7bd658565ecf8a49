//! The Arrow C data and stream interface structs as the C side names them. Declared here as
//! opaque types, which cbindgen declares without a body (their definitions, the Arrow project's
//! ABI, are in the header's preamble); the functions only cast pointers to them into pointers to
//! arrow-rs's `#[repr(C)]` equivalents, which have that layout.

use arrow_array::ffi::{FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::ffi_stream::FFI_ArrowArrayStream;

/// `struct ArrowSchema` of the Arrow C data interface.
pub struct ArrowSchema {
    _opaque: [u8; 0],
}

/// `struct ArrowArray` of the Arrow C data interface.
pub struct ArrowArray {
    _opaque: [u8; 0],
}

/// `struct ArrowArrayStream` of the Arrow C stream interface.
pub struct ArrowArrayStream {
    _opaque: [u8; 0],
}

/// arrow-rs's view of a C `ArrowSchema`.
pub fn schema_ptr(p: *const ArrowSchema) -> *const FFI_ArrowSchema {
    p.cast()
}

/// arrow-rs's view of a C `ArrowSchema` to fill.
pub fn schema_out(p: *mut ArrowSchema) -> *mut FFI_ArrowSchema {
    p.cast()
}

/// arrow-rs's view of a C `ArrowArray`.
pub fn array_ptr(p: *mut ArrowArray) -> *mut FFI_ArrowArray {
    p.cast()
}

/// arrow-rs's view of a C `ArrowArrayStream` to fill.
pub fn stream_out(p: *mut ArrowArrayStream) -> *mut FFI_ArrowArrayStream {
    p.cast()
}
