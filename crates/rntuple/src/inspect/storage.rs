//! Where an RNTuple's bytes go: per column, per field (summed over its sub-fields), per cluster and
//! per envelope, as ROOT's `RNTupleInspector` counts them: a page's stored bytes are its locator's
//! size (compressed, without the page checksum), its uncompressed bytes its elements times the
//! column's bits on storage, rounded up to whole bytes.

use super::page_sizes::PageSizes;
use crate::format::anchor::Anchor;
use crate::format::descriptor::{ColumnDescriptor, Descriptor, PageDescriptor};
use std::collections::HashSet;

/// Stored and uncompressed bytes and pages of a set of pages.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Bytes {
    /// Bytes as stored (compressed; page checksums not counted).
    pub stored: u64,
    /// Bytes once decompressed (elements × bits on storage, rounded up per page).
    pub uncompressed: u64,
    /// Pages.
    pub pages: u64,
}

impl Bytes {
    /// The bytes of one page of `column`.
    pub fn of_page(page: &PageDescriptor, column: &ColumnDescriptor) -> Bytes {
        let uncompressed = (u64::from(page.n_elements) * u64::from(column.bits_on_storage)).div_ceil(8);
        Bytes { stored: page.locator.size, uncompressed, pages: 1 }
    }

    /// Adds `other` (saturating: the counts come from the file).
    pub fn add(&mut self, other: Bytes) {
        self.stored = self.stored.saturating_add(other.stored);
        self.uncompressed = self.uncompressed.saturating_add(other.uncompressed);
        self.pages = self.pages.saturating_add(other.pages);
    }

    /// ROOT's compression factor, uncompressed / stored bytes (`None` when nothing is stored).
    pub fn compression_factor(&self) -> Option<f64> {
        (self.stored > 0).then(|| self.uncompressed as f64 / self.stored as f64)
    }
}

/// An envelope's (or several envelopes') stored and uncompressed bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Envelope {
    /// Bytes as stored in the file (compressed).
    pub stored: u64,
    /// Bytes once decompressed.
    pub uncompressed: u64,
}

/// The metadata's envelopes: header, footer (from the anchor) and the page lists (from the footer's
/// cluster groups).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Envelopes {
    /// The header envelope.
    pub header: Envelope,
    /// The footer envelope.
    pub footer: Envelope,
    /// The page-list envelopes, together.
    pub page_lists: Envelope,
    /// How many page lists (one per cluster group).
    pub page_list_count: usize,
}

impl Envelopes {
    /// The envelopes of `d`, whose anchor is `a`.
    pub fn of(d: &Descriptor, a: &Anchor) -> Envelopes {
        let mut page_lists = Envelope::default();
        for g in &d.cluster_groups {
            page_lists.stored = page_lists.stored.saturating_add(g.page_list.locator.size);
            page_lists.uncompressed = page_lists.uncompressed.saturating_add(g.page_list.length);
        }
        Envelopes {
            header: Envelope { stored: a.nbytes_header, uncompressed: a.len_header },
            footer: Envelope { stored: a.nbytes_footer, uncompressed: a.len_footer },
            page_lists,
            page_list_count: d.cluster_groups.len(),
        }
    }

    /// Stored bytes of all of them.
    pub fn stored(&self) -> u64 {
        self.header.stored.saturating_add(self.footer.stored).saturating_add(self.page_lists.stored)
    }

    /// Uncompressed bytes of all of them.
    pub fn uncompressed(&self) -> u64 {
        self.header.uncompressed.saturating_add(self.footer.uncompressed).saturating_add(self.page_lists.uncompressed)
    }
}

/// One cluster: its entries, bytes and compression settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterStats {
    /// Cluster id (position in the descriptor).
    pub id: usize,
    /// First entry.
    pub first_entry: u64,
    /// Entries.
    pub entries: u64,
    /// The bytes of all its pages.
    pub bytes: Bytes,
    /// The distinct compression settings of its column ranges (ROOT's `algorithm * 100 + level`),
    /// ascending.
    pub compression: Vec<u32>,
}

/// A field's bytes: its own columns', and with all its sub-fields' (ROOT's field tree inspector).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FieldStats {
    /// The field's own (physical) columns.
    pub own: Bytes,
    /// Its own columns and those of all its sub-fields, at any depth.
    pub total: Bytes,
}

