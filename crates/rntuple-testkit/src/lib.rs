//! Forging ROOT files in memory, for tests, fuzzing and the hostile-file examples: the test-support
//! crate of `rntuple` (it uses the library's `unstable` internals and is not part of its API).
//!
//! A [`FileForge`] assembles a complete ROOT file in a `Vec<u8>`: the file header, the TFile key
//! with the top directory, RBlob keys holding envelopes and pages, `ROOT::RNTuple` anchor keys,
//! subdirectories, the keys lists, a StreamerInfo record and the free-segments record, laid out as
//! the writer lays out a file (see `storage::container::tfile_write`). Nothing in it checks that a descriptor
//! is sane: an arbitrary [`Descriptor`] is serialized into envelopes with valid checksums, so
//! that a hostile or random descriptor reaches the parsers and readers behind the checksums. With
//! a sane descriptor the file is one this reader and ROOT read.
//!
//! [`disassemble`] reads the RNTuples of an existing file back into descriptors and stored page
//! bytes (through the envelope parsers, not the reader, so that its checks do not apply), and
//! [`reassemble`] writes them into a fresh file, so a test can start from a file the writer wrote,
//! change a count or a size in its descriptor or a page, and get a file with valid checksums.
//!
//! ```
//! use rntuple_testkit::{push_column, push_field, single_group, FileForge, NTupleOptions, column_range};
//! use rntuple::format::descriptor::{ClusterDescriptor, Descriptor, Role};
//! use rntuple::primitives::column_type::ColumnType;
//! let mut d = Descriptor { name: "Events".into(), ..Default::default() };
//! let x = push_field(&mut d, None, Role::Leaf, "x", "float");
//! push_column(&mut d, x, ColumnType::Real32);
//! let mut f = FileForge::new("forged.root");
//! let raw: Vec<u8> = [1.5f32, 2.5].iter().flat_map(|v| v.to_le_bytes()).collect();
//! let page = f.page(&raw, 2, true);
//! d.clusters.push(ClusterDescriptor { id: 0, first_entry: 0, n_entries: 2, columns: vec![Some(column_range(0, 0, vec![page]))] });
//! single_group(&mut d);
//! f.add_ntuple(rntuple_testkit::TOP, &mut d, &NTupleOptions::default())?;
//! let file = rntuple::RNTupleFile::from_bytes(f.finish()?)?;
//! assert_eq!(file.reader("Events")?.num_entries(), 2);
//! # Ok::<(), rntuple::Error>(())
//! ```

use rntuple::format::anchor::{Anchor, AnchorStatus};
use rntuple::format::compression;
use rntuple::format::cursor::Locator;
use rntuple::format::descriptor::*;
use rntuple::format::envelope::{self, ENVELOPE_FOOTER, ENVELOPE_HEADER, ENVELOPE_PAGE_LIST};
use rntuple::format::serialize;
use rntuple::primitives::column_type::ColumnType;
use rntuple::primitives::encode::{encode_page, PageValues};
use rntuple::storage::container::tfile::{read_blob, RootFile};
use rntuple::storage::container::tfile_write::{anchor_bytes, key_header_at, tstring, tstring_len, ROOT_VERSION};
use rntuple::storage::local::source::{MemSource, ReadAt};
use rntuple::{Error, Result};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Where the TFile key starts (`fBEGIN`).
const BEGIN: u64 = 100;
/// Length of a directory record (64-bit form, version 1005, with its UUID).
const DIR_RECORD: usize = 60;
/// A fixed key date (2026-01-01 00:00), so that forged files are reproducible.
const DATIME: u32 = (31 << 26) | (1 << 22) | (1 << 17);
/// ROOT's default maximum key size (1 GiB), written into forged anchors.
pub const DEFAULT_MAX_KEY_SIZE: u64 = 1 << 30;

/// A directory of a forged file: [`TOP`] or one made by [`FileForge::directory`].
pub type DirId = usize;
/// The top directory.
pub const TOP: DirId = 0;

