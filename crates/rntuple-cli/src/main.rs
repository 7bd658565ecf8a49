//! The `rntuple` command-line tool.

use clap::{Args, Parser, Subcommand};
use rntuple::format::anchor::AnchorStatus;
use rntuple::primitives::column_type::ColumnType;
use rntuple::{RNTupleFile, Reader};
use std::io::Write;
use std::process::ExitCode;
use std::time::Instant;

#[derive(Parser)]
#[command(name = "rntuple", version, about = "Inspect, dump and benchmark ROOT RNTuple files")]
struct Cli {
    /// Never show progress bars (they are shown on stderr only when it is a terminal).
    #[arg(long, global = true)]
    no_progress: bool,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Every RNTuple in the file: entries, clusters, field tree, columns with sizes.
    Info {
        /// A ROOT file.
        file: String,
        /// Only this RNTuple.
        #[arg(long)]
        ntuple: Option<String>,
        /// One JSON object instead of text (the same facts, for scripts).
        #[arg(long)]
        json: bool,
    },
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
    /// Entries as a JSON array, one object per entry.
    Dump {
        /// A ROOT file.
        file: String,
        #[command(flatten)]
        sel: Select,
    },
    /// Writes an RNTuple from entries in the JSON form of `dump` (a JSON array of objects).
    ImportJson {
        /// The ROOT file to create.
        file: String,
        /// The RNTuple name.
        #[arg(long)]
        ntuple: String,
        /// The schema as a JSON object: field name -> ROOT type name, in field order.
        #[arg(long)]
        schema: String,
        /// The entries (a JSON array); `-` for standard input.
        #[arg(long, default_value = "-")]
        input: String,
        /// Compression settings (algorithm*100+level).
        #[arg(long, default_value_t = 505)]
        compression: u32,
        /// Fields of the schema that join by late model extension at entry `--late-at`
        /// (comma-separated); earlier entries read them as default values.
        #[arg(long)]
        late_fields: Option<String>,
        /// The entry at which the late fields are added.
        #[arg(long, default_value_t = 0)]
        late_at: usize,
    },
    /// Merges the RNTuple of several files (same schema) into a new file by copying compressed
    /// pages, without decompressing them; prints one JSON object with what was copied.
    Merge {
        /// The ROOT file to create.
        output: String,
        /// The input files, merged in this order.
        #[arg(required = true)]
        inputs: Vec<String>,
        /// The RNTuple (may be omitted when the first input holds exactly one).
        #[arg(long)]
        ntuple: Option<String>,
        /// Compression of the output's header, footer and page list (pages keep theirs).
        #[arg(long, default_value_t = 505)]
        compression: u32,
        /// strict: every input has the same schema; filter: the first input's fields, found by
        /// name in the others (which may order them differently and have more, dropped).
        #[arg(long, default_value = "strict", value_parser = ["strict", "filter"])]
        mode: String,
    },
    /// Writes some top-level fields and/or a range of entries of an RNTuple into a new file; copies
    /// the compressed pages when the range is made of whole clusters, re-encodes otherwise; prints
    /// one JSON object with what was done.
    Skim {
        /// The input ROOT file.
        input: String,
        /// The ROOT file to create.
        output: String,
        #[command(flatten)]
        sel: Select,
        /// Compression of the output's envelopes, and of its pages when re-encoded (copied pages
        /// keep theirs).
        #[arg(long, default_value_t = 505)]
        compression: u32,
        /// Re-encode even when the pages could be copied (to recompress them, say).
        #[arg(long)]
        reencode: bool,
    },
    /// Benchmarks.
    Bench {
        #[command(subcommand)]
        what: BenchCmd,
    },
}

/// Which RNTuple, fields and entries a command works on (`dump`, `skim`).
#[derive(Args)]
struct Select {
    /// The RNTuple (may be omitted when the file holds exactly one).
    #[arg(long)]
    ntuple: Option<String>,
    /// Comma-separated top-level fields (default: all).
    #[arg(long)]
    fields: Option<String>,
    /// Entry range START:STOP (either side may be omitted).
    #[arg(long)]
    entries: Option<String>,
}

/// The names of a comma-separated `--fields` list (empty items dropped).
fn field_list(s: &str) -> Vec<&str> {
    s.split(',').map(str::trim).filter(|x| !x.is_empty()).collect()
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
        #[arg(long, default_value_t = 505)]
        compression: u32,
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
    },
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
    },
}

