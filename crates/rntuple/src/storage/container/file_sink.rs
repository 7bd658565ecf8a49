//! The file side of writing: what belongs to the ROOT file rather than to one RNTuple in it. A
//! [`FileSink`] owns the output (atomic, checkpointed or updated in place: see
//! [`crate::storage::local::output`]; local or staged for an upload: it is made by
//! `storage::location::create_file_sink`), hands out byte ranges (RBlob keys, aligned for direct I/O),
//! writes the TFile records (keys list, StreamerInfo, free segments, directory and file header)
//! and knows which RNTuples it holds. The RNTuple side (schema, clusters, page lists, header,
//! footer, anchor) is `write::sink::Dataset`.
//!
//! A file holding one RNTuple belongs to its dataset ([`FileRef::Own`], no lock). Several
//! RNTuples written at once share one ([`FileRef::Shared`], behind a mutex): each dataset
//! reserves its ranges and writes its envelopes and anchor under the file's lock, and
//! `write::FileWriter::commit` writes the directory once, after every RNTuple is
//! committed.

use crate::error::{Error, Result};
use crate::format::anchor::Anchor;
use crate::format::compression::Compression;
use crate::storage::container::key_plan::KeyPlan;
use crate::storage::container::positioned::{open_direct, Placement, WriteTarget, DIRECT_IO_ALIGN};
use crate::storage::container::tfile_write::RootFileWriter;
use std::fs::File;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// A file shared by several datasets; `None` once committed or discarded.
pub(crate) type SharedFile = Arc<Mutex<Option<FileSink>>>;

/// Where an RNTuple of the file stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NtupleState {
    /// Being written.
    Open,
    /// Its footer and anchor are written.
    Committed,
    /// Aborted or failed (why): the file cannot be committed.
    Failed(String),
}

/// The file-level options of a written file (the writer's options decide them).
#[derive(Debug, Clone, Copy, Default)]
pub struct FileOptions {
    /// Add to an existing ROOT file instead of creating one.
    pub update_existing_file: bool,
    /// Write at the final path from the first checkpoint on (a crash leaves the last
    /// checkpoint), instead of under a temporary name renamed at the commit.
    pub checkpointed: bool,
    /// Compression of the file's own records (the StreamerInfo).
    pub compression: Compression,
    /// Write reserved ranges through an `O_DIRECT` handle, aligned.
    pub use_direct_io: bool,
    /// Allocate reserved ranges before writing them (`fallocate`).
    pub preallocate: bool,
}

/// The ROOT file being written, and the RNTuples in it.
pub struct FileSink {
    file: RootFileWriter,
    /// A second handle opened with `O_DIRECT` when direct I/O is on.
    direct: Option<File>,
    preallocate: bool,
    /// The RNTuples of this file, in the order they were created: (registry key, state, whether
    /// its anchor is hidden: an attribute set's, keyed `MAIN/SET`).
    ntuples: Vec<(String, NtupleState, bool)>,
}

impl FileSink {
    /// The file sink of the ROOT file `file` (created, or opened for update, at `path`: see
    /// `storage::location::create_file_sink`, which tells a path from an output URL) with the
    /// file-level options `opts`.
    pub(crate) fn new(file: RootFileWriter, path: &Path, opts: &FileOptions) -> Result<FileSink> {
        // The file as it is on disk now (its temporary name until the commit).
        let direct = if opts.use_direct_io { Some(open_direct(file.temporary_path().unwrap_or(path))?) } else { None };
        Ok(FileSink { file, direct, preallocate: opts.preallocate, ntuples: Vec::new() })
    }