/// A TKey header as the writer writes it, with the fixed [`DATIME`].
fn key_header(nbytes: u32, obj_len: u32, seek_key: u64, seek_pdir: u64, class: &str, name: &str, title: &str) -> Vec<u8> {
    key_header_at(DATIME, nbytes, obj_len, seek_key, seek_pdir, class, name, title)
}

/// A key header's length for these strings.
fn key_len(class: &str, name: &str, title: &str) -> usize {
    34 + tstring_len(class) + tstring_len(name) + tstring_len(title)
}

fn u32_of(n: usize, what: &str) -> Result<u32> {
    u32::try_from(n).map_err(|_| Error::Invalid(format!("forge: {what} of {n} bytes does not fit a key")))
}

/// A directory being assembled.
struct Dir {
    /// Offset of its key (`fSeekDir`): 100 for the top directory.
    seek_dir: u64,
    /// Its parent's `seek_dir` (0 for the top directory).
    seek_parent: u64,
    /// Where its directory record goes.
    record_at: u64,
    /// `fNbytesName` of the record.
    nbytes_name: u32,
    /// Headers of the keys listed in it, in order.
    keys: Vec<Vec<u8>>,
    /// Header of its own key (subdirectories), to list it again under other names.
    own_key: Vec<u8>,
}

/// Options of [`FileForge::put_ntuple`].
#[derive(Debug, Clone, Copy)]
pub struct NTupleOptions {
    /// Compression settings of the header, footer and page lists (0: stored raw).
    pub compression: u32,
    /// The anchor's maximum key size.
    pub max_key_size: u64,
    /// The anchor's format version (epoch, major, minor, patch).
    pub version: [u16; 4],
}

impl Default for NTupleOptions {
    fn default() -> Self {
        NTupleOptions { compression: 505, max_key_size: DEFAULT_MAX_KEY_SIZE, version: [1, 0, 0, 1] }
    }
}

/// An in-memory ROOT file under assembly.
pub struct FileForge {
    buf: Vec<u8>,
    file_name: String,
    dirs: Vec<Dir>,
    /// Compression setting written into the file header.
    compression: u32,
}

impl FileForge {
    /// Starts a file: header placeholder and the TFile key with the top directory.
    pub fn new(file_name: &str) -> FileForge {
        let obj_len = tstring_len(file_name) + tstring_len("") + DIR_RECORD;
        let klen = key_len("TFile", file_name, "");
        let mut buf = vec![0u8; BEGIN as usize];
        buf.extend(key_header((klen + obj_len) as u32, obj_len as u32, BEGIN, 0, "TFile", file_name, ""));
        tstring(&mut buf, file_name);
        tstring(&mut buf, "");
        let nbytes_name = (klen + tstring_len(file_name) + tstring_len("")) as u32;
        let record_at = buf.len() as u64;
        buf.extend_from_slice(&[0u8; DIR_RECORD]);
        let top = Dir { seek_dir: BEGIN, seek_parent: 0, record_at, nbytes_name, keys: Vec::new(), own_key: Vec::new() };
        FileForge { buf, file_name: file_name.to_string(), dirs: vec![top], compression: 505 }
    }

    /// The bytes written so far (the header and records are filled in by [`FileForge::finish`]).
    pub fn bytes(&self) -> &[u8] {
        &self.buf
    }

    /// The offset of the next key.
    pub fn end(&self) -> u64 {
        self.buf.len() as u64
    }

    /// Appends an RBlob key holding `payload` (its uncompressed length `obj_len`); returns the
    /// payload's offset.
    pub fn blob(&mut self, payload: &[u8], obj_len: u64) -> u64 {
        let klen = key_len("RBlob", "", "");
        let seek = self.end();
        let nbytes = (klen + payload.len()).min(u32::MAX as usize) as u32;
        self.buf.extend(key_header(nbytes, obj_len.min(u32::MAX as u64) as u32, seek, BEGIN, "RBlob", "", ""));
        self.buf.extend_from_slice(payload);
        seek + klen as u64
    }

