//! Local I/O, the lowest room of the storage layer: the byte sources behind `ReadAt` (`source`:
//! a local file read with `pread`, memory; `mapped`: a memory map; the kernel's read-ahead
//! window), the coalescing of requested ranges into fewer reads (`coalesce`), and outputs that
//! are never half-written (`output`: atomic replacement, checkpoints, non-regular outputs, the
//! same-file check), with the registry of outputs in the making for an interrupted process
//! (`interrupt`) and the record of which bytes of an output are final, for an upload that
//! streams (`upload_window`). Every system call that changes an output goes through `file_io`,
//! which records it when asked (`io_record`, public: the crash explorer reads its logs).
//!
//! Uses no other room of the storage layer: an output staged for an upload holds the upload as a
//! `output::StagedUpload` trait object, which `storage::remote` implements and hands over.

pub(crate) mod file_io;
pub(crate) mod interrupt;
pub(crate) mod kernel_read_ahead;
pub(crate) mod upload_window;
crate::unstable_mod! {
    coalesce
}
crate::unstable_mod! {
    io_record
}
crate::unstable_mod! {
    mapped
}
crate::unstable_mod! {
    output
}
crate::unstable_mod! {
    source
}
