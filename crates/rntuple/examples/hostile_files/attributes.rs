//! Hostile files of issue 35 (point 5): malformed attribute sets. The sane RNTuple (see `control`)
//! links one attribute set `meta` (one entry: the range [0, 3) and its values), whose own RNTuple
//! is malformed: a meta field of the wrong type, `_userData` that is not a record, a truncated
//! page, collection offsets beyond the items. The main RNTuple reads; `skim`, `merge` and
//! Python's attribute API refuse the set with one error.

use super::{case, desc, Case, Res};
use rntuple::format::descriptor::{ClusterDescriptor, Descriptor, Role};
use rntuple::primitives::column_type::ColumnType as C;
use rntuple::primitives::element::PageValues as V;
use rntuple_testkit::{column_range, encode, push_column, push_field, single_group, FileForge, NTupleOptions, TOP};
use serde_json::json;

/// How the attribute set's RNTuple is malformed.
#[derive(Clone, Copy)]
enum Bad {
    /// `_rangeStart` is a `std::string` ("abc").
    RangeStartString,
    /// `_userData` is a float, not a record.
    UserDataFloat,
    /// `_userData.run`'s page (std::int32_t) holds 2 bytes for its one element.
    TruncatedPage,
    /// `_userData.v` (std::vector<float>) has an offset of 2^40 over one item.
    OffsetsBeyondItems,
}

/// A page of `vals` (raw, checksummed) in `f`, as the column range of cluster 0.
fn page(f: &mut FileForge, ty: C, vals: V, n: u32) -> Res<Option<rntuple::format::descriptor::ColumnRange>> {
    Ok(Some(column_range(0, 0, vec![f.page(&encode(ty, vals)?, n, true)])))
}

/// The attribute set's RNTuple, malformed as `bad`, in `f`.
fn attribute_ntuple(f: &mut FileForge, bad: Bad) -> Res<Descriptor> {
    let mut d = desc("meta");
    let mut cols = Vec::new();
    if let Bad::RangeStartString = bad {
        let s = push_field(&mut d, None, Role::Leaf, "_rangeStart", "std::string");
        push_column(&mut d, s, C::SplitIndex64);
        push_column(&mut d, s, C::Char);
        cols.push(page(f, C::SplitIndex64, V::U64(&[3]), 1)?);
        cols.push(Some(column_range(0, 0, vec![f.page(b"abc", 3, true)])));
    } else {
        let s = push_field(&mut d, None, Role::Leaf, "_rangeStart", "std::uint64_t");
        push_column(&mut d, s, C::SplitUInt64);
        cols.push(page(f, C::SplitUInt64, V::U64(&[0]), 1)?);
    }
    let n = push_field(&mut d, None, Role::Leaf, "_rangeLen", "std::uint64_t");
    push_column(&mut d, n, C::SplitUInt64);
    cols.push(page(f, C::SplitUInt64, V::U64(&[3]), 1)?);
    if let Bad::UserDataFloat = bad {
        let u = push_field(&mut d, None, Role::Leaf, "_userData", "float");
        push_column(&mut d, u, C::SplitReal32);
        cols.push(page(f, C::SplitReal32, V::F32(&[1.5]), 1)?);
    } else {
        let u = push_field(&mut d, None, Role::Record, "_userData", "");
        let run = push_field(&mut d, Some(u), Role::Leaf, "run", "std::int32_t");
        push_column(&mut d, run, C::SplitInt32);
        if let Bad::TruncatedPage = bad {
            cols.push(Some(column_range(0, 0, vec![f.page(&[7, 0], 1, true)])));
        } else {
            cols.push(page(f, C::SplitInt32, V::I32(&[7]), 1)?);
        }
        if let Bad::OffsetsBeyondItems = bad {
            let v = push_field(&mut d, Some(u), Role::Collection, "v", "std::vector<float>");
            push_column(&mut d, v, C::SplitIndex64);
            let x = push_field(&mut d, Some(v), Role::Leaf, "_0", "float");
            push_column(&mut d, x, C::SplitReal32);
            cols.push(page(f, C::SplitIndex64, V::U64(&[1 << 40]), 1)?);
            cols.push(page(f, C::SplitReal32, V::F32(&[2.5]), 1)?);
        }
    }
    d.clusters.push(ClusterDescriptor { id: 0, first_entry: 0, n_entries: 1, columns: cols });
    Ok(d)
}

/// The sane RNTuple linking the attribute set `meta`, malformed as `bad`.
fn malformed_attributes(bad: Bad) -> Res<Vec<u8>> {
    let mut f = FileForge::new("hostile.root");
    let mut a = attribute_ntuple(&mut f, bad)?;
    single_group(&mut a);
    let link = f.put_attribute_set(&mut a, &NTupleOptions::default())?;
    let mut d = super::control(&mut f, "Events")?;
    d.attribute_sets.push(link);
    single_group(&mut d);
    f.add_ntuple(TOP, &mut d, &NTupleOptions::default())?;
    Ok(f.finish()?)
}

/// The cases: the main RNTuple reads (its values checked), `info` lists the set (as unreadable
/// where it is), `skim` and `merge` (which copy the attribute sets) fail in one line, and
/// `tests/hostile/test_attributes.py` reads the set through Python's attribute API (the manifest's
/// `attribute_set`: its name and what reading it gives).
pub fn cases() -> Res<Vec<Case>> {
    let mut out = Vec::new();
    for (file, bad, what) in [
        ("attr_range_start_string.root", Bad::RangeStartString, "its _rangeStart a std::string (\"abc\")"),
        ("attr_userdata_float.root", Bad::UserDataFloat, "its _userData a float, not a record"),
        ("attr_truncated_page.root", Bad::TruncatedPage, "its _userData.run page (std::int32_t) 2 bytes long for its one element"),
        ("attr_bad_offsets.root", Bad::OffsetsBeyondItems, "its _userData.v (std::vector<float>) an offset of 2^40 over one item"),
    ] {
        let mut e = super::all("ok");
        for t in ["skim", "merge", "reskim"] {
            e[t] = json!("error");
        }
        let mut c = case(
            file,
            malformed_attributes(bad)?,
            "Events",
            "20-malformed-attributes",
            &format!("the sane RNTuple linking an attribute set 'meta' of one entry, {what}"),
            e,
            3,
            super::rows(super::control_rows()),
        );
        c.entry["attribute_set"] = json!({"name": "meta", "expect": "error"});
        out.push(c);
    }
    Ok(out)
}
