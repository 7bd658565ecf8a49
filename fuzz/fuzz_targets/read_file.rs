//! Fuzz target: any bytes as a ROOT file; open, list, read every RNTuple. Must never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(f) = rntuple::RNTupleFile::from_bytes(data.to_vec()) else { return };
    for name in f.names() {
        let Ok(r) = f.reader(&name) else { continue };
        let stop = r.num_entries().min(1000);
        let _ = r.read_values(None, 0, stop);
        let _ = r.read_batch(None, stop / 2, stop);
    }
});
