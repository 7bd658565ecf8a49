//! Hostile files: one small ROOT file per class of issue 14, with valid checksums everywhere (so
//! that they reach the parsers and readers), plus `OUTDIR/manifest.json` saying, per file, the
//! RNTuple's name, its class, what it is, what each tool should do with it and, for the files that
//! are legitimate, the correct answer. `tests/hostile` runs every tool on them.
//!
//! `cargo run --release --example hostile_files -- OUTDIR`
//!
//! Per tool (`info`, `dump1` = first entry, `dump` = the entries of `dump_range`, `check`, `bench`,
//! `skim`, `merge`, `arrays` = Python over `dump_range`) the manifest says `ok` (exit 0, and the
//! answer where one is given), `error` (exit 1 with a one-line error) or `either`.

use rntuple::format::descriptor::{ClusterDescriptor, ColumnRange, Descriptor, Role};
use rntuple::primitives::column_type::ColumnType as C;
use rntuple::primitives::element::PageValues as V;
use rntuple_testkit::{column_range, compress, encode, push_column, push_field, single_group, FileForge, NTupleOptions, TOP};
use serde_json::{json, Value};

#[path = "hostile_files/attributes.rs"]
mod attributes;
#[path = "hostile_files/bounds.rs"]
mod bounds;
#[path = "hostile_files/shapes.rs"]
mod shapes;
#[path = "hostile_files/unbacked.rs"]
mod unbacked;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// Tools, in the manifest's order.
const TOOLS: [&str; 9] = ["info", "dump1", "dump", "check", "bench", "skim", "merge", "arrays", "reskim"];

/// One hostile file: its bytes and its manifest entry.
struct Case {
    file: String,
    bytes: Vec<u8>,
    entry: Value,
}

/// Per-tool expectations: `reads` for dump/check/bench/arrays, `dump1` for the first entry,
/// `copies` for skim/merge (which may copy pages without decoding them); `reskim` (a skim with
/// `--reencode`, which decodes every page) fails where reading fails.
fn expect(info: &str, dump1: &str, reads: &str, check: &str, copies: &str) -> Value {
    let reskim = if reads == "error" { reads } else { copies };
    let v = [info, dump1, reads, check, reads, copies, copies, reads, reskim];
    Value::Object(TOOLS.iter().zip(v).map(|(t, e)| (t.to_string(), json!(e))).collect())
}

/// `e` with the expectation of `tool` replaced.
fn with(mut e: Value, tool: &str, x: &str) -> Value {
    e[tool] = json!(x);
    e
}

/// The same expectation for every tool.
fn all(e: &str) -> Value {
    expect(e, e, e, e, e)
}

#[allow(clippy::too_many_arguments)]
fn case(file: &str, bytes: Vec<u8>, ntuple: &str, class: &str, desc: &str, expect: Value, entries: u64, answer: Value) -> Case {
    let mut entry = json!({"file": file, "ntuple": ntuple, "class": class, "description": desc, "expect": expect, "entries": entries, "size": bytes.len()});
    if let (Value::Object(e), Value::Object(a)) = (&mut entry, answer) {
        e.extend(a);
    }
    Case { file: file.to_string(), bytes, entry }
}

/// The answer of a small legitimate file: its rows (the `dump` form) over all entries.
fn rows(rows: Value) -> Value {
    let n = rows.as_array().map_or(0, |r| r.len());
    json!({"dump_range": [0, n], "first_row": rows.get(0), "rows": rows})
}

/// A descriptor named `name`, written by "rntuple forge".
fn desc(name: &str) -> Descriptor {
    Descriptor { name: name.into(), writer: "rntuple forge (hostile_files)".into(), ..Default::default() }
}

/// Finishes a file with one RNTuple in the top directory (one cluster group).
fn one(mut f: FileForge, mut d: Descriptor) -> Res<Vec<u8>> {
    single_group(&mut d);
    f.add_ntuple(TOP, &mut d, &NTupleOptions::default())?;
    Ok(f.finish()?)
}

