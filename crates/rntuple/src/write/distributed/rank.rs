//! One rank of a distributed writer: fill contexts that build and compress their clusters as the
//! parallel writer's do, and one rank-level route by which a full cluster learns where it goes.
//! With an [`OffsetService`] (strategies `metadata`, `one-sided`, `file-lock`) the rank reserves
//! the cluster's byte range, lays out its keys there itself and writes them with positioned
//! writes; with a [`ClusterShipper`] (`send-data`) it hands the whole cluster to the aggregator,
//! which does the same on rank 0 ([`RankWriter::accept_shipped`]).

use crate::error::{Error, Result};
use crate::format::descriptor::Descriptor;
use crate::logical::typename::TypeExpr;
use crate::storage::container::key_plan::KeyPlan;
use crate::storage::container::positioned::{write_placement, Placement, WriteTarget};
use crate::storage::local::file_io;
use crate::write::cluster::builder::ClusterBuilder;
use crate::write::distributed::wire::{decode_shipped, encode_cluster, encode_placed, PlacedCluster};
use crate::write::options::WriteOptions;
use crate::write::parallel::{FillContext, FillDestination};
use crate::write::cluster::sealed::{ClusterOut, PagePosition, SealedCluster};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

/// Hands out byte ranges of the shared file: an aggregator on rank 0, a one-sided counter or a
/// counter under a file lock. One per rank, shared by the rank's fill contexts.
///
/// A reservation may be split in two: [`OffsetService::request`] asks and returns at once,
/// [`OffsetService::complete`] waits for the answer. A fill context asks for a cluster's range
/// when the cluster is sealed and waits for it only when the next cluster is sealed (or the
/// context ends), so that a slow answer (a busy aggregator, a remote rank 0) overlaps the
/// compression of the next cluster instead of stalling the rank. The defaults answer at once.
pub trait OffsetService: Send + Sync {
    /// Reserves `len` bytes (a multiple of the alignment) and returns their first offset.
    fn reserve(&self, len: u64) -> Result<u64>;

    /// Asks for `len` bytes; the offset comes from [`OffsetService::complete`]. Ranges are handed
    /// out in the order they were asked for.
    fn request(&self, len: u64) -> Result<Ticket> {
        self.reserve(len).map(Ticket::Ready)
    }

    /// Waits for the offset a request was given.
    fn complete(&self, t: Ticket) -> Result<u64> {
        match t {
            Ticket::Ready(at) => Ok(at),
            Ticket::Pending(n) => Err(Error::Internal(format!("request {n} of an offset service that answers at once"))),
        }
    }
}

/// A request for a byte range: answered already, or the number of a request in flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ticket {
    /// The range starts here.
    Ready(u64),
    /// The answer to this rank's request number `n` is still to be received.
    Pending(u64),
}

/// Sends a whole encoded cluster to the aggregator, which places and writes it (`send-data`).
pub trait ClusterShipper: Send + Sync {
    /// Ships one cluster (the encoding of `write::distributed::wire`).
    fn ship(&self, blob: Vec<u8>) -> Result<()>;
}

/// Checkpoints: where a rank reports the clusters it made durable (written and synced), for
/// rank 0's [`crate::write::distributed::Assembler::add_durable`]: a message to rank 0, or on
/// rank 0 a channel to its checkpointing thread.
pub trait DurableReporter: Send + Sync {
    /// Reports one encoded list of placed clusters (`wire::encode_placed`).
    fn report(&self, list: Vec<u8>) -> Result<()>;
}

/// How a rank's clusters reach the file.
#[derive(Clone)]
pub enum Route {
    /// Reserve a range, then write it from this rank.
    Offsets(Arc<dyn OffsetService>),
    /// Ship the cluster to the aggregator.
    Ship(Arc<dyn ClusterShipper>),
}

/// Where and how a rank writes.
#[derive(Debug, Clone)]
pub struct RankLayout {
    /// Every reserved range starts at a multiple of this (a power of two) and is padded to one.
    pub align: u64,
    /// Write through `O_DIRECT` (the alignment must then be a multiple of 4096).
    pub direct_io: bool,
    /// Largest single write in bytes (0: unbounded).
    pub max_write: u64,
}

