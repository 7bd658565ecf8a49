//! Writing the ROOT file container around RNTuples, as ROOT's own mini-writer does: file
//! header, the TFile key with the top directory, RBlob keys holding envelopes and pages, the
//! `ROOT::RNTuple` anchor key, the keys list and the free-segments record. All container
//! integers are big-endian. 64-bit (version 1004) keys are used throughout.

use crate::error::{Error, Result};
use crate::format::anchor::Anchor;
use crate::format::compression::Compression;
use crate::storage::container::key_plan::{KeyPlan, Piece};
use crate::storage::local::{file_io, io_record};
use crate::storage::local::output::OutputFile;
use crate::storage::container::streamer_info::{streamer_info_list, StreamerInfo};
use crate::storage::container::tfile_dirs::{record, split_path, uuid_of, SubDir, DIRECTORY_CLASS, RECORD_LEN};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

const BEGIN: u64 = 100;
/// ROOT version code written into the header (as ROOT 6.40.00).
pub const ROOT_VERSION: u32 = 64000;

/// Appends a ROOT TString: a length byte (255 and a u32 for 255 bytes or more), then the bytes.
pub fn tstring(out: &mut Vec<u8>, s: &str) {
    if s.len() < 255 {
        out.push(s.len() as u8);
    } else {
        out.push(255);
        out.extend_from_slice(&(s.len() as u32).to_be_bytes());
    }
    out.extend_from_slice(s.as_bytes());
}

/// The stored length of [`tstring`]'s output for `s`.
pub fn tstring_len(s: &str) -> usize {
    if s.len() < 255 {
        1 + s.len()
    } else {
        5 + s.len()
    }
}

fn datime() -> u32 {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    // Civil date from days since 1970 (Howard Hinnant's algorithm), UTC.
    let days = (secs / 86400) as i64;
    let rem = secs % 86400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = (yoe + era * 400 + if m <= 2 { 1 } else { 0 }) as u32;
    ((y.saturating_sub(1995)) << 26) | (m << 22) | (d << 17) | (((rem / 3600) as u32) << 12) | ((((rem % 3600) / 60) as u32) << 6) | (rem % 60) as u32
}

/// The length of a 64-bit key's header (`TKey` version > 1000) for `class`, `name` and `title`.
pub(crate) fn key_header_len(class: &str, name: &str, title: &str) -> usize {
    34 + tstring_len(class) + tstring_len(name) + tstring_len(title)
}

/// A TKey header (version 1004, 64-bit seeks), stamped now.
fn key_header(nbytes: u32, obj_len: u32, seek_key: u64, seek_pdir: u64, class: &str, name: &str, title: &str) -> Vec<u8> {
    key_header_at(datime(), nbytes, obj_len, seek_key, seek_pdir, class, name, title)
}

/// A TKey header (version 1004, 64-bit seeks) with the TDatime `datime` (forged files use a
/// fixed one, so that they are reproducible).
#[allow(clippy::too_many_arguments)]
pub fn key_header_at(datime: u32, nbytes: u32, obj_len: u32, seek_key: u64, seek_pdir: u64, class: &str, name: &str, title: &str) -> Vec<u8> {
    let key_len = key_header_len(class, name, title);
    let mut h = Vec::with_capacity(key_len);
    h.extend_from_slice(&nbytes.to_be_bytes());
    h.extend_from_slice(&1004u16.to_be_bytes());
    h.extend_from_slice(&obj_len.to_be_bytes());
    h.extend_from_slice(&datime.to_be_bytes());
    h.extend_from_slice(&(key_len as u16).to_be_bytes());
    h.extend_from_slice(&1u16.to_be_bytes());
    h.extend_from_slice(&seek_key.to_be_bytes());
    h.extend_from_slice(&seek_pdir.to_be_bytes());
    tstring(&mut h, class);
    tstring(&mut h, name);
    tstring(&mut h, title);
    h
}

/// Length of an RBlob key header.
pub const BLOB_KEY_LEN: u64 = 34 + 6 + 1 + 1;

/// The ROOT anchor object bytes (class version 2, big-endian, with its XXH3).
pub fn anchor_bytes(a: &Anchor) -> Vec<u8> {
    let mut b = Vec::with_capacity(78);
    b.extend_from_slice(&(0x4000_0000u32 | 66).to_be_bytes());
    b.extend_from_slice(&2u16.to_be_bytes());
    for v in [a.epoch, a.major, a.minor, a.patch] {
        b.extend_from_slice(&v.to_be_bytes());
    }
    for v in [a.seek_header, a.nbytes_header, a.len_header, a.seek_footer, a.nbytes_footer, a.len_footer, a.max_key_size] {
        b.extend_from_slice(&v.to_be_bytes());
    }
    let sum = crate::format::checksum::xxh3(&b[6..]);
    b.extend_from_slice(&sum.to_be_bytes());
    b
}

