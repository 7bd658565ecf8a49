//! What a reader's attribute sets may cost, bounded by the bytes that back them. A footer may link
//! any number of attribute sets, but each is an RNTuple of its own: an anchor, a header, a footer
//! and page lists stored in the file. Links sharing one anchor, or anchors sharing envelopes, would
//! let 100 KiB of footer open the same set 200,000 times (a skim or a merge copies every set). So
//! each anchor may be linked by one set only, the stored bytes of the sets opened (anchors and
//! envelopes) may add up to at most the file's size, and their decompressed metadata to at most
//! what one RNTuple's may ([`super::open`]'s bound). A set opened again is not counted again.

use super::open::{Reader, METADATA_FILE_RATIO, METADATA_TOTAL_FLOOR};
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

impl Reader {
    /// Counts the attribute set `name` (its anchor of `anchor_size` stored bytes at `offset`,
    /// pointing to `anchor`'s envelopes and to page lists of `page_lists` (stored, decompressed)
    /// bytes) against the bytes backing this reader's attribute sets; a set counted before is not
    /// counted again.
    pub(super) fn charge_attribute_set(&self, name: &str, offset: u64, anchor_size: u64, anchor: &Anchor, page_lists: (u64, u64)) -> Result<()> {
        let mut b = self.attribute_budget.lock().map_err(|_| Error::internal("the attribute budget's lock is poisoned"))?;
        let ntuple = &self.desc.name;
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
        let file = self.page_source.src.len();
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
        let bound = METADATA_TOTAL_FLOOR.max(file.saturating_mul(METADATA_FILE_RATIO));
        let metadata = [anchor.len_header, anchor.len_footer, page_lists.1].iter().fold(b.metadata, |t, &x| t.saturating_add(x));
        if metadata > bound {
            return Err(Error::Unsupported(format!(
                "the attribute sets of RNTuple '{ntuple}' opened up to '{name}' decompress to {} of metadata, over what a file of {} can back \
                 ({}, or {METADATA_FILE_RATIO} times the file's size)",
                human(metadata),
                human(file),
                human(METADATA_TOTAL_FLOOR)
            )));
        }
        b.stored = stored;
        b.metadata = metadata;
        b.opened.insert(offset, name.to_string());
        Ok(())
    }
}