impl RankLayout {
    /// Checks the layout; the error names the option.
    pub fn validate(&self) -> Result<()> {
        if !self.align.is_power_of_two() || self.align > 1 << 30 {
            return Err(Error::Invalid(format!("alignment {}: must be a power of two of at most 1 GiB", self.align)));
        }
        if self.direct_io && self.align < 4096 {
            return Err(Error::Invalid(format!("direct I/O needs an alignment of at least 4096 bytes, not {}", self.align)));
        }
        if self.direct_io && !self.max_write.is_multiple_of(4096) {
            return Err(Error::Invalid(format!("direct I/O needs a write block that is a multiple of 4096 bytes, not {}", self.max_write)));
        }
        Ok(())
    }
}

/// What a rank did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RankMetrics {
    /// Entries filled.
    pub entries: u64,
    /// Clusters written (or shipped).
    pub clusters: u64,
    /// Seconds the contexts spent compressing and checksumming pages.
    pub compress_seconds: f64,
    /// Seconds spent waiting for an offset (or for the aggregator to take a shipped cluster).
    pub wait_seconds: f64,
    /// Seconds spent writing.
    pub write_seconds: f64,
    /// Bytes written by this rank (keys, pages and padding; for `send-data` on rank 0, the
    /// clusters it wrote for the others included).
    pub bytes_written: u64,
    /// Reservations asked for (or clusters shipped): messages to the aggregator or lock rounds.
    pub requests: u64,
}

impl RankMetrics {
    fn add(&mut self, o: &RankMetrics) {
        self.entries += o.entries;
        self.clusters += o.clusters;
        self.compress_seconds += o.compress_seconds;
        self.wait_seconds += o.wait_seconds;
        self.write_seconds += o.write_seconds;
        self.bytes_written += o.bytes_written;
        self.requests += o.requests;
    }
}

struct RankShared {
    template: ClusterBuilder<()>,
    /// Columns of the schema (a shipped cluster must have as many).
    n_columns: usize,
    opts: WriteOptions,
    layout: RankLayout,
    route: Route,
    target: Option<WriteTarget>,
    placed: Mutex<Vec<PlacedCluster>>,
    metrics: Mutex<RankMetrics>,
    live: AtomicUsize,
    failure: Mutex<Option<String>>,
    /// With checkpoints: where written clusters are reported, and a handle to sync them first.
    reporter: OnceLock<Arc<dyn DurableReporter>>,
    sync: Option<std::fs::File>,
}

impl RankShared {
    fn fail(&self, e: &Error) {
        if let Ok(mut f) = self.failure.lock() {
            f.get_or_insert_with(|| e.to_string());
        }
    }

    /// Reserves a range for `c` through `svc`, writes its keys there and records it.
    fn place(&self, svc: &dyn OffsetService, c: SealedCluster, m: &mut RankMetrics) -> Result<()> {
        let asked = self.ask(svc, &c, m)?;
        self.write(svc, c, asked, m).map(|_| ())
    }

    /// Asks `svc` for the range of `c`'s keys.
    fn ask(&self, svc: &dyn OffsetService, c: &SealedCluster, m: &mut RankMetrics) -> Result<Asked> {
        let plan = KeyPlan::new(&c.chunk_lens(), self.opts.max_key_size)?;
        let len = Placement::reserved_len(&plan, self.layout.align);
        let t = Instant::now();
        let ticket = svc.request(len)?;
        m.wait_seconds += t.elapsed().as_secs_f64();
        m.requests += 1;
        Ok(Asked { plan, len, ticket })
    }