    /// Appends a page of `stored` bytes holding `n_elements` elements, followed by its XXH3 when
    /// `checksum`; returns its page descriptor (cluster-local first element 0: see
    /// [`column_range`]).
    pub fn page(&mut self, stored: &[u8], n_elements: u32, checksum: bool) -> PageDescriptor {
        let mut payload = stored.to_vec();
        if checksum {
            payload.extend_from_slice(&page_checksum(stored));
        }
        let offset = self.blob(&payload, payload.len() as u64);
        PageDescriptor { n_elements, has_checksum: checksum, locator: Locator { size: stored.len() as u64, offset }, first_in_cluster: 0 }
    }

    /// Creates a subdirectory of `parent` named `name`, listed in `parent`'s keys list.
    pub fn directory(&mut self, parent: DirId, name: &str) -> Result<DirId> {
        let p = self.dirs.get(parent).ok_or_else(|| Error::Invalid(format!("forge: no directory {parent}")))?;
        let seek_parent = p.seek_dir;
        let seek = self.end();
        let klen = key_len("TDirectory", name, "");
        let key = key_header((klen + DIR_RECORD) as u32, DIR_RECORD as u32, seek, seek_parent, "TDirectory", name, "");
        self.buf.extend_from_slice(&key);
        let record_at = self.end();
        self.buf.extend_from_slice(&[0u8; DIR_RECORD]);
        self.dirs[parent].keys.push(key.clone());
        self.dirs.push(Dir { seek_dir: seek, seek_parent, record_at, nbytes_name: klen as u32, keys: Vec::new(), own_key: key });
        Ok(self.dirs.len() - 1)
    }

    /// Lists directory `target` a second time in `parent`'s keys list, under another name (the
    /// key points at the same directory record).
    pub fn list_directory_again(&mut self, parent: DirId, target: DirId, name: &str) -> Result<()> {
        let t = self.dirs.get(target).filter(|_| target != TOP).ok_or_else(|| Error::Invalid(format!("forge: no subdirectory {target}")))?;
        let klen = key_len("TDirectory", name, "");
        let key = key_header((klen + DIR_RECORD) as u32, DIR_RECORD as u32, t.seek_dir, t.seek_parent, "TDirectory", name, "");
        debug_assert!(!t.own_key.is_empty());
        let p = self.dirs.get_mut(parent).ok_or_else(|| Error::Invalid(format!("forge: no directory {parent}")))?;
        p.keys.push(key);
        Ok(())
    }

    /// Appends the anchor key of an RNTuple named `name` in directory `dir`.
    pub fn anchor(&mut self, dir: DirId, name: &str, a: &Anchor) -> Result<()> {
        let seek_pdir = self.dirs.get(dir).ok_or_else(|| Error::Invalid(format!("forge: no directory {dir}")))?.seek_dir;
        let payload = anchor_bytes(a);
        let klen = key_len("ROOT::RNTuple", name, "");
        let seek = self.end();
        let key = key_header(u32_of(klen + payload.len(), "anchor key")?, payload.len() as u32, seek, seek_pdir, "ROOT::RNTuple", name, "");
        self.buf.extend_from_slice(&key);
        self.buf.extend_from_slice(&payload);
        self.dirs[dir].keys.push(key);
        Ok(())
    }

