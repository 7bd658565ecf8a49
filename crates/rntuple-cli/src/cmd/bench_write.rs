//! `rntuple bench write`: the synthetic write benchmark of the parallel-writing paper.

use super::Res;
use crate::progress::progress_bar;
use crate::synthetic::SyntheticData;
use std::time::Instant;

/// The settings of `bench write`.
pub(crate) struct WriteBench {
    pub(crate) threads: usize,
    pub(crate) entries: u64,
    pub(crate) compression: rntuple::write::Compression,
    pub(crate) mode: String,
    pub(crate) preallocate: bool,
    pub(crate) write_outside_lock: bool,
    pub(crate) progress: bool,
    pub(crate) direct_io: bool,
    pub(crate) page_size: Option<u64>,
    pub(crate) cluster_size: u64,
    pub(crate) output: String,
    pub(crate) implicit_mt: bool,
    pub(crate) buffer_uncompressed: bool,
    pub(crate) checkpoint_clusters: u64,
}

/// The most writing threads `bench write` starts.
const MAX_THREADS: usize = 1024;

pub(crate) fn bench_write(cfg: &WriteBench) -> Res {
    use rntuple::write::{ContextMetrics, ParallelWriter, WriteOptions, Writer};
    const SCHEMA: [(&str, &str); 2] = [("eventId", "std::uint64_t"), ("particles", "std::vector<float>")];
    let (t_n, n) = (cfg.threads, cfg.entries);
    if !(1..=MAX_THREADS).contains(&t_n) {
        return Err(format!("--threads {t_n}: must be between 1 and {MAX_THREADS}").into());
    }
    if cfg.mode == "sequential" && t_n != 1 {
        return Err("--mode sequential writes with one thread (--threads 1)".into());
    }
    let data = SyntheticData::new()?;
    let opts = WriteOptions {
        compression: cfg.compression,
        use_implicit_mt: cfg.implicit_mt,
        max_unzipped_page_size: opts_page_size(cfg),
        approx_zipped_cluster_size: cfg.cluster_size,
        buffered: cfg.mode != "unbuffered",
        use_direct_io: cfg.direct_io,
        preallocate: cfg.preallocate,
        write_outside_lock: cfg.write_outside_lock,
        stream_uncompressed_pages: !cfg.buffer_uncompressed,
        checkpoint_clusters: cfg.checkpoint_clusters,
        ..super::write_defaults()
    };
    let pb = progress_bar(n * t_n as u64, "entries", cfg.progress);
    let counted = |b: &rntuple::arrow::array::RecordBatch| pb.inc(b.num_rows() as u64);
    let t = Instant::now();
    let (bytes, items, contexts, clusters): (u64, u64, Vec<ContextMetrics>, u64) = match cfg.mode.as_str() {
        "sequential" => {
            let mut w = Writer::create(&cfg.output, "Events", &SCHEMA, opts)?;
            let items = data.feed(0, n, |b| w.append_batch(b).map(|_| counted(b))).map_err(|e| e.to_string())?;
            let bytes = w.commit()?;
            let clusters =
                rntuple::RNTupleFile::open(&cfg.output).ok().and_then(|f| f.reader("Events").ok()).map(|r| r.descriptor().clusters.len() as u64).unwrap_or(0);
            (bytes, items, Vec::new(), clusters)
        }
        "separate-files" => {
            // The baseline of the parallel writer: the same buffering as its contexts.
            let opts = WriteOptions { use_implicit_mt: false, stream_uncompressed_pages: false, ..opts };
            let results: Vec<Result<(u64, u64, ContextMetrics), String>> = std::thread::scope(|s| {
                let handles: Vec<_> = (0..t_n)
                    .map(|i| {
                        let (data, opts, counted) = (&data, opts.clone(), &counted);
                        let path = if cfg.output == "/dev/null" { cfg.output.clone() } else { format!("{}.t{i}", cfg.output) };
                        s.spawn(move || -> Result<(u64, u64, ContextMetrics), String> {
                            let t0 = Instant::now();
                            let mut w = Writer::create(&path, "Events", &SCHEMA, opts).map_err(|e| e.to_string())?;
                            let items = data.feed(i as u64 * n, n, |b| w.append_batch(b).map(|_| counted(b))).map_err(|e| e.to_string())?;
                            w.commit_cluster().map_err(|e| e.to_string())?;
                            let clusters = w.num_clusters();
                            let bytes = w.commit().map_err(|e| e.to_string())?;
                            let m =
                                ContextMetrics { entries: n, clusters, bytes_written: bytes, wall_seconds: t0.elapsed().as_secs_f64(), ..Default::default() };
                            Ok((bytes, items, m))
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err("a writing thread panicked".into()))).collect()
            });
            let (mut bytes, mut items, mut ms) = (0, 0, Vec::new());
            for r in results {
                let (b, i, m) = r?;
                bytes += b;
                items += i;
                ms.push(m);
            }
            let clusters = ms.iter().map(|m| m.clusters).sum();
            (bytes, items, ms, clusters)
        }
        _ => {
            let w = ParallelWriter::create(&cfg.output, "Events", &SCHEMA, opts)?;
            let results: Vec<Result<u64, String>> = std::thread::scope(|s| {
                let handles: Vec<_> = (0..t_n)
                    .map(|i| {
                        let ctx = w.fill_context();
                        let (data, counted) = (&data, &counted);
                        s.spawn(move || -> Result<u64, String> {
                            let mut ctx = ctx.map_err(|e| e.to_string())?;
                            let items = data.feed(i as u64 * n, n, |b| ctx.append_batch(b).map(|_| counted(b))).map_err(|e| e.to_string())?;
                            ctx.finish().map_err(|e| e.to_string())?;
                            Ok(items)
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err("a writing thread panicked".into()))).collect()
            });
            let mut items = 0;
            for r in results {
                items += r?;
            }
            let bytes = w.commit()?;
            let ms = w.metrics();
            let clusters = ms.iter().map(|m| m.clusters).sum();
            (bytes, items, ms, clusters)
        }
    };
    let secs = t.elapsed().as_secs_f64();
    pb.finish_and_clear();
    let entries = n * t_n as u64;
    let raw = entries * 8 + entries * 8 + items * 4;
    let sum = |f: fn(&ContextMetrics) -> f64| contexts.iter().map(f).sum::<f64>();
    let max_frac = contexts.iter().map(|m| if m.wall_seconds > 0.0 { (m.wait_seconds + m.hold_seconds) / m.wall_seconds } else { 0.0 }).fold(0.0, f64::max);
    let ctx_json: Vec<serde_json::Value> = contexts
        .iter()
        .map(|m| {
            serde_json::json!({"entries": m.entries, "clusters": m.clusters, "compress_seconds": m.compress_seconds, "wait_seconds": m.wait_seconds,
                "hold_seconds": m.hold_seconds, "acquisitions": m.acquisitions, "bytes_written": m.bytes_written, "wall_seconds": m.wall_seconds})
        })
        .collect();
    println!(
        "{}",
        serde_json::json!({
            "threads": t_n, "mode": cfg.mode, "implicit_mt": cfg.implicit_mt && cfg.mode == "sequential", "compression": cfg.compression.settings(),
            "entries": entries, "seconds": secs, "entries_per_second": entries as f64 / secs, "stored_bytes": bytes,
            "stored_mb_per_second": bytes as f64 / 1e6 / secs, "uncompressed_mb_per_second": raw as f64 / 1e6 / secs,
            "clusters": clusters, "preallocate": cfg.preallocate, "write_outside_lock": cfg.write_outside_lock, "direct_io": cfg.direct_io, "stream_uncompressed_pages": !cfg.buffer_uncompressed && cfg.mode == "sequential",
            "page_size": opts_page_size(cfg), "output": cfg.output, "checkpoint_clusters": cfg.checkpoint_clusters,
            "lock": {"acquisitions": contexts.iter().map(|m| m.acquisitions).sum::<u64>(), "wait_seconds": sum(|m| m.wait_seconds),
                     "hold_seconds": sum(|m| m.hold_seconds), "max_lock_fraction": max_frac},
            "contexts": ctx_json,
        })
    );
    Ok(())
}

fn opts_page_size(cfg: &WriteBench) -> u64 {
    cfg.page_size.unwrap_or(if cfg.mode == "sequential" { 1 << 20 } else { 128 << 10 })
}
