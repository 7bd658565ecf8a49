//! Seeds for the `envelopes` fuzz target: the header, footer and first page list envelopes of
//! every RNTuple in the given files, in the target's input form (`u16` length, header payload,
//! `u16` length, footer payload, page list payload; payload = envelope without its 8-byte
//! preamble and 8-byte checksum). Envelopes above 64 KiB are skipped.
//!
//! `cargo run --release --example fuzz_seeds -- OUT_DIR FILE...`

use rntuple::format::compression::decompress;
use rntuple::RNTupleFile;

fn envelope(bytes: &[u8], offset: u64, stored: u64, len: u64) -> Option<Vec<u8>> {
    let s = usize::try_from(offset).ok()?;
    let e = s.checked_add(usize::try_from(stored).ok()?)?;
    let env = decompress(bytes.get(s..e)?, usize::try_from(len).ok()?, "seed", offset).ok()?;
    (env.len() >= 16).then(|| env[8..env.len() - 8].to_vec())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let out = std::path::PathBuf::from(args.next().ok_or("usage: fuzz_seeds OUT_DIR FILE...")?);
    std::fs::create_dir_all(&out)?;
    let mut n = 0;
    for path in args {
        let bytes = std::fs::read(&path)?;
        let Ok(f) = RNTupleFile::open(&path) else { continue };
        for name in f.names() {
            let Ok(r) = f.reader(&name) else { continue };
            let a = r.anchor();
            let d = r.descriptor();
            let (Some(h), Some(ft)) =
                (envelope(&bytes, a.seek_header, a.nbytes_header, a.len_header), envelope(&bytes, a.seek_footer, a.nbytes_footer, a.len_footer))
            else {
                continue;
            };
            let pl = d
                .cluster_groups
                .first()
                .and_then(|g| envelope(&bytes, g.page_list.locator.offset, g.page_list.locator.size, g.page_list.length))
                .unwrap_or_default();
            let (Ok(hl), Ok(fl)) = (u16::try_from(h.len()), u16::try_from(ft.len())) else { continue };
            let mut seed = Vec::new();
            seed.extend_from_slice(&hl.to_le_bytes());
            seed.extend_from_slice(&h);
            seed.extend_from_slice(&fl.to_le_bytes());
            seed.extend_from_slice(&ft);
            seed.extend_from_slice(&pl);
            if seed.len() <= 65536 {
                std::fs::write(out.join(format!("seed_{n:03}")), seed)?;
                n += 1;
            }
        }
    }
    println!("{n} seeds in {}", out.display());
    Ok(())
}
