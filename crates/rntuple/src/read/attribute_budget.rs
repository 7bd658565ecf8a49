//! What a reader's attribute sets may cost, bounded by the bytes that back them. A footer may link
//! any number of attribute sets, but each is an RNTuple of its own: an anchor, a header, a footer
//! and page lists stored in the file. Links sharing one anchor, or anchors sharing envelopes, would
//! let 100 KiB of footer open the same set 200,000 times (a skim or a merge copies every set). So
//! each anchor may be linked by one set only, the stored bytes of the sets opened (anchors and
//! envelopes) may add up to at most the file's size, and their decompressed metadata to at most
//! what one RNTuple's may ([`super::open`]'s bound). A set opened again is not counted again.

use crate::error::{Error, Result};
use crate::format::anchor::Anchor;
use crate::format::budget::human;
use std::collections::HashMap;

/// The attribute sets a reader has opened and what they took.
#[derive(Default)]
pub(crate) struct AttributeBudget {
    /// Anchor offset -> the name of the set that links it.
    opened: HashMap<u64, String>,
    /// Stored bytes of their anchors and envelopes.
    stored: u64,
    /// Decompressed bytes of their metadata.
    metadata: u64,
}

/// What the attribute set being counted is: its name, its RNTuple's, its anchor (`anchor_size`
/// stored bytes at `offset`) and its page lists' (stored, decompressed) bytes.
pub(crate) struct AttributeSet<'a> {
    pub(crate) ntuple: &'a str,
    pub(crate) name: &'a str,
    pub(crate) offset: u64,
    pub(crate) anchor_size: u64,
    pub(crate) anchor: &'a Anchor,
    pub(crate) page_lists: (u64, u64),
}

/// The bound of decompressed metadata: at least `floor` bytes, else `ratio` times the file's size
/// (one RNTuple's bound, `read::open`'s).
pub(crate) struct MetadataBound {
    pub(crate) floor: u64,
    pub(crate) ratio: u64,
}

impl AttributeBudget {
    /// Counts the attribute set `set` against the bytes backing the sets opened so far (a file of
    /// `file` bytes); a set counted before is not counted again.
    pub(crate) fn charge(&mut self, set: &AttributeSet, file: u64, bound: &MetadataBound) -> Result<()> {
        let b = self;
        let AttributeSet { ntuple, name, offset, anchor_size, anchor, page_lists } = *set;
        match b.opened.get(&offset) {
            Some(other) if other != name => {
                return Err(Error::corrupt(
                    format!(
                        "attribute set '{name}' of RNTuple '{ntuple}' links the anchor at offset {offset}, which attribute set '{other}' links too: \
                         each set has an anchor of its own"
                    ),
                    offset,
                ));
            }
            Some(_) => return Ok(()),
            None => {}
        }
        let stored = [anchor_size, anchor.nbytes_header, anchor.nbytes_footer, page_lists.0].iter().fold(b.stored, |t, &x| t.saturating_add(x));
        if stored > file {
            return Err(Error::corrupt(
                format!(
                    "the attribute sets of RNTuple '{ntuple}' opened up to '{name}' are stored in {} of anchors and envelopes, more than the file's \
                     {}: they share bytes",
                    human(stored),
                    human(file)
                ),
                offset,
            ));
        }
        let (floor, ratio) = (bound.floor, bound.ratio);
        let bound = floor.max(file.saturating_mul(ratio));
        let metadata = [anchor.len_header, anchor.len_footer, page_lists.1].iter().fold(b.metadata, |t, &x| t.saturating_add(x));
        if metadata > bound {
            return Err(Error::Unsupported(format!(
                "the attribute sets of RNTuple '{ntuple}' opened up to '{name}' decompress to {} of metadata, over what a file of {} can back \
                 ({}, or {ratio} times the file's size)",
                human(metadata),
                human(file),
                human(floor)
            )));
        }
        b.stored = stored;
        b.metadata = metadata;
        b.opened.insert(offset, name.to_string());
        Ok(())
    }
}
