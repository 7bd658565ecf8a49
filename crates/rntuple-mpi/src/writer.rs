//! The distributed writer: one RNTuple in one file written by every rank of a communicator.

use crate::aggregator::{serve, AggregatorStats, LocalCounter, ToAggregator};
use crate::checkpointer::{Local, LocalReports, Plan, Served, ToCheckpointer};
use crate::collective::{agree, all_ok, broadcast_bytes, gather_bytes};
use crate::file_lock::{side_file, FileLockCounter};
use crate::raw::{SendComm, WindowCounter};
use crate::strategy::Strategy;
use mpi::environment::Threading;
use mpi::topology::{Communicator, SimpleCommunicator};
use rntuple::logical::typename::TypeExpr;
use rntuple::write::distributed::{Assembler, OffsetService, RankFillContext, RankLayout, RankMetrics, RankWriter, Route};
use rntuple::write::{FillContext, ParallelWriter, WriteOptions};
use rntuple::{Error, Result, Value};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

/// Milliseconds between a failing rank's message and `MPI_Abort` ([`MpiWriter::abort`]).
pub const ABORT_GRACE_MS: u64 = 300;

/// The distributed options: the strategy and the cluster file system's settings.
#[derive(Debug, Clone)]
pub struct MpiOptions {
    /// How ranks learn where their clusters go (default `metadata`).
    pub strategy: Strategy,
    /// Every cluster starts at a multiple of this and is padded to one, so that no two ranks
    /// write into one file-system block (default 4096; e.g. 1 MiB for a Lustre stripe).
    pub align: u64,
    /// Write through `O_DIRECT` (aligned buffers; alignment at least 4096).
    pub direct_io: bool,
    /// Largest single write in bytes (default 4 MiB; 0: unbounded).
    pub max_write: u64,
}

impl Default for MpiOptions {
    fn default() -> Self {
        MpiOptions { strategy: Strategy::Metadata, align: 4096, direct_io: false, max_write: 4 << 20 }
    }
}

/// What one rank did, as gathered on rank 0 at the commit.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RankReport {
    /// The rank.
    pub rank: usize,
    /// The rank's writing (entries, clusters, compression, waiting, writing, bytes, requests).
    pub metrics: RankMetrics,
    /// Seconds from the writer's creation to the start of the commit.
    pub wall_seconds: f64,
    /// Rank 0 with an aggregator: messages it handled and seconds it spent on them.
    pub aggregator_messages: u64,
    /// See `aggregator_messages`.
    pub aggregator_seconds: f64,
}

/// The result of a commit.
#[derive(Debug, Clone, Default)]
pub struct CommitReport {
    /// Bytes of the file (with separate files: of every rank's file together).
    pub file_size: u64,
    /// Per rank, on rank 0 (empty on the others).
    pub ranks: Vec<RankReport>,
    /// The files written (one, or one per rank).
    pub files: Vec<String>,
    /// With `checkpoint_clusters`, on rank 0 of a shared file: checkpoints made while writing
    /// (the one at creation included; the commit not counted).
    pub checkpoints: u64,
}

enum Engine {
    Shared {
        rank: RankWriter,
        asm: Option<Box<Assembler>>,
        aggregator: Option<JoinHandle<(SendComm, AggregatorStats, Option<Error>)>>,
        to_agg: Option<Arc<ToAggregator>>,
        window: Option<Arc<WindowCounter>>,
        lock: Option<Arc<FileLockCounter>>,
        writing_path: PathBuf,
        ckpt: Checkpoints,
    },
    Separate {
        w: ParallelWriter,
        path: String,
    },
}

/// With `checkpoint_clusters`: rank 0's checkpointing thread and its channel, or another rank's
/// way to it (see [`crate::checkpointer`]).
#[derive(Default)]
struct Checkpoints {
    thread: Option<JoinHandle<Served>>,
    local: Option<Arc<LocalReports>>,
    to_rank0: Option<Arc<ToCheckpointer>>,
}

/// A writer of one RNTuple that every rank of a communicator fills (each through one or more
/// fill contexts) into one file, by one of the [`Strategy`]s.
///
/// Creation and [`MpiWriter::commit`] are collective: every rank calls them, with the same file
/// name, RNTuple name, schema and options (a disagreement is refused on every rank). A rank that
/// fails, or drops the writer without committing, aborts the whole job (`MPI_Abort`), naming
/// itself: the file is written under a temporary name until the commit, so nothing at the path
/// claims to be complete.
pub struct MpiWriter {
    comm: SendComm,
    rank: i32,
    size: i32,
    strategy: Strategy,
    engine: Option<Engine>,
    started: Instant,
    path: String,
}

