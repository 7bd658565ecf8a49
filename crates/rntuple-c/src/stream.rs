//! Reading as an Arrow C stream (`ArrowArrayStream`): a projection, an entry range and a batch
//! size (0: one batch per cluster). The stream owns what it reads from: the reader and file handles
//! may be freed while it is in use.

use crate::ffi_types::{stream_out, ArrowArrayStream};
use crate::handles;
use crate::read::{projection, ReaderObj};
use crate::status::{guard, CError};
use crate::strings::need;
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{RecordBatch, RecordBatchReader};
use arrow_schema::{ArrowError, SchemaRef};
use rntuple::Reader;
use std::ffi::c_char;
use std::sync::Arc;

/// Batches of a reader's entries `next..stop`.
struct Batches {
    reader: Arc<Reader>,
    fields: Option<Vec<String>>,
    schema: SchemaRef,
    next: u64,
    stop: u64,
    batch_size: u64,
}

impl Batches {
    /// The end of the batch starting at `self.next`: `batch_size` entries, or the end of its
    /// cluster when `batch_size` is 0.
    fn batch_end(&self) -> u64 {
        let end = if self.batch_size > 0 {
            self.next.saturating_add(self.batch_size)
        } else {
            let clusters = &self.reader.descriptor().clusters;
            let i = clusters.partition_point(|c| c.first_entry + c.n_entries <= self.next);
            clusters.get(i).map(|c| c.first_entry + c.n_entries).unwrap_or(self.stop)
        };
        end.min(self.stop)
    }
}

impl Iterator for Batches {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.next >= self.stop {
            return None;
        }
        let end = self.batch_end().max(self.next + 1);
        let names: Option<Vec<&str>> = self.fields.as_ref().map(|v| v.iter().map(String::as_str).collect());
        let got = self.reader.read_batch(names.as_deref(), self.next, end);
        self.next = end;
        Some(got.map_err(|e| {
            self.next = self.stop; // no batch after an error
            ArrowError::ExternalError(Box::new(e))
        }))
    }
}

impl RecordBatchReader for Batches {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

/// Reads the chosen top-level fields (`fields[0..n_fields]`; all readable fields when `fields` is null)
/// of entries `[start, stop)` (`stop` past the end, `UINT64_MAX` say, means to the end) as an Arrow
/// stream of record batches of `batch_size` entries (0: one batch per cluster) into `*out`, which
/// the caller releases. Each batch is read when the consumer asks for it; a read error ends the
/// stream with `get_last_error` saying what and where.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_reader_stream(
    reader: u64,
    fields: *const *const c_char,
    n_fields: usize,
    start: u64,
    stop: u64,
    batch_size: u64,
    out: *mut ArrowArrayStream,
) -> i32 {
    guard("rntuple_reader_stream", || {
        need(out, "out")?;
        let r = handles::get::<ReaderObj>(reader)?;
        let reader = r.value.reader.clone();
        let names = unsafe { projection(fields, n_fields) }?;
        let n = reader.num_entries();
        if start > n {
            return Err(CError::invalid(format!("entry range {start}:{stop} starts past the RNTuple's {n} entries")));
        }
        if start > stop {
            return Err(CError::invalid(format!("entry range {start}:{stop} is reversed")));
        }
        let stop = stop.min(n);
        // The schema, and every projection error, before the stream exists.
        let schema = reader.read_batch(names.as_deref(), 0, 0)?.schema();
        let fields = names.map(|v| v.iter().map(|s| s.to_string()).collect());
        let batches = Batches { reader, fields, schema, next: start, stop, batch_size };
        let stream = FFI_ArrowArrayStream::new(Box::new(batches));
        // SAFETY: `out` is not null and points to writable memory for a stream (the contract).
        unsafe { stream_out(out).write(stream) };
        Ok(())
    })
}
