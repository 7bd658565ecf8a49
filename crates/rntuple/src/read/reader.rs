//! The RNTuple reader: opens an anchor, loads header, footer and page lists, and reads fields
//! over entry ranges into Apache Arrow arrays, touching only the needed columns and clusters.
//!
//! This file holds the accessors, the read-ahead settings (kept by the page source) and the
//! public entry points (field resolution, entry spans, [`Reader::read_batch`]); the stages below
//! are `pool::page_source` (page lookup and loading, read-ahead, each read's plan), `open` (the
//! [`Reader`] struct, descriptor loading), `decode::columns` (column decoding) and
//! `arrow::assemble` (Arrow assembly). ROOT's counterpart: `RNTupleReader`.

pub use super::open::Reader;
pub(crate) use super::pool::page_source::ReadStats;

use super::pool::cluster_pool::ReadAhead;
use super::pool::read_plan::{ReadPlan, Span};
use crate::error::{Error, Result};
use crate::format::anchor::Anchor;
use crate::format::descriptor::{Descriptor, FieldDescriptor};
use crate::logical::kind::Kind;
use crate::primitives::column_type::ColumnType;
use crate::primitives::decode::ColumnCodec;
use crate::storage::local::source::ReadAt;
use arrow_array::{Array, ArrayRef, RecordBatch, RecordBatchOptions};
use arrow_schema::{DataType, Field, Schema};
use std::sync::Arc;

impl Reader {
    /// Sets the number of threads used for decoding (1 = single-threaded).
    pub fn set_threads(&mut self, n: usize) {
        self.threads = n.max(1);
    }

    /// The bytes of the file (for copying stored pages, as the merge does).
    pub(crate) fn source(&self) -> &Arc<dyn ReadAt> {
        &self.page_source.src
    }

    /// Sets how far reads load pages ahead of decoding (see [`ReadAhead`]). From sources with a
    /// latency per request (HTTP, S3, file objects) the pages are loaded into memory by a
    /// background thread. So are the pages of a local file when a read is cold (its first
    /// wanted bytes are not in the page cache) and decodes all its fields at once (no more
    /// top-level fields than decoding threads): the read's own clusters, held until the next
    /// read. Other reads of local files read each page when it is decoded, and with
    /// [`ReadAhead::local`] the kernel is asked to read the clusters after a read's own into its
    /// page cache (`posix_fadvise(WILLNEED)`).
    pub fn set_read_ahead(&mut self, read_ahead: ReadAhead) {
        self.page_source.set_read_ahead(read_ahead);
    }

    /// Declares that several threads will read different entries through this reader at once
    /// (a skim's parts): the cluster pool holds the clusters of one read at a time, so reads of
    /// a local file then go page by page instead of through the pool.
    pub fn share_between_threads(&mut self) {
        self.page_source.share_between_threads();
    }

    /// The read-ahead settings.
    pub fn read_ahead(&self) -> ReadAhead {
        self.page_source.read_ahead()
    }

    /// Most bytes the read-ahead held at once so far.
    pub fn read_ahead_peak_bytes(&self) -> u64 {
        self.page_source.read_ahead_peak_bytes()
    }

    /// The anchor.
    pub fn anchor(&self) -> &Anchor {
        &self.anchor
    }
    /// The descriptor (schema, clusters, pages).
    pub fn descriptor(&self) -> &Descriptor {
        &self.desc
    }
    /// Number of entries.
    pub fn num_entries(&self) -> u64 {
        self.desc.num_entries()
    }
    /// I/O statistics since opening.
    pub fn stats(&self) -> &ReadStats {
        &self.page_source.stats
    }
    /// `(requests, bytes)` the file's byte source served so far (all readers of the file
    /// together), when the source counts them (local files, HTTP, S3 do).
    pub fn io_counts(&self) -> Option<(u64, u64)> {
        self.page_source.src.counters().map(|c| c.get())
    }
    /// Turns page checksum verification on or off (on by default).
    pub fn set_verify_page_checksums(&mut self, on: bool) {
        self.page_source.verify_page_checksums = on;
    }
    /// The kind of a field, or why it cannot be read.
    pub fn kind(&self, field: u32) -> std::result::Result<&Kind, &str> {
        match &self.kinds[field as usize] {
            Ok(k) => Ok(k),
            Err(e) => Err(e),
        }
    }
    /// Whether the field and all its subfields can be read.
    pub fn is_readable(&self, field: u32) -> bool {
        self.readable[field as usize]
    }

