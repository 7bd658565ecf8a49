//! Hostile files of issue 35 (point 5): counts and sizes a file declares that its bytes do not
//! back: collections of zero-size items, huge fixed-size array extents, envelopes of valid zstd
//! blocks inflating far beyond what their preamble declares, and keys lists declaring billions of
//! keys. Each builder returns the file's bytes; [`cases`] adds them to the manifest.

use super::{case, cluster, desc, expect, one, Case, Res};
use rntuple::format::descriptor::Role;
use rntuple::primitives::column_type::ColumnType as C;
use rntuple::primitives::element::PageValues as V;
use rntuple_testkit::{column_range, encode, push_column, push_field, reseal_envelope, single_group, FileForge, NTupleOptions, TOP};
use serde_json::json;

/// `v`: `std::vector<E>` of an empty record `E` (no fields, no columns: zero bytes per item), one
/// entry whose offset says it holds `items` items.
fn empty_records(items: u64) -> Res<Vec<u8>> {
    let mut f = FileForge::new("hostile.root");
    let mut d = desc("Events");
    let v = push_field(&mut d, None, Role::Collection, "v", "std::vector<E>");
    push_column(&mut d, v, C::SplitIndex64);
    push_field(&mut d, Some(v), Role::Record, "_0", "E");
    let p = f.page(&encode(C::SplitIndex64, V::U64(&[items]))?, 1, true);
    d.clusters.push(cluster(0, 0, 1, vec![Some(column_range(0, 0, vec![p]))]));
    one(f, d)
}

/// `e`: a top-level empty record `E` (no columns at all) in a cluster of `entries` entries.
fn empty_record_entries(entries: u64) -> Res<Vec<u8>> {
    let f = FileForge::new("hostile.root");
    let mut d = desc("Events");
    push_field(&mut d, None, Role::Record, "e", "E");
    d.clusters.push(cluster(0, 0, entries, vec![]));
    one(f, d)
}

/// The stored bytes of `n` zero bytes: valid zstd blocks of at most 16 MiB of zeros each.
fn zero_blocks(n: u64) -> Res<Vec<u8>> {
    let full = rntuple_testkit::compress(&vec![0u8; rntuple::format::compression::MAX_BLOCK], 505)?;
    let mut out = Vec::new();
    let mut left = n;
    while left >= rntuple::format::compression::MAX_BLOCK as u64 {
        out.extend_from_slice(&full);
        left -= rntuple::format::compression::MAX_BLOCK as u64;
    }
    if left > 0 {
        out.extend_from_slice(&block(&vec![0u8; left as usize])?);
    }
    Ok(out)
}

/// `a`: `std::array<float, extent>` in `entries` entries, one page per entry of valid zstd blocks
/// of zeros (`extent` floats each): a few KiB of file declaring `entries * extent * 4` bytes.
fn huge_array(extent: u64, entries: u64) -> Res<Vec<u8>> {
    let mut f = FileForge::new("hostile.root");
    let mut d = desc("Events");
    let a = push_field(&mut d, None, Role::Leaf, "a", &format!("std::array<float,{extent}>"));
    d.fields[a as usize].repetition = Some(extent);
    let x = push_field(&mut d, Some(a), Role::Leaf, "_0", "float");
    push_column(&mut d, x, C::SplitReal32);
    let stored = zero_blocks(extent * 4)?;
    let pages = (0..entries).map(|_| f.page(&stored, extent as u32, true)).collect();
    d.clusters.push(cluster(0, 0, entries, vec![Some(column_range(0, 505, pages))]));
    one(f, d)
}

/// Which envelope a bomb replaces.
#[derive(Clone, Copy)]
enum Which {
    Footer,
    PageList,
}