/// Where the bytes of an RNTuple go (see the module's documentation).
///
/// ```
/// use rntuple::inspect::storage::StorageStats;
/// # use rntuple::write::{Writer, WriteOptions};
/// # use rntuple::Value;
/// # let path = std::env::temp_dir().join(format!("rntuple-doc-StorageStats-{}.root", std::process::id()));
/// # let mut w = Writer::create(&path, "Events", &[("x", "float"), ("v", "std::vector<float>")], WriteOptions::default())?;
/// # for i in 0..100 { w.fill(&Value::Record(vec![("x".into(), Value::F32(i as f32)), ("v".into(), Value::List(vec![Value::F32(1.0); 3]))]))?; }
/// # w.commit()?;
/// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
/// let d = r.descriptor();
/// let s = StorageStats::of(d, Some(r.anchor()));
/// let v = d.field_by_path("v").unwrap() as usize;
/// // The vector's total holds its offsets column and its item's floats: 100 offsets, 300 floats.
/// assert_eq!(s.fields[v].total.uncompressed, 100 * 8 + 300 * 4);
/// assert_eq!(s.total.stored, s.clusters.iter().map(|c| c.bytes.stored).sum::<u64>());
/// assert_eq!(s.page_sizes.pages, s.total.pages);
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct StorageStats {
    /// Per physical column id.
    pub columns: Vec<Bytes>,
    /// Per field id.
    pub fields: Vec<FieldStats>,
    /// Per field id, the id of its top-level field (itself for a top-level field).
    pub top_level_of: Vec<u32>,
    /// Per cluster, in the descriptor's order.
    pub clusters: Vec<ClusterStats>,
    /// The distribution of stored page sizes.
    pub page_sizes: PageSizes,
    /// All pages.
    pub total: Bytes,
    /// Pages that point at the bytes of an earlier page of their cluster (same-page merging), and
    /// their stored bytes: counted in the totals once per page, stored once in the file.
    pub shared_pages: (u64, u64),
    /// The metadata envelopes (when an anchor was given).
    pub envelopes: Option<Envelopes>,
}

impl StorageStats {
    /// The statistics of `d` (and of its envelopes, given its anchor `a`).
    pub fn of(d: &Descriptor, a: Option<&Anchor>) -> StorageStats {
        let mut columns = vec![Bytes::default(); d.columns.len()];
        let mut clusters = Vec::with_capacity(d.clusters.len());
        let mut page_sizes = PageSizes::default();
        let mut shared_pages = (0u64, 0u64);
        let mut offsets = HashSet::new();
        for c in &d.clusters {
            let mut bytes = Bytes::default();
            let mut compression = Vec::new();
            offsets.clear();
            for (range, (column, sum)) in c.columns.iter().zip(d.columns.iter().zip(columns.iter_mut())) {
                let Some(range) = range else { continue };
                if range.suppressed {
                    continue;
                }
                if !compression.contains(&range.compression) {
                    compression.push(range.compression);
                }
                for p in &range.pages {
                    let b = Bytes::of_page(p, column);
                    sum.add(b);
                    bytes.add(b);
                    page_sizes.add(p.locator.size);
                    if p.locator.size > 0 && !offsets.insert(p.locator.offset) {
                        shared_pages.0 += 1;
                        shared_pages.1 = shared_pages.1.saturating_add(p.locator.size);
                    }
                }
            }
            compression.sort_unstable();
            clusters.push(ClusterStats { id: c.id, first_entry: c.first_entry, entries: c.n_entries, bytes, compression });
        }
        let mut total = Bytes::default();
        columns.iter().for_each(|b| total.add(*b));
        let (fields, top_level_of) = field_sums(d, &columns);
        StorageStats { columns, fields, top_level_of, clusters, page_sizes, total, shared_pages, envelopes: a.map(|a| Envelopes::of(d, a)) }
    }

    /// Stored bytes of the pages as the file holds them: a shared page once.
    pub fn data_bytes(&self) -> u64 {
        self.total.stored.saturating_sub(self.shared_pages.1)
    }

    /// Metadata (header, footer, page lists: stored bytes) per byte of page data (`None` without
    /// an anchor or without data).
    pub fn metadata_ratio(&self) -> Option<f64> {
        let e = self.envelopes?;
        let data = self.data_bytes();
        (data > 0).then(|| e.stored() as f64 / data as f64)
    }

