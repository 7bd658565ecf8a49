//! Bounds on default values: the zeros a read fills in for columns without stored data (deferred
//! columns before their first element, columns added late that a cluster does not list). No stored
//! byte backs them, so a file of 1 KiB could declare one entry of `std::array<float, 2^28>` over a
//! deferred column (1 GiB of zeros) or 10^5 such fields over 10^5 clusters. Before anything is
//! read, one entry of a field may hold at most [`MAX_DEFAULT_ENTRY_BYTES`] of them and one read at
//! most [`Reader::zero_fill_limit`]; beyond, the read is an error naming the field and the size.

use super::decode::columns::MAX_ZERO_FILL_BYTES;
use super::open::Reader;
use crate::error::{Error, Result};
use crate::format::budget::{human, memory_limit};
use crate::format::descriptor::{Role, COLUMN_FLAG_DEFERRED};

/// Most bytes of default values one entry of a field may hold (1 MiB: a `std::array<float, 2^18>`
/// added late). Each value costs its consumer far more than its bytes (a JSON number, a dynamic
/// value of 32 bytes, a Python object), so the bound is per entry, which no read can split.
pub const MAX_DEFAULT_ENTRY_BYTES: u64 = 1 << 20;

/// Bytes of default values one read may always fill, whatever the file's size.
pub const ZERO_FILL_FLOOR: u64 = 64 << 20;

/// A column of a read that may lack stored data: its top-level field, id, elements per entry.
struct Unbacked {
    top: u32,
    column: usize,
    per_entry: u64,
}

impl Reader {
    /// The most bytes of default values one read may fill: what the file can back (its size, at
    /// least 64 MiB), within 1 GiB and the memory limit ([`crate::set_memory_limit`]).
    pub fn zero_fill_limit(&self) -> u64 {
        let backed = ZERO_FILL_FLOOR.max(self.page_source.src.len());
        backed.min(MAX_ZERO_FILL_BYTES).min(memory_limit().unwrap_or(u64::MAX))
    }

    /// Refuses, before anything is read, a read of entries `start..stop` of the top-level fields
    /// `ids` whose columns without stored data (outside any collection: there the counts come
    /// from stored offsets) would fill more than [`MAX_DEFAULT_ENTRY_BYTES`] in one entry of a
    /// field or more than [`Reader::zero_fill_limit`] in all. Linear in the read's columns, then (when
    /// they might exceed a limit) in the (cluster, column) pairs of the range that are listed or
    /// whose zeros stay within the limit: never in fields times clusters that no byte backs.
    pub(crate) fn check_zero_fill(&self, ids: &[u32], start: u64, stop: u64) -> Result<()> {
        let cols = self.unbacked_columns(ids);
        if cols.is_empty() || stop <= start {
            return Ok(());
        }
        let d = &self.desc;
        let limit = self.zero_fill_limit();
        // Every column without data anywhere in the range: within the limits, nothing to count.
        let most = cols.iter().fold(0u64, |t, u| t.saturating_add((stop - start).saturating_mul(u.per_entry).saturating_mul(width(d, u.column))));
        let largest_entry = cols.iter().map(|u| u.per_entry.saturating_mul(width(d, u.column))).max().unwrap_or(0);
        if most <= limit && largest_entry <= MAX_DEFAULT_ENTRY_BYTES {
            return Ok(());
        }
        let listed = self.listed_entries(&cols, start, stop, limit);
        let mut total = 0u64;
        let mut largest = (0u64, 0u32);
        let mut per_top = 0u64;
        for (i, u) in cols.iter().enumerate() {
            let col = &d.columns[u.column];
            let width = width(d, u.column);
            let before_first = if col.flags & COLUMN_FLAG_DEFERRED != 0 {
                stop.saturating_mul(u.per_entry).min(col.first_element).saturating_sub(start.saturating_mul(u.per_entry))
            } else {
                0
            };
            let unlisted = (stop - start).saturating_sub(listed[i]).saturating_mul(u.per_entry);
            let zeros = before_first.max(unlisted);
            if zeros == 0 {
                continue;
            }
            let entry_bytes = u.per_entry.saturating_mul(width);
            if entry_bytes > MAX_DEFAULT_ENTRY_BYTES {
                return Err(Error::Unsupported(format!(
                    "field '{}': one entry holds {} default values of column {} ({}) that no stored byte backs (a deferred column or one \
                     added late), more than the {} one entry may hold",
                    d.field_path(col.field_id),
                    u.per_entry,
                    u.column,
                    human(entry_bytes),
                    human(MAX_DEFAULT_ENTRY_BYTES)
                )));
            }
            let bytes = zeros.saturating_mul(width);
            total = total.saturating_add(bytes);
            per_top = if i > 0 && cols[i - 1].top == u.top { per_top.saturating_add(bytes) } else { bytes };
            largest = largest.max((per_top, u.top));
        }
        if total > limit {
            return Err(Error::Unsupported(format!(
                "reading entries {start}..{stop} of {} field(s) would fill {} with default values (deferred columns or columns added late, \
                 without stored data; field '{}' alone {}), more than the {} one read may fill (the file's size, at least {}); read fewer \
                 entries or fields",
                ids.len(),
                human(total),
                d.fields[largest.1 as usize].name,
                human(largest.0),
                human(limit),
                human(ZERO_FILL_FLOOR)
            )));
        }
        Ok(())
    }

