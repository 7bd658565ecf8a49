//! Parallel writing of one RNTuple into one file (Hahnfeld, Blomer, Kollegger, Euro-Par 2024):
//! every thread fills its own [`FillContext`], which buffers and compresses its pages privately;
//! a full cluster is relocatable (page positions relative to its blob, collection offsets local to
//! the cluster), so committing it only needs the writer's lock for reserving its byte range and
//! appending its metadata; the write itself follows after the lock is released (unless
//! `write_outside_lock` is turned off, as in ROOT, where it happens under the lock).
//!
//! ```
//! use rntuple::write::{ParallelWriter, WriteOptions};
//! use rntuple::Value;
//! let path = std::env::temp_dir().join("rntuple-doc-parallel.root");
//! let w = ParallelWriter::create(&path, "Events", &[("id", "std::uint64_t")], WriteOptions::default())?;
//! std::thread::scope(|s| {
//!     for t in 0..4u64 {
//!         let mut ctx = w.fill_context()?;
//!         s.spawn(move || -> rntuple::Result<()> {
//!             for i in 0..100 {
//!                 ctx.fill(&Value::Record(vec![("id".into(), Value::UInt(t * 100 + i))]))?;
//!             }
//!             ctx.finish()?;
//!             Ok(())
//!         });
//!     }
//!     Ok::<(), rntuple::Error>(())
//! })?;
//! w.commit()?;
//! let f = rntuple::RNTupleFile::open(&path)?;
//! assert_eq!(f.reader("Events")?.num_entries(), 400);
//! # Ok::<(), rntuple::Error>(())
//! ```

use crate::error::{Error, Result};
use crate::format::descriptor::Descriptor;
use crate::storage::container::key_plan::KeyPlan;
use crate::value::Value;
use crate::write::cluster::builder::ClusterBuilder;
use crate::write::cluster::plan::parse_field_types;
use crate::write::cluster::sealed::{ClusterOut, SealedCluster};
use crate::write::options::WriteOptions;
use crate::write::sink::{write_placement, Dataset, Placement, WriteTarget};
use arrow_array::RecordBatch;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

/// What one fill context did, for the benchmark and for tuning.
///
/// ```
/// use rntuple::write::{ParallelWriter, WriteOptions};
/// use rntuple::Value;
/// # let path = std::env::temp_dir().join(format!("rntuple-doc-ContextMetrics-{}.root", std::process::id()));
/// let w = ParallelWriter::create(&path, "Events", &[("x", "std::int64_t")], WriteOptions::default())?;
/// let mut ctx = w.fill_context()?;
/// for i in 0..100 {
///     ctx.fill(&Value::Record(vec![("x".into(), Value::Int(i))]))?;
/// }
/// let m = ctx.finish()?; // flushes the last cluster
/// assert_eq!((m.entries, m.clusters), (100, 1));
/// assert_eq!(m.placed, [(0, 100)]); // its one cluster holds the RNTuple's entries 0..100
/// assert!(m.bytes_written > 0 && m.acquisitions > 0);
/// assert_eq!(w.metrics()[0].entries, 100);
/// w.commit()?;
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ContextMetrics {
    /// Entries filled.
    pub entries: u64,
    /// Clusters committed.
    pub clusters: u64,
    /// Seconds spent compressing and checksumming pages.
    pub compress_seconds: f64,
    /// Seconds spent waiting for the writer's lock.
    pub wait_seconds: f64,
    /// Seconds spent holding the writer's lock.
    pub hold_seconds: f64,
    /// Times the lock was taken.
    pub acquisitions: u64,
    /// Bytes written (keys, pages and padding).
    pub bytes_written: u64,
    /// Seconds from the context's creation to its end.
    pub wall_seconds: f64,
    /// Where this context's clusters went, in the context's order: the (first entry in the
    /// RNTuple, entries) of each cluster it committed. A context's entries stay together within a
    /// cluster; clusters of other contexts may come between two of its clusters.
    pub placed: Vec<(u64, u64)>,
}

struct Shared {
    dataset: Mutex<Dataset>,
    target: WriteTarget,
    template: ClusterBuilder<()>,
    opts: WriteOptions,
    live: AtomicUsize,
    finished: Mutex<Vec<ContextMetrics>>,
    /// The first error of a context that could not commit its data (reported by `commit`).
    failure: Mutex<Option<String>>,
    /// Page buffers of ended contexts, for the next context (up to a cluster's worth): a
    /// context's first cluster then reuses memory instead of faulting fresh pages in.
    pool: Mutex<Vec<Vec<u8>>>,
}