fn options_summary(o: &WriteOptions, m: &MpiOptions) -> String {
    let named: Vec<String> = WriteOptions::OPTIONS.iter().map(|i| format!("{}={:?}", i.name, o.get(i.name))).collect();
    format!("{} columns={:?} strategy={} align={} direct_io={} max_write={}", named.join(" "), o.columns, m.strategy, m.align, m.direct_io, m.max_write)
}

impl MpiWriter {
    /// Creates the writer (collective) for a schema of (field name, C++ type name) pairs.
    pub fn create<C: Communicator>(comm: &C, path: &str, name: &str, schema: &[(&str, &str)], opts: WriteOptions, mpi: MpiOptions) -> Result<MpiWriter> {
        let parsed = rntuple::write::distributed::parse_schema(schema);
        let comm = comm.duplicate();
        let parsed = all_ok(&comm, parsed, "parse the schema")?;
        Self::start(comm, path, name, &parsed, opts, mpi)
    }

    /// Creates the writer (collective) for a schema of parsed types.
    pub fn create_with_types<C: Communicator>(
        comm: &C,
        path: &str,
        name: &str,
        schema: &[(String, TypeExpr)],
        opts: WriteOptions,
        mpi: MpiOptions,
    ) -> Result<MpiWriter> {
        Self::start(comm.duplicate(), path, name, schema, opts, mpi)
    }

    fn start(comm: SimpleCommunicator, path: &str, name: &str, schema: &[(String, TypeExpr)], opts: WriteOptions, mpi: MpiOptions) -> Result<MpiWriter> {
        let started = Instant::now();
        let (rank, size) = (comm.rank(), comm.size());
        let parts = [path.to_string(), name.to_string(), format!("{schema:?}"), options_summary(&opts, &mpi)];
        let shown_schema: Vec<String> = schema.iter().map(|(n, t)| format!("{n}: {}", t.name())).collect();
        let shown = [parts[0].clone(), parts[1].clone(), shown_schema.join(", "), parts[3].clone()];
        agree(&comm, &["file name", "RNTuple name", "schema", "options"], &parts, &shown)?;
        // Checks whose outcome is the same on every rank (the inputs agree).
        if opts.checkpoint_clusters > 0 && mpi.strategy != Strategy::SeparateFiles && size > 1 && mpi::environment::threading_support() != Threading::Multiple {
            return Err(Error::Unsupported(
                "checkpoints of a shared file ('checkpoint_clusters') run a thread on rank 0 and need MPI_THREAD_MULTIPLE, which this MPI library does not provide".into(),
            ));
        }
        if mpi.strategy.needs_aggregator() && size > 1 && mpi::environment::threading_support() != Threading::Multiple {
            return Err(Error::Unsupported(format!(
                "the {} strategy runs an aggregator thread and needs MPI_THREAD_MULTIPLE, which this MPI library does not provide (initialize MPI with it, or use the one-sided or file-lock strategy)",
                mpi.strategy
            )));
        }
        let layout = RankLayout { align: mpi.align, direct_io: mpi.direct_io, max_write: mpi.max_write };
        layout.validate()?;
        let mut w = MpiWriter { comm: SendComm(comm), rank, size, strategy: mpi.strategy, engine: None, started, path: path.to_string() };
        if mpi.strategy == Strategy::SeparateFiles {
            let own = if path == "/dev/null" { path.to_string() } else { format!("{path}.r{rank}") };
            let pw = ParallelWriter::create_with_types(&own, name, schema, WriteOptions { use_direct_io: mpi.direct_io, ..opts });
            let pw = all_ok(&w.comm, pw, &format!("create its file {own}"))?;
            w.engine = Some(Engine::Separate { w: pw, path: own });
            return Ok(w);
        }
        w.engine = Some(w.start_shared(path, name, schema, opts, layout)?);
        Ok(w)
    }

