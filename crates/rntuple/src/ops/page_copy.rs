//! Copying the stored pages of some columns of one cluster into a relocatable cluster, as they
//! are (no decompression): what skims copy; merges go through `merge_cluster.rs`, which also fills
//! and recompresses.

use crate::error::{Error, Result};
use crate::format::descriptor::ClusterDescriptor;
use crate::ops::merge_cluster::verify_page_checksum;
use crate::read::reader::Reader;
use crate::storage::container::tfile::read_blob;
use crate::write::cluster::sealed::{ClusterOut, PagePosition, SealedCluster, SealedColumn, SealedPage};
use crate::write::sink::Dataset;
use std::collections::HashMap;

/// What [`copy_cluster_into`] copied.
pub(crate) struct Copied {
    /// Pages (shared ones once).
    pub pages: u64,
    /// Page bytes as stored, checksums included.
    pub page_bytes: u64,
    /// Entries of the cluster.
    pub entries: u64,
}

/// Copies the stored pages of `columns` of one cluster of `r` into `ds` as its next cluster.
pub(crate) fn copy_cluster_into(ds: &mut Dataset, r: &Reader, c: &ClusterDescriptor, columns: &[usize]) -> Result<Copied> {
    let mut sealed = copy_cluster(r, c, columns)?;
    let copied = Copied { pages: sealed.chunks.len() as u64, page_bytes: sealed.chunks.iter().map(|b| b.len() as u64).sum(), entries: sealed.n_entries };
    ds.cluster(&mut sealed)?;
    Ok(copied)
}

/// Reads the stored pages of the columns `columns` (input column ids, in output order) of one
/// cluster into a relocatable cluster.
pub(crate) fn copy_cluster(r: &Reader, c: &ClusterDescriptor, columns: &[usize]) -> Result<SealedCluster> {
    let mut out = SealedCluster { n_entries: c.n_entries, ..Default::default() };
    let mut settings: Option<(u32, bool)> = None;
    // Same-page merging: page descriptors pointing at one stored page share one copy.
    let mut copied: HashMap<u64, usize> = HashMap::new();
    let max_key = r.anchor().max_key_size;
    for &col in columns {
        let range =
            c.columns.get(col).and_then(Option::as_ref).ok_or_else(|| {
                Error::Invalid(format!("column {col} has no pages in this cluster (a deferred column): merging such RNTuples is not supported"))
            })?;
        if range.suppressed {
            return Err(Error::Invalid(format!(
                "column {col} is suppressed in this cluster (several column representations): merging such RNTuples is not supported"
            )));
        }
        let mut pages = Vec::with_capacity(range.pages.len());
        for p in &range.pages {
            let these = (range.compression, p.has_checksum);
            if *settings.get_or_insert(these) != these {
                return Err(Error::Invalid(format!("column {col} mixes compression settings or page checksums within the cluster: not supported")));
            }
            let stored = p.locator.size + if p.has_checksum { 8 } else { 0 };
            let chunk = match copied.get(&p.locator.offset) {
                Some(&i) => i,
                None => {
                    let bytes = read_blob(&**r.source(), p.locator.offset, stored, max_key, &format!("page of column {col}"))?;
                    if p.has_checksum {
                        verify_page_checksum(&bytes, &format!("page of column {col} at offset {}", p.locator.offset))?;
                    }
                    out.chunks.push(bytes);
                    copied.insert(p.locator.offset, out.chunks.len() - 1);
                    out.chunks.len() - 1
                }
            };
            pages.push(SealedPage { n_elements: p.n_elements, stored: p.locator.size, position: PagePosition::Chunk(chunk) });
        }
        out.columns.push(SealedColumn { n_elements: range.n_elements, pages });
    }
    let (compression, checksums) = settings.unwrap_or((0, false));
    out.compression = compression;
    out.checksums = checksums;
    Ok(out)
}