fn main() -> ExitCode {
    // Behave like other Unix tools when the reader of our output goes away (`rntuple dump | head`):
    // die quietly from SIGPIPE instead of failing a write.
    // SAFETY: restoring the default disposition of SIGPIPE at start-up, before any thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    let progress = !cli.no_progress;
    let r = match cli.cmd {
        Cmd::Info { file, ntuple, json } => info(&file, ntuple.as_deref(), json),
        Cmd::Check { file, ntuple, json } => check(&file, ntuple.as_deref(), json, progress),
        Cmd::Dump { file, sel } => dump(&file, sel.ntuple.as_deref(), sel.fields.as_deref(), sel.entries.as_deref(), progress),
        Cmd::Merge { output, inputs, ntuple, compression, mode } => merge(&output, &inputs, ntuple.as_deref(), compression, &mode, progress),
        Cmd::Skim { input, output, sel, compression, reencode } => skim(&input, &output, &sel, compression, reencode, progress),
        Cmd::ImportJson { file, ntuple, schema, input, compression, late_fields, late_at } => {
            import_json(&file, &ntuple, &schema, &input, compression, late_fields.as_deref(), late_at)
        }
        Cmd::Bench { what: BenchCmd::Read { file, ntuple, fields } } => bench_read(&file, ntuple.as_deref(), fields.as_deref()),
        Cmd::Bench { what: BenchCmd::Write { threads, entries, compression, mode, preallocate, write_outside_lock: _, write_inside_lock, direct_io, page_size, cluster_size, output, no_implicit_mt, buffer_uncompressed } } => {
            let write_outside_lock = !write_inside_lock;
            let cfg = WriteBench { threads, entries, compression, mode, preallocate, write_outside_lock, direct_io, page_size, cluster_size, output, implicit_mt: !no_implicit_mt, buffer_uncompressed, progress };
            bench_write(&cfg)
        }
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = std::io::stdout().flush();
            eprintln!("rntuple: error: {e}");
            ExitCode::FAILURE
        }
    }
}

type Res = Result<(), Box<dyn std::error::Error>>;

fn pick_ntuple(f: &RNTupleFile, name: Option<&str>) -> Result<String, Box<dyn std::error::Error>> {
    if let Some(n) = name {
        return Ok(n.to_string());
    }
    let names = f.names();
    match names.len() {
        1 => Ok(names[0].clone()),
        0 => Err("the file holds no RNTuple".into()),
        _ => Err(format!("the file holds several RNTuples ({}); choose one with --ntuple", names.join(", ")).into()),
    }
}

fn human(n: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut x = n as f64;
    let mut u = 0;
    while x >= 1024.0 && u + 1 < units.len() {
        x /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{x:.2} {}", units[u])
    }
}

fn info(path: &str, only: Option<&str>, json: bool) -> Res {
    let f = RNTupleFile::open(path)?;
    let names = f.names();
    let v = f.root_file().root_version;
    let version = format!("{}.{:02}/{:02}", v / 10000, v / 100 % 100, v % 100);
    if !json {
        println!("file: {path} (ROOT file version {v}: {version})");
        if names.is_empty() {
            println!("no RNTuple in this file");
        }
    }
    let mut failures = Vec::new();
    if let Some(o) = only {
        if !names.iter().any(|n| n == o || n.ends_with(&format!("/{o}"))) {
            return Err(format!("no RNTuple named '{o}' in {path} (it holds: {})", if names.is_empty() { "none".into() } else { names.join(", ") }).into());
        }
    }
    let mut objs = Vec::new();
    for name in &names {
        if let Some(o) = only {
            if o != name && !name.ends_with(&format!("/{o}")) {
                continue;
            }
        }
        if !json {
            println!();
        }
        let problem = match f.anchor_status(name) {
            Some(AnchorStatus::Legacy(msg)) => Some(("REFUSED", msg.to_string())),
            Some(AnchorStatus::Broken(msg)) => Some(("BROKEN ANCHOR", msg.to_string())),
            _ => None,
        };
        let r = match problem {
            Some(p) => Err(p),
            None => f.reader(name).map_err(|e| ("ERROR", e.to_string())),
        };
        match r {
            Ok(r) if json => objs.push(ntuple_json(name, &r)),
            Ok(r) => print_info(name, &r),
            Err((what, msg)) => {
                if json {
                    objs.push(serde_json::json!({ "name": name, "error": format!("{}: {msg}", what.to_lowercase()) }));
                } else {
                    println!("RNTuple '{name}': {what}: {msg}");
                }
                failures.push(format!("RNTuple '{name}': {msg}"));
            }
        }
    }
    if json {
        println!("{}", serde_json::json!({ "file": path, "root_version_code": v, "root_version": version, "ntuples": objs }));
    }
    if !failures.is_empty() {
        return Err(failures.join("; ").into());
    }
    Ok(())
}

