//! What every writer handle holds: a sink (a sequential writer, or a fill context of a parallel or
//! distributed writer) and the entries its typed setters gathered ([`EntryBuf`]), appended to the
//! sink as one record batch at a time, in order with the batches appended directly.

use crate::entry::EntryBuf;
use crate::schema::FieldTypes;
use crate::status::{CError, CResult};
use arrow_array::RecordBatch;
use rntuple::write::{FillContext, Writer};
use std::sync::{Mutex, MutexGuard};

/// Where batches go: a sequential writer or a fill context.
pub trait Sink: Send {
    /// Appends a batch.
    fn append(&mut self, b: &RecordBatch) -> rntuple::Result<()>;
}

impl Sink for Writer {
    fn append(&mut self, b: &RecordBatch) -> rntuple::Result<()> {
        self.append_batch(b)
    }
}

impl Sink for FillContext {
    fn append(&mut self, b: &RecordBatch) -> rntuple::Result<()> {
        self.append_batch(b)
    }
}

/// A sink with the entries its setters gathered.
pub struct Filling<S> {
    /// The writer or fill context.
    pub sink: S,
    /// Entries filled by the typed setters and not yet appended.
    pub entry: EntryBuf,
    /// Field names in order (the check of appended batches).
    names: Vec<String>,
}

impl<S: Sink> Filling<S> {
    pub fn new(sink: S, schema: &FieldTypes) -> Self {
        Filling { sink, entry: EntryBuf::new(schema), names: schema.iter().map(|(n, _)| n.clone()).collect() }
    }

    /// Appends the entries the setters gathered.
    pub fn flush_entries(&mut self) -> CResult<()> {
        if let Some(b) = self.entry.take_batch()? {
            self.sink.append(&b).map_err(CError::from_append)?;
            self.entry.recycle(b);
        }
        Ok(())
    }

    /// Appends a batch after the gathered entries (order kept); its fields must be the schema's.
    pub fn append(&mut self, b: &RecordBatch) -> CResult<()> {
        let got: Vec<&str> = b.schema_ref().fields().iter().map(|f| f.name().as_str()).collect();
        if got != self.names {
            return Err(CError::schema(format!("the batch's fields ({}) are not the writer's ({})", got.join(", "), self.names.join(", "))));
        }
        self.flush_entries()?;
        self.sink.append(b).map_err(CError::from_append)
    }
}

/// What the typed setters reach through a handle: a writer's or a fill context's entries.
pub trait Target {
    /// The entry being filled.
    fn entry(&mut self) -> &mut EntryBuf;
    /// Appends the gathered entries to the writer.
    fn flush_entries(&mut self) -> CResult<()>;
}

impl<S: Sink> Target for Filling<S> {
    fn entry(&mut self) -> &mut EntryBuf {
        &mut self.entry
    }
    fn flush_entries(&mut self) -> CResult<()> {
        Filling::flush_entries(self)
    }
}

/// A fill context of a parallel writer or of a distributed (MPI) writer: one thread's clusters.
pub trait ContextSink: Sink {
    /// Ends the current cluster and hands it to the writer.
    fn flush_cluster(&mut self) -> rntuple::Result<()>;
    /// Hands the last cluster to the writer.
    fn finish(self: Box<Self>) -> rntuple::Result<()>;
}

impl ContextSink for FillContext {
    fn flush_cluster(&mut self) -> rntuple::Result<()> {
        FillContext::flush_cluster(self)
    }
    fn finish(self: Box<Self>) -> rntuple::Result<()> {
        FillContext::finish(*self).map(|_| ())
    }
}

impl Sink for Box<dyn ContextSink> {
    fn append(&mut self, b: &RecordBatch) -> rntuple::Result<()> {
        (**self).append(b)
    }
}

/// Locks a handle's state (a poisoned lock is an internal error).
pub fn lock<T>(m: &Mutex<T>) -> CResult<MutexGuard<'_, T>> {
    m.lock().map_err(|_| CError::new(crate::status::RNTUPLE_ERR_INTERNAL, "a lock was poisoned by a panic"))
}

/// The error of a call on an object that was committed, aborted or finished already.
pub fn gone(what: &str, done: &str) -> CError {
    CError::state(format!("{what} was {done} already"))
}
