//! The dataset sink: where sealed clusters become bytes in a ROOT file and entries in the
//! RNTuple's metadata. Three steps are kept apart, because the parallel writer runs only some of
//! them under its lock and a distributed writer would run them in different processes:
//!
//! The file itself (its output, the reservation of byte ranges, its TFile records) is a
//! [`FileSink`](crate::storage::container::file_sink::FileSink), owned by the dataset when the file holds one RNTuple, shared by several datasets
//! otherwise (see [`crate::write::file_sink`]).
//!
//! 1. [`Dataset::reserve`]: hand out the byte range of a cluster's RBlob keys (usually one; more
//!    when the cluster is larger than the maximum key size) (for MPI: an aggregator, a one-sided
//!    atomic counter or a file lock would hand out the offset);
//! 2. [`write_placement`] ([`crate::write::positioned`]): write the keys at that offset (positioned writes, from any thread);
//! 3. [`Dataset::append`]: append the cluster's descriptor, numbering its entries and column
//!    elements after those committed before.

use crate::error::{Error, Result};
use crate::format::anchor::Anchor;
use crate::format::compression;
use crate::format::cursor::Locator;
use crate::format::descriptor::*;
use crate::format::serialize;
use crate::storage::container::file_sink::{FileRef, NtupleState, SharedFile};
use crate::storage::container::key_plan::KeyPlan;
pub(crate) use crate::storage::container::positioned::{write_placement, Placement, WriteTarget};
use crate::storage::location::create_file_sink;
use crate::write::cluster::sealed::{ClusterOut, SealedCluster};
use crate::write::options::WriteOptions;
use std::collections::BTreeSet;
use std::path::Path;

/// The RNTuple being written: its schema, the clusters committed so far, and its file.
pub struct Dataset {
    /// The file (`None` once committed or aborted).
    file: Option<FileRef>,
    name: String,
    /// The descriptor (schema; clusters go to `clusters`).
    pub desc: Descriptor,
    clusters: Vec<ClusterDescriptor>,
    /// First element of each column in the next cluster.
    col_first: Vec<u64>,
    /// Entries committed.
    pub n_entries: u64,
    header: (u64, u64, u64),
    opts: WriteOptions,
    /// Bytes written for clusters and pages (key headers and padding included).
    pub bytes_written: u64,
    /// Where the sequential writer writes its blobs (a handle made once, not per cluster).
    own_target: Option<WriteTarget>,
    /// Clusters already in a cluster group (listed by a checkpoint's page list).
    grouped: usize,
    /// Clusters appended whose bytes are not written yet (the parallel writer writes outside its
    /// lock): a checkpoint stops before the first of them.
    unwritten: BTreeSet<usize>,
    /// Checkpoints made (the one at creation included).
    checkpoints: u64,
    /// The file's registry key (the name; `MAIN/SET` for an attribute set).
    key: String,
    /// An attribute set's: its anchor key is not listed by the directory.
    hidden: bool,
    /// A file of its own turned shared (for attribute sets): committed with this dataset.
    owns_shared: bool,
    /// Where the last anchor written is (its payload).
    anchor_at: Option<Locator>,
}

/// An RNTuple named by a path in the file (`dir/sub/name`) is written into those directories: its
/// header holds the name alone; returns the path (its key among the file's RNTuples).
fn in_directory(desc: &mut Descriptor) -> Result<String> {
    let path = desc.name.clone();
    let (_, name) = crate::format::names::check_path(&path, "RNTuple")?;
    desc.name = name.to_string();
    Ok(path)
}

/// Anchor version written: 1.0.0.1, what ROOT 6.36 writes (and uproot), readable by every 1.0
/// reader; 1.0.2.0 (ROOT 6.40's) for an RNTuple whose footer links attribute sets, and for the
/// attribute sets themselves.
const PLAIN_VERSION: (u16, u16, u16) = (0, 0, 1);
const ATTRIBUTE_VERSION: (u16, u16, u16) = (0, 2, 0);

impl Dataset {
    /// Creates the file and writes the RNTuple header of `desc` (whose schema is complete).
    pub fn create(path: impl AsRef<Path>, mut desc: Descriptor, opts: WriteOptions) -> Result<Dataset> {
        opts.validate()?;
        let key = in_directory(&mut desc)?;
        let file = create_file_sink(path.as_ref(), &opts.file_options())?;
        Dataset::open(FileRef::Own(Box::new(file)), desc, opts, key, false)
    }

