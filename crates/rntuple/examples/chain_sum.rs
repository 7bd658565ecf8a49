//! The chain side of bench/scheduler_bench.py: sums a float field and the items of a
//! `std::vector<float>` field over every entry of a chain of files, cluster by cluster on T
//! threads through `Chain::map_clusters` (the clusters of all files taken largest first), and
//! prints one JSON line: `{"entries", "seconds", "sum", "threads", "clusters"}`, timed from opening
//! the files to the sum.
//!
//! `cargo run --release --example chain_sum -- THREADS SCALAR VECTOR FILE...`

use rntuple::arrow::array::{Array, Float32Array, LargeListArray, ListArray};
use std::time::Instant;

fn items_sum(col: &dyn Array) -> Result<f64, String> {
    let values = if let Some(l) = col.as_any().downcast_ref::<ListArray>() {
        let o = l.value_offsets();
        l.values().slice(o[0] as usize, (o[o.len() - 1] - o[0]) as usize)
    } else if let Some(l) = col.as_any().downcast_ref::<LargeListArray>() {
        let o = l.value_offsets();
        l.values().slice(o[0] as usize, (o[o.len() - 1] - o[0]) as usize)
    } else {
        return Err(format!("the vector field is a {:?}, not a list", col.data_type()));
    };
    let f = values.as_any().downcast_ref::<Float32Array>().ok_or("the vector's items are not floats")?;
    Ok(f.values().iter().map(|&x| f64::from(x)).sum())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 4 {
        return Err("usage: chain_sum THREADS SCALAR VECTOR FILE...".into());
    }
    let threads: usize = args[0].parse()?;
    let (scalar, vector) = (args[1].as_str(), args[2].as_str());
    let t0 = Instant::now();
    let mut chain = rntuple::dataset::Chain::open(&args[3..], None)?;
    chain.prepare_for_threads();
    let sums = chain.map_clusters(Some(&[scalar, vector]), threads, |_, batch| {
        let s = batch.column(0).as_any().downcast_ref::<Float32Array>().ok_or_else(|| rntuple::Error::Invalid(format!("{scalar} is not a float field")))?;
        let v = items_sum(batch.column(1).as_ref()).map_err(rntuple::Error::Invalid)?;
        Ok(s.values().iter().map(|&x| f64::from(x)).sum::<f64>() + v)
    })?;
    let sum: f64 = sums.iter().sum();
    let dt = t0.elapsed().as_secs_f64();
    println!("{{\"entries\": {}, \"seconds\": {dt:.6}, \"sum\": {sum:.17e}, \"threads\": {threads}, \"clusters\": {}}}", chain.num_entries(), sums.len());
    Ok(())
}