    /// Records a new RNTuple of this file under `key` (its name, or `MAIN/SET` for an attribute
    /// set, whose anchor is `hidden`): the key must be new in the file (and a listed name in the
    /// file opened for update).
    pub(crate) fn register(&mut self, key: &str, hidden: bool) -> Result<()> {
        if !hidden && self.file.had_key("ROOT::RNTuple", key) {
            return Err(Error::Invalid(format!("{} already holds an RNTuple '{key}'", self.file.path())));
        }
        if self.ntuples.iter().any(|(n, _, _)| n == key) {
            let what = if hidden { "an attribute set" } else { "an RNTuple" };
            return Err(Error::Invalid(format!("{}: {what} '{key}' is being written into this file already", self.file.path())));
        }
        self.ntuples.push((key.to_string(), NtupleState::Open, hidden));
        Ok(())
    }

    /// Sets the state of the RNTuple `name` (a failure is kept: it is what the file reports).
    pub(crate) fn set_state(&mut self, name: &str, state: NtupleState) {
        if let Some((_, s, _)) = self.ntuples.iter_mut().find(|(n, _, _)| n == name)
            && !matches!(s, NtupleState::Failed(_))
        {
            *s = state;
        }
    }

    /// Whether every RNTuple of the file is committed; the error names the first that is not.
    pub(crate) fn check_complete(&self) -> Result<()> {
        for (name, state, _) in &self.ntuples {
            match state {
                NtupleState::Committed => {}
                NtupleState::Open => {
                    return Err(Error::Invalid(format!("{}: RNTuple '{name}' is still being written: commit (or drop) its writer first", self.file.path())))
                }
                NtupleState::Failed(why) => return Err(Error::Invalid(format!("{}: RNTuple '{name}' was not written: {why}", self.file.path()))),
            }
        }
        Ok(())
    }

    /// The names of the RNTuples of this file listed in its directory, in creation order.
    pub fn ntuple_names(&self) -> Vec<String> {
        self.ntuples.iter().filter(|(_, _, hidden)| !hidden).map(|(n, _, _)| n.clone()).collect()
    }

    /// Appends an envelope (compressed bytes `z` of `len` bytes uncompressed) in RBlob keys of
    /// at most `max_key` bytes; returns the offset its locator points at.
    pub fn write_envelope(&mut self, z: &[u8], len: u64, max_key: u64) -> Result<u64> {
        self.file.write_payload(z, len, max_key)
    }

    /// Pads the end of the file so that the next key starts aligned, with direct I/O.
    pub fn align_direct(&mut self) -> Result<()> {
        if self.direct.is_some() {
            self.file.align_end(DIRECT_IO_ALIGN)?;
        }
        Ok(())
    }

    /// Pads the end of the file so that the next key starts at a multiple of `align` (a power of
    /// two): where a distributed writer's ranks start placing clusters.
    pub(crate) fn align_to(&mut self, align: u64) -> Result<()> {
        self.file.align_end(align)
    }

    /// Moves the end of the file forward over keys written by others (see
    /// [`RootFileWriter::advance_end`]).
    pub(crate) fn advance_end(&mut self, to: u64) -> Result<()> {
        self.file.advance_end(to)
    }

    /// Where the bytes are written until the commit: the temporary file of an atomic output,
    /// else the file itself.
    pub(crate) fn writing_path(&self) -> std::path::PathBuf {
        self.file.temporary_path().map(Path::to_path_buf).unwrap_or_else(|| Path::new(self.file.path()).to_path_buf())
    }

    /// Reserves consecutive RBlob keys for the payloads laid out by `plan` (each key aligned and
    /// padded for direct I/O).
    pub fn reserve(&mut self, plan: KeyPlan) -> Result<Placement> {
        let align = if self.direct.is_some() { DIRECT_IO_ALIGN } else { 1 };
        // Another RNTuple of the file may have written an envelope since the last aligned key.
        self.align_direct()?;
        let file = &mut self.file;
        let slots = plan.keys.iter().map(|k| file.reserve_blob(k.payload_len, k.payload_len, align)).collect::<Result<Vec<_>>>()?;
        Ok(Placement::new(plan, slots))
    }

