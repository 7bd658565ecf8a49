//! Several RNTuples written at once into one file, as a framework writes its `Events`,
//! `LuminosityBlocks`, `Runs` and `MetaData` into one output: one [`FileWriter`] owns the file and
//! hands out a [`Writer`] or a [`ParallelWriter`] per RNTuple; they fill concurrently (each from
//! any thread), and [`FileWriter::commit`] writes the file's directory once every RNTuple is
//! committed.
//!
//! ```
//! use rntuple::write::{FileWriter, WriteOptions};
//! use rntuple::Value;
//! let path = std::env::temp_dir().join("rntuple-doc-file-writer.root");
//! let fw = FileWriter::create(&path, WriteOptions::default())?;
//! let events = fw.parallel_writer("Events", &[("id", "std::uint64_t")])?;
//! let mut runs = fw.writer("Runs", &[("run", "std::uint32_t")])?;
//! std::thread::scope(|s| {
//!     for t in 0..2u64 {
//!         let mut ctx = events.fill_context()?;
//!         s.spawn(move || -> rntuple::Result<()> {
//!             for i in 0..50 {
//!                 ctx.fill(&Value::Record(vec![("id".into(), Value::UInt(t * 50 + i))]))?;
//!             }
//!             ctx.finish().map(|_| ())
//!         });
//!     }
//!     Ok::<(), rntuple::Error>(())
//! })?;
//! runs.fill(&Value::Record(vec![("run".into(), Value::UInt(1))]))?;
//! events.commit()?;
//! runs.commit()?;
//! fw.commit()?;
//! let f = rntuple::RNTupleFile::open(&path)?;
//! assert_eq!(f.names(), ["Events", "Runs"]);
//! assert_eq!(f.reader("Events")?.num_entries(), 100);
//! assert_eq!(f.reader("Runs")?.num_entries(), 1);
//! # Ok::<(), rntuple::Error>(())
//! ```
//!
//! The file is written as a file of one RNTuple is (under a temporary name renamed over `path` at
//! the commit, or in place with checkpoints or `update_existing_file`): a [`FileWriter`] dropped
//! without its commit, or whose commit fails, leaves no file (an existing file of that name stays
//! as it was). The RNTuples' writers commit on their own ([`Writer::commit`], or when dropped),
//! writing their footer and anchor; the file's commit refuses a writer still open, aborted or
//! failed, and then discards the file.

use crate::error::{Error, Result};
use crate::logical::typename::TypeExpr;
use crate::storage::container::file_sink::SharedFile;
use crate::storage::location::create_file_sink;
use crate::write::cluster::plan::parse_field_types;
use crate::write::options::WriteOptions;
use crate::write::parallel::ParallelWriter;
use crate::write::sink::Dataset;
use crate::write::writer::Writer;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// One ROOT file being written, holding several RNTuples.
///
/// Several RNTuples written at once into one file, as a framework writes its `Events`,
/// `LuminosityBlocks`, `Runs` and `MetaData` into one output: one [`FileWriter`] owns the file and
/// hands out a [`Writer`] or a [`ParallelWriter`] per RNTuple; they fill concurrently (each from
/// any thread), and [`FileWriter::commit`] writes the file's directory once every RNTuple is
/// committed.
///
/// ```
/// use rntuple::write::{FileWriter, WriteOptions};
/// use rntuple::Value;
/// let path = std::env::temp_dir().join("rntuple-doc-file-writer.root");
/// let fw = FileWriter::create(&path, WriteOptions::default())?;
/// let events = fw.parallel_writer("Events", &[("id", "std::uint64_t")])?;
/// let mut runs = fw.writer("Runs", &[("run", "std::uint32_t")])?;
/// std::thread::scope(|s| {
///     for t in 0..2u64 {
///         let mut ctx = events.fill_context()?;
///         s.spawn(move || -> rntuple::Result<()> {
///             for i in 0..50 {
///                 ctx.fill(&Value::Record(vec![("id".into(), Value::UInt(t * 50 + i))]))?;
///             }
///             ctx.finish().map(|_| ())
///         });
///     }
///     Ok::<(), rntuple::Error>(())
/// })?;
/// runs.fill(&Value::Record(vec![("run".into(), Value::UInt(1))]))?;
/// events.commit()?;
/// runs.commit()?;
/// fw.commit()?;
/// let f = rntuple::RNTupleFile::open(&path)?;
/// assert_eq!(f.names(), ["Events", "Runs"]);
/// assert_eq!(f.reader("Events")?.num_entries(), 100);
/// assert_eq!(f.reader("Runs")?.num_entries(), 1);
/// # Ok::<(), rntuple::Error>(())
/// ```
///
/// The file is written as a file of one RNTuple is (under a temporary name renamed over `path` at
/// the commit, or in place with checkpoints or `update_existing_file`): a [`FileWriter`] dropped
/// without its commit, or whose commit fails, leaves no file (an existing file of that name stays
/// as it was). The RNTuples' writers commit on their own ([`Writer::commit`], or when dropped),
/// writing their footer and anchor; the file's commit refuses a writer still open, aborted or
/// failed, and then discards the file.
pub struct FileWriter {
    file: SharedFile,
    opts: WriteOptions,
    path: String,
}