/// A reserved RBlob key: its header bytes and where key and payload go.
#[derive(Debug, Clone)]
pub struct BlobSlot {
    /// Offset of the key header.
    pub key_offset: u64,
    /// Offset of the payload (right after the key header).
    pub payload_offset: u64,
    /// Bytes reserved, key header and padding included.
    pub total: u64,
    /// The key header to write at `key_offset`.
    pub key: Vec<u8>,
}

/// The RBlob key for a payload of `len` bytes (`obj_len` uncompressed) whose header starts at
/// `seek`: pure layout, no I/O. With `align > 1` (a power of two) `seek` must be aligned and the
/// key's length is rounded up to a multiple of `align`; the padding belongs to the key, so the file
/// stays a chain of keys.
pub fn blob_slot(seek: u64, len: u64, obj_len: u64, align: u64) -> Result<BlobSlot> {
    if align > 1 && !seek.is_multiple_of(align) {
        return Err(Error::Internal(format!("key at offset {seek} is not aligned to {align} bytes")));
    }
    let total = (BLOB_KEY_LEN + len).next_multiple_of(align.max(1));
    let nbytes = u32::try_from(total).map_err(|_| Error::Invalid(format!("a blob of {len} bytes is larger than a key can hold")))?;
    let obj_len = if total > BLOB_KEY_LEN + len { total - BLOB_KEY_LEN } else { obj_len };
    let key = key_header(nbytes, obj_len.min(u32::MAX as u64) as u32, seek, BEGIN, "RBlob", "", "");
    debug_assert_eq!(key.len() as u64, BLOB_KEY_LEN);
    Ok(BlobSlot { key_offset: seek, payload_offset: seek + BLOB_KEY_LEN, total, key })
}

/// Writes a ROOT file: keys are appended at the end; [`RootFileWriter::finish`] (or a
/// [`RootFileWriter::checkpoint`]) writes the keys list, free-segments record and the file header
/// and directory record that point at them.
pub struct RootFileWriter {
    out: OutputFile,
    path: String,
    file_name: String,
    end: u64,
    compression: Compression,
    /// (key header bytes) of top-level keys, for the keys list.
    top_keys: Vec<Vec<u8>>,
    /// Index in `top_keys` of the anchor key written by this writer, per RNTuple name (a
    /// checkpoint's anchor replaces the previous one).
    own_anchors: Vec<(String, usize)>,
    nbytes_name: u64,
    /// The TFile key, name and title (`nbytes_name` bytes at `BEGIN`), rewritten with the header.
    tfile_prefix: Vec<u8>,
    /// The StreamerInfo record (`fSeekInfo`, `fNbytesInfo`) once written (or the updated file's).
    info: Option<(u64, u32)>,
    /// Compression setting recorded in the file header.
    file_compression: u32,
    uuid: [u8; 18],
    ctime: u32,
    /// Whether a checkpoint renames a temporary file over the destination.
    publish_at_checkpoint: bool,
    /// Set when keys are added to an existing file: the (class name, name) of the keys it had.
    existing_keys: Option<Vec<(String, String)>>,
    /// The `TStreamerInfo` records of the RNTuples' class fields, in the StreamerInfo record.
    classes: Vec<StreamerInfo>,
    /// The subdirectories RNTuples were written into, each after its parent.
    dirs: Vec<SubDir>,
}

impl RootFileWriter {
    /// Creates a ROOT file in the new output `out` (see [`crate::storage::local::output`]; made
    /// by `storage::location::create_output` for a path or an output URL): atomically, under a
    /// temporary name renamed over its destination by [`RootFileWriter::finish`], or for
    /// checkpoints (then the first [`RootFileWriter::checkpoint`] renames it: see [`OutputMode`](crate::storage::local::output::OutputMode)).
    pub fn create(out: OutputFile, compression: Compression) -> Result<Self> {
        let path = out.path().display().to_string();
        let file_name = stored_file_name(&out.path().file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default());
        let publish_at_checkpoint = out.is_checkpointed();
        // UUID version 1, all zero.
        let mut uuid = [0u8; 18];
        uuid[1] = 1;
        let mut w = RootFileWriter {
            publish_at_checkpoint,
            out,
            path,
            file_name,
            end: 0,
            compression,
            top_keys: Vec::new(),
            own_anchors: Vec::new(),
            nbytes_name: 0,
            tfile_prefix: Vec::new(),
            info: None,
            file_compression: compression.settings(),
            uuid,
            ctime: datime(),
            existing_keys: None,
            classes: Vec::new(),
            dirs: Vec::new(),
        };
        // Header placeholder, then the TFile key with an empty directory record (filled at finish).
        w.write_at(0, &[0u8; BEGIN as usize])?;
        let prefix = w.tfile_key();
        w.write_at(BEGIN, &prefix)?;
        w.write_at(BEGIN + prefix.len() as u64, &[0u8; 60])?;
        w.end = BEGIN + prefix.len() as u64 + 60;
        w.tfile_prefix = prefix;
        Ok(w)
    }