/// Per physical column: stored (compressed) bytes, uncompressed bytes, pages.
fn column_sizes(d: &rntuple::format::descriptor::Descriptor) -> Vec<(u64, u64, u64)> {
    let mut out = vec![(0u64, 0u64, 0u64); d.columns.len()];
    for c in &d.clusters {
        for (i, cr) in c.columns.iter().enumerate() {
            if let (Some(cr), Some(o)) = (cr, out.get_mut(i)) {
                for p in &cr.pages {
                    o.0 += p.locator.size;
                    o.1 += (p.n_elements as u64 * d.columns[i].bits_on_storage as u64).div_ceil(8);
                    o.2 += 1;
                }
            }
        }
    }
    out
}

/// `info --json` for one RNTuple: the facts of the text form as one object.
fn ntuple_json(name: &str, r: &Reader) -> serde_json::Value {
    let d = r.descriptor();
    let a = r.anchor();
    let sizes = column_sizes(d);
    let mut fields = Vec::new();
    fn walk(r: &Reader, id: u32, out: &mut Vec<serde_json::Value>) {
        let d = r.descriptor();
        let f = &d.fields[id as usize];
        out.push(serde_json::json!({
            "path": field_path(r, id), "type": r.display_type(id), "type_alias": f.type_alias,
            "projected": f.projection_source.is_some(), "schema_extension": f.from_extension,
            "streamer": matches!(r.kind(id), Ok(rntuple::logical::kind::Kind::Streamer)),
            "top_level": f.parent.is_none(), "readable": r.is_readable(id),
        }));
        for &c in &f.children {
            walk(r, c, out);
        }
    }
    for id in d.top_level_fields() {
        walk(r, id, &mut fields);
    }
    let columns: Vec<serde_json::Value> = d
        .columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let t = ColumnType::from_u16(c.column_type);
            serde_json::json!({
                "id": i, "field": field_path(r, c.field_id), "type": t.map_or(format!("unknown({:#x})", c.column_type), |t| t.name().to_string()),
                "encoding": t.map_or("?".to_string(), |t| t.encoding().to_string()), "bits": c.bits_on_storage,
                "representation": c.representation, "deferred_first_element": (c.flags & 1 != 0).then_some(c.first_element),
                "compressed_bytes": sizes[i].0, "uncompressed_bytes": sizes[i].1, "pages": sizes[i].2,
            })
        })
        .collect();
    let aliases: Vec<serde_json::Value> = d.aliases.iter().map(|al| serde_json::json!({ "field": field_path(r, al.field_id), "physical_column": al.physical })).collect();
    let skipped: Vec<serde_json::Value> = r.skipped_fields().into_iter().map(|(n, why)| serde_json::json!({ "field": n, "why": why })).collect();
    serde_json::json!({
        "name": name, "format_version": format!("{}.{}.{}.{}", a.epoch, a.major, a.minor, a.patch), "writer": d.writer,
        "description": d.description, "entries": r.num_entries(), "clusters": d.clusters.len(), "cluster_groups": d.cluster_groups.len(),
        "compressed_bytes": sizes.iter().map(|s| s.0).sum::<u64>(), "uncompressed_bytes": sizes.iter().map(|s| s.1).sum::<u64>(),
        "fields": fields, "columns": columns, "alias_columns": aliases, "skipped_fields": skipped,
    })
}

