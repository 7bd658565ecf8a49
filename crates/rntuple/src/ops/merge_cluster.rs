//! One input cluster made into one output cluster of a merge: its pages copied as stored (or
//! recompressed when the merge asks for another compression), and zero pages for what the input
//! lacks: the principal columns of fields it does not have (union merge) and the entries before a
//! deferred column's first element, as ROOT's `RNTupleMerger` fills them. Pure work on one
//! cluster: the merge runs it on several threads and places the results in order.

use crate::error::{Error, Result};
use crate::format::compression::{compress, decompress, Compression};
use crate::format::descriptor::{ClusterDescriptor, ColumnRange};
use crate::read::reader::Reader;
use crate::storage::container::tfile::read_blob;
use crate::write::cluster::same_pages::SamePages;
use crate::write::cluster::sealed::{PagePosition, SealedCluster, SealedColumn, SealedPage};
use std::collections::HashMap;

/// Packed bytes of one zero page at most (ROOT's merger cuts its zero pages at 256 KiB).
const ZERO_PAGE_BYTES: u64 = 256 * 1024;

/// What the merge knows of one output column for one input.
#[derive(Debug, Clone)]
pub(crate) struct ColumnPlan {
    /// The input column holding its data (`None`: the input lacks it).
    pub input: Option<usize>,
    /// Elements per entry when the column is zero-filled where data is missing (principal
    /// columns outside collections), else `None`.
    pub reps: Option<u64>,
    /// The output column's first element (deferred columns start later than 0).
    pub first_element: u64,
    /// Bits per element on storage.
    pub bits: u16,
    /// The field's path (for errors).
    pub field: String,
    /// Whether the field is a streamer field (no default value can be made).
    pub streamer: bool,
}

/// How pages are to be stored.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PageSettings {
    /// Recompress pages of another compression to this one (`None`: copy them as they are).
    pub recompress: Option<Compression>,
    /// Compression and checksums of a cluster that copies no page at all.
    pub fallback: (Compression, bool),
    /// Same-page merging (`WriteOptions::same_page_merging`): a page equal to an earlier page of
    /// its output cluster is stored once, as ROOT's merger does (with page checksums only).
    pub same_page_merging: bool,
}

/// What [`build_cluster`] produced besides the cluster.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct ClusterCounts {
    pub pages: u64,
    pub page_bytes: u64,
    pub zero_pages: u64,
    pub recompressed: u64,
}

