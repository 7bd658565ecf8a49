//! Rank 0's side of a distributed write: it creates the file and writes the RNTuple's header,
//! tells the ranks where to write and from which offset, and at the commit turns the gathered
//! lists of placed clusters into one RNTuple: clusters ordered by their file offset (so every
//! rank's clusters keep their order), entries numbered in that order, then page list, footer,
//! anchor and the TFile records.
//!
//! With checkpoints (`checkpoint_clusters` K > 0) the file is published at its creation with a
//! checkpoint of no entries, and rank 0 learns of clusters as soon as they are durable
//! ([`Assembler::add_durable`]); every K of them make a checkpoint
//! ([`Assembler::checkpoint`]): its page list, footer, anchor and the file's records go into a
//! range reserved through the ranks' own allocator, then the file header is rewritten (the
//! sequential writer's checkpoint). The commit appends the clusters not checkpointed yet.

use crate::error::{Error, Result};
use crate::format::descriptor::Descriptor;
use crate::write::distributed::rank::OffsetService;
use crate::write::distributed::wire::{decode_placed, PlacedCluster};
use crate::write::options::WriteOptions;
use crate::write::sink::Dataset;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// In which order a commit numbers the entries of the clusters gathered from the ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClusterOrder {
    /// By file offset: every rank's clusters keep their order, ranks interleave as they wrote.
    ByOffset,
    /// List by list, in the order the lists are given (each list's clusters by offset): the
    /// partitions of a data frame kept in their order, whenever each was written.
    ByList,
}

/// The RNTuple a distributed writer assembles on rank 0.
pub struct Assembler {
    ds: Dataset,
    writing_path: PathBuf,
    first: u64,
    /// Starts of the clusters appended already (reported durable), not to be appended again.
    appended: HashSet<u64>,
    /// Appended clusters not in a checkpoint yet.
    pending: usize,
    /// The end of the furthest range known: a checkpoint's, or a cluster's reported durable.
    reserved_end: u64,
    /// Checkpoints made (the one at creation included) and the entries of the last.
    checkpoints: u64,
    checkpointed_entries: u64,
}

impl Assembler {
    /// Creates the file at `path` (under a temporary name until the commit) with the header of
    /// `desc` (the descriptor every rank built from the schema), its end padded to `align`.
    pub fn create(path: impl AsRef<Path>, desc: Descriptor, opts: WriteOptions, align: u64) -> Result<Assembler> {
        // The ranks write the clusters themselves, direct I/O included: rank 0's file handle
        // writes only the header and the closing records.
        let opts = WriteOptions { use_direct_io: false, ..opts };
        if let Some(dest) = crate::storage::remote::remote_output::remote_destination(path.as_ref())? {
            return Err(Error::Unsupported(format!(
                "{}: the ranks of a distributed writer write one shared file: write it on a shared file system, then copy it",
                dest.url()
            )));
        }
        let mut ds = Dataset::create(path, desc, opts)?;
        let (writing_path, first) = ds.open_for_ranks(align)?;
        let checkpoints = ds.checkpoints();
        Ok(Assembler { ds, writing_path, first, appended: HashSet::new(), pending: 0, reserved_end: 0, checkpoints, checkpointed_entries: 0 })
    }

    /// Checkpoints: appends clusters a rank reports durable (on disk: written and synced), the
    /// encoded list of [`crate::write::distributed::wire::encode_placed`]; `from` names the
    /// sender in errors. Every context reports its clusters in order, so each keeps its order.
    pub fn add_durable(&mut self, list: &[u8], from: &str) -> Result<()> {
        let mut got = decode_placed(list, from)?;
        got.sort_by_key(|p| p.start);
        for p in got {
            if !self.appended.insert(p.start) {
                return Err(Error::Invalid(format!("{from}: the cluster at offset {} is reported twice", p.start)));
            }
            self.ds.append(&p.cluster, &[])?;
            self.pending += 1;
            self.reserved_end = self.reserved_end.max(p.start + p.reserved);
        }
        Ok(())
    }

    /// Clusters appended since the last checkpoint.
    pub fn pending(&self) -> usize {
        self.pending
    }

    /// Checkpoints made (with checkpoints on, the one at creation included) and the entries the
    /// last one holds.
    pub fn checkpoints(&self) -> (u64, u64) {
        (self.checkpoints, self.checkpointed_entries)
    }

    /// Makes a checkpoint of the clusters appended so far: its records go into a range of the
    /// file reserved through `svc` (the ranks' allocator, so no rank's cluster lands on them),
    /// each range aligned to `align`; then the header is rewritten and the file synced.
    pub fn checkpoint(&mut self, svc: &dyn OffsetService, align: u64) -> Result<()> {
        let len = self.ds.checkpoint_bound()?.next_multiple_of(align.max(1));
        let start = svc.reserve(len)?;
        self.ds.checkpoint_into(start, len)?;
        self.reserved_end = self.reserved_end.max(start + len);
        self.pending = 0;
        self.checkpoints += 1;
        self.checkpointed_entries = self.ds.n_entries;
        Ok(())
    }

    /// Where the ranks write until the commit (the temporary file).
    pub fn writing_path(&self) -> &Path {
        &self.writing_path
    }

    /// The offset from which the ranks place clusters (aligned).
    pub fn first_offset(&self) -> u64 {
        self.first
    }

    /// Commits the RNTuple from every rank's encoded list of placed clusters (index = rank; those
    /// appended already by [`Assembler::add_durable`] are skipped); returns the file size.
    /// Clusters are numbered in the order of their file offsets. Overlapping ranges (a broken
    /// reservation protocol) are refused.
    pub fn commit(self, lists: &[Vec<u8>]) -> Result<u64> {
        self.commit_with(lists, ClusterOrder::ByOffset, 0)
    }

    /// [`Assembler::commit`] with the clusters numbered in `order`, and the file's closing records
    /// written after `reserved_end` at the least: the end of every range the offset service handed
    /// out, those of writers that died before they reported included, so that none of their late
    /// writes can land on the records.
    pub fn commit_with(mut self, lists: &[Vec<u8>], order: ClusterOrder, reserved_end: u64) -> Result<u64> {
        let r = (|| {
            let mut all: Vec<PlacedCluster> = Vec::new();
            for (rank, b) in lists.iter().enumerate() {
                let mut list = decode_placed(b, &format!("the cluster list of rank {rank}"))?;
                list.retain(|p| !self.appended.contains(&p.start));
                // Each list in its own order (a context's clusters are placed in filling order).
                list.sort_by_key(|p| p.start);
                all.extend(list);
            }
            let mut ranges: Vec<(u64, u64)> = all.iter().map(|p| (p.start, p.reserved)).collect();
            ranges.sort_unstable();
            let mut end = self.first.max(self.reserved_end).max(reserved_end);
            let mut prev = self.first;
            for (start, reserved) in ranges {
                if start < prev {
                    return Err(Error::Internal(format!("clusters overlap at offset {start} (the previous range ends at {prev})")));
                }
                prev = start + reserved;
                end = end.max(prev);
            }
            if order == ClusterOrder::ByOffset {
                all.sort_by_key(|p| p.start);
            }
            for p in &all {
                self.ds.append(&p.cluster, &[])?;
            }
            self.ds.advance_end(end)
        })();
        if let Err(e) = r {
            self.ds.fail(&e.to_string());
            return Err(e);
        }
        self.ds.commit()
    }

    /// Gives up: the temporary file is removed, nothing is left at the path (with checkpoints,
    /// the file stays as its last checkpoint left it).
    pub fn abort(mut self, why: &str) {
        self.ds.fail(why);
    }
}