    /// Opens an existing ROOT file to add keys to its top directory, as ROOT's UPDATE mode does:
    /// new keys go after its end, and [`RootFileWriter::finish`] writes a new keys list (the old
    /// keys and the new), a free-segments record and the directory record and file header that
    /// point at them. Everything already in the file stays where it is, its StreamerInfo record
    /// included. Until `finish` the file reads as it was (its header and keys list are untouched).
    pub fn open_update(path: impl AsRef<Path>, compression: Compression) -> Result<Self> {
        let p = path.as_ref();
        let file = file_io::open_existing(p, true, 0).map_err(|e| Error::io(format!("opening {} for update", p.display()), e))?;
        let dup = file.try_clone().map_err(|e| Error::io(format!("duplicating the handle of {}", p.display()), e))?;
        let src = crate::storage::local::source::FileSource::from_file(dup, p)?;
        let top = crate::storage::container::tfile::top_directory(&src).map_err(|e| Error::Invalid(format!("{}: cannot add to this file: {e}", p.display())))?;
        if top.begin != BEGIN {
            return Err(Error::Unsupported(format!(
                "{}: the top directory starts at {} (fBEGIN), not at {BEGIN} as in the files ROOT writes",
                p.display(),
                top.begin
            )));
        }
        if top.dir_record_space < 60 {
            return Err(Error::Unsupported(format!(
                "{}: the top directory record has {} bytes of room, fewer than the 60 of its 64-bit form",
                p.display(),
                top.dir_record_space
            )));
        }
        let mut tfile_prefix = vec![0u8; top.nbytes_name as usize];
        file.read_exact_at(&mut tfile_prefix, BEGIN).map_err(|e| Error::io(format!("reading the TFile key of {}", p.display()), e))?;
        let w = RootFileWriter {
            out: OutputFile::existing(file, p),
            path: p.display().to_string(),
            file_name: top.name.clone(),
            end: top.end,
            compression,
            top_keys: top.key_headers,
            own_anchors: Vec::new(),
            nbytes_name: top.nbytes_name,
            tfile_prefix,
            info: Some((top.seek_info, top.nbytes_info)),
            file_compression: top.compression,
            uuid: top.uuid,
            ctime: top.ctime,
            existing_keys: Some(top.keys),
            classes: Vec::new(),
            dirs: Vec::new(),
            publish_at_checkpoint: false,
        };
        Ok(w)
    }

    /// Whether the file had a key of this class and name before it was opened for update.
    pub fn had_key(&self, class: &str, name: &str) -> bool {
        self.existing_keys.as_ref().is_some_and(|keys| keys.iter().any(|(c, n)| c == class && n == name))
    }

    /// The TFile key followed by the file's name and title (the directory record goes after; see
    /// [`stored_file_name`] for why they end within the first sector).
    fn tfile_key(&mut self) -> Vec<u8> {
        let name = self.file_name.clone();
        let obj_len = (tstring_len(&name) + tstring_len("") + 60) as u32;
        let key_len = key_header_len("TFile", &name, "");
        let mut key = key_header(key_len as u32 + obj_len, obj_len, BEGIN, 0, "TFile", &name, "");
        self.nbytes_name = (key_len + tstring_len(&name) + tstring_len("")) as u64;
        tstring(&mut key, &name);
        tstring(&mut key, "");
        key
    }

    /// Current end of the file.
    pub fn end(&self) -> u64 {
        self.end
    }

    /// Appends an RBlob key holding `payload`; returns the payload's offset.
    pub fn write_blob(&mut self, payload: &[u8], obj_len: u64) -> Result<u64> {
        let slot = self.reserve_blob(payload.len() as u64, obj_len, 1)?;
        self.write_at(slot.key_offset, &slot.key)?;
        self.write_at(slot.payload_offset, payload)?;
        Ok(slot.payload_offset)
    }