    /// Serializes `desc` (header, one page list per cluster group, footer) into RBlob keys and
    /// returns the anchor pointing at them, without writing it (see [`FileForge::anchor`]).
    /// `desc.header_checksum` and every cluster group's page-list link are set; cluster group `g`
    /// gets the next `n_clusters` clusters of `desc.clusters` (fewer when they run out). `tweak`
    /// sees each envelope (type, bytes) before compression and may change it; its checksum is
    /// recomputed afterwards, except for the header, whose checksum the footer and page lists
    /// repeat (a tweaked header is resealed, and the copies follow).
    pub fn put_ntuple_with(&mut self, desc: &mut Descriptor, opts: &NTupleOptions, tweak: &mut dyn FnMut(u16, &mut Vec<u8>)) -> Result<Anchor> {
        let (mut hb, _) = serialize::header(desc);
        tweak(ENVELOPE_HEADER, &mut hb);
        desc.header_checksum = reseal_envelope(&mut hb);
        let (seek_header, nbytes_header) = self.put_envelope(&hb, opts.compression)?;
        let mut next = 0usize;
        for g in 0..desc.cluster_groups.len() {
            let n = desc.cluster_groups[g].n_clusters as usize;
            let end = next.saturating_add(n).min(desc.clusters.len());
            let listed: Vec<ClusterDescriptor> = desc.clusters[next.min(end)..end].iter().map(trimmed).collect();
            next = end;
            let mut pl = serialize::page_list(desc.header_checksum, &listed);
            tweak(ENVELOPE_PAGE_LIST, &mut pl);
            reseal_envelope(&mut pl);
            let (offset, size) = self.put_envelope(&pl, opts.compression)?;
            desc.cluster_groups[g].page_list = EnvelopeLink { length: pl.len() as u64, locator: Locator { size, offset } };
        }
        let mut fb = serialize::footer(desc);
        tweak(ENVELOPE_FOOTER, &mut fb);
        reseal_envelope(&mut fb);
        let (seek_footer, nbytes_footer) = self.put_envelope(&fb, opts.compression)?;
        let [epoch, major, minor, patch] = opts.version;
        Ok(Anchor {
            epoch,
            major,
            minor,
            patch,
            seek_header,
            nbytes_header,
            len_header: hb.len() as u64,
            seek_footer,
            nbytes_footer,
            len_footer: fb.len() as u64,
            max_key_size: opts.max_key_size,
        })
    }

    /// [`FileForge::put_ntuple_with`] without changes to the envelopes.
    pub fn put_ntuple(&mut self, desc: &mut Descriptor, opts: &NTupleOptions) -> Result<Anchor> {
        self.put_ntuple_with(desc, opts, &mut |_, _| {})
    }

    /// Serializes `desc` and writes its anchor, named `desc.name`, into directory `dir`.
    pub fn add_ntuple(&mut self, dir: DirId, desc: &mut Descriptor, opts: &NTupleOptions) -> Result<Anchor> {
        let a = self.put_ntuple(desc, opts)?;
        let name = desc.name.clone();
        self.anchor(dir, &name, &a)?;
        Ok(a)
    }

    /// Serializes the attribute set `set` (an RNTuple of its own, named as the set) and writes its
    /// anchor into a blob that no directory lists, as ROOT's attribute writer does; returns the
    /// link to push to the main RNTuple's `attribute_sets` (schema version 1.0, the anchor's
    /// locator). The one place that forges an attribute set's placement.
    pub fn put_attribute_set(&mut self, set: &mut Descriptor, opts: &NTupleOptions) -> Result<AttributeSetLink> {
        let anchor = self.put_ntuple(set, opts)?;
        let bytes = anchor_bytes(&anchor);
        let offset = self.blob(&bytes, bytes.len() as u64);
        let len = bytes.len() as u32;
        Ok(AttributeSetLink { schema_major: 1, schema_minor: 0, anchor_length: len, anchor: Locator { size: len as u64, offset }, name: set.name.clone() })
    }

    /// Compresses an envelope and appends it as a blob; returns (offset, stored size).
    fn put_envelope(&mut self, env: &[u8], settings: u32) -> Result<(u64, u64)> {
        let mut z = Vec::new();
        compression::compress(env, compression::Compression::from_settings(settings)?, &mut z)?;
        Ok((self.blob(&z, env.len() as u64), z.len() as u64))
    }