    /// Starts an RNTuple in a file shared with others (see [`crate::write::FileWriter`]) and
    /// writes its header; the file's own options (output mode, direct I/O) are the file's.
    pub(crate) fn create_in(file: &SharedFile, mut desc: Descriptor, opts: WriteOptions) -> Result<Dataset> {
        opts.validate()?;
        let key = in_directory(&mut desc)?;
        Dataset::open(FileRef::Shared(file.clone()), desc, opts, key, false)
    }

    /// Starts the RNTuple of an attribute set of the RNTuple `main` in its (shared) file; its
    /// anchor is not listed by the directory, the main RNTuple's footer links it.
    pub(crate) fn create_attribute_set(file: &SharedFile, main: &str, desc: Descriptor, opts: WriteOptions) -> Result<Dataset> {
        opts.validate()?;
        crate::format::names::check_name(&desc.name, "attribute set")?;
        let key = format!("{main}/{}", desc.name);
        Dataset::open(FileRef::Shared(file.clone()), desc, opts, key, true)
    }

    fn open(mut file: FileRef, mut desc: Descriptor, opts: WriteOptions, key: String, hidden: bool) -> Result<Dataset> {
        let (hb, sum) = serialize::header(&desc);
        desc.header_checksum = sum;
        let mut z = Vec::new();
        compression::compress(&hb, opts.compression, &mut z)?;
        let (off, own_target) = file.with(|f| {
            f.register(&key, hidden)?;
            let off = f.write_envelope(&z, hb.len() as u64, opts.max_key_size)?;
            f.align_direct()?;
            Ok((off, f.target()?))
        })?;
        let header = (off, z.len() as u64, hb.len() as u64);
        let col_first = desc.columns.iter().map(|c| c.first_element).collect();
        let mut ds = Dataset {
            file: Some(file),
            // The anchor's path in the file (`dir/name`); an attribute set's anchor goes by its name.
            name: if hidden { desc.name.clone() } else { key.clone() },
            desc,
            clusters: Vec::new(),
            col_first,
            n_entries: 0,
            header,
            opts,
            bytes_written: 0,
            own_target: Some(own_target),
            grouped: 0,
            unwritten: BTreeSet::new(),
            checkpoints: 0,
            key,
            hidden,
            owns_shared: false,
            anchor_at: None,
        };
        if ds.opts.checkpoint_clusters > 0 {
            // From the start the file reads as an RNTuple (of no entries yet).
            ds.checkpoint()?;
        }
        Ok(ds)
    }

    /// The file as one to share with the RNTuples of attribute sets: a file of its own becomes
    /// shared, and is still committed with this dataset.
    pub(crate) fn shared_file(&mut self) -> Result<SharedFile> {
        let shared = match self.file.take() {
            Some(FileRef::Own(f)) => {
                self.owns_shared = true;
                std::sync::Arc::new(std::sync::Mutex::new(Some(*f)))
            }
            Some(FileRef::Shared(s)) => s,
            None => return Err(Error::Invalid(format!("the RNTuple '{}' was committed already", self.name))),
        };
        self.file = Some(FileRef::Shared(shared.clone()));
        Ok(shared)
    }

    /// Where the anchor is, once written (an attribute set's link points at it).
    pub(crate) fn anchor_at(&self) -> Option<Locator> {
        self.anchor_at
    }

    fn file(&mut self) -> Result<&mut FileRef> {
        self.file.as_mut().ok_or_else(|| Error::Invalid(format!("the RNTuple '{}' was committed already", self.name)))
    }

    /// Columns added to the schema after creation (late model extension) start at these
    /// elements.
    pub fn columns_added(&mut self) {
        for c in &self.desc.columns[self.col_first.len()..] {
            self.col_first.push(c.first_element);
        }
    }

    /// Distributed writing: pads the end of the file to `align` and returns where the file is
    /// written until the commit and the offset from which the ranks place their clusters.
    pub(crate) fn open_for_ranks(&mut self, align: u64) -> Result<(std::path::PathBuf, u64)> {
        self.file()?.with(|f| {
            f.align_to(align)?;
            Ok((f.writing_path(), f.end()))
        })
    }

