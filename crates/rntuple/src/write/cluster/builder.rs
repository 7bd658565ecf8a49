//! The cluster builder, as ROOT's `RNTupleFillContext`: it holds the fields' plans and the
//! columns of the current cluster, and decides when a cluster is full (ROOT's flush rule). It knows
//! nothing about files: a full cluster leaves it as a [`SealedCluster`] for its [`ClusterOut`].
//! Values come in through the three fill paths, each an `impl` block of its own that this file
//! does not know: dynamic values (`write::fill::fill_value`), Arrow batches (`fill_arrow`) and typed
//! Rust values (`fill_typed`).

use crate::error::{Error, Result};
use crate::format::descriptor::Descriptor;
use crate::logical::typename::{parse, TypeExpr};
use crate::write::cluster::columns::{Column, Columns};
use crate::write::cluster::plan::{check_field_name, plan_field, plan_schema, streamed_classes, Origin, Plan};
use crate::write::cluster::sealed::{ClusterOut, SealedCluster};
use crate::write::options::WriteOptions;

/// Fills the columns of one cluster at a time and hands full clusters to its output.
pub(crate) struct ClusterBuilder<O: ClusterOut> {
    pub(crate) opts: WriteOptions,
    pub(crate) plans: Vec<(String, Plan)>,
    /// Elements per plan node in the current cluster.
    pub(crate) counts: Vec<u64>,
    pub(crate) cols: Columns,
    /// Entries in the current cluster.
    pub(crate) entries: u64,
    /// Entries filled since creation.
    pub filled: u64,
    /// Clusters handed to the output.
    pub clusters: u64,
    /// The schema as types, for checking typed entries.
    pub(crate) exprs: Vec<(String, TypeExpr)>,
    /// The plans of the top-level fields (for typed entries).
    pub(crate) top_plans: Vec<Plan>,
    /// The Rust entry type last checked against the schema.
    pub(crate) typed_ok: Option<std::any::TypeId>,
    /// Uncompressed bytes per entry of the last batch slice (how a batch is sliced to honour the
    /// cluster size: `fill_arrow`).
    pub(crate) entry_bytes: Option<f64>,
    pub out: O,
}

impl<O: ClusterOut> ClusterBuilder<O> {
    /// A builder for `schema`, whose fields and columns are appended to `desc`.
    pub fn new(desc: &mut Descriptor, schema: &[(String, TypeExpr)], opts: WriteOptions, out: O) -> Result<Self> {
        let compressed = !opts.compression.is_none();
        let (first_field, first_column) = (desc.fields.len(), desc.columns.len());
        // Records where ROOT needs a type name become classes; typed entries are checked against the
        // schema as given.
        let named: Vec<(String, TypeExpr)> = schema.iter().map(|(n, t)| (n.clone(), crate::logical::record_classes::name_records(t, n))).collect();
        let (plans, mut cols, n_counters) = plan_schema(desc, &named, compressed, opts.columns.streamer_fields())?;
        crate::write::streamer::streamed_fields::check_marked(desc, first_field, opts.columns.streamer_fields())?;
        crate::write::streamer::streamed_fields::record_classes(desc, &streamed_classes(&plans))?;
        crate::write::cluster::reduced::apply_column_options(desc, &mut cols, first_field, first_column, &opts.columns)?;
        crate::write::projections::add_projections(desc, &opts.projections)?;
        Ok(Self::assemble(opts, plans, cols, n_counters, schema.to_vec(), out))
    }

    fn assemble(opts: WriteOptions, plans: Vec<(String, Plan)>, cols: Vec<Column>, n_counters: usize, exprs: Vec<(String, TypeExpr)>, out: O) -> Self {
        let cols = Columns::new(cols, &opts, out.pages_as_they_fill(), !out.is_template());
        ClusterBuilder {
            opts,
            top_plans: plans.iter().map(|(_, p)| p.clone()).collect(),
            plans,
            counts: vec![0; n_counters],
            cols,
            entries: 0,
            filled: 0,
            clusters: 0,
            exprs,
            typed_ok: None,
            entry_bytes: None,
            out,
        }
    }

    /// An empty builder for the same schema with another output and options (fill contexts).
    pub fn blank<P: ClusterOut>(&self, opts: WriteOptions, out: P) -> ClusterBuilder<P> {
        ClusterBuilder::assemble(opts, self.plans.clone(), self.cols.blank(), self.counts.len(), self.exprs.clone(), out)
    }

    /// Keeps page buffers for the next pages (those of a cluster written after it left the
    /// builder, or of an ended fill context), up to a cluster's worth of memory.
    pub fn recycle(&mut self, bufs: impl IntoIterator<Item = Vec<u8>>) {
        for b in bufs {
            self.cols.recycle(b);
        }
    }

    /// Frees the builder's buffers (see [`Columns::release_buffers`]): after its last cluster.
    pub fn release_buffers(&mut self) {
        self.cols.release_buffers()
    }

