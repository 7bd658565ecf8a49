//! `rntuple bench write-mpi`: the synthetic write benchmark of the parallel-writing paper across
//! the ranks of an MPI job (run under `mpirun -np N`), into one file by one of the distributed
//! strategies or one file per rank. Rank 0 prints one JSON object.

use super::Res;

/// The settings of `bench write-mpi`.
#[derive(clap::Args)]
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub(crate) struct MpiBench {
    /// send-data, metadata, one-sided, file-lock, or separate-files (each rank its own file
    /// PATH.r<rank>: the baseline).
    #[arg(long, default_value = "metadata")]
    pub(crate) strategy: String,
    /// Entries per rank and thread.
    #[arg(long, default_value_t = 1_000_000)]
    pub(crate) entries: u64,
    /// Fill contexts (threads) per rank.
    #[arg(long, default_value_t = 1)]
    pub(crate) threads: usize,
    /// Compression settings (algorithm*100+level).
    #[arg(long, default_value = "505", value_parser = crate::args::parse_compression)]
    pub(crate) compression: rntuple::write::Compression,
    /// Clusters start at multiples of this many bytes (a power of two; 1 MiB for a Lustre
    /// stripe).
    #[arg(long, default_value_t = 4096)]
    pub(crate) alignment: u64,
    /// Direct I/O (O_DIRECT) with aligned buffers.
    #[arg(long)]
    pub(crate) direct_io: bool,
    /// Largest single write in bytes (0: unbounded).
    #[arg(long, default_value_t = 4 << 20)]
    pub(crate) write_block: u64,
    /// Maximum unzipped page size in bytes.
    #[arg(long, default_value_t = 128 << 10)]
    pub(crate) page_size: u64,
    /// Approximate zipped cluster size in bytes.
    #[arg(long, default_value_t = 128 << 20)]
    pub(crate) cluster_size: u64,
    /// Make the file a complete ROOT file every K clusters of the whole job (0: only at the
    /// commit): a job killed at any moment leaves its last checkpoint readable (shared file:
    /// agreed by every rank through rank 0; separate-files: each rank's file on its own).
    #[arg(long, default_value_t = 0)]
    pub(crate) checkpoint_clusters: u64,
    /// Output file (default /dev/null).
    #[arg(long, default_value = "/dev/null")]
    pub(crate) output: String,
    /// Testing: this rank fails halfway through its entries (the job must abort).
    #[arg(long, hide = true)]
    pub(crate) fail_rank: Option<usize>,
    /// Testing: this rank kills itself (SIGKILL) halfway through its entries.
    #[arg(long, hide = true)]
    pub(crate) kill_rank: Option<usize>,
}

#[cfg(not(feature = "mpi"))]
pub(crate) fn bench_write_mpi(_: &MpiBench) -> Res {
    Err("this rntuple was built without MPI support: install an MPI implementation (e.g. `apt-get install libopenmpi-dev openmpi-bin libclang-dev`) and rebuild (`make build` turns MPI on when `mpicc` is found)".into())
}