impl Shared {
    fn lock(&self, m: &mut ContextMetrics) -> Result<MutexGuard<'_, Dataset>> {
        let t = Instant::now();
        let g = self.dataset.lock().map_err(|_| Error::internal("the parallel writer's lock is poisoned (a thread panicked while holding it)"))?;
        m.wait_seconds += t.elapsed().as_secs_f64();
        m.acquisitions += 1;
        Ok(g)
    }

    fn fail(&self, e: &Error) {
        if let Ok(mut f) = self.failure.lock() {
            f.get_or_insert_with(|| e.to_string());
        }
    }

    /// Commits clusters: under the lock, reserve their ranges, write them (unless writing
    /// outside the lock) and append their metadata; then write them if outside.
    fn commit(&self, clusters: &mut [SealedCluster], m: &mut ContextMetrics) -> Result<()> {
        if clusters.is_empty() {
            return Ok(());
        }
        let outside = self.opts.write_outside_lock;
        // The key layouts are pure arithmetic: worked out before taking the lock.
        let plans =
            clusters.iter().filter(|c| c.is_relocatable()).map(|c| KeyPlan::new(&c.chunk_lens(), self.opts.max_key_size)).collect::<Result<Vec<_>>>()?;
        let mut placements: Vec<Placement> = Vec::with_capacity(plans.len());
        // With checkpoints, clusters written after the lock is released are marked written under
        // it afterwards: no checkpoint lists a cluster before its bytes are in the file.
        let checkpoints = self.opts.checkpoint_clusters > 0;
        let mut pending: Vec<usize> = Vec::new();
        let r = (|| {
            let mut ds = self.lock(m)?;
            let t = Instant::now();
            let r = (|| -> Result<_> {
                let mut plans = plans.into_iter();
                for c in clusters.iter_mut() {
                    m.placed.push((ds.n_entries, c.n_entries));
                    if !c.is_relocatable() {
                        // Unbuffered: the pages are in the file already; only metadata.
                        ds.append(c, &[])?;
                        continue;
                    }
                    let plan = plans.next().ok_or_else(|| Error::internal("a cluster without a key plan"))?;
                    let placement = ds.reserve(plan)?;
                    if !outside {
                        write_placement(&self.target, &placement, &c.chunks)?;
                    }
                    // Without checkpoints nothing waits for the bytes: counted as written at once.
                    pending.push(ds.append_placed(c, &placement.offsets(), !(outside && checkpoints))?);
                    m.bytes_written += placement.total();
                    placements.push(placement);
                }
                if !outside {
                    ds.maybe_checkpoint()?;
                }
                Ok(())
            })();
            drop(ds);
            m.hold_seconds += t.elapsed().as_secs_f64();
            r?;
            if outside {
                for (c, placement) in clusters.iter_mut().filter(|c| c.is_relocatable()).zip(&placements) {
                    write_placement(&self.target, placement, &c.chunks)?;
                }
                if checkpoints {
                    let mut ds = self.lock(m)?;
                    let t = Instant::now();
                    ds.written(&pending);
                    let r = ds.maybe_checkpoint();
                    drop(ds);
                    m.hold_seconds += t.elapsed().as_secs_f64();
                    r?;
                }
            }
            m.clusters += clusters.len() as u64;
            Ok(())
        })();
        if let Err(e) = &r {
            self.fail(e);
        }
        r
    }
}

/// A writer of one RNTuple that many threads fill at once, each through its own [`FillContext`].
///
/// Entries of one context keep their order; clusters of different contexts interleave in the
/// order they are committed. Pages are compressed on the filling threads (the options'
/// `use_implicit_mt` is not used here). The dataset is committed by [`ParallelWriter::commit`],
/// or when the writer is dropped (errors then go to standard error).
///
/// ```
/// use rntuple::write::{ParallelWriter, WriteOptions};
/// use rntuple::Value;
/// # let path = std::env::temp_dir().join(format!("rntuple-doc-ParallelWriter-{}.root", std::process::id()));
/// let w = ParallelWriter::create(&path, "Events", &[("x", "std::int32_t")], WriteOptions::default())?;
/// let mut ctx = w.fill_context()?;
/// ctx.fill(&Value::Record(vec![("x".into(), Value::Int(7))]))?;
/// assert!(w.commit().is_err()); // a context is still filling
/// drop(ctx); // commits its last cluster
/// assert_eq!((w.num_entries(), w.metrics().len()), (1, 1));
/// let size = w.commit()?;
/// assert_eq!(size, std::fs::metadata(&path)?.len());
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct ParallelWriter {
    shared: Arc<Shared>,
    committed: Mutex<bool>,
}