    fn start_shared(&self, path: &str, name: &str, schema: &[(String, TypeExpr)], opts: WriteOptions, layout: RankLayout) -> Result<Engine> {
        let (comm, rank, strategy) = (&self.comm, self.rank, self.strategy);
        // Rank 0 creates the file and the header; the others learn where to write, from where.
        let mut asm = None;
        let mut lock = None;
        let status = if rank == 0 {
            let made = (|| {
                let desc = RankWriter::descriptor(name, schema, &opts)?;
                let a = Assembler::create(path, desc, opts.clone(), layout.align)?;
                if strategy == Strategy::FileLock {
                    lock = Some(Arc::new(FileLockCounter::create(&side_file(a.writing_path()), a.first_offset())?));
                }
                Ok::<_, Error>(a)
            })();
            let s = match &made {
                // The writing path, then (with a file lock) the side file's, separated by a NUL.
                Ok(a) => {
                    let side = lock.as_ref().map(|l| l.path().as_os_str().as_encoded_bytes().to_vec()).unwrap_or_default();
                    [&[1u8][..], &a.first_offset().to_le_bytes(), a.writing_path().as_os_str().as_encoded_bytes(), &[0u8], &side].concat()
                }
                Err(e) => [&[0u8][..], e.to_string().as_bytes()].concat(),
            };
            let b = broadcast_bytes(comm, &s);
            asm = Some(Box::new(made?));
            b
        } else {
            broadcast_bytes(comm, &[])
        };
        let (first, writing_path, side) = match status.split_first() {
            Some((1, rest)) if rest.len() >= 8 => {
                let mut f = [0u8; 8];
                f.copy_from_slice(&rest[..8]);
                let mut parts = rest[8..].splitn(2, |&b| b == 0);
                let mut path_of = || PathBuf::from(String::from_utf8_lossy(parts.next().unwrap_or_default()).into_owned());
                (u64::from_le_bytes(f), path_of(), path_of())
            }
            Some((_, msg)) => return Err(Error::Invalid(format!("rank 0 could not create {path}: {}", String::from_utf8_lossy(msg)))),
            None => return Err(Error::Invalid("rank 0 sent no status".into())),
        };
        // The routes: communicators and windows are made collectively on every rank first.
        let mut agg_comm = if strategy.needs_aggregator() { Some(comm.duplicate()) } else { None };
        let window = if strategy == Strategy::OneSided { Some(Arc::new(WindowCounter::create(comm, rank, first)?)) } else { None };
        let ck_comm = if opts.checkpoint_clusters > 0 { Some(comm.duplicate()) } else { None };
        let mut counter = None;
        let mut to_agg = None;
        let made = (|| {
            let route = match strategy {
                Strategy::Metadata | Strategy::SendData if rank == 0 => {
                    let c = Arc::new(LocalCounter::new(first));
                    counter = Some(c.clone());
                    Route::Offsets(c)
                }
                Strategy::Metadata | Strategy::SendData => {
                    let c = agg_comm.take().ok_or_else(|| Error::Invalid("no aggregator communicator".into()))?;
                    let t = Arc::new(ToAggregator::new(c));
                    to_agg = Some(t.clone());
                    if strategy == Strategy::Metadata {
                        Route::Offsets(t)
                    } else {
                        Route::Ship(t)
                    }
                }
                Strategy::OneSided => Route::Offsets(window.clone().ok_or_else(|| Error::Invalid("no window".into()))?),
                Strategy::FileLock => {
                    if rank != 0 {
                        lock = Some(Arc::new(FileLockCounter::open(&side)?));
                    }
                    Route::Offsets(lock.clone().ok_or_else(|| Error::Invalid("no offset file".into()))?)
                }
                Strategy::SeparateFiles => return Err(Error::Invalid("separate files have no shared route".into())),
            };
            let file = if matches!(route, Route::Ship(_)) { None } else { Some(writing_path.as_path()) };
            RankWriter::new(name, schema, opts.clone(), layout.clone(), route, file)
        })();
        let made = made.map(|rw| {
            let svc: Option<Arc<dyn OffsetService>> = match strategy {
                Strategy::OneSided => window.clone().map(|w| w as Arc<dyn OffsetService>),
                Strategy::FileLock => lock.clone().map(|l| l as Arc<dyn OffsetService>),
                _ => counter.clone().map(|c| c as Arc<dyn OffsetService>),
            };
            (rw, svc)
        });
        let (rw, svc) = match all_ok(comm, made, &format!("open {} for writing", writing_path.display())) {
            Ok(rw) => rw,
            Err(e) => {
                if let Some(w) = &window {
                    let _ = w.free();
                }
                if let Some(l) = &lock {
                    if rank == 0 {
                        l.remove();
                    }
                }
                if let Some(a) = asm.take() {
                    a.abort(&e.to_string());
                }
                return Err(e);
            }
        };
        let ckpt = match ck_comm {
            Some(c) => self.start_checkpoints(c, &rw, &mut asm, svc, layout.align, opts.checkpoint_clusters)?,
            None => Checkpoints::default(),
        };
        let aggregator = match (agg_comm, counter) {
            (Some(c), Some(counter)) if rank == 0 => {
                let (senders, rank0, c) = ((self.size - 1) as usize, rw.clone(), SendComm(c));
                let h = std::thread::Builder::new()
                    .name("rntuple-aggregator".into())
                    .spawn(move || serve(c, senders, counter, rank0))
                    .map_err(|e| Error::Invalid(format!("starting the aggregator thread: {e}")))?;
                Some(h)
            }
            _ => None,
        };
        Ok(Engine::Shared { rank: rw, asm, aggregator, to_agg, window, lock, writing_path, ckpt })
    }