    /// Distributed writing: the ranks' clusters fill the file up to `end`.
    pub(crate) fn advance_end(&mut self, end: u64) -> Result<()> {
        self.file()?.with(|f| f.advance_end(end))
    }

    /// Step 1: reserves consecutive RBlob keys for the payloads laid out by `plan` (each key
    /// aligned and padded for direct I/O).
    pub fn reserve(&mut self, plan: KeyPlan) -> Result<Placement> {
        let placement = self.file()?.with(|f| f.reserve(plan))?;
        self.bytes_written += placement.total();
        Ok(placement)
    }

    /// The key layout of payloads of these lengths under this dataset's maximum key size.
    pub fn plan(&self, lens: &[u64]) -> Result<KeyPlan> {
        KeyPlan::new(lens, self.opts.max_key_size)
    }

    /// Where blobs are written: the file, or its `O_DIRECT` handle.
    pub fn target(&self) -> Result<WriteTarget> {
        let f = self.file.as_ref().ok_or_else(|| Error::Invalid(format!("the RNTuple '{}' was committed already", self.name)))?;
        f.get(|f| f.target())
    }

    fn own_target(&self) -> Result<&WriteTarget> {
        self.own_target.as_ref().ok_or_else(|| Error::internal("no write target"))
    }

    /// Step 3: appends a placed cluster's metadata (`offsets`: the file offset of each of its
    /// chunks, empty for a cluster whose pages were written one by one); returns its first entry.
    pub fn append(&mut self, c: &SealedCluster, offsets: &[u64]) -> Result<u64> {
        let first = self.n_entries;
        self.append_placed(c, offsets, true)?;
        Ok(first)
    }

    /// [`Dataset::append`] for a cluster whose bytes may not be written yet (`written` false):
    /// no checkpoint includes it before [`Dataset::written`] says so. Returns its index.
    pub fn append_placed(&mut self, c: &SealedCluster, offsets: &[u64], written: bool) -> Result<usize> {
        if c.columns.len() != self.col_first.len() {
            return Err(Error::Internal(format!("a cluster of {} columns for a schema of {}", c.columns.len(), self.col_first.len())));
        }
        let first = self.n_entries;
        let d = c.describe(self.clusters.len(), first, &self.col_first, offsets)?;
        for (f, col) in self.col_first.iter_mut().zip(&c.columns) {
            *f += col.n_elements;
        }
        self.clusters.push(d);
        self.n_entries += c.n_entries;
        let id = self.clusters.len() - 1;
        if !written {
            self.unwritten.insert(id);
        }
        Ok(id)
    }

    /// The bytes of the clusters `ids` (from [`Dataset::append_placed`]) are written.
    pub fn written(&mut self, ids: &[usize]) {
        for id in ids {
            self.unwritten.remove(id);
        }
    }

    /// Clusters whose bytes are written, counted from the first: what a checkpoint can hold.
    fn written_prefix(&self) -> usize {
        self.unwritten.first().copied().unwrap_or(self.clusters.len())
    }

    /// Makes a checkpoint when `checkpoint_clusters` written clusters are not in one yet.
    pub fn maybe_checkpoint(&mut self) -> Result<()> {
        let k = self.opts.checkpoint_clusters;
        if k > 0 && !self.is_committed() && (self.written_prefix() - self.grouped) as u64 >= k {
            self.checkpoint()?;
        }
        Ok(())
    }

    /// A checkpoint: the written clusters not in a cluster group yet become one (its page list),
    /// then the footer (listing every group so far), the anchor and the file's records make the
    /// file on disk a complete ROOT file (see [`crate::storage::container::tfile_write::RootFileWriter::checkpoint`] for the order of the
    /// writes); later clusters go after it.
    pub fn checkpoint(&mut self) -> Result<()> {
        self.write_envelopes(false)?;
        self.file()?.with(|f| f.checkpoint())?;
        self.checkpoints += 1;
        Ok(())
    }