    /// Appends a payload (an envelope) in RBlob keys of at most `max_key_size` bytes, split into
    /// chunks as ROOT does when it is larger (see [`crate::storage::container::key_plan`]); returns the
    /// offset its locator points at.
    pub fn write_payload(&mut self, payload: &[u8], obj_len: u64, max_key_size: u64) -> Result<u64> {
        let plan = KeyPlan::new(&[payload.len() as u64], max_key_size)?;
        if plan.is_single_key() {
            return self.write_blob(payload, obj_len);
        }
        let slots = plan.keys.iter().map(|k| self.reserve_blob(k.payload_len, k.payload_len, 1)).collect::<Result<Vec<_>>>()?;
        let key_offsets: Vec<u64> = slots.iter().map(|s| s.payload_offset).collect();
        for (key, slot) in plan.keys.iter().zip(&slots) {
            self.write_at(slot.key_offset, &slot.key)?;
            let mut at = slot.payload_offset;
            for piece in &key.pieces {
                let bytes = match piece {
                    Piece::Data { start, len, .. } => &payload[*start as usize..(*start + *len) as usize],
                    Piece::ChunkTable { item } => &plan.chunk_table(*item, &key_offsets)[..],
                };
                self.write_at(at, bytes)?;
                at += bytes.len() as u64;
            }
        }
        Ok(plan.item_offsets(&key_offsets)[0])
    }

    /// Reserves the byte range of an RBlob key for a payload of `len` bytes at the end of the
    /// file, without writing it: the caller writes `slot.key` at `slot.key_offset` and the payload
    /// at `slot.payload_offset`, possibly later and from another thread ([`RootFileWriter::file`]).
    /// With `align > 1` (a power of two, for direct I/O) the key starts at the current end, which
    /// must be aligned, and its length is rounded up to a multiple of `align`; the padding belongs
    /// to the key, so the file stays a chain of keys.
    pub fn reserve_blob(&mut self, len: u64, obj_len: u64, align: u64) -> Result<BlobSlot> {
        let slot = blob_slot(self.end, len, obj_len, align)?;
        self.end = slot.key_offset + slot.total;
        Ok(slot)
    }

    /// Moves the end of the file forward to `to`, over a range that others filled with keys (the
    /// clusters of a distributed writer's ranks, laid out by [`blob_slot`]).
    pub fn advance_end(&mut self, to: u64) -> Result<()> {
        if to < self.end {
            return Err(Error::Internal(format!("moving the end of {} back from {} to {to}", self.path, self.end)));
        }
        self.end = to;
        Ok(())
    }

    /// Pads the end of the file to a multiple of `align` with a free gap (ROOT's convention: a
    /// negative byte count at the start of the gap), so that the next key starts aligned.
    pub fn align_end(&mut self, align: u64) -> Result<()> {
        if align <= 1 || self.end.is_multiple_of(align) {
            return Ok(());
        }
        let mut gap = self.end.next_multiple_of(align) - self.end;
        if gap < 4 {
            gap += align;
        }
        let neg = -i32::try_from(gap).map_err(|_| Error::Invalid(format!("alignment {align} too large")))?;
        self.write_at(self.end, &neg.to_be_bytes())?;
        self.out.record(self.end, gap);
        self.end += gap;
        Ok(())
    }

    /// The open file, for writing reserved ranges with positioned writes from other threads.
    pub fn file(&self) -> &File {
        self.out.file()
    }

    /// The temporary file being written, when the output is replaced atomically at the finish.
    pub fn temporary_path(&self) -> Option<&Path> {
        self.out.temporary_path()
    }

    /// The path the file was created at.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Writes `b` at `offset` (positioned write; does not move the end of the file).
    pub fn write_at(&self, offset: u64, b: &[u8]) -> Result<()> {
        file_io::write_at(self.out.file(), b, offset).map_err(|e| Error::io(format!("writing {} bytes at offset {offset} of {}", b.len(), self.path), e))?;
        self.out.record(offset, b.len() as u64);
        Ok(())
    }

    /// Where the writes of a streaming upload are recorded (an S3 output), for the handles writing
    /// reserved ranges.
    pub(crate) fn upload_window(&self) -> Option<std::sync::Arc<crate::storage::local::upload_window::UploadWindow>> {
        self.out.window()
    }

    /// Appends the anchor key of an RNTuple named `name`; a path `dir/sub/name` puts it into that
    /// subdirectory, made (with its parents) when first named.
    pub fn write_anchor(&mut self, name: &str, a: &Anchor) -> Result<()> {
        let (dir, leaf) = split_path(name);
        if !dir.is_empty() {
            let d = self.subdir(dir)?;
            let (key, _) = self.append_anchor_key(leaf, a, self.dirs[d].seek_dir)?;
            self.dirs[d].list_anchor(leaf, key);
            return Ok(());
        }
        let (key, _) = self.append_anchor_key(name, a, BEGIN)?;
        // A later anchor of the same RNTuple (a checkpoint's) replaces the earlier one in the keys
        // list; the earlier key stays in the file, unlisted.
        match self.own_anchors.iter().find(|(n, _)| n == name) {
            Some(&(_, i)) => self.top_keys[i] = key,
            None => {
                self.own_anchors.push((name.to_string(), self.top_keys.len()));
                self.top_keys.push(key);
            }
        }
        Ok(())
    }