    /// Writes the keys lists, the StreamerInfo record, the free-segments record, the directory
    /// records and the file header; returns the file.
    pub fn finish(mut self) -> Result<Vec<u8>> {
        // Keys lists, subdirectories first.
        let mut lists = vec![(0u64, 0u32); self.dirs.len()];
        for d in (0..self.dirs.len()).rev() {
            let (class, name) = if d == TOP { ("TFile", self.file_name.clone()) } else { ("TDirectory", String::new()) };
            let mut payload = (self.dirs[d].keys.len() as u32).to_be_bytes().to_vec();
            for k in &self.dirs[d].keys {
                payload.extend_from_slice(k);
            }
            let seek = self.end();
            let nbytes = u32_of(key_len(class, &name, "") + payload.len(), "keys list")?;
            self.buf.extend(key_header(nbytes, payload.len() as u32, seek, self.dirs[d].seek_dir, class, &name, ""));
            self.buf.extend_from_slice(&payload);
            lists[d] = (seek, nbytes);
        }
        // StreamerInfo, stored raw.
        let seek_info = self.end();
        let si_len = key_len("TList", "StreamerInfo", "Doubly linked list");
        let si = rntuple::storage::container::streamer_info::rntuple_streamer_info(si_len);
        let nbytes_info = u32_of(si_len + si.len(), "StreamerInfo")?;
        self.buf.extend(key_header(nbytes_info, si.len() as u32, seek_info, BEGIN, "TList", "StreamerInfo", "Doubly linked list"));
        self.buf.extend_from_slice(&si);
        // Free segments: from the end of the file to beyond it.
        let seek_free = self.end();
        let nbytes_free = (key_len("", &self.file_name, "") + 18) as u32;
        let file_end = seek_free + nbytes_free as u64;
        self.buf.extend(key_header(nbytes_free, 18, seek_free, BEGIN, "", &self.file_name, ""));
        self.buf.extend_from_slice(&1001u16.to_be_bytes());
        self.buf.extend_from_slice(&file_end.to_be_bytes());
        self.buf.extend_from_slice(&(file_end / 1_000_000_000 + 2).saturating_mul(1_000_000_000).to_be_bytes());
        let mut uuid = [0u8; 18];
        uuid[1] = 1;
        // Directory records.
        for (d, &(seek_keys, nbytes_keys)) in lists.iter().enumerate() {
            let dir = &self.dirs[d];
            let mut r = Vec::with_capacity(DIR_RECORD);
            r.extend_from_slice(&1005u16.to_be_bytes());
            r.extend_from_slice(&DATIME.to_be_bytes());
            r.extend_from_slice(&DATIME.to_be_bytes());
            r.extend_from_slice(&nbytes_keys.to_be_bytes());
            r.extend_from_slice(&dir.nbytes_name.to_be_bytes());
            r.extend_from_slice(&dir.seek_dir.to_be_bytes());
            r.extend_from_slice(&dir.seek_parent.to_be_bytes());
            r.extend_from_slice(&seek_keys.to_be_bytes());
            r.extend_from_slice(&uuid);
            let at = dir.record_at as usize;
            self.buf[at..at + DIR_RECORD].copy_from_slice(&r);
        }
        // File header: the small layout while every offset fits in 31 bits.
        let mut h = Vec::with_capacity(BEGIN as usize);
        h.extend_from_slice(b"root");
        let small = file_end < (1 << 31);
        let word = |h: &mut Vec<u8>, v: u64| {
            if small {
                h.extend_from_slice(&(v as u32).to_be_bytes())
            } else {
                h.extend_from_slice(&v.to_be_bytes())
            }
        };
        h.extend_from_slice(&(if small { ROOT_VERSION } else { ROOT_VERSION + 1_000_000 }).to_be_bytes());
        h.extend_from_slice(&(BEGIN as u32).to_be_bytes());
        word(&mut h, file_end);
        word(&mut h, seek_free);
        h.extend_from_slice(&nbytes_free.to_be_bytes());
        h.extend_from_slice(&1u32.to_be_bytes());
        h.extend_from_slice(&self.dirs[TOP].nbytes_name.to_be_bytes());
        h.push(if small { 4 } else { 8 });
        h.extend_from_slice(&self.compression.to_be_bytes());
        word(&mut h, seek_info);
        h.extend_from_slice(&nbytes_info.to_be_bytes());
        h.extend_from_slice(&uuid);
        h.resize(BEGIN as usize, 0);
        self.buf[..BEGIN as usize].copy_from_slice(&h);
        Ok(self.buf)
    }
}