impl ParallelWriter {
    /// Creates a file holding one RNTuple with the given (field name, C++ type name) schema.
    pub fn create(path: impl AsRef<Path>, name: &str, schema: &[(&str, &str)], opts: WriteOptions) -> Result<ParallelWriter> {
        Self::create_with_types(path, name, &parse_field_types(schema)?, opts)
    }

    /// Creates a file whose schema is the members of the Rust type `E`; contexts fill it with
    /// [`FillContext::fill_typed`].
    pub fn create_typed<E: crate::write::Entry>(path: impl AsRef<Path>, name: &str, mut opts: WriteOptions) -> Result<ParallelWriter> {
        for f in E::streamer_fields() {
            opts.columns.set_streamer(&f);
        }
        Self::create_with_types(path, name, &E::fields(), opts)
    }

    /// Creates a file from a schema of parsed type expressions (untyped records included), as
    /// [`crate::write::Writer::create_with_types`].
    pub fn create_with_types(
        path: impl AsRef<Path>,
        name: &str,
        schema: &[(String, crate::logical::typename::TypeExpr)],
        opts: WriteOptions,
    ) -> Result<ParallelWriter> {
        Self::build(name, schema, opts, |desc, opts| Dataset::create(path, desc, opts))
    }

    /// A parallel writer of the dataset that `start` creates for the descriptor of `schema` (the
    /// schema is checked before anything is written).
    pub(crate) fn build(
        name: &str,
        schema: &[(String, crate::logical::typename::TypeExpr)],
        opts: WriteOptions,
        start: impl FnOnce(Descriptor, WriteOptions) -> Result<Dataset>,
    ) -> Result<ParallelWriter> {
        let mut desc = Descriptor { name: name.into(), writer: format!("rntuple v{} (parallel)", env!("CARGO_PKG_VERSION")), ..Default::default() };
        let opts = WriteOptions { use_implicit_mt: false, ..opts };
        let template = ClusterBuilder::new(&mut desc, schema, opts.clone(), ())?;
        let ds = start(desc, opts.clone())?;
        let target = ds.target()?;
        Ok(ParallelWriter {
            shared: Arc::new(Shared {
                dataset: Mutex::new(ds),
                target,
                template,
                opts,
                live: AtomicUsize::new(0),
                finished: Mutex::new(Vec::new()),
                failure: Mutex::new(None),
                pool: Mutex::new(Vec::new()),
            }),
            committed: Mutex::new(false),
        })
    }

    /// A new fill context (thread-safe; give each thread its own).
    pub fn fill_context(&self) -> Result<FillContext> {
        if self.is_committed() {
            return Err(Error::Invalid("the parallel writer was committed already".into()));
        }
        self.shared.live.fetch_add(1, Ordering::SeqCst);
        let out = ContextOut { shared: self.shared.clone(), staged: None, m: ContextMetrics::default(), started: Instant::now() };
        let mut b = self.shared.template.blank(self.shared.opts.clone(), out);
        if let Ok(mut pool) = self.shared.pool.lock() {
            b.recycle(pool.drain(..));
        }
        Ok(FillContext::new(b))
    }

    fn is_committed(&self) -> bool {
        self.committed.lock().map(|c| *c).unwrap_or(true)
    }

    /// Metrics of the fill contexts that have ended, in the order they ended.
    pub fn metrics(&self) -> Vec<ContextMetrics> {
        self.shared.finished.lock().map(|m| m.clone()).unwrap_or_default()
    }

    /// Entries committed so far.
    pub fn num_entries(&self) -> u64 {
        self.shared.dataset.lock().map(|d| d.n_entries).unwrap_or(0)
    }

    /// Makes the file on disk a complete ROOT file holding every cluster committed (and written)
    /// so far by any context, while the contexts go on (see `Writer::checkpoint`); the clusters
    /// the contexts are still filling are not in it.
    pub fn checkpoint(&self) -> Result<()> {
        if self.is_committed() {
            return Err(Error::Invalid("the parallel writer was committed already".into()));
        }
        let mut ds = self.shared.dataset.lock().map_err(|_| Error::internal("the parallel writer's lock is poisoned"))?;
        ds.checkpoint()
    }

