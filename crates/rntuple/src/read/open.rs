//! The base of the reader: the [`Reader`] struct and its opening (descriptor loading from the
//! anchor: header, footer and page lists; cluster tiling, field depth and readability checks),
//! with the limits it enforces. Its pages come from its `pool::page_source`; the stages above it
//! (the `decode`, `arrow` and `streamer` rooms, the entry points) add `impl Reader` blocks. ROOT's counterpart: the
//! opening of `RNTupleReader` (`RPageSource::Attach`).

use super::pool::page_source::PageSource;
use crate::error::{Error, Result};
use crate::format::anchor::Anchor;
use crate::format::descriptor::Descriptor;
use crate::format::envelope;
use crate::logical::kind::{classify, Kind};
use crate::primitives::column_type::ColumnType;
use crate::primitives::decode::ColumnCodec;
use crate::storage::container::tfile::read_blob;
use crate::storage::local::source::ReadAt;
use std::sync::Arc;

/// Largest envelope accepted (as ROOT's `MaxEnvelopeSize` for untrusted anchors).
pub const MAX_ENVELOPE: u64 = 1 << 30;
/// Deepest field nesting accepted.
pub const MAX_FIELD_DEPTH: usize = 128;
/// Decompressed metadata (header, footer and page lists together) an RNTuple may always have.
pub(crate) const METADATA_TOTAL_FLOOR: u64 = 16 << 20;
/// Beyond [`METADATA_TOTAL_FLOOR`], how many times the file's size an RNTuple's decompressed
/// metadata may be. Each page described in a page list takes 24-40 bytes of it (and about twice
/// that once parsed), each page at least a byte of the file and its key: a file's own bytes
/// cannot back more. A page list of a few hundred KiB of zstd describing every pair of 4,000
/// columns x 4,000 clusters (640 MiB) is refused before most of it is inflated.
pub(crate) const METADATA_FILE_RATIO: u64 = 4;

/// Reads one RNTuple.
///
/// ```
/// # use rntuple::write::{Writer, WriteOptions};
/// # use rntuple::Value;
/// # let path = std::env::temp_dir().join(format!("rntuple-doc-Reader-{}.root", std::process::id()));
/// # let mut w = Writer::create(&path, "Events", &[("x", "float")], WriteOptions::default())?;
/// # for i in 0..3 { w.fill(&Value::Record(vec![("x".into(), Value::F32(i as f32))]))?; }
/// # w.commit()?;
/// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
/// assert_eq!(r.num_entries(), 3);
/// let names: Vec<&str> = r.fields().iter().map(|f| f.name.as_str()).collect();
/// assert_eq!(names, ["x"]);
/// assert_eq!(r.read_batch(Some(&["x"]), 1, 3)?.num_rows(), 2);
/// assert_eq!(r.read_values(None, 1, 2)?[0].to_json().to_string(), r#"{"x":1.0}"#);
/// assert!(r.read_batch(Some(&["y"]), 0, 1).is_err()); // no such field
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Reader {
    /// The byte source, the cluster pool and read-ahead, page loading and statistics.
    pub(super) page_source: PageSource,
    pub(super) anchor: Anchor,
    pub(super) desc: Descriptor,
    pub(super) kinds: Vec<std::result::Result<Kind, String>>,
    /// Per field: whether it and its whole subtree can be read.
    pub(super) readable: Vec<bool>,
    /// The top-level field ids sorted by name, then id (so the first of a name comes first, should a file
    /// repeat one): `Reader::top_field_id` looks names up in it (a map with the names copied took 50 bytes a
    /// field, 5 MB for a schema of 100,000).
    pub(super) top_by_name: Vec<u32>,
    /// Decoding threads.
    pub(super) threads: usize,
    /// The file's StreamerInfo records, loaded when a streamer field is first read, and whether
    /// streamer fields are read as objects (`read::streamer::fields`).
    pub(super) streamer: StreamerState,
    /// What the attribute sets opened through this reader took (`attribute_budget`).
    pub(super) attribute_budget: std::sync::Mutex<super::attribute_budget::AttributeBudget>,
}

/// The reader's state for streamer fields (`read::streamer::fields`).
#[derive(Default)]
pub(super) struct StreamerState {
    /// The file's StreamerInfo records (empty when it has none or they cannot be read).
    pub(super) records: std::sync::OnceLock<Vec<crate::storage::container::streamer_info_read::ClassInfo>>,
    /// Whether streamer fields are read as raw bytes.
    pub(super) raw: bool,
    /// Per top-level streamer field: whether its first entry deserializes by the records (a class
    /// with a custom `Streamer` has a record its bytes do not follow).
    pub(super) probed: std::sync::Mutex<std::collections::HashMap<u32, bool>>,
}