    /// Top-level fields that can be read, in schema order (ROOT ignores top-level fields with
    /// unknown column types or roles; so do we).
    pub fn fields(&self) -> Vec<&FieldDescriptor> {
        self.desc.top_level_fields().into_iter().filter(|&f| self.readable[f as usize]).map(|f| &self.desc.fields[f as usize]).collect()
    }

    /// Top-level fields that are skipped, with the reason.
    pub fn skipped_fields(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for f in self.desc.top_level_fields() {
            if !self.readable[f as usize] {
                out.push((self.desc.fields[f as usize].name.clone(), self.first_problem(f)));
            }
        }
        out
    }

    fn first_problem(&self, f: u32) -> String {
        if let Err(e) = &self.kinds[f as usize] {
            return e.clone();
        }
        for &c in &self.desc.fields[f as usize].children {
            if !self.readable[c as usize] {
                return self.first_problem(c);
            }
        }
        // Its own columns, and those a projected field reads through its alias columns.
        let aliased = self.desc.aliases.iter().filter(|a| a.field_id == f).map(|a| a.physical);
        for c in self.desc.fields[f as usize].columns.iter().copied().chain(aliased) {
            let Some(col) = self.desc.columns.get(c as usize) else { continue };
            if let Some(ct) = ColumnType::from_u16(col.column_type)
                && let Err(e) = (ColumnCodec { ty: ct, bits: col.bits_on_storage, range: col.value_range }).validate()
            {
                return e.to_string();
            }
        }
        "unreadable".into()
    }

    /// Full type name of a field for display: the type name, or a description for untyped fields.
    pub fn display_type(&self, field: u32) -> String {
        let f = &self.desc.fields[field as usize];
        if !f.type_name.is_empty() {
            return f.type_name.clone();
        }
        match f.role {
            crate::format::descriptor::Role::Record => "(untyped record)".into(),
            crate::format::descriptor::Role::Collection => "(untyped collection)".into(),
            _ => String::new(),
        }
    }

    /// The id of the top-level field `name` (the first of that name).
    pub(super) fn top_field_id(&self, name: &str) -> Option<u32> {
        let fields = &self.desc.fields;
        let i = self.top_by_name.partition_point(|&id| fields[id as usize].name.as_str() < name);
        self.top_by_name.get(i).copied().filter(|&id| fields[id as usize].name == name)
    }

    pub(super) fn resolve_fields(&self, fields: Option<&[&str]>) -> Result<Vec<u32>> {
        match fields {
            None => Ok(self.fields().iter().map(|f| f.id).collect()),
            Some(names) => names
                .iter()
                .map(|n| {
                    let id = self.top_field_id(n).ok_or_else(|| {
                        let all: Vec<&str> = self.fields().iter().map(|f| f.name.as_str()).collect();
                        Error::NotFound(format!("no top-level field '{n}' in RNTuple '{}' (fields: {})", self.desc.name, all.join(", ")))
                    })?;
                    if !self.readable[id as usize] {
                        return Err(Error::Unsupported(format!("field '{n}' cannot be read: {}", self.first_problem(id))));
                    }
                    Ok(id)
                })
                .collect(),
        }
    }