    /// Checkpoints made so far (with `checkpoint_clusters`, the one at creation included).
    pub fn num_checkpoints(&self) -> u64 {
        self.shared.dataset.lock().map(|d| d.checkpoints()).unwrap_or(0)
    }

    /// Commits the dataset and returns the file size. Every fill context must have ended
    /// (finished or dropped) before: a live context is an error, and the call can be repeated
    /// once it ended. A context that failed to write its data makes the commit fail.
    pub fn commit(&self) -> Result<u64> {
        let mut committed = self.committed.lock().map_err(|_| Error::internal("the parallel writer's state is poisoned"))?;
        if *committed {
            return Err(Error::Invalid("the parallel writer was committed already".into()));
        }
        let live = self.shared.live.load(Ordering::SeqCst);
        if live > 0 {
            return Err(Error::Invalid(format!("{live} fill context(s) still alive: finish or drop them before committing")));
        }
        if let Some(f) = self.shared.failure.lock().ok().and_then(|f| f.clone()) {
            *committed = true;
            let e = Error::Invalid(format!("a fill context failed to write its clusters, the RNTuple is incomplete: {f}"));
            if let Ok(mut ds) = self.shared.dataset.lock() {
                ds.fail(&e.to_string());
            }
            return Err(e);
        }
        let mut ds = self.shared.dataset.lock().map_err(|_| Error::internal("the parallel writer's lock is poisoned"))?;
        *committed = true;
        if let Ok(mut pool) = self.shared.pool.lock() {
            *pool = Vec::new();
        }
        ds.commit()
    }
}

impl ParallelWriter {
    /// A copy of the RNTuple's descriptor as it stands (the schema; the clusters committed so far).
    pub(crate) fn descriptor(&self) -> Result<crate::format::descriptor::Descriptor> {
        Ok(self.shared.dataset.lock().map_err(|_| Error::internal("the parallel writer's lock is poisoned"))?.desc.clone())
    }

    /// Runs `f` on the dataset under the writer's lock (for what goes in before the commit, such
    /// as attribute sets), and the writer's options.
    pub(crate) fn with_dataset<R>(&self, f: impl FnOnce(&mut Dataset, &WriteOptions) -> Result<R>) -> Result<R> {
        let mut ds = self.shared.dataset.lock().map_err(|_| Error::internal("the parallel writer's lock is poisoned"))?;
        f(&mut ds, &self.shared.opts)
    }

    /// Gives the dataset up without committing it (as `Dataset::abort`: a new file written
    /// under a temporary name is removed), saying `why`; a later [`ParallelWriter::commit`] (or
    /// the drop) fails with that reason instead of writing an incomplete RNTuple.
    pub fn abort(&self, why: &str) {
        self.shared.fail(&Error::Invalid(why.to_string()));
        if let Ok(mut committed) = self.committed.lock() {
            if let Ok(mut ds) = self.shared.dataset.lock() {
                ds.fail(why);
            }
            *committed = true;
        }
    }
}

impl Drop for ParallelWriter {
    fn drop(&mut self) {
        // Not while a panic unwinds: a new file's temporary file is then removed.
        if !self.is_committed()
            && !std::thread::panicking()
            && let Err(e) = self.commit()
        {
            let name = self.shared.dataset.lock().map(|d| d.name().to_string()).unwrap_or_default();
            eprintln!("rntuple: committing RNTuple '{name}' on drop failed: {e}");
        }
    }
}

/// The destination of a [`ParallelWriter`]'s fill contexts: the writer's dataset (the
/// [`FillContext`]'s default).
pub struct ContextOut {
    shared: Arc<Shared>,
    /// Sealed clusters waiting for `commit_staged_clusters` (staged committing on).
    staged: Option<Vec<SealedCluster>>,
    m: ContextMetrics,
    started: Instant,
}

impl ClusterOut for ContextOut {
    fn cluster(&mut self, c: &mut SealedCluster) -> Result<()> {
        match &mut self.staged {
            Some(s) => {
                s.push(std::mem::take(c));
                Ok(())
            }
            None => self.shared.commit(std::slice::from_mut(c), &mut self.m),
        }
    }