    /// The index of the subdirectory `path` (`d1/d2`), written now (its key and a record without
    /// keys yet, listed by its parent) when it is new. An updated file's own directories are not
    /// added to.
    fn subdir(&mut self, path: &str) -> Result<usize> {
        if let Some(i) = self.dirs.iter().position(|d| d.path == path) {
            return Ok(i);
        }
        let (parent_path, name) = split_path(path);
        let parent = if parent_path.is_empty() {
            if self.had_key(DIRECTORY_CLASS, name) || self.had_key("TDirectoryFile", name) {
                return Err(Error::Unsupported(format!("{}: adding to its existing directory '{name}' is not supported", self.path)));
            }
            None
        } else {
            Some(self.subdir(parent_path)?)
        };
        let seek_parent = parent.map_or(BEGIN, |p| self.dirs[p].seek_dir);
        let key_len = key_header_len(DIRECTORY_CLASS, name, name);
        let seek = self.end;
        let key = key_header((key_len + RECORD_LEN) as u32, RECORD_LEN as u32, seek, seek_parent, DIRECTORY_CLASS, name, name);
        let ctime = datime();
        let uuid = uuid_of(&self.uuid, self.dirs.len());
        self.write_at(seek, &key)?;
        self.write_at(seek + key.len() as u64, &record(ctime, ctime, 0, key_len as u32, seek, seek_parent, 0, &uuid))?;
        self.end = seek + (key_len + RECORD_LEN) as u64;
        match parent {
            Some(p) => self.dirs[p].keys.push(key),
            None => self.top_keys.push(key),
        }
        self.dirs.push(SubDir { path: path.to_string(), seek_dir: seek, key_len: key_len as u64, seek_parent, ctime, keys: Vec::new(), anchors: Vec::new() });
        Ok(self.dirs.len() - 1)
    }

    /// Writes the keys list of every subdirectory at the end of the file; returns where each
    /// directory record goes and what it holds then (written in place once the lists are on disk).
    fn write_subdir_lists(&mut self) -> Result<Vec<(u64, Vec<u8>)>> {
        let mut records = Vec::with_capacity(self.dirs.len());
        for i in 0..self.dirs.len() {
            let payload = self.dirs[i].keys_payload()?;
            let d = &self.dirs[i];
            let name = d.name().to_string();
            let (seek_dir, key_len, seek_parent, ctime) = (d.seek_dir, d.key_len, d.seek_parent, d.ctime);
            let seek_keys = self.end;
            let kl_len = key_header_len(DIRECTORY_CLASS, &name, &name);
            let nbytes_keys = u32::try_from(kl_len + payload.len())
                .map_err(|_| Error::Invalid(format!("the keys list of directory '{name}' is larger than a key can hold")))?;
            let key = key_header(nbytes_keys, payload.len() as u32, seek_keys, seek_dir, DIRECTORY_CLASS, &name, &name);
            self.write_at(seek_keys, &key)?;
            self.write_at(seek_keys + key.len() as u64, &payload)?;
            self.end = seek_keys + nbytes_keys as u64;
            let uuid = uuid_of(&self.uuid, i);
            records.push((seek_dir + key_len, record(ctime, datime(), nbytes_keys, key_len as u32, seek_dir, seek_parent, seek_keys, &uuid)));
        }
        Ok(records)
    }

    /// Appends the anchor key of an RNTuple that the directory does not list (an attribute set's,
    /// as ROOT writes them: a `ROOT::RNTuple` key named after the set, found through the link in
    /// its main RNTuple's footer). Returns the offset and length of the anchor object (the key's
    /// payload).
    pub fn write_hidden_anchor(&mut self, name: &str, a: &Anchor) -> Result<(u64, u64)> {
        self.append_anchor_key(name, a, BEGIN).map(|(_, at)| at)
    }

    /// Writes a `ROOT::RNTuple` key holding `a` at the end of the file, in the directory whose
    /// `fSeekDir` is `seek_pdir`: its header, and the offset and length of its payload.
    fn append_anchor_key(&mut self, name: &str, a: &Anchor, seek_pdir: u64) -> Result<(Vec<u8>, (u64, u64))> {
        let payload = anchor_bytes(a);
        let key_len = key_header_len("ROOT::RNTuple", name, "");
        let seek = self.end;
        let key = key_header((key_len + payload.len()) as u32, payload.len() as u32, seek, seek_pdir, "ROOT::RNTuple", name, "");
        self.write_at(seek, &key)?;
        self.write_at(seek + key.len() as u64, &payload)?;
        self.end = seek + (key.len() + payload.len()) as u64;
        let at = (seek + key.len() as u64, payload.len() as u64);
        Ok((key, at))
    }