    /// Waits for the range asked for `c`, writes its keys there and records it (its metadata moved
    /// into the rank's list); returns its page buffers for reuse.
    fn write(&self, svc: &dyn OffsetService, c: SealedCluster, asked: Asked, m: &mut RankMetrics) -> Result<Vec<Vec<u8>>> {
        let target = self.target.as_ref().ok_or_else(|| Error::internal("a rank without a file to write"))?;
        let Asked { plan, len, ticket } = asked;
        let t = Instant::now();
        let start = svc.complete(ticket)?;
        m.wait_seconds += t.elapsed().as_secs_f64();
        let placement = Placement::at(plan, start, self.layout.align)?;
        let t = Instant::now();
        write_placement(target, &placement, &c.chunks)?;
        m.write_seconds += t.elapsed().as_secs_f64();
        m.bytes_written += len;
        m.clusters += 1;
        let offsets = placement.offsets();
        let SealedCluster { n_entries, chunks, mut columns, compression, checksums } = c;
        for p in columns.iter_mut().flat_map(|col| &mut col.pages) {
            if let PagePosition::Chunk(i) = p.position {
                let at = offsets.get(i).ok_or_else(|| Error::Internal(format!("page in chunk {i} of a cluster of {} chunks", offsets.len())))?;
                p.position = PagePosition::FileOffset(*at);
            }
        }
        let cluster = SealedCluster { n_entries, chunks: Vec::new(), columns, compression, checksums };
        let placed = PlacedCluster { start, reserved: len, cluster };
        if let Some(r) = self.reporter.get() {
            // Durable before rank 0 may list it in a checkpoint.
            let t = Instant::now();
            if let Some(f) = &self.sync {
                file_io::sync_data(f).map_err(|e| Error::io(format!("syncing the cluster written at offset {start}"), e))?;
            }
            m.write_seconds += t.elapsed().as_secs_f64();
            r.report(encode_placed(std::slice::from_ref(&placed)))?;
        }
        self.placed.lock().map_err(|_| Error::internal("a rank's cluster list is poisoned"))?.push(placed);
        Ok(chunks)
    }

    fn ship(&self, c: &SealedCluster, m: &mut RankMetrics) -> Result<()> {
        match &self.route {
            Route::Offsets(_) => Err(Error::internal("shipping a cluster on a rank that writes its own")),
            Route::Ship(s) => {
                let mut blob = Vec::with_capacity(c.chunks.iter().map(Vec::len).sum::<usize>() + 64 * c.columns.len() + 64);
                encode_cluster(c, &mut blob);
                let t = Instant::now();
                s.ship(blob)?;
                m.wait_seconds += t.elapsed().as_secs_f64();
                m.requests += 1;
                m.clusters += 1;
                Ok(())
            }
        }
    }
}

/// One rank's writer: its fill contexts, its route to the file and the clusters it placed.
///
/// Every rank builds the same schema descriptor from the same schema, so the columns of its
/// clusters are the columns rank 0's header describes. Cloning gives another handle on the
/// same rank (for the aggregator thread of rank 0).
#[derive(Clone)]
pub struct RankWriter {
    shared: Arc<RankShared>,
}

impl RankWriter {
    /// The RNTuple's descriptor for `schema` (what rank 0 writes as the header; every rank
    /// builds the same), with the options the ranks write with.
    pub fn descriptor(name: &str, schema: &[(String, TypeExpr)], opts: &WriteOptions) -> Result<Descriptor> {
        Ok(Self::template(name, schema, opts)?.1)
    }

    fn template(name: &str, schema: &[(String, TypeExpr)], opts: &WriteOptions) -> Result<(ClusterBuilder<()>, Descriptor, WriteOptions)> {
        opts.validate()?;
        if !opts.buffered {
            return Err(Error::Invalid("the distributed writer writes whole clusters: 'buffered' must stay on".into()));
        }
        if opts.update_existing_file {
            return Err(Error::Unsupported("the distributed writer creates its file: 'update_existing_file' is not supported".into()));
        }
        let mut desc = Descriptor { name: name.into(), writer: format!("rntuple v{} (distributed)", env!("CARGO_PKG_VERSION")), ..Default::default() };
        let opts = WriteOptions { use_implicit_mt: false, stream_uncompressed_pages: false, ..opts.clone() };
        let template = ClusterBuilder::new(&mut desc, schema, opts.clone(), ())?;
        Ok((template, desc, opts))
    }