fn print_info(name: &str, r: &Reader) {
    let d = r.descriptor();
    let a = r.anchor();
    println!("RNTuple '{name}'");
    println!("  format version : {}.{}.{}.{}", a.epoch, a.major, a.minor, a.patch);
    println!("  writer         : {}", d.writer);
    if !d.description.is_empty() {
        println!("  description    : {}", d.description);
    }
    println!("  entries        : {}", r.num_entries());
    println!("  clusters       : {} in {} cluster group(s)", d.clusters.len(), d.cluster_groups.len());
    let sizes = column_sizes(d);
    println!("  stored bytes   : {} compressed, {} uncompressed", human(sizes.iter().map(|s| s.0).sum()), human(sizes.iter().map(|s| s.1).sum()));
    println!("  fields:");
    fn walk(r: &Reader, id: u32, depth: usize) {
        let d = r.descriptor();
        let f = &d.fields[id as usize];
        let mut extra = String::new();
        if !f.type_alias.is_empty() {
            extra.push_str(&format!(" (alias {})", f.type_alias));
        }
        if f.projection_source.is_some() {
            extra.push_str(" [projected]");
        }
        if f.from_extension {
            extra.push_str(" [schema extension]");
        }
        if let Ok(rntuple::logical::kind::Kind::Streamer) = r.kind(id) {
            extra.push_str(" [streamer field: read as raw bytes per entry]");
        }
        if !r.is_readable(id) && f.parent.is_none() {
            extra.push_str(" [SKIPPED: cannot be read]");
        }
        println!("    {}{}: {}{}", "  ".repeat(depth), f.name, r.display_type(id), extra);
        for &c in &f.children {
            walk(r, c, depth + 1);
        }
    }
    for id in d.top_level_fields() {
        walk(r, id, 0);
    }
    for (n, why) in r.skipped_fields() {
        println!("  skipped field '{n}': {why}");
    }
    println!("  columns:");
    println!("    {:>4}  {:<40} {:<13} {:<28} {:>5} {:>12} {:>12} {:>6}", "id", "field", "type", "encoding", "bits", "compressed", "uncompressed", "pages");
    for (i, c) in d.columns.iter().enumerate() {
        let path = field_path(r, c.field_id);
        let (tn, enc) = match ColumnType::from_u16(c.column_type) {
            Some(t) => (t.name().to_string(), t.encoding().to_string()),
            None => (format!("unknown({:#x})", c.column_type), "?".into()),
        };
        let mut enc = enc;
        if c.representation > 0 {
            enc.push_str(&format!(" (repr {})", c.representation));
        }
        if c.flags & 1 != 0 {
            enc.push_str(&format!(" (deferred@{})", c.first_element));
        }
        println!("    {:>4}  {:<40} {:<13} {:<28} {:>5} {:>12} {:>12} {:>6}", i, path, tn, enc, c.bits_on_storage, sizes[i].0, sizes[i].1, sizes[i].2);
    }
    for a in &d.aliases {
        println!("    alias: field {} -> physical column {}", field_path(r, a.field_id), a.physical);
    }
}

fn field_path(r: &Reader, id: u32) -> String {
    let d = r.descriptor();
    let mut parts = vec![d.fields[id as usize].name.clone()];
    let mut p = d.fields[id as usize].parent;
    while let Some(pp) = p {
        parts.push(d.fields[pp as usize].name.clone());
        p = d.fields[pp as usize].parent;
    }
    parts.reverse();
    parts.join(".")
}

fn parse_range(s: Option<&str>, n: u64) -> Result<(u64, u64), Box<dyn std::error::Error>> {
    let Some(s) = s else { return Ok((0, n)) };
    let (a, b) = s.split_once(':').ok_or_else(|| format!("--entries '{s}': expected START:STOP"))?;
    let a: u64 = if a.is_empty() { 0 } else { a.parse().map_err(|_| format!("--entries: bad start '{a}'"))? };
    let b: u64 = if b.is_empty() { n } else { b.parse().map_err(|_| format!("--entries: bad stop '{b}'"))? };
    Ok((a.min(n), b.min(n).max(a.min(n))))
}

/// A progress bar on stderr, or a hidden one when asked for none or stderr is not a terminal
/// (pipes, CI), so that scripts see exactly the same output either way.
fn progress_bar(len: u64, what: &str, enabled: bool) -> indicatif::ProgressBar {
    use std::io::IsTerminal;
    if !enabled || !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let style = indicatif::ProgressStyle::with_template("{msg:>8} [{elapsed_precise}] [{wide_bar}] {human_pos}/{human_len} ({per_sec}, {eta} left)")
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
        .progress_chars("=> ");
    let pb = indicatif::ProgressBar::with_draw_target(Some(len), indicatif::ProgressDrawTarget::stderr_with_hz(10)).with_style(style);
    pb.set_message(what.to_string());
    pb
}