impl FileWriter {
    /// Creates the file. `opts` are the defaults of its RNTuples' writers and the file's own
    /// options: output mode (`checkpoint_clusters`, `update_existing_file`), `use_direct_io`,
    /// `preallocate` and the compression of the file's records.
    pub fn create(path: impl AsRef<Path>, opts: WriteOptions) -> Result<FileWriter> {
        opts.validate()?;
        let sink = create_file_sink(path.as_ref(), &opts.file_options())?;
        Ok(FileWriter { file: Arc::new(Mutex::new(Some(sink))), opts, path: path.as_ref().display().to_string() })
    }

    /// The file's options (the defaults of its writers).
    pub fn options(&self) -> &WriteOptions {
        &self.opts
    }

    /// `opts` with the file-level options of this file.
    fn ntuple_options(&self, opts: &WriteOptions) -> WriteOptions {
        WriteOptions {
            use_direct_io: self.opts.use_direct_io,
            preallocate: self.opts.preallocate,
            update_existing_file: self.opts.update_existing_file,
            ..opts.clone()
        }
    }

    /// A sequential writer of a new RNTuple `name` with the given (field name, C++ type name)
    /// schema and the file's options.
    pub fn writer(&self, name: &str, schema: &[(&str, &str)]) -> Result<Writer> {
        self.writer_with_types(name, &parse_field_types(schema)?, &self.opts)
    }

    /// A sequential writer whose schema is the members of the Rust type `E`.
    pub fn writer_typed<E: crate::write::Entry>(&self, name: &str) -> Result<Writer> {
        self.writer_with_types(name, &E::fields(), &self.opts)
    }

    /// A sequential writer from a schema of parsed types, with options of its own (cluster and
    /// page sizes, compression...; the file-level ones are the file's).
    pub fn writer_with_types(&self, name: &str, schema: &[(String, TypeExpr)], opts: &WriteOptions) -> Result<Writer> {
        Writer::build(name, schema, self.ntuple_options(opts), |desc, opts| Dataset::create_in(&self.file, desc, opts))
    }

    /// A parallel writer of a new RNTuple `name` (its fill contexts fill it from many threads)
    /// with the file's options.
    pub fn parallel_writer(&self, name: &str, schema: &[(&str, &str)]) -> Result<ParallelWriter> {
        self.parallel_writer_with_types(name, &parse_field_types(schema)?, &self.opts)
    }

    /// A parallel writer whose schema is the members of the Rust type `E`.
    pub fn parallel_writer_typed<E: crate::write::Entry>(&self, name: &str) -> Result<ParallelWriter> {
        self.parallel_writer_with_types(name, &E::fields(), &self.opts)
    }

    /// A parallel writer from a schema of parsed types, with options of its own.
    pub fn parallel_writer_with_types(&self, name: &str, schema: &[(String, TypeExpr)], opts: &WriteOptions) -> Result<ParallelWriter> {
        ParallelWriter::build(name, schema, self.ntuple_options(opts), |desc, opts| Dataset::create_in(&self.file, desc, opts))
    }

    /// The names of the RNTuples started in this file, in the order they were started.
    pub fn ntuple_names(&self) -> Vec<String> {
        self.file.lock().ok().and_then(|g| g.as_ref().map(|f| f.ntuple_names())).unwrap_or_default()
    }

    /// Writes the file's records (keys list listing every RNTuple's anchor, StreamerInfo, free
    /// segments, directory and file header), syncs the file and renames it over its path. Every
    /// RNTuple's writer must be committed (or dropped) before; otherwise, or when one failed or
    /// was aborted, the file is discarded and the error names that RNTuple. Returns the file
    /// size.
    pub fn commit(self) -> Result<u64> {
        let sink = {
            let mut g = self.file.lock().map_err(|_| Error::internal("the file's lock is poisoned (a thread panicked while holding it)"))?;
            let sink = g.take().ok_or_else(|| Error::Invalid(format!("{}: the file was committed or discarded already", self.path)))?;
            sink.check_complete()?;
            sink
        };
        sink.finish()
    }

    /// Discards the file: a new file's temporary file is removed (an existing file of that name
    /// stays as it was). The writers still open can no longer write.
    pub fn abort(self) {}
}

impl Drop for FileWriter {
    /// A file writer dropped without its commit discards the file (see [`FileWriter::abort`]).
    fn drop(&mut self) {
        if let Ok(mut g) = self.file.lock() {
            g.take();
        }
    }
}
