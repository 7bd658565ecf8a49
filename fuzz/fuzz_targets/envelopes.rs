//! Fuzz target: the envelope parsers (header, footer, page list) on any payload. The target
//! wraps each payload in a valid envelope (type, length, XXH3), so that the parsers themselves
//! are reached rather than the checksum check; the footer's copy of the header checksum is
//! patched in for the same reason. Must never panic or allocate beyond what the input justifies.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rntuple::format::descriptor::Descriptor;
use rntuple::format::envelope::{parse_footer, parse_header, parse_page_list, ENVELOPE_FOOTER, ENVELOPE_HEADER, ENVELOPE_PAGE_LIST};

fn envelope(ty: u16, payload: &[u8]) -> Vec<u8> {
    let len = (payload.len() + 16) as u64;
    let mut v = Vec::with_capacity(len as usize);
    v.extend_from_slice(&((len << 16) | ty as u64).to_le_bytes());
    v.extend_from_slice(payload);
    let sum = xxhash_rust::xxh3::xxh3_64(&v);
    v.extend_from_slice(&sum.to_le_bytes());
    v
}

/// Splits off a piece whose length is given by the next two bytes.
fn take<'a>(data: &mut &'a [u8]) -> &'a [u8] {
    if data.len() < 2 {
        return std::mem::take(data);
    }
    let n = (u16::from_le_bytes([data[0], data[1]]) as usize).min(data.len() - 2);
    let (piece, rest) = data[2..].split_at(n);
    *data = rest;
    piece
}

fuzz_target!(|data: &[u8]| {
    let mut rest = data;
    let header = take(&mut rest);
    let footer = take(&mut rest);
    let page_list = rest;
    let mut d = parse_header(&envelope(ENVELOPE_HEADER, header)).unwrap_or_else(|_| Descriptor::default());
    let checksum = d.header_checksum;
    // The footer and page list start (after the footer's feature flags) with the header checksum.
    let mut footer = footer.to_vec();
    if footer.len() >= 16 {
        footer[8..16].copy_from_slice(&checksum.to_le_bytes());
    }
    let mut page_list = page_list.to_vec();
    if page_list.len() >= 8 {
        page_list[..8].copy_from_slice(&checksum.to_le_bytes());
    }
    if parse_footer(&envelope(ENVELOPE_FOOTER, &footer), &mut d).is_ok() {
        for g in 0..d.cluster_groups.len().min(4) {
            let _ = parse_page_list(&envelope(ENVELOPE_PAGE_LIST, &page_list), &mut d, g);
        }
    }
    let _ = parse_page_list(&envelope(ENVELOPE_PAGE_LIST, &page_list), &mut Descriptor::default(), 0);
});