/// A float RNTuple (`x` = 1.5, 2.5, 3.5) whose footer or page list is replaced by the real
/// envelope followed by valid zstd blocks of `extra` zeros. With `honest_preamble` the
/// envelope's preamble states the inflated length and its checksum covers it (the zeros lie
/// inside the payload); without, the preamble states the real length and only the anchor (or the
/// footer's link) the inflated one.
fn envelope_bomb(which: Which, extra: u64, honest_preamble: bool) -> Res<Vec<u8>> {
    let mut f = FileForge::new("hostile.root");
    let mut d = desc("Events");
    let x = push_field(&mut d, None, Role::Leaf, "x", "float");
    push_column(&mut d, x, C::SplitReal32);
    let p = f.page(&encode(C::SplitReal32, V::F32(&[1.5, 2.5, 3.5]))?, 3, true);
    d.clusters.push(cluster(0, 0, 3, vec![Some(column_range(0, 0, vec![p]))]));
    single_group(&mut d);
    let mut a = f.put_ntuple(&mut d, &NTupleOptions::default())?;
    let real = match which {
        Which::Footer => rntuple::format::serialize::footer(&d),
        Which::PageList => rntuple::format::serialize::page_list(d.header_checksum, &d.clusters),
    };
    let (stored, len) = inflated(real, extra, honest_preamble)?;
    let offset = f.blob(&stored, len);
    match which {
        Which::Footer => {
            (a.seek_footer, a.nbytes_footer, a.len_footer) = (offset, stored.len() as u64, len);
        }
        Which::PageList => {
            let link = &mut d.cluster_groups[0].page_list;
            (link.locator.offset, link.locator.size, link.length) = (offset, stored.len() as u64, len);
            let mut fb = rntuple::format::serialize::footer(&d);
            reseal_envelope(&mut fb);
            let z = rntuple_testkit::compress(&fb, 505)?;
            a.seek_footer = f.blob(&z, fb.len() as u64);
            (a.nbytes_footer, a.len_footer) = (z.len() as u64, fb.len() as u64);
        }
    }
    f.anchor(TOP, "Events", &a)?;
    Ok(f.finish()?)
}

/// The stored bytes and length of envelope `env` (unsealed, as serialized) followed by `extra`
/// zeros: the envelope without its checksum, the zeros, then the checksum, each part its own
/// compression blocks.
fn inflated(mut env: Vec<u8>, extra: u64, honest_preamble: bool) -> Res<(Vec<u8>, u64)> {
    let len = env.len() as u64 + extra;
    if honest_preamble {
        let ty = u16::from_le_bytes([env[0], env[1]]) as u64;
        env[..8].copy_from_slice(&(ty | len << 16).to_le_bytes());
    }
    reseal_envelope(&mut env);
    let n = env.len();
    let (body, sum) = env.split_at(n - 8);
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(body);
    let zeros = vec![0u8; 1 << 20];
    let mut left = extra;
    while left > 0 {
        let k = left.min(zeros.len() as u64) as usize;
        h.update(&zeros[..k]);
        left -= k as u64;
    }
    let checksum = if honest_preamble { h.digest().to_le_bytes() } else { sum.try_into()? };
    let mut stored = block(body)?;
    stored.extend_from_slice(&zero_blocks(extra)?);
    stored.extend_from_slice(&block(&checksum)?);
    Ok((stored, len))
}

/// `data` as one zstd compression block (even when it does not shrink).
fn block(data: &[u8]) -> Res<Vec<u8>> {
    let z = zstd::bulk::compress(data, 1)?;
    let mut out = vec![b'Z', b'S', 1];
    out.extend_from_slice(&(z.len() as u32).to_le_bytes()[..3]);
    out.extend_from_slice(&(data.len() as u32).to_le_bytes()[..3]);
    out.extend_from_slice(&z);
    Ok(out)
}

/// The control RNTuple (see `control`) beside a subdirectory; the keys list of the top directory
/// (`top`) or of the subdirectory declares `nkeys` keys.
fn key_count(top: bool, nkeys: u32) -> Res<Vec<u8>> {
    let mut f = FileForge::new("hostile.root");
    let mut d = super::control(&mut f, "Events")?;
    let sub = f.directory(TOP, "dir")?;
    single_group(&mut d);
    f.add_ntuple(TOP, &mut d, &NTupleOptions::default())?;
    let mut bytes = f.finish()?;
    // A keys list's key: class, name ("" for a subdirectory's, the file name for the top's), title
    // "": its payload (the key count first) follows.
    let pattern: &[u8] = if top { b"\x05TFile\x0chostile.root\x00" } else { b"\x0aTDirectory\x00\x00" };
    let hits: Vec<usize> = bytes.windows(pattern.len()).enumerate().filter(|(_, w)| *w == pattern).map(|(i, _)| i).collect();
    // The top directory's own key comes first; the keys lists are written last.
    let at = *hits.last().ok_or("keys list not found")? + pattern.len();
    let _ = sub;
    bytes[at..at + 4].copy_from_slice(&nkeys.to_be_bytes());
    Ok(bytes)
}