fn cluster(id: usize, first_entry: u64, n_entries: u64, columns: Vec<Option<ColumnRange>>) -> ClusterDescriptor {
    ClusterDescriptor { id, first_entry, n_entries, columns }
}

fn f32s(v: &[f32]) -> Res<Vec<u8>> {
    Ok(compress(&encode(C::SplitReal32, V::F32(v))?, 505)?)
}

/// `x` (float) = 1.5, 2.5, 3.5 and `v` (std::vector<double>) = [], [1], [2, 3], in `f`; returns
/// the descriptor to finish.
fn control(f: &mut FileForge, name: &str) -> Res<Descriptor> {
    let mut d = desc(name);
    let x = push_field(&mut d, None, Role::Leaf, "x", "float");
    push_column(&mut d, x, C::SplitReal32);
    let v = push_field(&mut d, None, Role::Collection, "v", "std::vector<double>");
    push_column(&mut d, v, C::SplitIndex64);
    let v0 = push_field(&mut d, Some(v), Role::Leaf, "_0", "double");
    push_column(&mut d, v0, C::SplitReal64);
    let px = f.page(&f32s(&[1.5, 2.5, 3.5])?, 3, true);
    let pv = f.page(&compress(&encode(C::SplitIndex64, V::U64(&[0, 1, 3]))?, 505)?, 3, true);
    let pv0 = f.page(&compress(&encode(C::SplitReal64, V::F64(&[1.0, 2.0, 3.0]))?, 505)?, 3, true);
    let cols = vec![Some(column_range(0, 505, vec![px])), Some(column_range(0, 505, vec![pv])), Some(column_range(0, 505, vec![pv0]))];
    d.clusters.push(cluster(0, 0, 3, cols));
    Ok(d)
}

fn control_rows() -> Value {
    json!([{"x": 1.5, "v": []}, {"x": 2.5, "v": [1.0]}, {"x": 3.5, "v": [2.0, 3.0]}])
}

/// Class 1: a double field whose one page claims `n` elements, its stored bytes being only as many
/// valid zstd blocks (16 MiB of zeros each) as today's ratio check lets through, far fewer than
/// the page needs.
fn huge_page(n: u32) -> Res<Vec<u8>> {
    let block = compress(&vec![0u8; 0xFF_FFFF], 505)?;
    let want = ((n as u64 * 8) >> 17) as usize + 1024;
    let mut stored = Vec::new();
    while stored.len() < want {
        stored.extend_from_slice(&block);
    }
    let mut f = FileForge::new("hostile.root");
    let mut d = desc("Events");
    let x = push_field(&mut d, None, Role::Leaf, "x", "double");
    push_column(&mut d, x, C::SplitReal64);
    let p = f.page(&stored, n, true);
    d.clusters.push(cluster(0, 0, n as u64, vec![Some(column_range(0, 505, vec![p]))]));
    one(f, d)
}

/// Class 2: a float page of 2^27 elements (512 MiB) in 4 KiB whose compression block headers are
/// bogus: the first claims a 16 MiB block of more compressed bytes than there are.
fn bogus_blocks() -> Res<Vec<u8>> {
    let mut stored = vec![0u8; 4096];
    for (i, b) in stored.iter_mut().enumerate() {
        *b = (i as u32).wrapping_mul(2_654_435_761).to_le_bytes()[3];
    }
    stored[..9].copy_from_slice(&[b'Z', b'S', 1, 0xFF, 0xFF, 0x0F, 0xFF, 0xFF, 0xFF]);
    let mut f = FileForge::new("hostile.root");
    let mut d = desc("Events");
    let x = push_field(&mut d, None, Role::Leaf, "x", "float");
    push_column(&mut d, x, C::SplitReal32);
    let p = f.page(&stored, 1 << 27, true);
    d.clusters.push(cluster(0, 0, 1 << 27, vec![Some(column_range(0, 505, vec![p]))]));
    one(f, d)
}