    /// Adds the `TStreamerInfo` records of classes of class fields to the StreamerInfo record (a
    /// new file's: an updated file keeps its record); one not there yet makes the next
    /// checkpoint or commit write the record anew.
    pub fn add_streamer_infos(&mut self, infos: &[StreamerInfo]) {
        for c in infos {
            if self.existing_keys.is_none() && !self.classes.iter().any(|o| o.name == c.name && o.version == c.version) {
                self.classes.push(c.clone());
                self.info = None;
            }
        }
    }

    /// Appends the StreamerInfo record describing `ROOT::RNTuple` and the classes added, compressed with the file's
    /// settings when that shrinks it; returns its offset and size.
    fn write_streamer_info(&mut self) -> Result<(u64, u32)> {
        let seek_info = self.end;
        let si_key_len = key_header_len("TList", "StreamerInfo", "Doubly linked list");
        let si = streamer_info_list(si_key_len, &self.classes);
        let mut si_z = Vec::new();
        crate::format::compression::compress(&si, self.compression, &mut si_z)?;
        let nbytes_info = (si_key_len + si_z.len()) as u32;
        let key = key_header(nbytes_info, si.len() as u32, seek_info, BEGIN, "TList", "StreamerInfo", "Doubly linked list");
        self.write_at(seek_info, &key)?;
        self.write_at(seek_info + key.len() as u64, &si_z)?;
        self.end = seek_info + nbytes_info as u64;
        Ok((seek_info, nbytes_info))
    }

    /// Makes the file on disk a complete ROOT file holding everything written so far (the
    /// anchors included), while it stays open for more keys after it: a checkpoint. Returns the
    /// file's end as recorded in its header (`fEND`).
    ///
    /// Order, so that a crash at any instant leaves the previous checkpoint readable:
    /// 1. the keys list, the StreamerInfo record (once) and the free-segments record are appended
    ///    after everything else (nothing the previous checkpoint points at is overwritten);
    /// 2. `fdatasync`: these records and every key before them (the clusters) are on disk;
    /// 3. ONE positioned write of the first `100 + fNbytesName + 60` bytes: the file header
    ///    (`fEND`, `fSeekFree`, `fNbytesFree`, `fSeekInfo`...) and the top directory record
    ///    (`fNbytesKeys`, `fSeekKeys`...) with the TFile key between them, unchanged. It is the
    ///    switch from the previous checkpoint to this one: the previous header points at records
    ///    still intact, this one at records already on disk; a write within one page is not split
    ///    by a killed process, and at a few hundred bytes it lies within the first sector;
    /// 4. `fdatasync` again, so that the checkpoint is durable when this returns;
    /// 5. the first checkpoint of a new file renames it from its temporary name over its
    ///    destination (which so never holds a file without a checkpoint).
    ///
    /// Readers accept the bytes after `fEND` (the clusters written after the checkpoint): ROOT's
    /// `TFile::Init` reads the keys normally when `fSeekKeys > fBEGIN` and `fEND` is not beyond
    /// the file's size, and reads the RNTuple through the keys list; the free-segments record
    /// lists one gap from `fEND` on, as at every commit.
    pub fn checkpoint(&mut self) -> Result<u64> {
        let end = self.write_directory(true)?;
        if self.publish_at_checkpoint {
            self.out.publish()?;
        }
        if self.out.temporary_path().is_none() {
            io_record::durable(self.out.path());
        }
        Ok(end)
    }

