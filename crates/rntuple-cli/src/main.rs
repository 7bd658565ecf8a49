//! The `rntuple` command-line tool: the command-line definitions and the dispatch to the commands
//! (one module per command under `cmd/`).

mod args;
mod cmd;
mod draw;
mod interrupt;
mod progress;
mod report;
mod synthetic;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use args::parse_compression;
use clap::{Parser, Subcommand};
use cmd::bench_write::WriteBench;
use cmd::precision::Precision;
use cmd::select::Select;
use rntuple::write::Compression;
use std::io::Write;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "rntuple", version, about = "Inspect, dump and benchmark ROOT RNTuple files")]
struct Cli {
    /// Never show progress bars (they are shown on stderr only when it is a terminal).
    #[arg(long, global = true)]
    no_progress: bool,
    /// Writing commands (import-json, skim, merge, convert, bench write): store every page, even one equal
    /// to an earlier page of its cluster (same-page merging, ROOT 6.40's default, is on otherwise).
    #[arg(long, global = true)]
    no_same_page_merging: bool,
    /// The most bytes one allocation of reading may take (a page, a decompressed envelope, a
    /// column's values sized from the file), e.g. 512M or 2G: a read that needs more is an error
    /// naming what and how much, raised before allocating. Default: no limit.
    #[arg(long, global = true, value_name = "SIZE")]
    memory_limit: Option<String>,
    /// Remote reads (http://, https://, s3://, root://): seconds to wait for a connection (default 30, or
    /// RNTUPLE_CONNECT_TIMEOUT).
    #[arg(long, global = true, value_name = "SECONDS")]
    connect_timeout: Option<f64>,
    /// Remote reads: seconds without a byte before a request fails (default 60, or
    /// RNTUPLE_IDLE_TIMEOUT). A request must also finish within both timeouts plus 1 s per MiB.
    #[arg(long, global = true, value_name = "SECONDS")]
    idle_timeout: Option<f64>,
    /// Remote reads: retries of a request after a connection error or a 5xx answer, with
    /// back-off (default 3, or RNTUPLE_RETRIES).
    #[arg(long, global = true, value_name = "N")]
    retries: Option<usize>,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Every RNTuple in the file: entries, clusters, field tree, columns with sizes; and, after
    /// ROOT's PrintInfo and RNTupleInspector, header/footer/page-list sizes and the metadata/data
    /// ratio, each cluster (entries, pages, bytes, compression), field sizes summed over sub-fields
    /// with compression factors, and the distribution of stored page sizes (powers of two; --json:
    /// keys header, footer, page_lists, metadata_ratio, cluster_details, page_sizes, and sizes in
    /// each of fields). Several files (or friends) describe the dataset they make: inputs, friends,
    /// entries and fields.
    Info {
        /// A ROOT file (several, or globs: a chain of one RNTuple; each may end in `:NTUPLE`).
        #[arg(required = true, value_name = "FILE")]
        files: Vec<String>,
        /// Only this RNTuple.
        #[arg(long)]
        ntuple: Option<String>,
        /// One JSON object instead of text (the same facts, for scripts).
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        dataset: cmd::dataset::DatasetArgs,
        #[command(flatten)]
        follow: cmd::follow::FollowArgs,
    },
    /// A histogram of a numeric field (a collection's elements flattened, as RDataFrame's Histo1D
    /// of an RVec), optionally of the entries where --where holds: drawn in the terminal (one row
    /// per bin, under- and overflow, entries, mean, std), as JSON (--json) and as a picture
    /// (--output h.png|h.svg). Reads only the fields named. Example:
    /// `rntuple hist nano.root Muon_pt --where 'nMuon >= 2' --bins 50 --range 0 100 -o pt.svg`.
    #[command(override_usage = "rntuple hist [OPTIONS] FILE... FIELD")]
    Hist(cmd::hist::HistArgs),
    /// Writes ONE self-contained HTML page (inline CSS, script and SVG; nothing fetched, opens from
    /// a file:// URL) of what the file's RNTuple holds and where its bytes go: summary, collapsible
    /// schema tree with sizes and compression, treemap of bytes per field, cluster map, page-size
    /// distribution, column and cluster tables, histograms (--hist FIELD, or the first few numeric
    /// fields). Its numbers are `info --json`'s, also embedded as JSON (<script id="report-data">).
    /// Example: `rntuple report nano.root --hist Muon_pt,nJet -o report.html`.
    Report(report::ReportArgs),
    /// Reads every page of every field, cluster by cluster (checksums, decompression, decoding),
    /// and reports each damaged field and cluster; exits non-zero when anything is damaged.
    Check {
        /// A ROOT file.
        file: String,
        /// Only this RNTuple.
        #[arg(long)]
        ntuple: Option<String>,
        /// One JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Entries as a JSON array, one object per entry. Several files are read as one chain;
    /// friends' fields come after the primary's as FRIEND.field.
    Dump {
        /// A ROOT file (several, or globs: a chain of one RNTuple; each may end in `:NTUPLE`).
        #[arg(required = true, value_name = "FILE")]
        files: Vec<String>,
        #[command(flatten)]
        sel: Select,
        #[command(flatten)]
        dataset: cmd::dataset::DatasetArgs,
    },
    /// Writes an RNTuple from entries in the JSON form of `dump` (a JSON array of objects).
    ImportJson {
        /// The ROOT file to create: a path, or an s3://bucket/key, root://host//path or (WebDAV)
        /// https://host/path URL (staged in TMPDIR, uploaded atomically at the end).
        file: String,
        /// The RNTuple name.
        #[arg(long)]
        ntuple: String,
        /// The schema as a JSON object: field name -> ROOT type name, in field order; a class as
        /// {"class": NAME, "version": N, "bases": [class...], "members": {name: type}, "streamer":
        /// true}, a vector of any type as {"vector": type}.
        #[arg(long)]
        schema: String,
        /// The entries (a JSON array); `-` for standard input.
        #[arg(long, default_value = "-")]
        input: String,
        /// Compression settings (algorithm*100+level).
        #[arg(long, default_value = "505", value_parser = parse_compression)]
        compression: Compression,
        /// Fields of the schema that join by late model extension at entry `--late-at`
        /// (comma-separated); earlier entries read them as default values.
        #[arg(long)]
        late_fields: Option<String>,
        /// The entry at which the late fields are added.
        #[arg(long, default_value_t = 0)]
        late_at: usize,
        /// Writes that survive a crash: every K committed clusters the file on disk becomes a
        /// complete ROOT file with every entry so far (0: off; the output is then written under
        /// a temporary name and renamed at the end).
        #[arg(long, default_value_t = 0, value_name = "K")]
        checkpoint_clusters: u64,
        #[command(flatten)]
        precision: Precision,
    },
    /// Merges the RNTuple of several files into a new file, as hadd does, by copying compressed
    /// pages (recompressing them with --compression, re-clustering with --cluster-size); attribute
    /// sets come along; prints one JSON object with what was done.
    Merge {
        /// The ROOT file to create: a path, or an s3://bucket/key, root://host//path or (WebDAV)
        /// https://host/path URL (written locally in TMPDIR and uploaded at the end, atomically: the
        /// object appears complete or not at all; an interrupt (Ctrl-C, SIGTERM) aborts the upload).
        output: String,
        /// The input files, merged in this order.
        #[arg(required = true)]
        inputs: Vec<String>,
        /// The RNTuple (may be omitted when the first input holds exactly one).
        #[arg(long)]
        ntuple: Option<String>,
        /// Recompress the pages stored with another compression to this one (pages already so
        /// compressed are copied as they are); also the compression of the output's header,
        /// footer and page list. Without it pages keep theirs and the metadata gets 505.
        #[arg(long, value_parser = parse_compression)]
        compression: Option<Compression>,
        /// strict: every input has the same schema; filter: the first input's fields, found by
        /// name in the others (which may order them differently and have more, dropped); union:
        /// every input's fields, a field an input lacks reads as its default value (0, empty)
        /// in that input's entries (late model extension, as ROOT's rntuple.MergingMode=Union).
        #[arg(long, default_value = "strict", value_parser = ["strict", "filter", "union"])]
        mode: String,
        /// Re-cluster: decode the entries and refill them through the writer, clusters cut at B
        /// uncompressed bytes (default: each input cluster stays a cluster).
        #[arg(long, value_name = "B")]
        cluster_size: Option<u64>,
        /// Threads assembling (reading, recompressing) clusters (0: one per core).
        #[arg(long, default_value_t = 0)]
        threads: usize,
        /// Merge inputs that hold other objects beside the RNTuple (a TTree, a histogram,
        /// another RNTuple), which are left out; by default such inputs are refused.
        #[arg(long)]
        ignore_other_objects: bool,
        /// Writes that survive a crash: every K committed clusters the file on disk becomes a
        /// complete ROOT file with every entry so far (0: off; the output is then written under
        /// a temporary name and renamed at the end).
        #[arg(long, default_value_t = 0, value_name = "K")]
        checkpoint_clusters: u64,
    },
    /// Writes some top-level fields and/or a range of entries of an RNTuple into a new file; copies
    /// the compressed pages when the range is made of whole clusters, re-encodes otherwise; prints
    /// one JSON object with what was done.
    Skim {
        /// The input ROOT files (paths, globs or URLs), then the ROOT file to create (a path, or an
        /// s3://bucket/key, root://host//path or (WebDAV) https://host/path URL: staged in TMPDIR,
        /// uploaded atomically at the end).
        #[arg(required = true, num_args = 2.., value_name = "INPUT... OUTPUT")]
        paths: Vec<String>,
        #[command(flatten)]
        sel: Select,
        /// Keep the entries where this expression holds, e.g. 'nMuon >= 1 && count(Jet_pt > 25) >= 4'
        /// (fields by name, arithmetic, comparisons, && || !, count/sum/any/all/max/min over
        /// collections; evaluated on the entries as read, before --filter).
        #[arg(long = "where", value_name = "EXPR")]
        where_: Option<String>,
        /// Keep the elements of a collection where the expression holds, e.g. 'Jet:Jet_pt > 25'
        /// (all of the collection's list fields Jet, Jet_* alike; its count field nJet updated).
        /// May be given several times, for different collections.
        #[arg(long = "filter", value_name = "COLLECTION:EXPR")]
        filters: Vec<String>,
        /// Threads reading, selecting and writing (default 1; 0: one per core). Several threads
        /// write each part's entries together, parts in the order they finish.
        #[arg(long)]
        threads: Option<usize>,
        /// Compression of the output's envelopes, and of its pages when re-encoded (copied pages
        /// keep theirs).
        #[arg(long, default_value = "505", value_parser = parse_compression)]
        compression: Compression,
        /// Re-encode even when the pages could be copied (to recompress them, say).
        #[arg(long)]
        reencode: bool,
        /// Inputs may lack some of the kept fields: the output holds every kept field any input
        /// has, written with its default value (zero, empty) in the entries of the inputs that
        /// lack it, as ROOT's union merge does (without it such an input is an error).
        #[arg(long)]
        fill_missing: bool,
        /// Writes that survive a crash: every K committed clusters the file on disk becomes a
        /// complete ROOT file with every entry so far (0: off; the output is then written under
        /// a temporary name and renamed at the end).
        #[arg(long, default_value_t = 0, value_name = "K")]
        checkpoint_clusters: u64,
        #[command(flatten)]
        precision: Precision,
        /// A friend RNTuple whose fields join the primary's (a glob makes a chain), named after its
        /// RNTuple: matched on --on, else entry by entry; written as a record field FRIEND whose
        /// members (FRIEND.field, also in --where and --fields) are empty where it has no match.
        /// May be given several times.
        #[arg(long = "friend", value_name = "FILE[:NTUPLE]")]
        friends: Vec<String>,
        /// The index fields matching friend entries to primary entries, e.g. run,event.
        #[arg(long, value_name = "FIELD,FIELD", requires = "friends")]
        on: Option<String>,
    },
    /// Converts between RNTuple and Parquet or Arrow IPC (format by extension: .parquet,
    /// .arrow/.feather, .root), or a TTree into an RNTuple (.root to .root, through the Python
    /// package and uproot); prints one JSON object with what was done.
    Convert {
        /// The input file (.parquet, .arrow/.feather, or .root with an RNTuple or a TTree).
        input: String,
        /// The file to create (a .root output may be an s3://bucket/key, root://host//path or (WebDAV)
        /// https://host/path URL: staged in TMPDIR, uploaded atomically at the end).
        output: String,
        /// The RNTuple to read (from a .root input) or to write (default `Events`; from a TTree, its name).
        #[arg(long)]
        ntuple: Option<String>,
        /// The TTree to convert (a .root input holding TTrees).
        #[arg(long)]
        tree: Option<String>,
        /// Compression (algorithm*100+level); for Parquet/Arrow outputs the nearest codec they have.
        #[arg(long, default_value = "505", value_parser = parse_compression)]
        compression: Compression,
    },
    /// Benchmarks.
    Bench {
        #[command(subcommand)]
        what: BenchCmd,
    },
}

#[derive(Subcommand)]
enum BenchCmd {
    /// The synthetic write benchmark of the parallel-writing paper: each thread writes its entries
    /// of eventId (std::uint64_t, thread * entries + i) and particles (std::vector<float>,
    /// Poisson(5) sizes, uniform [0,100) from a precomputed pool) into one file; prints one JSON
    /// object (entries/s, MB/s, lock figures, per-context metrics).
    Write {
        /// Writing threads (fill contexts), each in its own thread.
        #[arg(long, default_value_t = 1)]
        threads: usize,
        /// Entries per thread.
        #[arg(long, default_value_t = 1_000_000)]
        entries: u64,
        /// Compression settings (algorithm*100+level).
        #[arg(long, default_value = "505", value_parser = parse_compression)]
        compression: Compression,
        /// buffered: the parallel writer, one write per cluster; unbuffered: one write (and lock)
        /// per page; separate-files: each thread its own sequential writer and file PATH.t<i>;
        /// sequential: one sequential writer (threads must be 1; implicit MT as ROOT's RNTupleWriter).
        #[arg(long, default_value = "buffered", value_parser = ["buffered", "unbuffered", "separate-files", "sequential"])]
        mode: String,
        /// Allocate each cluster's range with fallocate before writing it.
        #[arg(long)]
        preallocate: bool,
        /// Write clusters after releasing the lock, only reservation and metadata under it (the
        /// default; the flag is kept for scripts).
        #[arg(long, conflicts_with = "write_inside_lock")]
        write_outside_lock: bool,
        /// Write clusters while holding the lock, as ROOT's RNTupleParallelWriter does.
        #[arg(long)]
        write_inside_lock: bool,
        /// Direct I/O (O_DIRECT) with aligned buffers and 4096-byte aligned keys.
        #[arg(long)]
        direct_io: bool,
        /// Maximum unzipped page size in bytes (default: 131072 as the paper's program, 1 MiB
        /// (ROOT's default) in sequential mode).
        #[arg(long)]
        page_size: Option<u64>,
        /// Approximate zipped cluster size in bytes (ROOT's default 128 MiB).
        #[arg(long, default_value_t = 128 << 20)]
        cluster_size: u64,
        /// Output file (default /dev/null).
        #[arg(long, default_value = "/dev/null")]
        output: String,
        /// Sequential mode: compress each page as soon as it is full, on the filling thread,
        /// instead of compressing a cluster's pages on all cores at its commit.
        #[arg(long)]
        no_implicit_mt: bool,
        /// Sequential mode, compression 0 or `--no-implicit-mt`: keep a cluster's pages and write
        /// them together instead of writing each page as it is sealed (the separate-files mode
        /// always keeps them, as the parallel writer's contexts do).
        #[arg(long)]
        buffer_uncompressed: bool,
        /// Writes that survive a crash: every K committed clusters the file on disk becomes a
        /// complete ROOT file with every entry so far (0: off; the output is then written under
        /// a temporary name and renamed at the end).
        #[arg(long, default_value_t = 0, value_name = "K")]
        checkpoint_clusters: u64,
    },
    /// The synthetic write benchmark across the ranks of an MPI job (run it under
    /// `mpirun -np N`): each rank's threads write their entries (eventId = the global entry
    /// number) into one file by a distributed strategy, or one file per rank; rank 0 prints one
    /// JSON object (entries/s, MB/s, per rank: compression, waiting, writing, bytes).
    WriteMpi(cmd::bench_write_mpi::MpiBench),
    /// Reads fields of all entries into Arrow arrays; prints one JSON object with timings.
    Read {
        /// A ROOT file.
        file: String,
        /// The RNTuple.
        #[arg(long)]
        ntuple: Option<String>,
        /// Comma-separated top-level fields (default: all).
        #[arg(long)]
        fields: Option<String>,
        /// Clusters loaded ahead of decoding (0: no read-ahead, each page read when decoded); for
        /// a local file, setting it also has the kernel read that many clusters ahead (by default
        /// local files are read page by page).
        #[arg(long, value_name = "CLUSTERS")]
        read_ahead: Option<usize>,
        /// Most bytes held for clusters loaded ahead of the current batch (default 256 MiB).
        #[arg(long, value_name = "BYTES")]
        read_ahead_bytes: Option<u64>,
        /// Concurrent pread streams loading a cold local file's pages ahead of decoding
        /// (default 4; 1: one loading thread, as before). Given, the streams load also the
        /// dense reads the default leaves to the kernel's read-ahead.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=256))]
        streams: Option<u64>,
        /// Read the local file through a memory map instead of pread.
        #[arg(long, conflicts_with_all = ["read_ahead", "read_ahead_bytes", "streams"])]
        mmap: bool,
        /// Read in batches of this many entries, keeping only their checksums (bounded memory);
        /// 0: all entries in one batch.
        #[arg(long, default_value_t = 0, value_name = "ENTRIES")]
        step: u64,
        /// Instead of Arrow arrays: every column of the fields read cluster by cluster through the
        /// bulk API into buffers reused across clusters (an untimed pass, then the best of 3),
        /// with zstd's time to decompress the same pages alone.
        #[arg(long, conflicts_with_all = ["step", "read_ahead", "read_ahead_bytes"])]
        bulk: bool,
    },
}

/// mimalloc's option `purge_delay` (its number in mimalloc v3's `mi_option_t`, the version
/// `libmimalloc-sys` 0.1.49 builds by default).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Lets the allocator keep freed memory for a second before handing it back to the system
/// (mimalloc's default: 10 ms). A skim or a read frees and allocates buffers of tens of MiB
/// every few milliseconds; each round trip through the kernel costs page faults and zeroing
/// (skim of bench/agc_skim_bench.py: ~250 k page faults -> ~25 k, ~5 % of the time; see
/// bench/RESULTS.md). Memory still goes back once idle, and `MIMALLOC_PURGE_DELAY` overrides.
fn keep_freed_memory() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: sets an allocator option (a plain integer mimalloc reads when it purges);
        // valid at any time, from any thread.
        unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 1000) };
    }
}