    /// The columns of the top-level fields `ids` outside any collection that may lack stored data
    /// (deferred or added late), grouped by field, with their elements per entry.
    fn unbacked_columns(&self, ids: &[u32]) -> Vec<Unbacked> {
        let d = &self.desc;
        let mut out = Vec::new();
        for &top in ids {
            // Elements per entry saturate: an extent product beyond 2^64 is beyond any bound.
            let mut stack = vec![(top, 1u64)];
            while let Some((fid, per_entry)) = stack.pop() {
                let Some(f) = d.fields.get(fid as usize) else { continue };
                let m = per_entry.saturating_mul(f.repetition.unwrap_or(1));
                for &c in &f.columns {
                    if d.columns.get(c as usize).is_some_and(|col| col.flags & COLUMN_FLAG_DEFERRED != 0 || col.from_extension) {
                        out.push(Unbacked { top, column: c as usize, per_entry: m });
                    }
                }
                if !matches!(f.role, Role::Collection | Role::Variant) {
                    stack.extend(f.children.iter().map(|&c| (c, m)));
                }
            }
        }
        out
    }

    /// Per column of `cols`: the entries of `start..stop` in clusters that list it. Each (cluster,
    /// column) pair looked at is listed (backed by the page list) or adds its zeros to a sum that
    /// ends the count once past `limit` (the read is refused then whatever the rest lists).
    fn listed_entries(&self, cols: &[Unbacked], start: u64, stop: u64, limit: u64) -> Vec<u64> {
        let d = &self.desc;
        let mut listed = vec![0u64; cols.len()];
        let mut unlisted = 0u64;
        let first = d.clusters.partition_point(|c| c.first_entry.saturating_add(c.n_entries) <= start);
        for c in d.clusters.iter().skip(first) {
            if c.first_entry >= stop || unlisted > limit {
                break;
            }
            let n = stop.min(c.first_entry.saturating_add(c.n_entries)).saturating_sub(start.max(c.first_entry));
            if n == 0 {
                continue;
            }
            for (i, u) in cols.iter().enumerate() {
                if c.columns.get(u.column).is_some_and(Option::is_some) {
                    listed[i] = listed[i].saturating_add(n);
                } else {
                    unlisted = unlisted.saturating_add(n.saturating_mul(u.per_entry).saturating_mul(width(d, u.column)));
                }
            }
        }
        listed
    }
}

/// Bytes per element of column `c` as read (at least one: bits are read as bytes).
fn width(d: &crate::format::descriptor::Descriptor, c: usize) -> u64 {
    d.columns.get(c).map_or(1, |col| u64::from(col.bits_on_storage).div_ceil(8).max(1))
}