/// The control RNTuple whose footer links `n` attribute sets (`a0`, `a1`, ...), each anchor a
/// locator of 16 bytes at the file's start (not an anchor).
fn attribute_links(n: usize) -> Res<Vec<u8>> {
    let mut f = FileForge::new("hostile.root");
    let mut d = super::control(&mut f, "Events")?;
    for i in 0..n {
        let anchor = rntuple::format::cursor::Locator { size: 16, offset: 100 };
        d.attribute_sets.push(rntuple::format::descriptor::AttributeSetLink {
            schema_major: 1,
            schema_minor: 0,
            anchor_length: 16,
            anchor,
            name: format!("a{i}"),
        });
    }
    single_group(&mut d);
    f.add_ntuple(TOP, &mut d, &NTupleOptions::default())?;
    Ok(f.finish()?)
}

/// `n` float fields `f0`, `f1`, ..., one entry of 0.0 each (a page of one element per column).
fn many_fields(n: usize) -> Res<Vec<u8>> {
    let mut f = FileForge::new("hostile.root");
    let mut d = desc("Events");
    let raw = encode(C::SplitReal32, V::F32(&[0.0]))?;
    let mut cols = Vec::with_capacity(n);
    for i in 0..n {
        let x = push_field(&mut d, None, Role::Leaf, &format!("f{i}"), "float");
        push_column(&mut d, x, C::SplitReal32);
        cols.push(Some(column_range(0, 0, vec![f.page(&raw, 1, false)])));
    }
    d.clusters.push(cluster(0, 0, 1, cols));
    one(f, d)
}

fn control_rows() -> serde_json::Value {
    super::rows(super::control_rows())
}