    /// Checkpoints: rank 0 hands its assembler to a checkpointing thread that reserves through
    /// `svc` (rank 0's route to the allocator); every rank reports its durable clusters to it.
    fn start_checkpoints(
        &self,
        c: SimpleCommunicator,
        rw: &RankWriter,
        asm: &mut Option<Box<Assembler>>,
        svc: Option<Arc<dyn OffsetService>>,
        align: u64,
        every: u64,
    ) -> Result<Checkpoints> {
        if self.rank != 0 {
            let t = Arc::new(ToCheckpointer::new(c));
            rw.report_durable_to(t.clone())?;
            return Ok(Checkpoints { to_rank0: Some(t), ..Default::default() });
        }
        let (a, svc) = match (asm.take(), svc) {
            (Some(a), Some(s)) => (a, s),
            _ => return Err(Error::Invalid("rank 0 has no assembler or allocator to checkpoint with".into())),
        };
        let (tx, rx) = std::sync::mpsc::channel();
        let local = Arc::new(LocalReports(Mutex::new(tx)));
        rw.report_durable_to(local.clone())?;
        let plan = Plan { senders: (self.size - 1) as usize, every, svc, align };
        let comm = SendComm(c);
        let h = std::thread::Builder::new()
            .name("rntuple-checkpoints".into())
            .spawn(move || crate::checkpointer::serve(comm, rx, a, plan))
            .map_err(|e| Error::Invalid(format!("starting the checkpointing thread: {e}")))?;
        Ok(Checkpoints { thread: Some(h), local: Some(local), to_rank0: None })
    }

    /// This process's rank.
    pub fn rank(&self) -> usize {
        self.rank as usize
    }

    /// Ranks writing.
    pub fn size(&self) -> usize {
        self.size as usize
    }

    /// The strategy.
    pub fn strategy(&self) -> Strategy {
        self.strategy
    }

    /// A new fill context of this rank (give each of the rank's threads its own).
    pub fn fill_context(&self) -> Result<MpiFillContext> {
        match &self.engine {
            Some(Engine::Shared { rank, .. }) => Ok(MpiFillContext::Shared(rank.fill_context())),
            Some(Engine::Separate { w, .. }) => Ok(MpiFillContext::Separate(w.fill_context()?)),
            None => Err(Error::Invalid("the distributed writer was committed already".into())),
        }
    }

    /// Aborts the whole job (`MPI_Abort`), saying on standard error which rank failed and why;
    /// the temporary file is removed first, so nothing is left at the path. The job ends
    /// [`ABORT_GRACE_MS`] after the message, so that mpirun delivers it.
    pub fn abort(&mut self, why: &str) -> ! {
        eprintln!("rntuple-mpi: rank {} of {} failed: {why}; aborting the job ({} is not written)", self.rank, self.size, self.path);
        if let Some(Engine::Shared { writing_path, lock, .. }) = &self.engine {
            if writing_path.as_os_str() != "/dev/null" && writing_path.as_os_str() != self.path.as_str() {
                let _ = std::fs::remove_file(writing_path);
            }
            if let Some(l) = lock {
                l.remove();
            }
        }
        self.engine = None;
        // mpirun forwards a rank's standard error through its own I/O daemons; tearing the job
        // down at once can lose the line above on a loaded machine, so it gets a moment to travel.
        let _ = std::io::Write::flush(&mut std::io::stderr());
        std::thread::sleep(std::time::Duration::from_millis(ABORT_GRACE_MS));
        self.comm.abort(1)
    }