/// Builds the output cluster for cluster `c` of `r`, whose first entry in the output is
/// `out_first_entry`.
pub(crate) fn build_cluster(
    r: &Reader,
    c: &ClusterDescriptor,
    out_first_entry: u64,
    plan: &[ColumnPlan],
    pages: PageSettings,
) -> Result<(SealedCluster, ClusterCounts)> {
    let n_in_columns = r.descriptor().columns.len();
    if c.columns.len() > n_in_columns {
        return Err(Error::Invalid(format!("cluster {}: {} column ranges for {n_in_columns} columns", c.id, c.columns.len())));
    }
    // The cluster's page settings: its first copied page's, or the recompression's.
    let first_range =
        plan.iter().filter_map(|p| p.input).filter_map(|ic| c.columns.get(ic).and_then(Option::as_ref)).find(|r| !r.suppressed && !r.pages.is_empty());
    let (compression, checksums) = match (first_range, pages.recompress) {
        (Some(fr), Some(z)) => (z, fr.pages[0].has_checksum),
        (Some(fr), None) => (Compression::from_settings(fr.compression)?, fr.pages[0].has_checksum),
        (None, Some(z)) => (z, pages.fallback.1),
        (None, None) => pages.fallback,
    };
    let mut out = SealedCluster { n_entries: c.n_entries, compression: compression.settings(), checksums, ..Default::default() };
    let mut counts = ClusterCounts::default();
    // Default pages are bounded by what the cluster stores: a file listing thousands of columns it
    // never stores, over thousands of clusters, would otherwise make millions of pages.
    let input_pages: usize = c.columns.iter().flatten().map(|r| r.pages.len()).sum();
    let zero_budget = (4 * input_pages as u64).max(1024);
    // Likewise the columns the input has but this cluster does not list (deferred ones): bounded by
    // those it lists, so that thousands of unlisted columns over thousands of clusters are refused
    // instead of listed (as empty ranges) in every output cluster.
    let listed = c.columns.iter().flatten().count();
    let unlisted = plan.iter().filter(|p| p.input.is_some_and(|ic| c.columns.get(ic).is_none_or(Option::is_none))).count();
    if unlisted > (4 * listed).max(1024) {
        return Err(Error::Invalid(format!(
            "cluster {}: {unlisted} columns of the input are not listed in it ({listed} are): a merge takes at most max(1024, 4 x the listed ones)",
            c.id
        )));
    }
    let mut copied: HashMap<u64, usize> = HashMap::new();
    let mut merging = (pages.same_page_merging && checksums).then(SamePages::default);
    let max_key = r.anchor().max_key_size;
    let out_end = out_first_entry.checked_add(c.n_entries).ok_or_else(|| Error::Invalid(format!("cluster {}: entry count overflows", c.id)))?;
    for p in plan {
        let range = match p.input {
            Some(ic) => c.columns.get(ic).and_then(Option::as_ref),
            None => None,
        };
        if let Some(range) = range
            && range.suppressed
        {
            return Err(Error::Invalid(format!(
                "column of field '{}' is suppressed in cluster {} (several column representations): merging such RNTuples is not supported",
                p.field, c.id
            )));
        }
        let actual = range.map_or(0, |r| r.n_elements);
        let zeros = match p.reps {
            Some(reps) => {
                let target_end = out_end.checked_mul(reps).ok_or_else(|| Error::Invalid(format!("field '{}': element index overflow", p.field)))?;
                let next = p.first_element.max(out_first_entry.saturating_mul(reps));
                let zeros = target_end.saturating_sub(next.saturating_add(actual));
                if let Some(range) = range {
                    check_coverage(c, range, reps, zeros, &p.field)?;
                }
                if zeros > MAX_ZERO_ELEMENTS {
                    return Err(Error::Invalid(format!(
                        "cluster {}: field '{}' would need {zeros} default elements (the cluster claims {} entries): more than a merge fills ({MAX_ZERO_ELEMENTS})",
                        c.id, p.field, c.n_entries
                    )));
                }
                zeros
            }
            None => 0,
        };
        let mut sealed = SealedColumn { n_elements: zeros + actual, pages: Vec::new() };
        if zeros > 0 {
            if p.streamer {
                return Err(Error::Invalid(format!("field '{}' is a streamer field that some entries lack: it has no default value to fill them", p.field)));
            }
            counts.zero_pages += zero_pages(&mut out, &mut sealed, zeros, p, compression, checksums, &mut merging)?;
            if counts.zero_pages > zero_budget {
                return Err(Error::Invalid(format!(
                    "cluster {}: more than {zero_budget} pages of default values for the columns it does not store ({} pages stored): a merge fills at most max(1024, 4 x the pages stored) per cluster",
                    c.id, input_pages
                )));
            }
        }
        if let Some(range) = range {
            for pd in &range.pages {
                let col = p.input.unwrap_or_default();
                let stored = pd.locator.size + if pd.has_checksum { 8 } else { 0 };
                if let Some(&i) = copied.get(&pd.locator.offset) {
                    sealed.pages.push(SealedPage {
                        n_elements: pd.n_elements,
                        stored: out.chunks[i].len() as u64 - if checksums { 8 } else { 0 },
                        position: PagePosition::Chunk(i),
                    });
                    continue;
                }
                let what = format!("page of column {col} (field '{}') at offset {}", p.field, pd.locator.offset);
                let bytes = read_blob(&**r.source(), pd.locator.offset, stored, max_key, &what)?;
                if pd.has_checksum {
                    verify_page_checksum(&bytes, &what)?;
                }
                let same = range.compression == compression.settings() && pd.has_checksum == checksums;
                let chunk = if same {
                    bytes
                } else if pages.recompress.is_some() {
                    counts.recompressed += 1;
                    let body = &bytes[..pd.locator.size as usize];
                    let len = (pd.n_elements as u64 * p.bits as u64).div_ceil(8);
                    let len = usize::try_from(len).map_err(|_| Error::Invalid(format!("{what}: {len} bytes")))?;
                    let raw = decompress(body, len, &what, pd.locator.offset)?;
                    seal(&raw, compression, checksums)?
                } else {
                    return Err(Error::Invalid(format!(
                        "{what}: its compression ({}) or checksum ({}) differs from the cluster's other pages ({}, {}): pass a compression to recompress them",
                        range.compression,
                        pd.has_checksum,
                        compression.settings(),
                        checksums
                    )));
                };
                let body_len = chunk.len() as u64 - if checksums { 8 } else { 0 };
                let (len, (i, new)) = (chunk.len() as u64, add_chunk(&mut out, &mut merging, chunk));
                if new {
                    counts.pages += 1;
                    counts.page_bytes += len;
                }
                copied.insert(pd.locator.offset, i);
                sealed.pages.push(SealedPage { n_elements: pd.n_elements, stored: body_len, position: PagePosition::Chunk(i) });
            }
        }
        out.columns.push(sealed);
    }
    Ok((out, counts))
}