/// `--connect-timeout`, `--idle-timeout`, `--retries`: over the environment's remote options
/// (`rntuple::storage::remote::remote_options`, the owner of the defaults), for the whole process.
fn set_remote_options(connect: Option<f64>, idle: Option<f64>, retries: Option<usize>) -> Result<(), String> {
    use rntuple::storage::remote::remote_options::RemoteOptions;
    if connect.is_none() && idle.is_none() && retries.is_none() {
        return Ok(());
    }
    let seconds = |flag: &str, v: f64| match v {
        v if v.is_finite() && v > 0.0 && v <= 86_400.0 => Ok(std::time::Duration::from_secs_f64(v)),
        _ => Err(format!("{flag} {v}: expected seconds above 0 and at most 86400")),
    };
    let mut o = RemoteOptions::from_env().map_err(|e| e.to_string())?;
    if let Some(v) = connect {
        o.connect_timeout = seconds("--connect-timeout", v)?;
    }
    if let Some(v) = idle {
        o.idle_timeout = seconds("--idle-timeout", v)?;
    }
    if let Some(n) = retries {
        o.retries = if n <= 100 { n } else { return Err(format!("--retries {n}: at most 100")) };
    }
    o.set_for_process();
    Ok(())
}

fn main() -> ExitCode {
    // Behave like other Unix tools when the reader of our output goes away (`rntuple dump | head`):
    // die quietly from SIGPIPE instead of failing a write.
    // SAFETY: restoring the default disposition of SIGPIPE at start-up, before any thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    keep_freed_memory();
    let cli = Cli::parse();
    // SIGINT/SIGTERM remove the outputs in the making (local temporary files, S3 uploads, XRootD
    // temporary files) before the process ends.
    interrupt::install();
    if let Err(e) = set_remote_options(cli.connect_timeout, cli.idle_timeout, cli.retries) {
        eprintln!("rntuple: error: {e}");
        return ExitCode::FAILURE;
    }
    if let Some(limit) = &cli.memory_limit {
        match rntuple::format::budget::parse_size(limit) {
            Ok(n) => rntuple::set_memory_limit(Some(n)),
            Err(e) => {
                eprintln!("rntuple: error: --memory-limit: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    let progress = !cli.no_progress;
    cmd::set_same_page_merging(!cli.no_same_page_merging);
    let r = match cli.cmd {
        Cmd::Info { files, ntuple, json, follow, .. } if follow.follow => cmd::follow::follow(&files[0], ntuple.as_deref(), json, &follow),
        Cmd::Info { files, ntuple, json, dataset, .. } if dataset.is_dataset(&files) => cmd::dataset::info(&files, ntuple.as_deref(), &dataset, json),
        Cmd::Info { files, ntuple, json, .. } => cmd::info::info(&files[0], ntuple.as_deref(), json),
        Cmd::Hist(a) => cmd::hist::hist(&a),
        Cmd::Report(a) => report::report(&a),
        Cmd::Check { file, ntuple, json } => cmd::check::check(&file, ntuple.as_deref(), json, progress),
        Cmd::Dump { files, sel, dataset } if dataset.is_dataset(&files) => {
            cmd::dataset::dump(&files, sel.ntuple.as_deref(), sel.fields.as_deref(), sel.entries.as_deref(), &dataset, progress)
        }
        Cmd::Dump { files, sel, .. } => cmd::dump::dump(&files[0], sel.ntuple.as_deref(), sel.fields.as_deref(), sel.entries.as_deref(), progress),
        Cmd::Merge { output, inputs, ntuple, compression, mode, cluster_size, threads, ignore_other_objects, checkpoint_clusters } => {
            let what = cmd::merge::MergeArgs { compression, mode, cluster_size, threads, ignore_other_objects, checkpoint_clusters };
            cmd::merge::merge(&output, &inputs, ntuple.as_deref(), &what, progress)
        }
        Cmd::Skim { paths, sel, where_, filters, threads, compression, reencode, fill_missing, checkpoint_clusters, precision, friends, on } => {
            let what = cmd::skim::SkimArgs { paths, sel, where_, filters, threads, compression, reencode, fill_missing, checkpoint_clusters, friends, on };
            precision.column_options().and_then(|cols| cmd::skim::skim(&what, cols, progress))
        }
        Cmd::ImportJson { file, ntuple, schema, input, compression, late_fields, late_at, checkpoint_clusters, precision } => {
            precision.column_options().and_then(|cols| {
                cmd::import_json::import_json(&file, &ntuple, &schema, &input, compression, late_fields.as_deref(), late_at, checkpoint_clusters, cols)
            })
        }
        Cmd::Convert { input, output, ntuple, tree, compression } => {
            cmd::convert::convert(&input, &output, ntuple.as_deref(), tree.as_deref(), compression, progress)
        }
        Cmd::Bench { what: BenchCmd::Read { file, ntuple, fields, bulk: true, .. } } => {
            let names: Option<Vec<&str>> = fields.as_deref().map(cmd::select::field_list);
            cmd::bench_bulk::bench_bulk(&file, ntuple.as_deref(), names.as_deref())
        }
        Cmd::Bench { what: BenchCmd::Read { file, ntuple, fields, read_ahead, read_ahead_bytes, streams, mmap, step, bulk: false } } => {
            let ra = cmd::bench_read::ReadAheadArgs { clusters: read_ahead, bytes: read_ahead_bytes, streams: streams.map(|n| n as usize), mmap };
            cmd::bench_read::bench_read(&file, ntuple.as_deref(), fields.as_deref(), ra, step)
        }
        Cmd::Bench { what: BenchCmd::WriteMpi(cfg) } => cmd::bench_write_mpi::bench_write_mpi(&cfg),
        Cmd::Bench {
            what:
                BenchCmd::Write {
                    threads,
                    entries,
                    compression,
                    mode,
                    preallocate,
                    write_outside_lock: _,
                    write_inside_lock,
                    direct_io,
                    page_size,
                    cluster_size,
                    output,
                    no_implicit_mt,
                    buffer_uncompressed,
                    checkpoint_clusters,
                },
        } => {
            let write_outside_lock = !write_inside_lock;
            let cfg = WriteBench {
                threads,
                entries,
                compression,
                mode,
                preallocate,
                write_outside_lock,
                direct_io,
                page_size,
                cluster_size,
                output,
                implicit_mt: !no_implicit_mt,
                buffer_uncompressed,
                progress,
                checkpoint_clusters,
            };
            cmd::bench_write::bench_write(&cfg)
        }
    };
    // Interrupted: the clean-up thread ends the process (by the signal).
    interrupt::wait_if_signalled();
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = std::io::stdout().flush();
            eprintln!("rntuple: error: {e}");
            ExitCode::FAILURE
        }
    }
}
