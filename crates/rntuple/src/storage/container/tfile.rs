//! The ROOT file container: file header, TKeys, directories, and the RNTuple anchor objects.
//! All container integers are big-endian.

use crate::storage::local::source::ReadAt;
use crate::error::{Error, Result};
use crate::format::anchor::{parse_anchor, Anchor, AnchorStatus};
use crate::format::compression;
use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// A parsed TKey header.
#[derive(Debug, Clone)]
pub struct KeyHeader {
    /// Total stored size (header + payload).
    pub nbytes: i32,
    /// Key version (>1000 = 64-bit seeks).
    pub version: u16,
    /// Uncompressed payload length.
    pub obj_len: u32,
    /// Header length.
    pub key_len: u16,
    /// Cycle number.
    pub cycle: u16,
    /// Offset of the key itself.
    pub seek_key: u64,
    /// Offset of the parent directory.
    pub seek_pdir: u64,
    /// Class name.
    pub class_name: String,
    /// Object name.
    pub name: String,
    /// Title.
    pub title: String,
}

/// Big-endian reader over a buffer whose first byte sits at file offset `base`.
struct Be<'a> {
    b: &'a [u8],
    pos: usize,
    base: u64,
}

impl<'a> Be<'a> {
    fn err(&self, what: &str) -> Error {
        Error::corrupt(format!("{what}: truncated"), self.base + self.pos as u64)
    }
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        if self.b.len() - self.pos < n {
            return Err(self.err(what));
        }
        let s = &self.b[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    fn u16(&mut self, what: &str) -> Result<u16> {
        let s = self.take(2, what)?;
        Ok(u16::from_be_bytes([s[0], s[1]]))
    }
    fn u32(&mut self, what: &str) -> Result<u32> {
        let s = self.take(4, what)?;
        Ok(u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
    }
    fn u64(&mut self, what: &str) -> Result<u64> {
        let s = self.take(8, what)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(s);
        Ok(u64::from_be_bytes(a))
    }
    fn tstring(&mut self, what: &str) -> Result<String> {
        let mut n = self.take(1, what)?[0] as usize;
        if n == 255 {
            n = self.u32(what)? as usize;
        }
        let s = self.take(n, what)?;
        Ok(String::from_utf8_lossy(s).into_owned())
    }
}

fn parse_key_header(b: &[u8], base: u64) -> Result<(KeyHeader, usize)> {
    let mut r = Be { b, pos: 0, base };
    let nbytes = r.u32("key size")? as i32;
    let version = r.u16("key version")?;
    let obj_len = r.u32("key object length")?;
    let _datime = r.u32("key date")?;
    let key_len = r.u16("key header length")?;
    let cycle = r.u16("key cycle")?;
    let big = version > 1000;
    let seek_key = if big { r.u64("key seek")? } else { r.u32("key seek")? as u64 };
    let seek_pdir = if big { r.u64("key parent seek")? } else { r.u32("key parent seek")? as u64 };
    let class_name = r.tstring("key class name")?;
    let name = r.tstring("key name")?;
    let title = r.tstring("key title")?;
    Ok((KeyHeader { nbytes, version, obj_len, key_len, cycle, seek_key, seek_pdir, class_name, name, title }, r.pos))
}

/// An RNTuple found in a file: its path (directory/name), its key and its anchor (or why the
/// anchor cannot be used).
#[derive(Debug, Clone)]
pub struct NTupleEntry {
    /// Path of the RNTuple in the file (`dir/sub/name`).
    pub path: String,
    /// The key holding the anchor.
    pub key: KeyHeader,
    /// The anchor, or the reason it is refused.
    pub anchor: AnchorStatus,
}

/// A ROOT file opened for reading RNTuples.
pub struct RootFile {
    src: Arc<dyn ReadAt>,
    /// ROOT version that wrote the file (e.g. 64000).
    pub root_version: u32,
    /// Every RNTuple found through the keys of the top directory and its subdirectories.
    pub ntuples: Vec<NTupleEntry>,
    /// Every key of every directory walked, every cycle, depth first in keys-list order:
    /// (path, class name, cycle).
    pub keys: Vec<(String, String, u16)>,
    /// The keys lists walked so far: each directory is walked once, however often it is listed.
    walked: HashSet<u64>,
}

/// Most keys (over all directories) a file may list before walking stops with an error.
pub const MAX_KEYS: usize = 1 << 20;

const MAX_DIR_DEPTH: usize = 64;

impl RootFile {
    /// Parses the file header and walks the directory tree.
    pub fn open(src: Arc<dyn ReadAt>) -> Result<Self> {
        let (_, version, begin) = file_header(&*src)?;
        let mut f = RootFile { src, root_version: version % 1_000_000, ntuples: Vec::new(), keys: Vec::new(), walked: HashSet::new() };
        // The TFile key at fBEGIN carries the top directory record after its name and title.
        let (key, payload) = f.read_key(begin, "top directory key")?;
        let mut r = Be { b: &payload, pos: 0, base: begin + key.key_len as u64 };
        let _name = r.tstring("file name")?;
        let _title = r.tstring("file title")?;
        let seek_keys = parse_dir_record(&mut r)?;
        f.walk_dir(seek_keys, String::new(), 0)?;
        Ok(f)
    }

    /// The underlying byte source.
    pub fn source(&self) -> &Arc<dyn ReadAt> {
        &self.src
    }

    /// Reads a key header at `offset` and its (decompressed) payload.
    pub fn read_key(&self, offset: u64, what: &str) -> Result<(KeyHeader, Vec<u8>)> {
        read_key_at(&*self.src, offset, what)
    }

    fn walk_dir(&mut self, seek_keys: u64, prefix: String, depth: usize) -> Result<()> {
        if depth > MAX_DIR_DEPTH {
            return Err(Error::corrupt("directories nested too deeply (a loop?)", seek_keys));
        }
        // A keys list reached again (two keys naming one directory, or a loop) is walked once.
        if seek_keys == 0 || !self.walked.insert(seek_keys) {
            return Ok(());
        }
        let (kl, payload) = self.read_key(seek_keys, "keys list")?;
        let base = seek_keys + kl.key_len as u64;
        let mut r = Be { b: &payload, pos: 0, base };
        let n = r.u32("number of keys")?;
        if n as usize > payload.len() / 26 {
            return Err(Error::corrupt(format!("keys list claims {n} keys in {} bytes", payload.len()), base));
        }
        if self.keys.len() + n as usize > MAX_KEYS {
            return Err(Error::Unsupported(format!("the file's directories list more than {MAX_KEYS} keys")));
        }
        let mut found: Vec<KeyHeader> = Vec::new();
        for _ in 0..n {
            let (k, used) = parse_key_header(&payload[r.pos..], base + r.pos as u64)?;
            r.pos += used;
            found.push(k);
        }
        // Every cycle is listed; only the highest cycle of each (name, class) is followed (a map: a keys
        // list of many keys stays linear).
        let mut best: HashMap<(&str, &str), usize> = HashMap::new();
        for (i, k) in found.iter().enumerate() {
            match best.entry((k.name.as_str(), k.class_name.as_str())) {
                Entry::Occupied(mut e) => {
                    if k.cycle > found[*e.get()].cycle {
                        e.insert(i);
                    }
                }
                Entry::Vacant(e) => {
                    e.insert(i);
                }
            }
        }
        let followed: HashSet<usize> = best.into_values().collect();
        for (i, k) in found.into_iter().enumerate() {
            let path = if prefix.is_empty() { k.name.clone() } else { format!("{prefix}/{}", k.name) };
            self.keys.push((path.clone(), k.class_name.clone(), k.cycle));
            if !followed.contains(&i) {
                continue;
            }
            match k.class_name.as_str() {
                "ROOT::RNTuple" | "ROOT::Experimental::RNTuple" => {
                    let anchor = match self.read_key(k.seek_key, "RNTuple anchor key") {
                        Ok((_, payload)) => parse_anchor(&payload, &k.class_name, k.seek_key + k.key_len as u64),
                        Err(e) => AnchorStatus::Broken(e.to_string()),
                    };
                    self.ntuples.push(NTupleEntry { path, key: k, anchor });
                }
                "TDirectoryFile" | "TDirectory" => {
                    let (sk, payload) = self.read_key(k.seek_key, "subdirectory key")?;
                    let mut r = Be { b: &payload, pos: 0, base: k.seek_key + sk.key_len as u64 };
                    let seek = parse_dir_record(&mut r)?;
                    if seek != seek_keys {
                        self.walk_dir(seek, path, depth + 1)?;
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Finds an RNTuple by path (or by bare name if unique) and returns its usable anchor.
    pub fn anchor(&self, name: &str) -> Result<Anchor> {
        let e = self
            .ntuples
            .iter()
            .find(|e| e.path == name)
            .or_else(|| {
                let mut it = self.ntuples.iter().filter(|e| e.key.name == name);
                let first = it.next();
                if it.next().is_some() {
                    None
                } else {
                    first
                }
            })
            .ok_or_else(|| {
                let names: Vec<&str> = self.ntuples.iter().map(|e| e.path.as_str()).collect();
                Error::NotFound(format!(
                    "no RNTuple named '{name}' in the file (it holds: {})",
                    if names.is_empty() { "none".to_string() } else { names.join(", ") }
                ))
            })?;
        match &e.anchor {
            AnchorStatus::Ok(a) => Ok(*a),
            AnchorStatus::Legacy(msg) => Err(Error::Unsupported(format!("RNTuple '{}': {msg}", e.path))),
            AnchorStatus::Broken(msg) => Err(Error::corrupt(format!("RNTuple '{}': anchor: {msg}", e.path), e.key.seek_key)),
        }
    }

    /// Reads a blob (envelope or page) at `offset` of `size` stored bytes, following ROOT's
    /// multi-key chunking when `size` exceeds the anchor's maximum key size.
    pub fn read_blob(&self, offset: u64, size: u64, max_key_size: u64, what: &str) -> Result<Vec<u8>> {
        read_blob(&*self.src, offset, size, max_key_size, what)
    }
}

/// See [`RootFile::read_blob`].
pub fn read_blob(src: &dyn ReadAt, offset: u64, size: u64, max_key_size: u64, what: &str) -> Result<Vec<u8>> {
    if max_key_size == 0 || size <= max_key_size {
        return src.read_vec(offset, size, what);
    }
    if size > src.len() {
        return Err(Error::corrupt(format!("{what}: {size} bytes is larger than the whole file"), offset));
    }
    let mut n_chunks = size.div_ceil(max_key_size);
    let tail = size % max_key_size;
    let slack = if tail > 0 { max_key_size - tail } else { 0 };
    if (n_chunks - 1) * 8 > slack {
        n_chunks += 1;
    }
    let ptr_bytes = (n_chunks - 1) * 8;
    if ptr_bytes >= max_key_size {
        return Err(Error::corrupt(format!("{what}: chunk table larger than a key"), offset));
    }
    let first = max_key_size - ptr_bytes;
    let mut out = src.read_vec(offset, first, what)?;
    let table = src.read_vec(offset + first, ptr_bytes, what)?;
    let mut remaining = size - first;
    for c in table.chunks_exact(8) {
        let mut a = [0u8; 8];
        a.copy_from_slice(c);
        let off = u64::from_le_bytes(a);
        let n = remaining.min(max_key_size);
        out.extend_from_slice(&src.read_vec(off, n, what)?);
        remaining -= n;
    }
    if remaining != 0 {
        return Err(Error::corrupt(format!("{what}: chunk table does not cover the blob ({remaining} bytes missing)"), offset));
    }
    Ok(out)
}

/// Parses a directory record (TDirectory streamer) and returns fSeekKeys.
/// The file header's bytes (up to the 100 that hold all its fields), after checking the magic,
/// with its version and `fBEGIN` (the fields every reader needs).
fn file_header(src: &dyn ReadAt) -> Result<(Vec<u8>, u32, u64)> {
    let hdr = src.read_vec(0, src.len().min(100), "file header")?;
    if hdr.len() < 4 || &hdr[0..4] != b"root" {
        return Err(Error::corrupt("not a ROOT file (the first 4 bytes are not 'root')", 0));
    }
    let mut r = Be { b: &hdr, pos: 4, base: 0 };
    let version = r.u32("file version")?;
    let begin = r.u32("fBEGIN")? as u64;
    Ok((hdr, version, begin))
}

/// The file's StreamerInfo records (the `TStreamerInfo` of every class it describes), read from
/// its StreamerInfo key (`fSeekInfo` of the file header); an empty list when the file has none.
pub fn read_streamer_infos(src: &dyn ReadAt) -> Result<Vec<crate::storage::container::streamer_info_read::ClassInfo>> {
    let (hdr, version, _) = file_header(src)?;
    let mut r = Be { b: &hdr, pos: 12, base: 0 };
    let big = version >= 1_000_000;
    let _end = if big { r.u64("fEND")? } else { r.u32("fEND")? as u64 };
    let _seek_free = if big { r.u64("fSeekFree")? } else { r.u32("fSeekFree")? as u64 };
    r.take(4 + 4 + 4 + 1 + 4, "file header")?; // fNbytesFree, nfree, fNbytesName, fUnits, fCompress
    let seek_info = if big { r.u64("fSeekInfo")? } else { r.u32("fSeekInfo")? as u64 };
    if seek_info == 0 {
        return Ok(Vec::new());
    }
    let (key, payload) = read_key_at(src, seek_info, "StreamerInfo key")?;
    crate::storage::container::streamer_info_read::parse_streamer_infos(&payload, u32::from(key.key_len)).map_err(|e| e.context(format!("the StreamerInfo key at byte {seek_info}")))
}

/// Reads a key header at `offset` of `src` and its (decompressed) payload.
fn read_key_at(src: &dyn ReadAt, offset: u64, what: &str) -> Result<(KeyHeader, Vec<u8>)> {
    let avail = src.len().saturating_sub(offset).min(1024 + 64);
    let head = src.read_vec(offset, avail, what)?;
    let (key, _) = parse_key_header(&head, offset)?;
    if key.nbytes < key.key_len as i32 {
        return Err(Error::corrupt(format!("{what}: key size {} smaller than its header {}", key.nbytes, key.key_len), offset));
    }
    let stored = (key.nbytes - key.key_len as i32) as u64;
    let data = src.read_vec(offset + key.key_len as u64, stored, what)?;
    let at = offset + key.key_len as u64;
    let payload = if stored < key.obj_len as u64 {
        // A keys list or record of valid compression blocks of zeros would otherwise inflate to
        // 4 GiB from a few KiB.
        compression::check_metadata_ratio(stored, key.obj_len as u64, what, at)?;
        compression::decompress(&data, key.obj_len as usize, what, at)?
    } else {
        data
    };
    Ok((key, payload))
}

/// What adding keys to an existing file's top directory needs to know about it (see
/// [`crate::storage::container::tfile_write::RootFileWriter::open_update`]).
#[derive(Debug, Clone)]
pub struct TopDirectory {
    /// The file header's `fBEGIN` (where the TFile key is; 100 in every file ROOT writes).
    pub begin: u64,
    /// The file header's `fEND`: where new keys go.
    pub end: u64,
    /// `fNbytesName` (TFile key header + name + title): where the directory record starts after `fBEGIN`.
    pub nbytes_name: u64,
    /// Bytes available for the directory record in the TFile key.
    pub dir_record_space: u64,
    /// The file's compression settings (`fCompress`).
    pub compression: u32,
    /// The StreamerInfo record (`fSeekInfo`, `fNbytesInfo`), kept as it is.
    pub seek_info: u64,
    /// See `seek_info`.
    pub nbytes_info: u32,
    /// The file's UUID (version and 16 bytes) as stored in the header.
    pub uuid: [u8; 18],
    /// The TFile key's name (the file name when it was created).
    pub name: String,
    /// The directory's creation time (ROOT's packed date).
    pub ctime: u32,
    /// The header bytes of every key of the top directory, in order (for the new keys list).
    pub key_headers: Vec<Vec<u8>>,
    /// (class name, name) of those keys.
    pub keys: Vec<(String, String)>,
}

/// Reads the header, the top directory record and its keys list of a ROOT file, for adding keys.
pub fn top_directory(src: &dyn ReadAt) -> Result<TopDirectory> {
    let len = src.len();
    let (hdr, version, begin) = file_header(src)?;
    let mut r = Be { b: &hdr, pos: 12, base: 0 };
    let big = version >= 1_000_000;
    let end = if big { r.u64("fEND")? } else { r.u32("fEND")? as u64 };
    let _seek_free = if big { r.u64("fSeekFree")? } else { r.u32("fSeekFree")? as u64 };
    let _nbytes_free = r.u32("fNbytesFree")?;
    let _nfree = r.u32("nfree")?;
    let nbytes_name = r.u32("fNbytesName")? as u64;
    let _units = r.take(1, "fUnits")?;
    let compression = r.u32("fCompress")?;
    let seek_info = if big { r.u64("fSeekInfo")? } else { r.u32("fSeekInfo")? as u64 };
    let nbytes_info = r.u32("fNbytesInfo")?;
    let mut uuid = [0u8; 18];
    uuid.copy_from_slice(r.take(18, "fUUID")?);
    if end > len {
        return Err(Error::corrupt(format!("fEND {end} lies beyond the end of the file ({len} bytes)"), 4));
    }
    // The TFile key: name, title, then the directory record.
    let head = src.read_vec(begin, len.saturating_sub(begin).min(1024), "top directory key")?;
    let (tkey, _) = parse_key_header(&head, begin)?;
    if tkey.nbytes < 0 || (tkey.nbytes as u64) < nbytes_name {
        return Err(Error::corrupt(format!("top directory key of {} bytes, but fNbytesName says {nbytes_name}", tkey.nbytes), begin));
    }
    let dir_record_space = tkey.nbytes as u64 - nbytes_name;
    let dir = src.read_vec(begin + nbytes_name, dir_record_space.min(128), "top directory record")?;
    let mut d = Be { b: &dir, pos: 0, base: begin + nbytes_name };
    let (ctime, seek_keys) = dir_record(&mut d)?;
    let mut key_headers = Vec::new();
    let mut keys = Vec::new();
    if seek_keys != 0 {
        let (kl, payload) = read_key_at(src, seek_keys, "keys list")?;
        let base = seek_keys + kl.key_len as u64;
        let mut r = Be { b: &payload, pos: 0, base };
        let n = r.u32("number of keys")?;
        if n as usize > payload.len() / 26 {
            return Err(Error::corrupt(format!("keys list claims {n} keys in {} bytes", payload.len()), base));
        }
        for _ in 0..n {
            let (k, used) = parse_key_header(&payload[r.pos..], base + r.pos as u64)?;
            key_headers.push(payload[r.pos..r.pos + used].to_vec());
            keys.push((k.class_name, k.name));
            r.pos += used;
        }
    }
    Ok(TopDirectory { begin, end, nbytes_name, dir_record_space, compression, seek_info, nbytes_info, uuid, name: tkey.name, ctime, key_headers, keys })
}

fn parse_dir_record(r: &mut Be) -> Result<u64> {
    dir_record(r).map(|(_, seek_keys)| seek_keys)
}

/// A directory record's creation time and the offset of its keys list.
fn dir_record(r: &mut Be) -> Result<(u32, u64)> {
    let version = r.u16("directory version")?;
    let ctime = r.u32("directory ctime")?;
    let _mtime = r.u32("directory mtime")?;
    let _nbytes_keys = r.u32("directory nbytesKeys")?;
    let _nbytes_name = r.u32("directory nbytesName")?;
    let big = version > 1000;
    let _seek_dir = if big { r.u64("seekDir")? } else { r.u32("seekDir")? as u64 };
    let _seek_parent = if big { r.u64("seekParent")? } else { r.u32("seekParent")? as u64 };
    let seek_keys = if big { r.u64("seekKeys")? } else { r.u32("seekKeys")? as u64 };
    Ok((ctime, seek_keys))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::local::source::MemSource;

    #[test]
    fn blob_chunked_over_several_keys() {
        // A 250-byte blob with a maximum key size of 100: the first chunk holds 84 payload
        // bytes and the offsets of chunks 2 and 3 (100 and 66 bytes), which live elsewhere.
        let blob: Vec<u8> = (0..250u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut file = vec![0xEEu8; 1000];
        let (c2, c3) = (400usize, 700usize);
        file[c2..c2 + 100].copy_from_slice(&blob[84..184]);
        file[c3..c3 + 66].copy_from_slice(&blob[184..250]);
        file[10..94].copy_from_slice(&blob[..84]);
        file[94..102].copy_from_slice(&(c2 as u64).to_le_bytes());
        file[102..110].copy_from_slice(&(c3 as u64).to_le_bytes());
        let src = MemSource(Arc::new(file));
        assert_eq!(read_blob(&src, 10, 250, 100, "blob").unwrap(), blob);
        // Unchunked when it fits, and a lying chunk table is an error, not a panic.
        assert_eq!(read_blob(&src, 10, 84, 100, "blob").unwrap(), blob[..84].to_vec());
        let mut bad = src.0.as_ref().clone();
        bad[94..102].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(read_blob(&MemSource(Arc::new(bad)), 10, 250, 100, "blob").is_err());
    }

    #[test]
    fn not_a_root_file() {
        let src: Arc<dyn ReadAt> = Arc::new(MemSource(Arc::new(b"hello world, not root".to_vec())));
        let e = RootFile::open(src).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("not a ROOT file"), "{e}");
    }
}