    /// Distributed writing: an upper bound of the bytes the next checkpoint appends (page list of
    /// the clusters not in a group yet, footer, anchor and the file's records), for a range
    /// reserved before it is written ([`Dataset::checkpoint_into`]).
    pub(crate) fn checkpoint_bound(&mut self) -> Result<u64> {
        let max_key = self.opts.max_key_size;
        // An envelope is never compressed to more than its bytes; its keys as the file lays them out.
        let envelope = |len: u64| -> Result<u64> {
            let plan = KeyPlan::new(&[len], max_key)?;
            Ok(Placement::reserved_len(&plan, 1) + 64)
        };
        let upto = self.written_prefix();
        let pl = serialize::page_list(self.desc.header_checksum, &self.clusters[self.grouped..upto]).len() as u64;
        // The footer lists one more cluster group.
        let footer = serialize::footer(&self.desc).len() as u64 + 1024;
        let name = self.name.clone();
        let records = self.file()?.get(|f| f.checkpoint_bound(&name))?;
        Ok(envelope(pl)? + envelope(footer)? + records)
    }

    /// Distributed writing: a checkpoint ([`Dataset::checkpoint`]) whose records are written into
    /// `[start, start + len)`, a range the ranks' allocator reserved for them (at least
    /// [`Dataset::checkpoint_bound`] bytes); the unused tail becomes a free gap.
    pub(crate) fn checkpoint_into(&mut self, start: u64, len: u64) -> Result<()> {
        let end = start.checked_add(len).ok_or_else(|| Error::internal("a checkpoint range beyond 2^64"))?;
        self.advance_end(start)?;
        self.checkpoint()?;
        let at = self.file()?.get(|f| Ok(f.end()))?;
        if at > end {
            return Err(Error::Internal(format!("a checkpoint's records end at {at}, past the {len} bytes reserved at {start}")));
        }
        self.file()?.with(|f| f.pad_to(end))
    }

    /// Checkpoints made so far (with `checkpoint_clusters`, the one at creation included).
    pub fn checkpoints(&self) -> u64 {
        self.checkpoints
    }

    /// Writes the page list of the written clusters not in a group yet (as a new cluster group;
    /// at the `last` commit also an empty one when there is none), then the footer and anchor.
    fn write_envelopes(&mut self, last: bool) -> Result<()> {
        let upto = self.written_prefix();
        let c = self.opts.compression;
        let max_key = self.opts.max_key_size;
        if upto > self.grouped || (last && self.desc.cluster_groups.is_empty()) {
            let new = &self.clusters[self.grouped..upto];
            let pl = serialize::page_list(self.desc.header_checksum, new);
            let min_entry = new.first().map_or(0, |c| c.first_entry);
            let entry_span = new.iter().map(|c| c.n_entries).sum();
            let n_clusters = new.len() as u32;
            let mut z = Vec::new();
            compression::compress(&pl, c, &mut z)?;
            let off = self.file()?.with(|f| f.write_envelope(&z, pl.len() as u64, max_key))?;
            self.desc.cluster_groups.push(ClusterGroupDescriptor {
                min_entry,
                entry_span,
                n_clusters,
                page_list: EnvelopeLink { length: pl.len() as u64, locator: Locator { size: z.len() as u64, offset: off } },
            });
            self.grouped = upto;
        }
        let fb = serialize::footer(&self.desc);
        let mut z = Vec::new();
        compression::compress(&fb, c, &mut z)?;
        let (seek_header, nbytes_header, len_header) = self.header;
        let (major, minor, patch) = if self.hidden || !self.desc.attribute_sets.is_empty() { ATTRIBUTE_VERSION } else { PLAIN_VERSION };
        let (name, hidden) = (&self.name, self.hidden);
        // ROOT's files describe the classes of class fields in their StreamerInfo record.
        let mut classes = crate::logical::class_streamers::streamer_infos(&crate::logical::descriptor_types::descriptor_classes(&self.desc));
        // And those of streamer fields, from the extra type information.
        classes.extend(crate::write::streamer::streamed_fields::key_records(&self.desc));
        let file = self.file.as_mut().ok_or_else(|| Error::Invalid(format!("the RNTuple '{name}' was committed already")))?;
        let at = file.with(|f| {
            f.add_streamer_infos(&classes);
            let foff = f.write_envelope(&z, fb.len() as u64, max_key)?;
            let anchor = Anchor {
                epoch: 1,
                major,
                minor,
                patch,
                seek_header,
                nbytes_header,
                len_header,
                seek_footer: foff,
                nbytes_footer: z.len() as u64,
                len_footer: fb.len() as u64,
                max_key_size: max_key,
            };
            if hidden {
                f.write_hidden_anchor(name, &anchor).map(|(offset, size)| Some(Locator { size, offset }))
            } else {
                f.write_anchor(name, &anchor).map(|_| None)
            }
        })?;
        self.anchor_at = at;
        Ok(())
    }