    /// A rank's writer for `schema`, writing into the file at `file` (rank 0's file, by its
    /// writing path: [`crate::write::distributed::Assembler::writing_path`]; `None` with a
    /// shipping route).
    pub fn new(name: &str, schema: &[(String, TypeExpr)], opts: WriteOptions, layout: RankLayout, route: Route, file: Option<&Path>) -> Result<RankWriter> {
        layout.validate()?;
        let (template, desc, opts) = Self::template(name, schema, &opts)?;
        let target = match (&route, file) {
            (Route::Offsets(_), Some(p)) => Some(WriteTarget::open(p, layout.direct_io, layout.max_write)?),
            (Route::Offsets(_), None) => return Err(Error::internal("a rank that writes needs the file's path")),
            (Route::Ship(_), _) => None,
        };
        // With checkpoints a rank syncs its clusters before reporting them (fdatasync flushes
        // the file's data written through any handle of this process).
        let sync = match (&target, file) {
            (Some(_), Some(p)) if opts.checkpoint_clusters > 0 => {
                Some(file_io::open_existing(p, false, 0).map_err(|e| Error::io(format!("opening {} to sync it", p.display()), e))?)
            }
            _ => None,
        };
        let shared = RankShared {
            template,
            n_columns: desc.columns.len(),
            opts,
            layout,
            route,
            target,
            placed: Mutex::new(Vec::new()),
            metrics: Mutex::new(RankMetrics::default()),
            live: AtomicUsize::new(0),
            failure: Mutex::new(None),
            reporter: OnceLock::new(),
            sync,
        };
        Ok(RankWriter { shared: Arc::new(shared) })
    }

    /// Checkpoints (`checkpoint_clusters` > 0): every cluster this rank writes from now on is
    /// synced and reported to `r` (set once, before the first fill context).
    pub fn report_durable_to(&self, r: Arc<dyn DurableReporter>) -> Result<()> {
        self.shared.reporter.set(r).map_err(|_| Error::internal("a rank's reporter set twice"))
    }

    /// A new fill context of this rank (give each thread its own).
    pub fn fill_context(&self) -> RankFillContext {
        self.shared.live.fetch_add(1, Ordering::SeqCst);
        let out = RankOut { shared: self.shared.clone(), m: RankMetrics::default(), pending: None };
        FillContext::new(self.shared.template.blank(self.shared.opts.clone(), out))
    }

    /// Rank 0's aggregator (`send-data`): places and writes a cluster another rank shipped,
    /// through this rank's own offset service; `from` names the sender in errors.
    pub fn accept_shipped(&self, blob: &[u8], from: &str) -> Result<()> {
        let Route::Offsets(svc) = &self.shared.route else {
            return Err(Error::internal("the aggregator's rank has no offset service"));
        };
        let c = decode_shipped(blob, from)?;
        if c.columns.len() != self.shared.n_columns {
            return Err(Error::Invalid(format!("{from} shipped a cluster of {} columns for a schema of {}", c.columns.len(), self.shared.n_columns)));
        }
        let mut m = RankMetrics::default();
        let r = self.shared.place(svc.as_ref(), c, &mut m);
        // The aggregator's work counts as rank 0's writing, not as clusters or waits of its own.
        if let Ok(mut rm) = self.shared.metrics.lock() {
            rm.write_seconds += m.write_seconds;
            rm.bytes_written += m.bytes_written;
        }
        if let Err(e) = &r {
            self.shared.fail(e);
        }
        r
    }

