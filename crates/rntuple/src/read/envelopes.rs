//! An opened RNTuple's metadata envelopes as stored: the header, the footer and the page lists
//! read again from the byte source and decompressed, and the descriptor of the header alone. These
//! hold what a [`Descriptor`] does not keep (feature flags, checksums, which records the footer's
//! schema extension added), for tools that show the records as ROOT wrote them or verify them
//! again (the Python package's uproot-style `header` and `footer` objects).
//!
//! ```
//! use rntuple::read::Envelope;
//! # use rntuple::write::{Writer, WriteOptions};
//! # let path = std::env::temp_dir().join(format!("rntuple-doc-envelopes-{}.root", std::process::id()));
//! # Writer::create(&path, "Events", &[("x", "float")], WriteOptions::default())?.commit()?;
//! let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
//! let footer = r.envelope(Envelope::Footer)?;
//! assert_eq!(footer.len() as u64, r.anchor().len_footer);
//! assert_eq!(r.header_descriptor()?.fields.len(), 1);
//! # std::fs::remove_file(&path)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use super::open::{read_envelope, Reader};
use crate::error::{Error, Result};
use crate::format::descriptor::Descriptor;
use crate::format::envelope::{open_envelope, parse_header, ENVELOPE_FOOTER, ENVELOPE_HEADER, ENVELOPE_PAGE_LIST};

/// One of an RNTuple's metadata envelopes.
///
/// ```
/// use rntuple::read::Envelope;
/// # use rntuple::write::{Writer, WriteOptions};
/// # let path = std::env::temp_dir().join(format!("rntuple-doc-Envelope-{}.root", std::process::id()));
/// # Writer::create(&path, "Events", &[("x", "float")], WriteOptions::default())?.commit()?;
/// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
/// let page_list = r.envelope(Envelope::PageList(0))?; // the first cluster group's
/// assert_eq!(page_list.len() as u64, r.descriptor().cluster_groups[0].page_list.length);
/// assert!(r.envelope(Envelope::PageList(1)).is_err()); // one cluster group only
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Envelope {
    /// The header: the schema.
    Header,
    /// The footer: the schema extension, the cluster groups, the linked attribute sets.
    Footer,
    /// The page list of cluster group `n`, in the footer's order.
    PageList(usize),
}

impl Reader {
    /// The envelope's bytes as ROOT serializes them before compression: the preamble (type and
    /// length), the payload and the XXH3 checksum of the rest, which is verified again. Read from
    /// the byte source at every call.
    ///
    /// ```
    /// use rntuple::read::Envelope;
    /// # use rntuple::write::{Writer, WriteOptions};
    /// # let path = std::env::temp_dir().join(format!("rntuple-doc-envelope-{}.root", std::process::id()));
    /// # Writer::create(&path, "Events", &[("x", "float")], WriteOptions::default())?.commit()?;
    /// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
    /// let header = r.envelope(Envelope::Header)?;
    /// // The last 8 bytes are the checksum the footer and the page lists repeat.
    /// let checksum = u64::from_le_bytes(header[header.len() - 8..].try_into()?);
    /// assert_eq!(checksum, r.descriptor().header_checksum);
    /// assert_eq!(u16::from_le_bytes([header[0], header[1]]), 1); // envelope type 1: a header
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn envelope(&self, which: Envelope) -> Result<Vec<u8>> {
        let a = &self.anchor;
        let (seek, nbytes, len, ty, what) = match which {
            Envelope::Header => (a.seek_header, a.nbytes_header, a.len_header, ENVELOPE_HEADER, "header"),
            Envelope::Footer => (a.seek_footer, a.nbytes_footer, a.len_footer, ENVELOPE_FOOTER, "footer"),
            Envelope::PageList(g) => {
                let n = self.desc.cluster_groups.len();
                let link = self
                    .desc
                    .cluster_groups
                    .get(g)
                    .ok_or_else(|| Error::NotFound(format!("page list of cluster group {g}: RNTuple '{}' has {n} cluster group(s)", self.desc.name)))?
                    .page_list;
                (link.locator.offset, link.locator.size, link.length, ENVELOPE_PAGE_LIST, "page list")
            }
        };
        let bytes = read_envelope(&*self.page_source.src, a.max_key_size, seek, nbytes, len, what)?;
        open_envelope(&bytes, ty, what)?;
        Ok(bytes)
    }

    /// The descriptor of the header alone: its fields, columns, alias columns and extra type
    /// information, without those the footer's schema extension adds (in
    /// [`Reader::descriptor`]'s lists these follow the header's) and without clusters.
    ///
    /// ```
    /// # use rntuple::write::{Writer, WriteOptions};
    /// # let path = std::env::temp_dir().join(format!("rntuple-doc-header_descriptor-{}.root", std::process::id()));
    /// # Writer::create(&path, "Events", &[("x", "float"), ("v", "std::vector<float>")], WriteOptions::default())?.commit()?;
    /// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
    /// let h = r.header_descriptor()?;
    /// // Nothing was added after the header was written: the header holds the whole schema.
    /// assert_eq!((h.fields.len(), h.columns.len()), (r.descriptor().fields.len(), r.descriptor().columns.len()));
    /// assert!(h.clusters.is_empty());
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn header_descriptor(&self) -> Result<Descriptor> {
        parse_header(&self.envelope(Envelope::Header)?)
    }
}