    /// Commits the dataset: page list, footer, anchor; then, for a file of its own, the keys
    /// list, streamer info, free list and file header, and syncs the file. Returns the file size
    /// (in a shared file: its end so far, the file is committed by its
    /// [`crate::write::FileWriter`]).
    pub fn commit(&mut self) -> Result<u64> {
        if self.file.is_none() {
            return Err(Error::Invalid(format!("the RNTuple '{}' was committed already", self.name)));
        }
        if let Some(id) = self.unwritten.first() {
            return Err(Error::Internal(format!("committing while cluster {id} is not written")));
        }
        if let Err(e) = self.write_envelopes(true) {
            self.fail(&e.to_string());
            return Err(e);
        }
        self.own_target = None;
        match self.file.take() {
            Some(FileRef::Own(file)) => file.finish(),
            Some(FileRef::Shared(shared)) if self.owns_shared => {
                let file = shared.lock().ok().and_then(|mut g| g.take());
                let mut file = file.ok_or_else(|| Error::internal("the file of this RNTuple is gone"))?;
                file.set_state(&self.key, NtupleState::Committed);
                file.check_complete()?;
                file.finish()
            }
            Some(mut shared) => shared.with(|f| {
                f.set_state(&self.key, NtupleState::Committed);
                Ok(f.end())
            }),
            None => Err(Error::Invalid(format!("the RNTuple '{}' was committed already", self.name))),
        }
    }

    /// Drops the dataset without committing it: a new file written under a temporary name is
    /// removed (an existing file of that name stays as it was); a file with checkpoints keeps its
    /// last checkpoint; a file opened for update keeps its former records (what was appended
    /// after them is not listed). In a file shared with other RNTuples, the file can then not be
    /// committed.
    pub fn abort(&mut self) {
        self.fail("its writer was aborted");
    }

    /// [`Dataset::abort`], saying why (for the file's commit, when shared).
    pub fn fail(&mut self, why: &str) {
        self.own_target = None;
        if let Some(mut f) = self.file.take() {
            let key = &self.key;
            let _ = f.with(|f| {
                f.set_state(key, NtupleState::Failed(why.to_string()));
                Ok(())
            });
            if self.owns_shared {
                // The file of its own: discarded now, as a file that is not shared would be.
                if let FileRef::Shared(s) = f
                    && let Ok(mut g) = s.lock()
                {
                    g.take();
                }
            }
        }
    }

    /// Whether the dataset was committed.
    pub fn is_committed(&self) -> bool {
        self.file.is_none()
    }

    /// The RNTuple's name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// The sequential writer places each cluster right away: reserve, write, append.
impl ClusterOut for Dataset {
    fn cluster(&mut self, c: &mut SealedCluster) -> Result<()> {
        if !c.is_relocatable() {
            // Unbuffered: the pages were written one by one; only the metadata is left.
            self.append(c, &[])?;
            return self.maybe_checkpoint();
        }
        if self.opts.same_page_merging {
            // Clusters copied from another file (skim, merge) merge here; a builder's are merged
            // already (then this finds nothing).
            c.merge_same_pages();
        }
        let plan = self.plan(&c.chunk_lens())?;
        let placement = self.reserve(plan)?;
        write_placement(self.own_target()?, &placement, &c.chunks)?;
        self.append(c, &placement.offsets())?;
        self.maybe_checkpoint()
    }

    fn pages_as_they_fill(&self) -> bool {
        true
    }

    fn page(&mut self, bytes: &[u8]) -> Result<u64> {
        let plan = self.plan(&[bytes.len() as u64])?;
        let placement = self.reserve(plan)?;
        write_placement(self.own_target()?, &placement, &[bytes])?;
        Ok(placement.offsets()[0])
    }
}
