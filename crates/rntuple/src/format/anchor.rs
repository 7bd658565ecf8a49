//! The `ROOT::RNTuple` anchor object (class version 2, format epoch 1), big-endian.

use crate::error::Error;

/// The anchor: format version and where header and footer are.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Anchor {
    /// Format version epoch (1).
    pub epoch: u16,
    /// Format major version.
    pub major: u16,
    /// Format minor version.
    pub minor: u16,
    /// Format patch version.
    pub patch: u16,
    /// Offset of the header envelope.
    pub seek_header: u64,
    /// Stored size of the header.
    pub nbytes_header: u64,
    /// Uncompressed header length.
    pub len_header: u64,
    /// Offset of the footer envelope.
    pub seek_footer: u64,
    /// Stored size of the footer.
    pub nbytes_footer: u64,
    /// Uncompressed footer length.
    pub len_footer: u64,
    /// Maximum size of one key; larger blobs are chunked.
    pub max_key_size: u64,
}

/// An anchor found in a file: usable, pre-1.0 (refused), or broken.
#[derive(Debug, Clone)]
pub enum AnchorStatus {
    /// A format 1.x anchor.
    Ok(Anchor),
    /// A pre-1.0 anchor; the message says which version and which ROOT wrote it.
    Legacy(String),
    /// Unreadable; the message says why.
    Broken(String),
}

fn be16(b: &[u8], o: usize) -> u16 {
    u16::from_be_bytes([b[o], b[o + 1]])
}
fn be64(b: &[u8], o: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[o..o + 8]);
    u64::from_be_bytes(a)
}

/// Parses the anchor object from a key payload of class `class_name`. `offset` is the payload's
/// file offset, for messages.
pub fn parse_anchor(b: &[u8], class_name: &str, offset: u64) -> AnchorStatus {
    if class_name == "ROOT::Experimental::RNTuple" {
        let version = if b.len() >= 14 && be16(b, 4) >= 4 {
            format!("{}.{}.{}.{}", be16(b, 6), be16(b, 8), be16(b, 10), be16(b, 12))
        } else if b.len() >= 6 {
            format!("0.x (anchor class version {})", be16(b, 4))
        } else {
            "0.x".to_string()
        };
        return AnchorStatus::Legacy(format!(
            "pre-1.0 RNTuple (anchor class ROOT::Experimental::RNTuple, format version {version}, epoch 0): written by \
             ROOT 6.32 or earlier during RNTuple's experimental phase. Only format 1.x (ROOT 6.34 and later) is supported; \
             re-write the data with ROOT 6.32 or convert it with a ROOT that reads it"
        ));
    }
    if b.len() < 78 {
        return AnchorStatus::Broken(format!("anchor object of {} bytes at offset {offset}, expected at least 78", b.len()));
    }
    let epoch = be16(b, 6);
    let stored = be64(b, b.len() - 8);
    let computed = crate::format::checksum::xxh3(&b[6..b.len() - 8]);
    if stored != computed {
        return AnchorStatus::Broken(Error::Checksum { what: "RNTuple anchor".into(), offset, stored, computed }.to_string());
    }
    let a = Anchor {
        epoch,
        major: be16(b, 8),
        minor: be16(b, 10),
        patch: be16(b, 12),
        seek_header: be64(b, 14),
        nbytes_header: be64(b, 22),
        len_header: be64(b, 30),
        seek_footer: be64(b, 38),
        nbytes_footer: be64(b, 46),
        len_footer: be64(b, 54),
        max_key_size: be64(b, 62),
    };
    if epoch != 1 {
        return AnchorStatus::Legacy(format!(
            "RNTuple format epoch {epoch} (version {}.{}.{}.{}) is not supported; this reader supports epoch 1 (ROOT 6.34 and later)",
            epoch, a.major, a.minor, a.patch
        ));
    }
    AnchorStatus::Ok(a)
}