#[cfg(feature = "mpi")]
pub(crate) fn bench_write_mpi(cfg: &MpiBench) -> Res {
    use crate::synthetic::SyntheticData;
    use rntuple::write::WriteOptions;
    use rntuple_mpi::mpi::collective::CommunicatorCollectives;
    use rntuple_mpi::mpi::topology::Communicator;
    use rntuple_mpi::{MpiOptions, MpiWriter, Strategy};
    use std::time::Instant;
    const SCHEMA: [(&str, &str); 2] = [("eventId", "std::uint64_t"), ("particles", "std::vector<float>")];
    let strategy: Strategy = cfg.strategy.parse()?;
    if !(1..=256).contains(&cfg.threads) {
        return Err(format!("--threads {}: must be between 1 and 256", cfg.threads).into());
    }
    let universe = rntuple_mpi::initialize()?;
    let world = universe.world();
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    let data = SyntheticData::new()?;
    let opts = WriteOptions {
        compression: cfg.compression,
        max_unzipped_page_size: cfg.page_size,
        approx_zipped_cluster_size: cfg.cluster_size,
        checkpoint_clusters: cfg.checkpoint_clusters,
        ..super::write_defaults()
    };
    let mpi = MpiOptions { strategy, align: cfg.alignment, direct_io: cfg.direct_io, max_write: cfg.write_block };
    world.barrier();
    let t = Instant::now();
    let mut w = MpiWriter::create(&world, &cfg.output, "Events", &SCHEMA, opts, mpi)?;
    let (n, t_n) = (cfg.entries, cfg.threads as u64);
    let results: Vec<Result<u64, String>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..t_n)
            .map(|i| {
                let ctx = w.fill_context();
                let data = &data;
                s.spawn(move || -> Result<u64, String> {
                    let mut ctx = ctx.map_err(|e| e.to_string())?;
                    let first = (rank as u64 * t_n + i) * n;
                    let mut done = 0u64;
                    let items = data
                        .feed(first, n, |b| {
                            done += b.num_rows() as u64;
                            if i == 0 && done >= n / 2 && Some(rank) == cfg.kill_rank {
                                // SAFETY: raising a signal against our own process.
                                unsafe { libc::raise(libc::SIGKILL) };
                            }
                            if i == 0 && done >= n / 2 && Some(rank) == cfg.fail_rank {
                                return Err(rntuple::Error::Invalid(format!("rank {rank} was told to fail (--fail-rank)")));
                            }
                            ctx.append_batch(b)
                        })
                        .map_err(|e| e.to_string())?;
                    ctx.finish().map_err(|e| e.to_string())?;
                    Ok(items)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err("a writing thread panicked".into()))).collect()
    });
    let mut items = 0;
    for r in results {
        match r {
            Ok(i) => items += i,
            Err(e) => w.abort(&e),
        }
    }
    let report = w.commit()?;
    let secs = t.elapsed().as_secs_f64();
    let mut all_items = 0u64;
    world.all_reduce_into(&items, &mut all_items, rntuple_mpi::mpi::collective::SystemOperation::sum());
    if rank != 0 {
        return Ok(());
    }
    let entries = n * t_n * size as u64;
    let raw = entries * 16 + all_items * 4;
    let per_rank: Vec<serde_json::Value> = report
        .ranks
        .iter()
        .map(|r| {
            let m = &r.metrics;
            let frac = if r.wall_seconds > 0.0 { m.wait_seconds / (r.wall_seconds * t_n as f64) } else { 0.0 };
            serde_json::json!({"rank": r.rank, "entries": m.entries, "clusters": m.clusters, "compress_seconds": m.compress_seconds,
                "wait_seconds": m.wait_seconds, "write_seconds": m.write_seconds, "bytes": m.bytes_written, "requests": m.requests,
                "wall_seconds": r.wall_seconds, "wait_fraction": frac, "aggregator_messages": r.aggregator_messages,
                "aggregator_seconds": r.aggregator_seconds})
        })
        .collect();
    let max_wait =
        report.ranks.iter().map(|r| if r.wall_seconds > 0.0 { r.metrics.wait_seconds / (r.wall_seconds * t_n as f64) } else { 0.0 }).fold(0.0, f64::max);
    let agg = report.ranks.first().map(|r| if r.wall_seconds > 0.0 { r.aggregator_seconds / r.wall_seconds } else { 0.0 }).unwrap_or(0.0);
    println!(
        "{}",
        serde_json::json!({
            "strategy": strategy.name(), "ranks": size, "threads": t_n, "entries_per_rank_thread": n, "entries": entries,
            "compression": cfg.compression.settings(), "alignment": cfg.alignment, "direct_io": cfg.direct_io, "write_block": cfg.write_block,
            "output": cfg.output, "files": report.files, "seconds": secs, "entries_per_second": entries as f64 / secs,
            "stored_bytes": report.file_size, "stored_mb_per_second": report.file_size as f64 / 1e6 / secs,
            "uncompressed_mb_per_second": raw as f64 / 1e6 / secs,
            "clusters": report.ranks.iter().map(|r| r.metrics.clusters).sum::<u64>(), "checkpoints": report.checkpoints,
            "max_wait_fraction": max_wait, "aggregator_fraction": agg, "per_rank": per_rank,
        })
    );
    Ok(())
}