    fn page(&mut self, bytes: &[u8]) -> Result<u64> {
        let sh = self.shared.clone();
        let r = (|| {
            let plan = KeyPlan::new(&[bytes.len() as u64], sh.opts.max_key_size)?;
            let mut ds = sh.lock(&mut self.m)?;
            let t = Instant::now();
            let r = (|| -> Result<_> {
                let placement = ds.reserve(plan)?;
                if !sh.opts.write_outside_lock {
                    write_placement(&sh.target, &placement, &[bytes])?;
                }
                Ok(placement)
            })();
            drop(ds);
            self.m.hold_seconds += t.elapsed().as_secs_f64();
            let placement = r?;
            if sh.opts.write_outside_lock {
                write_placement(&sh.target, &placement, &[bytes])?;
            }
            self.m.bytes_written += placement.total();
            Ok(placement.offsets()[0])
        })();
        if let Err(e) = &r {
            sh.fail(e);
        }
        r
    }
}

/// Where a fill context's full clusters go, and how the context ends: a [`ParallelWriter`]'s
/// dataset ([`ContextOut`]) or a rank of a distributed writer
/// ([`crate::write::distributed::RankFillContext`]). The fill methods of [`FillContext`] are
/// written once over it; what differs is the cluster's way out and the end.
///
/// Sealed: only this crate's destinations implement it (its supertrait, the way out of a cluster
/// builder, is the crate's own); outside, it names what [`FillContext::finish`] returns.
// Public so that `finish` can return its associated type; its workings take the crate's cluster
// builder, which is not.
#[allow(private_bounds, private_interfaces)]
pub trait FillDestination: ClusterOut + Sized {
    /// What [`FillContext::finish`] returns.
    type Finished;
    /// The context, as the drop's error message names it.
    #[doc(hidden)]
    const WHAT: &'static str;
    /// Ends the context (once, by [`FillContext::finish`] or by the drop): flushes the last
    /// cluster and hands everything still held on.
    #[doc(hidden)]
    fn end(b: &mut ClusterBuilder<Self>) -> Result<Self::Finished>;
}

/// One thread's handle for filling entries into a [`ParallelWriter`] (`Send`, not shared), or, as
/// `write::distributed::RankFillContext`, into a rank of a distributed writer.
///
/// Its entries stay in order. Full clusters are committed as they fill up (or staged, see
/// [`FillContext::enable_staged_cluster_committing`]). Dropping the context flushes its last
/// cluster; [`FillContext::finish`] does the same and returns errors and metrics.
///
/// ```
/// use rntuple::write::{ParallelWriter, WriteOptions};
/// use rntuple::Value;
/// # let path = std::env::temp_dir().join(format!("rntuple-doc-FillContext-{}.root", std::process::id()));
/// let w = ParallelWriter::create(&path, "Events", &[("x", "std::int32_t")], WriteOptions::default())?;
/// let mut ctx = w.fill_context()?;
/// ctx.enable_staged_cluster_committing(true)?;
/// ctx.fill(&Value::Record(vec![("x".into(), Value::Int(1))]))?;
/// ctx.flush_cluster()?; // sealed and staged, not committed
/// assert_eq!((ctx.num_entries(), w.num_entries()), (1, 0));
/// ctx.commit_staged_clusters()?;
/// assert_eq!((w.num_entries(), ctx.metrics().clusters), (1, 1));
/// ctx.finish()?;
/// w.commit()?;
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct FillContext<O: FillDestination = ContextOut> {
    b: ClusterBuilder<O>,
    done: bool,
}

impl<O: FillDestination> FillContext<O> {
    /// A context filling `b`, whose output is its destination.
    pub(crate) fn new(b: ClusterBuilder<O>) -> Self {
        FillContext { b, done: false }
    }

    /// Fills one entry (see `Writer::fill`).
    pub fn fill(&mut self, entry: &Value) -> Result<()> {
        self.b.fill(entry)
    }

    /// Fills one typed entry (see `Writer::fill_typed`).
    pub fn fill_typed<E: crate::write::Entry>(&mut self, entry: &E) -> Result<()> {
        self.b.fill_typed(entry)
    }

    /// Appends the rows of an Arrow record batch (see `Writer::append_batch`).
    pub fn append_batch(&mut self, batch: &RecordBatch) -> Result<()> {
        self.b.append_batch(batch)
    }

    /// Entries filled into this context.
    pub fn num_entries(&self) -> u64 {
        self.b.filled
    }

    /// Seals the current cluster and hands it on: a parallel writer's context commits it (or
    /// stages it when staged committing is on); a rank's context asks for its range (it is written
    /// when the next cluster is sealed, or when the context ends).
    pub fn flush_cluster(&mut self) -> Result<()> {
        self.b.flush_cluster()
    }