    /// The records of a checkpoint; `ordered`: with the two syncs that order them (a file under a
    /// temporary name needs none: it is synced once before its rename).
    fn write_directory(&mut self, ordered: bool) -> Result<u64> {
        let dir_records = self.write_subdir_lists()?;
        // Keys list.
        let name = self.file_name.clone();
        let mut payload = (self.top_keys.len() as u32).to_be_bytes().to_vec();
        for k in &self.top_keys {
            payload.extend_from_slice(k);
        }
        let seek_keys = self.end;
        let kl_len = key_header_len("TFile", &name, "");
        let nbytes_keys = (kl_len + payload.len()) as u32;
        let key = key_header(nbytes_keys, payload.len() as u32, seek_keys, BEGIN, "TFile", &name, "");
        self.write_at(seek_keys, &key)?;
        self.write_at(seek_keys + key.len() as u64, &payload)?;
        self.end = seek_keys + nbytes_keys as u64;
        // A new file gets a StreamerInfo record describing ROOT::RNTuple (once); an updated file
        // keeps its own (ROOT and uproot read the anchor without it).
        let (seek_info, nbytes_info) = match self.info {
            Some(i) => i,
            None => {
                let i = self.write_streamer_info()?;
                self.info = Some(i);
                i
            }
        };
        // Free segments: one entry from the end of the file to beyond it (64-bit form).
        let seek_free = self.end;
        let fl_len = key_header_len("", &name, "");
        let free_payload_len = 2 + 8 + 8;
        let nbytes_free = (fl_len + free_payload_len) as u32;
        let file_end = seek_free + nbytes_free as u64;
        let last = (file_end / 1_000_000_000 + 1) * 1_000_000_000;
        let last = last.max(2_000_000_000);
        let mut fp = Vec::new();
        fp.extend_from_slice(&1001u16.to_be_bytes());
        fp.extend_from_slice(&file_end.to_be_bytes());
        fp.extend_from_slice(&last.to_be_bytes());
        let key = key_header(nbytes_free, free_payload_len as u32, seek_free, BEGIN, "", &name, "");
        self.write_at(seek_free, &key)?;
        self.write_at(seek_free + key.len() as u64, &fp)?;
        self.end = file_end;
        if ordered {
            self.out.sync_data()?;
        }
        // The subdirectories' records now point at their new keys lists (on disk already).
        for (at, r) in &dir_records {
            self.write_at(*at, r)?;
        }
        // File header: the small layout while every offset fits in 31 bits (as ROOT writes
        // small files), else the 64-bit layout (version + 1000000).
        let mut h = Vec::with_capacity(BEGIN as usize + self.tfile_prefix.len() + 60);
        h.extend_from_slice(b"root");
        let small = self.end < (1 << 31);
        if small {
            h.extend_from_slice(&ROOT_VERSION.to_be_bytes());
            h.extend_from_slice(&(BEGIN as u32).to_be_bytes());
            h.extend_from_slice(&(self.end as u32).to_be_bytes());
            h.extend_from_slice(&(seek_free as u32).to_be_bytes());
        } else {
            h.extend_from_slice(&(ROOT_VERSION + 1_000_000).to_be_bytes());
            h.extend_from_slice(&(BEGIN as u32).to_be_bytes());
            h.extend_from_slice(&self.end.to_be_bytes());
            h.extend_from_slice(&seek_free.to_be_bytes());
        }
        h.extend_from_slice(&nbytes_free.to_be_bytes());
        h.extend_from_slice(&1u32.to_be_bytes());
        h.extend_from_slice(&(self.nbytes_name as u32).to_be_bytes());
        h.push(if small { 4 } else { 8 });
        h.extend_from_slice(&self.file_compression.to_be_bytes());
        if small {
            h.extend_from_slice(&(seek_info as u32).to_be_bytes());
        } else {
            h.extend_from_slice(&seek_info.to_be_bytes());
        }
        h.extend_from_slice(&nbytes_info.to_be_bytes());
        h.extend_from_slice(&self.uuid);
        h.resize(BEGIN as usize, 0);
        // The TFile key with the file's name and title, unchanged.
        h.extend_from_slice(&self.tfile_prefix);
        // Directory record (64-bit form, version 1005).
        h.extend_from_slice(&1005u16.to_be_bytes());
        h.extend_from_slice(&self.ctime.to_be_bytes());
        h.extend_from_slice(&datime().to_be_bytes());
        h.extend_from_slice(&nbytes_keys.to_be_bytes());
        h.extend_from_slice(&(self.nbytes_name as u32).to_be_bytes());
        h.extend_from_slice(&BEGIN.to_be_bytes());
        h.extend_from_slice(&0u64.to_be_bytes());
        h.extend_from_slice(&seek_keys.to_be_bytes());
        h.extend_from_slice(&self.uuid);
        if h.len() <= FIRST_SECTOR {
            // One sector's write: the switch from the previous checkpoint to this one.
            self.write_at(0, &h)?;
        } else {
            // An existing file whose name makes its first records end beyond the first sector:
            // the header, then the directory record, each without the TFile key between them
            // (unchanged, so never torn), synced in between: a crash between them leaves the new
            // header with the old directory record, which still lists the previous keys.
            let dir_at = BEGIN as usize + self.tfile_prefix.len();
            self.write_at(0, &h[..BEGIN as usize])?;
            if ordered {
                self.out.sync_data()?;
            }
            self.write_at(dir_at as u64, &h[dir_at..])?;
        }
        if ordered {
            self.out.sync_data()?;
        }
        Ok(self.end)
    }

    /// Writes the keys list, free segments, directory record and file header (a last
    /// [`RootFileWriter::checkpoint`]), syncs the file and, for a new file written under a
    /// temporary name, renames it over its destination. Returns the file size.
    pub fn finish(mut self) -> Result<u64> {
        // In place (update mode, checkpoints), the records are ordered as at a checkpoint, so that
        // a crash leaves the file as it was before; under a temporary name the rename is the switch.
        let in_place = self.out.temporary_path().is_none() || self.publish_at_checkpoint;
        let end = self.write_directory(in_place)?;
        let path = self.out.path().to_path_buf();
        self.out.commit()?;
        io_record::durable(&path);
        Ok(end)
    }
}