    /// Ends the rank's writing: every fill context must have ended. Returns the encoded list of
    /// the clusters it placed (for the gather to rank 0) and its metrics.
    pub fn finish(&self) -> Result<(Vec<u8>, RankMetrics)> {
        let live = self.shared.live.load(Ordering::SeqCst);
        if live > 0 {
            return Err(Error::Invalid(format!("{live} fill context(s) of this rank still alive: finish or drop them before committing")));
        }
        if let Some(f) = self.shared.failure.lock().ok().and_then(|f| f.clone()) {
            return Err(Error::Invalid(format!("a fill context of this rank failed to write its clusters: {f}")));
        }
        let placed = std::mem::take(&mut *self.shared.placed.lock().map_err(|_| Error::internal("a rank's cluster list is poisoned"))?);
        let m = self.shared.metrics.lock().map(|m| m.clone()).unwrap_or_default();
        Ok((encode_placed(&placed), m))
    }
}

/// A cluster's range, asked for and not yet written.
struct Asked {
    plan: KeyPlan,
    len: u64,
    ticket: Ticket,
}

/// The destination of a rank's fill contexts ([`RankFillContext`]): the rank's route to the file.
pub struct RankOut {
    shared: Arc<RankShared>,
    m: RankMetrics,
    /// The last cluster sealed, whose range was asked for: written when the next one is sealed
    /// or the context ends (so the answer overlaps the next cluster's filling and compression).
    pending: Option<(SealedCluster, Asked)>,
}

impl RankOut {
    /// Writes the pending cluster (waiting for its range); returns its page buffers for reuse.
    fn drain(&mut self) -> Result<Vec<Vec<u8>>> {
        let Some((c, asked)) = self.pending.take() else { return Ok(Vec::new()) };
        let Route::Offsets(svc) = &self.shared.route else {
            return Err(Error::internal("a pending cluster on a shipping rank"));
        };
        self.shared.write(svc.as_ref(), c, asked, &mut self.m)
    }

    fn take(&mut self, c: &mut SealedCluster) -> Result<()> {
        if !c.is_relocatable() {
            return Err(Error::internal("the distributed writer got a cluster whose pages were written one by one"));
        }
        let svc = match &self.shared.route {
            Route::Offsets(svc) => svc.clone(),
            Route::Ship(_) => return self.shared.ship(c, &mut self.m),
        };
        // Ask for this cluster's range first, then write the previous one: both answers are on
        // their way while the previous cluster is written.
        let asked = self.shared.ask(svc.as_ref(), c, &mut self.m)?;
        let reuse = self.drain()?;
        let sealed = std::mem::take(c);
        // The builder gets the written cluster's page buffers back for the next cluster.
        c.chunks = reuse;
        self.pending = Some((sealed, asked));
        Ok(())
    }
}

impl ClusterOut for RankOut {
    fn cluster(&mut self, c: &mut SealedCluster) -> Result<()> {
        let r = self.take(c);
        if let Err(e) = &r {
            self.shared.fail(e);
        }
        r
    }

    fn page(&mut self, _: &[u8]) -> Result<u64> {
        Err(Error::internal("the distributed writer writes whole clusters, not single pages"))
    }
}

#[allow(private_interfaces)]
impl FillDestination for RankOut {
    type Finished = ();
    const WHAT: &'static str = "a fill context of this rank";

    /// Flushes the last cluster, writes the pending one and adds the context's metrics to the
    /// rank's.
    fn end(b: &mut ClusterBuilder<RankOut>) -> Result<()> {
        let r = b.flush_cluster().and_then(|_| b.out.drain().map(|_| ()));
        let sh = b.out.shared.clone();
        if let Err(e) = &r {
            sh.fail(e);
        }
        let mut m = std::mem::take(&mut b.out.m);
        m.entries = b.filled;
        m.compress_seconds = b.compress_seconds();
        if let Ok(mut rm) = sh.metrics.lock() {
            rm.add(&m);
        }
        sh.live.fetch_sub(1, Ordering::SeqCst);
        r
    }
}

/// One thread's handle for filling entries into its rank (`Send`, not shared); its entries keep
/// their order in the file. The parallel writer's [`FillContext`] with the rank as destination:
/// [`FillContext::flush_cluster`] seals a cluster and asks for its range (it is written when the
/// next cluster is sealed, or when the context ends); [`FillContext::finish`] adds the context's
/// metrics to the rank's (see [`RankWriter::finish`]).
pub type RankFillContext = FillContext<RankOut>;
