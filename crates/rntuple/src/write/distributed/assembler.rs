//! Rank 0's side of a distributed write: it creates the file and writes the RNTuple's header,
//! tells the ranks where to write and from which offset, and at the commit turns the gathered
//! lists of placed clusters into one RNTuple: clusters ordered by their file offset (so every
//! rank's clusters keep their order), entries numbered in that order, then page list, footer,
//! anchor and the TFile records.

use crate::error::{Error, Result};
use crate::format::descriptor::Descriptor;
use crate::write::distributed::wire::{decode_placed, PlacedCluster};
use crate::write::options::WriteOptions;
use crate::write::sink::Dataset;
use std::path::{Path, PathBuf};

/// The RNTuple a distributed writer assembles on rank 0.
pub struct Assembler {
    ds: Dataset,
    writing_path: PathBuf,
    first: u64,
}

impl Assembler {
    /// Creates the file at `path` (under a temporary name until the commit) with the header of
    /// `desc` (the descriptor every rank built from the schema), its end padded to `align`.
    pub fn create(path: impl AsRef<Path>, desc: Descriptor, opts: WriteOptions, align: u64) -> Result<Assembler> {
        // The ranks write the clusters themselves, direct I/O included: rank 0's file handle
        // writes only the header and the closing records.
        let opts = WriteOptions { use_direct_io: false, ..opts };
        let mut ds = Dataset::create(path, desc, opts)?;
        let (writing_path, first) = ds.open_for_ranks(align)?;
        Ok(Assembler { ds, writing_path, first })
    }

    /// Where the ranks write until the commit (the temporary file).
    pub fn writing_path(&self) -> &Path {
        &self.writing_path
    }

    /// The offset from which the ranks place clusters (aligned).
    pub fn first_offset(&self) -> u64 {
        self.first
    }

    /// Commits the RNTuple from every rank's encoded list of placed clusters (index = rank);
    /// returns the file size. Overlapping ranges (a broken reservation protocol) are refused.
    pub fn commit(mut self, lists: &[Vec<u8>]) -> Result<u64> {
        let r = (|| {
            let mut all: Vec<PlacedCluster> = Vec::new();
            for (rank, b) in lists.iter().enumerate() {
                all.extend(decode_placed(b, &format!("the cluster list of rank {rank}"))?);
            }
            all.sort_by_key(|p| p.start);
            let mut end = self.first;
            for p in &all {
                if p.start < end {
                    return Err(Error::Internal(format!("clusters overlap at offset {} (the previous range ends at {end})", p.start)));
                }
                self.ds.append(&p.cluster, &[])?;
                end = p.start + p.reserved;
            }
            self.ds.advance_end(end)
        })();
        if let Err(e) = r {
            self.ds.fail(&e.to_string());
            return Err(e);
        }
        self.ds.commit()
    }

    /// Gives up: the temporary file is removed, nothing is left at the path.
    pub fn abort(mut self, why: &str) {
        self.ds.fail(why);
    }
}