    /// How full the current cluster is, as a fraction of the size at which it is flushed by
    /// itself (ROOT's rule: the target compressed size over the compression ratio seen so far).
    /// With [`FillContext::flush_cluster`], an application ends clusters early at a boundary of its
    /// own without making tiny ones (a skim does at the end of an input part).
    ///
    /// ```
    /// use rntuple::write::{ParallelWriter, WriteOptions};
    /// use rntuple::Value;
    /// let path = std::env::temp_dir().join("rntuple-doc-cluster-fill.root");
    /// let w = ParallelWriter::create(&path, "t", &[("x", "std::int64_t")], WriteOptions::default())?;
    /// let mut ctx = w.fill_context()?;
    /// assert_eq!(ctx.cluster_fill(), 0.0);
    /// for i in 0..1000 {
    ///     ctx.fill(&Value::Record(vec![("x".into(), Value::Int(i))]))?;
    /// }
    /// assert!(ctx.cluster_fill() > 0.0 && ctx.cluster_fill() < 1.0);
    /// ctx.flush_cluster()?;
    /// assert_eq!(ctx.cluster_fill(), 0.0);
    /// ctx.finish()?;
    /// w.commit()?;
    /// # Ok::<(), rntuple::Error>(())
    /// ```
    pub fn cluster_fill(&self) -> f64 {
        self.b.cluster_fill()
    }

    /// Hands on a cluster sealed elsewhere (pages copied as stored from another file, as a skim
    /// does) after the entries filled so far, which are flushed first so that the context's entries
    /// keep their order. Its equal pages are stored once with same-page merging on (the input's
    /// own writer may not have merged them).
    pub(crate) fn append_sealed_cluster(&mut self, c: &mut SealedCluster) -> Result<()> {
        self.b.flush_cluster()?;
        if self.b.opts.same_page_merging {
            c.merge_same_pages();
        }
        self.b.out.cluster(c)
    }

    /// Flushes the last cluster, hands on what the context still holds and ends the context: a
    /// parallel writer's context commits its staged clusters and returns its metrics
    /// ([`ContextMetrics`]); a rank's adds its metrics to the rank's (see
    /// `write::distributed::RankWriter::finish`) and returns `()`.
    pub fn finish(mut self) -> Result<O::Finished> {
        self.done = true;
        O::end(&mut self.b)
    }
}

impl<O: FillDestination> Drop for FillContext<O> {
    fn drop(&mut self) {
        if !std::mem::replace(&mut self.done, true)
            && let Err(e) = O::end(&mut self.b)
        {
            eprintln!("rntuple: ending {} failed: {e}", O::WHAT);
        }
    }
}

impl FillContext<ContextOut> {
    /// Staged committing (as ROOT's `EnableStagedClusterCommitting`): full clusters are kept,
    /// sealed, until [`FillContext::commit_staged_clusters`], so that the application decides
    /// the order of clusters in the file (for instance under its own lock, by luminosity block).
    /// Turning it off commits the staged clusters.
    pub fn enable_staged_cluster_committing(&mut self, on: bool) -> Result<()> {
        if on {
            self.b.out.staged.get_or_insert_with(Vec::new);
            Ok(())
        } else {
            self.commit_staged_clusters()?;
            self.b.out.staged = None;
            Ok(())
        }
    }

    /// Commits the staged clusters, in the order they were sealed, under one lock acquisition;
    /// their page buffers then go back to the builder for the next clusters.
    pub fn commit_staged_clusters(&mut self) -> Result<()> {
        ContextOut::commit_staged(&mut self.b)
    }

    /// What this context did so far.
    pub fn metrics(&self) -> ContextMetrics {
        ContextOut::metrics(&self.b)
    }
}

impl ContextOut {
    fn commit_staged(b: &mut ClusterBuilder<ContextOut>) -> Result<()> {
        let out = &mut b.out;
        let Some(staged) = &mut out.staged else { return Ok(()) };
        let mut clusters = std::mem::take(staged);
        let r = out.shared.commit(&mut clusters, &mut out.m);
        b.recycle(clusters.into_iter().flat_map(|c| c.chunks));
        r
    }

    fn metrics(b: &ClusterBuilder<ContextOut>) -> ContextMetrics {
        let mut m = b.out.m.clone();
        m.entries = b.filled;
        m.compress_seconds = b.compress_seconds();
        m.wall_seconds = b.out.started.elapsed().as_secs_f64();
        m
    }
}

#[allow(private_interfaces)]
impl FillDestination for ContextOut {
    type Finished = ContextMetrics;
    const WHAT: &'static str = "a fill context";

