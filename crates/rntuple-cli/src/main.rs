//! The `rntuple` command-line tool.

use clap::{Parser, Subcommand};
use rntuple::format::anchor::AnchorStatus;
use rntuple::primitives::column_type::ColumnType;
use rntuple::{RNTupleFile, Reader};
use std::io::Write;
use std::process::ExitCode;
use std::time::Instant;

#[derive(Parser)]
#[command(name = "rntuple", version, about = "Inspect, dump and benchmark ROOT RNTuple files")]
struct Cli {
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
    },
    /// Entries as a JSON array, one object per entry.
    Dump {
        /// A ROOT file.
        file: String,
        /// The RNTuple (may be omitted when the file holds exactly one).
        #[arg(long)]
        ntuple: Option<String>,
        /// Comma-separated top-level fields (default: all).
        #[arg(long)]
        fields: Option<String>,
        /// Entry range START:STOP (either side may be omitted).
        #[arg(long)]
        entries: Option<String>,
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
    /// Benchmarks.
    Bench {
        #[command(subcommand)]
        what: BenchCmd,
    },
}

#[derive(Subcommand)]
enum BenchCmd {
    /// The synthetic write benchmark of the parallel-writing paper: eventId (std::uint64_t) and
    /// particles (std::vector<float>, Poisson(5) sizes, uniform [0,100) from a precomputed pool).
    Write {
        /// Writing threads (this version: 1).
        #[arg(long, default_value_t = 1)]
        threads: usize,
        /// Entries per thread.
        #[arg(long, default_value_t = 1_000_000)]
        entries: u64,
        /// Compression settings (algorithm*100+level).
        #[arg(long, default_value_t = 505)]
        compression: u32,
        /// Writing mode (this version: buffered).
        #[arg(long, default_value = "buffered")]
        mode: String,
        /// Output file (default /dev/null).
        #[arg(long, default_value = "/dev/null")]
        output: String,
        /// Compress each page as soon as it is full, on the filling thread, instead of compressing
        /// a cluster's pages on all cores at its commit (ROOT's implicit multithreading).
        #[arg(long)]
        no_implicit_mt: bool,
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
    let r = match cli.cmd {
        Cmd::Info { file, ntuple } => info(&file, ntuple.as_deref()),
        Cmd::Dump { file, ntuple, fields, entries } => dump(&file, ntuple.as_deref(), fields.as_deref(), entries.as_deref()),
        Cmd::ImportJson { file, ntuple, schema, input, compression, late_fields, late_at } => {
            import_json(&file, &ntuple, &schema, &input, compression, late_fields.as_deref(), late_at)
        }
        Cmd::Bench { what: BenchCmd::Read { file, ntuple, fields } } => bench_read(&file, ntuple.as_deref(), fields.as_deref()),
        Cmd::Bench { what: BenchCmd::Write { threads, entries, compression, mode, output, no_implicit_mt } } => {
            bench_write(threads, entries, compression, &mode, &output, !no_implicit_mt)
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

fn info(path: &str, only: Option<&str>) -> Res {
    let f = RNTupleFile::open(path)?;
    let names = f.names();
    println!("file: {path} (written by ROOT {})", f.root_file().root_version);
    if names.is_empty() {
        println!("no RNTuple in this file");
    }
    let mut failures = Vec::new();
    if let Some(o) = only {
        if !names.iter().any(|n| n == o || n.ends_with(&format!("/{o}"))) {
            return Err(format!("no RNTuple named '{o}' in {path} (it holds: {})", if names.is_empty() { "none".into() } else { names.join(", ") }).into());
        }
    }
    for name in &names {
        if let Some(o) = only {
            if o != name && !name.ends_with(&format!("/{o}")) {
                continue;
            }
        }
        println!();
        match f.anchor_status(name) {
            Some(AnchorStatus::Legacy(msg)) => {
                println!("RNTuple '{name}': REFUSED: {msg}");
                failures.push(format!("RNTuple '{name}': {msg}"));
                continue;
            }
            Some(AnchorStatus::Broken(msg)) => {
                println!("RNTuple '{name}': BROKEN ANCHOR: {msg}");
                failures.push(format!("RNTuple '{name}': {msg}"));
                continue;
            }
            _ => {}
        }
        let r = match f.reader(name) {
            Ok(r) => r,
            Err(e) => {
                println!("RNTuple '{name}': ERROR: {e}");
                failures.push(format!("RNTuple '{name}': {e}"));
                continue;
            }
        };
        print_info(name, &r);
    }
    if !failures.is_empty() {
        return Err(failures.join("; ").into());
    }
    Ok(())
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
    // Per-column sizes.
    let mut comp = vec![0u64; d.columns.len()];
    let mut unz = vec![0u64; d.columns.len()];
    let mut pages = vec![0u64; d.columns.len()];
    for c in &d.clusters {
        for (i, cr) in c.columns.iter().enumerate() {
            if let Some(cr) = cr {
                for p in &cr.pages {
                    comp[i] += p.locator.size;
                    unz[i] += (p.n_elements as u64 * d.columns[i].bits_on_storage as u64).div_ceil(8);
                    pages[i] += 1;
                }
            }
        }
    }
    println!("  stored bytes   : {} compressed, {} uncompressed", human(comp.iter().sum()), human(unz.iter().sum()));
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
        println!("    {:>4}  {:<40} {:<13} {:<28} {:>5} {:>12} {:>12} {:>6}", i, path, tn, enc, c.bits_on_storage, comp[i], unz[i], pages[i]);
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

fn dump(path: &str, ntuple: Option<&str>, fields: Option<&str>, entries: Option<&str>) -> Res {
    let f = RNTupleFile::open(path)?;
    let name = pick_ntuple(&f, ntuple)?;
    let r = f.reader(&name)?;
    let (start, stop) = parse_range(entries, r.num_entries())?;
    // Keys come in schema order whatever the order of --fields (DESIGN.md).
    let order: Vec<String> = r.fields().iter().map(|f| f.name.clone()).collect();
    let names: Option<Vec<&str>> = fields.map(|s| {
        let mut v: Vec<&str> = s.split(',').filter(|x| !x.is_empty()).collect();
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
    while s < stop {
        let e = (s + step).min(stop);
        let vals = r.read_values(names.as_deref(), s, e)?;
        for v in vals {
            if !first {
                write!(w, ",")?;
            }
            first = false;
            write!(w, "\n")?;
            serde_json::to_writer(&mut w, &v.to_json())?;
        }
        s = e;
    }
    writeln!(w, "\n]")?;
    w.flush()?;
    Ok(())
}

fn bench_read(path: &str, ntuple: Option<&str>, fields: Option<&str>) -> Res {
    use arrow_cast_sum::sums;
    let f = RNTupleFile::open(path)?;
    let name = pick_ntuple(&f, ntuple)?;
    let r = f.reader(&name)?;
    let names: Option<Vec<&str>> = fields.map(|s| s.split(',').filter(|x| !x.is_empty()).collect());
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
    let late: Vec<&str> = late.map(|l| l.split(',').filter(|x| !x.is_empty()).collect()).unwrap_or_default();
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

fn bench_write(threads: usize, entries: u64, compression: u32, mode: &str, output: &str, imt: bool) -> Res {
    use rntuple::arrow::array::{ArrayRef, Float32Array, LargeListArray, RecordBatch, UInt64Array};
    use rntuple::arrow::datatypes::{DataType, Field, Schema};
    use rntuple::write::writer::{WriteOptions, Writer};
    use std::sync::Arc;
    if threads != 1 || mode != "buffered" {
        return Err("this version writes with one thread in buffered mode only (the parallel writer is the next step)".into());
    }
    // Data made before the timed region: 16 chunks of `particles` (Poisson(5) sizes, values
    // uniform in [0,100)), each cut from a different place of a value pool; eventId is made
    // per chunk inside the loop (it is the entry number).
    const CHUNK: usize = 1 << 16;
    let mut rng = SplitMix(20251122);
    let pool: Vec<f32> = (0..(1 << 22)).map(|_| (rng.uniform() * 100.0) as f32).collect();
    let item = Arc::new(Field::new("_0", DataType::Float32, false));
    let mut chunks: Vec<ArrayRef> = Vec::new();
    let mut items_per_chunk = Vec::new();
    for _ in 0..16 {
        let mut offsets = vec![0i64];
        for _ in 0..CHUNK {
            offsets.push(offsets[offsets.len() - 1] + rng.poisson(5.0) as i64);
        }
        let n = offsets[CHUNK] as usize;
        let start = (rng.next() as usize) % (pool.len() - n);
        let values = Float32Array::from(pool[start..start + n].to_vec());
        chunks.push(Arc::new(LargeListArray::try_new(item.clone(), rntuple::arrow::buffer::OffsetBuffer::new(offsets.into()), Arc::new(values), None)?));
        items_per_chunk.push(n as u64);
    }
    let schema = Arc::new(Schema::new(vec![
        Field::new("eventId", DataType::UInt64, false),
        Field::new("particles", DataType::LargeList(item.clone()), false),
    ]));
    let opts = WriteOptions { compression, use_implicit_mt: imt, ..Default::default() };
    let t = Instant::now();
    let mut w = Writer::create(output, "Events", &[("eventId", "std::uint64_t"), ("particles", "std::vector<float>")], opts)?;
    let mut done = 0u64;
    let mut items = 0u64;
    let mut k = 0;
    while done < entries {
        let n = (entries - done).min(CHUNK as u64) as usize;
        let ids: ArrayRef = Arc::new(UInt64Array::from_iter_values(done..done + n as u64));
        let parts = chunks[k % chunks.len()].slice(0, n);
        items += if n == CHUNK {
            items_per_chunk[k % chunks.len()]
        } else {
            use rntuple::arrow::array::cast::AsArray;
            let o = parts.as_list::<i64>().value_offsets();
            (o[o.len() - 1] - o[0]) as u64
        };
        let batch = RecordBatch::try_new(schema.clone(), vec![ids, parts])?;
        w.append_batch(&batch)?;
        done += n as u64;
        k += 1;
    }
    let bytes = w.commit()?;
    let secs = t.elapsed().as_secs_f64();
    let raw = entries * 8 + entries * 8 + items * 4;
    println!(
        "{}",
        serde_json::json!({
            "threads": threads, "mode": mode, "implicit_mt": imt, "compression": compression, "entries": entries, "seconds": secs,
            "entries_per_second": entries as f64 / secs, "stored_bytes": bytes,
            "stored_mb_per_second": bytes as f64 / 1e6 / secs, "uncompressed_mb_per_second": raw as f64 / 1e6 / secs,
            "output": output
        })
    );
    Ok(())
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