/// Bytes a checkpoint rewrites at the start of a new file, at most: the header, the TFile key with
/// the file's name and title, and the directory record must end within the first 512-byte
/// sector, so that the rewrite is one sector's write, which a power loss cannot tear (a torn
/// write there would leave neither the old checkpoint nor the new one readable).
pub(crate) const FIRST_SECTOR: usize = 512;

/// The name a new file records (in its TFile key and its directory's records): its file name, cut
/// to the longest prefix (at a character boundary) with which the header, the TFile key and the
/// directory record end within [`FIRST_SECTOR`] bytes (a name of about 150 bytes and more; ROOT
/// reads the name only for display).
pub(crate) fn stored_file_name(name: &str) -> String {
    let region = |n: &str| BEGIN as usize + key_header_len("TFile", n, "") + tstring_len(n) + tstring_len("") + 60;
    let mut end = name.len();
    while end > 0 && (!name.is_char_boundary(end) || region(&name[..end]) > FIRST_SECTOR) {
        end -= 1;
    }
    name[..end].to_string()
}

/// Checkpoints into byte ranges handed out by others (a distributed writer's ranks share the
/// file's space through one allocator: a checkpoint's records must fit the range it reserved).
impl RootFileWriter {
    /// An upper bound of the bytes the next [`RootFileWriter::checkpoint`] appends after the
    /// RNTuple `anchor_name`'s new anchor key (counted in): the anchor key, the directories'
    /// records and keys lists, the StreamerInfo record and the free-segments record, with room
    /// to spare. Records are never compressed to more than their own bytes.
    pub fn checkpoint_bound(&self, anchor_name: &str) -> Result<u64> {
        let (dir, leaf) = split_path(anchor_name);
        let anchor = (key_header_len("ROOT::RNTuple", leaf, "") + anchor_bytes(&Anchor::default()).len()) as u64;
        let mut total = anchor;
        // Directories made for the anchor when it is the first (their key and record).
        let mut d = dir;
        while !d.is_empty() {
            let (parent, name) = split_path(d);
            total += (key_header_len(DIRECTORY_CLASS, name, name) + RECORD_LEN) as u64;
            d = parent;
        }
        let mut listed = 0u64;
        for sub in &self.dirs {
            let name = sub.name();
            listed += (key_header_len(DIRECTORY_CLASS, name, name) + RECORD_LEN) as u64;
            total += (key_header_len(DIRECTORY_CLASS, name, name) + sub.keys_payload()?.len()) as u64 + anchor;
        }
        let name = &self.file_name;
        total += (key_header_len("TFile", name, "") + 4) as u64 + self.top_keys.iter().map(|k| k.len() as u64).sum::<u64>() + anchor + listed;
        let si_key_len = key_header_len("TList", "StreamerInfo", "Doubly linked list");
        total += (si_key_len + streamer_info_list(si_key_len, &self.classes).len()) as u64;
        total += (key_header_len("", name, "") + 2 + 8 + 8) as u64;
        Ok(total + 4096)
    }

    /// Moves the end of the file forward to `to`, marking the bytes skipped as a free gap (ROOT's
    /// convention, as [`RootFileWriter::align_end`]): the unused tail of a reserved range.
    pub fn pad_to(&mut self, to: u64) -> Result<()> {
        if to < self.end {
            return Err(Error::Internal(format!("padding {} back from {} to {to}", self.path, self.end)));
        }
        let gap = to - self.end;
        if gap >= 4 {
            let neg = -i32::try_from(gap).map_err(|_| Error::Invalid(format!("a gap of {gap} bytes in {}", self.path)))?;
            self.write_at(self.end, &neg.to_be_bytes())?;
        }
        self.out.record(self.end, gap);
        self.end = to;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_files_first_records_end_within_the_first_sector() {
        assert_eq!(stored_file_name("out.root"), "out.root");
        for n in [100, 150, 155, 200, 255] {
            let long: String = "é".repeat(n / 2) + &"x".repeat(n % 2);
            let stored = stored_file_name(&long);
            assert!(long.starts_with(&stored));
            let region = BEGIN as usize + key_header_len("TFile", &stored, "") + tstring_len(&stored) + tstring_len("") + 60;
            assert!(region <= FIRST_SECTOR, "{n}: {region}");
            let one_more = &long[..stored.len() + long[stored.len()..].chars().next().map_or(0, char::len_utf8)];
            if stored.len() < long.len() {
                let more = BEGIN as usize + key_header_len("TFile", one_more, "") + tstring_len(one_more) + tstring_len("") + 60;
                assert!(more > FIRST_SECTOR, "{n}: the name was cut more than needed");
            }
        }
    }
}