/// A cluster as the page list lists it: trailing columns without a range are left out (the
/// format's way of saying that they did not exist yet), instead of being written as suppressed.
fn trimmed(c: &ClusterDescriptor) -> ClusterDescriptor {
    let n = c.columns.iter().rposition(|r| r.is_some()).map_or(0, |i| i + 1);
    ClusterDescriptor { id: c.id, first_entry: c.first_entry, n_entries: c.n_entries, columns: c.columns[..n].to_vec() }
}

/// The 8 bytes that follow a page on disk: the XXH3 of its stored bytes, little-endian.
pub fn page_checksum(stored: &[u8]) -> [u8; 8] {
    xxhash_rust::xxh3::xxh3_64(stored).to_le_bytes()
}

/// Recomputes an envelope's XXH3 trailer (its last 8 bytes) after its bytes were changed; returns
/// the new checksum. An envelope shorter than its trailer is left as it is.
pub fn reseal_envelope(env: &mut [u8]) -> u64 {
    let Some(n) = env.len().checked_sub(8) else { return 0 };
    let sum = xxhash_rust::xxh3::xxh3_64(&env[..n]);
    env[n..].copy_from_slice(&sum.to_le_bytes());
    sum
}

/// Recomputes, in a whole file, the checksum of the page at `loc` (written right after it) after
/// its bytes were patched in place.
pub fn reseal_page(file: &mut [u8], loc: &Locator) -> Result<()> {
    let start = usize::try_from(loc.offset).map_err(|_| Error::Invalid("forge: page offset".into()))?;
    let end = start.checked_add(loc.size as usize).filter(|e| e + 8 <= file.len()).ok_or_else(|| Error::Invalid("forge: page beyond the file".into()))?;
    let sum = page_checksum(&file[start..end]);
    file[end..end + 8].copy_from_slice(&sum);
    Ok(())
}

/// Encodes values as the (uncompressed) bytes of a page of column type `ty`.
pub fn encode(ty: ColumnType, vals: PageValues) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    encode_page(ty, vals, &mut out)?;
    Ok(out)
}

/// Compresses page or envelope bytes with ROOT's settings and block framing (stored raw when
/// that does not shrink them).
pub fn compress(raw: &[u8], settings: u32) -> Result<Vec<u8>> {
    let mut z = Vec::new();
    compression::compress(raw, compression::Compression::from_settings(settings)?, &mut z)?;
    Ok(z)
}

pub use rntuple::logical::build::{column_range, push_column, push_field, single_group};

/// An RNTuple taken apart: where it was, its descriptor as the envelopes say, and the stored
/// bytes of its pages.
#[derive(Debug, Clone)]
pub struct NTupleParts {
    /// The directories above its anchor key (empty: the top directory).
    pub dirs: Vec<String>,
    /// The anchor key's name.
    pub key_name: String,
    /// The anchor as read.
    pub anchor: Anchor,
    /// Header, footer and page lists parsed (clusters in cluster-group order).
    pub desc: Descriptor,
    /// Stored bytes of each page (without the checksum that follows it), by the page's offset in
    /// the original file; [`reassemble`] looks a page descriptor's bytes up by its locator's offset.
    pub pages: BTreeMap<u64, Vec<u8>>,
    /// Compression settings for the re-written envelopes (505 when the originals were compressed).
    pub compression: u32,
}