/// Class 11 (outputs): float `x` in two clusters, the second one's page damaged behind a valid
/// checksum (a compression block of garbage): a skim that re-encodes fails half-way.
fn damaged_second_cluster() -> Res<Vec<u8>> {
    let mut f = FileForge::new("hostile.root");
    let mut d = desc("Events");
    let x = push_field(&mut d, None, Role::Leaf, "x", "float");
    push_column(&mut d, x, C::SplitReal32);
    let p0 = f.page(&encode(C::SplitReal32, V::F32(&[1.5, 2.5, 3.5, 4.5]))?, 4, true);
    let p1 = f.page(&[b'Z', b'S', 1, 3, 0, 0, 16, 0, 0, 0xDE, 0xAD, 0xBE], 4, true);
    d.clusters.push(cluster(0, 0, 4, vec![Some(column_range(0, 505, vec![p0]))]));
    d.clusters.push(cluster(1, 4, 4, vec![Some(column_range(4, 505, vec![p1]))]));
    one(f, d)
}

/// Class 3: `std::vector<std::vector<double>>` of one entry whose outer offset is `outer`.
fn vecvec(outer: u64) -> Res<Vec<u8>> {
    let mut f = FileForge::new("hostile.root");
    let mut d = desc("Events");
    let v = push_field(&mut d, None, Role::Collection, "v", "std::vector<std::vector<double>>");
    push_column(&mut d, v, C::SplitIndex64);
    let v0 = push_field(&mut d, Some(v), Role::Collection, "_0", "std::vector<double>");
    push_column(&mut d, v0, C::SplitIndex64);
    let v00 = push_field(&mut d, Some(v0), Role::Leaf, "_0", "double");
    push_column(&mut d, v00, C::SplitReal64);
    let p0 = f.page(&encode(C::SplitIndex64, V::U64(&[outer]))?, 1, true);
    let p1 = f.page(&encode(C::SplitIndex64, V::U64(&[1, 2]))?, 2, true);
    let p2 = f.page(&encode(C::SplitReal64, V::F64(&[1.0, 2.0]))?, 2, true);
    let cols = vec![Some(column_range(0, 0, vec![p0])), Some(column_range(0, 0, vec![p1])), Some(column_range(0, 0, vec![p2]))];
    d.clusters.push(cluster(0, 0, 1, cols));
    one(f, d)
}

/// Class 4: a cluster claiming 2^40 entries over a float page of 4 elements.
fn cluster_2p40() -> Res<Vec<u8>> {
    let mut f = FileForge::new("hostile.root");
    let mut d = desc("Events");
    let x = push_field(&mut d, None, Role::Leaf, "x", "float");
    push_column(&mut d, x, C::SplitReal32);
    let p = f.page(&f32s(&[1.0, 2.0, 3.0, 4.0])?, 4, true);
    d.clusters.push(cluster(0, 0, 1 << 40, vec![Some(column_range(0, 505, vec![p]))]));
    one(f, d)
}

/// Class 5: one cluster of `entries` entries listing no columns; the fields made by `schema` are
/// from the schema extension, with deferred columns starting at `first_element`.
fn deferred(entries: u64, first_element: u64, schema: impl FnOnce(&mut Descriptor)) -> Res<Vec<u8>> {
    let f = FileForge::new("hostile.root");
    let mut d = desc("Events");
    schema(&mut d);
    extension_deferred(&mut d, first_element);
    d.clusters.push(cluster(0, 0, entries, vec![]));
    one(f, d)
}

/// Marks every field and column of `d` as from the schema extension, the columns deferred to
/// `first_element`.
fn extension_deferred(d: &mut Descriptor, first_element: u64) {
    for f in &mut d.fields {
        f.from_extension = true;
    }
    for c in &mut d.columns {
        c.from_extension = true;
        c.flags |= 1;
        c.first_element = first_element;
    }
    d.n_header_fields = 0;
}

/// Class 6: `n_columns` float fields (extension, deferred past the end: every value is 0) and
/// `n_clusters` clusters of one entry each, listing no columns.
fn cross(n_columns: usize, n_clusters: usize) -> Res<Vec<u8>> {
    let f = FileForge::new("hostile.root");
    let mut d = desc("Events");
    for i in 0..n_columns {
        let x = push_field(&mut d, None, Role::Leaf, &format!("f{i}"), "float");
        push_column(&mut d, x, C::SplitReal32);
    }
    extension_deferred(&mut d, n_clusters as u64);
    for i in 0..n_clusters {
        d.clusters.push(cluster(i, i as u64, 1, vec![]));
    }
    one(f, d)
}