fn check(path: &str, only: Option<&str>, json: bool, progress: bool) -> Res {
    let f = RNTupleFile::open(path)?;
    let names: Vec<String> = match only {
        Some(n) => vec![n.to_string()],
        None => f.names(),
    };
    if names.is_empty() {
        return Err("the file holds no RNTuple".into());
    }
    if !json {
        println!("file: {path}");
    }
    let (mut damaged, mut out) = (0usize, Vec::new());
    for name in &names {
        let r = match f.reader(name) {
            Ok(r) => r,
            Err(e) => {
                damaged += 1;
                if json {
                    out.push(serde_json::json!({"name": name, "error": e.to_string()}));
                } else {
                    println!("RNTuple '{name}': cannot be read: {e}");
                }
                continue;
            }
        };
        let pb = progress_bar(0, "checked", progress);
        let rep = r.check(|done, total| {
            pb.set_length(total);
            pb.set_position(done);
        });
        pb.finish_and_clear();
        damaged += rep.problems.len();
        if json {
            let problems: Vec<serde_json::Value> = rep
                .problems
                .iter()
                .map(|p| serde_json::json!({"field": p.field, "cluster": p.cluster, "first_entry": p.entries.0, "end_entry": p.entries.1, "error": p.error}))
                .collect();
            let skipped: serde_json::Map<String, serde_json::Value> = rep.skipped_fields.iter().map(|(k, v)| (k.clone(), v.clone().into())).collect();
            out.push(serde_json::json!({"name": name, "entries": rep.entries, "clusters": rep.clusters, "fields": rep.fields, "pages": rep.pages,
                "stored_bytes": rep.stored_bytes, "uncompressed_bytes": rep.uncompressed_bytes, "skipped_fields": skipped, "problems": problems}));
        } else {
            let verdict = if rep.problems.is_empty() { "OK".to_string() } else { format!("{} damaged (field, cluster) pairs", rep.problems.len()) };
            let n = |k: usize, one: &str, many: &str| format!("{k} {}", if k == 1 { one } else { many });
            println!(
                "RNTuple '{name}': {}, {}, {}, {} ({} stored, {} uncompressed): {verdict}",
                n(rep.entries as usize, "entry", "entries"),
                n(rep.clusters, "cluster", "clusters"),
                n(rep.fields, "field", "fields"),
                n(rep.pages as usize, "page", "pages"),
                human(rep.stored_bytes),
                human(rep.uncompressed_bytes)
            );
            for (field, why) in &rep.skipped_fields {
                println!("  not checked: field '{field}': {why}");
            }
            for p in &rep.problems {
                println!("  cluster {} (entries {}..{}), field '{}': {}", p.cluster, p.entries.0, p.entries.1, p.field, p.error);
            }
        }
    }
    if json {
        println!("{}", serde_json::json!({"file": path, "ok": damaged == 0, "ntuples": out}));
    }
    if damaged > 0 {
        return Err(format!("{path}: {damaged} problem(s) found").into());
    }
    Ok(())
}

fn skim(input: &str, output: &str, sel: &Select, compression: u32, reencode: bool, progress: bool) -> Res {
    use rntuple::ops::skim::{skim_with_progress, Skim};
    let f = RNTupleFile::open(input)?;
    let name = pick_ntuple(&f, sel.ntuple.as_deref())?;
    let n = f.reader(&name)?.num_entries();
    let what = Skim {
        fields: sel.fields.as_deref().map(|s| field_list(s).into_iter().map(String::from).collect()),
        entries: sel.entries.as_deref().map(|e| parse_range(Some(e), n)).transpose()?,
        reencode,
    };
    let opts = rntuple::write::WriteOptions { compression, ..Default::default() };
    let t = Instant::now();
    let pb = progress_bar(0, "entries", progress);
    let stats = skim_with_progress(input, &name, output, &what, opts, |done, total| {
        pb.set_length(total);
        pb.set_position(done);
    })?;
    pb.finish_and_clear();
    println!(
        "{}",
        serde_json::json!({
            "input": input, "output": output, "ntuple": name, "method": stats.method.as_str(), "why_not_copied": stats.reason,
            "fields": stats.fields, "entry_start": stats.range.0, "entry_stop": stats.range.1, "entries": stats.entries,
            "clusters": stats.clusters, "pages_copied": stats.pages, "page_bytes_copied": stats.page_bytes,
            "file_bytes": stats.file_bytes, "seconds": t.elapsed().as_secs_f64(),
        })
    );
    Ok(())
}