    /// Stored bytes per cluster of each of the top-level fields `chosen` (field ids), and of all
    /// other fields together (the last entry of each row): one row per cluster.
    pub fn cluster_bytes_of(&self, d: &Descriptor, chosen: &[u32]) -> Vec<Vec<u64>> {
        let other = chosen.len();
        let mut slot_of_field = vec![other; d.fields.len()];
        for (slot, &f) in chosen.iter().enumerate() {
            if let Some(s) = slot_of_field.get_mut(f as usize) {
                *s = slot;
            }
        }
        // The slot of every column: that of its field's top-level field.
        let slot_of_column: Vec<usize> = d
            .columns
            .iter()
            .map(|c| self.top_level_of.get(c.field_id as usize).and_then(|&t| slot_of_field.get(t as usize)).copied().unwrap_or(other))
            .collect();
        d.clusters
            .iter()
            .map(|c| {
                let mut row = vec![0u64; other + 1];
                for (range, &slot) in c.columns.iter().zip(&slot_of_column) {
                    for p in range.iter().filter(|r| !r.suppressed).flat_map(|r| &r.pages) {
                        row[slot] = row[slot].saturating_add(p.locator.size);
                    }
                }
                row
            })
            .collect()
    }
}

/// Per field: (own and total bytes, top-level field id). A field's parent precedes it (the
/// envelope parser checks it), so one pass forward finds the top-level fields and one pass back
/// sums the sub-fields; a parent that does not precede its field (a descriptor made by hand) is
/// treated as no parent.
fn field_sums(d: &Descriptor, columns: &[Bytes]) -> (Vec<FieldStats>, Vec<u32>) {
    let n = d.fields.len();
    let mut stats = vec![FieldStats::default(); n];
    for (c, b) in d.columns.iter().zip(columns) {
        if let Some(s) = stats.get_mut(c.field_id as usize) {
            s.own.add(*b);
        }
    }
    let parent_of = |i: usize| d.fields[i].parent.map(|p| p as usize).filter(|&p| p < i);
    let mut top: Vec<u32> = Vec::with_capacity(n);
    for (i, s) in stats.iter_mut().enumerate() {
        let t = match parent_of(i) {
            Some(p) => top[p],
            None => i as u32,
        };
        top.push(t);
        s.total = s.own;
    }
    for i in (0..n).rev() {
        if let Some(p) = parent_of(i) {
            let t = stats[i].total;
            stats[p].total.add(t);
        }
    }
    (stats, top)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::cursor::Locator;
    use crate::format::descriptor::{ClusterDescriptor, ColumnRange, FieldDescriptor, Role};

    fn field(id: u32, parent: Option<u32>) -> FieldDescriptor {
        FieldDescriptor {
            id,
            field_version: 0,
            type_version: 0,
            parent,
            role: Role::Leaf,
            flags: 0,
            name: format!("f{id}"),
            type_name: "float".into(),
            extras: None,
            repetition: None,
            projection_source: None,
            type_checksum: None,
            children: vec![],
            columns: vec![],
            from_extension: false,
        }
    }

    fn column(id: u32, field_id: u32, bits: u16) -> ColumnDescriptor {
        ColumnDescriptor {
            id,
            column_type: 0x18,
            bits_on_storage: bits,
            field_id,
            flags: 0,
            representation: 0,
            first_element: 0,
            suppressed_deferred: false,
            value_range: None,
            from_extension: false,
        }
    }

    fn page(n: u32, size: u64, offset: u64) -> PageDescriptor {
        PageDescriptor { n_elements: n, has_checksum: true, locator: Locator { size, offset }, first_in_cluster: 0 }
    }

    fn range(pages: Vec<PageDescriptor>, compression: u32) -> Option<ColumnRange> {
        Some(ColumnRange { first_element: 0, n_elements: pages.iter().map(|p| p.n_elements as u64).sum(), compression, suppressed: false, pages })
    }

    /// Fields 0 (top) > 1 > 2, and 3 (top); columns: 0 of field 0, 1 of field 2, 2 of field 3.
    fn descriptor() -> Descriptor {
        let mut d = Descriptor { fields: vec![field(0, None), field(1, Some(0)), field(2, Some(1)), field(3, None)], ..Default::default() };
        d.columns = vec![column(0, 0, 64), column(1, 2, 32), column(2, 3, 1)];
        d.clusters = vec![
            ClusterDescriptor {
                id: 0,
                first_entry: 0,
                n_entries: 10,
                columns: vec![range(vec![page(10, 30, 100)], 505), range(vec![page(20, 50, 200), page(5, 9, 300)], 505), range(vec![page(10, 1, 400)], 0)],
            },
            ClusterDescriptor {
                id: 1,
                first_entry: 10,
                n_entries: 4,
                // column 2's page shares the bytes of column 1's (same-page merging)
                columns: vec![range(vec![page(4, 12, 500)], 505), range(vec![page(8, 7, 600)], 505), range(vec![page(4, 7, 600)], 505)],
            },
        ];
        d
    }

    #[test]
    fn sums_by_column_field_and_cluster() {
        let d = descriptor();
        let s = StorageStats::of(&d, None);
        assert_eq!(s.columns[0], Bytes { stored: 42, uncompressed: 80 + 32, pages: 2 });
        assert_eq!(s.columns[1], Bytes { stored: 66, uncompressed: 80 + 20 + 32, pages: 3 });
        // 10 bits -> 2 bytes, 4 bits -> 1 byte
        assert_eq!(s.columns[2], Bytes { stored: 8, uncompressed: 3, pages: 2 });
        assert_eq!(s.fields[0].own, s.columns[0]);
        assert_eq!(s.fields[1].own, Bytes::default());
        assert_eq!(s.fields[1].total, s.columns[1]);
        assert_eq!(s.fields[0].total, Bytes { stored: 108, uncompressed: 244, pages: 5 });
        assert_eq!(s.fields[3].total, s.columns[2]);
        assert_eq!(s.top_level_of, [0, 0, 0, 3]);
        assert_eq!(s.total, Bytes { stored: 116, uncompressed: 247, pages: 7 });
        assert_eq!(s.clusters[0].bytes, Bytes { stored: 90, uncompressed: 80 + 80 + 20 + 2, pages: 4 });
        assert_eq!(s.clusters[0].compression, [0, 505]);
        assert_eq!((s.clusters[1].first_entry, s.clusters[1].entries, s.clusters[1].compression.clone()), (10, 4, vec![505]));
        assert_eq!(s.shared_pages, (1, 7));
        assert_eq!(s.data_bytes(), 109);
        assert_eq!(s.metadata_ratio(), None);
        assert_eq!(s.cluster_bytes_of(&d, &[3]), [vec![1, 89], vec![7, 19]]);
        assert_eq!(s.cluster_bytes_of(&d, &[]), [vec![90], vec![26]]);
    }

    #[test]
    fn envelopes_and_ratio() {
        let d = descriptor();
        let a = Anchor { nbytes_header: 10, len_header: 30, nbytes_footer: 5, len_footer: 8, ..Anchor::default() };
        let s = StorageStats::of(&d, Some(&a));
        let e = s.envelopes.unwrap();
        assert_eq!((e.header, e.footer, e.page_list_count), (Envelope { stored: 10, uncompressed: 30 }, Envelope { stored: 5, uncompressed: 8 }, 0));
        assert_eq!((e.stored(), e.uncompressed()), (15, 38));
        assert_eq!(s.metadata_ratio(), Some(15.0 / 109.0));
    }

    #[test]
    fn a_parent_after_its_field_is_no_parent() {
        let mut d = descriptor();
        d.fields[1].parent = Some(3);
        let s = StorageStats::of(&d, None);
        assert_eq!(s.top_level_of, [0, 1, 1, 3]);
        assert_eq!(s.fields[0].total, s.columns[0]);
    }

    #[test]
    fn wide_schemas_are_linear() {
        // 200,000 top-level fields of one column each, in 3 clusters: one pass each.
        let n = 200_000u32;
        let mut d = Descriptor { fields: (0..n).map(|i| field(i, None)).collect(), columns: (0..n).map(|i| column(i, i, 8)).collect(), ..Default::default() };
        d.clusters = (0..3)
            .map(|k| ClusterDescriptor { id: k, first_entry: k as u64, n_entries: 1, columns: (0..n).map(|i| range(vec![page(1, 1, (k as u64) << 20 | i as u64)], 505)).collect() })
            .collect();
        let s = StorageStats::of(&d, None);
        assert_eq!(s.total, Bytes { stored: 3 * n as u64, uncompressed: 3 * n as u64, pages: 3 * n as u64 });
        assert_eq!(s.cluster_bytes_of(&d, &[7]), vec![vec![1, n as u64 - 1]; 3]);
    }
}
