//! Times the phases of reading one field (used while tuning the reader).
use std::time::Instant;
fn main() -> Result<(), rntuple::Error> {
    let args: Vec<String> = std::env::args().collect();
    let f = rntuple::RNTupleFile::open(&args[1])?;
    let r = f.reader(&args[2])?;
    let fields: Vec<&str> = args[3..].iter().map(|s| s.as_str()).collect();
    for _ in 0..3 {
        let t = Instant::now();
        let b = r.read_batch(Some(&fields), 0, r.num_entries())?;
        println!("read_batch {:?}: {:.3}s rows {}", fields, t.elapsed().as_secs_f64(), b.num_rows());
    }
    let (_, _, d) = r.decompress_only(Some(&fields))?;
    println!("decompress only: {d:.3}s");
    Ok(())
}