impl Reader {
    /// Loads the descriptor of the RNTuple behind `anchor`.
    pub fn open(src: Arc<dyn ReadAt>, anchor: Anchor) -> Result<Reader> {
        let bound = METADATA_TOTAL_FLOOR.max(src.len().saturating_mul(METADATA_FILE_RATIO));
        let mut total = 0u64;
        let mut env = |seek: u64, nbytes: u64, len: u64, what: &'static str| {
            total = total.saturating_add(len);
            if total > bound {
                return Err(Error::Unsupported(format!(
                    "the RNTuple's metadata decompresses to more than {} (at the {what} at offset {seek}), over what a file of {} can back ({}, or {METADATA_FILE_RATIO} times the file's size)",
                    crate::format::budget::human(total),
                    crate::format::budget::human(src.len()),
                    crate::format::budget::human(METADATA_TOTAL_FLOOR)
                )));
            }
            read_envelope(&*src, anchor.max_key_size, seek, nbytes, len, what)
        };
        // Each envelope is freed once parsed (the header of 100,000 fields is 7 MB).
        let hb = env(anchor.seek_header, anchor.nbytes_header, anchor.len_header, "header")?;
        let mut desc = envelope::parse_header(&hb)?;
        drop(hb);
        let fb = env(anchor.seek_footer, anchor.nbytes_footer, anchor.len_footer, "footer")?;
        envelope::parse_footer(&fb, &mut desc)?;
        drop(fb);
        for g in 0..desc.cluster_groups.len() {
            let link = desc.cluster_groups[g].page_list;
            let pb = env(link.locator.offset, link.locator.size, link.length, "page list")?;
            envelope::parse_page_list(&pb, &mut desc, g)?;
        }
        desc.clusters.sort_by_key(|c| c.first_entry);
        let mut next = 0u64;
        for c in &desc.clusters {
            if c.first_entry != next {
                return Err(Error::corrupt(
                    format!("cluster {} starts at entry {}, expected {next} (clusters must tile the entry range)", c.id, c.first_entry),
                    anchor.seek_footer,
                ));
            }
            next = c.first_entry.checked_add(c.n_entries).ok_or_else(|| Error::corrupt("cluster entry count overflows", anchor.seek_footer))?;
        }
        if next != desc.num_entries() {
            return Err(Error::corrupt(format!("clusters cover {next} entries, cluster groups say {}", desc.num_entries()), anchor.seek_footer));
        }
        // Parents precede children, so depth is one pass; bound it so that recursive assembly
        // cannot exhaust the stack on a hostile file.
        let mut depth = vec![0usize; desc.fields.len()];
        for i in 0..desc.fields.len() {
            if let Some(p) = desc.fields[i].parent {
                depth[i] = depth[p as usize] + 1;
                if depth[i] > MAX_FIELD_DEPTH {
                    return Err(Error::Unsupported(format!(
                        "field '{}' is nested {} levels deep (at most {MAX_FIELD_DEPTH} supported)",
                        desc.fields[i].name, depth[i]
                    )));
                }
            }
        }
        let kinds: Vec<_> = desc.fields.iter().map(|f| classify(&desc, f)).collect();
        let mut readable = vec![true; desc.fields.len()];
        for i in (0..desc.fields.len()).rev() {
            let ok = kinds[i].is_ok() && desc.fields[i].children.iter().all(|&c| readable[c as usize]);
            readable[i] = ok;
        }
        let mut invalid = vec![false; desc.columns.len()];
        for (i, col) in desc.columns.iter().enumerate() {
            if let Some(ct) = ColumnType::from_u16(col.column_type) {
                let codec = ColumnCodec { ty: ct, bits: col.bits_on_storage, range: col.value_range };
                if codec.validate().is_err() {
                    invalid[i] = true;
                    readable[col.field_id as usize] = false;
                }
            }
        }
        // A projected field reads its source's columns: an invalid one makes it unreadable too.
        for a in &desc.aliases {
            if invalid.get(a.physical as usize).copied().unwrap_or(false)
                && let Some(r) = readable.get_mut(a.field_id as usize)
            {
                *r = false;
            }
        }
        // A field is readable only if all ancestors' subtrees are; propagate upward again.
        for i in (0..desc.fields.len()).rev() {
            if !readable[i] {
                let mut p = desc.fields[i].parent;
                while let Some(pp) = p {
                    readable[pp as usize] = false;
                    p = desc.fields[pp as usize].parent;
                }
            }
        }
        let mut top_by_name = desc.top_level_fields();
        top_by_name.sort_by(|&a, &b| desc.fields[a as usize].name.cmp(&desc.fields[b as usize].name).then(a.cmp(&b)));
        let page_source = PageSource::new(src, anchor.max_key_size);
        Ok(Reader {
            page_source,
            anchor,
            desc,
            kinds,
            readable,
            top_by_name,
            threads: default_threads(),
            streamer: Default::default(),
            attribute_budget: Default::default(),
        })
    }
}

/// Reads the envelope stored as `nbytes` bytes at `seek` (chunked as keys of at most
/// `max_key_size` bytes) and decompresses it to its `len` bytes, with the bounds every envelope
/// must keep; `what` names it in errors.
pub(super) fn read_envelope(src: &dyn ReadAt, max_key_size: u64, seek: u64, nbytes: u64, len: u64, what: &'static str) -> Result<Vec<u8>> {
    if !(16..=MAX_ENVELOPE).contains(&len) {
        return Err(Error::corrupt(format!("{what} envelope length {len} is out of bounds (16 B .. 1 GiB)"), seek));
    }
    if nbytes > len {
        return Err(Error::corrupt(format!("{what} envelope stored size {nbytes} exceeds its length {len}"), seek));
    }
    let stored = read_blob(src, seek, nbytes, max_key_size, what)?;
    crate::format::envelope::decompress_envelope(&stored, len, what, seek)
}

fn default_threads() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}