fn merge(output: &str, inputs: &[String], ntuple: Option<&str>, compression: u32, mode: &str, progress: bool) -> Res {
    let mode: rntuple::ops::merge::MergeMode = mode.parse()?;
    let first = inputs.first().ok_or("merge: no input files")?;
    let name = pick_ntuple(&RNTupleFile::open(first)?, ntuple)?;
    let opts = rntuple::write::WriteOptions { compression, ..Default::default() };
    let t = Instant::now();
    let pb = progress_bar(0, "clusters", progress);
    let stats = rntuple::ops::merge::merge_with_mode(inputs, &name, output, mode, opts, |done, total| {
        pb.set_length(total);
        pb.set_position(done);
    })?;
    pb.finish_and_clear();
    let secs = t.elapsed().as_secs_f64();
    println!(
        "{}",
        serde_json::json!({
            "output": output, "ntuple": name, "inputs": inputs.len(), "mode": format!("{mode:?}").to_lowercase(), "entries": stats.entries, "clusters": stats.clusters,
            "pages": stats.pages, "page_bytes": stats.page_bytes, "file_bytes": stats.file_bytes, "seconds": secs,
            "mb_per_second": stats.page_bytes as f64 / 1e6 / secs,
        })
    );
    Ok(())
}

fn dump(path: &str, ntuple: Option<&str>, fields: Option<&str>, entries: Option<&str>, progress: bool) -> Res {
    let f = RNTupleFile::open(path)?;
    let name = pick_ntuple(&f, ntuple)?;
    let r = f.reader(&name)?;
    let (start, stop) = parse_range(entries, r.num_entries())?;
    // Keys come in schema order whatever the order of --fields (DESIGN.md).
    let order: Vec<String> = r.fields().iter().map(|f| f.name.clone()).collect();
    let names: Option<Vec<&str>> = fields.map(|s| {
        let mut v = field_list(s);
        v.sort_by_key(|n| order.iter().position(|o| o == n).unwrap_or(usize::MAX));
        v.dedup();
        v
    });
    let out = std::io::stdout();
    let mut w = std::io::BufWriter::new(out.lock());
    write!(w, "[")?;
    let step = 4096u64;
    let mut first = true;
    let mut s = start;
    let pb = progress_bar(stop.saturating_sub(start), "entries", progress);
    while s < stop {
        let e = (s + step).min(stop);
        let vals = r.read_values(names.as_deref(), s, e)?;
        for v in vals {
            if !first {
                write!(w, ",")?;
            }
            first = false;
            writeln!(w)?;
            serde_json::to_writer(&mut w, &v.to_json())?;
        }
        pb.inc(e - s);
        s = e;
    }
    pb.finish_and_clear();
    writeln!(w, "\n]")?;
    w.flush()?;
    Ok(())
}

fn bench_read(path: &str, ntuple: Option<&str>, fields: Option<&str>) -> Res {
    use arrow_cast_sum::sums;
    let f = RNTupleFile::open(path)?;
    let name = pick_ntuple(&f, ntuple)?;
    let r = f.reader(&name)?;
    let names: Option<Vec<&str>> = fields.map(field_list);
    let n = r.num_entries();
    let t = Instant::now();
    let batch = r.read_batch(names.as_deref(), 0, n)?;
    let secs = t.elapsed().as_secs_f64();
    let stored = r.stats().stored_bytes.load(std::sync::atomic::Ordering::Relaxed);
    let unz = r.stats().uncompressed_bytes.load(std::sync::atomic::Ordering::Relaxed);
    let (_, _, dsecs) = r.decompress_only(names.as_deref())?;
    let fresh = r.decompress_fresh(names.as_deref())?;
    let mut obj = serde_json::Map::new();
    obj.insert("entries".into(), n.into());
    obj.insert("seconds".into(), secs.into());
    obj.insert("stored_bytes".into(), stored.into());
    obj.insert("uncompressed_bytes".into(), unz.into());
    obj.insert("decompress_seconds".into(), dsecs.into());
    obj.insert("decompress_fresh_seconds".into(), fresh.into());
    obj.insert("threads".into(), std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).into());
    sums(&batch, &mut obj);
    println!("{}", serde_json::Value::Object(obj));
    Ok(())
}

