//! The sealed cluster: the relocatable currency of every writer, of merge and of skim. A cluster
//! leaves its builder compressed and complete; its page positions are chunk indices relative to
//! the cluster's own blob and its collection offsets are cluster-local, so it can be placed
//! anywhere in the file. Where it goes is the business of its [`ClusterOut`]: the sequential
//! writer's dataset sink, or a fill context of the parallel writer.

use crate::error::{Error, Result};
use crate::format::cursor::Locator;
use crate::format::descriptor::{ClusterDescriptor, ColumnRange, PageDescriptor};

/// Where a sealed page is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PagePosition {
    /// The index of its chunk in the cluster's [`SealedCluster::chunks`] (not placed yet).
    Chunk(usize),
    /// Written already (unbuffered mode) at this absolute file offset.
    FileOffset(u64),
}

/// A page ready to be placed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SealedPage {
    pub n_elements: u32,
    /// Stored size without the checksum.
    pub stored: u64,
    pub position: PagePosition,
}

/// The pages of one column in a sealed cluster.
#[derive(Debug, Clone)]
pub(crate) struct SealedColumn {
    pub n_elements: u64,
    pub pages: Vec<SealedPage>,
}

/// A complete, compressed cluster.
#[derive(Debug, Default)]
pub(crate) struct SealedCluster {
    pub n_entries: u64,
    /// The sealed pages in file order (column by column), written back to back after the key
    /// header in one vectored write; empty when the pages were written already (unbuffered).
    pub chunks: Vec<Vec<u8>>,
    pub columns: Vec<SealedColumn>,
    pub compression: u32,
    pub checksums: bool,
}

impl SealedCluster {
    /// Whether the cluster's pages still wait to be placed (all positioned by chunk), as opposed
    /// to written already, one by one, by an unbuffered builder.
    pub fn is_relocatable(&self) -> bool {
        self.columns.iter().flat_map(|c| &c.pages).all(|p| matches!(p.position, PagePosition::Chunk(_)))
    }

    /// Bytes of each chunk (sealed page), in file order.
    pub fn chunk_lens(&self) -> Vec<u64> {
        self.chunks.iter().map(|c| c.len() as u64).collect()
    }

    /// The cluster's descriptor once placed: its first entry and the first element of each
    /// column in the whole dataset, and the file offset of each chunk.
    pub fn describe(&self, id: usize, first_entry: u64, first_elements: &[u64], chunk_offsets: &[u64]) -> Result<ClusterDescriptor> {
        let mut columns = Vec::with_capacity(self.columns.len());
        for (c, &first) in self.columns.iter().zip(first_elements) {
            let mut in_cluster = 0u64;
            let mut pages = Vec::with_capacity(c.pages.len());
            for p in &c.pages {
                let offset = match p.position {
                    PagePosition::Chunk(i) => *chunk_offsets
                        .get(i)
                        .ok_or_else(|| Error::Internal(format!("page in chunk {i} of a cluster placed as {} chunks", chunk_offsets.len())))?,
                    PagePosition::FileOffset(at) => at,
                };
                pages.push(PageDescriptor {
                    n_elements: p.n_elements,
                    has_checksum: self.checksums,
                    locator: Locator { size: p.stored, offset },
                    first_in_cluster: in_cluster,
                });
                in_cluster += p.n_elements as u64;
            }
            columns.push(Some(ColumnRange { first_element: first, n_elements: c.n_elements, compression: self.compression, suppressed: false, pages }));
        }
        Ok(ClusterDescriptor { id, first_entry, n_entries: self.n_entries, columns })
    }
}

/// Where a builder's output goes.
pub(crate) trait ClusterOut {
    /// Takes a full cluster: writes it, or keeps it (`std::mem::take`); the page buffers left
    /// in `c.chunks` are reused by the builder.
    fn cluster(&mut self, c: &mut SealedCluster) -> Result<()>;
    /// Unbuffered mode: writes one sealed page now and returns its absolute file offset.
    fn page(&mut self, bytes: &[u8]) -> Result<u64>;
    /// Whether this output may take uncompressed pages as they fill in buffered mode
    /// (`WriteOptions::stream_uncompressed_pages`): the sequential writer's.
    fn pages_as_they_fill(&self) -> bool {
        false
    }
    /// Whether this is the template's output, which takes no entries: its builder's columns get no
    /// buffers (100,000 columns' first pages were 26 MB, held beside the ones of the builders made from it).
    fn is_template(&self) -> bool {
        false
    }
}

/// An output that takes nothing: the template builder of the parallel writer.
impl ClusterOut for () {
    fn cluster(&mut self, _: &mut SealedCluster) -> Result<()> {
        Err(Error::internal("the template builder cannot write"))
    }
    fn page(&mut self, _: &[u8]) -> Result<u64> {
        Err(Error::internal("the template builder cannot write"))
    }
    fn is_template(&self) -> bool {
        true
    }
}
