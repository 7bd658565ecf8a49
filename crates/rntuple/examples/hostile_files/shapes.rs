//! Hostile files of issue 35 (point 5), by shape: compressed descriptors that are cross products of
//! fields (or columns) and clusters, every pair listed with a page (small in compressed bytes, large
//! once decompressed), in one cluster group or in many; and fields nested 100-127 levels deep
//! through classes (a chain of base classes, a class whose member is a vector of a class). Each
//! builder returns the file's bytes; [`cases`] adds them to the manifest.

use super::{case, cluster, desc, expect, one, with, Case, Res};
use rntuple::format::descriptor::{ClusterGroupDescriptor, Descriptor, EnvelopeLink, Role};
use rntuple::primitives::column_type::ColumnType as C;
use rntuple::primitives::element::PageValues as V;
use rntuple_testkit::{column_range, encode, push_column, push_field, FileForge, NTupleOptions, TOP};
use serde_json::{json, Map, Value};

/// What each field of a cross product is.
#[derive(Clone, Copy)]
enum Item {
    /// A float (one column), 0.0 in every entry.
    Float,
    /// A `std::string` (an offset and a char column), "a" in every entry.
    String,
}

/// `n_fields` fields of `item` x `n_clusters` clusters of one entry, each cluster listing every
/// column with one page (the same stored page bytes for all pairs of a column type), the clusters
/// split into cluster groups of `per_group` clusters each, every envelope zstd-compressed as ROOT
/// compresses them.
fn cross_listed(item: Item, n_fields: usize, n_clusters: usize, per_group: usize) -> Res<Vec<u8>> {
    let mut f = FileForge::new("hostile.root");
    let mut d = desc("Events");
    let types = match item {
        Item::Float => vec![C::SplitReal32],
        Item::String => vec![C::SplitIndex64, C::Char],
    };
    for i in 0..n_fields {
        let (ty, role) = match item {
            Item::Float => ("float", Role::Leaf),
            Item::String => ("std::string", Role::Leaf),
        };
        let x = push_field(&mut d, None, role, &format!("f{i}"), ty);
        for t in &types {
            push_column(&mut d, x, *t);
        }
    }
    let pages: Vec<_> = match item {
        Item::Float => vec![f.page(&encode(C::SplitReal32, V::F32(&[0.0]))?, 1, true)],
        Item::String => vec![f.page(&encode(C::SplitIndex64, V::U64(&[1]))?, 1, true), f.page(b"a", 1, true)],
    };
    for k in 0..n_clusters {
        let cols = (0..n_fields).flat_map(|_| pages.iter().map(|p| Some(column_range(k as u64, 0, vec![*p])))).collect();
        d.clusters.push(cluster(k, k as u64, 1, cols));
    }
    groups(&mut d, per_group.max(1));
    f.add_ntuple(TOP, &mut d, &NTupleOptions::default())?;
    Ok(f.finish()?)
}

/// Splits the clusters of `d` into cluster groups of `per_group` clusters.
fn groups(d: &mut Descriptor, per_group: usize) {
    d.cluster_groups = d
        .clusters
        .chunks(per_group)
        .map(|c| {
            let min = c[0].first_entry;
            let end = c.iter().map(|x| x.first_entry + x.n_entries).max().unwrap_or(min);
            ClusterGroupDescriptor { min_entry: min, entry_span: end - min, n_clusters: c.len() as u32, page_list: EnvelopeLink::default() }
        })
        .collect();
}

/// The row of entry `k` of [`cross_listed`]'s string files: every field "a".
fn string_row(n_fields: usize) -> Value {
    Value::Object((0..n_fields).map(|i| (format!("f{i}"), json!("a"))).collect::<Map<_, _>>())
}

/// `c`: a class `C{depth}` whose base is `C{depth-1}` ... down to `C0`, whose one member `x` is a
/// float (1.5 in the one entry): the base classes as sub-fields `:_0` with the record role, as ROOT
/// writes them, `x` `depth + 1` levels deep.
fn base_chain(depth: usize) -> Res<Vec<u8>> {
    let mut f = FileForge::new("hostile.root");
    let mut d = desc("Events");
    let mut parent = None;
    for k in (0..=depth).rev() {
        let id = push_field(&mut d, parent, Role::Record, if k == depth { "c" } else { ":_0" }, &format!("C{k}"));
        parent = Some(id);
    }
    let x = push_field(&mut d, parent, Role::Leaf, "x", "float");
    push_column(&mut d, x, C::SplitReal32);
    let p = f.page(&encode(C::SplitReal32, V::F32(&[1.5]))?, 1, true);
    d.clusters.push(cluster(0, 0, 1, vec![Some(column_range(0, 0, vec![p]))]));
    one(f, d)
}

fn base_chain_row(depth: usize) -> Value {
    let inner = (0..depth).fold(json!({"x": 1.5}), |v, _| json!({":_0": v}));
    json!({ "c": inner })
}