    /// Takes the builder's pooled page buffers.
    pub fn take_pool(&mut self) -> Vec<Vec<u8>> {
        self.cols.take_pool()
    }

    /// Seconds spent compressing (and checksumming) pages.
    pub fn compress_seconds(&self) -> f64 {
        self.cols.compress_seconds
    }

    /// Late model extension: adds a top-level field (see `Writer::add_field`); `entries_before`
    /// is the number of entries of the dataset before the current cluster's first.
    pub fn add_field(&mut self, desc: &mut Descriptor, name: &str, type_name: &str, entries_before: u64) -> Result<()> {
        check_field_name(name)?;
        if self.plans.iter().any(|(n, _)| n == name) {
            return Err(Error::Invalid(format!("field '{name}' exists already")));
        }
        let te = parse(type_name).map_err(|e| Error::Invalid(format!("field '{name}': {e}")))?;
        let compressed = !self.opts.compression.is_none();
        let mut n_counters = self.counts.len();
        // Elements already in the current cluster are implicit too: the new columns' pages in this
        // cluster start after them.
        let streamed = self.opts.columns.streamer_fields().to_vec();
        let origin = Origin { ext: Some(entries_before + self.entries), mult: Some(1), streamed: &streamed };
        let first_field = desc.fields.len();
        let plan = plan_field(desc, &mut self.cols.cols, &mut n_counters, None, name, &te, compressed, origin)?;
        if streamed.contains(&name.to_string()) {
            crate::write::streamer::streamed_fields::check_marked(desc, first_field, &[name.to_string()])?;
        }
        self.counts.resize(n_counters, 0);
        self.plans.push((name.to_string(), plan));
        crate::write::streamer::streamed_fields::record_classes(desc, &streamed_classes(&self.plans))?;
        self.exprs.push((name.to_string(), te));
        self.top_plans = self.plans.iter().map(|(_, p)| p.clone()).collect();
        self.typed_ok = None;
        Ok(())
    }

    /// Counts `n` entries filled into the current cluster and flushes it when it is full.
    pub(crate) fn entries_filled(&mut self, n: u64) -> Result<()> {
        self.entries += n;
        self.filled += n;
        self.maybe_flush()
    }

    /// ROOT's cluster flush rule: the uncompressed cluster reaches the maximum, or the target
    /// compressed size divided by the compression ratio seen so far (0.5 before any page).
    fn maybe_flush(&mut self) -> Result<()> {
        if self.cluster_fill() >= 1.0 {
            self.flush_cluster()?;
        }
        Ok(())
    }

    /// How full the current cluster is: its uncompressed bytes over the size at which
    /// [`ClusterBuilder::maybe_flush`] flushes it (1.0 and above: full).
    pub(crate) fn cluster_fill(&self) -> f64 {
        let (held, limit) = self.cluster_budget();
        held / limit
    }

    /// The uncompressed bytes the current cluster holds and the size at which it is flushed.
    pub(crate) fn cluster_budget(&self) -> (f64, f64) {
        // Uncompressed data has a ratio of 1 (as in ROOT, whose first uncompressed cluster closes at
        // the target size); otherwise 0.5 until pages were compressed, then the average so far.
        let ratio = if self.opts.compression.is_none() {
            1.0
        } else if self.cols.unzipped_total > 0 {
            self.cols.zipped_total as f64 / self.cols.unzipped_total as f64
        } else {
            0.5
        };
        let est = (self.opts.approx_zipped_cluster_size as f64 / ratio.max(1e-6)).min(self.opts.max_unzipped_cluster_size as f64);
        ((self.cols.unzipped_in_cluster / 8) as f64, est.max(1.0))
    }

    /// Seals the current cluster and hands it to the output; a cluster without entries is
    /// skipped.
    pub fn flush_cluster(&mut self) -> Result<()> {
        if self.entries == 0 {
            return Ok(());
        }
        let (columns, chunks) = self.cols.take_cluster(&mut self.out)?;
        let mut sealed = SealedCluster {
            n_entries: self.entries,
            chunks,
            columns,
            compression: self.opts.compression.settings(),
            checksums: self.opts.enable_page_checksums,
        };
        if self.opts.same_page_merging {
            let dropped = sealed.merge_same_pages();
            // As ROOT's estimate of the compression factor, from the bytes written: pages stored
            // once count once.
            let saved: u64 = dropped.iter().map(|b| b.len().saturating_sub(8) as u64).sum();
            self.cols.zipped_total = self.cols.zipped_total.saturating_sub(saved);
            self.recycle(dropped);
        }
        self.entries = 0;
        self.counts.iter_mut().for_each(|c| *c = 0);
        self.clusters += 1;
        let r = self.out.cluster(&mut sealed);
        self.recycle(sealed.chunks);
        r
    }
}