    /// A handle of its own for positioned writes of reserved ranges (the file's, or its
    /// `O_DIRECT` twin).
    pub fn target(&self) -> Result<WriteTarget> {
        let f = &self.file;
        let file = match &self.direct {
            Some(d) => d.try_clone(),
            None => f.file().try_clone(),
        }
        .map_err(|e| Error::io(format!("duplicating the handle of {}", f.path()), e))?;
        Ok(WriteTarget::new(file, f.path().to_string(), self.direct.is_some(), self.preallocate).with_window(f.upload_window()))
    }

    /// Appends the anchor key of the RNTuple `name` (replacing its earlier anchor in the keys
    /// list).
    pub fn write_anchor(&mut self, name: &str, anchor: &Anchor) -> Result<()> {
        self.file.write_anchor(name, anchor)
    }

    /// Adds the `TStreamerInfo` records of class fields' classes to the file's StreamerInfo record.
    pub fn add_streamer_infos(&mut self, infos: &[crate::storage::container::streamer_info::StreamerInfo]) {
        self.file.add_streamer_infos(infos)
    }

    /// Appends the anchor key of an RNTuple the directory does not list (an attribute set's);
    /// returns the offset and length of the anchor object.
    pub fn write_hidden_anchor(&mut self, name: &str, anchor: &Anchor) -> Result<(u64, u64)> {
        self.file.write_hidden_anchor(name, anchor)
    }

    /// Makes the file on disk a complete ROOT file holding every anchor written so far (see
    /// [`RootFileWriter::checkpoint`]); later keys go after it.
    pub fn checkpoint(&mut self) -> Result<()> {
        self.file.checkpoint()?;
        self.align_direct()
    }

    /// Current end of the file.
    pub fn end(&self) -> u64 {
        self.file.end()
    }

    /// An upper bound of the bytes a checkpoint appends after the RNTuple `name`'s envelopes (see
    /// [`RootFileWriter::checkpoint_bound`]).
    pub(crate) fn checkpoint_bound(&self, name: &str) -> Result<u64> {
        self.file.checkpoint_bound(name)
    }

    /// Moves the end forward to `to` over a free gap (see [`RootFileWriter::pad_to`]).
    pub(crate) fn pad_to(&mut self, to: u64) -> Result<()> {
        self.file.pad_to(to)
    }

    /// Writes the keys list, StreamerInfo, free segments, directory record and file header, syncs
    /// the file and renames a temporary file over its destination. Returns the file size.
    pub fn finish(self) -> Result<u64> {
        self.file.finish()
    }
}

/// How a dataset reaches its file: it owns it (one RNTuple in the file), or shares it.
pub(crate) enum FileRef {
    /// The dataset's own file, committed with it.
    Own(Box<FileSink>),
    /// A file of several RNTuples, committed by its `write::FileWriter`.
    Shared(SharedFile),
}

impl FileRef {
    /// Runs `f` on the file (under its lock when shared).
    pub fn with<R>(&mut self, f: impl FnOnce(&mut FileSink) -> Result<R>) -> Result<R> {
        match self {
            FileRef::Own(s) => f(s),
            FileRef::Shared(m) => {
                let mut g = m.lock().map_err(|_| Error::internal("the file's lock is poisoned (a thread panicked while holding it)"))?;
                let s = g.as_mut().ok_or_else(|| Error::Invalid("the file was committed or discarded already".into()))?;
                f(s)
            }
        }
    }

    /// Runs `f` on the file, read-only.
    pub fn get<R>(&self, f: impl FnOnce(&FileSink) -> Result<R>) -> Result<R> {
        match self {
            FileRef::Own(s) => f(s),
            FileRef::Shared(m) => {
                let g = m.lock().map_err(|_| Error::internal("the file's lock is poisoned (a thread panicked while holding it)"))?;
                let s = g.as_ref().ok_or_else(|| Error::Invalid("the file was committed or discarded already".into()))?;
                f(s)
            }
        }
    }
}