fn import_json(file: &str, ntuple: &str, schema: &str, input: &str, compression: u32, late: Option<&str>, late_at: usize) -> Res {
    use rntuple::write::writer::{WriteOptions, Writer};
    let schema: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(schema).map_err(|e| format!("--schema must be a JSON object of field name -> type name: {e}"))?;
    let fields: Vec<(String, String)> = schema
        .iter()
        .map(|(k, v)| v.as_str().map(|t| (k.clone(), t.to_string())).ok_or_else(|| format!("--schema: the type of '{k}' must be a string")))
        .collect::<Result<_, _>>()?;
    let text = if input == "-" {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)?;
        s
    } else {
        std::fs::read_to_string(input).map_err(|e| format!("reading {input}: {e}"))?
    };
    let entries: Vec<serde_json::Value> = serde_json::from_str(&text).map_err(|e| format!("the input must be a JSON array of entries: {e}"))?;
    let late: Vec<&str> = late.map(field_list).unwrap_or_default();
    for l in &late {
        if !fields.iter().any(|(n, _)| n == l) {
            return Err(format!("--late-fields: '{l}' is not in the schema").into());
        }
    }
    let pairs: Vec<(&str, &str)> = fields.iter().filter(|(n, _)| !late.contains(&n.as_str())).map(|(a, b)| (a.as_str(), b.as_str())).collect();
    let mut w = Writer::create(file, ntuple, &pairs, WriteOptions { compression, ..Default::default() })?;
    for (i, e) in entries.iter().enumerate() {
        if i == late_at {
            for (n, t) in fields.iter().filter(|(n, _)| late.contains(&n.as_str())) {
                w.add_field(n, t)?;
            }
        }
        let mut v = rntuple::Value::from_json(e);
        if i < late_at {
            if let rntuple::Value::Record(m) = &mut v {
                m.retain(|(k, _)| !late.contains(&k.as_str()));
            }
        }
        w.fill(&v).map_err(|err| format!("entry {i}: {err}"))?;
    }
    w.commit()?;
    Ok(())
}

/// Deterministic generator (SplitMix64) for the synthetic data pools.
struct SplitMix(u64);
impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn uniform(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Poisson by Knuth's multiplication method (fine for a small mean).
    fn poisson(&mut self, mean: f64) -> usize {
        let l = (-mean).exp();
        let (mut k, mut p) = (0, 1.0);
        loop {
            p *= self.uniform();
            if p <= l {
                return k;
            }
            k += 1;
        }
    }
}

/// The settings of `bench write`.
struct WriteBench {
    threads: usize,
    entries: u64,
    compression: u32,
    mode: String,
    preallocate: bool,
    write_outside_lock: bool,
    progress: bool,
    direct_io: bool,
    page_size: Option<u64>,
    cluster_size: u64,
    output: String,
    implicit_mt: bool,
    buffer_uncompressed: bool,
}

/// The synthetic data, made before the timed region: 16 chunks of `particles` (Poisson(5)
/// sizes, values uniform in [0,100)), each cut from a different place of a value pool. eventId
/// is made per chunk while writing (it is the entry's global number).
struct SyntheticData {
    chunks: Vec<rntuple::arrow::array::ArrayRef>,
    items_per_chunk: Vec<u64>,
    schema: std::sync::Arc<rntuple::arrow::datatypes::Schema>,
}

const SYNTH_CHUNK: usize = 1 << 16;

impl SyntheticData {
    fn new() -> Result<Self, Box<dyn std::error::Error>> {
        use rntuple::arrow::array::{Float32Array, LargeListArray};
        use rntuple::arrow::datatypes::{DataType, Field, Schema};
        use std::sync::Arc;
        let mut rng = SplitMix(20251122);
        let pool: Vec<f32> = (0..(1 << 22)).map(|_| (rng.uniform() * 100.0) as f32).collect();
        let item = Arc::new(Field::new("_0", DataType::Float32, false));
        let mut chunks: Vec<rntuple::arrow::array::ArrayRef> = Vec::new();
        let mut items_per_chunk = Vec::new();
        for _ in 0..16 {
            let mut offsets = vec![0i64];
            for _ in 0..SYNTH_CHUNK {
                offsets.push(offsets[offsets.len() - 1] + rng.poisson(5.0) as i64);
            }
            let n = offsets[SYNTH_CHUNK] as usize;
            let start = (rng.next() as usize) % (pool.len() - n);
            let values = Float32Array::from(pool[start..start + n].to_vec());
            chunks.push(Arc::new(LargeListArray::try_new(item.clone(), rntuple::arrow::buffer::OffsetBuffer::new(offsets.into()), Arc::new(values), None)?));
            items_per_chunk.push(n as u64);
        }
        let schema = Arc::new(Schema::new(vec![Field::new("eventId", DataType::UInt64, false), Field::new("particles", DataType::LargeList(item), false)]));
        Ok(SyntheticData { chunks, items_per_chunk, schema })
    }