    /// Commits the RNTuple (collective): every fill context of every rank must have ended. Rank
    /// 0 gathers the ranks' cluster lists and writes page list, footer and file records; every
    /// rank returns the file size, rank 0 also each rank's report. A rank whose writing failed
    /// aborts the job.
    pub fn commit(mut self) -> Result<CommitReport> {
        let wall = self.started.elapsed().as_secs_f64();
        let Some(engine) = self.engine.take() else {
            return Err(Error::Invalid("the distributed writer was committed already".into()));
        };
        match engine {
            Engine::Separate { w, path } => {
                let size = w.commit();
                let metrics = w.metrics().iter().fold(RankMetrics::default(), |mut a, m| {
                    a.entries += m.entries;
                    a.clusters += m.clusters;
                    a.compress_seconds += m.compress_seconds;
                    a.wait_seconds += m.wait_seconds;
                    a.bytes_written += m.bytes_written;
                    a.requests += m.acquisitions;
                    a
                });
                let size = all_ok(&self.comm, size, &format!("commit its file {path}"))?;
                let report = RankReport { rank: self.rank(), metrics, wall_seconds: wall, ..Default::default() };
                self.finish_report(size, report, path)
            }
            Engine::Shared { rank, mut asm, aggregator, to_agg, window, lock, writing_path, mut ckpt } => {
                let mut report = RankReport { rank: self.rank(), wall_seconds: wall, ..Default::default() };
                let mut agg_error = None;
                if let Some(Err(e)) = to_agg.as_ref().map(|t| t.done()) {
                    self.engine = Some(Engine::Shared { rank, asm, aggregator: None, to_agg, window, lock, writing_path, ckpt });
                    self.abort(&e.to_string());
                }
                let mut kept_comm = None;
                if let Some(h) = aggregator {
                    match h.join() {
                        Ok((c, stats, err)) => {
                            kept_comm = Some(c);
                            report.aggregator_messages = stats.messages;
                            report.aggregator_seconds = stats.busy_seconds;
                            agg_error = err;
                        }
                        Err(_) => agg_error = Some(Error::Invalid("the aggregator thread panicked".into())),
                    }
                }
                // Checkpoints: every rank has reported its last cluster; rank 0's thread hands the
                // assembler back.
                let (mut kept_ck, mut n_checkpoints) = (None, 0);
                if let Some(Err(e)) = ckpt.to_rank0.as_ref().map(|t| t.done()) {
                    agg_error.get_or_insert(e);
                }
                if let Some(l) = ckpt.local.take() {
                    if let Err(e) = l.send(Local::Done) {
                        agg_error.get_or_insert(e);
                    }
                    match ckpt.thread.take().map(|h| h.join()) {
                        Some(Ok((c, a, err))) => {
                            kept_ck = Some(c);
                            n_checkpoints = a.checkpoints().0;
                            asm = Some(a);
                            if let Some(e) = err {
                                agg_error.get_or_insert(e);
                            }
                        }
                        Some(Err(_)) => {
                            agg_error.get_or_insert(Error::Invalid("the checkpointing thread panicked".into()));
                        }
                        None => {}
                    }
                }
                let finished = match agg_error {
                    Some(e) => Err(e),
                    None => rank.finish(),
                };
                let (list, metrics) = match finished {
                    Ok(x) => x,
                    Err(e) => {
                        self.engine = Some(Engine::Shared { rank, asm, aggregator: None, to_agg, window, lock, writing_path, ckpt });
                        self.abort(&e.to_string())
                    }
                };
                report.metrics = metrics;
                if let Some(w) = &window {
                    w.free()?;
                }
                let lists = gather_bytes(&self.comm, &list)?;
                let size = match asm {
                    Some(a) => {
                        let r = a.commit(&lists);
                        if let Some(l) = &lock {
                            l.remove();
                        }
                        r
                    }
                    None => Ok(0),
                };
                let status = match &size {
                    Ok(s) => [&[1u8][..], &s.to_le_bytes()].concat(),
                    Err(e) => [&[0u8][..], e.to_string().as_bytes()].concat(),
                };
                let status = broadcast_bytes(&self.comm, &status);
                drop(kept_comm);
                drop(kept_ck);
                drop(to_agg);
                let size = match status.split_first() {
                    Some((1, rest)) if rest.len() == 8 => {
                        let mut b = [0u8; 8];
                        b.copy_from_slice(rest);
                        u64::from_le_bytes(b)
                    }
                    Some((_, msg)) => return Err(Error::Invalid(format!("rank 0 could not commit {}: {}", self.path, String::from_utf8_lossy(msg)))),
                    None => return Err(Error::Invalid("rank 0 sent no status".into())),
                };
                let path = self.path.clone();
                let mut r = self.finish_report(size, report, path)?;
                // One file: its size, not the sum over ranks.
                r.file_size = size;
                r.checkpoints = n_checkpoints;
                r.files.truncate(1);
                Ok(r)
            }
        }
    }

