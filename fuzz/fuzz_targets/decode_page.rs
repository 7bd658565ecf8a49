//! Fuzz target: decoding a page of any bytes as any column type and bit width into every output
//! type (the unsafe fast paths of the decoder live here). Must never panic; every element asked
//! for is produced.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rntuple::primitives::column_type::ColumnType;
use rntuple::primitives::decode::{decode_append, decode_switch, ColumnCodec, Native};

fn run<T: Native>(c: &ColumnCodec, raw: &[u8], n: usize) {
    let mut out: Vec<T> = vec![T::default(); 3];
    if decode_append(c, raw, n, &mut out).is_ok() {
        assert_eq!(out.len(), 3 + n);
    }
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 5 {
        return;
    }
    let Some(ty) = ColumnType::from_u16(data[0] as u16 & 0x1f) else { return };
    let bits = ty.fixed_bits().unwrap_or(data[1] as u16 % 40);
    let range = (data[2] & 1 == 1).then(|| (-(data[3] as f64), data[4] as f64 * 1.5));
    let c = ColumnCodec { ty, bits, range };
    if c.validate().is_err() {
        return;
    }
    let raw = &data[5..];
    let n = if bits == 0 { 0 } else { (raw.len() * 8 / bits as usize).min(1 << 16) };
    run::<u8>(&c, raw, n);
    run::<i32>(&c, raw, n);
    run::<u64>(&c, raw, n);
    run::<f32>(&c, raw, n);
    run::<f64>(&c, raw, n);
    run::<bool>(&c, raw, n);
    let mut sw = Vec::new();
    let _ = decode_switch(raw, raw.len() / 12, &mut sw);
});