/// The cases of issue 35, point 5.
pub fn cases() -> Res<Vec<Case>> {
    let (ok, err, either) = ("ok", "error", "either");
    let mut out = Vec::new();
    out.push(case(
        "empty_records_2p31.root",
        empty_records(1 << 31)?,
        "Events",
        "12-zero-size-items",
        "std::vector<E> of an empty record E (no columns): one entry whose offset says 2^31 items",
        expect(ok, either, either, either, either),
        1,
        json!({}),
    ));
    out.push(case(
        "empty_records_2p62.root",
        empty_records(1 << 62)?,
        "Events",
        "12-zero-size-items",
        "std::vector<E> of an empty record E (no columns): one entry whose offset says 2^62 items",
        expect(ok, either, either, either, either),
        1,
        json!({}),
    ));
    let n31 = 1u64 << 31;
    out.push(case(
        "empty_record_entries_2p31.root",
        empty_record_entries(n31)?,
        "Events",
        "12-zero-size-items",
        "a top-level empty record E (no columns at all) in one cluster of 2^31 entries: legitimate, every entry {}",
        with_all(expect(ok, ok, ok, either, either), &[("bench", either), ("arrays", either)]),
        n31,
        // No rows: Python's awkward form of a record without fields is `[]`, dump's `{}`.
        json!({"huge": true, "dump_range": [n31 - 3, n31], "first_row": {"e": {}}}),
    ));
    out.push(case(
        "array_2p28.root",
        huge_array(1 << 28, 1)?,
        "Events",
        "13-array-extent",
        "std::array<float, 2^28>, one entry: a 1 GiB page of valid zstd blocks of zeros in 40 KiB",
        expect(ok, either, either, either, either),
        1,
        json!({}),
    ));
    out.push(case(
        "array_2p26_x4.root",
        huge_array(1 << 26, 4)?,
        "Events",
        "13-array-extent",
        "std::array<float, 2^26> in 4 entries, a 256 MiB page of zstd zeros each: 1 GiB declared in 40 KiB",
        expect(ok, either, either, either, either),
        4,
        json!({"dump_range": [3, 4]}),
    ));
    let gib = 1u64 << 30;
    for (file, which, honest, what) in [
        (
            "bomb_footer_1g.root",
            Which::Footer,
            false,
            "a footer whose anchor length is 1 GiB (valid zstd blocks of zeros after the real footer), its preamble saying the real length",
        ),
        (
            "bomb_footer_1g_sealed.root",
            Which::Footer,
            true,
            "a footer of 1 GiB (valid zstd blocks of zeros inside its payload), its preamble and checksum agreeing",
        ),
        (
            "bomb_pagelist_1g.root",
            Which::PageList,
            false,
            "a page list whose link says 1 GiB (valid zstd blocks of zeros after the real page list), its preamble saying the real length",
        ),
        ("bomb_pagelist_1g_sealed.root", Which::PageList, true, "a page list of 1 GiB (zstd zeros inside its payload), its preamble and checksum agreeing"),
    ] {
        out.push(case(file, envelope_bomb(which, gib - 4096, honest)?, "Events", "14-compression-bomb", what, all_but_info(err), 3, json!({})));
    }
    // Below the ratio bound's floor: refused by the preamble, read from the first block only.
    for (file, which, what) in [
        (
            "bomb_footer_12m.root",
            Which::Footer,
            "a footer whose anchor length is 12 MiB (zstd zeros after the real footer), its preamble saying the real length",
        ),
        (
            "bomb_pagelist_12m.root",
            Which::PageList,
            "a page list whose link says 12 MiB (zstd zeros after the real page list), its preamble saying the real length",
        ),
    ] {
        out.push(case(file, envelope_bomb(which, 12 << 20, false)?, "Events", "14-compression-bomb", what, all_but_info(err), 3, json!({})));
    }
    out.push(case(
        "typename_deep_120.root",
        super::deep_type(120, true)?,
        "Events",
        "16-nesting-depth",
        "v: 120 nested std::vector around a float (type names and field tree), one entry: the values or a one-line error (Python: an RNTupleError)",
        super::all(either),
        1,
        super::rows(json!([{"v": super::deep_value(120)}])),
    ));
    // `info` lists the first 100 sets (each opened by its link, not looked up by name), the other
    // tools parse the footer in linear time.
    out.push(case(
        "attribute_links_200k.root",
        attribute_links(200_000)?,
        "Events",
        "17-attribute-links",
        "the sane RNTuple whose footer links 200,000 attribute sets, none of whose anchors is one",
        super::all(either),
        3,
        control_rows(),
    ));
    // Python reads many fields in groups (each group's Arrow records freed before the next), a
    // re-encoding skim matches fields by name through maps, not scans.
    out.push(case(
        "fields_100k.root",
        many_fields(100_000)?,
        "Events",
        "18-many-fields",
        "100,000 float fields, one entry of 0.0 each: legitimate",
        super::all(ok),
        1,
        json!({"zeros": true}),
    ));
    for (file, top, n, what) in [
        ("keys_top_4g.root", true, u32::MAX, "the top directory's keys list declares 2^32-1 keys"),
        ("keys_top_2g.root", true, 2_000_000_000, "the top directory's keys list declares 2e9 keys"),
        ("keys_subdir_4g.root", false, u32::MAX, "a subdirectory's keys list declares 2^32-1 keys (the RNTuple is in the top directory)"),
    ] {
        let e = if top { super::all(err) } else { super::all(either) };
        out.push(case(file, key_count(top, n)?, "Events", "15-key-count", what, e, 3, if top { json!({}) } else { control_rows() }));
    }
    Ok(out)
}

/// `e` with several tools' expectations replaced.
fn with_all(mut e: serde_json::Value, x: &[(&str, &str)]) -> serde_json::Value {
    for (t, v) in x {
        e[*t] = json!(v);
    }
    e
}

/// Every tool `x`, except `info`, which lists the RNTuple with the reason it cannot be opened or
/// fails: either.
fn all_but_info(x: &str) -> serde_json::Value {
    let mut e = super::all(x);
    e["info"] = json!("either");
    e
}