    /// Gathers the ranks' reports on rank 0 and the file sizes (summed over ranks).
    fn finish_report(&self, size: u64, report: RankReport, path: String) -> Result<CommitReport> {
        let m = &report.metrics;
        let words: Vec<f64> = vec![
            m.entries as f64,
            m.clusters as f64,
            m.compress_seconds,
            m.wait_seconds,
            m.write_seconds,
            m.bytes_written as f64,
            m.requests as f64,
            report.wall_seconds,
            report.aggregator_messages as f64,
            report.aggregator_seconds,
            size as f64,
        ];
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let all = gather_bytes(&self.comm, &bytes)?;
        let mut ranks = Vec::new();
        let mut total = 0u64;
        for (r, b) in all.iter().enumerate() {
            let w: Vec<f64> = b
                .chunks_exact(8)
                .map(|c| {
                    let mut a = [0u8; 8];
                    a.copy_from_slice(c);
                    f64::from_le_bytes(a)
                })
                .collect();
            if w.len() != words.len() {
                return Err(Error::Invalid(format!("rank {r} sent a report of {} words, not {}", w.len(), words.len())));
            }
            total += w[10] as u64;
            ranks.push(RankReport {
                rank: r,
                metrics: RankMetrics {
                    entries: w[0] as u64,
                    clusters: w[1] as u64,
                    compress_seconds: w[2],
                    wait_seconds: w[3],
                    write_seconds: w[4],
                    bytes_written: w[5] as u64,
                    requests: w[6] as u64,
                },
                wall_seconds: w[7],
                aggregator_messages: w[8] as u64,
                aggregator_seconds: w[9],
            });
        }
        let files = if self.rank == 0 && self.strategy == Strategy::SeparateFiles && path != "/dev/null" {
            (0..self.size).map(|r| format!("{}.r{r}", self.path)).collect()
        } else {
            vec![path]
        };
        Ok(CommitReport { file_size: if self.rank == 0 { total } else { size }, ranks, files, checkpoints: 0 })
    }
}

impl Drop for MpiWriter {
    fn drop(&mut self) {
        if self.engine.is_some() {
            let why = if std::thread::panicking() { "it panicked before committing" } else { "its writer was dropped without a commit" };
            self.abort(why);
        }
    }
}

/// One thread's handle for filling entries into its rank's part of the RNTuple.
pub enum MpiFillContext {
    /// Into the shared file.
    Shared(RankFillContext),
    /// Into this rank's own file (`separate-files`).
    Separate(FillContext),
}

impl MpiFillContext {
    /// Fills one entry.
    pub fn fill(&mut self, entry: &Value) -> Result<()> {
        match self {
            MpiFillContext::Shared(c) => c.fill(entry),
            MpiFillContext::Separate(c) => c.fill(entry),
        }
    }

    /// Appends the rows of an Arrow record batch.
    pub fn append_batch(&mut self, batch: &rntuple::arrow::array::RecordBatch) -> Result<()> {
        match self {
            MpiFillContext::Shared(c) => c.append_batch(batch),
            MpiFillContext::Separate(c) => c.append_batch(batch),
        }
    }

    /// Fills one typed entry.
    pub fn fill_typed<E: rntuple::write::Entry>(&mut self, entry: &E) -> Result<()> {
        match self {
            MpiFillContext::Shared(c) => c.fill_typed(entry),
            MpiFillContext::Separate(c) => c.fill_typed(entry),
        }
    }

    /// Ends the current cluster (compressed and placed now, not when it fills up).
    pub fn flush_cluster(&mut self) -> Result<()> {
        match self {
            MpiFillContext::Shared(c) => c.flush_cluster(),
            MpiFillContext::Separate(c) => c.flush_cluster(),
        }
    }

    /// Entries filled into this context.
    pub fn num_entries(&self) -> u64 {
        match self {
            MpiFillContext::Shared(c) => c.num_entries(),
            MpiFillContext::Separate(c) => c.num_entries(),
        }
    }

    /// Flushes the last cluster and ends the context.
    pub fn finish(self) -> Result<()> {
        match self {
            MpiFillContext::Shared(c) => c.finish(),
            MpiFillContext::Separate(c) => c.finish().map(|_| ()),
        }
    }
}