/// Reads every usable RNTuple of a file into [`NTupleParts`], through the envelope parsers only.
pub fn disassemble(bytes: &[u8]) -> Result<Vec<NTupleParts>> {
    let src: Arc<dyn ReadAt> = Arc::new(MemSource(Arc::new(bytes.to_vec())));
    let root = RootFile::open(src.clone())?;
    let mut out = Vec::new();
    for e in &root.ntuples {
        let AnchorStatus::Ok(a) = e.anchor else { continue };
        let envelope_bytes = |seek: u64, nbytes: u64, len: u64, what: &str| -> Result<Vec<u8>> {
            if len > bytes.len() as u64 * 1024 + (1 << 20) {
                return Err(Error::Invalid(format!("forge: {what} of {len} bytes")));
            }
            let stored = read_blob(&*src, seek, nbytes, a.max_key_size, what)?;
            compression::decompress(&stored, len as usize, what, seek)
        };
        let mut desc = envelope::parse_header(&envelope_bytes(a.seek_header, a.nbytes_header, a.len_header, "header")?)?;
        envelope::parse_footer(&envelope_bytes(a.seek_footer, a.nbytes_footer, a.len_footer, "footer")?, &mut desc)?;
        for g in 0..desc.cluster_groups.len() {
            let l = desc.cluster_groups[g].page_list;
            envelope::parse_page_list(&envelope_bytes(l.locator.offset, l.locator.size, l.length, "page list")?, &mut desc, g)?;
        }
        let mut pages = BTreeMap::new();
        for c in &desc.clusters {
            for p in c.columns.iter().flatten().flat_map(|r| &r.pages) {
                if let std::collections::btree_map::Entry::Vacant(v) = pages.entry(p.locator.offset) {
                    v.insert(read_blob(&*src, p.locator.offset, p.locator.size, a.max_key_size, "page")?);
                }
            }
        }
        let mut dirs: Vec<String> = e.path.split('/').map(str::to_string).collect();
        // The key name itself may hold a '/': the path is the directories, then the key name.
        let n_dirs = dirs.len().saturating_sub(e.key.name.split('/').count());
        dirs.truncate(n_dirs);
        let compression = if a.nbytes_header < a.len_header { 505 } else { 0 };
        out.push(NTupleParts { dirs, key_name: e.key.name.clone(), anchor: a, desc, pages, compression });
    }
    Ok(out)
}

/// Writes RNTuples taken apart by [`disassemble`] (and possibly changed) into a new file: every
/// page descriptor's bytes are looked up by its locator's offset and written again (with a fresh
/// checksum when it has one), its locator then points at them; the envelopes are re-serialized
/// from the descriptors. A page whose bytes are missing is written empty.
pub fn reassemble(parts: &[NTupleParts]) -> Result<Vec<u8>> {
    reassemble_with(parts, &mut |_, _| {}, &mut |_| {})
}

/// [`reassemble`], with `tweak` seeing every envelope before it is sealed (see
/// [`FileForge::put_ntuple_with`]) and `anchor` every anchor before it is written (its checksum is
/// computed afterwards): for lying envelope lengths and sizes.
pub fn reassemble_with(parts: &[NTupleParts], tweak: &mut dyn FnMut(u16, &mut Vec<u8>), anchor: &mut dyn FnMut(&mut Anchor)) -> Result<Vec<u8>> {
    let mut f = FileForge::new("forged.root");
    let mut made: BTreeMap<Vec<String>, DirId> = BTreeMap::new();
    for p in parts {
        let mut desc = p.desc.clone();
        for c in &mut desc.clusters {
            for r in c.columns.iter_mut().flatten() {
                for pg in &mut r.pages {
                    let bytes = p.pages.get(&pg.locator.offset).map(Vec::as_slice).unwrap_or(&[]);
                    *pg = PageDescriptor { first_in_cluster: pg.first_in_cluster, ..f.page(bytes, pg.n_elements, pg.has_checksum) };
                }
            }
        }
        let mut dir = TOP;
        for i in 0..p.dirs.len() {
            let path = p.dirs[..=i].to_vec();
            dir = match made.get(&path) {
                Some(&d) => d,
                None => {
                    let d = f.directory(dir, &p.dirs[i])?;
                    made.insert(path, d);
                    d
                }
            };
        }
        let a = p.anchor;
        let opts = NTupleOptions { compression: p.compression, max_key_size: a.max_key_size, version: [a.epoch, a.major, a.minor, a.patch] };
        let mut written = f.put_ntuple_with(&mut desc, &opts, tweak)?;
        anchor(&mut written);
        f.anchor(dir, &p.key_name, &written)?;
    }
    f.finish()
}