/// `r`: a class `R{levels}` whose member `v` is a `std::vector<R{levels-1}>` ... down to `R0`,
/// whose member `x` is a float: one entry, every vector holding one item, the innermost `x` = 1.5,
/// `2 * levels + 1` levels deep.
fn vector_chain(levels: usize) -> Res<Vec<u8>> {
    let mut f = FileForge::new("hostile.root");
    let mut d = desc("Events");
    let mut cols = Vec::new();
    let one_item = encode(C::SplitIndex64, V::U64(&[1]))?;
    let mut parent = push_field(&mut d, None, Role::Record, "r", &format!("R{levels}"));
    for k in (0..levels).rev() {
        let v = push_field(&mut d, Some(parent), Role::Collection, "v", &format!("std::vector<R{k}>"));
        push_column(&mut d, v, C::SplitIndex64);
        cols.push(Some(column_range(0, 0, vec![f.page(&one_item, 1, true)])));
        parent = push_field(&mut d, Some(v), Role::Record, "_0", &format!("R{k}"));
    }
    let x = push_field(&mut d, Some(parent), Role::Leaf, "x", "float");
    push_column(&mut d, x, C::SplitReal32);
    cols.push(Some(column_range(0, 0, vec![f.page(&encode(C::SplitReal32, V::F32(&[1.5]))?, 1, true)])));
    d.clusters.push(cluster(0, 0, 1, cols));
    one(f, d)
}

fn vector_chain_row(levels: usize) -> Value {
    let inner = (0..levels).fold(json!({"x": 1.5}), |v, _| json!({"v": [v]}));
    json!({ "r": inner })
}

/// The cases of issue 35, point 5: descriptor cross products and nesting through classes.
pub fn cases() -> Res<Vec<Case>> {
    let (ok, err, either) = ("ok", "error", "either");
    let mut out = Vec::new();
    // Cross products whose every pair is listed with a page: legitimate when small, else an error
    // or the values, in bounded time and memory either way.
    out.push(case(
        "cross_listed_300.root",
        cross_listed(Item::Float, 300, 300, 300)?,
        "Events",
        "19-listed-cross-product",
        "300 float fields x 300 clusters of 1 entry, every pair listed with a page (zstd page list): every value is 0",
        super::all(ok),
        300,
        json!({"dump_range": [0, 300], "zeros": true}),
    ));
    // Just below the bound on an RNTuple's metadata (16 MiB for a small file): read.
    let (nf, nc) = (1000, 400);
    out.push(case(
        "cross_listed_1000x400.root",
        cross_listed(Item::Float, nf, nc, 10)?,
        "Events",
        "19-listed-cross-product",
        "1,000 float fields x 400 clusters of 1 entry, every pair listed with a page, in 40 cluster groups (15 MiB of page lists): every value is 0",
        super::all(ok),
        nc as u64,
        json!({"dump_range": [0, nc], "zeros": true}),
    ));
    for (file, n, per, what) in [
        (
            "cross_listed_2000.root",
            2000,
            2000,
            "2,000 float fields x 2,000 clusters of 1 entry, every pair listed with a page, in one zstd page list of 150 MiB",
        ),
        (
            "cross_listed_2000_groups.root",
            2000,
            1,
            "2,000 float fields x 2,000 clusters of 1 entry, every pair listed with a page, in 2,000 cluster groups (a zstd page list of 76 KiB each)",
        ),
        (
            "cross_listed_4000_groups.root",
            4000,
            20,
            "4,000 float fields x 4,000 clusters of 1 entry, every pair listed with a page, in 200 cluster groups (a zstd page list of 3 MiB each, 610 MiB in all)",
        ),
    ] {
        out.push(case(
            file,
            cross_listed(Item::Float, n, n, per)?,
            "Events",
            "19-listed-cross-product",
            &format!("{what}: more metadata than the file can back, an error"),
            with(super::all(err), "info", either),
            n as u64,
            json!({"dump_range": [n - 1, n], "zeros": true}),
        ));
    }
    let (nf, nc) = (300, 300);
    out.push(case(
        "cross_listed_strings.root",
        cross_listed(Item::String, nf, nc, 10)?,
        "Events",
        "19-listed-cross-product",
        "300 std::string fields (2 columns each) x 300 clusters of 1 entry, every (column, cluster) pair listed with a page, in 30 cluster groups: every value \"a\"",
        super::all(ok),
        nc as u64,
        json!({"dump_range": [nc - 1, nc], "first_row": string_row(nf), "rows": [string_row(nf)]}),
    ));
    for depth in [100, 126] {
        out.push(case(
            &format!("base_chain_{depth}.root"),
            base_chain(depth)?,
            "Events",
            "16-nesting-depth",
            &format!(
                "c: a class C{depth} : C{} : ... : C0 (base classes as ':_0' sub-fields), C0's float member x {} levels deep, one entry",
                depth - 1,
                depth + 1
            ),
            deep(),
            1,
            super::rows(json!([base_chain_row(depth)])),
        ));
    }
    for levels in [50, 63] {
        out.push(case(
            &format!("vector_chain_{levels}.root"),
            vector_chain(levels)?,
            "Events",
            "16-nesting-depth",
            &format!(
                "r: a class R{levels} whose member v is a std::vector<R{}> ... down to R0's float x, {} levels deep, one entry",
                levels - 1,
                2 * levels + 1
            ),
            deep(),
            1,
            super::rows(json!([vector_chain_row(levels)])),
        ));
    }
    Ok(out)
}

/// The expectations of the files nested 100-127 levels deep through classes: read and copied;
/// Python gives the values or an `RNTupleError` (pyarrow imports at most 64 levels), a skim that
/// re-encodes writes them or refuses in one line (the writer's types nest at most 64 levels).
fn deep() -> Value {
    with(with(expect("ok", "ok", "ok", "ok", "ok"), "arrays", "either"), "reskim", "either")
}
