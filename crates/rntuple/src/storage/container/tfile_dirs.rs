//! Subdirectories of a ROOT file being written (RNTuples named `dir/sub/name`), as ROOT and uproot
//! lay them out: each is a `TDirectory` key listed by its parent whose payload, the directory
//! record, stays where it was first written (so the keys that list it never change); its keys list
//! is written anew at every checkpoint and commit, after everything it lists, and the record is
//! then rewritten in place to point at it.

use crate::error::{Error, Result};

/// Class name of a subdirectory's key and of its keys list's key (what ROOT and uproot write).
pub const DIRECTORY_CLASS: &str = "TDirectory";
/// Bytes of a directory record in its 64-bit form (version 1005): version, two dates, the keys
/// list's size, the name's size, three seeks and the UUID.
pub const RECORD_LEN: usize = 2 + 4 + 4 + 4 + 4 + 8 + 8 + 8 + 18;

/// One subdirectory being written.
#[derive(Debug, Clone)]
pub struct SubDir {
    /// Its path from the top (`d1/d2`).
    pub path: String,
    /// Offset of its `TDirectory` key (the record follows the key header): its `fSeekDir`.
    pub seek_dir: u64,
    /// Length of that key's header (`fNbytesName`).
    pub key_len: u64,
    /// `fSeekDir` of its parent (the top directory's is the file's `fBEGIN`).
    pub seek_parent: u64,
    /// Creation time (ROOT's packed date).
    pub ctime: u32,
    /// Header bytes of the keys it lists, in order.
    pub keys: Vec<Vec<u8>>,
    /// Index in `keys` of the anchor key of each RNTuple written into it (a later anchor of the
    /// same RNTuple, a checkpoint's, replaces the earlier one).
    pub anchors: Vec<(String, usize)>,
}

impl SubDir {
    /// The last component of the path: the directory's name.
    pub fn name(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or(&self.path)
    }

    /// Lists `key` as the anchor of the RNTuple `name` (replacing its earlier anchor).
    pub fn list_anchor(&mut self, name: &str, key: Vec<u8>) {
        match self.anchors.iter().find(|(n, _)| n == name) {
            Some(&(_, i)) => self.keys[i] = key,
            None => {
                self.anchors.push((name.to_string(), self.keys.len()));
                self.keys.push(key);
            }
        }
    }

    /// The payload of its keys list: the number of keys, then their headers.
    pub fn keys_payload(&self) -> Result<Vec<u8>> {
        let n = u32::try_from(self.keys.len()).map_err(|_| Error::Invalid(format!("directory '{}' lists too many keys", self.path)))?;
        let mut out = n.to_be_bytes().to_vec();
        for k in &self.keys {
            out.extend_from_slice(k);
        }
        Ok(out)
    }
}

/// A directory record (64-bit form, version 1005), as the top directory's and ROOT's
/// `TDirectoryFile::FillBuffer` write it.
#[allow(clippy::too_many_arguments)]
pub fn record(ctime: u32, mtime: u32, nbytes_keys: u32, nbytes_name: u32, seek_dir: u64, seek_parent: u64, seek_keys: u64, uuid: &[u8; 18]) -> Vec<u8> {
    let mut r = Vec::with_capacity(RECORD_LEN);
    r.extend_from_slice(&1005u16.to_be_bytes());
    r.extend_from_slice(&ctime.to_be_bytes());
    r.extend_from_slice(&mtime.to_be_bytes());
    r.extend_from_slice(&nbytes_keys.to_be_bytes());
    r.extend_from_slice(&nbytes_name.to_be_bytes());
    r.extend_from_slice(&seek_dir.to_be_bytes());
    r.extend_from_slice(&seek_parent.to_be_bytes());
    r.extend_from_slice(&seek_keys.to_be_bytes());
    r.extend_from_slice(uuid);
    r
}

/// The UUID of subdirectory `index`: the file's, with its last bytes made distinct.
pub fn uuid_of(file_uuid: &[u8; 18], index: usize) -> [u8; 18] {
    let mut u = *file_uuid;
    let tag = (index as u32 + 1).to_be_bytes();
    for (b, t) in u[14..].iter_mut().zip(tag) {
        *b ^= t;
    }
    u
}

/// Splits an RNTuple's path in the file into its directory (empty at the top) and its name.
pub fn split_path(path: &str) -> (&str, &str) {
    path.rsplit_once('/').unwrap_or(("", path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_paths_and_uuids() {
        let r = record(1, 2, 3, 4, 5, 6, 7, &[0; 18]);
        assert_eq!(r.len(), RECORD_LEN);
        assert_eq!(&r[..2], &1005u16.to_be_bytes());
        assert_eq!(&r[18..26], &5u64.to_be_bytes());
        assert_eq!(&r[34..42], &7u64.to_be_bytes());
        assert_eq!(split_path("d1/d2/Events"), ("d1/d2", "Events"));
        assert_eq!(split_path("Events"), ("", "Events"));
        let base = [1u8; 18];
        assert_ne!(uuid_of(&base, 0), uuid_of(&base, 1));
        assert_eq!(&uuid_of(&base, 0)[..14], &base[..14]);
        let mut d = SubDir { path: "a/b".into(), seek_dir: 0, key_len: 0, seek_parent: 100, ctime: 0, keys: vec![], anchors: vec![] };
        assert_eq!(d.name(), "b");
        d.list_anchor("E", vec![1]);
        d.list_anchor("F", vec![2]);
        d.list_anchor("E", vec![3]);
        assert_eq!(d.keys, vec![vec![3], vec![2]]);
        assert_eq!(d.keys_payload().unwrap(), vec![0, 0, 0, 2, 3, 2]);
    }
}