/// Class 7: a control RNTuple beside a chain of `depth` directories, each keys list listing the
/// next directory twice (as `a` and `b`).
fn dir_chain(depth: usize) -> Res<Vec<u8>> {
    let mut f = FileForge::new("hostile.root");
    let mut d = control(&mut f, "Events")?;
    let mut parent = TOP;
    for _ in 0..depth {
        let next = f.directory(parent, "a")?;
        f.list_directory_again(parent, next, "b")?;
        parent = next;
    }
    single_group(&mut d);
    f.add_ntuple(TOP, &mut d, &NTupleOptions::default())?;
    Ok(f.finish()?)
}

fn nested_vector(depth: usize, inner: &str) -> String {
    format!("{}{inner}{}", "std::vector<".repeat(depth), ">".repeat(depth))
}

/// Class 8: `v` nested `depth` vectors deep around a float, one entry holding 1.5 at the bottom;
/// with `tree` the field tree has that depth, else `v` is a `std::vector<float>` whose type name
/// says otherwise.
fn deep_type(depth: usize, tree: bool) -> Res<Vec<u8>> {
    let mut f = FileForge::new("hostile.root");
    let mut d = desc("Events");
    let levels = if tree { depth } else { 1 };
    let mut parent = None;
    let mut cols = Vec::new();
    for k in 0..levels {
        let ty = if tree { nested_vector(depth - k, "float") } else { nested_vector(depth, "float") };
        let id = push_field(&mut d, parent, Role::Collection, if k == 0 { "v" } else { "_0" }, &ty);
        push_column(&mut d, id, C::SplitIndex64);
        cols.push(Some(column_range(0, 0, vec![f.page(&encode(C::SplitIndex64, V::U64(&[1]))?, 1, true)])));
        parent = Some(id);
    }
    let leaf = push_field(&mut d, parent, Role::Leaf, "_0", "float");
    push_column(&mut d, leaf, C::SplitReal32);
    cols.push(Some(column_range(0, 0, vec![f.page(&encode(C::SplitReal32, V::F32(&[1.5]))?, 1, true)])));
    d.clusters.push(cluster(0, 0, 1, cols));
    one(f, d)
}

fn deep_value(depth: usize) -> Value {
    (0..depth).fold(json!(1.5), |v, _| json!([v]))
}

/// Class 10: the control RNTuple named `name`, its float field named `field`.
fn odd_names(name: &str, field: &str) -> Res<Vec<u8>> {
    let mut f = FileForge::new("hostile.root");
    let mut d = control(&mut f, name)?;
    d.fields[0].name = field.to_string();
    single_group(&mut d);
    f.add_ntuple(TOP, &mut d, &NTupleOptions::default())?;
    Ok(f.finish()?)
}