/// Default elements one column of one cluster may get (2^32: more than any cluster ROOT writes
/// holds; a file claiming more is refused instead of filled for minutes).
const MAX_ZERO_ELEMENTS: u64 = 1 << 32;

/// A column the input has must cover its cluster: the elements before its first one (a column
/// added late, deferred) plus those it holds are the cluster's entries times `reps`, and only that
/// gap may be filled with defaults. A cluster claiming more entries than its columns hold is damaged.
fn check_coverage(c: &ClusterDescriptor, range: &ColumnRange, reps: u64, zeros: u64, field: &str) -> Result<()> {
    let gap = range.first_element.saturating_sub(c.first_entry.saturating_mul(reps));
    let want = c.n_entries.checked_mul(reps);
    if want != gap.checked_add(range.n_elements) || zeros > gap {
        return Err(Error::Invalid(format!(
            "cluster {}: {} entries, but the column of field '{field}' holds {} elements from element {} ({} per entry): the cluster's entry count or its pages are damaged",
            c.id, c.n_entries, range.n_elements, range.first_element, reps
        )));
    }
    Ok(())
}

/// Appends `chunk` to the cluster's chunks, or with same-page merging finds an equal one stored
/// already: its index and whether it was appended.
fn add_chunk(out: &mut SealedCluster, same: &mut Option<SamePages>, chunk: Vec<u8>) -> (usize, bool) {
    if let Some(s) = same
        && let Some(i) = s.find_or_insert(&out.chunks, &chunk, out.chunks.len())
    {
        return (i, false);
    }
    out.chunks.push(chunk);
    (out.chunks.len() - 1, true)
}

/// Appends zero pages of `n` elements in all to `col` (each equal to one stored already is merged
/// when `same` is given); returns how many.
fn zero_pages(
    out: &mut SealedCluster,
    col: &mut SealedColumn,
    n: u64,
    p: &ColumnPlan,
    z: Compression,
    checksums: bool,
    same: &mut Option<SamePages>,
) -> Result<u64> {
    if p.bits == 0 {
        return Err(Error::Invalid(format!("field '{}': a column of 0 bits per element", p.field)));
    }
    let per_page = (ZERO_PAGE_BYTES * 8 / p.bits as u64).max(1).min(u32::MAX as u64);
    let mut left = n;
    let mut made = 0;
    while left > 0 {
        let k = left.min(per_page);
        let raw = vec![0u8; (k * p.bits as u64).div_ceil(8) as usize];
        let chunk = seal(&raw, z, checksums)?;
        let stored = chunk.len() as u64 - if checksums { 8 } else { 0 };
        let (i, _) = add_chunk(out, same, chunk);
        col.pages.push(SealedPage { n_elements: k as u32, stored, position: PagePosition::Chunk(i) });
        left -= k;
        made += 1;
    }
    Ok(made)
}

/// Compresses a page and appends its checksum.
fn seal(raw: &[u8], z: Compression, checksums: bool) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(raw.len() / 2 + 16);
    compress(raw, z, &mut out)?;
    if checksums {
        let sum = crate::format::checksum::xxh3(&out).to_le_bytes();
        out.extend_from_slice(&sum);
    }
    Ok(out)
}

/// Checks the XXH3 checksum that ends a copied page (the pages are copied, not decoded, so this
/// is where a damaged page is caught: the copy fails instead of passing the damage on).
pub(crate) fn verify_page_checksum(stored: &[u8], what: &str) -> Result<()> {
    let Some(split) = stored.len().checked_sub(8) else {
        return Err(Error::Invalid(format!("{what}: {} bytes, too short for its checksum", stored.len())));
    };
    let (body, sum) = stored.split_at(split);
    if crate::format::checksum::xxh3(body).to_le_bytes() != sum {
        return Err(Error::Invalid(format!("{what}: checksum mismatch (the page is damaged)")));
    }
    Ok(())
}