    fn end(b: &mut ClusterBuilder<ContextOut>) -> Result<ContextMetrics> {
        let r = (|| {
            b.flush_cluster()?;
            ContextOut::commit_staged(b)
        })();
        if let Err(e) = &r {
            b.out.shared.fail(e);
        }
        let m = ContextOut::metrics(b);
        let sh = b.out.shared.clone();
        // The page buffers go to the writer's pool for the next context, up to a cluster's worth.
        if let Ok(mut pool) = sh.pool.lock() {
            let mut bytes: u64 = pool.iter().map(|b| b.capacity() as u64).sum();
            for buf in b.take_pool() {
                if bytes >= sh.opts.approx_zipped_cluster_size {
                    break;
                }
                bytes += buf.capacity() as u64;
                pool.push(buf);
            }
        }
        if let Ok(mut f) = sh.finished.lock() {
            f.push(m.clone());
        }
        sh.live.fetch_sub(1, Ordering::SeqCst);
        r.map(|_| m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    /// Uncompressed, 4 KiB pages and 64 KiB clusters: a few hundred entries make a cluster.
    fn small_clusters() -> WriteOptions {
        WriteOptions {
            compression: crate::write::Compression::NONE,
            max_unzipped_page_size: 4 << 10,
            approx_zipped_cluster_size: 64 << 10,
            ..WriteOptions::default()
        }
    }

    fn fill(ctx: &mut FillContext, from: u64, n: u64) {
        for i in from..from + n {
            ctx.fill(&Value::Record(vec![("id".into(), Value::UInt(i))])).unwrap_or_else(|e| panic!("{e}"));
        }
    }

    fn addresses(bufs: &[Vec<u8>]) -> HashSet<usize> {
        bufs.iter().map(|b| b.as_ptr() as usize).collect()
    }

    /// The page buffers of staged clusters go back to the builder once committed, and the next
    /// cluster's pages are sealed in them (pooled buffers are alive, so no other allocation can
    /// have their addresses).
    #[test]
    fn staged_clusters_hand_their_page_buffers_back_after_the_commit() {
        let path = std::env::temp_dir().join(format!("rntuple-parallel-reuse-staged-{}.root", std::process::id()));
        let w = ParallelWriter::create(&path, "Events", &[("id", "std::uint64_t")], small_clusters()).unwrap_or_else(|e| panic!("{e}"));
        let mut ctx = w.fill_context().unwrap_or_else(|e| panic!("{e}"));
        ctx.enable_staged_cluster_committing(true).unwrap_or_else(|e| panic!("{e}"));
        fill(&mut ctx, 0, 20_000);
        ctx.flush_cluster().unwrap_or_else(|e| panic!("{e}"));
        let staged = ctx.b.out.staged.as_ref().map(|s| s.len()).unwrap_or(0);
        assert!(staged >= 2, "several clusters staged ({staged})");
        ctx.commit_staged_clusters().unwrap_or_else(|e| panic!("{e}"));
        let pooled = addresses(ctx.b.cols.pooled());
        assert!(pooled.len() >= 10, "the committed clusters' page buffers are pooled ({})", pooled.len());
        fill(&mut ctx, 20_000, 5_000);
        ctx.flush_cluster().unwrap_or_else(|e| panic!("{e}"));
        let next: Vec<usize> = ctx.b.out.staged.iter().flatten().flat_map(|c| &c.chunks).map(|b| b.as_ptr() as usize).collect();
        assert!(!next.is_empty());
        assert!(next.iter().all(|a| pooled.contains(a)), "every page of the next cluster sealed in a reused buffer");
        ctx.finish().unwrap_or_else(|e| panic!("{e}"));
        w.commit().unwrap_or_else(|e| panic!("{e}"));
        let f = crate::RNTupleFile::open(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(f.reader("Events").unwrap_or_else(|e| panic!("{e}")).num_entries(), 25_000);
        let _ = std::fs::remove_file(&path);
    }

    /// Compressed pages are held in buffers of their size, which are not pooled after the commit:
    /// grown for the next page they would be of no use, and until then hold memory. The pool keeps
    /// only buffers that can take a whole page.
    #[test]
    fn compressed_page_copies_are_not_pooled() {
        let path = std::env::temp_dir().join(format!("rntuple-parallel-pool-zipped-{}.root", std::process::id()));
        let page = 64u64 << 10;
        let opts = WriteOptions {
            compression: crate::write::Compression::zstd(5),
            max_unzipped_page_size: page,
            approx_zipped_cluster_size: 1 << 20,
            ..WriteOptions::default()
        };
        let w = ParallelWriter::create(&path, "Events", &[("id", "std::uint64_t")], opts).unwrap_or_else(|e| panic!("{e}"));
        let mut ctx = w.fill_context().unwrap_or_else(|e| panic!("{e}"));
        // 24 random bits per value: pages compress to about 3/8 of their size.
        for i in 0..200_000u64 {
            let mut z = i.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            let v = (z ^ (z >> 31)) & 0xFF_FFFF;
            ctx.fill(&Value::Record(vec![("id".into(), Value::UInt(v))])).unwrap_or_else(|e| panic!("{e}"));
        }
        ctx.flush_cluster().unwrap_or_else(|e| panic!("{e}"));
        let m = ctx.metrics();
        assert!(m.clusters >= 1);
        let pooled = ctx.b.cols.pooled();
        assert!(!pooled.is_empty(), "the compressor's spare buffers are pooled");
        assert!(pooled.iter().all(|b| b.capacity() as u64 >= page), "{:?}", pooled.iter().map(|b| b.capacity()).collect::<Vec<_>>());
        ctx.finish().unwrap_or_else(|e| panic!("{e}"));
        w.commit().unwrap_or_else(|e| panic!("{e}"));
        let f = crate::RNTupleFile::open(&path).unwrap_or_else(|e| panic!("{e}"));
        let r = f.reader("Events").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r.num_entries(), 200_000);
        let pages: Vec<u64> = r.descriptor().clusters.iter().flat_map(|c| c.columns.iter().flatten()).flat_map(|c| &c.pages).map(|p| p.locator.size).collect();
        assert!(pages.iter().filter(|&&s| s > page / 4 && s < page / 2).count() > 10, "pages held in copies a quarter to a half page long: {pages:?}");
        let _ = std::fs::remove_file(&path);
    }

    /// Clusters committed at once leave their buffers in the builder, and a context that ends
    /// hands its buffers to the next context, whose first cluster reuses them.
    #[test]
    fn page_buffers_are_reused_across_clusters_and_contexts() {
        let path = std::env::temp_dir().join(format!("rntuple-parallel-reuse-contexts-{}.root", std::process::id()));
        let w = ParallelWriter::create(&path, "Events", &[("id", "std::uint64_t")], small_clusters()).unwrap_or_else(|e| panic!("{e}"));
        let mut a = w.fill_context().unwrap_or_else(|e| panic!("{e}"));
        assert!(a.b.cols.pooled().is_empty(), "the first context starts without buffers");
        fill(&mut a, 0, 30_000);
        a.flush_cluster().unwrap_or_else(|e| panic!("{e}"));
        assert!(a.metrics().clusters >= 2);
        let pooled = addresses(a.b.cols.pooled());
        assert!(pooled.len() >= 10, "committed clusters leave their page buffers ({})", pooled.len());
        a.finish().unwrap_or_else(|e| panic!("{e}"));
        let handed = addresses(&w.shared.pool.lock().unwrap_or_else(|e| panic!("{e}")));
        assert!(handed.len() >= 10, "the ended context's buffers wait in the writer ({})", handed.len());
        let mut b = w.fill_context().unwrap_or_else(|e| panic!("{e}"));
        assert!(w.shared.pool.lock().unwrap_or_else(|e| panic!("{e}")).is_empty());
        assert_eq!(addresses(b.b.cols.pooled()), handed, "the next context takes them");
        b.enable_staged_cluster_committing(true).unwrap_or_else(|e| panic!("{e}"));
        fill(&mut b, 30_000, 2_000);
        b.flush_cluster().unwrap_or_else(|e| panic!("{e}"));
        let first: Vec<usize> = b.b.out.staged.iter().flatten().flat_map(|c| &c.chunks).map(|c| c.as_ptr() as usize).collect();
        assert!(!first.is_empty());
        assert!(first.iter().all(|p| handed.contains(p)), "the next context's first cluster is sealed in reused buffers");
        b.finish().unwrap_or_else(|e| panic!("{e}"));
        w.commit().unwrap_or_else(|e| panic!("{e}"));
        assert!(w.shared.pool.lock().unwrap_or_else(|e| panic!("{e}")).is_empty(), "the commit releases the buffers");
        let f = crate::RNTupleFile::open(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(f.reader("Events").unwrap_or_else(|e| panic!("{e}")).num_entries(), 32_000);
        let _ = std::fs::remove_file(&path);
    }
}