fn cases() -> Res<Vec<Case>> {
    let (ok, err, either) = ("ok", "error", "either");
    let mut out = Vec::new();
    let mut f = FileForge::new("hostile.root");
    let d = control(&mut f, "Events")?;
    out.push(case(
        "control_ok.root",
        one(f, d)?,
        "Events",
        "0-control",
        "a sane file (float and vector<double>, 3 entries): the harness itself",
        all(ok),
        3,
        rows(control_rows()),
    ));
    let mut f = FileForge::new("hostile.root");
    let mut d = control(&mut f, "Events")?;
    let sub = f.directory(TOP, "dir")?;
    single_group(&mut d);
    f.add_ntuple(sub, &mut d, &NTupleOptions::default())?;
    out.push(case(
        "control_subdir.root",
        f.finish()?,
        "dir/Events",
        "0-control",
        "the sane file's RNTuple in a subdirectory",
        all(ok),
        3,
        rows(control_rows()),
    ));

    let reads_fail = expect(ok, err, err, err, either);
    out.push(case(
        "page_2p28.root",
        huge_page(1 << 28)?,
        "Events",
        "1-page-elements",
        "a double page claiming 2^28 elements (2 GiB) in 16 KiB of valid zstd blocks covering 512 MiB",
        reads_fail.clone(),
        1 << 28,
        json!({}),
    ));
    out.push(case(
        "page_i32max.root",
        huge_page(i32::MAX as u32)?,
        "Events",
        "1-page-elements",
        "a double page claiming 2^31-1 elements (16 GiB) in 128 KiB of valid zstd blocks",
        reads_fail.clone(),
        i32::MAX as u64,
        json!({}),
    ));
    out.push(case(
        "page_bogus_blocks.root",
        bogus_blocks()?,
        "Events",
        "2-page-uncompressed-length",
        "a float page of 2^27 elements (512 MiB) in 4 KiB whose compression block headers do not add up",
        reads_fail.clone(),
        1 << 27,
        json!({}),
    ));
    out.push(case(
        "vecvec_offset_2p62.root",
        vecvec(1 << 62)?,
        "Events",
        "3-offsets",
        "std::vector<std::vector<double>> whose outer offset is 2^62 (the inner column has 2 elements)",
        reads_fail.clone(),
        1,
        json!({}),
    ));
    out.push(case(
        "vecvec_offset_2p40.root",
        vecvec(1 << 40)?,
        "Events",
        "3-offsets",
        "std::vector<std::vector<double>> whose outer offset is 2^40 (the inner column has 2 elements)",
        reads_fail.clone(),
        1,
        json!({}),
    ));
    out.push(case(
        "cluster_2p40.root",
        cluster_2p40()?,
        "Events",
        "4-cluster-entries",
        "a cluster claiming 2^40 entries over a float page of 4 elements",
        expect(ok, either, err, err, either),
        1 << 40,
        json!({}),
    ));

    let t40 = 1u64 << 40;
    let array = deferred(1, t40, |d| {
        let a = push_field(d, None, Role::Leaf, "a", &format!("std::array<float,{t40}>"));
        d.fields[a as usize].repetition = Some(t40);
        let x = push_field(d, Some(a), Role::Leaf, "_0", "float");
        push_column(d, x, C::SplitReal32);
    })?;
    let cap = "one entry of 4 TiB (2^40 deferred zeros): beyond any cap, an error or a field skipped with the reason";
    out.push(case(
        "array_2p40_deferred.root",
        array,
        "Events",
        "5-deferred-fixed-size",
        &format!("std::array<float, 2^40> in a deferred column, 1 entry, no pages: {cap}"),
        expect(ok, either, either, either, either),
        1,
        json!({}),
    ));
    let bitset = deferred(1, t40, |d| {
        let b = push_field(d, None, Role::Leaf, "b", &format!("std::bitset<{t40}>"));
        d.fields[b as usize].repetition = Some(t40);
        push_column(d, b, C::Bit);
    })?;
    out.push(case(
        "bitset_2p40_deferred.root",
        bitset,
        "Events",
        "5-deferred-fixed-size",
        "std::bitset<2^40> in a deferred column, 1 entry, no pages: 2^40 false bits per entry, beyond any cap: an error or a field skipped with the reason",
        expect(ok, either, either, either, either),
        1,
        json!({}),
    ));
    let n29 = 1u64 << 29;
    let zeros = deferred(n29, n29, |d| {
        let x = push_field(d, None, Role::Leaf, "x", "float");
        push_column(d, x, C::SplitReal32);
    })?;
    out.push(case(
        "deferred_2p29.root",
        zeros,
        "Events",
        "5-deferred-legit",
        "a legitimate cluster of 2^29 entries with one deferred float field and no pages: every value is 0 (2 GiB as one batch)",
        with(expect(ok, ok, ok, ok, either), "bench", either),
        n29,
        json!({"huge": true, "dump_range": [n29 - 3, n29], "first_row": {"x": 0.0}, "rows": [{"x": 0.0}, {"x": 0.0}, {"x": 0.0}]}),
    ));
    out.push(case(
        "cross_4000.root",
        cross(4000, 4000)?,
        "Events",
        "6-cross-product",
        "4,000 deferred float columns x 4,000 clusters of 1 entry listing no columns: every value is 0",
        expect(ok, ok, ok, ok, either),
        4000,
        json!({"dump_range": [0, 4000], "zeros": true}),
    ));
    let n = 36_000u64;
    out.push(case(
        "cross_big.root",
        cross(n as usize, n as usize)?,
        "Events",
        "6-cross-product",
        "36,000 deferred float columns x 36,000 clusters of 1 entry listing no columns: every value is 0 (1.3e9 values)",
        // `bench read` reads every entry at once: 5 GB of zeros, which the reader refuses (more
        // than one read may fill with zeros of deferred columns).
        with(expect(ok, ok, ok, either, either), "bench", either),
        n,
        json!({"huge": true, "dump_range": [n - 1, n], "zeros": true}),
    ));
    out.push(case(
        "dir_chain_40.root",
        dir_chain(40)?,
        "Events",
        "7-directory-dag",
        "the sane RNTuple beside a chain of 40 directories, each keys list listing the next directory twice (2^40 paths)",
        all(either),
        3,
        rows(control_rows()),
    ));
    out.push(case(
        "typename_deep_40.root",
        deep_type(40, true)?,
        "Events",
        "8-type-name-depth",
        "v: 40 nested std::vector around a float (type names and field tree), one entry",
        all(ok),
        1,
        rows(json!([{"v": deep_value(40)}])),
    ));
    out.push(case(
        "typename_deep_10000.root",
        deep_type(10_000, false)?,
        "Events",
        "8-type-name-depth",
        "v: a std::vector<float> whose type name nests 10,000 vectors",
        all(either),
        1,
        rows(json!([{"v": [1.5]}])),
    ));
    out.push(case(
        "name_slash.root",
        odd_names("a/b", "x")?,
        "a/b",
        "10-names",
        "the sane RNTuple named 'a/b' (a '/' in the key name)",
        all(either),
        3,
        rows(control_rows()),
    ));
    let mut ctl = control_rows();
    for r in ctl.as_array_mut().into_iter().flatten() {
        if let Some(o) = r.as_object_mut() {
            let x = o.shift_remove("x").unwrap_or(Value::Null);
            let v = o.shift_remove("v").unwrap_or(Value::Null);
            o.insert("x\u{1}y".into(), x);
            o.insert("v".into(), v);
        }
    }
    out.push(case(
        "name_control_char.root",
        odd_names("Events", "x\u{1}y")?,
        "Events",
        "10-names",
        "the sane RNTuple with a field named 'x\\u0001y' (a control character)",
        all(either),
        3,
        rows(ctl),
    ));
    out.push(case(
        "damaged_second_cluster.root",
        damaged_second_cluster()?,
        "Events",
        "11-damaged-cluster",
        "float x in two clusters of 4 entries, the second cluster's page a compression block of garbage (valid checksum): a re-encoding skim fails half-way",
        expect(ok, ok, err, err, either),
        8,
        json!({"first_row": {"x": 1.5}}),
    ));
    out.extend(bounds::cases()?);
    out.extend(shapes::cases()?);
    out.extend(attributes::cases()?);
    out.extend(unbacked::cases()?);
    Ok(out)
}

fn main() -> Res<()> {
    let dir = std::path::PathBuf::from(std::env::args().nth(1).ok_or("usage: hostile_files OUTDIR")?);
    std::fs::create_dir_all(&dir)?;
    let mut manifest = Vec::new();
    for c in cases()? {
        std::fs::write(dir.join(&c.file), &c.bytes)?;
        manifest.push(c.entry);
    }
    let text = serde_json::to_string_pretty(&json!({"tools": TOOLS, "files": manifest}))?;
    std::fs::write(dir.join("manifest.json"), text)?;
    eprintln!("hostile_files: {} files in {}", manifest.len(), dir.display());
    Ok(())
}