    /// Feeds `entries` entries with ids from `first_id` to `append`, chunk by chunk; returns
    /// the number of particle values written.
    fn feed(&self, first_id: u64, entries: u64, mut append: impl FnMut(&rntuple::arrow::array::RecordBatch) -> rntuple::Result<()>) -> Result<u64, Box<dyn std::error::Error + Send + Sync>> {
        use rntuple::arrow::array::{ArrayRef, RecordBatch, UInt64Array};
        use std::sync::Arc;
        let (mut done, mut items, mut k) = (0u64, 0u64, 0usize);
        while done < entries {
            let n = (entries - done).min(SYNTH_CHUNK as u64) as usize;
            let ids: ArrayRef = Arc::new(UInt64Array::from_iter_values(first_id + done..first_id + done + n as u64));
            let parts = self.chunks[k % self.chunks.len()].slice(0, n);
            items += if n == SYNTH_CHUNK {
                self.items_per_chunk[k % self.chunks.len()]
            } else {
                use rntuple::arrow::array::cast::AsArray;
                let o = parts.as_list::<i64>().value_offsets();
                (o[o.len() - 1] - o[0]) as u64
            };
            append(&RecordBatch::try_new(self.schema.clone(), vec![ids, parts])?)?;
            done += n as u64;
            k += 1;
        }
        Ok(items)
    }
}

fn bench_write(cfg: &WriteBench) -> Res {
    use rntuple::write::{ContextMetrics, ParallelWriter, WriteOptions, Writer};
    const SCHEMA: [(&str, &str); 2] = [("eventId", "std::uint64_t"), ("particles", "std::vector<float>")];
    let (t_n, n) = (cfg.threads, cfg.entries);
    if t_n == 0 {
        return Err("--threads must be at least 1".into());
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
        ..Default::default()
    };
    let pb = progress_bar(n * t_n as u64, "entries", cfg.progress);
    let counted = |b: &rntuple::arrow::array::RecordBatch| pb.inc(b.num_rows() as u64);
    let t = Instant::now();
    let (bytes, items, contexts, clusters): (u64, u64, Vec<ContextMetrics>, u64) = match cfg.mode.as_str() {
        "sequential" => {
            let mut w = Writer::create(&cfg.output, "Events", &SCHEMA, opts)?;
            let items = data.feed(0, n, |b| w.append_batch(b).map(|_| counted(b))).map_err(|e| e.to_string())?;
            let bytes = w.commit()?;
            let clusters = rntuple::RNTupleFile::open(&cfg.output).ok().and_then(|f| f.reader("Events").ok()).map(|r| r.descriptor().clusters.len() as u64).unwrap_or(0);
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
                            let m = ContextMetrics { entries: n, clusters, bytes_written: bytes, wall_seconds: t0.elapsed().as_secs_f64(), ..Default::default() };
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
            "threads": t_n, "mode": cfg.mode, "implicit_mt": cfg.implicit_mt && cfg.mode == "sequential", "compression": cfg.compression,
            "entries": entries, "seconds": secs, "entries_per_second": entries as f64 / secs, "stored_bytes": bytes,
            "stored_mb_per_second": bytes as f64 / 1e6 / secs, "uncompressed_mb_per_second": raw as f64 / 1e6 / secs,
            "clusters": clusters, "preallocate": cfg.preallocate, "write_outside_lock": cfg.write_outside_lock, "direct_io": cfg.direct_io, "stream_uncompressed_pages": !cfg.buffer_uncompressed && cfg.mode == "sequential",
            "page_size": opts_page_size(cfg), "output": cfg.output,
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

mod arrow_cast_sum {
    //! Checksums over a batch so that benchmarks can verify they read the same data.
    use rntuple::arrow::array::cast::AsArray;
    use rntuple::arrow::array::{Array, RecordBatch};
    use rntuple::arrow::datatypes::{DataType, Float32Type, UInt64Type};

    pub fn sums(b: &RecordBatch, obj: &mut serde_json::Map<String, serde_json::Value>) {
        for (i, f) in b.schema().fields().iter().enumerate() {
            let col = b.column(i);
            match f.data_type() {
                DataType::UInt64 => {
                    let s: u64 = col.as_primitive::<UInt64Type>().values().iter().fold(0u64, |a, &x| a.wrapping_add(x));
                    obj.insert(if f.name() == "eventId" { "checksum".into() } else { format!("{}_sum", f.name()) }, s.into());
                }
                DataType::LargeList(_) => {
                    let l = col.as_list::<i64>();
                    let v = l.values();
                    if let Some(p) = v.as_primitive_opt::<Float32Type>() {
                        let s: f64 = p.values().iter().map(|&x| x as f64).sum();
                        obj.insert(format!("{}_sum", f.name()), s.into());
                    }
                    obj.insert(format!("{}_items", f.name()), (v.len() as u64).into());
                }
                _ => {}
            }
        }
    }
}
