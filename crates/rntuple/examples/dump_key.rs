//! Prints the decompressed payload of the key at an offset, as hex (a debugging aid).
fn main() -> Result<(), rntuple::Error> {
    let a: Vec<String> = std::env::args().collect();
    let src: std::sync::Arc<dyn rntuple::storage::local::source::ReadAt> = std::sync::Arc::new(rntuple::storage::local::source::FileSource::open(&a[1])?);
    let f = rntuple::storage::container::tfile::RootFile::open(src)?;
    let off: u64 = a[2].parse().map_err(|_| rntuple::Error::Invalid("offset".into()))?;
    let (k, p) = f.read_key(off, "key")?;
    eprintln!("{k:?}");
    for (i, c) in p.chunks(16).enumerate() {
        let hex: Vec<String> = c.iter().map(|b| format!("{b:02x}")).collect();
        let asc: String = c.iter().map(|&b| if (32..127).contains(&b) { b as char } else { '.' }).collect();
        println!("{:5}: {:<48} {}", i * 16, hex.join(" "), asc);
    }
    Ok(())
}