    fn spans(&self, start: u64, stop: u64) -> Result<Vec<Span>> {
        let n = self.num_entries();
        if start > stop || stop > n {
            return Err(Error::Invalid(format!("entry range {start}:{stop} outside 0:{n}")));
        }
        let mut out = Vec::new();
        let first = self.desc.clusters.partition_point(|c| c.first_entry + c.n_entries <= start);
        for (i, c) in self.desc.clusters.iter().enumerate().skip(first) {
            if c.first_entry >= stop {
                break;
            }
            let s = start.max(c.first_entry) - c.first_entry;
            let e = stop.min(c.first_entry + c.n_entries) - c.first_entry;
            if e > s {
                out.push(Span { cluster: i, start: s, end: e });
            }
        }
        Ok(out)
    }

    /// Reads the chosen top-level fields (all readable fields when `None`) of entries
    /// `start..stop` into an Arrow record batch, one column per field.
    /// Streamer fields come as structs of their class's members where the file's StreamerInfo
    /// records describe the class ([`Reader::streamer_objects`]), else as the bytes of each entry.
    pub fn read_batch(&self, fields: Option<&[&str]>, start: u64, stop: u64) -> Result<RecordBatch> {
        self.read_batch_as(fields, start, stop, self.streamer_objects_on())
    }

    /// [`Reader::read_batch`], streamer fields as objects (`objects`) or as raw bytes.
    pub(crate) fn read_batch_as(&self, fields: Option<&[&str]>, start: u64, stop: u64, objects: bool) -> Result<RecordBatch> {
        self.read_ranges_as(fields, &[(start, stop)], objects)
    }

    /// [`Reader::read_batch`] of the entries of several ranges (ascending, not overlapping), one
    /// after the other in one batch: one read, of the clusters the ranges touch only (a selected
    /// read skips the clusters where no entry passes, `ops::read_selected`).
    pub(crate) fn read_batch_ranges(&self, fields: Option<&[&str]>, ranges: &[(u64, u64)]) -> Result<RecordBatch> {
        self.read_ranges_as(fields, ranges, self.streamer_objects_on())
    }

    fn read_ranges_as(&self, fields: Option<&[&str]>, ranges: &[(u64, u64)], objects: bool) -> Result<RecordBatch> {
        let ids = self.resolve_fields(fields)?;
        let mut spans = Vec::new();
        let mut rows = 0u64;
        let mut previous = 0u64;
        for (k, &(start, stop)) in ranges.iter().enumerate() {
            if k > 0 && start < previous {
                return Err(Error::Invalid(format!("entry range {start}:{stop} starts before the end of the one before it, {previous}")));
            }
            spans.extend(self.spans(start, stop)?);
            rows += stop - start;
            previous = stop;
        }
        if let (Some(&(start, _)), Some(&(_, stop))) = (ranges.first(), ranges.last()) {
            self.check_zero_fill(&ids, start, stop)?;
        }
        let plan = self.prefetch(&ids, &spans)?;
        let arrays: Vec<ArrayRef> = self.read_fields_as(&plan, &ids, &spans, objects)?;
        let schema_fields: Vec<Field> = ids
            .iter()
            .zip(&arrays)
            .map(|(&id, a)| {
                Field::new(
                    self.desc.fields[id as usize].name.clone(),
                    a.data_type().clone(),
                    a.logical_null_count() > 0 || a.data_type() == &DataType::Null || self.nullable(id),
                )
            })
            .collect();
        let schema = Arc::new(Schema::new(schema_fields));
        let opts = RecordBatchOptions::new().with_row_count(Some(rows as usize));
        Ok(RecordBatch::try_new_with_options(schema, arrays, &opts)?)
    }

    /// The plan of a read of the top-level fields `ids` over `spans` (whether it takes its pages
    /// from the cluster pool, see [`Reader::set_read_ahead`]), with the pool handed the clusters it
    /// loads for it.
    pub(super) fn prefetch(&self, ids: &[u32], spans: &[Span]) -> Result<ReadPlan> {
        self.page_source.prefetch(&self.desc, ids, spans, self.threads)
    }
}
