//! Hostile files of issue 54 (part 4): what a file declares that no stored byte backs, multiplied.
//! Default values of deferred columns under fixed-size arrays (one entry of 2^28 zeros), zstd-
//! compressed descriptors of 200,000 fields x 200,000 clusters, and footers linking 200,000
//! attribute sets over one anchor. Each builder returns the file's bytes; [`cases`] adds them to
//! the manifest.

use super::{case, cluster, desc, expect, one, Case, Res};
use rntuple::format::descriptor::{Descriptor, Role};
use rntuple::primitives::column_type::ColumnType as C;
use rntuple::primitives::element::PageValues as V;
use rntuple_testkit::{column_range, encode, push_column, push_field, single_group, FileForge, NTupleOptions, TOP};
use serde_json::json;

/// `a`: `std::array<float, e0>` (or, with `e1`, `std::array<std::array<float, e1>, e0>`) in
/// `entries` entries over a deferred column whose first element lies beyond them: no pages, every
/// value 0.
fn deferred_array(e0: u64, e1: Option<u64>, entries: u64) -> Res<Vec<u8>> {
    let per_entry = e0 * e1.unwrap_or(1);
    super::deferred(entries, entries * per_entry, |d| {
        let ty = match e1 {
            Some(e1) => format!("std::array<std::array<float,{e1}>,{e0}>"),
            None => format!("std::array<float,{e0}>"),
        };
        let a = push_field(d, None, Role::Leaf, "a", &ty);
        d.fields[a as usize].repetition = Some(e0);
        let mut leaf_parent = a;
        if let Some(e1) = e1 {
            leaf_parent = push_field(d, Some(a), Role::Leaf, "_0", &format!("std::array<float,{e1}>"));
            d.fields[leaf_parent as usize].repetition = Some(e1);
        }
        let x = push_field(d, Some(leaf_parent), Role::Leaf, "_0", "float");
        push_column(d, x, C::SplitReal32);
    })
}

/// Appends `n` top-level fields `{prefix}0`, `{prefix}1`, ... of `role` and type `ty`, each with one
/// column of `col` when given (linear in `n`: `push_field` recounts the header fields per push).
fn push_fields(d: &mut Descriptor, n: usize, role: Role, prefix: &str, ty: &str, col: Option<C>) {
    let first = push_field(d, None, role, &format!("{prefix}0"), ty);
    let template = d.fields[first as usize].clone();
    for i in 0..n {
        let id = if i == 0 {
            first
        } else {
            let id = d.fields.len() as u32;
            d.fields.push(rntuple::format::descriptor::FieldDescriptor { id, name: format!("{prefix}{i}"), ..template.clone() });
            id
        };
        if let Some(c) = col {
            push_column(d, id, c);
        }
    }
    d.n_header_fields = d.fields.iter().filter(|f| !f.from_extension).count();
}

/// `n_fields` top-level fields x `n_clusters` clusters of one entry each listing no columns: float
/// fields over deferred columns starting past the last entry (`deferred`: every value 0) or empty
/// records (no columns: every value `{}`). No stored byte backs any value.
fn unbacked_cross(n_fields: usize, n_clusters: usize, deferred: bool) -> Res<Vec<u8>> {
    let f = FileForge::new("hostile.root");
    let mut d = desc("Events");
    if deferred {
        push_fields(&mut d, n_fields, Role::Leaf, "f", "float", Some(C::SplitReal32));
        super::extension_deferred(&mut d, n_clusters as u64);
    } else {
        push_fields(&mut d, n_fields, Role::Record, "e", "E", None);
    }
    for i in 0..n_clusters {
        d.clusters.push(cluster(i, i as u64, 1, vec![]));
    }
    one(f, d)
}

