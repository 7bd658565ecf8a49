//! Opening files: the entry point of the reading API.

use crate::error::{Error, Result};
use crate::format::anchor::AnchorStatus;
use crate::read::live;
use crate::read::reader::Reader;
use crate::storage::container::tfile::RootFile;
use crate::storage::local::mapped::MappedSource;
use crate::storage::local::source::{MemSource, ReadAt};
use crate::storage::location::{is_url, open_location};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A ROOT file holding one or more RNTuples.
///
/// ```no_run
/// let file = rntuple::RNTupleFile::open("events.root")?;
/// for name in file.names() {
///     let reader = file.reader(&name)?;
///     println!("{name}: {} entries", reader.num_entries());
///     let batch = reader.read_batch(None, 0, reader.num_entries().min(10))?;
///     println!("{} columns", batch.num_columns());
/// }
/// # Ok::<(), rntuple::Error>(())
/// ```
pub struct RNTupleFile {
    root: RootFile,
    /// The path or URL it was opened from (for [`RNTupleFile::reopen`]); `None` for a byte source.
    location: Option<PathBuf>,
}

impl RNTupleFile {
    /// Opens a ROOT file from disk, or from a server by URL: `http://` and `https://` (range
    /// requests) or `s3://bucket/key` (credentials and endpoint from the `AWS_*` environment
    /// variables; see `storage::remote::source::RemoteSource`).
    ///
    /// A local file that a writer with `checkpoint_clusters` is still extending opens as its last
    /// checkpoint, whole (never a mix of two); before the first checkpoint (the path does not exist
    /// yet, the writer's temporary file lies beside it) the error says the file is "not yet a
    /// complete RNTuple (being written: no checkpoint yet)". See [`RNTupleFile::reopen`].
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        let p = path.as_ref();
        let location = Some(p.to_path_buf());
        match p.to_str() {
            Some(url) if is_url(url) => {
                let root = RootFile::open(open_location(p)?).map_err(|e| e.context(url.to_string()))?;
                Ok(RNTupleFile { root, location })
            }
            _ => Ok(RNTupleFile { root: live::open_local(p)?, location }),
        }
    }

    /// Opens the file again from its path or URL: the checkpoint a writer made last, with the
    /// entries it added since this one was opened (a file being written with
    /// `checkpoint_clusters`; a complete file opens as it was). `self` stays as it is. A file
    /// opened from a byte source or from memory has no path to open again: an error.
    ///
    /// ```
    /// use rntuple::write::{Writer, WriteOptions};
    /// use rntuple::Value;
    /// let path = std::env::temp_dir().join(format!("rntuple-doc-reopen-{}.root", std::process::id()));
    /// let opts = WriteOptions { checkpoint_clusters: 1000, ..WriteOptions::default() };
    /// let mut w = Writer::create(&path, "Events", &[("x", "float")], opts)?;
    /// let entry = |x: f32| Value::Record(vec![("x".into(), Value::F32(x))]);
    /// w.fill(&entry(1.0))?;
    /// w.checkpoint()?; // the cluster so far, then the file on disk made complete
    /// let first = rntuple::RNTupleFile::open(&path)?;
    /// assert_eq!(first.reader("Events")?.num_entries(), 1);
    /// w.fill(&entry(2.0))?;
    /// w.checkpoint()?;
    /// let again = first.reopen()?;
    /// assert_eq!((first.reader("Events")?.num_entries(), again.reader("Events")?.num_entries()), (1, 2));
    /// w.commit()?;
    /// assert!(rntuple::RNTupleFile::from_bytes(std::fs::read(&path)?)?.reopen().is_err());
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn reopen(&self) -> Result<RNTupleFile> {
        match &self.location {
            Some(p) => RNTupleFile::open(p),
            None => Err(Error::Invalid("a file opened from a byte source or from memory has no path to open again".into())),
        }
    }

    /// Whether `location` names a remote file (a URL [`RNTupleFile::open`] reads remotely).
    pub fn is_url(location: &str) -> bool {
        is_url(location)
    }

    /// Opens a ROOT file read through any byte source: a remote file, a file object of a host
    /// language, a custom cache. Only the ranges the reads need are requested.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use rntuple::storage::{MemSource, ReadAt};
    /// use rntuple::write::{Writer, WriteOptions};
    /// let path = std::env::temp_dir().join("rntuple-doc-from-source.root");
    /// let mut w = Writer::create(&path, "Events", &[("x", "float")], WriteOptions::default())?;
    /// w.fill(&rntuple::Value::Record(vec![("x".into(), rntuple::Value::F32(1.5))]))?;
    /// w.commit()?;
    /// let src: Arc<dyn ReadAt> = Arc::new(MemSource(Arc::new(std::fs::read(&path)?)));
    /// let f = rntuple::RNTupleFile::from_source(src)?;
    /// assert_eq!(f.reader("Events")?.num_entries(), 1);
    /// // Bytes that are not a ROOT file give an error naming what is wrong, never a panic.
    /// assert!(rntuple::RNTupleFile::from_source(Arc::new(MemSource(Arc::new(b"junk".to_vec())))).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_source(src: Arc<dyn ReadAt>) -> Result<Self> {
        Ok(RNTupleFile { root: RootFile::open(src)?, location: None })
    }

    /// Opens a ROOT file held in memory.
    pub fn from_bytes(bytes: Vec<u8>) -> Result<Self> {
        let src: Arc<dyn ReadAt> = Arc::new(MemSource(Arc::new(bytes)));
        Ok(RNTupleFile { root: RootFile::open(src)?, location: None })
    }

    /// Opens a local file through a memory map: pages are decompressed straight out of the
    /// kernel's page cache, without a copy into the reader's buffers. **The file must not change
    /// or shrink while it is open** (bytes past a new end raise `SIGBUS`): use it for complete
    /// files left alone; [`RNTupleFile::open`] (`pread`) is immune to both.
    ///
    /// ```
    /// use rntuple::write::{Writer, WriteOptions};
    /// let path = std::env::temp_dir().join(format!("rntuple-doc-open-mapped-{}.root", std::process::id()));
    /// let mut w = Writer::create(&path, "Events", &[("x", "float")], WriteOptions::default())?;
    /// w.fill(&rntuple::Value::Record(vec![("x".into(), rntuple::Value::F32(1.5))]))?;
    /// w.commit()?;
    /// let f = rntuple::RNTupleFile::open_mapped(&path)?;
    /// assert_eq!(f.reader("Events")?.num_entries(), 1);
    /// assert!(rntuple::RNTupleFile::open_mapped(std::env::temp_dir()).is_err()); // a directory
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open_mapped(path: impl AsRef<Path>) -> Result<Self> {
        let p = path.as_ref();
        let src: Arc<dyn ReadAt> = Arc::new(MappedSource::open(p)?);
        let root = RootFile::open(src).map_err(|e| e.context(format!("mapped file {}", p.display())))?;
        Ok(RNTupleFile { root, location: None })
    }

    /// Paths of every RNTuple in the file (including refused pre-1.0 ones), in key order.
    pub fn names(&self) -> Vec<String> {
        self.root.ntuples.iter().map(|e| e.path.clone()).collect()
    }

    /// Every key of the file, subdirectories included, every cycle, depth first in keys-list order:
    /// `(path, class name, cycle)` (as uproot's `keys()` and ROOT's `TFile::GetListOfKeys` walked).
    ///
    /// ```
    /// # use rntuple::write::{Writer, WriteOptions};
    /// # let path = std::env::temp_dir().join(format!("rntuple-doc-keys-{}.root", std::process::id()));
    /// # let mut w = Writer::create(&path, "ntuple", &[("x", "float")], WriteOptions::default())?;
    /// # w.fill(&rntuple::Value::Record(vec![("x".into(), rntuple::Value::F32(1.0))]))?;
    /// # w.commit()?;
    /// let f = rntuple::RNTupleFile::open(&path)?;
    /// assert!(f.keys().contains(&("ntuple".to_string(), "ROOT::RNTuple".to_string(), 1)));
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn keys(&self) -> Vec<(String, String, u16)> {
        self.root.keys.clone()
    }

    /// `(requests, bytes)` the file's byte source served so far, when the source counts them
    /// (local files, HTTP and S3 do).
    pub fn io_counts(&self) -> Option<(u64, u64)> {
        self.root.source().counters().map(|c| c.get())
    }

    /// The container: keys, directories, anchors.
    pub fn root_file(&self) -> &RootFile {
        &self.root
    }

    /// Whether the RNTuple's anchor is usable, pre-1.0 or broken.
    pub fn anchor_status(&self, name: &str) -> Option<&AnchorStatus> {
        self.root.ntuples.iter().find(|e| e.path == name || e.key.name == name).map(|e| &e.anchor)
    }

    /// Opens a reader for an RNTuple (by path, or by name when unique).
    pub fn reader(&self, name: &str) -> Result<Reader> {
        let anchor = self.root.anchor(name)?;
        Reader::open(self.root.source().clone(), anchor)
    }
}