/// The control RNTuple whose footer links `n` attribute sets (`a0`, `a1`, ...), every link's
/// anchor the same valid attribute set (`x` = 1.5 in one entry covering the range [0, 3)).
fn shared_attribute_anchor(n: usize) -> Res<Vec<u8>> {
    let mut f = FileForge::new("hostile.root");
    let mut a: Descriptor = desc("meta");
    let s = push_field(&mut a, None, Role::Leaf, "_rangeStart", "std::uint64_t");
    push_column(&mut a, s, C::SplitUInt64);
    let l = push_field(&mut a, None, Role::Leaf, "_rangeLen", "std::uint64_t");
    push_column(&mut a, l, C::SplitUInt64);
    let u = push_field(&mut a, None, Role::Record, "_userData", "");
    let x = push_field(&mut a, Some(u), Role::Leaf, "x", "float");
    push_column(&mut a, x, C::SplitReal32);
    let cols = vec![
        Some(column_range(0, 0, vec![f.page(&encode(C::SplitUInt64, V::U64(&[0]))?, 1, true)])),
        Some(column_range(0, 0, vec![f.page(&encode(C::SplitUInt64, V::U64(&[3]))?, 1, true)])),
        Some(column_range(0, 0, vec![f.page(&encode(C::SplitReal32, V::F32(&[1.5]))?, 1, true)])),
    ];
    a.clusters.push(cluster(0, 0, 1, cols));
    single_group(&mut a);
    let link = f.put_attribute_set(&mut a, &NTupleOptions::default())?;
    let mut d = super::control(&mut f, "Events")?;
    for i in 0..n {
        let mut l = link.clone();
        l.name = format!("a{i}");
        d.attribute_sets.push(l);
    }
    single_group(&mut d);
    f.add_ntuple(TOP, &mut d, &NTupleOptions::default())?;
    Ok(f.finish()?)
}

/// The cases of issue 54, part 4.
pub fn cases() -> Res<Vec<Case>> {
    let (ok, either) = ("ok", "either");
    let mut out = Vec::new();
    let reads_either = expect(ok, either, either, either, either);
    for (file, e0, e1, entries, what) in [
        ("deferred_array_2p28.root", 1u64 << 28, None, 1u64, "std::array<float, 2^28> over a deferred column, 1 entry, no pages: 1 GiB of zeros in one entry"),
        (
            "deferred_array_2p14x2p14.root",
            1 << 14,
            Some(1 << 14),
            1,
            "std::array<std::array<float, 2^14>, 2^14> over a deferred column, 1 entry, no pages: 1 GiB of zeros through nested extents",
        ),
        (
            "deferred_array_2p22_x256.root",
            1 << 22,
            None,
            256,
            "std::array<float, 2^22> over a deferred column, 256 entries, no pages: 16 MiB of zeros per entry, 4 GiB in all",
        ),
    ] {
        let n = entries;
        out.push(case(
            file,
            deferred_array(e0, e1, entries)?,
            "Events",
            "19-deferred-defaults",
            what,
            reads_either.clone(),
            n,
            json!({"dump_range": [n - 1, n], "zeros": true}),
        ));
    }
    let n = 200_000u64;
    out.push(case(
        "cross_100k_x_200k.root",
        unbacked_cross(100_000, n as usize, true)?,
        "Events",
        "20-descriptor-cross",
        "100,000 deferred float fields x 200,000 clusters of 1 entry listing no columns, in zstd-compressed envelopes: every value is 0 (2e10 values)",
        reads_either.clone(),
        n,
        json!({"huge": true, "dump_range": [n - 1, n], "zeros": true}),
    ));
    out.push(case(
        "records_100k_x_200k.root",
        unbacked_cross(100_000, n as usize, false)?,
        "Events",
        "20-descriptor-cross",
        "100,000 top-level empty records (no columns) x 200,000 clusters of 1 entry, in zstd-compressed envelopes: every value is {}",
        reads_either.clone(),
        n,
        json!({"huge": true, "dump_range": [n - 1, n]}),
    ));
    // Python opens one set (the last linked) by name: its values; skim and merge copy every set.
    let mut c = case(
        "attribute_links_shared_200k.root",
        shared_attribute_anchor(200_000)?,
        "Events",
        "21-attribute-links-backing",
        "the sane RNTuple whose footer links 200,000 attribute sets, every link the same valid anchor (one attribute set's bytes)",
        super::all(either),
        3,
        super::rows(super::control_rows()),
    );
    let values = json!({"entries": [[0, 3, {"x": 1.5}]], "arrays": [{"_rangeStart": 0, "_rangeLen": 3, "_userData": {"x": 1.5}}]});
    c.entry["attribute_set"] = json!({"name": "a199999", "expect": "ok", "values": values});
    out.push(c);
    Ok(out)
}
